// Float16 ops computed in float32 (see half_in_float.h).
#include "kiln/passes/half_in_float.h"

#include <map>
#include <set>

#include "kiln/ir/float16.h"
#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {

namespace {

bool is_floating(DType d) {
  return d == DType::kFloat || d == DType::kFloat16 || d == DType::kBFloat16 || d == DType::kDouble;
}

// A node to convert: ai.onnx, no subgraph, no attribute naming an output dtype, at least one
// float16 tensor and no other floating-point type among its tensors.
bool computes_in_half(const ir::Node& node) {
  static const std::set<std::string> kTypedByAttribute = {
      "Cast", "CastLike", "Constant", "ConstantOfShape", "EyeLike", "RandomNormal", "RandomUniform", "RandomNormalLike",
      "RandomUniformLike", "Multinomial", "Bernoulli"};
  if (!node.domain.empty() || node.has_subgraph() || kTypedByAttribute.count(node.op_type)) return false;
  bool half = false;
  auto check = [&](const ir::Value* v) {
    if (!v) return true;
    if (!v->type.is_tensor()) return !is_floating(v->type.dtype);
    half = half || v->type.dtype == DType::kFloat16;
    return !is_floating(v->type.dtype) || v->type.dtype == DType::kFloat16;
  };
  for (const ir::Value* v : node.inputs)
    if (!check(v)) return false;
  for (const ir::Value* v : node.outputs)
    if (!check(v)) return false;
  return half;
}

Tensor widened(const Tensor& half) {
  Tensor out = Tensor::allocate(DType::kFloat, half.shape());
  const Float16* in = half.data<Float16>();
  float* f = out.data<float>();
  for (int64_t i = 0; i < half.element_count(); ++i) f[i] = ir::to_float(in[i]);
  return out;
}

ir::TensorType as_float(ir::TensorType t) {
  t.dtype = DType::kFloat;
  return t;
}

ir::Node* add_cast(ir::Graph& graph, ir::Value* from, ir::Value* to, DType dtype, int opset) {
  ir::Node* cast = graph.add_node("Cast", {from}, {to}, graph.unique_name(to->name + "_cast"), "", opset);
  cast->attributes["to"] = ir::Attribute::of_int(static_cast<int64_t>(dtype));
  return cast;
}

}  // namespace

Result<bool> compute_half_in_float(ir::Graph& graph, const PassContext& ctx) {
  if (!ctx.preferences.prefers(ops::GraphForm::kHalfInFloat)) return false;
  std::vector<ir::Node*> converted;
  for (const auto& node : graph.nodes())
    if (computes_in_half(*node)) converted.push_back(node.get());
  if (converted.empty()) return false;
  std::map<const ir::Value*, ir::Value*> wide;  // a float16 value -> its float32 version
  // Outputs first: each converted node writes a float32 value, cast back to the float16 one.
  for (ir::Node* node : converted) {
    for (ir::Value*& out : node->outputs) {
      if (!out || out->type.dtype != DType::kFloat16) continue;
      ir::Value* f = graph.add_value(graph.unique_name(out->name + "_f32"), as_float(out->type));
      f->producer = node;
      ir::Value* half = out;
      out = f;
      half->producer = nullptr;
      add_cast(graph, f, half, DType::kFloat16, node->opset_version);
      wide[half] = f;
    }
  }
  // Then inputs: float32 versions of constants, of converted outputs, else one Cast up.
  for (ir::Node* node : converted) {
    for (ir::Value*& in : node->inputs) {
      if (!in || in->type.dtype != DType::kFloat16) continue;
      auto it = wide.find(in);
      if (it == wide.end()) {
        ir::Value* f = nullptr;
        if (in->is_constant()) {
          f = graph.add_constant(graph.unique_name(in->name + "_f32"), widened(*in->initializer));
        } else {
          f = graph.add_value(graph.unique_name(in->name + "_f32"), as_float(in->type));
          add_cast(graph, in, f, DType::kFloat, node->opset_version);
        }
        it = wide.emplace(in, f).first;
      }
      in = it->second;
    }
  }
  return finish_rewrite(graph, true);
}

}  // namespace kiln::passes
