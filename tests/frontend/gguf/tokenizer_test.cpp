// The GGUF tokenizers: llama.cpp's test vectors (models/ggml-vocab-<name>.gguf with .inp and .out,
// kept in $KILN_LLM_DIR/vocab) id for id and decoded back, the pre-tokenizers' word splitting,
// llama.cpp's stories260K.gguf, special tokens in the text, and hand-written vocabularies for each
// refusal: a missing or inconsistent key, an id out of range, a tokenizer or pre-tokenizer Kiln
// does not know, a bad id to decode.
#include "kiln/frontend/gguf/tokenizer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "kiln/frontend/gguf/pre_tokenizer.h"
#include "kiln/frontend/gguf/vocabulary.h"
#include "support/gguf_writer.h"

namespace kiln::frontend::gguf {
namespace {

using kiln::testing::GgufWriter;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::filesystem::path vocab_dir() {
  const char* llm_dir = std::getenv("KILN_LLM_DIR");
  const char* home = std::getenv("HOME");
  const std::filesystem::path base = llm_dir != nullptr ? std::filesystem::path(llm_dir)
                                                        : std::filesystem::path(home != nullptr ? home : "") / ".cache" / "kiln" / "llm";
  return base / "vocab";
}

std::string ids_text(const std::vector<int32_t>& ids) {
  std::string text;
  for (int32_t id : ids) text += (text.empty() ? "" : " ") + std::to_string(id);
  return "[" + text + "]";
}

struct TestString {
  std::string text;
  std::vector<int32_t> ids;
};

// test-tokenizer-0's format: .inp holds the strings, each ended by "\n__ggml_vocab_test__\n";
// .out one line of ids per string.
std::vector<TestString> read_test_strings(const std::string& inputs, const std::string& outputs) {
  std::vector<TestString> strings;
  const std::string separator = "\n__ggml_vocab_test__\n";
  for (size_t at = 0; at < inputs.size();) {
    const size_t end = inputs.find(separator, at);
    strings.push_back({inputs.substr(at, end == std::string::npos ? std::string::npos : end - at), {}});
    if (end == std::string::npos) break;
    at = end + separator.size();
  }
  std::istringstream lines(outputs);
  std::string line;
  for (TestString& string : strings) {
    if (!std::getline(lines, line)) break;
    std::istringstream ids(line);
    for (int32_t id; ids >> id;) string.ids.push_back(id);
  }
  return strings;
}

Result<std::unique_ptr<Tokenizer>> tokenizer_from(const std::string& bytes) {
  KILN_ASSIGN_OR_RETURN(GgufFile file, parse_gguf(bytes, "vocab.gguf"));
  return make_tokenizer(file);
}

class LlamaCppVocabulary : public ::testing::TestWithParam<std::string> {};

// As test-tokenizer-0 runs them: no BOS/EOS, special tokens not parsed.
TEST_P(LlamaCppVocabulary, TokenizesEveryTestStringAsLlamaCppDoesAndDecodesItBack) {
  const std::filesystem::path gguf = vocab_dir() / ("ggml-vocab-" + GetParam() + ".gguf");
  for (const std::filesystem::path& path : {gguf, std::filesystem::path(gguf.string() + ".inp"),
                                            std::filesystem::path(gguf.string() + ".out")}) {
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path << " (`make test` fetches it)";
  }
  const std::string bytes = read_file(gguf);
  const Result<std::unique_ptr<Tokenizer>> tokenizer = tokenizer_from(bytes);
  ASSERT_TRUE(tokenizer.is_ok()) << tokenizer.status().to_string();
  const std::vector<TestString> strings =
      read_test_strings(read_file(gguf.string() + ".inp"), read_file(gguf.string() + ".out"));
  ASSERT_GE(strings.size(), 30u);
  size_t matching = 0;
  size_t round_trips = 0;
  for (size_t i = 0; i < strings.size(); ++i) {
    const TestString& string = strings[i];
    const Result<std::vector<int32_t>> ids = (*tokenizer)->encode(string.text, false, false);
    ASSERT_TRUE(ids.is_ok()) << "string " << i << ": " << ids.status().to_string();
    EXPECT_EQ(*ids, string.ids) << "string " << i << " '" << string.text << "': expected " << ids_text(string.ids)
                                << ", got " << ids_text(*ids);
    matching += *ids == string.ids;
    // Decoding gives the text back wherever llama.cpp's own ids decode to it (not where the
    // decoder's clean-up of spaces changes it).
    const Result<std::string> expected_text = (*tokenizer)->decode(string.ids);
    ASSERT_TRUE(expected_text.is_ok()) << expected_text.status().to_string();
    if (*expected_text != string.text) continue;
    const Result<std::string> text = (*tokenizer)->decode(*ids);
    ASSERT_TRUE(text.is_ok()) << text.status().to_string();
    EXPECT_EQ(*text, string.text) << "string " << i << " does not decode back";
    ++round_trips;
  }
  RecordProperty("matching", std::to_string(matching) + "/" + std::to_string(strings.size()));
  std::cout << GetParam() << ": " << matching << "/" << strings.size() << " strings tokenized as llama.cpp does, "
            << round_trips << " decoded back\n";
  EXPECT_GE(round_trips, strings.size() / 2);
}

INSTANTIATE_TEST_SUITE_P(Vocabularies, LlamaCppVocabulary,
                         ::testing::Values("llama-spm", "phi-3", "llama-bpe", "qwen2", "qwen35", "gpt-2", "mpt",
                                           "starcoder", "refact", "command-r", "falcon", "deepseek-coder"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name) c = c == '-' ? '_' : c;
                           return name;
                         });

// llama.cpp's conversion of a trained model (tests/llm/README.md).
TEST(Tokenizer, EncodesAPromptForStories260KWithBos) {
  const std::filesystem::path path = std::filesystem::path(KILN_SOURCE_DIR) / "tests" / "llm" / "stories260K.gguf";
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is part of the repository";
  const std::string bytes = read_file(path);
  const Result<std::unique_ptr<Tokenizer>> tokenizer = tokenizer_from(bytes);
  ASSERT_TRUE(tokenizer.is_ok()) << tokenizer.status().to_string();
  EXPECT_TRUE((*tokenizer)->adds_bos());
  const Result<std::vector<int32_t>> ids = (*tokenizer)->encode("Once upon a time", true, false);
  ASSERT_TRUE(ids.is_ok()) << ids.status().to_string();
  EXPECT_EQ(*ids, (std::vector<int32_t>{1, 403, 407, 261, 378}));
  EXPECT_EQ(*(*tokenizer)->decode({403, 407, 261, 378}), "Once upon a time");
  EXPECT_EQ(*(*tokenizer)->token_piece(1), "<s>");
  EXPECT_EQ(*(*tokenizer)->token_piece(403), " Once");
}

// A small SentencePiece vocabulary, written key by key; `keys` adds or replaces keys after the
// token list. Tokens: <unk> <s> </s> ▁ a b ▁a ab ▁ab <0x21> <|user|> <ctl>.
struct SmallVocabulary {
  std::string model = "llama";
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "\xE2\x96\x81", "a", "b", "\xE2\x96\x81" "a", "ab",
                                     "\xE2\x96\x81" "ab", "<0x21>", "<|user|>", "<ctl>"};
  std::vector<float> scores = {0, 0, 0, -1, -2, -2, -1, -1, 0, 0, 0, 0};
  std::vector<int32_t> types = {2, 3, 3, 1, 1, 1, 1, 1, 1, 6, 4, 3};
  bool with_tokens = true;
  std::optional<uint32_t> bos = 1;
  std::optional<std::string> pre;
  std::vector<std::string> merges;

