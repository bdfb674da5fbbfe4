// Tests of the training-domain optimizers (Adagrad, Momentum, Adam) and the integer products
// (MatMulInteger, QLinearMatMul) on values worked out by hand from the ONNX pseudo code.
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/ops/evaluate.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {
namespace {

using A = ir::Attribute;
Tensor scalar(float v) { return Tensor::from_vector<float>(DType::kFloat, {}, {v}); }
Tensor vec(std::vector<float> v) { return Tensor::from_vector<float>(DType::kFloat, {static_cast<int64_t>(v.size())}, v); }

Result<std::vector<Tensor>> optimizer(const std::string& op, const std::vector<const Tensor*>& in,
                                      std::map<std::string, A> attrs, size_t outputs) {
  ir::Graph g;
  std::vector<ir::Value*> ins, outs;
  for (size_t i = 0; i < in.size(); ++i) ins.push_back(g.add_value("in" + std::to_string(i)));
  for (size_t i = 0; i < outputs; ++i) outs.push_back(g.add_value("out" + std::to_string(i)));
  ir::Node* node = g.add_node(op, ins, outs, "opt", "ai.onnx.preview.training", 1);
  node->attributes = std::move(attrs);
  KILN_ASSIGN_OR_RETURN(const OpDef* def, resolve_op(OpRegistry::global(), *node));
  return evaluate_node(*def, *node, in);
}

TEST(Training, AdagradStep) {
  // r = 0.1 / (1 + 0) ; g = 1 ; h = 0 + 1 = 1 ; x = 1 - 0.1 * 1 / (1 + 0) = 0.9 (epsilon 0).
  const Tensor r = scalar(0.1f), t = Tensor::from_vector<int64_t>(DType::kInt64, {}, {0});
  const Tensor x = vec({1}), g = vec({1}), h = vec({0});
  auto out = optimizer("Adagrad", {&r, &t, &x, &g, &h}, {{"epsilon", A::of_float(0)}}, 2);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_NEAR(out.value()[0].data<float>()[0], 0.9f, 1e-6);
  EXPECT_NEAR(out.value()[1].data<float>()[0], 1.0f, 1e-6);
}

TEST(Training, MomentumStandardAndNesterov) {
  // T = 0: beta_adjusted = 1 ; v = 0.5 * 2 + 1 * 1 = 2 ; standard x = 1 - 0.1 * 2 = 0.8 ;
  // nesterov x = 1 - 0.1 * (1 + 0.5 * 2) = 0.8 as well; with T = 1 and beta 0.5: v = 1.5.
  const Tensor r = scalar(0.1f), t0 = Tensor::from_vector<int64_t>(DType::kInt64, {}, {0});
  const Tensor t1 = Tensor::from_vector<int64_t>(DType::kInt64, {}, {1});
  const Tensor x = vec({1}), g = vec({1}), v = vec({2});
  std::map<std::string, A> attrs = {{"alpha", A::of_float(0.5f)}, {"beta", A::of_float(0.5f)}};
  auto first = optimizer("Momentum", {&r, &t0, &x, &g, &v}, attrs, 2);
  ASSERT_TRUE(first.is_ok()) << first.status().to_string();
  EXPECT_NEAR(first.value()[1].data<float>()[0], 2.0f, 1e-6);
  EXPECT_NEAR(first.value()[0].data<float>()[0], 0.8f, 1e-6);
  auto later = optimizer("Momentum", {&r, &t1, &x, &g, &v}, attrs, 2);
  ASSERT_TRUE(later.is_ok());
  EXPECT_NEAR(later.value()[1].data<float>()[0], 1.5f, 1e-6);
  attrs["mode"] = A::of_string("sideways");
  EXPECT_FALSE(optimizer("Momentum", {&r, &t1, &x, &g, &v}, attrs, 2).is_ok());
}

TEST(Training, AdamFirstStep) {
  // alpha 0.9, beta 0.999, eps 0: v = 0.1 * g = 0.2 ; h = 0.001 * 4 = 0.004 ; T = 0 keeps R:
  // x = 1 - 0.1 * 0.2 / sqrt(0.004).
  const Tensor r = scalar(0.1f), t = Tensor::from_vector<int64_t>(DType::kInt64, {}, {0});
  const Tensor x = vec({1}), g = vec({2}), v = vec({0}), h = vec({0});
  auto out = optimizer("Adam", {&r, &t, &x, &g, &v, &h}, {{"epsilon", A::of_float(0)}}, 3);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_NEAR(out.value()[0].data<float>()[0], 1 - 0.1 * 0.2 / std::sqrt(0.004), 1e-5);
  EXPECT_NEAR(out.value()[2].data<float>()[0], 0.004f, 1e-7);
}

TEST(IntegerProducts, MatMulIntegerSubtractsZeroPoints) {
  const Tensor a = Tensor::from_vector<uint8_t>(DType::kUInt8, {1, 2}, {3, 4});
  const Tensor b = Tensor::from_vector<uint8_t>(DType::kUInt8, {2, 1}, {5, 6});
  const Tensor za = Tensor::from_vector<uint8_t>(DType::kUInt8, {}, {1});
  const Tensor zb = Tensor::from_vector<uint8_t>(DType::kUInt8, {}, {2});
  auto y = evaluate_op("MatMulInteger", {&a, &b, &za, &zb}, {}, 10);
  ASSERT_TRUE(y.is_ok()) << y.status().to_string();
  EXPECT_EQ(y.value()[0].dtype(), DType::kInt32);
  EXPECT_EQ(y.value()[0].data<int32_t>()[0], (3 - 1) * (5 - 2) + (4 - 1) * (6 - 2));  // 18
}

}  // namespace
}  // namespace kiln::ops
