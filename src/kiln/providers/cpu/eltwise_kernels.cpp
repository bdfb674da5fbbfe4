// cpu kernels for element-wise ops: unary activations and math as oneDNN eltwise primitives, and
// Add/Sub/Mul/Div/Max/Min as oneDNN binary primitives (the second operand broadcast; for the
// commutative ops the operands are swapped when only the first one is broadcast).
#include <cmath>
#include <limits>
#include <set>

#include "kiln/ops/activation.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

using dnnl::algorithm;
using dnnl::memory;

struct EltwiseSpec {
  algorithm alg;
  float alpha = 0, beta = 0;
};

// The eltwise form of a unary node (Pow needs a constant scalar exponent); nullopt when none.
std::optional<EltwiseSpec> eltwise_spec(const ir::Node& node) {
  const std::string& op = node.op_type;
  if (node.domain == "kiln" && op == "Gelu")
    return EltwiseSpec{node.attr_string("approximate", "none") == "tanh" ? algorithm::eltwise_gelu_tanh : algorithm::eltwise_gelu_erf};
  if (!node.domain.empty()) return std::nullopt;
  if (op == "Exp") return EltwiseSpec{algorithm::eltwise_exp};
  if (op == "Log") return EltwiseSpec{algorithm::eltwise_log};
  if (op == "Sqrt") return EltwiseSpec{algorithm::eltwise_sqrt};
  if (op == "Abs") return EltwiseSpec{algorithm::eltwise_abs};
  if (op == "Neg") return EltwiseSpec{algorithm::eltwise_linear, -1.0f, 0.0f};
  if (op == "Softplus") return EltwiseSpec{algorithm::eltwise_soft_relu};
  if (op == "Pow") {
    const ir::Value* e = node.input(1);
    if (!e || !e->initializer || e->initializer->element_count() != 1 || e->initializer->dtype() != DType::kFloat)
      return std::nullopt;
    return EltwiseSpec{algorithm::eltwise_pow, 1.0f, e->initializer->data<float>()[0]};
  }
  if (const std::optional<ops::Activation> a = ops::activation_of(node)) {
    if (a->op == "Relu") return EltwiseSpec{algorithm::eltwise_relu};
    if (a->op == "LeakyRelu") return EltwiseSpec{algorithm::eltwise_relu, a->alpha};
    if (a->op == "Clip") return EltwiseSpec{algorithm::eltwise_clip, a->alpha, a->beta};
    if (a->op == "Sigmoid") return EltwiseSpec{algorithm::eltwise_logistic};
    if (a->op == "Tanh") return EltwiseSpec{algorithm::eltwise_tanh};
    if (a->op == "Elu") return EltwiseSpec{algorithm::eltwise_elu, a->alpha};
    if (a->op == "HardSwish") return EltwiseSpec{algorithm::eltwise_hardswish};
  }
  return std::nullopt;
}

Capability eltwise_supports(const ir::Node& node) {
  Capability c = float_tensors(node, {0});
  if (!c.supported) return c;
  if (!eltwise_spec(node)) return Capability::no(node.op_type + " with these inputs has no oneDNN eltwise form");
  return Capability::yes();
}

Result<ops::Kernel> build_eltwise(const ir::Node& node) {
  const EltwiseSpec spec = *eltwise_spec(node);
  const memory::desc data = row_major_desc(output_dims(node, 0));
  const dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, spec.alg, data, spec.alpha, spec.beta);
  return primitive_kernel(dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(desc, cpu_engine())),
                          [data](ops::KernelContext& ctx) {
                            return std::unordered_map<int, memory>{{DNNL_ARG_SRC, wrap(data, *ctx.input(0))},
                                                                   {DNNL_ARG_DST, wrap(data, *ctx.output(0))}};
                          });
}

// ---- binary ----

const std::map<std::string, algorithm>& binary_algorithms() {
  static const std::map<std::string, algorithm> table{{"Add", algorithm::binary_add}, {"Sub", algorithm::binary_sub},
                                                      {"Mul", algorithm::binary_mul}, {"Div", algorithm::binary_div},
                                                      {"Max", algorithm::binary_max}, {"Min", algorithm::binary_min}};
  return table;
}

bool commutative(const std::string& op) { return op == "Add" || op == "Mul" || op == "Max" || op == "Min"; }

template <class D>
std::vector<D> padded(std::vector<D> dims, size_t rank) {
  dims.insert(dims.begin(), rank - dims.size(), D(1));
  return dims;
}

// Which input oneDNN reads as src0 (it must have the output's dims, symbols included): 0, 1, or
// -1 for neither.
int full_operand(const ir::Node& node) {
  const std::vector<ir::Dim>& y = node.outputs[0]->type.shape->dims();
  auto same = [&](size_t i) {
    const std::vector<ir::Dim>& d = node.inputs[i]->type.shape->dims();
    return d.size() <= y.size() && padded(d, y.size()) == y;
  };
  if (same(0)) return 0;
  if (commutative(node.op_type) && same(1)) return 1;
  return -1;
}

Capability binary_supports(const ir::Node& node) {
  if (node.inputs.size() != 2 || (node.opset_version < 7 && node.has_attr("broadcast")))
    return Capability::no(node.op_type + " with the legacy broadcast attribute");
  Capability c = float_tensors(node, {0, 1});
  if (!c.supported) return c;
  if (full_operand(node) < 0) return Capability::no(node.op_type + " that broadcasts its first operand");
  return Capability::yes();
}

Result<ops::Kernel> build_binary(const ir::Node& node) {
  const size_t a = static_cast<size_t>(full_operand(node)), b = 1 - a;
  const std::vector<int64_t> y = output_dims(node, 0);
  const memory::desc src0 = row_major_desc(y), src1 = row_major_desc(padded(input_dims(node, b), y.size()));
  const dnnl::binary::desc desc(binary_algorithms().at(node.op_type), src0, src1, src0);
  return primitive_kernel(dnnl::binary(dnnl::binary::primitive_desc(desc, cpu_engine())),
                          [src0, src1, a, b](ops::KernelContext& ctx) {
                            return std::unordered_map<int, memory>{{DNNL_ARG_SRC_0, wrap(src0, *ctx.input(a))},
                                                                   {DNNL_ARG_SRC_1, wrap(src1, *ctx.input(b))},
                                                                   {DNNL_ARG_DST, wrap(src0, *ctx.output(0))}};
                          });
}

}  // namespace

void add_eltwise_kernels(CpuKernelTable& table) {
  for (const char* op : {"Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "Elu", "HardSwish", "Exp", "Log", "Sqrt", "Abs",
                         "Neg", "Softplus", "Pow", "kiln.Gelu"})
    table[op] = {eltwise_supports, build_eltwise};
  for (const auto& [op, alg] : binary_algorithms()) table[op] = {binary_supports, build_binary};
}

}  // namespace kiln::providers::cpu
