// The differential harness: checks any provider's kernels against the reference provider
// (cpu_ref) on seeded random inputs, with per-dtype tolerances. Every provider's test calls
// check_against_reference() over standard_op_cases() (tests/support/op_cases.h) and its own cases.
#pragma once

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ops/evaluate.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"
#include "kiln/providers/cpu/cpu_plan_state.h"
#include "kiln/providers/provider.h"
#include "support/test_target.h"

namespace kiln::testing {

struct TensorSpec {
  DType dtype = DType::kFloat;
  std::vector<int64_t> shape;
  bool constant = false;  // an initializer (weights), which providers may prepack
  std::vector<double> values = {};  // fixed contents (Slice's starts...); random from the seed when empty

  bool omitted() const { return dtype == DType::kUndefined; }  // an optional input left out
};

struct OpCase {
  OpCase(std::string op_type, int op_opset, std::vector<TensorSpec> input_specs,
         std::map<std::string, ir::Attribute> attrs = {}, size_t output_count = 1)
      : op(std::move(op_type)), opset(op_opset), inputs(std::move(input_specs)), attributes(std::move(attrs)),
        outputs(output_count) {}

  std::string op;  // an ai.onnx op type, or "<domain>.<op>" ("kiln.FusedConv")
  int opset = 17;
  std::vector<TensorSpec> inputs;  // random data from the seed
  std::map<std::string, ir::Attribute> attributes;
  size_t outputs = 1;

  std::string label() const {
    std::string s = op + "(";
    for (size_t i = 0; i < inputs.size(); ++i)
      s += (i ? ", " : "") + (inputs[i].omitted() ? std::string("-")
                                                 : std::string(dtype_name(inputs[i].dtype)) + shape_to_string(inputs[i].shape));
    return s + ")";
  }
};

// |got - want| <= abs + rel * |want|, NaN equals NaN; integers and bools compare exactly.
struct Tolerance {
  double abs = 0;
  double rel = 0;
};

inline Tolerance tolerance_for(DType dtype) {
  switch (dtype) {
    case DType::kFloat: return {1e-5, 1e-4};
    case DType::kDouble: return {1e-12, 1e-10};
    case DType::kFloat16: return {1e-3, 1e-2};
    case DType::kBFloat16: return {1e-2, 2e-2};
    default: return {0, 0};
  }
}

// kInvalidCase: the reference itself refuses the case (shapes or attributes the spec does not
// allow), so there is nothing to compare; a sweep over shapes skips such variants.
enum class Verdict { kMatch, kMismatch, kDeclined, kInvalidCase };

struct DifferentialResult {
  Verdict verdict = Verdict::kMatch;
  std::string detail;  // the first mismatch, the provider's reason for declining, or an error
};

namespace detail {

inline std::string compare_outputs(const Tensor& got, const Tensor& want, size_t index) {
  const std::string where = "output " + std::to_string(index);
  if (got.dtype() != want.dtype() || got.shape() != want.shape())
    return where + ": got " + dtype_name(got.dtype()) + shape_to_string(got.shape()) + ", reference " +
           dtype_name(want.dtype()) + shape_to_string(want.shape());
  const Tolerance tol = tolerance_for(want.dtype());
  for (int64_t i = 0; i < want.element_count(); ++i) {
    const double g = element_as_double(got, i), w = element_as_double(want, i);
    if (std::isnan(g) && std::isnan(w)) continue;
    if (g == w) continue;
    if (!(std::fabs(g - w) <= tol.abs + tol.rel * std::fabs(w)))
      return where + "[" + std::to_string(i) + "]: got " + std::to_string(g) + ", reference " + std::to_string(w);
  }
  return "";
}

}  // namespace detail

// Runs `c` through `provider` (twice) and through cpu_ref on the same inputs (random from `seed`)
// and compares every output. kDeclined when the provider's capability query refuses the node, or
// its kernel cannot be built here (UnsupportedTarget, a late decline).
// With `generator`, the provider's kernels are generated from loop IR where it can (jit mode).
inline DifferentialResult check_against_reference(const providers::Provider& provider, const OpCase& c, uint64_t seed,
                                                  std::shared_ptr<codegen::KernelGenerator> generator = nullptr) {
  ir::Graph graph;
  std::vector<Tensor> data;
  std::vector<ir::Value*> ins, outs;
  data.reserve(c.inputs.size());
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (c.inputs[i].omitted()) {
      data.emplace_back();
      ins.push_back(nullptr);
      continue;
    }
    const TensorSpec& spec = c.inputs[i];
    data.push_back(random_tensor(spec.dtype, spec.shape, seed + i));
    for (size_t k = 0; k < spec.values.size(); ++k) ops::store_double(data.back(), static_cast<int64_t>(k), spec.values[k]);
    const std::string name = "in" + std::to_string(i);
    ins.push_back(c.inputs[i].constant ? graph.add_constant(name, data.back())
                                       : graph.add_value(name, ir::make_type(c.inputs[i].dtype, c.inputs[i].shape)));
  }
  for (size_t i = 0; i < c.outputs; ++i) outs.push_back(graph.add_value("out" + std::to_string(i)));
  const size_t dot = c.op.rfind('.');
  ir::Node* node = dot == std::string::npos ? graph.add_node(c.op, ins, outs, "case", "", c.opset)
                                            : graph.add_node(c.op.substr(dot + 1), ins, outs, "case", c.op.substr(0, dot), c.opset);
  node->attributes = c.attributes;
  std::vector<const Tensor*> inputs;
  for (const Tensor& t : data) inputs.push_back(t.defined() ? &t : nullptr);

