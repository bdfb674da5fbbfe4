// The cpu provider's kiln.Attention over a key/value cache (kv_length) against the reference kernel:
// grouped-query layouts (query heads read through q_perm, keys through kt_perm, the output written
// through y_perm; the group outer as the GGUF decoders have it, and inner) for one token (the query
// heads of a key head merged into one product) and for a prompt, and a plain [batch, heads,
// sequence, depth] layout with a length per batch; a decoder's head depths (64, 128), where a few
// query rows take few_row_attention.h's products. The cache beyond each length holds NaN: a kernel
// that read it would show.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kiln/ops/attention.h"
#include "kiln/ops/evaluate.h"
#include "kiln/providers/registry/provider_registry.h"
#include "support/test_target.h"

namespace kiln::testing {
namespace {

struct Operand {
  Tensor tensor;
  std::vector<int64_t> perm;  // empty: none
};

// Sets every element of `t` ([..., T, D] or, when `keys_last`, [..., D, T]) at key j >= valid to NaN.
void poison_beyond(Tensor& t, int64_t valid, bool keys_last) {
  const std::vector<int64_t>& s = t.shape();
  const int64_t inner = s.back(), rows = s[s.size() - 2], outer = t.element_count() / (inner * rows);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < inner; ++c)
        if ((keys_last ? c : r) >= valid) t.data<float>()[(o * rows + r) * inner + c] = std::nanf("");
}

void check(const Operand& q, const Operand& k, const Operand& v, const Tensor& mask, const Tensor& lengths, const std::vector<int64_t>& y_perm) {
  ir::Graph graph;
  ir::Value* in[6] = {};
  const Tensor* tensors[6] = {&q.tensor, &k.tensor, &v.tensor, &mask, nullptr, &lengths};
  for (size_t i = 0; i < 6; ++i)
    if (tensors[i]) in[i] = graph.add_value("in" + std::to_string(i), ir::make_type(tensors[i]->dtype(), tensors[i]->shape()));
  ir::Value* y = graph.add_value("y");
  ir::Node* node = graph.add_node("Attention", {in[0], in[1], in[2], in[3], in[4], in[5]}, {y}, "attention", "kiln", 1);
  node->attributes["scale"] = ir::Attribute::of_float(0.3f);
  if (!q.perm.empty()) node->attributes["q_perm"] = ir::Attribute::of_ints(q.perm);
  if (!k.perm.empty()) node->attributes["kt_perm"] = ir::Attribute::of_ints(k.perm);
  if (!v.perm.empty()) node->attributes["v_perm"] = ir::Attribute::of_ints(v.perm);
  if (!y_perm.empty()) node->attributes["y_perm"] = ir::Attribute::of_ints(y_perm);
  auto def = ops::resolve_op(ops::OpRegistry::global(), *node);
  ASSERT_TRUE(def.is_ok());
  const std::vector<const Tensor*> inputs(tensors, tensors + 6);
  auto want = ops::evaluate_node(*def.value(), *node, inputs);
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  y->type = ir::make_type(DType::kFloat, want.value()[0].shape());

  auto provider = providers::make_provider("cpu", {test_target()});
  ASSERT_TRUE(provider.is_ok()) << provider.status().to_string();
  ASSERT_TRUE(provider.value()->supports(*node).supported) << provider.value()->supports(*node).reason;
  providers::PlanContext context;
  providers::PlanEvidence evidence;
  providers::KernelBuild build{context, evidence};
  auto kernel = provider.value()->kernel_for(*node, build);
  ASSERT_TRUE(kernel.is_ok()) << kernel.status().to_string();
  Tensor got = Tensor::allocate(DType::kFloat, want.value()[0].shape());
  ops::KernelContext ctx(*node, inputs, {&got});
  ASSERT_TRUE(kernel.value()(ctx).is_ok());
  const Tensor& w = want.value()[0];
  for (int64_t i = 0; i < w.element_count(); ++i)
    ASSERT_NEAR(got.data<float>()[i], w.data<float>()[i], 1e-5 * (1 + std::abs(w.data<float>()[i]))) << "element " << i;
}

// Grouped-query layouts over a cache of `capacity` positions, Q [1, sequence, kv_heads, group,
// depth] (a decoder's projection) and Y written back in that layout:
//   group outer (the GGUF decoders'): Q read as [1, group, kv, sequence, depth], the cache
//     [1, kv, capacity, depth] broadcast over the group;
//   group inner: Q read as [1, kv, group, sequence, depth], the cache given as [1, kv, 1, capacity, depth].
void check_grouped_layout(bool group_outer, int64_t sequence, int64_t group, int64_t valid, int64_t depth = 16, int64_t capacity = 24) {
  SCOPED_TRACE(std::string(group_outer ? "group outer" : "group inner") + ", sequence " + std::to_string(sequence) + ", group " +
               std::to_string(group) + ", valid keys " + std::to_string(valid) + ", depth " + std::to_string(depth));
  const int64_t kv = 2;
  const std::vector<int64_t> cache = group_outer ? std::vector<int64_t>{1, kv, capacity, depth} : std::vector<int64_t>{1, kv, 1, capacity, depth};
  const std::vector<int64_t> q_perm = group_outer ? std::vector<int64_t>{0, 3, 2, 1, 4} : std::vector<int64_t>{0, 2, 3, 1, 4};
  Operand q{random_tensor(DType::kFloat, {1, sequence, kv, group, depth}, 1), q_perm};
  Operand k{random_tensor(DType::kFloat, cache, 2), group_outer ? std::vector<int64_t>{0, 1, 3, 2} : std::vector<int64_t>{0, 1, 2, 4, 3}};
  Operand v{random_tensor(DType::kFloat, cache, 3), {}};
  poison_beyond(k.tensor, valid, false);
  poison_beyond(v.tensor, valid, false);
  Tensor mask = Tensor::allocate(DType::kBool, {sequence, capacity});  // query i sits at position valid - sequence + i
  for (int64_t i = 0; i < sequence; ++i)
    for (int64_t j = 0; j < capacity; ++j) mask.data<bool>()[i * capacity + j] = j > valid - sequence + i;
  check(q, k, v, mask, Tensor::from_vector(DType::kInt64, {1}, std::vector<int64_t>{valid}), ops::inverse_permutation(q_perm));
}

TEST(AttentionCacheCpu, GroupedQueryLayoutsMatchTheReference) {
  for (bool group_outer : {true, false}) {
    check_grouped_layout(group_outer, 1, 4, 1);   // the first token
    check_grouped_layout(group_outer, 1, 4, 17);  // a token deep in the cache: the group's heads in one product
    check_grouped_layout(group_outer, 1, 1, 9);   // one query head per key head
    check_grouped_layout(group_outer, 5, 4, 5);   // a prompt
    check_grouped_layout(group_outer, 7, 2, 20);  // a prompt after cached tokens
    // A decoder's heads (depth 64 or 128): up to 16 query rows take few_row_attention.h's products,
    // over keys that end in a partial block of 8 (scores) and of 32 (values).
    check_grouped_layout(group_outer, 1, 4, 45, 64, 48);
    check_grouped_layout(group_outer, 1, 7, 3, 64, 48);
    check_grouped_layout(group_outer, 3, 4, 40, 128, 48);
    check_grouped_layout(group_outer, 5, 4, 33, 64, 48);  // 20 rows: sgemm
  }
}

TEST(AttentionCacheCpu, LengthPerBatchMatchesTheReference) {
  const int64_t batch = 2, heads = 3, queries = 4, depth = 8, capacity = 12;
  Operand q{random_tensor(DType::kFloat, {batch, heads, queries, depth}, 4), {}};
  Operand k{random_tensor(DType::kFloat, {batch, heads, capacity, depth}, 5), {0, 1, 3, 2}};
  Operand v{random_tensor(DType::kFloat, {batch, heads, capacity, 6}, 6), {}};
  const std::vector<int64_t> lengths = {9, 5};
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t j = lengths[static_cast<size_t>(b)]; j < capacity; ++j) {
        for (int64_t d = 0; d < depth; ++d) k.tensor.data<float>()[((b * heads + h) * capacity + j) * depth + d] = std::nanf("");
        for (int64_t d = 0; d < 6; ++d) v.tensor.data<float>()[((b * heads + h) * capacity + j) * 6 + d] = std::nanf("");
      }
  Tensor mask = Tensor::allocate(DType::kBool, {queries, capacity});
  for (int64_t i = 0; i < queries * capacity; ++i) mask.data<bool>()[i] = (i % capacity) == 2;  // one key masked
  check(q, k, v, mask, Tensor::from_vector(DType::kInt64, {batch}, lengths), {});
}

}  // namespace
}  // namespace kiln::testing