  std::string bytes() const {
    GgufWriter w;
    const uint64_t keys = 1 + (with_tokens ? 1 : 0) + 2 + (bos ? 1 : 0) + (pre ? 1 : 0) + (merges.empty() ? 0 : 1);
    w.header(3, 0, keys);
    w.key("tokenizer.ggml.model", 8).str(model);
    if (with_tokens) {
      w.key("tokenizer.ggml.tokens", 9).u32(8).u64(tokens.size());
      for (const std::string& token : tokens) w.str(token);
    }
    w.key("tokenizer.ggml.scores", 9).u32(6).u64(scores.size());
    for (float score : scores) w.f32(score);
    w.key("tokenizer.ggml.token_type", 9).u32(5).u64(types.size());
    for (int32_t type : types) w.i32(type);
    if (bos) w.key("tokenizer.ggml.bos_token_id", 4).u32(*bos);
    if (pre) w.key("tokenizer.ggml.pre", 8).str(*pre);
    if (!merges.empty()) {
      w.key("tokenizer.ggml.merges", 9).u32(8).u64(merges.size());
      for (const std::string& merge : merges) w.str(merge);
    }
    return w.bytes();
  }
};

Status status_of(const SmallVocabulary& vocabulary) { return tokenizer_from(vocabulary.bytes()).status(); }

