// Helpers for the op-family tests: build tensors, run one op through evaluate_op, compare values.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "kiln/ir/float16.h"
#include "kiln/ops/evaluate.h"
#include "kiln/ops/op_helpers.h"

namespace kiln::ops::testing {

inline Tensor floats(std::vector<int64_t> shape, const std::vector<float>& v) {
  return Tensor::from_vector<float>(DType::kFloat, std::move(shape), v);
}
inline Tensor int64s(std::vector<int64_t> shape, const std::vector<int64_t>& v) {
  return Tensor::from_vector<int64_t>(DType::kInt64, std::move(shape), v);
}
inline Tensor bools(std::vector<int64_t> shape, const std::vector<bool>& v) {
  Tensor t = Tensor::allocate(DType::kBool, std::move(shape));
  for (size_t i = 0; i < v.size(); ++i) t.data<bool>()[i] = v[i];
  return t;
}
template <class T>
Tensor typed(DType dtype, std::vector<int64_t> shape, const std::vector<T>& v) {
  return Tensor::from_vector<T>(dtype, std::move(shape), v);
}

using Attrs = std::map<std::string, ir::Attribute>;

// Runs `op` and returns its outputs; fails the test (returning an empty vector) on error.
inline std::vector<Tensor> run(const std::string& op, const std::vector<const Tensor*>& inputs, const Attrs& attrs = {},
                               int opset = 17, size_t outputs = 1) {
  auto r = evaluate_op(op, inputs, attrs, opset, outputs);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  // Callers index the result: give them one undefined tensor per output rather than nothing.
  return r.is_ok() ? std::move(r).value() : std::vector<Tensor>(outputs);
}

// Runs op `op` of domain "kiln" (version 1) on inputs typed as they are; the status of the run.
inline Result<std::vector<Tensor>> run_kiln(const std::string& op, const std::vector<const Tensor*>& inputs, const Attrs& attrs = {}) {
  ir::Graph g;
  std::vector<ir::Value*> ins;
  for (size_t i = 0; i < inputs.size(); ++i)
    ins.push_back(inputs[i] ? g.add_value("in" + std::to_string(i), ir::make_type(inputs[i]->dtype(), inputs[i]->shape())) : nullptr);
  ir::Node* node = g.add_node(op, ins, {g.add_value("y")}, "test_" + op, "kiln", 1);
  node->attributes = attrs;
  KILN_ASSIGN_OR_RETURN(const OpDef* def, resolve_op(OpRegistry::global(), *node));
  return evaluate_node(*def, *node, inputs);
}

// The error message of a run that must fail ("" if it succeeded).
inline std::string run_error(const std::string& op, const std::vector<const Tensor*>& inputs, const Attrs& attrs = {},
                             int opset = 17, size_t outputs = 1) {
  auto r = evaluate_op(op, inputs, attrs, opset, outputs);
  return r.is_ok() ? "" : r.status().message();
}

template <class T>
std::vector<T> values(const Tensor& t) {
  std::vector<T> out(static_cast<size_t>(t.element_count()));
  for (size_t i = 0; i < out.size(); ++i) out[i] = t.data<T>()[i];
  return out;
}

// Element-wise |got - want| <= 1e-6 + 1e-5 |want| after converting to double; NaN equals NaN,
// infinities must match exactly.
inline void expect_near(const Tensor& got, const std::vector<double>& want, std::vector<int64_t> shape) {
  ASSERT_EQ(got.shape(), shape);
  ASSERT_EQ(got.element_count(), static_cast<int64_t>(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    double g = 0;
    visit_dtype(got.dtype(), [&]<class T>() {
      if constexpr (!std::is_same_v<T, std::string>) g = to_double(got.data<T>()[i]);
    });
    if (std::isnan(want[i]) || std::isinf(want[i])) {
      EXPECT_EQ(std::isnan(g), std::isnan(want[i])) << "element " << i;
      if (std::isinf(want[i])) {
        EXPECT_EQ(g, want[i]) << "element " << i;
      }
    } else {
      EXPECT_NEAR(g, want[i], 1e-6 + 1e-5 * std::fabs(want[i])) << "element " << i;
    }
  }
}

// Runs only the shape rule of `op` on (possibly symbolic) input types, without values.
inline Result<std::vector<ir::TensorType>> infer(const std::string& op, const std::vector<ir::TensorType>& types,
                                                 const Attrs& attrs = {}, int opset = 17, size_t outputs = 1) {
  ir::Graph graph;
  std::vector<ir::Value*> ins, outs;
  for (size_t i = 0; i < types.size(); ++i) ins.push_back(graph.add_value("in" + std::to_string(i), types[i]));
  for (size_t i = 0; i < outputs; ++i) outs.push_back(graph.add_value("out" + std::to_string(i)));
  ir::Node* node = graph.add_node(op, ins, outs, "node_" + op, "", opset);
  node->attributes = attrs;
  KILN_ASSIGN_OR_RETURN(const OpDef* def, resolve_op(OpRegistry::global(), *node));
  std::vector<const ir::TensorType*> type_ptrs;
  for (const auto& t : types) type_ptrs.push_back(&t);
  InferenceContext ctx(*node, type_ptrs, std::vector<const Tensor*>(types.size(), nullptr));
  KILN_RETURN_IF_ERROR(def->infer(ctx));
  return ctx.output_types();
}

// A shape of concrete dims and named symbols: sym({"N", 3}) is [N,3].
inline ir::Shape sym(std::vector<std::variant<int64_t, const char*>> dims) {
  std::vector<ir::Dim> out;
  for (auto& d : dims) {
    if (std::holds_alternative<int64_t>(d)) out.emplace_back(std::get<int64_t>(d));
    else out.push_back(ir::Dim::symbol(std::get<const char*>(d)));
  }
  return ir::Shape(std::move(out));
}

inline ir::Attribute attr_i(int64_t v) { return ir::Attribute::of_int(v); }
inline ir::Attribute attr_f(float v) { return ir::Attribute::of_float(v); }
inline ir::Attribute attr_is(std::vector<int64_t> v) { return ir::Attribute::of_ints(std::move(v)); }

}  // namespace kiln::ops::testing