  auto def = ops::resolve_op(ops::OpRegistry::global(), *node);
  if (!def.is_ok()) return {Verdict::kMismatch, def.status().to_string()};
  auto reference = ops::evaluate_node(*def.value(), *node, inputs);
  if (!reference.is_ok()) return {Verdict::kInvalidCase, "reference failed: " + reference.status().to_string()};
  auto types = ops::infer_concrete_outputs(*def.value(), *node, inputs);
  if (!types.is_ok()) return {Verdict::kInvalidCase, types.status().to_string()};
  for (size_t i = 0; i < outs.size(); ++i) outs[i]->type = types.value()[i];

  const providers::Capability cap = provider.supports(*node);
  if (!cap.supported) return {Verdict::kDeclined, cap.reason};
  providers::PlanContext context;
  providers::PlanEvidence evidence;
  providers::KernelBuild build{context, evidence};
  context.set_provider_state(provider.name(), std::make_shared<providers::cpu::CpuPlanState>(test_target(), generator));
  codegen::ModuleBuilder* module = providers::cpu::generated_module(context);
  auto kernel = provider.kernel_for(*node, build);
  // A kernel the provider cannot build for these shapes on this target is a late decline, as in a
  // plan (the policy's next provider takes the node).
  if (!kernel.is_ok() && kernel.status().code() == StatusCode::kUnsupportedTarget) return {Verdict::kDeclined, kernel.status().to_string()};
  if (!kernel.is_ok()) return {Verdict::kMismatch, kernel.status().to_string()};
  if (module) {
    const Status built = module->build();
    if (!built.is_ok()) return {Verdict::kMismatch, "generated kernels: " + built.to_string()};
  }
  // Twice: a kernel's prepared state must survive a run, and the second run reads and writes
  // other buffers (copies of the inputs, new outputs, all alive at once so that no address repeats):
  // a kernel that kept the first run's addresses is caught.
  std::vector<Tensor> copies;
  for (const Tensor& t : data) copies.push_back(t.defined() ? t.clone() : Tensor());
  std::vector<const Tensor*> copied_inputs;
  for (const Tensor& t : copies) copied_inputs.push_back(t.defined() ? &t : nullptr);
  std::vector<std::vector<Tensor>> got(2);
  for (int run = 0; run < 2; ++run) {
    std::vector<Tensor*> outputs;
    for (const ir::TensorType& t : types.value()) got[run].push_back(Tensor::allocate(t.dtype, t.shape->static_dims()));
    for (Tensor& t : got[run]) outputs.push_back(&t);
    ops::KernelContext ctx(*node, run == 0 ? inputs : copied_inputs, outputs);
    Status ran = kernel.value()(ctx);
    if (!ran.is_ok()) return {Verdict::kMismatch, "provider kernel failed (run " + std::to_string(run + 1) + "): " + ran.to_string()};
  }
  for (int run = 0; run < 2; ++run)
    for (size_t i = 0; i < got[run].size(); ++i) {
      std::string diff = detail::compare_outputs(got[run][i], reference.value()[i], i);
      if (!diff.empty()) return {Verdict::kMismatch, (run == 0 ? "first run: " : "second run, on other buffers: ") + diff};
    }
  return {};
}

}  // namespace kiln::testing
