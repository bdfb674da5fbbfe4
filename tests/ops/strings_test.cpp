// Tests of StringNormalizer: stop words with and without case sensitivity, UTF-8 casing beyond
// ASCII without any installed locale, and the [1]/[1,1] empty results. Expected strings by hand.
#include <gtest/gtest.h>

#include "kiln/ops/evaluate.h"

namespace kiln::ops {
namespace {

using A = ir::Attribute;

std::vector<std::string> run(const Tensor& x, std::map<std::string, A> attrs) {
  auto r = evaluate_op("StringNormalizer", {&x}, attrs, 10);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  if (!r.is_ok()) return {};
  const Tensor& y = r.value()[0];
  return {y.data<std::string>(), y.data<std::string>() + y.element_count()};
}

A strings(std::vector<std::string> v) {
  A a;
  a.kind = A::Kind::kStrings;
  a.strings = std::move(v);
  return a;
}

TEST(StringNormalizer, StopWordsAndCasing) {
  const Tensor x = Tensor::from_vector<std::string>(DType::kString, {3}, {"Monday", "tuesday", "Ärger"});
  EXPECT_EQ(run(x, {{"stopwords", strings({"monday"})}, {"case_change_action", A::of_string("UPPER")}}),
            (std::vector<std::string>{"TUESDAY", "ÄRGER"}));
  EXPECT_EQ(run(x, {{"stopwords", strings({"monday"})}, {"is_case_sensitive", A::of_int(1)}}),
            (std::vector<std::string>{"Monday", "tuesday", "Ärger"}));
  EXPECT_EQ(run(x, {{"case_change_action", A::of_string("LOWER")}}),
            (std::vector<std::string>{"monday", "tuesday", "ärger"}));
}

TEST(StringNormalizer, EverythingDroppedGivesOneEmptyString) {
  const Tensor x = Tensor::from_vector<std::string>(DType::kString, {1, 2}, {"a", "A"});
  auto r = evaluate_op("StringNormalizer", {&x}, {{"stopwords", strings({"a"})}}, 10);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r.value()[0].shape(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(r.value()[0].data<std::string>()[0], "");
}

TEST(StringNormalizer, BadActionIsNamed) {
  const Tensor x = Tensor::from_vector<std::string>(DType::kString, {1}, {"a"});
  auto r = evaluate_op("StringNormalizer", {&x}, {{"case_change_action", A::of_string("TITLE")}}, 10);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(r.status().message().find("TITLE"), std::string::npos);
}

}  // namespace
}  // namespace kiln::ops
