// kiln.ElementwiseChain: the steps, their math, and the reference kernel (step by step in double,
// rounded to X's type after every step as the unfused ops would round).
#include "kiln/ops/elementwise_chain.h"

#include <algorithm>
#include <cmath>

#include "kiln/ops/activation.h"
#include "kiln/ops/data_movement.h"
#include "kiln/ops/elementwise_broadcast.h"
#include "kiln/ops/elementwise_functions.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {
namespace {

// The table's function named `op` when a chain can hold it, else nullptr.
const ElementwiseFunction* step_function(std::string_view op) {
  const ElementwiseFunction* f = find_elementwise(op);
  return f && f->allows(kChainStep) ? f : nullptr;
}

Status chain_infer(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_dtype<FloatTypes>(ctx, 0));
  KILN_ASSIGN_OR_RETURN(const std::vector<ChainStep> steps, chain_steps(ctx.node()));
  if (steps.empty()) return ctx.error("a chain needs at least one step");
  const ir::TensorType& x = ctx.input_type(0);
  for (const ChainStep& s : steps) {
    const std::string name(s.name());
    if ((s.entry().operands == 2) != s.is_binary())
      return ctx.error("step " + name + (s.is_binary() ? " takes no operand" : " needs an operand"));
    if (!s.is_binary()) continue;
    if (static_cast<size_t>(s.operand) >= ctx.input_count() || s.operand == 0 || !ctx.has_input(static_cast<size_t>(s.operand)))
      return ctx.error("step " + name + " names input " + std::to_string(s.operand) + ", which the node does not have");
    const ir::TensorType& b = ctx.input_type(static_cast<size_t>(s.operand));
    if (b.dtype != x.dtype) return ctx.error("operand of step " + name + " is " + b.to_string() + ", X is " + x.to_string());
    if (b.shape && x.shape) {
      KILN_ASSIGN_OR_RETURN(const ir::Shape joined, broadcast_shapes(*x.shape, *b.shape));
      if (joined.rank() != x.shape->rank()) return ctx.error("operand " + b.to_string() + " would grow X " + x.to_string());
    }
  }
  ctx.set_output_type(0, x);
  return Status::ok();
}

// Each binary operand broadcast to X's shape, as doubles (operands[i] for input i; empty if unused).
Result<std::vector<std::vector<double>>> expanded_operands(KernelContext& ctx, const std::vector<ChainStep>& steps) {
  const std::vector<int64_t>& shape = ctx.input(0)->shape();
  std::vector<std::vector<double>> operands(ctx.input_count());
  for (const ChainStep& s : steps) {
    if (!s.is_binary() || !operands[static_cast<size_t>(s.operand)].empty()) continue;
    const Tensor& b = *ctx.input(static_cast<size_t>(s.operand));
    KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> joined, broadcast_static(shape, b.shape()));
    if (joined != shape) return ctx.error("operand " + shape_to_string(b.shape()) + " does not broadcast to X " + shape_to_string(shape));
    std::vector<double>& values = operands[static_cast<size_t>(s.operand)];
    values.resize(static_cast<size_t>(shape_element_count(shape)));
    for_each_broadcast<1>(shape, {b.shape()}, [&](int64_t i, const std::array<int64_t, 1>& at) {
      values[static_cast<size_t>(i)] = element_as_double(b, at[0]);
    });
  }
  return operands;
}

Status chain_kernel(KernelContext& ctx) {
  KILN_ASSIGN_OR_RETURN(const std::vector<ChainStep> steps, chain_steps(ctx.node()));
  KILN_ASSIGN_OR_RETURN(const std::vector<std::vector<double>> operands, expanded_operands(ctx, steps));
  const Tensor& x = *ctx.input(0);
  Tensor& y = *ctx.output(0);
  for (int64_t i = 0; i < x.element_count(); ++i) {
    store_double(y, i, element_as_double(x, i));
    for (size_t k = 0; k < steps.size(); ++k) {
      const ChainStep& s = steps[k];
      const double b = s.is_binary() ? operands[static_cast<size_t>(s.operand)][static_cast<size_t>(i)] : 0.0;
      store_double(y, i, s.apply(element_as_double(y, i), b));  // rounded to Y's type, step by step
    }
  }
  return Status::ok();
}

}  // namespace

