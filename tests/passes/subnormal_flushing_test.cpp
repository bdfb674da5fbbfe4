// Tests of subnormal_flushing: float32 constants' subnormal values become signed zeros, normal
// values and other dtypes stay, and a constant without subnormals is left as it is.
#include "kiln/passes/subnormal_flushing.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "passes/pass_test_util.h"

namespace kiln::passes {
namespace {

using namespace testing;

TEST(SubnormalFlushing, SubnormalFloat32ConstantsBecomeSignedZeros) {
  ir::Graph g;
  const float tiny = std::numeric_limits<float>::min(), denormal = tiny / 8;
  ir::Value* w = g.add_constant("w", Tensor::from_vector<float>(DType::kFloat, {5}, {denormal, -denormal, tiny, 0.5f, -0.0f}));
  ir::Value* normal = g.add_constant("normal", Tensor::from_vector<float>(DType::kFloat, {2}, {1.0f, tiny}));
  ir::Value* wide = g.add_constant("wide", Tensor::from_vector<double>(DType::kDouble, {1}, {1e-310}));
  const Tensor normal_before = *normal->initializer;
  EXPECT_TRUE(changed_ok(flush_subnormal_constants(g, fake_context())));
  const float* v = w->initializer->data<float>();
  EXPECT_EQ(v[0], 0.0f);
  EXPECT_FALSE(std::signbit(v[0]));
  EXPECT_EQ(v[1], 0.0f);
  EXPECT_TRUE(std::signbit(v[1]));
  EXPECT_EQ(v[2], tiny);  // the smallest normal float stays
  EXPECT_EQ(v[3], 0.5f);
  EXPECT_TRUE(std::signbit(v[4]));
  EXPECT_EQ(normal->initializer->raw_data(), normal_before.raw_data());  // untouched: the same storage
  EXPECT_EQ(wide->initializer->data<double>()[0], 1e-310);
  EXPECT_FALSE(changed_ok(flush_subnormal_constants(g, fake_context())));  // nothing left to flush
}

}  // namespace
}  // namespace kiln::passes
