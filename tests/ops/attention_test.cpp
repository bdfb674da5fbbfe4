// Tests of kiln.Attention's reference kernel and shape rule with operand permutations
// (ops/attention.h): permuted inputs and a permuted output give exactly what explicit Transposes
// around a plain attention give; bad permutations are InvalidModel naming the node. With kv_length
// (a cache valid up to a length per batch) the result is attention over the valid keys alone,
// whatever the rest of the cache holds.
#include <gtest/gtest.h>

#include <cmath>

#include "kiln/ops/attention.h"
#include "kiln/ops/evaluate.h"
#include "ops/family_test_util.h"

namespace kiln::ops {
namespace {

using testing::Attrs;

Result<Tensor> attention(const std::vector<const Tensor*>& inputs, const Attrs& attrs) {
  ir::Graph g;
  std::vector<ir::Value*> ins;
  for (size_t i = 0; i < inputs.size(); ++i)
    ins.push_back(inputs[i] ? g.add_value("in" + std::to_string(i), ir::make_type(inputs[i]->dtype(), inputs[i]->shape()))
                            : nullptr);
  ir::Node* node = g.add_node("Attention", ins, {g.add_value("y")}, "attention", "kiln", 1);
  node->attributes = attrs;
  KILN_ASSIGN_OR_RETURN(const OpDef* def, resolve_op(OpRegistry::global(), *node));
  KILN_ASSIGN_OR_RETURN(std::vector<Tensor> outs, evaluate_node(*def, *node, inputs));
  return outs[0];
}

Tensor transpose(const Tensor& t, const std::vector<int64_t>& perm) {
  return testing::run("Transpose", {&t}, {{"perm", ir::Attribute::of_ints(perm)}})[0];
}

void expect_equal(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < want.element_count(); ++i) EXPECT_EQ(got.data<float>()[i], want.data<float>()[i]) << i;
}

TEST(AttentionPermutations, BertHeadLayoutMatchesExplicitTransposes) {
  // [B,S,H,D] sources; Q and V as [B,H,S,D], Kt as [B,H,D,S]; the output back to [B,S,H,D].
  const Tensor q = random_tensor(DType::kFloat, {2, 5, 3, 4}, 1), k = random_tensor(DType::kFloat, {2, 5, 3, 4}, 2),
               v = random_tensor(DType::kFloat, {2, 5, 3, 4}, 3);
  const Tensor mask = testing::bools({2, 1, 1, 5}, {0, 0, 1, 0, 0, 1, 0, 0, 0, 0});
  const Tensor qt = transpose(q, {0, 2, 1, 3}), ktt = transpose(k, {0, 2, 3, 1}), vt = transpose(v, {0, 2, 1, 3});
  auto plain = attention({&qt, &ktt, &vt, &mask}, {{"scale", ir::Attribute::of_float(0.5f)}});
  auto folded = attention({&q, &k, &v, &mask}, {{"scale", ir::Attribute::of_float(0.5f)},
                                                {"q_perm", ir::Attribute::of_ints({0, 2, 1, 3})},
                                                {"kt_perm", ir::Attribute::of_ints({0, 2, 3, 1})},
                                                {"v_perm", ir::Attribute::of_ints({0, 2, 1, 3})},
                                                {"y_perm", ir::Attribute::of_ints({0, 2, 1, 3})}});
  ASSERT_TRUE(plain.is_ok() && folded.is_ok()) << plain.status().to_string() << folded.status().to_string();
  expect_equal(folded.value(), transpose(plain.value(), {0, 2, 1, 3}));
}

TEST(AttentionPermutations, VitSequenceFirstLayoutMatchesExplicitTransposes) {
  // [S,H,D] sources (ViT at batch 1): Q, V as [H,S,D], Kt as [H,D,S]; output back to [S,H,D].
  const Tensor q = random_tensor(DType::kFloat, {7, 3, 4}, 4), k = random_tensor(DType::kFloat, {7, 3, 4}, 5),
               v = random_tensor(DType::kFloat, {7, 3, 6}, 6);
  const Tensor qt = transpose(q, {1, 0, 2}), ktt = transpose(k, {1, 2, 0}), vt = transpose(v, {1, 0, 2});
  auto plain = attention({&qt, &ktt, &vt}, {});
  auto folded = attention({&q, &k, &v}, {{"q_perm", ir::Attribute::of_ints({1, 0, 2})},
                                         {"kt_perm", ir::Attribute::of_ints({1, 2, 0})},
                                         {"v_perm", ir::Attribute::of_ints({1, 0, 2})},
                                         {"y_perm", ir::Attribute::of_ints({1, 0, 2})}});
  ASSERT_TRUE(plain.is_ok() && folded.is_ok());
  EXPECT_EQ(folded.value().shape(), (std::vector<int64_t>{7, 3, 6}));
  expect_equal(folded.value(), transpose(plain.value(), {1, 0, 2}));
}

TEST(AttentionPermutations, APermutationOfTheWrongAxesIsInvalidModelNamingTheNode) {
  const Tensor q = random_tensor(DType::kFloat, {3, 4}, 1), kt = random_tensor(DType::kFloat, {4, 3}, 2);
  for (const std::vector<int64_t>& bad : {std::vector<int64_t>{0, 0}, {0, 1, 2}, {1, 2}}) {
    auto r = attention({&q, &kt, &q}, {{"q_perm", ir::Attribute::of_ints(bad)}});
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidModel);
    EXPECT_NE(r.status().message().find("q_perm"), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("attention"), std::string::npos) << r.status().message();
  }
}

