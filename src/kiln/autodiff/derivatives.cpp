// Derivative rules of the ops Gradient can differentiate through. Binary element-wise ops undo
// broadcasting with sum_to_shape_of; unary ops reuse the forward output where that is cheaper
// (Sigmoid, Tanh, Exp, Sqrt).
#include "kiln/autodiff/derivatives.h"

#include <functional>
#include <map>

namespace kiln::autodiff {
namespace {

using Grads = std::vector<ir::Value*>;
using Rule = std::function<Result<Grads>(GradientBuilder&, const ir::Node&, ir::Value* g)>;

ir::Value* in(const ir::Node& n, size_t i) { return n.inputs[i]; }
ir::Value* out(const ir::Node& n) { return n.outputs[0]; }

// Gradients of a binary op's two inputs from the gradients of its (broadcast) result.
Result<Grads> binary(GradientBuilder& b, const ir::Node& n, ir::Value* ga, ir::Value* gb) {
  KILN_ASSIGN_OR_RETURN(ir::Value* a, b.sum_to_shape_of(ga, out(n), in(n, 0)));
  KILN_ASSIGN_OR_RETURN(ir::Value* c, b.sum_to_shape_of(gb, out(n), in(n, 1)));
  return Grads{a, c};
}

Result<Grads> add_rule(GradientBuilder& b, const ir::Node& n, ir::Value* g) { return binary(b, n, g, g); }
Result<Grads> sub_rule(GradientBuilder& b, const ir::Node& n, ir::Value* g) { return binary(b, n, g, b.neg(g)); }
Result<Grads> mul_rule(GradientBuilder& b, const ir::Node& n, ir::Value* g) {
  return binary(b, n, b.mul(g, in(n, 1)), b.mul(g, in(n, 0)));
}
// d(a/b)/da = 1/b; d(a/b)/db = -(a/b)/b.
Result<Grads> div_rule(GradientBuilder& b, const ir::Node& n, ir::Value* g) {
  return binary(b, n, b.div(g, in(n, 1)), b.neg(b.div(b.mul(g, out(n)), in(n, 1))));
}
// d(a^p)/da = p a^(p-1) = p (a^p)/a is undefined at a = 0, so use p a^(p-1); d(a^p)/dp = a^p ln a.
Result<Grads> pow_rule(GradientBuilder& b, const ir::Node& n, ir::Value* g) {
  if (in(n, 0)->type.dtype != in(n, 1)->type.dtype)
    return unsupported_operator(n.describe() + ": Gradient through Pow needs base and exponent of one type");
  KILN_ASSIGN_OR_RETURN(ir::Value* one, b.scalar(in(n, 1), 1.0));
  ir::Value* power_less_one = b.op("Pow", {in(n, 0), b.op("Sub", {in(n, 1), one})});
  return binary(b, n, b.mul(g, b.mul(in(n, 1), power_less_one)), b.mul(g, b.mul(out(n), b.op("Log", {in(n, 0)}))));
}
// d(a @ b)/da = g @ b^T; d(a @ b)/db = a^T @ g; batch dims broadcast like element-wise ops.
Result<Grads> matmul_rule(GradientBuilder& b, const ir::Node& n, ir::Value* g) {
  // The products' shapes are the result's batch dims with the operand's matrix dims; summing over
  // broadcast batch dims needs those shapes, which hold when the operands have the result's rank.
  const auto& rt = out(n)->type;
  for (const ir::Value* operand : {in(n, 0), in(n, 1)})
    if (!rt.shape || !operand->type.shape || operand->type.shape->rank() != rt.shape->rank() ||
        !std::equal(rt.shape->dims().begin(), rt.shape->dims().end() - 2, operand->type.shape->dims().begin()))
      return unsupported_operator(n.describe() + ": Gradient through MatMul with broadcast batch dims is not supported");
  KILN_ASSIGN_OR_RETURN(ir::Value* bt, b.transpose_last_two(in(n, 1)));
  KILN_ASSIGN_OR_RETURN(ir::Value* at, b.transpose_last_two(in(n, 0)));
  ir::Value* ga = b.op("MatMul", {g, bt});
  ir::Value* gb = b.op("MatMul", {at, g});
  return Grads{ga, gb};
}

Result<Grads> unary(ir::Value* g) { return Grads{g}; }
Result<Grads> identity_rule(GradientBuilder&, const ir::Node&, ir::Value* g) { return unary(g); }
Result<Grads> neg_rule(GradientBuilder& b, const ir::Node&, ir::Value* g) { return unary(b.neg(g)); }
Result<Grads> exp_rule(GradientBuilder& b, const ir::Node& n, ir::Value* g) { return unary(b.mul(g, out(n))); }
Result<Grads> log_rule(GradientBuilder& b, const ir::Node& n, ir::Value* g) { return unary(b.div(g, in(n, 0))); }
Result<Grads> relu_rule(GradientBuilder& b, const ir::Node& n, ir::Value* g) {
  KILN_ASSIGN_OR_RETURN(ir::Value* zero, b.scalar(in(n, 0), 0.0));
  return unary(b.op("Where", {b.op("Greater", {in(n, 0), zero}), g, zero}));
}
// sigmoid' = y (1 - y); tanh' = 1 - y^2; sqrt' = 1 / (2 y).
Result<Grads> sigmoid_rule(GradientBuilder& b, const ir::Node& n, ir::Value* g) {
  KILN_ASSIGN_OR_RETURN(ir::Value* one, b.scalar(out(n), 1.0));
  return unary(b.mul(g, b.mul(out(n), b.op("Sub", {one, out(n)}))));
}
Result<Grads> tanh_rule(GradientBuilder& b, const ir::Node& n, ir::Value* g) {
  KILN_ASSIGN_OR_RETURN(ir::Value* one, b.scalar(out(n), 1.0));
  return unary(b.mul(g, b.op("Sub", {one, b.mul(out(n), out(n))})));
}
Result<Grads> sqrt_rule(GradientBuilder& b, const ir::Node& n, ir::Value* g) {
  KILN_ASSIGN_OR_RETURN(ir::Value* two, b.scalar(out(n), 2.0));
  return unary(b.div(g, b.mul(out(n), two)));
}

const std::map<std::string, Rule>& rules() {
  static const std::map<std::string, Rule> table{
      {"Add", add_rule},     {"Sub", sub_rule},   {"Mul", mul_rule},         {"Div", div_rule},
      {"Pow", pow_rule},     {"MatMul", matmul_rule}, {"Identity", identity_rule}, {"Neg", neg_rule},
      {"Exp", exp_rule},     {"Log", log_rule},   {"Relu", relu_rule},       {"Sigmoid", sigmoid_rule},
      {"Tanh", tanh_rule},   {"Sqrt", sqrt_rule},
  };
  return table;
}

// "Add, Div, ...": the ops with rules, for messages.
std::string differentiable_ops() {
  std::string names;
  for (const auto& [name, rule] : rules()) names += (names.empty() ? "" : ", ") + name;
  return names;
}

}  // namespace

Result<std::vector<ir::Value*>> input_gradients(GradientBuilder& b, const ir::Node& node,
                                                const std::vector<ir::Value*>& output_grads) {
  const auto it = node.domain.empty() ? rules().find(node.op_type) : rules().end();
  if (it == rules().end())
    return unsupported_operator(node.describe() + " lies between Gradient's xs and y, and Kiln has no derivative for " +
                                node.op_type + " (it has: " + differentiable_ops() + ")");
  if (node.outputs.size() != 1 || output_grads.size() != 1 || !output_grads[0])
    return std::vector<ir::Value*>(node.inputs.size(), nullptr);
  return it->second(b, node, output_grads[0]);
}

}  // namespace kiln::autodiff
