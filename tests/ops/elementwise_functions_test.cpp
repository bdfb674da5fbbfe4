// The element-wise table (ops/elementwise_functions.h): its order and names, each function's float
// and double forms at extreme inputs, and every consumer in ops/ that reads it (fused activations,
// chain steps, recurrent activations, the standalone ONNX ops) giving the table's value. The
// providers are held to it in tests/providers/elementwise_extremes_test.cpp, generated code in
// tests/providers/cpu/codegen/kernel_generator_test.cpp.
#include "kiln/ops/elementwise_functions.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "kiln/analysis/type_inference.h"
#include "kiln/ir/parser.h"
#include "kiln/ops/activation.h"
#include "kiln/ops/elementwise_chain.h"
#include "kiln/ops/evaluate.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"
#include "kiln/ops/recurrent_cell.h"

namespace kiln::ops {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
const std::vector<double> kExtremes = {100.0, -100.0, 1e30, -1e30, 1e-40, -1e-40, 0.0, -0.0, 0.5, -3.5, kInf, -kInf, std::nan("")};

// Parameters that exercise each function's (LeakyRelu and Elu alpha, Clip bounds, ...).
double alpha_of(Elementwise f) { return f == Elementwise::kClip ? -1.0 : f == Elementwise::kThresholdedRelu ? 1.0 : 0.7; }
double beta_of(Elementwise f) { return f == Elementwise::kClip ? 2.0 : 0.5; }

// `got` is `want` (a double result rounded to float) for input x: NaN for NaN, the same infinity,
// else within a few float ulps of it, or of x where the result cancels (1 + erf(x) for x < -3).
void expect_same(double want, double got, double x, const std::string& at) {
  const float w = static_cast<float>(want);
  if (std::isnan(w)) {
    EXPECT_TRUE(std::isnan(got)) << at << " = " << got;
  } else if (std::isinf(w)) {
    EXPECT_EQ(static_cast<float>(got), w) << at;
  } else {
    EXPECT_NEAR(got, w, 1e-30 + 4e-7 * std::fabs(w) + 2e-7 * (std::isfinite(x) ? std::min(std::fabs(x), 100.0) : 0.0)) << at;
  }
}

std::string call(const ElementwiseFunction& f, double x, double b) {
  return std::string(f.name) + "(" + std::to_string(x) + (f.operands == 2 ? ", " + std::to_string(b) : "") + ")";
}

TEST(ElementwiseFunctions, TheTableIsInTheEnumsOrderWithUniqueNames) {
  std::set<std::string_view> names;
  const std::vector<ElementwiseFunction>& table = elementwise_functions();
  for (size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(static_cast<size_t>(table[i].function), i) << table[i].name;
    EXPECT_TRUE(names.insert(table[i].name).second) << table[i].name;
    EXPECT_EQ(find_elementwise(table[i].name), &table[i]);
    EXPECT_NE(table[i].uses, 0u) << table[i].name << " has no consumer";
    EXPECT_EQ(table[i].allows(kChainStep), !table[i].generated.empty()) << table[i].name << ": generated code for chain steps";
  }
  EXPECT_EQ(find_elementwise("Swish"), nullptr);
}

// Float and double forms agree at every extreme input, with extreme operands for binary ones.
TEST(ElementwiseFunctions, FloatAndDoubleFormsAgreeAtExtremeInputs) {
  for (const ElementwiseFunction& f : elementwise_functions()) {
    const double a = alpha_of(f.function), c = beta_of(f.function);
    for (double x : kExtremes)
      for (double b : f.operands == 2 ? kExtremes : std::vector<double>{0.0}) {
        const auto fx = static_cast<float>(x), fb = static_cast<float>(b), fa = static_cast<float>(a), fc = static_cast<float>(c);
        // Against the double form of the float inputs (1e-40 is a subnormal in float).
        expect_same(f(static_cast<double>(fx), static_cast<double>(fb), static_cast<double>(fa), static_cast<double>(fc)),
                    f(fx, fb, fa, fc), x, call(f, x, b) + " in float");
      }
  }
}

// Softplus is finite where log1p(exp(x)) overflows (x = 100 in float, 1000 in double), in every form.
TEST(ElementwiseFunctions, SoftplusStaysFiniteForLargeInputs) {
  const ElementwiseFunction& softplus = elementwise_function(Elementwise::kSoftplus);
  EXPECT_FLOAT_EQ(softplus(100.0f, 0.0f, 0.0f, 0.0f), 100.0f);
  EXPECT_DOUBLE_EQ(softplus(1000.0, 0.0, 0.0, 0.0), 1000.0);
  const RecurrentActivation recurrent{&softplus, 0.0, 0.0};
  EXPECT_FLOAT_EQ(recurrent(100.0f), 100.0f);
  EXPECT_NEAR(softplus(-100.0, 0.0, 0.0, 0.0), std::exp(-100.0), 1e-50);
}

// Each consumer gives the table's value for every function it may hold.
TEST(ElementwiseFunctions, EveryConsumerComputesTheTablesFunction) {
  int fused = 0, chained = 0, recurrent = 0;
  for (const ElementwiseFunction& f : elementwise_functions()) {
    const double a = alpha_of(f.function), c = beta_of(f.function);
    for (double x : kExtremes)
      for (double b : f.operands == 2 ? kExtremes : std::vector<double>{0.0}) {
        const double want = f(x, b, a, c);
        const std::string at = call(f, x, b);
        if (f.allows(kFusedActivation)) {
          expect_same(want, Activation{f.function, static_cast<float>(a), static_cast<float>(c)}.apply(x), x, at + " fused");
          ++fused;
        }
        if (f.allows(kChainStep)) {
          const ChainStep step{f.function, static_cast<float>(a), static_cast<float>(c), f.operands == 2 ? 1 : -1};
          expect_same(f(x, b, double{static_cast<float>(a)}, double{static_cast<float>(c)}), step.apply(x, b), x, at + " chain step");
          ++chained;
        }
        if (f.allows(kRecurrentActivation)) {
          const RecurrentActivation activation{&f, a, c};
          expect_same(want, activation(x), x, at + " recurrent");
          expect_same(f(static_cast<double>(static_cast<float>(x)), 0.0, static_cast<double>(static_cast<float>(a)),
                        static_cast<double>(static_cast<float>(c))),
                      activation(static_cast<float>(x)), x, at + " recurrent in float");
          ++recurrent;
        }
      }
  }
  EXPECT_GT(fused, 0);
  EXPECT_GT(chained, 0);
  EXPECT_GT(recurrent, 0);
}

// The standalone ONNX op of each unary function (its reference kernel) computes the table's
// function with the op's default parameters, in float and in double, at every extreme input.
TEST(ElementwiseFunctions, StandaloneOpsComputeTheTablesFunction) {
  int ops_checked = 0;
  for (const ElementwiseFunction& f : elementwise_functions()) {
    if (f.operands != 1) continue;
    int version = 0;
    for (const auto& [key, versions] : OpRegistry::global().listing())
      if (key.first.empty() && key.second == f.name) version = versions.back();
    if (version == 0) continue;  // no ONNX op of that name (GeluTanh, Affine, ScaledTanh)
    ++ops_checked;
    for (DType dtype : {DType::kFloat, DType::kDouble}) {
      // Clip's default bounds are the range of the input's type: the table's are float's.
      if (f.function == Elementwise::kClip && dtype == DType::kDouble) continue;
      ir::Graph g;
      ir::Node* node = g.add_node(std::string(f.name), {g.add_value("x")}, {g.add_value("y")}, "op", "", version);
      const Result<const OpDef*> def = resolve_op(OpRegistry::global(), *node);
      ASSERT_TRUE(def.is_ok()) << f.name;
      Tensor x = Tensor::allocate(dtype, {static_cast<int64_t>(kExtremes.size())});
      for (size_t i = 0; i < kExtremes.size(); ++i) store_double(x, static_cast<int64_t>(i), kExtremes[i]);
      const Result<std::vector<Tensor>> y = evaluate_node(*def.value(), *node, {&x});
      ASSERT_TRUE(y.is_ok()) << f.name << ": " << y.status().to_string();
      for (size_t i = 0; i < kExtremes.size(); ++i) {
        const double xi = element_as_double(x, static_cast<int64_t>(i)), got = element_as_double(y.value()[0], static_cast<int64_t>(i));
        const std::string at = call(f, kExtremes[i], 0.0) + " as the op, " + dtype_name(dtype);
        const double a = f.default_alpha, c = f.default_beta;
        if (dtype == DType::kFloat)
          expect_same(f(static_cast<float>(xi), 0.0f, static_cast<float>(a), static_cast<float>(c)), got, xi, at);
        else
          EXPECT_TRUE(std::isnan(got) ? std::isnan(f(xi, 0.0, a, c)) : got == f(xi, 0.0, a, c)) << at << " = " << got;
      }
    }
  }
  EXPECT_GE(ops_checked, 16);
}

// The ONNX mapping of fused activations reads the table: an activation op becomes one, an op the
// table does not let fuse does not.
TEST(ElementwiseFunctions, ActivationsOfOnnxNodesAreTheTablesFusedActivations) {
  for (const ElementwiseFunction& f : elementwise_functions()) {
    if (f.function == Elementwise::kGeluTanh) continue;  // Gelu's attribute, not an op
    ir::Graph g;
    ir::Value* x = g.add_value("x");
    ir::Node* node = g.add_node(std::string(f.name), {x}, {g.add_value("y")});
    if (f.function == Elementwise::kGelu) node->opset_version = 20;
    if (f.operands == 2) node->inputs.push_back(g.add_value("b"));
    EXPECT_EQ(activation_of(*node).has_value(), f.allows(kFusedActivation)) << f.name;
  }
}

// A fused node whose activation the table does not know is refused by its type rule, naming the
// node and the name (run as if it had none, it would give a silently wrong answer).
TEST(ElementwiseFunctions, FusedNodesWithAnUnknownActivationAreRefused) {
  for (const std::string& node : {std::string("%y = kiln.FusedConv 'fused'(%x, %w, _) {activation=\"ACT\"}"),
                                  std::string("%y = kiln.InLayout 'fused'(%x) {op=\"Relu\", op_version=14, layout=\"NHWC\", activation=\"ACT\"}")}) {
    for (const std::string activation : {"Swish", "Softplus", "Relu"}) {
      std::string line = node;
      line.replace(line.find("ACT"), 3, activation);
      Result<std::unique_ptr<ir::Graph>> graph = ir::parse_graph(
          "graph main (%x: float[1,2,3,3]) -> (%y) {\n  %w = constant float[2,2,1,1]\n  " + line + "\n}");
      ASSERT_TRUE(graph.is_ok()) << graph.status().to_string();
      const Status inferred = analysis::infer_types(*graph.value(), OpRegistry::global()).status();
      if (activation == "Relu") {
        EXPECT_TRUE(inferred.is_ok()) << line << ": " << inferred.to_string();
      } else {
        EXPECT_FALSE(inferred.is_ok()) << line;  // Softplus is a chain step, not a fused activation
        EXPECT_NE(inferred.message().find("unknown activation '" + activation + "'"), std::string::npos) << inferred.message();
        EXPECT_NE(inferred.message().find("fused"), std::string::npos) << inferred.message();
      }
    }
  }
}

}  // namespace
}  // namespace kiln::ops
