// Tests of gelu_fusion on IR text: both forms exporters write (erf, with Div by sqrt 2 or Mul by
// its inverse, the 0.5 on either side; GPT-2's tanh form) become one kiln.Gelu; a wrong constant,
// or a result a subgraph reads, is left alone.
#include "kiln/passes/gelu_fusion.h"

#include <gtest/gtest.h>

#include "passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using namespace testing;

// `text` after gelu_fusion and dead-code elimination; whether gelu_fusion changed it.
std::pair<bool, std::string> fused(std::string_view text) {
  const Rewritten r = rewrite_ir(text, fuse_gelu);
  return {r.changed, r.printed};
}

TEST(GeluFusion, TheErfFormIsOneGelu) {
  const auto [changed, text] = fused(R"(graph main (%x: float[2,8]) -> (%y) {
    %root2 = constant float[] [1.4142135]
    %one = constant float[] [1.0]
    %half = constant float[] [0.5]
    %s = Div 'scale'(%x, %root2)
    %e = Erf 'erf'(%s)
    %p = Add 'plus'(%e, %one)
    %m = Mul 'times'(%x, %p)
    %y = Mul 'half'(%m, %half)
  })");
  EXPECT_TRUE(changed);
  EXPECT_EQ(text,
            "graph main (%x: float[2,8]) -> (%y: undefined) {\n"
            "  %y: undefined = kiln.Gelu 'erf_gelu'(%x) {approximate=\"none\"}\n"
            "}");
}

TEST(GeluFusion, TheErfFormWithTheInverseRootAndTheHalfFirstIsOneGelu) {
  const auto [changed, text] = fused(R"(graph main (%x: float[4]) -> (%y) {
    %inverse_root2 = constant float[] [0.70710677]
    %one = constant float[] [1.0]
    %half = constant float[] [0.5]
    %s = Mul(%inverse_root2, %x)
    %e = Erf 'erf'(%s)
    %p = Add(%one, %e)
    %h = Mul(%half, %x)
    %y = Mul(%h, %p)
  })");
  EXPECT_TRUE(changed);
  EXPECT_NE(text.find("%y: undefined = kiln.Gelu 'erf_gelu'(%x) {approximate=\"none\"}"), std::string::npos) << text;
  EXPECT_EQ(text.find("Erf"), std::string::npos) << text;
}

TEST(GeluFusion, TheTanhFormIsOneGeluWithItsApproximation) {
  const auto [changed, text] = fused(R"(graph main (%x: float[4]) -> (%y) {
    %three = constant float[] [3.0]
    %c = constant float[] [0.044715]
    %root = constant float[] [0.7978846]
    %one = constant float[] [1.0]
    %half = constant float[] [0.5]
    %cube = Pow(%x, %three)
    %scaled = Mul(%c, %cube)
    %inner = Add(%x, %scaled)
    %arg = Mul(%inner, %root)
    %t = Tanh 'tanh'(%arg)
    %p = Add(%t, %one)
    %h = Mul(%x, %half)
    %y = Mul(%h, %p)
  })");
  EXPECT_TRUE(changed);
  EXPECT_EQ(text,
            "graph main (%x: float[4]) -> (%y: undefined) {\n"
            "  %y: undefined = kiln.Gelu 'tanh_gelu'(%x) {approximate=\"tanh\"}\n"
            "}");
}

TEST(GeluFusion, AWrongConstantOrAResultASubgraphReadsIsLeftAlone) {
  const std::string_view wrong_half = R"(graph main (%x: float[4]) -> (%y) {
    %root2 = constant float[] [1.4142135]
    %one = constant float[] [1.0]
    %not_half = constant float[] [0.4]
    %s = Div(%x, %root2)
    %e = Erf(%s)
    %p = Add(%e, %one)
    %m = Mul(%x, %p)
    %y = Mul(%m, %not_half)
  })";
  EXPECT_FALSE(fused(wrong_half).first);
  const std::string_view captured = R"(graph main (%x: float[4], %c: bool[]) -> (%z) {
    %root2 = constant float[] [1.4142135]
    %one = constant float[] [1.0]
    %half = constant float[] [0.5]
    %s = Div(%x, %root2)
    %e = Erf(%s)
    %p = Add(%e, %one)
    %m = Mul(%x, %p)
    %y = Mul(%m, %half)
    %z = If(%c) {else_branch=
      graph no () -> (%n) {
        %n = Neg(%y)
      }, then_branch=
      graph yes () -> (%y) {
      }}
  })";
  EXPECT_FALSE(fused(captured).first);
}

}  // namespace
}  // namespace kiln::passes