TEST(Tokenizer, MergesBySpellsUnknownBytesAndMatchesSpecialTokens) {
  const std::string bytes = SmallVocabulary().bytes();
  const Result<std::unique_ptr<Tokenizer>> tokenizer = tokenizer_from(bytes);
  ASSERT_TRUE(tokenizer.is_ok()) << tokenizer.status().to_string();
  const Tokenizer& t = **tokenizer;
  // "▁ab" scores best; "!" is its byte token; "?" has none, so <unk>.
  EXPECT_EQ(*t.encode("ab!?", true, false), (std::vector<int32_t>{1, 8, 9, 0}));
  // User-defined tokens are always matched, control tokens only when asked; a space is put before
  // the text after a special token.
  EXPECT_EQ(*t.encode("a<|user|>b", false, false), (std::vector<int32_t>{6, 10, 3, 5}));
  EXPECT_EQ(*t.encode("<ctl>", false, true), (std::vector<int32_t>{11}));
  EXPECT_NE(*t.encode("<ctl>", false, false), (std::vector<int32_t>{11}));
  EXPECT_EQ(*t.decode({1, 8, 9, 6}), " ab! a");  // BOS first: its (empty) piece takes the strip
  EXPECT_EQ(*t.decode({8, 10, 11}), "ab<|user|>");
  EXPECT_EQ(*t.token_piece(11), "<ctl>");
}

