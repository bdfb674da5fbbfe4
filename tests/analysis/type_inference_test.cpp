// Tests of the inference driver with a small local registry: propagation of types and known
// values, symbolic dims, declared types that inference contradicts, unknown operators.
#include <gtest/gtest.h>

#include "kiln/analysis/lifetimes.h"
#include "kiln/analysis/type_inference.h"

namespace kiln::analysis {
namespace {

// "Same": output type = input type. "ShapeOf": int64 [rank], value known when the shape is static.
// "Twice": doubles an int64 tensor (a kernel, so propagation runs it). "Fill": float of the shape
// its input's known value gives (rank unknown otherwise). "Branch": the type of its "body" output.
ops::OpRegistry test_registry() {
  ops::OpRegistry r;
  r.add({"", "Same", 1,
         [](ops::InferenceContext& ctx) {
           ctx.set_output_type(0, ctx.input_type(0));
           return Status::ok();
         },
         [](ops::KernelContext&) { return Status::ok(); }});
  r.add({"", "ShapeOf", 1,
         [](ops::InferenceContext& ctx) {
           const auto& t = ctx.input_type(0);
           if (!t.shape) return ctx.error("needs a known rank");
           ctx.set_output_type(0, ir::make_type(DType::kInt64, {static_cast<int64_t>(t.shape->rank())}));
           if (t.shape->is_static()) {
             const auto dims = t.shape->static_dims();
             ctx.set_output_value(0, Tensor::from_vector<int64_t>(DType::kInt64, {static_cast<int64_t>(dims.size())}, dims));
           }
           return Status::ok();
         },
         [](ops::KernelContext&) { return Status::ok(); }});
  r.add({"", "Twice", 1,
         [](ops::InferenceContext& ctx) {
           ctx.set_output_type(0, ctx.input_type(0));
           return Status::ok();
         },
         [](ops::KernelContext& ctx) {
           const Tensor* in = ctx.input(0);
           for (int64_t i = 0; i < in->element_count(); ++i)
             ctx.output(0)->data<int64_t>()[i] = 2 * in->data<int64_t>()[i];
           return Status::ok();
         }});
  r.add({"", "Fill", 1,
         [](ops::InferenceContext& ctx) {
           const Tensor* shape = ctx.input_value(0);
           if (!shape) {
             ctx.set_output_type(0, ir::TensorType{DType::kFloat, std::nullopt});
             return Status::ok();
           }
           const int64_t* dims = shape->data<int64_t>();
           ctx.set_output_type(0, ir::make_type(DType::kFloat, std::vector<int64_t>(dims, dims + shape->element_count())));
           return Status::ok();
         },
         [](ops::KernelContext&) { return Status::ok(); }});
  r.add({"", "Branch", 1,
         [](ops::InferenceContext& ctx) {
           ctx.set_output_type(0, ctx.node().attr("body")->g->outputs[0]->type);
           return Status::ok();
         },
         [](ops::KernelContext&) { return Status::ok(); }});
  return r;
}

TEST(TypeInference, SymbolicDimsFlowAndEvidenceCountsThem) {
  ops::OpRegistry reg = test_registry();
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::TensorType{DType::kFloat, ir::Shape({ir::Dim::symbol("N"), ir::Dim(3)})});
  ir::Value* y = g.add_value("y");
  g.inputs = {x};
  g.add_node("Same", {x}, {y}, "same", "", 1);
  g.outputs = {y};
  auto ev = infer_types(g, reg);
  ASSERT_TRUE(ev.is_ok()) << ev.status().to_string();
  EXPECT_EQ(y->type.to_string(), "float[N,3]");
  EXPECT_EQ(ev.value().symbols, std::vector<std::string>{"N"});
  EXPECT_EQ(ev.value().values_with_symbolic_shape, 2);
}

TEST(TypeInference, KnownValuesPropagateThroughKernels) {
  ops::OpRegistry reg = test_registry();
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::make_type(DType::kFloat, {2, 5}));
  ir::Value* s = g.add_value("s");
  ir::Value* d = g.add_value("d");
  g.inputs = {x};
  g.add_node("ShapeOf", {x}, {s}, "shape", "", 1);
  g.add_node("Twice", {s}, {d}, "twice", "", 1);
  g.outputs = {d};
  auto ev = infer_types(g, reg);
  ASSERT_TRUE(ev.is_ok());
  EXPECT_EQ(ev.value().values_propagated, 2);
  EXPECT_EQ(d->type.to_string(), "int64[2]");
}

