// Tests of the sequence and optional ops through evaluate_node_values: construction, insertion and
// erasure at negative positions, splitting and concatenation, optionals, and named errors.
// Expected values worked out by hand.
#include <gtest/gtest.h>

#include "kiln/ops/evaluate.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {
namespace {

Tensor floats(std::vector<int64_t> shape, std::vector<float> v) { return Tensor::from_vector<float>(DType::kFloat, shape, v); }
Tensor index(int64_t i) { return Tensor::from_vector<int64_t>(DType::kInt64, {}, {i}); }
std::vector<float> values(const Tensor& t) { return {t.data<float>(), t.data<float>() + t.element_count()}; }

Result<std::vector<Value>> run(const std::string& op, const std::vector<const Value*>& inputs,
                               std::map<std::string, ir::Attribute> attributes = {}, size_t outputs = 1) {
  ir::Graph g;
  std::vector<ir::Value*> ins, outs;
  for (size_t i = 0; i < inputs.size(); ++i) ins.push_back(inputs[i] ? g.add_value("in" + std::to_string(i)) : nullptr);
  for (size_t i = 0; i < outputs; ++i) outs.push_back(g.add_value("out" + std::to_string(i)));
  ir::Node* node = g.add_node(op, ins, outs, "node_" + op, "", 17);
  node->attributes = std::move(attributes);
  KILN_ASSIGN_OR_RETURN(const OpDef* def, resolve_op(OpRegistry::global(), *node));
  return evaluate_node_values(*def, *node, inputs);
}

TEST(Sequence, ConstructInsertEraseAtLength) {
  const Value a = floats({1}, {1}), b = floats({1}, {2}), c = floats({1}, {3});
  auto seq = run("SequenceConstruct", {&a, &b});
  ASSERT_TRUE(seq.is_ok()) << seq.status().to_string();
  const Value front = index(0), minus_one = index(-1);
  auto inserted = run("SequenceInsert", {&seq.value()[0], &c, &front});  // [3, 1, 2]
  ASSERT_TRUE(inserted.is_ok()) << inserted.status().to_string();
  auto erased = run("SequenceErase", {&inserted.value()[0], &minus_one});  // [3, 1]
  ASSERT_TRUE(erased.is_ok());
  auto last = run("SequenceAt", {&erased.value()[0], &minus_one});
  ASSERT_TRUE(last.is_ok());
  EXPECT_EQ(values(last.value()[0].tensor()), std::vector<float>{1});
  auto length = run("SequenceLength", {&erased.value()[0]});
  ASSERT_TRUE(length.is_ok());
  EXPECT_EQ(length.value()[0].tensor().data<int64_t>()[0], 2);

  const Value far = index(5);
  auto bad = run("SequenceAt", {&erased.value()[0], &far});
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("SequenceAt 'node_SequenceAt'"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("out of range"), std::string::npos);
}

TEST(Sequence, SplitThenConcatRoundTrips) {
  const Value x = floats({2, 3}, {1, 2, 3, 4, 5, 6});
  const Value two = Tensor::from_vector<int64_t>(DType::kInt64, {}, {2});
  auto parts = run("SplitToSequence", {&x, &two}, {{"axis", ir::Attribute::of_int(1)}});  // [2x2, 2x1]
  ASSERT_TRUE(parts.is_ok()) << parts.status().to_string();
  ASSERT_EQ(parts.value()[0].elements().size(), 2u);
  EXPECT_EQ(values(parts.value()[0].elements()[1]), (std::vector<float>{3, 6}));
  auto joined = run("ConcatFromSequence", {&parts.value()[0]}, {{"axis", ir::Attribute::of_int(1)}});
  ASSERT_TRUE(joined.is_ok()) << joined.status().to_string();
  EXPECT_EQ(values(joined.value()[0].tensor()), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  auto stacked = run("ConcatFromSequence", {&parts.value()[0]},
                     {{"axis", ir::Attribute::of_int(0)}, {"new_axis", ir::Attribute::of_int(1)}});
  EXPECT_FALSE(stacked.is_ok());  // 2x2 and 2x1 cannot be stacked
}

TEST(Sequence, OptionalsHoldOrLackAValue) {
  const Value x = floats({2}, {7, 8});
  auto full = run("Optional", {&x});
  ASSERT_TRUE(full.is_ok()) << full.status().to_string();
  const Value empty = Value::empty_optional();
  auto has_full = run("OptionalHasElement", {&full.value()[0]});
  auto has_empty = run("OptionalHasElement", {&empty});
  ASSERT_TRUE(has_full.is_ok() && has_empty.is_ok());
  EXPECT_TRUE(has_full.value()[0].tensor().data<bool>()[0]);
  EXPECT_FALSE(has_empty.value()[0].tensor().data<bool>()[0]);
  auto got = run("OptionalGetElement", {&full.value()[0]});
  ASSERT_TRUE(got.is_ok());
  EXPECT_EQ(values(got.value()[0].tensor()), (std::vector<float>{7, 8}));
  EXPECT_FALSE(run("OptionalGetElement", {&empty}).is_ok());
}

}  // namespace
}  // namespace kiln::ops
