// Tests of CumSum, OneHot, TopK, Compress, NonZero, ReverseSequence, Shrink, Det and LRN on
// values worked out by hand, plus value-dependent shape rules.
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/ops/evaluate.h"

namespace kiln::ops {
namespace {

using A = ir::Attribute;
Tensor floats(std::vector<int64_t> shape, std::vector<float> v) { return Tensor::from_vector<float>(DType::kFloat, shape, v); }
Tensor int64s(std::vector<int64_t> shape, std::vector<int64_t> v) { return Tensor::from_vector<int64_t>(DType::kInt64, shape, v); }
template <class T>
std::vector<T> values(const Tensor& t) { return {t.data<T>(), t.data<T>() + t.element_count()}; }

std::vector<Tensor> run(const std::string& op, const std::vector<const Tensor*>& in,
                        const std::map<std::string, A>& attrs = {}, int opset = 17, size_t outputs = 1) {
  auto r = evaluate_op(op, in, attrs, opset, outputs);
  EXPECT_TRUE(r.is_ok()) << op << ": " << r.status().to_string();
  return r.is_ok() ? std::move(r).value() : std::vector<Tensor>(outputs);
}

TEST(TensorOps, CumSumExclusiveAndReverse) {
  const Tensor x = int64s({4}, {1, 2, 3, 4}), axis = int64s({}, {0});
  EXPECT_EQ(values<int64_t>(run("CumSum", {&x, &axis})[0]), (std::vector<int64_t>{1, 3, 6, 10}));
  EXPECT_EQ(values<int64_t>(run("CumSum", {&x, &axis}, {{"exclusive", A::of_int(1)}})[0]), (std::vector<int64_t>{0, 1, 3, 6}));
  EXPECT_EQ(values<int64_t>(run("CumSum", {&x, &axis}, {{"reverse", A::of_int(1)}})[0]), (std::vector<int64_t>{10, 9, 7, 4}));
}

TEST(TensorOps, OneHotWrapsNegativeIndices) {
  const Tensor idx = int64s({2}, {0, -1}), depth = int64s({}, {3}), on_off = floats({2}, {0, 5});
  const Tensor out = run("OneHot", {&idx, &depth, &on_off})[0];
  EXPECT_EQ(out.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(values<float>(out), (std::vector<float>{5, 0, 0, 0, 0, 5}));
}

TEST(TensorOps, OneHotBeforeOpset11TreatsNegativeIndicesAsOutOfRange) {
  const Tensor idx = int64s({2}, {0, -1}), depth = int64s({}, {3}), on_off = floats({2}, {0, 5});
  Result<std::vector<Tensor>> out = evaluate_op("OneHot", {&idx, &depth, &on_off}, {}, 9);
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  EXPECT_EQ(values<float>(out.value()[0]), (std::vector<float>{5, 0, 0, 0, 0, 0}));
}

TEST(TensorOps, TopKBreaksTiesByLowerIndex) {
  const Tensor x = floats({5}, {3, 1, 3, 2, 0}), k = int64s({1}, {2});
  auto out = run("TopK", {&x, &k}, {}, 11, 2);
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{3, 3}));
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{0, 2}));
  auto smallest = run("TopK", {&x, &k}, {{"largest", A::of_int(0)}}, 11, 2);
  EXPECT_EQ(values<int64_t>(smallest[1]), (std::vector<int64_t>{4, 1}));
}

TEST(TensorOps, CompressAndNonZeroSizeTheirOutputsFromValues) {
  const Tensor x = floats({2, 3}, {1, 0, 2, 0, 3, 0});
  const Tensor cond = Tensor::from_vector<bool>(DType::kBool, {3}, {true, false, true});
  const Tensor picked = run("Compress", {&x, &cond}, {{"axis", A::of_int(1)}})[0];
  EXPECT_EQ(picked.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(values<float>(picked), (std::vector<float>{1, 2, 0, 0}));
  const Tensor nz = run("NonZero", {&x})[0];
  EXPECT_EQ(nz.shape(), (std::vector<int64_t>{2, 3}));  // (0,0), (0,2), (1,1)
  EXPECT_EQ(values<int64_t>(nz), (std::vector<int64_t>{0, 0, 1, 0, 2, 1}));
}

TEST(TensorOps, ReverseSequenceShrinkDetLrn) {
  const Tensor seq = floats({3, 2}, {1, 10, 2, 20, 3, 30}), lens = int64s({2}, {2, 3});  // time-major
  EXPECT_EQ(values<float>(run("ReverseSequence", {&seq, &lens})[0]), (std::vector<float>{2, 30, 1, 20, 3, 10}));
  const Tensor s = floats({3}, {-1, 0.2f, 2});
  EXPECT_EQ(values<float>(run("Shrink", {&s}, {{"bias", A::of_float(0.5f)}})[0]), (std::vector<float>{-0.5f, 0, 1.5f}));
  const Tensor m = floats({2, 2}, {1, 2, 3, 4});
  EXPECT_FLOAT_EQ(run("Det", {&m})[0].data<float>()[0], -2.0f);
  const Tensor x = floats({1, 2, 1, 1}, {1, 2});
  // size 2: channel 0 sums c0 (before=0, after=1 -> c0, c1): 1 + 4 = 5; channel 1 sums c1 only: 4.
  const Tensor y = run("LRN", {&x}, {{"size", A::of_int(2)}, {"alpha", A::of_float(2)}, {"beta", A::of_float(1)}})[0];
  EXPECT_NEAR(y.data<float>()[0], 1.0 / (1 + 2.0 / 2 * 5), 1e-6);
  EXPECT_NEAR(y.data<float>()[1], 2.0 / (1 + 2.0 / 2 * 4), 1e-6);
}

}  // namespace
}  // namespace kiln::ops

namespace kiln::ops {
namespace {

TEST(TensorOps, UniqueSortedWithCountsAndInverse) {
  const Tensor x = floats({6}, {2, 1, 1, 3, 4, 3});
  auto out = run("Unique", {&x}, {}, 11, 4);
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(values<int64_t>(out[1]), (std::vector<int64_t>{1, 0, 3, 4}));  // first occurrences
  EXPECT_EQ(values<int64_t>(out[2]), (std::vector<int64_t>{1, 0, 0, 2, 3, 2}));
  EXPECT_EQ(values<int64_t>(out[3]), (std::vector<int64_t>{2, 1, 2, 1}));
}

TEST(TensorOps, EinsumMatmulDiagonalAndImplicitOutput) {
  const Tensor a = floats({2, 2}, {1, 2, 3, 4}), b = floats({2, 2}, {5, 6, 7, 8});
  EXPECT_EQ(values<float>(run("Einsum", {&a, &b}, {{"equation", A::of_string("ij,jk->ik")}}, 12)[0]),
            (std::vector<float>{19, 22, 43, 50}));
  EXPECT_EQ(values<float>(run("Einsum", {&a}, {{"equation", A::of_string("ii->i")}}, 12)[0]), (std::vector<float>{1, 4}));
  // Implicit "ij,ij" sums everything: 1*5 + 2*6 + 3*7 + 4*8 = 70.
  EXPECT_EQ(values<float>(run("Einsum", {&a, &b}, {{"equation", A::of_string("ij,ij")}}, 12)[0]), (std::vector<float>{70}));
  auto bad = evaluate_op("Einsum", {&a, &b}, {{"equation", A::of_string("ijk,jk->i")}}, 12);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidModel);
}

}  // namespace
}  // namespace kiln::ops