// s = ShapeOf(x) is read two subgraphs down, where no graph between holds it: its type and its
// value reach Fill there, so Fill's shape is known.
TEST(TypeInference, NestedSubgraphsSeeEnclosingTypesAndValues) {
  ops::OpRegistry reg = test_registry();
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::make_type(DType::kFloat, {2, 5}));
  ir::Value* s = g.add_value("s");
  ir::Value* y = g.add_value("y");
  g.inputs = {x};
  g.add_node("ShapeOf", {x}, {s}, "shape", "", 1);
  ir::Node* branch = g.add_node("Branch", {}, {y}, "branch", "", 1);
  g.outputs = {y};
  auto outer = std::make_shared<ir::Graph>("outer", &g);
  auto inner = std::make_shared<ir::Graph>("inner", outer.get());
  ir::Value* filled = inner->add_value("filled");
  inner->add_node("Fill", {inner->add_value("s")}, {filled}, "fill", "", 1);
  inner->outputs = {filled};
  ir::Value* nested_out = outer->add_value("nested_out");
  outer->add_node("Branch", {}, {nested_out}, "nested", "", 1)->attributes["body"] = ir::Attribute::of_graph(inner);
  outer->outputs = {nested_out};
  branch->attributes["body"] = ir::Attribute::of_graph(outer);
  auto ev = infer_types(g, reg);
  ASSERT_TRUE(ev.is_ok()) << ev.status().to_string();
  EXPECT_EQ(inner->find_value("s")->type.to_string(), "int64[2]");
  EXPECT_EQ(y->type.to_string(), "float[2,5]");
}

// A declared shape is a hint: inference's wins, and the disagreement is recorded.
TEST(TypeInference, ContradictedDeclaredShapeGivesWayAndIsRecorded) {
  ops::OpRegistry reg = test_registry();
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::make_type(DType::kFloat, {2, 3}));
  ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {2, 4}));
  g.inputs = {x};
  g.add_node("Same", {x}, {y}, "mismatch", "", 1);
  g.outputs = {y};
  auto ev = infer_types(g, reg);
  ASSERT_TRUE(ev.is_ok()) << ev.status().to_string();
  EXPECT_EQ(y->type.to_string(), "float[2,3]");
  ASSERT_EQ(ev.value().declaration_disagreements.size(), 1u);
  const DeclarationDisagreement& d = ev.value().declaration_disagreements[0];
  EXPECT_EQ(d.value, "y");
  EXPECT_EQ(d.where, "main");
  EXPECT_EQ(d.declared, "float[2,4]");
  EXPECT_EQ(d.used, "float[2,3]");
}

// An element type is a fact: a contradicted one names the node and the rule.
TEST(TypeInference, DeclaredDtypeContradictionIsError) {
  ops::OpRegistry reg = test_registry();
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::make_type(DType::kFloat, {2}));
  ir::Value* y = g.add_value("y", ir::TensorType{DType::kInt32, std::nullopt});
  g.inputs = {x};
  g.add_node("Same", {x}, {y}, "n", "", 1);
  g.outputs = {y};
  auto ev = infer_types(g, reg);
  EXPECT_EQ(ev.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(ev.status().message().find("Same 'n'"), std::string::npos) << ev.status().message();
  EXPECT_NE(ev.status().message().find("element type is a fact"), std::string::npos) << ev.status().message();
}

TEST(TypeInference, DeclaredStaticDimRefinesSymbolic) {
  auto merged = merge_types(ir::make_type(DType::kFloat, {4, 3}),
                            ir::TensorType{DType::kFloat, ir::Shape({ir::Dim::symbol("N"), ir::Dim(3)})}, "v");
  ASSERT_TRUE(merged.is_ok());
  EXPECT_EQ(merged.value().to_string(), "float[4,3]");
}

TEST(TypeInference, UnknownOperatorIsUnsupported) {
  ops::OpRegistry reg = test_registry();
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::make_type(DType::kFloat, {2}));
  ir::Value* y = g.add_value("y");
  g.inputs = {x};
  g.add_node("Frobnicate", {x}, {y}, "weird", "", 1);
  g.outputs = {y};
  auto ev = infer_types(g, reg);
  EXPECT_EQ(ev.status().code(), StatusCode::kUnsupportedOperator);
  EXPECT_NE(ev.status().message().find("Frobnicate"), std::string::npos);
  EXPECT_NE(ev.status().message().find("weird"), std::string::npos);
}

TEST(Lifetimes, LastUseIsLastReader) {
  ir::Graph g;
  ir::Value* x = g.add_value("x");
  ir::Value* a = g.add_value("a");
  ir::Value* b = g.add_value("b");
  ir::Value* c = g.add_value("c");
  g.inputs = {x};
  g.add_node("Same", {x}, {a}, "n0");
  g.add_node("Same", {a}, {b}, "n1");
  g.add_node("Twice", {a, b}, {c}, "n2");
  g.outputs = {c};
  auto lifetimes = compute_lifetimes(g);
  ASSERT_EQ(lifetimes.size(), 2u);  // c is a graph output: not in the arena
  EXPECT_EQ(lifetimes[0].value, a);
  EXPECT_EQ(lifetimes[0].first_step, 0);
  EXPECT_EQ(lifetimes[0].last_step, 2);
  EXPECT_EQ(lifetimes[1].last_step, 2);
}

}  // namespace
}  // namespace kiln::analysis
