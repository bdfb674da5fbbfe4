// Tests of the string ops: StringNormalizer (stopwords, locale-free case mapping checked against
// Python 3's str.upper/str.lower, which agree for these one-to-one mappings) and TfIdfVectorizer
// (hand-counted n-grams, including the example in the ONNX operator doc), and opset 20's
// StringConcat, StringSplit (ONNX Runtime's splitting, whose outputs the opset-parity cases compare
// with) and RegexFullMatch (RE2 syntax; a bad pattern is the model's error).
#include <gtest/gtest.h>

#include "ops/rule_harness.h"

namespace kiln::ops {
namespace {

using namespace testing;

Tensor strings(std::vector<int64_t> shape, const std::vector<std::string>& v) {
  return Tensor::from_vector<std::string>(DType::kString, std::move(shape), v);
}
ir::Attribute string_list(std::vector<std::string> v) {
  ir::Attribute a;
  a.kind = ir::Attribute::Kind::kStrings;
  a.strings = std::move(v);
  return a;
}

TEST(StringNormalizer, CaseMappingBeyondAscii) {
  // Python: "Ça été".upper() == "ÇA ÉTÉ", "ğüş".upper() == "ĞÜŞ", "αβγ ж".upper() == "ΑΒΓ Ж", "ÿ".upper() == "Ÿ".
  Tensor x = strings({5}, {"Ça été", "ğüş", "αβγ ж", "ÿ", "Straße"});
  Tensor up = eval("StringNormalizer", {&x}, {{"case_change_action", str("UPPER")}}, 10)[0];
  // 'ß' has no one-character upper case and stays (Python gives "STRASSE").
  EXPECT_EQ(elements<std::string>(up), (std::vector<std::string>{"ÇA ÉTÉ", "ĞÜŞ", "ΑΒΓ Ж", "Ÿ", "STRAßE"}));
  Tensor down = eval("StringNormalizer", {&up}, {{"case_change_action", str("LOWER")}}, 10)[0];
  EXPECT_EQ(elements<std::string>(down), (std::vector<std::string>{"ça été", "ğüş", "αβγ ж", "ÿ", "straße"}));
  // Bytes that are not UTF-8 pass through unchanged.
  Tensor bad = strings({1}, {"\xff" "A\xc3"});
  EXPECT_EQ(elements<std::string>(eval("StringNormalizer", {&bad}, {{"case_change_action", str("LOWER")}}, 10)[0]),
            (std::vector<std::string>{"\xff" "a\xc3"}));
}

TEST(StringNormalizer, StopwordsAndEmptyOutput) {
  Tensor x = strings({1, 3}, {"Monday", "tuesday", "MONDAY"});
  const Attrs insensitive{{"stopwords", string_list({"monday"})}};
  Tensor y = eval("StringNormalizer", {&x}, insensitive, 10)[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(elements<std::string>(y), (std::vector<std::string>{"tuesday"}));
  const Attrs sensitive{{"stopwords", string_list({"MONDAY"})}, {"is_case_sensitive", int_attr(1)}};
  EXPECT_EQ(elements<std::string>(eval("StringNormalizer", {&x}, sensitive, 10)[0]),
            (std::vector<std::string>{"Monday", "tuesday"}));
  Tensor all = strings({1, 2}, {"monday", "Monday"});
  Tensor empty = eval("StringNormalizer", {&all}, insensitive, 10)[0];
  EXPECT_EQ(empty.shape(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(elements<std::string>(empty), (std::vector<std::string>{""}));
}

TEST(StringNormalizer, ShapeRules) {
  EXPECT_EQ(rule_type("StringNormalizer", {RuleInput{ir::make_type(DType::kString, {1, 4})}}, {}, 10).to_string(),
            "string[1,?]");
  EXPECT_NE(rule_error("StringNormalizer", {RuleInput{ir::make_type(DType::kString, {2, 4})}}, {}, 10)
                .find("node_under_test"),
            std::string::npos);
  EXPECT_NE(rule_error("StringNormalizer", {RuleInput{ir::make_type(DType::kString, {4})}},
                       {{"case_change_action", str("TITLE")}}, 10)
                .find("case_change_action"),
            std::string::npos);
  EXPECT_NE(rule_error("StringNormalizer", {RuleInput{ir::make_type(DType::kInt64, {4})}}, {}, 10).find("element type"),
            std::string::npos);
}

// The operator doc's pool: Y[0] counts [17, 36] and Y[1] counts [94, 17].
Attrs doc_pool(const std::string& mode, int64_t skip) {
  return {{"mode", str(mode)},         {"min_gram_length", int_attr(2)},   {"max_gram_length", int_attr(2)},
          {"max_skip_count", int_attr(skip)}, {"ngram_counts", ints({0, 0})}, {"ngram_indexes", ints({1, 0})},
          {"pool_int64s", ints({94, 17, 17, 36})}};
}

TEST(TfIdfVectorizer, BigramsWithSkips) {
  // Bigrams of [94, 17, 36, 17, 36]: skip 0 gives (94,17) (17,36) (36,17) (17,36);
  // skip 1 adds (94,36) (17,17) (36,36), none in the pool; skip 2 adds (94,17) and (17,36).
  Tensor x = Tensor::from_vector<int32_t>(DType::kInt32, {5}, {94, 17, 36, 17, 36});
  EXPECT_EQ(elements<float>(eval("TfIdfVectorizer", {&x}, doc_pool("TF", 0), 9)[0]), (std::vector<float>{2, 1}));
  EXPECT_EQ(elements<float>(eval("TfIdfVectorizer", {&x}, doc_pool("TF", 2), 9)[0]), (std::vector<float>{3, 2}));
  Attrs idf = doc_pool("IDF", 0), tfidf = doc_pool("TFIDF", 0);
  idf["weights"] = tfidf["weights"] = ir::Attribute::of_floats({0.5f, 3.0f});
  EXPECT_EQ(elements<float>(eval("TfIdfVectorizer", {&x}, idf, 9)[0]), (std::vector<float>{0.5f, 3}));
  EXPECT_EQ(elements<float>(eval("TfIdfVectorizer", {&x}, tfidf, 9)[0]), (std::vector<float>{1, 3}));
}

TEST(TfIdfVectorizer, StringPoolRowByRow) {
  // Columns: "a", "c", ("a", "b"). Row 0 has a twice and one (a, b); row 1 has a, c and (a, b).
  ir::Attribute pool = string_list({"a", "c", "a", "b"});
  const Attrs attrs{{"mode", str("TF")},          {"min_gram_length", int_attr(1)}, {"max_gram_length", int_attr(2)},
                    {"max_skip_count", int_attr(0)}, {"ngram_counts", ints({0, 2})},   {"ngram_indexes", ints({0, 1, 2})},
                    {"pool_strings", pool}};
  Tensor x = strings({2, 3}, {"a", "b", "a", "c", "a", "b"});
  Tensor y = eval("TfIdfVectorizer", {&x}, attrs, 9)[0];
  EXPECT_EQ(y.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(elements<float>(y), (std::vector<float>{2, 0, 1, 1, 1, 1}));
  EXPECT_EQ(rule_type("TfIdfVectorizer", {RuleInput{typed(DType::kString, {ir::Dim::symbol("N"), 7})}}, attrs, 9)
                .to_string(),
            "float[N,3]");
  EXPECT_NE(rule_error("TfIdfVectorizer", {RuleInput{ir::make_type(DType::kInt64, {3})}}, attrs, 9).find("element type"),
            std::string::npos);
}

TEST(TfIdfVectorizer, InvalidAttributes) {
  const RuleInput x{ir::make_type(DType::kInt64, {5})};
  EXPECT_NE(rule_error("TfIdfVectorizer", {x}, doc_pool("BM25", 0), 9).find("mode"), std::string::npos);
  Attrs short_indexes = doc_pool("TF", 0);
  short_indexes["ngram_indexes"] = ints({0});
  EXPECT_NE(rule_error("TfIdfVectorizer", {x}, short_indexes, 9).find("ngram_indexes"), std::string::npos);
  Attrs two_pools = doc_pool("TF", 0);
  two_pools["pool_strings"] = string_list({"a"});
  EXPECT_NE(rule_error("TfIdfVectorizer", {x}, two_pools, 9).find("exactly one"), std::string::npos);
  Attrs ragged = doc_pool("TF", 0);
  ragged["pool_int64s"] = ints({94, 17, 17});
  EXPECT_NE(rule_error("TfIdfVectorizer", {x}, ragged, 9).find("node_under_test"), std::string::npos);
}

TEST(StringConcat, BroadcastsLikeNumpy) {
  Tensor x = strings({2, 1}, {"a", ""});
  Tensor y = strings({3}, {"1", "\xc3\xa9", ""});
  Tensor z = eval("StringConcat", {&x, &y}, {}, 20)[0];
  EXPECT_EQ(z.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(elements<std::string>(z), (std::vector<std::string>{"a1", "a\xc3\xa9", "a", "1", "\xc3\xa9", ""}));
  EXPECT_EQ(rule_type("StringConcat", {RuleInput{typed(DType::kString, {ir::Dim::symbol("N"), 1})},
                                       RuleInput{ir::make_type(DType::kString, {4})}}, {}, 20).to_string(),
            "string[N,4]");
  EXPECT_NE(rule_error("StringConcat", {RuleInput{ir::make_type(DType::kString, {2})},
                                        RuleInput{ir::make_type(DType::kString, {3})}}, {}, 20).find("broadcast"),
            std::string::npos);
  EXPECT_NE(rule_error("StringConcat", {RuleInput{ir::make_type(DType::kString, {2})},
                                        RuleInput{ir::make_type(DType::kFloat, {2})}}, {}, 20).find("element type"),
            std::string::npos);
}

TEST(StringSplit, DelimiterAndMaxsplit) {
  Tensor x = strings({2, 2}, {"a,b,,c", "", ",", "x"});
  std::vector<Tensor> out = eval("StringSplit", {&x}, {{"delimiter", str(",")}}, 20, 2);
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{2, 2, 4}));
  EXPECT_EQ(elements<std::string>(out[0]),
            (std::vector<std::string>{"a", "b", "", "c", "", "", "", "", "", "", "", "", "x", "", "", ""}));
  EXPECT_EQ(elements<int64_t>(out[1]), (std::vector<int64_t>{4, 0, 2, 1}));
  Tensor y = strings({2}, {"a--b--c", "-a--"});
  out = eval("StringSplit", {&y}, {{"delimiter", str("--")}, {"maxsplit", int_attr(1)}}, 20, 2);
  EXPECT_EQ(elements<std::string>(out[0]), (std::vector<std::string>{"a", "b--c", "-a", ""}));
  EXPECT_EQ(elements<int64_t>(out[1]), (std::vector<int64_t>{2, 2}));
}

TEST(StringSplit, RunsOfSpacesWithoutDelimiter) {
  Tensor x = strings({4}, {"  two  words ", "   ", "tab\tstays", " a b c  "});
  std::vector<Tensor> out = eval("StringSplit", {&x}, {}, 20, 2);
  EXPECT_EQ(out[0].shape(), (std::vector<int64_t>{4, 3}));
  EXPECT_EQ(elements<std::string>(out[0]),
            (std::vector<std::string>{"two", "words", "", "", "", "", "tab\tstays", "", "", "a", "b", "c"}));
  EXPECT_EQ(elements<int64_t>(out[1]), (std::vector<int64_t>{2, 0, 1, 3}));
  out = eval("StringSplit", {&x}, {{"maxsplit", int_attr(1)}}, 20, 2);
  EXPECT_EQ(elements<std::string>(out[0]),
            (std::vector<std::string>{"two", "words", "", "", "tab\tstays", "", "a", "b c"}));
  // The last dim is known only from the value; the counts have the input's shape.
  const RuleInput symbolic{typed(DType::kString, {ir::Dim::symbol("N")})};
  Result<RuleResult> rule = run_rule("StringSplit", {symbolic}, {}, 20, 2);
  ASSERT_TRUE(rule.is_ok()) << rule.status().to_string();
  EXPECT_EQ(rule->types[0].to_string(), "string[N,?]");
  EXPECT_EQ(rule->types[1].to_string(), "int64[N]");
}

TEST(RegexFullMatch, MatchesWholeStringsInRe2Syntax) {
  Tensor x = strings({2, 2}, {"abc", "abcd", "ABC", "\xe6\x97\xa5\xe6\x9c\xac"});
  EXPECT_EQ(elements<bool>(eval("RegexFullMatch", {&x}, {{"pattern", str("[a-c]+")}}, 20)[0]),
            (std::vector<bool>{true, false, false, false}));
  EXPECT_EQ(elements<bool>(eval("RegexFullMatch", {&x}, {{"pattern", str("(?i)abc|\\p{Han}+")}}, 20)[0]),
            (std::vector<bool>{true, false, true, true}));
  const RuleInput any{ir::make_type(DType::kString, {2})};
  // A backreference is Perl's, not RE2's: the model's error, naming the node and RE2's reason.
  const std::string bad = rule_error("RegexFullMatch", {any}, {{"pattern", str("(a)\\1")}}, 20);
  EXPECT_NE(bad.find("node_under_test"), std::string::npos) << bad;
  EXPECT_NE(bad.find("not an RE2 regular expression"), std::string::npos) << bad;
  EXPECT_NE(rule_error("RegexFullMatch", {any}, {}, 20).find("'pattern' is required"), std::string::npos);
}

}  // namespace
}  // namespace kiln::ops
