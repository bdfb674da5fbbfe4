// Tests of kiln.Attention's reference kernel and shape rule with operand permutations
// (ops/attention.h): permuted inputs and a permuted output give exactly what explicit Transposes
// around a plain attention give; bad permutations are InvalidModel naming the node.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace kiln::ops
