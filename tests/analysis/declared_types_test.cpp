// Tests of the declared-type policy: shapes are hints that inference overrides, element types are
// facts, a model input's dims a contract.
#include <gtest/gtest.h>

#include "kiln/analysis/declared_types.h"

namespace kiln::analysis {
namespace {

ir::TensorType typed(const std::vector<ir::Dim>& dims) { return ir::TensorType{DType::kFloat, ir::Shape(dims)}; }

TEST(DeclaredTypes, ContradictedRankGivesWayToInference) {
  auto r = reconcile_declared(typed({1, ir::Dim::symbol("T"), 128}), typed({1, 1, 128, 2}), "v");
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_TRUE(r.value().contradicted);
  EXPECT_EQ(r.value().type.to_string(), "float[1,1,128,2]");
}

TEST(DeclaredTypes, ContradictedDimGivesWayToInference) {
  auto r = reconcile_declared(typed({0, 3, 4}), typed({1, 3, ir::Dim()}), "v");
  ASSERT_TRUE(r.is_ok());
  EXPECT_TRUE(r.value().contradicted);
  EXPECT_EQ(r.value().type.to_string(), "float[1,3,?]");
}

// A declared symbol names an unknown dim; a declared size or rank inference cannot confirm is not
// planned on.
TEST(DeclaredTypes, UnconfirmedDeclaredSizesAreNotUsed) {
  auto r = reconcile_declared(typed({ir::Dim::symbol("N"), 3, 4}), typed({ir::Dim(), 3, ir::Dim()}), "v");
  ASSERT_TRUE(r.is_ok());
  EXPECT_FALSE(r.value().contradicted);
  EXPECT_EQ(r.value().type.to_string(), "float[N,3,?]");
  auto rankless = reconcile_declared(typed({2}), ir::TensorType{DType::kFloat}, "v");
  ASSERT_TRUE(rankless.is_ok());
  EXPECT_FALSE(rankless.value().contradicted);
  EXPECT_EQ(rankless.value().type.to_string(), "float");
}

TEST(DeclaredTypes, ElementTypeIsAFact) {
  auto r = reconcile_declared(typed({2}), ir::make_type(DType::kInt64, {2}), "output 'v'");
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(r.status().message().find("output 'v' is declared float[2] but inferred int64[2]"), std::string::npos)
      << r.status().message();
}

TEST(DeclaredTypes, ContractRefusesAContradiction) {
  auto r = merge_types(typed({ir::Dim::symbol("N"), 3}), ir::make_type(DType::kFloat, {2, 5}), "input 'x'");
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(r.status().message().find("input 'x' is declared float[N,3] but given float[2,5] (dim 1 differs)"),
            std::string::npos)
      << r.status().message();
  auto fits = merge_types(typed({ir::Dim::symbol("N"), 3}), ir::make_type(DType::kFloat, {2, 3}), "input 'x'");
  ASSERT_TRUE(fits.is_ok());
  EXPECT_EQ(fits.value().to_string(), "float[2,3]");
}

TEST(DeclaredTypes, WithinDropsSizesTheCoveringTypeDoesNotPin) {
  EXPECT_EQ(within(typed({0, 3, 4}), typed({ir::Dim(), 3, 4})).to_string(), "float[?,3,4]");
  EXPECT_EQ(within(typed({0, 3, 4}), typed({ir::Dim::symbol("N"), 3, 4})).to_string(), "float[0,3,4]");
  EXPECT_EQ(within(typed({0, 3, 4}), typed({3, 4})).to_string(), "float");
}

TEST(DeclaredTypes, KeepsDeclaredShapeComparesStaticDims) {
  EXPECT_TRUE(keeps_declared_shape(typed({ir::Dim::symbol("N"), 3}), typed({ir::Dim(), 3})));
  EXPECT_FALSE(keeps_declared_shape(typed({0, 3}), typed({ir::Dim(), 3})));
  EXPECT_FALSE(keeps_declared_shape(typed({0, 3}), ir::TensorType{DType::kFloat}));
  EXPECT_TRUE(keeps_declared_shape(ir::TensorType{DType::kFloat}, typed({2})));
}

}  // namespace
}  // namespace kiln::analysis
