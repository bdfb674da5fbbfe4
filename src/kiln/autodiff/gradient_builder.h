// GradientBuilder: emits the plain ai.onnx nodes that a backward (gradient) computation is made of,
// in the form of the model's opset version (e.g. ReduceSum's axes as an attribute before 13 and an
// input from 13), with fresh value names. Output types are left for type inference to fill in;
// the builder relies on the forward values' inferred types only to undo broadcasting.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/status.h"

namespace kiln::autodiff {

class GradientBuilder {
 public:
  // Nodes go into `graph`, named after `origin` (the Gradient node), using ai.onnx `opset`.
  GradientBuilder(ir::Graph& graph, std::string origin, int opset)
      : graph_(graph), origin_(std::move(origin)), opset_(opset) {}

  ir::Value* op(const std::string& op_type, std::vector<ir::Value*> inputs,
                std::map<std::string, ir::Attribute> attributes = {});
  ir::Value* add(ir::Value* a, ir::Value* b) { return op("Add", {a, b}); }
  ir::Value* mul(ir::Value* a, ir::Value* b) { return op("Mul", {a, b}); }
  ir::Value* div(ir::Value* a, ir::Value* b) { return op("Div", {a, b}); }
  ir::Value* neg(ir::Value* a) { return op("Neg", {a}); }

  // A scalar constant of `like`'s element type.
  Result<ir::Value*> scalar(const ir::Value* like, double value);
  // A tensor of `like`'s type filled with `value`.
  Result<ir::Value*> filled_like(ir::Value* like, double value);
  // Swaps the last two axes (the transposed operand of a MatMul derivative).
  Result<ir::Value*> transpose_last_two(ir::Value* v);
  // Sums `grad` (the gradient of a broadcast result) over the axes along which `operand` was
  // broadcast, giving a gradient of operand's shape.
  Result<ir::Value*> sum_to_shape_of(ir::Value* grad, const ir::Value* result, const ir::Value* operand);

  int opset() const { return opset_; }

 private:
  Status error(const std::string& message) const;

  ir::Graph& graph_;
  std::string origin_;
  int opset_;
};

}  // namespace kiln::autodiff
