// Every function of the element-wise table (ops/elementwise_functions.h) through every provider at
// extreme inputs, in each form a provider runs it: the standalone ONNX op (on tensors large
// enough that the cpu provider takes its oneDNN kernel, not its plain loop), a fused activation
// (kiln.FusedMatMul's epilogue: oneDNN post-ops on the cpu provider) and a kiln.ElementwiseChain
// step (oneDNN post-ops), against the reference, which computes the table's own definition, within
// the harness's tolerance (float: 1e-5 absolute, 1e-4 relative; NaN for NaN, the same infinity).
// Inputs come in classes (finite values from 0 to 1e30, subnormals, infinities, NaN), so that a
// provider's known deviations are stated per class, each with its reason: any other mismatch
// fails, and so does a stated deviation that no longer happens (the list must shrink with it).
// Generated code is held to the table in tests/providers/cpu/codegen/kernel_generator_test.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kiln/ops/elementwise_functions.h"
#include "kiln/ops/op_registry.h"
#include "kiln/providers/registry/provider_registry.h"
#include "support/differential.h"
#include "support/test_target.h"

namespace kiln::testing {
namespace {

using A = ir::Attribute;

struct InputClass {
  std::string name;
  std::vector<double> values;
};
const std::vector<InputClass>& input_classes() {
  static const std::vector<InputClass> classes = {
      {"finite", {100.0, -100.0, 1e30, -1e30, 0.0, -0.0, 0.5, -3.5, 88.0, -88.0}},
      {"subnormal", {1e-40, -1e-40}},
      {"infinite", {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}},
      {"nan", {std::nan("")}},
  };
  return classes;
}

// Where the cpu provider's oneDNN kernels (oneDNN 2.6, Debian 12) differ from the reference, as
// "<form> <function> <input class>[ x <operand class>]".
const std::map<std::string, std::string> kCpuDeviations = {
    // oneDNN's relu, clip, linear+clip and exp map a NaN to a number.
    {"op Relu nan", "oneDNN's relu gives 0 for NaN (ONNX Runtime and the reference: NaN)"},
    {"fused Relu nan", "oneDNN's relu post-op gives 0 for NaN"},
    {"chain Relu nan", "oneDNN's relu post-op gives 0 for NaN"},
    {"op Clip nan", "oneDNN's clip gives its lower bound for NaN"},
    {"fused Clip nan", "oneDNN's clip post-op gives its lower bound for NaN"},
    {"chain Clip nan", "oneDNN's clip post-op gives its lower bound for NaN"},
    {"op HardSigmoid nan", "oneDNN's clip after linear gives 0 for NaN"},
    {"fused HardSigmoid nan", "oneDNN's clip after linear gives 0 for NaN"},
    {"op Exp nan", "oneDNN's exp gives inf for NaN"},
    {"chain Exp nan", "oneDNN's exp post-op gives inf for NaN"},
    // oneDNN's max and min give the other operand when the first is NaN (ONNX Runtime: NaN).
    {"op Max nan x finite", "oneDNN's binary max gives the operand for a NaN x"},
    {"op Max nan x subnormal", "oneDNN's binary max gives the operand for a NaN x"},
    {"op Max nan x infinite", "oneDNN's binary max gives the operand for a NaN x"},
    {"op Min nan x finite", "oneDNN's binary min gives the operand for a NaN x"},
    {"op Min nan x subnormal", "oneDNN's binary min gives the operand for a NaN x"},
    {"op Min nan x infinite", "oneDNN's binary min gives the operand for a NaN x"},
    {"chain Max nan x finite", "oneDNN's binary max gives the operand for a NaN x"},
    {"chain Max nan x subnormal", "oneDNN's binary max gives the operand for a NaN x"},
    {"chain Max nan x infinite", "oneDNN's binary max gives the operand for a NaN x"},
    {"chain Min nan x finite", "oneDNN's binary min gives the operand for a NaN x"},
    {"chain Min nan x subnormal", "oneDNN's binary min gives the operand for a NaN x"},
    {"chain Min nan x infinite", "oneDNN's binary min gives the operand for a NaN x"},
    // oneDNN's log reads subnormal inputs as the smallest normal float.
    {"op Log subnormal", "oneDNN's log treats subnormals as FLT_MIN (log gives -88.0, not -92.1)"},
    {"chain Log subnormal", "oneDNN's log post-op treats subnormals as FLT_MIN"},
    // x^0.5 as sqrt: pow(-inf, 0.5) is +inf in C and numpy, sqrt(-inf) NaN.
    {"chain Pow infinite", "a chain's x^0.5 runs as oneDNN's sqrt: sqrt(-inf) is NaN where pow(-inf, 0.5) is inf"},
};

float alpha_of(const ops::ElementwiseFunction& f) { return f.function == ops::Elementwise::kClip ? -1.0f : 0.7f; }
float beta_of(const ops::ElementwiseFunction& f) { return f.function == ops::Elementwise::kClip ? 2.0f : 0.25f; }

// The newest ai.onnx version of op `name`, or 0 when the registry has no such op.
int onnx_version(std::string_view name) {
  for (const auto& [key, versions] : ops::OpRegistry::global().listing())
    if (key.first.empty() && key.second == name) return versions.back();
  return 0;
}

struct Case {
  std::string label;  // "<form> <function> <class>[ x <class>]"
  OpCase op;
};

// `values` repeated to `n` elements.
std::vector<double> repeated(const std::vector<double>& values, size_t n) {
  std::vector<double> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = values[i % values.size()];
  return out;
}

std::vector<Case> cases_of(const ops::ElementwiseFunction& f) {
  std::vector<Case> cases;
  const std::string name(f.name);
  const bool binary = f.operands == 2;
  const std::map<std::string, A> steps = {{"steps", A::of_strings({name})},
                                          {"operands", A::of_ints({binary ? 1 : -1})},
                                          {"operand_first", A::of_ints({0})},
                                          {"alphas", A::of_floats({alpha_of(f)})},
                                          {"betas", A::of_floats({beta_of(f)})}};
  for (const InputClass& c : input_classes()) {
    const int64_t k = static_cast<int64_t>(c.values.size());
    if (!binary && onnx_version(f.name) > 0) {
      const size_t n = 20000;  // past the cpu provider's plain-loop limit (16384 elements)
      cases.push_back({"op " + name + " " + c.name,
                       {name, onnx_version(f.name), {{DType::kFloat, {static_cast<int64_t>(n)}, false, repeated(c.values, n)}}}});
    }
    if (f.allows(ops::kFusedActivation)) {  // x[k, 1] times [[1]]: the product is x exactly, inf included
      cases.push_back({"fused " + name + " " + c.name,
                       {"kiln.FusedMatMul", 1,
                        {{DType::kFloat, {k, 1}, false, c.values}, {DType::kFloat, {1, 1}, true, {1.0}}},
                        {{"activation", A::of_string(name)},
                         {"activation_alpha", A::of_float(alpha_of(f))},
                         {"activation_beta", A::of_float(beta_of(f))}}}});
    }
    if (!f.allows(ops::kChainStep)) continue;
    const TensorSpec x{DType::kFloat, {k}, false, c.values};
    if (!binary) {
      cases.push_back({"chain " + name + " " + c.name, {"kiln.ElementwiseChain", 1, {x}, steps}});
    } else if (f.function == ops::Elementwise::kPow) {  // a chain's Pow has a constant scalar exponent
      for (double e : {2.0, 0.5, -1.0, 3.0})
        cases.push_back({"chain " + name + " " + c.name, {"kiln.ElementwiseChain", 1, {x, {DType::kFloat, {}, true, {e}}}, steps}});
    } else {
      for (const InputClass& d : input_classes()) {  // every pair of an x and an operand, as the op and as a step
        std::vector<double> xs, bs;
        for (double a : c.values)
          for (double b : d.values) xs.push_back(a), bs.push_back(b);
        const int64_t n = static_cast<int64_t>(xs.size());
        const std::vector<TensorSpec> pair = {{DType::kFloat, {n}, false, xs}, {DType::kFloat, {n}, false, bs}};
        const std::string classes = c.name + " x " + d.name;
        cases.push_back({"op " + name + " " + classes, {name, onnx_version(f.name), pair}});
        cases.push_back({"chain " + name + " " + classes, {"kiln.ElementwiseChain", 1, pair, steps}});
      }
    }
  }
  return cases;
}

TEST(ElementwiseExtremes, EveryProviderComputesEveryTableFunctionAtExtremeInputs) {
  for (const std::string& name : providers::available_providers()) {
    auto provider = providers::make_provider(name, {test_target()});
    ASSERT_TRUE(provider.is_ok());
    const std::map<std::string, std::string> stated = name == "cpu" ? kCpuDeviations : std::map<std::string, std::string>{};
    std::set<std::string> deviating;
    int compared = 0, cases = 0;
    for (const ops::ElementwiseFunction& f : ops::elementwise_functions()) {
      for (const Case& c : cases_of(f)) {
        const DifferentialResult r = check_against_reference(*provider.value(), c.op, 1);
        ASSERT_NE(r.verdict, Verdict::kInvalidCase) << c.label << ": " << r.detail;
        ++cases;
        if (r.verdict == Verdict::kDeclined) continue;
        ++compared;
        if (r.verdict == Verdict::kMatch) continue;
        deviating.insert(c.label);
        EXPECT_TRUE(stated.count(c.label)) << name << " " << c.label << " (" << c.op.label() << "): " << r.detail;
      }
    }
    for (const auto& [label, reason] : stated)
      EXPECT_TRUE(deviating.count(label)) << name << " no longer deviates on " << label << ": remove it from the list";
    EXPECT_GT(compared, cases / 2) << name << " ran " << compared << " of " << cases;
  }
}

}  // namespace
}  // namespace kiln::testing