TEST(Tokenizer, RefusesOutOfRangeIdsToDecodeNamingThem) {
  const std::string bytes = SmallVocabulary().bytes();
  const Result<std::unique_ptr<Tokenizer>> tokenizer = tokenizer_from(bytes);
  ASSERT_TRUE(tokenizer.is_ok());
  for (int32_t id : {12, -1}) {
    const Result<std::string> text = (*tokenizer)->decode({4, id});
    ASSERT_FALSE(text.is_ok());
    EXPECT_EQ(text.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(text.status().message().find("token id " + std::to_string(id)), std::string::npos)
        << text.status().message();
    EXPECT_EQ((*tokenizer)->token_piece(id).status().code(), StatusCode::kInvalidArgument);
  }
}

void expect_refused(const SmallVocabulary& vocabulary, StatusCode code, const std::string& named) {
  const Status status = status_of(vocabulary);
  ASSERT_FALSE(status.is_ok()) << "expected a refusal naming " << named;
  EXPECT_EQ(status.code(), code) << status.to_string();
  EXPECT_NE(status.message().find(named), std::string::npos) << status.to_string();
}

TEST(Tokenizer, RefusesBrokenVocabulariesNamingTheKey) {
  SmallVocabulary no_tokens;
  no_tokens.with_tokens = false;
  expect_refused(no_tokens, StatusCode::kInvalidModel, "tokenizer.ggml.tokens");

  SmallVocabulary short_scores;
  short_scores.scores.pop_back();
  expect_refused(short_scores, StatusCode::kInvalidModel, "tokenizer.ggml.scores");

  SmallVocabulary short_types;
  short_types.types.push_back(1);
  expect_refused(short_types, StatusCode::kInvalidModel, "tokenizer.ggml.token_type");

  SmallVocabulary bad_type;
  bad_type.types[4] = 9;
  expect_refused(bad_type, StatusCode::kInvalidModel, "tokenizer.ggml.token_type");

  SmallVocabulary bos_out_of_range;
  bos_out_of_range.bos = 12;
  expect_refused(bos_out_of_range, StatusCode::kInvalidModel, "tokenizer.ggml.bos_token_id");

  SmallVocabulary twice;
  twice.tokens[5] = "a";
  expect_refused(twice, StatusCode::kInvalidModel, "tokenizer.ggml.tokens");

  SmallVocabulary no_merges;
  no_merges.model = "gpt2";
  expect_refused(no_merges, StatusCode::kInvalidModel, "tokenizer.ggml.merges");

  SmallVocabulary bad_merge = no_merges;
  bad_merge.merges = {"a b", "ab"};
  expect_refused(bad_merge, StatusCode::kInvalidModel, "tokenizer.ggml.merges");
}

TEST(Tokenizer, RefusesTokenizersKilnDoesNotKnowNamingThem) {
  SmallVocabulary t5;
  t5.model = "t5";
  expect_refused(t5, StatusCode::kUnsupportedOperator, "'t5'");

  SmallVocabulary unknown_pre;
  unknown_pre.model = "gpt2";
  unknown_pre.merges = {"a b"};
  unknown_pre.pre = "no-such-pre";
  expect_refused(unknown_pre, StatusCode::kUnsupportedOperator, "'no-such-pre'");
}

// The tokenizer's hash covers every tokenizer.* entry and nothing else, whatever their order.
TEST(Tokenizer, HashNamesTheTokenizerAloneWhateverTheOrder) {
  const auto hash_of = [](const GgufFile& file) {
    const Result<std::string> hash = tokenizer_sha256(file);
    EXPECT_TRUE(hash.is_ok()) << hash.status().to_string();
    return hash.is_ok() ? *hash : std::string();
  };
  const Result<GgufFile> file = parse_gguf(SmallVocabulary().bytes(), "vocab.gguf");
  ASSERT_TRUE(file.is_ok()) << file.status().to_string();
  const std::string hash = hash_of(*file);
  EXPECT_EQ(hash.size(), 64u);

  GgufFile reordered = *file;
  std::reverse(reordered.metadata.begin(), reordered.metadata.end());
  MetadataValue name;
  name.type = ValueType::kString;
  name.string_value = "another model";
  reordered.metadata.push_back({"general.name", name});
  EXPECT_EQ(hash_of(reordered), hash) << "other keys and the order of the entries do not change it";

  SmallVocabulary renamed;
  renamed.tokens[7] = "ba";
  const Result<GgufFile> other = parse_gguf(renamed.bytes(), "vocab.gguf");
  ASSERT_TRUE(other.is_ok());
  EXPECT_NE(hash_of(*other), hash) << "a token's spelling does";
  SmallVocabulary rescored;
  rescored.scores[4] = -3;
  EXPECT_NE(hash_of(*parse_gguf(rescored.bytes(), "vocab.gguf")), hash) << "a score does";
}

// Byte-level BPE on a small vocabulary: words are cut by the pre-tokenizer, merged by rank.
TEST(Tokenizer, MergesBytePairsByRankWithinWords) {
  SmallVocabulary vocabulary;
  vocabulary.model = "gpt2";
  vocabulary.pre = "gpt-2";
  vocabulary.tokens = {"a", "b", "\xC4\xA0", "ab", "\xC4\xA0" "a", "\xC4\xA0" "ab", "<|endoftext|>"};
  vocabulary.scores = {0, 0, 0, 0, 0, 0, 0};
  vocabulary.types = {1, 1, 1, 1, 1, 1, 3};
  vocabulary.bos = 6;
  vocabulary.merges = {"a b", "\xC4\xA0 a", "\xC4\xA0" "a b"};
  const std::string bytes = vocabulary.bytes();
  const Result<std::unique_ptr<Tokenizer>> tokenizer = tokenizer_from(bytes);
  ASSERT_TRUE(tokenizer.is_ok()) << tokenizer.status().to_string();
  // "ab" merges first (rank 0), so " ab" is "Ġ" + "ab": "Ġa b" never applies.
  EXPECT_EQ(*(*tokenizer)->encode("ab ab ba", false, false), (std::vector<int32_t>{3, 2, 3, 2, 1, 0}));
  EXPECT_EQ(*(*tokenizer)->decode({3, 2, 3, 5}), "ab ab ab");
  EXPECT_FALSE((*tokenizer)->adds_bos());
  EXPECT_EQ(*(*tokenizer)->encode("a<|endoftext|>", false, true), (std::vector<int32_t>{0, 6}));
}

std::vector<std::string> words(const std::string& pre_tokenizer, const std::string& text) {
  const PreTokenizer* entry = find_pre_tokenizer(pre_tokenizer);
  EXPECT_NE(entry, nullptr) << pre_tokenizer;
  if (entry == nullptr) return {};
  Result<WordSplitter> splitter = WordSplitter::make(*entry);
  EXPECT_TRUE(splitter.is_ok()) << splitter.status().to_string();
  if (!splitter.is_ok()) return {};
  std::vector<std::string> split;
  for (std::string_view word : splitter->split(text)) split.emplace_back(word);
  return split;
}

// The word regexes, the hand-made \s+(?!\S) (a space run gives its last character to the next
// word unless it ends the text) and Unicode white space included.
TEST(PreTokenizer, CutsTextIntoWordsAsTheRegexesSay) {
  using Words = std::vector<std::string>;
  EXPECT_EQ(words("gpt-2", "Hello  world's\n\n"), (Words{"Hello", " ", " world", "'s", "\n\n"}));
  EXPECT_EQ(words("gpt-2", "a\xE3\x80\x80\xE3\x80\x80" "b"), (Words{"a", "\xE3\x80\x80", "\xE3\x80\x80", "b"}));
  EXPECT_EQ(words("llama-bpe", "    Hello\n\n 12345!!\n"), (Words{"   ", " Hello", "\n\n", " ", "123", "45", "!!\n"}));
  EXPECT_EQ(words("qwen2", "I'M 42"), (Words{"I", "'M", " ", "4", "2"}));
  // default: punctuation runs, then GPT-2's words, then digit runs, then threes of ASCII digits.
  EXPECT_EQ(words("", "a,b 12345"), (Words{"a", ",", "b", " ", "123", "45"}));
  EXPECT_EQ(find_pre_tokenizer("no-such-pre"), nullptr);
}

}  // namespace
}  // namespace kiln::frontend::gguf