// t[:, ..., :keep] along axis `axis` of a rank-4 tensor, batch b only.
Tensor batch_prefix(const Tensor& t, int64_t b, int64_t axis, int64_t keep) {
  std::vector<int64_t> shape = t.shape();
  shape[0] = 1;
  shape[static_cast<size_t>(axis)] = keep;
  Tensor out = Tensor::allocate(DType::kFloat, shape);
  const std::vector<int64_t>& d = t.shape();
  int64_t at = 0;
  for (int64_t i1 = 0; i1 < d[1]; ++i1)
    for (int64_t i2 = 0; i2 < shape[2]; ++i2)
      for (int64_t i3 = 0; i3 < shape[3]; ++i3)
        out.data<float>()[at++] = t.data<float>()[((b * d[1] + i1) * d[2] + i2) * d[3] + i3];
  return out;
}

TEST(AttentionKvLength, IsAttentionOverTheValidKeysAloneWhateverTheRestHolds) {
  const int64_t batch = 2, heads = 3, queries = 4, depth = 8, keys = 10, width = 6;
  const Tensor q = random_tensor(DType::kFloat, {batch, heads, queries, depth}, 1);
  Tensor kt = random_tensor(DType::kFloat, {batch, heads, depth, keys}, 2), v = random_tensor(DType::kFloat, {batch, heads, keys, width}, 3);
  std::vector<bool> causal;
  for (int64_t i = 0; i < queries; ++i)
    for (int64_t j = 0; j < keys; ++j) causal.push_back(j > i + 3);
  const Tensor mask = testing::bools({queries, keys}, causal);
  const std::vector<int64_t> lengths = {7, 4};
  for (int64_t b = 0; b < batch; ++b)  // what lies beyond a batch's keys: NaN, never read
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t j = lengths[static_cast<size_t>(b)]; j < keys; ++j) {
        for (int64_t d = 0; d < depth; ++d) kt.data<float>()[((b * heads + h) * depth + d) * keys + j] = std::nanf("");
        for (int64_t d = 0; d < width; ++d) v.data<float>()[((b * heads + h) * keys + j) * width + d] = std::nanf("");
      }
  const Attrs scaled = {{"scale", ir::Attribute::of_float(0.35f)}};
  const Tensor per_batch = testing::int64s({batch}, lengths);
  auto cached = attention({&q, &kt, &v, &mask, nullptr, &per_batch}, scaled);
  ASSERT_TRUE(cached.is_ok()) << cached.status().to_string();
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t keep = lengths[static_cast<size_t>(b)];
    const Tensor qb = batch_prefix(q, b, 2, queries), ktb = batch_prefix(kt, b, 3, keep), vb = batch_prefix(v, b, 2, keep);
    std::vector<bool> kept_mask;
    for (int64_t i = 0; i < queries; ++i)
      for (int64_t j = 0; j < keep; ++j) kept_mask.push_back(causal[static_cast<size_t>(i * keys + j)]);
    const Tensor mb = testing::bools({queries, keep}, kept_mask);
    auto plain = attention({&qb, &ktb, &vb, &mb}, scaled);
    ASSERT_TRUE(plain.is_ok()) << plain.status().to_string();
    const Tensor got = batch_prefix(cached.value(), b, 2, queries);
    for (int64_t i = 0; i < got.element_count(); ++i)
      EXPECT_NEAR(got.data<float>()[i], plain.value().data<float>()[i], 1e-6) << "batch " << b << ", element " << i;
  }
  // One length for every batch, and one past the keys there are.
  const Tensor four = testing::int64s({}, {4});
  auto shared = attention({&q, &kt, &v, &mask, nullptr, &four}, scaled);
  ASSERT_TRUE(shared.is_ok()) << shared.status().to_string();
  EXPECT_NEAR(shared.value().data<float>()[heads * queries * width], cached.value().data<float>()[heads * queries * width], 1e-6);
  const Tensor eleven = testing::int64s({1}, {11});
  auto beyond = attention({&q, &kt, &v, &mask, nullptr, &eleven}, scaled);
  ASSERT_FALSE(beyond.is_ok());
  EXPECT_EQ(beyond.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(beyond.status().message().find("kv_length 11"), std::string::npos) << beyond.status().message();
}

}  // namespace
}  // namespace kiln::ops
