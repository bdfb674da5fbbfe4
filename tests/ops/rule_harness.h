// Shared test harness for the op family tests: runs one op's shape rule on (symbolic) input types
// and optional known values, and evaluates an op eagerly, unwrapping results into gtest failures.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "kiln/ops/evaluate.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops::testing {

using Attrs = std::map<std::string, ir::Attribute>;

// One rule input: its type and, when known, its value. nullopt in a list marks an omitted input.
struct RuleInput {
  ir::TensorType type;
  const Tensor* value = nullptr;
};

inline ir::TensorType typed(DType dtype, std::vector<ir::Dim> dims) { return {dtype, ir::Shape(std::move(dims))}; }
inline RuleInput known(const Tensor& t) { return {ir::make_type(t.dtype(), t.shape()), &t}; }

struct RuleResult {
  std::vector<ir::TensorType> types;
  std::vector<std::optional<Tensor>> values;
};

// Runs the shape rule of `op_type` (ai.onnx, `opset`) in a one-node graph with `outputs` outputs.
inline Result<RuleResult> run_rule(const std::string& op_type, const std::vector<std::optional<RuleInput>>& inputs,
                                   const Attrs& attrs = {}, int opset = 17, size_t outputs = 1) {
  ir::Graph graph;
  std::vector<ir::Value*> ins, outs;
  std::vector<const ir::TensorType*> types;
  std::vector<const Tensor*> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    ins.push_back(inputs[i] ? graph.add_value("in" + std::to_string(i), inputs[i]->type) : nullptr);
    types.push_back(inputs[i] ? &inputs[i]->type : nullptr);
    values.push_back(inputs[i] ? inputs[i]->value : nullptr);
  }
  for (size_t i = 0; i < outputs; ++i) outs.push_back(graph.add_value("out" + std::to_string(i)));
  ir::Node* node = graph.add_node(op_type, ins, outs, "node_under_test", "", opset);
  node->attributes = attrs;
  KILN_ASSIGN_OR_RETURN(const OpDef* def, resolve_op(OpRegistry::global(), *node));
  InferenceContext ctx(*node, types, values);
  KILN_RETURN_IF_ERROR(def->infer(ctx));
  return RuleResult{ctx.output_types(), ctx.output_values()};
}

// The first output type of a rule that must succeed.
inline ir::TensorType rule_type(const std::string& op_type, const std::vector<std::optional<RuleInput>>& inputs,
                                const Attrs& attrs = {}, int opset = 17) {
  Result<RuleResult> r = run_rule(op_type, inputs, attrs, opset);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? r->types[0] : ir::TensorType{};
}

// The error message of a rule that must fail with InvalidModel.
inline std::string rule_error(const std::string& op_type, const std::vector<std::optional<RuleInput>>& inputs,
                              const Attrs& attrs = {}, int opset = 17) {
  Result<RuleResult> r = run_rule(op_type, inputs, attrs, opset);
  EXPECT_FALSE(r.is_ok());
  if (r.is_ok()) return "";
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidModel) << r.status().to_string();
  return r.status().message();
}

// Evaluates an op that must succeed; returns its outputs.
inline std::vector<Tensor> eval(const std::string& op_type, const std::vector<const Tensor*>& inputs,
                                const Attrs& attrs = {}, int opset = 17, size_t outputs = 1) {
  Result<std::vector<Tensor>> r = evaluate_op(op_type, inputs, attrs, opset, outputs);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? r.value() : std::vector<Tensor>(outputs);
}

template <class T>
std::vector<T> elements(const Tensor& t) {
  if (!t.defined()) return {};
  return std::vector<T>(t.data<T>(), t.data<T>() + t.element_count());
}

inline Tensor f32(std::vector<int64_t> shape, const std::vector<float>& v) {
  return Tensor::from_vector<float>(DType::kFloat, std::move(shape), v);
}
inline Tensor i64(std::vector<int64_t> shape, const std::vector<int64_t>& v) {
  return Tensor::from_vector<int64_t>(DType::kInt64, std::move(shape), v);
}
inline Tensor i64(const std::vector<int64_t>& v) { return i64({static_cast<int64_t>(v.size())}, v); }
// 0, 1, 2, ... as float of the given shape.
inline Tensor iota_f32(std::vector<int64_t> shape) {
  std::vector<float> v(static_cast<size_t>(shape_element_count(shape)));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return f32(std::move(shape), v);
}

inline ir::Attribute ints(std::vector<int64_t> v) { return ir::Attribute::of_ints(std::move(v)); }
inline ir::Attribute int_attr(int64_t v) { return ir::Attribute::of_int(v); }
inline ir::Attribute str(std::string v) { return ir::Attribute::of_string(std::move(v)); }

// Expects every element of `got` within 1e-5 (relative 1e-5) of `want`.
inline void expect_near_all(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5 + 1e-5 * std::abs(want[i])) << "at " << i;
}

}  // namespace kiln::ops::testing
