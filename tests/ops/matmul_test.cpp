// Tests of MatMul and Gemm: 1-D operands, batch broadcasting, transposes, C broadcasting, dtypes.
#include "ops/family_test_util.h"

namespace kiln::ops::testing {
namespace {

// Values computed with numpy: np.matmul / alpha * A' @ B' + beta * C on the same inputs.
const Tensor kA = floats({2, 3}, {1, 2, 3, 4, 5, 6});
const Tensor kB = floats({3, 2}, {7, 8, 9, 10, 11, 12});

TEST(MatMul, TwoDAndOneD) {
  expect_near(run("MatMul", {&kA, &kB})[0], {58, 64, 139, 154}, {2, 2});
  Tensor v = floats({3}, {1, 0, -1});
  expect_near(run("MatMul", {&kA, &v})[0], {-2, -2}, {2});
  Tensor w = floats({2}, {1, 1});
  expect_near(run("MatMul", {&w, &kA})[0], {5, 7, 9}, {3});
}

TEST(MatMul, BroadcastsBatchDims) {
  // a: [2,1,2,2] (two identity-scaled matrices), b: [3,2,1] -> y: [2,3,2,1].
  Tensor a = floats({2, 1, 2, 2}, {1, 0, 0, 1, 2, 0, 0, 2});
  Tensor b = floats({3, 2, 1}, {1, 2, 3, 4, 5, 6});
  expect_near(run("MatMul", {&a, &b})[0], {1, 2, 3, 4, 5, 6, 2, 4, 6, 8, 10, 12}, {2, 3, 2, 1});
}

TEST(MatMul, IntegersAreExact) {
  const int64_t big = (int64_t{1} << 60) + 1;  // beyond double's 53-bit mantissa
  Tensor a = int64s({1, 2}, {big, 3});
  Tensor b = int64s({2, 1}, {1, 5});
  EXPECT_EQ(values<int64_t>(run("MatMul", {&a, &b})[0])[0], big + 15);
  Tensor u = typed<uint32_t>(DType::kUInt32, {1, 1}, {4000000000u});
  Tensor two = typed<uint32_t>(DType::kUInt32, {1, 1}, {2});
  EXPECT_EQ(values<uint32_t>(run("MatMul", {&u, &two})[0])[0], 3705032704u);  // 8e9 mod 2^32
}

TEST(MatMul, LargerThanOneTileMatchesNaiveProduct) {
  // 3 x 600 times 600 x 700 crosses the K and N tiles; compare with a naive double loop.
  const int64_t m = 3, k = 600, n = 700;
  std::vector<float> a(m * k), b(k * n);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 13) - 6;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 7) * 0.5f;
  Tensor ta = floats({m, k}, a), tb = floats({k, n}, b);
  std::vector<double> want(m * n, 0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) want[i * n + j] += double(a[i * k + p]) * b[p * n + j];
  expect_near(run("MatMul", {&ta, &tb})[0], want, {m, n});
}

TEST(Gemm, TransposesAlphaBetaAndBroadcastC) {
  Tensor at = floats({3, 2}, {1, 4, 2, 5, 3, 6});  // kA transposed
  Tensor c = floats({2}, {1, -1});
  Attrs attrs{{"transA", attr_i(1)}, {"alpha", attr_f(2)}, {"beta", attr_f(0.5f)}};
  expect_near(run("Gemm", {&at, &kB, &c}, attrs)[0], {116.5, 127.5, 278.5, 307.5}, {2, 2});
  Tensor bt = floats({2, 3}, {7, 9, 11, 8, 10, 12});
  expect_near(run("Gemm", {&kA, &bt}, {{"transB", attr_i(1)}})[0], {58, 64, 139, 154}, {2, 2});
  // Opset 6: broadcast attribute, C required.
  Tensor scalar = floats({1}, {1});
  expect_near(run("Gemm", {&kA, &kB, &scalar}, {{"broadcast", attr_i(1)}}, 6)[0], {59, 65, 140, 155}, {2, 2});
  EXPECT_NE(run_error("Gemm", {&kA, &kB}, {}, 9).find("at least 3"), std::string::npos);
}

TEST(MatMul, ShapeRules) {
  auto r = infer("MatMul", {ir::TensorType{DType::kFloat, sym({"B", "S", 768})},
                            ir::TensorType{DType::kFloat, sym({768, 3072})}});
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].shape->to_string(), "[B,S,3072]");
  auto bad = infer("MatMul", {ir::TensorType{DType::kFloat, sym({2, 3})}, ir::TensorType{DType::kFloat, sym({4, 5})}});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("node_MatMul"), std::string::npos);
  auto g = infer("Gemm", {ir::TensorType{DType::kFloat, sym({"N", 4})}, ir::TensorType{DType::kFloat, sym({10, 4})}},
                 {{"transB", attr_i(1)}});
  ASSERT_TRUE(g.is_ok());
  EXPECT_EQ(g.value()[0].shape->to_string(), "[N,10]");
  EXPECT_FALSE(infer("Gemm", {ir::TensorType{DType::kFloat, sym({2, 3, 4})}, ir::TensorType{DType::kFloat, sym({4, 4})}}).is_ok());
  EXPECT_FALSE(infer("Gemm", {ir::TensorType{DType::kFloat, sym({2, 4})}, ir::TensorType{DType::kFloat, sym({4, 3})},
                              ir::TensorType{DType::kFloat, sym({5, 3})}}).is_ok());
}

}  // namespace
}  // namespace kiln::ops::testing
