// Tests of the data movement ops: rules with symbolic dims and value-driven shapes, error cases,
// and kernel values (hand-computed; numpy equivalents noted where they help).
#include <gtest/gtest.h>

#include "ops/rule_harness.h"

namespace kiln::ops {
namespace {

using namespace testing;
const ir::Dim kBatch = ir::Dim::symbol("batch");
const ir::Dim kSeq = ir::Dim::symbol("seq");

TEST(DataMovement, TransposeKeepsSymbolsAndMovesElements) {
  EXPECT_EQ(rule_type("Transpose", {RuleInput{typed(DType::kFloat, {kBatch, kSeq, 12, 64})}}, {{"perm", ints({0, 2, 1, 3})}})
                .to_string(),
            "float[batch,12,seq,64]");
  // np.arange(6).reshape(2, 3).T
  Tensor x = iota_f32({2, 3});
  Tensor y = eval("Transpose", {&x})[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(elements<float>(y), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_NE(rule_error("Transpose", {RuleInput{ir::make_type(DType::kFloat, {2, 3})}}, {{"perm", ints({0, 0})}}).find("perm"),
            std::string::npos);
}

TEST(DataMovement, TransposeMovesStrings) {
  Tensor s = Tensor::from_vector<std::string>(DType::kString, {2, 2}, {"a", "b", "c", "d"});
  EXPECT_EQ(elements<std::string>(eval("Transpose", {&s})[0]), (std::vector<std::string>{"a", "c", "b", "d"}));
}

TEST(DataMovement, ConcatRuleAndKernel) {
  EXPECT_EQ(rule_type("Concat", {RuleInput{typed(DType::kFloat, {kBatch, 2})}, RuleInput{typed(DType::kFloat, {kBatch, 3})}},
                      {{"axis", int_attr(1)}})
                .to_string(),
            "float[batch,5]");
  EXPECT_EQ(rule_type("Concat", {RuleInput{typed(DType::kFloat, {kBatch, 2})}, RuleInput{typed(DType::kFloat, {3, 2})}},
                      {{"axis", int_attr(0)}})
                .to_string(),
            "float[?,2]");
  // np.concatenate([[[0,1],[2,3]], [[10],[11]]], axis=1)
  Tensor a = iota_f32({2, 2});
  Tensor b = f32({2, 1}, {10, 11});
  EXPECT_EQ(elements<float>(eval("Concat", {&a, &b}, {{"axis", int_attr(-1)}})[0]), (std::vector<float>{0, 1, 10, 2, 3, 11}));
  EXPECT_NE(rule_error("Concat", {RuleInput{ir::make_type(DType::kFloat, {2, 2})}, RuleInput{ir::make_type(DType::kFloat, {3, 3})}},
                       {{"axis", int_attr(0)}})
                .find("disagree"),
            std::string::npos);
}

TEST(DataMovement, ConcatBuildsShapeVectors) {
  Tensor a = i64({-1});
  Tensor b = i64({12, 64});
  EXPECT_EQ(elements<int64_t>(eval("Concat", {&a, &b}, {{"axis", int_attr(0)}})[0]), (std::vector<int64_t>{-1, 12, 64}));
}

TEST(DataMovement, SplitEqualAndExplicit) {
  Tensor x = iota_f32({6});
  std::vector<Tensor> eq = eval("Split", {&x}, {}, 13, 3);
  EXPECT_EQ(elements<float>(eq[2]), (std::vector<float>{4, 5}));
  Tensor sizes = i64({1, 5});
  std::vector<Tensor> ex = eval("Split", {&x, &sizes}, {}, 13, 2);
  EXPECT_EQ(elements<float>(ex[1]), (std::vector<float>{1, 2, 3, 4, 5}));
  std::vector<Tensor> old = eval("Split", {&x}, {{"split", ints({4, 2})}}, 11, 2);
  EXPECT_EQ(elements<float>(old[0]), (std::vector<float>{0, 1, 2, 3}));
  Result<RuleResult> r = run_rule("Split", {RuleInput{typed(DType::kFloat, {kBatch, 6})}}, {{"axis", int_attr(1)}}, 13, 2);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->types[1].to_string(), "float[batch,3]");
  EXPECT_FALSE(run_rule("Split", {RuleInput{ir::make_type(DType::kFloat, {7})}}, {}, 13, 2).is_ok());
}

TEST(DataMovement, SliceClampsAndStepsBackwards) {
  // x = np.arange(10); x[8:2:-2] == [8, 6, 4]; x[-3:100] == [7, 8, 9]
  Tensor x = iota_f32({10});
  Tensor s1 = i64({8}), e1 = i64({2}), a1 = i64({0}), st1 = i64({-2});
  EXPECT_EQ(elements<float>(eval("Slice", {&x, &s1, &e1, &a1, &st1})[0]), (std::vector<float>{8, 6, 4}));
  Tensor s2 = i64({-3}), e2 = i64({100});
  EXPECT_EQ(elements<float>(eval("Slice", {&x, &s2, &e2})[0]), (std::vector<float>{7, 8, 9}));
  // Opset 1 attributes: np.arange(12).reshape(3, 4)[:, 1:3]
  Tensor m = iota_f32({3, 4});
  Tensor y = eval("Slice", {&m}, {{"starts", ints({1})}, {"ends", ints({3})}, {"axes", ints({1})}}, 1)[0];
  EXPECT_EQ(elements<float>(y), (std::vector<float>{1, 2, 5, 6, 9, 10}));
}

TEST(DataMovement, SliceRuleWithSymbolsAndUnknownStarts) {
  Tensor starts = i64({0}), ends = i64({INT64_MAX}), axes = i64({1});
  EXPECT_EQ(rule_type("Slice", {RuleInput{typed(DType::kFloat, {kBatch, kSeq, 8})}, known(starts), known(ends), known(axes)})
                .to_string(),
            "float[batch,seq,8]");
  Tensor last = i64({-1});
  Tensor axis2 = i64({2});
  EXPECT_EQ(rule_type("Slice", {RuleInput{typed(DType::kFloat, {kBatch, kSeq, 8})}, known(last), known(ends), known(axis2)})
                .to_string(),
            "float[batch,seq,1]");
  const ir::TensorType vec = ir::make_type(DType::kInt64, {1});
  EXPECT_EQ(rule_type("Slice", {RuleInput{typed(DType::kFloat, {kBatch, kSeq, 8})}, RuleInput{vec}, RuleInput{vec}, known(axis2)})
                .to_string(),
            "float[batch,seq,?]");
  Tensor zero_step = i64({0});
  EXPECT_NE(rule_error("Slice", {RuleInput{ir::make_type(DType::kFloat, {4})}, known(starts), known(ends), std::nullopt, known(zero_step)})
                .find("steps"),
            std::string::npos);
}

TEST(DataMovement, GatherOnShapeVectorsAndMatrices) {
  // The shape-chain idiom: Gather(shape, 0) gives a scalar.
  Tensor shape = i64({2, 7, 768});
  Tensor zero = i64({}, {0});
  Tensor g = eval("Gather", {&shape, &zero})[0];
  EXPECT_TRUE(g.shape().empty());
  EXPECT_EQ(g.data<int64_t>()[0], 2);
  // np.take(np.arange(6).reshape(2, 3), [[2, -3]], axis=1)
  Tensor x = iota_f32({2, 3});
  Tensor idx = i64({1, 2}, {2, -3});
  Tensor y = eval("Gather", {&x, &idx}, {{"axis", int_attr(1)}})[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 1, 2}));
  EXPECT_EQ(elements<float>(y), (std::vector<float>{2, 0, 5, 3}));
  EXPECT_EQ(rule_type("Gather", {RuleInput{typed(DType::kFloat, {30522, 768})}, RuleInput{typed(DType::kInt64, {kBatch, kSeq})}})
                .to_string(),
            "float[batch,seq,768]");
  Tensor bad = i64({}, {3});
  EXPECT_FALSE(evaluate_op("Gather", {&x, &bad}).is_ok());
}

TEST(DataMovement, GatherElementsAndGatherNd) {
  // np.take_along_axis([[1,2],[3,4]], [[0,0],[1,0]], axis=1) == [[1,1],[4,3]]
  Tensor x = f32({2, 2}, {1, 2, 3, 4});
  Tensor idx = i64({2, 2}, {0, 0, 1, 0});
  EXPECT_EQ(elements<float>(eval("GatherElements", {&x, &idx}, {{"axis", int_attr(1)}})[0]), (std::vector<float>{1, 1, 4, 3}));
  // GatherND: x[[0,1]], x[[1,0]] == [2, 3]
  Tensor nd = i64({2, 2}, {0, 1, 1, 0});
  EXPECT_EQ(elements<float>(eval("GatherND", {&x, &nd})[0]), (std::vector<float>{2, 3}));
  // batch_dims=1: row b picks x[b, idx[b]] -> [x[0,1], x[1,0]] == [2, 3]
  Tensor bi = i64({2, 1}, {1, 0});
  EXPECT_EQ(elements<float>(eval("GatherND", {&x, &bi}, {{"batch_dims", int_attr(1)}})[0]), (std::vector<float>{2, 3}));
}

TEST(DataMovement, ScatterElementsAndNd) {
  // ONNX spec example: data zeros(3,3), indices [[1,0,2],[0,2,1]], updates [[1,1.1,1.2],[2,2.1,2.2]], axis 0.
  Tensor data = Tensor::allocate(DType::kFloat, {3, 3});
  Tensor idx = i64({2, 3}, {1, 0, 2, 0, 2, 1});
  Tensor upd = f32({2, 3}, {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f});
  EXPECT_EQ(elements<float>(eval("ScatterElements", {&data, &idx, &upd})[0]),
            (std::vector<float>{2.0f, 1.1f, 0.0f, 1.0f, 0.0f, 2.2f, 0.0f, 2.1f, 1.2f}));
  // ScatterND add: data [1,2,3,4], indices [[1],[1]], updates [10, 20] -> [1, 32, 3, 4]
  Tensor v = f32({4}, {1, 2, 3, 4});
  Tensor ni = i64({2, 1}, {1, 1});
  Tensor nu = f32({2}, {10, 20});
  EXPECT_EQ(elements<float>(eval("ScatterND", {&v, &ni, &nu}, {{"reduction", str("add")}}, 16)[0]),
            (std::vector<float>{1, 32, 3, 4}));
}

TEST(DataMovement, TileRuleAndKernel) {
  // np.tile([[1,2]], (2, 2))
  Tensor x = f32({1, 2}, {1, 2});
  Tensor reps = i64({2, 2});
  EXPECT_EQ(elements<float>(eval("Tile", {&x, &reps})[0]), (std::vector<float>{1, 2, 1, 2, 1, 2, 1, 2}));
  Tensor keep = i64({1, 3});
  EXPECT_EQ(rule_type("Tile", {RuleInput{typed(DType::kFloat, {kBatch, 2})}, known(keep)}).to_string(), "float[batch,6]");
  EXPECT_NE(rule_error("Tile", {RuleInput{ir::make_type(DType::kFloat, {2})}, known(reps)}).find("repeats"), std::string::npos);
}

TEST(DataMovement, PadModes) {
  // np.pad([1,2,3], (2,1), mode=...) for constant 9, reflect and edge.
  Tensor x = f32({3}, {1, 2, 3});
  Tensor pads = i64({2, 1});
  Tensor nine = f32({}, {9});
  EXPECT_EQ(elements<float>(eval("Pad", {&x, &pads, &nine})[0]), (std::vector<float>{9, 9, 1, 2, 3, 9}));
  EXPECT_EQ(elements<float>(eval("Pad", {&x, &pads}, {{"mode", str("reflect")}})[0]), (std::vector<float>{3, 2, 1, 2, 3, 2}));
  EXPECT_EQ(elements<float>(eval("Pad", {&x, &pads}, {{"mode", str("edge")}})[0]), (std::vector<float>{1, 1, 1, 2, 3, 3}));
  // Opset 2 attributes, negative pads crop: [1,2,3] with pads (-1, 1), value 5 -> [2, 3, 5]
  Tensor y = eval("Pad", {&x}, {{"pads", ints({-1, 1})}, {"value", ir::Attribute::of_float(5)}}, 2)[0];
  EXPECT_EQ(elements<float>(y), (std::vector<float>{2, 3, 5}));
  Tensor short_pads = i64({1});
  EXPECT_NE(rule_error("Pad", {RuleInput{ir::make_type(DType::kFloat, {3})}, known(short_pads)}).find("pads"), std::string::npos);
  EXPECT_EQ(rule_type("Pad", {RuleInput{typed(DType::kFloat, {kBatch, 3})}, known(i64({0, 1, 0, 1}))}).to_string(),
            "float[batch,5]");
}

// Opset 18 pads only the listed axes; opset 19 adds wrap.
TEST(DataMovement, PadAxesFromOpset18AndWrapFromOpset19) {
  Tensor x = iota_f32({2, 3});
  Tensor seven = f32({}, {7});
  Tensor rows = i64({1, 0}), first_axis = i64({0});
  EXPECT_EQ(elements<float>(eval("Pad", {&x, &rows, &seven, &first_axis}, {}, 18)[0]),
            (std::vector<float>{7, 7, 7, 0, 1, 2, 3, 4, 5}));
  // np.pad(np.arange(6).reshape(2, 3), ((0, 0), (2, 1)), mode='wrap')
  Tensor columns = i64({2, 1}), last_axis = i64({-1});
  EXPECT_EQ(elements<float>(eval("Pad", {&x, &columns, &seven, &last_axis}, {{"mode", str("wrap")}}, 19)[0]),
            (std::vector<float>{1, 2, 0, 1, 2, 0, 4, 5, 3, 4, 5, 3}));
  EXPECT_NE(rule_error("Pad", {RuleInput{ir::make_type(DType::kFloat, {2, 3})}, known(columns), std::nullopt, known(last_axis)},
                       {{"mode", str("wrap")}}, 18).find("wrap"), std::string::npos);
  EXPECT_NE(rule_error("Pad", {RuleInput{ir::make_type(DType::kFloat, {2, 3})}, known(i64({1, 1, 0, 0})), std::nullopt,
                               known(i64({1, 1}))}, {}, 18).find("repeated"), std::string::npos);
}

// Opset 18's num_outputs: equal parts of ceil(n / parts), the last one smaller.
TEST(DataMovement, SplitNumOutputsFromOpset18) {
  Tensor x = iota_f32({7});
  std::vector<Tensor> parts = eval("Split", {&x}, {{"num_outputs", int_attr(3)}}, 18, 3);
  EXPECT_EQ(elements<float>(parts[0]), (std::vector<float>{0, 1, 2}));
  EXPECT_EQ(elements<float>(parts[2]), (std::vector<float>{6}));
  EXPECT_FALSE(run_rule("Split", {RuleInput{ir::make_type(DType::kFloat, {7})}}, {{"num_outputs", int_attr(2)}}, 18, 3).is_ok());
  EXPECT_FALSE(run_rule("Split", {RuleInput{ir::make_type(DType::kFloat, {7})}}, {}, 13, 3).is_ok());
}

TEST(DataMovement, Trilu) {
  // np.triu(np.arange(1, 10).reshape(3, 3), k=1) and np.tril(..., k=-1)
  Tensor x = f32({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor k1 = i64({}, {1});
  EXPECT_EQ(elements<float>(eval("Trilu", {&x, &k1})[0]), (std::vector<float>{0, 2, 3, 0, 0, 6, 0, 0, 0}));
  Tensor km1 = i64({}, {-1});
  EXPECT_EQ(elements<float>(eval("Trilu", {&x, &km1}, {{"upper", int_attr(0)}})[0]), (std::vector<float>{0, 0, 0, 4, 0, 0, 7, 8, 0}));
}

TEST(DataMovement, DepthToSpaceAndBack) {
  // ONNX spec DCR example shape: [1, 8, 2, 3] blocksize 2 -> [1, 2, 4, 6]; SpaceToDepth inverts DCR.
  Tensor x = iota_f32({1, 8, 2, 3});
  Tensor y = eval("DepthToSpace", {&x}, {{"blocksize", int_attr(2)}})[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 2, 4, 6}));
  // First output row, numpy: x.reshape(1,2,2,2,2,3).transpose(0,3,4,1,5,2).reshape(1,2,4,6)[0,0,0]
  EXPECT_EQ(std::vector<float>(y.data<float>(), y.data<float>() + 6), (std::vector<float>{0, 12, 1, 13, 2, 14}));
  Tensor back = eval("SpaceToDepth", {&y}, {{"blocksize", int_attr(2)}})[0];
  EXPECT_EQ(elements<float>(back), elements<float>(x));
  // CRD, numpy: x.reshape(1,2,2,2,2,3).transpose(0,1,4,2,5,3).reshape(1,2,4,6)[0,0,0]
  Tensor crd = eval("DepthToSpace", {&x}, {{"blocksize", int_attr(2)}, {"mode", str("CRD")}})[0];
  EXPECT_EQ(std::vector<float>(crd.data<float>(), crd.data<float>() + 6), (std::vector<float>{0, 6, 1, 7, 2, 8}));
  EXPECT_FALSE(run_rule("DepthToSpace", {RuleInput{ir::make_type(DType::kFloat, {1, 6, 2, 2})}}, {{"blocksize", int_attr(2)}}).is_ok());
}

TEST(DataMovement, MissingRequiredInputIsInvalidModel) {
  const ir::TensorType x = ir::make_type(DType::kFloat, {2});
  EXPECT_NE(rule_error("Gather", {RuleInput{x}}).find("input 1 is required"), std::string::npos);
  EXPECT_NE(rule_error("Conv", {RuleInput{x}, std::nullopt}).find("node_under_test"), std::string::npos);
}

}  // namespace
}  // namespace kiln::ops