double ChainStep::apply(double x, double b) const {
  const ElementwiseFunction& f = entry();
  return operand_first ? f(b, x, static_cast<double>(alpha), static_cast<double>(beta))
                       : f(x, b, static_cast<double>(alpha), static_cast<double>(beta));
}

Result<std::vector<ChainStep>> chain_steps(const ir::Node& chain) {
  const ir::Attribute* ops_attr = chain.attr("steps");
  if (!ops_attr) return std::vector<ChainStep>{};
  const std::vector<int64_t> operands = chain.attr_ints("operands"), first = chain.attr_ints("operand_first");
  const std::vector<float> alphas = chain.attr_floats("alphas"), betas = chain.attr_floats("betas");
  std::vector<ChainStep> steps;
  for (size_t i = 0; i < ops_attr->strings.size(); ++i) {
    const ElementwiseFunction* f = step_function(ops_attr->strings[i]);
    if (!f) return invalid_model(chain.describe() + ": unknown step '" + ops_attr->strings[i] + "'");
    ChainStep s{f->function};
    if (i < alphas.size()) s.alpha = alphas[i];
    if (i < betas.size()) s.beta = betas[i];
    if (i < operands.size()) s.operand = static_cast<int>(operands[i]);
    s.operand_first = i < first.size() && first[i] != 0;
    steps.push_back(s);
  }
  return steps;
}

void set_chain_steps(ir::Node& chain, const std::vector<ChainStep>& steps) {
  ir::Attribute ops_attr;
  ops_attr.kind = ir::Attribute::Kind::kStrings;
  std::vector<int64_t> operands, first;
  std::vector<float> alphas, betas;
  for (const ChainStep& s : steps) {
    ops_attr.strings.emplace_back(s.name());
    operands.push_back(s.operand);
    first.push_back(s.operand_first ? 1 : 0);
    alphas.push_back(s.alpha);
    betas.push_back(s.beta);
  }
  chain.attributes["steps"] = std::move(ops_attr);
  chain.attributes["operands"] = ir::Attribute::of_ints(operands);
  chain.attributes["operand_first"] = ir::Attribute::of_ints(first);
  chain.attributes["alphas"] = ir::Attribute::of_floats(alphas);
  chain.attributes["betas"] = ir::Attribute::of_floats(betas);
}

std::optional<ChainStep> chain_step_of(const ir::Node& node, const ir::Value* chain_input) {
  if (!node.domain.empty() || node.outputs.size() != 1 || !node.outputs[0] || !chain_input) return std::nullopt;
  if (!(node.outputs[0]->type == chain_input->type) || node.input(0) == nullptr) return std::nullopt;
  const ElementwiseFunction* f = step_function(node.op_type);
  if (f && f->operands == 2) {
    if (node.inputs.size() != 2 || node.inputs[0] == node.inputs[1] || !node.inputs[1]) return std::nullopt;
    if (node.opset_version < 7 && node.has_attr("broadcast")) return std::nullopt;  // legacy broadcast
    const bool first = node.inputs[1] == chain_input;
    if (!first && node.inputs[0] != chain_input) return std::nullopt;
    if (first && !f->commutative) return std::nullopt;  // c - x, c / x, c ^ x
    const ir::Value* exponent = node.inputs[1];
    if (f->function == Elementwise::kPow && !(exponent->initializer && exponent->initializer->element_count() == 1)) return std::nullopt;
    return ChainStep{f->function, 0, 0, first ? 0 : 1, first};
  }
  if (node.inputs[0] != chain_input) return std::nullopt;
  // A parameterised step takes its parameters as the fused activation does; the others have none.
  const std::optional<Activation> a = activation_of(node);
  if (a && a->entry().allows(kChainStep)) return ChainStep{a->function, a->alpha, a->beta};
  if (f && !a && node.inputs.size() == 1) return ChainStep{f->function};
  return std::nullopt;
}

void register_elementwise_chain_ops(OpRegistry& r) {
  r.add({"kiln", "ElementwiseChain", 1, with_required_inputs(1, chain_infer), chain_kernel});
}

}  // namespace kiln::ops
