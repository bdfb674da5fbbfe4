// Shared by the pass tests: a small local OpRegistry of fake ops (so pass tests do not depend on the
// real op families) and helpers to build graphs with typed values and captured subgraph reads.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ir/parser.h"
#include "kiln/ir/printer.h"
#include "kiln/ops/op_registry.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/pass_context.h"

namespace kiln::passes::testing {

// A pass's "changed" result, failing the test when the pass returned an error.
inline bool changed_ok(const Result<bool>& result) {
  EXPECT_TRUE(result.is_ok()) << result.status().to_string();
  return result.is_ok() && result.value();
}

inline ir::Value* add_input(ir::Graph& g, const std::string& name, ir::TensorType type) {
  ir::Value* v = g.add_value(name, std::move(type));
  g.inputs.push_back(v);
  return v;
}

inline ir::Value* add_floats(ir::Graph& g, const std::string& name, std::vector<float> values) {
  return g.add_constant(name, Tensor::from_vector<float>(DType::kFloat, {static_cast<int64_t>(values.size())}, values));
}

inline ir::Value* add_int64s(ir::Graph& g, const std::string& name, std::vector<int64_t> values) {
  const auto length = static_cast<int64_t>(values.size());
  return g.add_constant(name, Tensor::from_vector<int64_t>(DType::kInt64, {length}, values));
}

inline ir::Value* add_int64_scalar(ir::Graph& g, const std::string& name, int64_t value) {
  return g.add_constant(name, Tensor::from_vector<int64_t>(DType::kInt64, {}, {value}));
}

inline std::vector<int64_t> int64s_of(const ir::Value* v) {
  const Tensor& t = *v->initializer;
  return {t.data<int64_t>(), t.data<int64_t>() + t.element_count()};
}

inline std::vector<float> floats_of(const ir::Value* v) {
  const Tensor& t = *v->initializer;
  return {t.data<float>(), t.data<float>() + t.element_count()};
}

// Gives `node` a subgraph attribute "body" that reads `captured` from the enclosing graph by name.
inline void capture_in_subgraph(ir::Graph& g, ir::Node* node, const std::string& captured) {
  auto body = std::make_shared<ir::Graph>("body", &g);
  ir::Value* outer = body->add_value(captured);
  ir::Value* out = body->add_value("body_out");
  body->add_node("Neg", {outer}, {out}, "body_neg");
  body->outputs = {out};
  node->attributes["body"] = ir::Attribute::of_graph(body);
}

namespace fake_ops {

inline Status same_type_as_input0(ops::InferenceContext& ctx) {
  ctx.set_output_type(0, ctx.input_type(0));
  return Status::ok();
}

inline ir::TensorType int64_type(std::vector<int64_t> dims) { return ir::make_type(DType::kInt64, dims); }

// float Add of two same-shaped tensors.
inline Status add_kernel(ops::KernelContext& ctx) {
  const Tensor& a = *ctx.input(0);
  const Tensor& b = *ctx.input(1);
  for (int64_t i = 0; i < a.element_count(); ++i)
    ctx.output(0)->data<float>()[i] = a.data<float>()[i] + b.data<float>()[i];
  return Status::ok();
}

// Gather of one element: int64 data[1-D], int64 scalar index -> int64 scalar.
inline Status gather_infer(ops::InferenceContext& ctx) {
  ctx.set_output_type(0, int64_type({}));
  return Status::ok();
}
inline Status gather_kernel(ops::KernelContext& ctx) {
  ctx.output(0)->data<int64_t>()[0] = ctx.input(0)->data<int64_t>()[ctx.input(1)->data<int64_t>()[0]];
  return Status::ok();
}

// Unsqueeze of an int64 scalar to [1] (the axes input is not read).
inline Status unsqueeze_infer(ops::InferenceContext& ctx) {
  ctx.set_output_type(0, int64_type({1}));
  return Status::ok();
}
inline Status copy_int64_kernel(ops::KernelContext& ctx) {
  for (int64_t i = 0; i < ctx.input(0)->element_count(); ++i)
    ctx.output(0)->data<int64_t>()[i] = ctx.input(0)->data<int64_t>()[i];
  return Status::ok();
}

// Concat of 1-D int64 tensors.
inline Status concat_infer(ops::InferenceContext& ctx) {
  int64_t length = 0;
  for (size_t i = 0; i < ctx.input_count(); ++i) length += ctx.input_type(i).shape->static_dims()[0];
  ctx.set_output_type(0, int64_type({length}));
  return Status::ok();
}
inline Status concat_kernel(ops::KernelContext& ctx) {
  int64_t* out = ctx.output(0)->data<int64_t>();
  for (size_t i = 0; i < ctx.input_count(); ++i)
    for (int64_t j = 0; j < ctx.input(i)->element_count(); ++j) *out++ = ctx.input(i)->data<int64_t>()[j];
  return Status::ok();
}

// Fill: float ones of the shape given by input 0 (like ConstantOfShape), to test the size limit.
inline Status fill_infer(ops::InferenceContext& ctx) {
  const Tensor* shape = ctx.input_value(0);
  if (!shape) return Status::ok();
  std::vector<int64_t> dims(shape->data<int64_t>(), shape->data<int64_t>() + shape->element_count());
  ctx.set_output_type(0, ir::make_type(DType::kFloat, dims));
  return Status::ok();
}
inline Status fill_kernel(ops::KernelContext& ctx) {
  for (int64_t i = 0; i < ctx.output(0)->element_count(); ++i) ctx.output(0)->data<float>()[i] = 1.0f;
  return Status::ok();
}

inline Status random_infer(ops::InferenceContext& ctx) {
  ctx.set_output_type(0, ir::make_type(DType::kFloat, {2}));
  return Status::ok();
}

inline Status ok_kernel(ops::KernelContext&) { return Status::ok(); }
inline Status failing_kernel(ops::KernelContext& ctx) { return ctx.error("boom"); }
inline Status unsupported_kernel(ops::KernelContext& ctx) { return unsupported_operator("no int4 here"); }

}  // namespace fake_ops

// Add, Gather, Unsqueeze, Concat, Fill, RandomNormal, Fail (kernel error) and Unsupported (kernel
// says UnsupportedOperator), all in ai.onnx from opset 0 (so nodes built
// without an opset version resolve).
inline const ops::OpRegistry& fake_registry() {
  static const ops::OpRegistry registry = [] {
    using namespace fake_ops;
    ops::OpRegistry r;
    r.add({"", "Add", 0, same_type_as_input0, add_kernel});
    r.add({"", "Gather", 0, gather_infer, gather_kernel});
    r.add({"", "Unsqueeze", 0, unsqueeze_infer, copy_int64_kernel});
    r.add({"", "Concat", 0, concat_infer, concat_kernel});
    r.add({"", "Fill", 0, fill_infer, fill_kernel});
    r.add({"", "RandomNormal", 0, random_infer, ok_kernel});
    r.add({"", "Fail", 0, same_type_as_input0, failing_kernel});
    r.add({"", "Unsupported", 0, same_type_as_input0, unsupported_kernel});
    return r;
  }();
  return registry;
}

inline PassContext fake_context() { return PassContext{fake_registry()}; }

// A pass run on a graph written as IR text (ir::parse_graph), then dead-code elimination: whether
// the pass changed it, the graph, and the graph printed (empty when the text did not parse, which
// fails the test).
struct Rewritten {
  bool changed = false;
  std::unique_ptr<ir::Graph> graph;
  std::string printed;
};
// `ctx` carries a lowering pass's settings (the preferences, owned); the text's nodes get `opset_version` (legacy forms are opset 6 nodes).
inline Rewritten rewrite_ir(std::string_view text, Result<bool> (*pass)(ir::Graph&, const PassContext&),
                            const PassContext& ctx, int opset_version = 17) {
  Result<std::unique_ptr<ir::Graph>> g = ir::parse_graph(text, opset_version);
  EXPECT_TRUE(g.is_ok()) << g.status().to_string();
  if (!g.is_ok()) return {};
  Rewritten r;
  r.graph = std::move(g).value();
  r.changed = changed_ok(pass(*r.graph, ctx));
  EXPECT_TRUE(eliminate_dead_code(*r.graph, fake_context()).is_ok());
  r.printed = ir::print_graph(*r.graph);
  return r;
}
inline Rewritten rewrite_ir(std::string_view text, Result<bool> (*pass)(ir::Graph&, const PassContext&)) {
  return rewrite_ir(text, pass, fake_context());
}

// The node of `graph` named `name` (the printer shows neither a node's origins nor its opset
// version: tests read them here); nullptr, failing the test, when there is none.
inline const ir::Node* node_named(const ir::Graph& graph, std::string_view name) {
  for (const auto& n : graph.nodes())
    if (n->name == name) return n.get();
  ADD_FAILURE() << "no node '" << name << "'";
  return nullptr;
}

// The source-model nodes the node named `name` stands for (empty when there is no such node).
inline std::vector<std::string> origins_of(const Rewritten& r, std::string_view name) {
  const ir::Node* n = r.graph ? node_named(*r.graph, name) : nullptr;
  return n ? n->source_nodes() : std::vector<std::string>{};
}

}  // namespace kiln::passes::testing
