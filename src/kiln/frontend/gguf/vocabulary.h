// A GGUF model's token table, read from its tokenizer.ggml.* metadata: each token's text, score
// and type, the BPE merges, the special ids and whether BOS/EOS are added. Every key a tokenizer
// needs is checked here (present, of the right type, as long as the token list, ids in range), so
// a broken table is an InvalidModel naming the key; the tokenizers then trust it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kiln/frontend/gguf/gguf_file.h"
#include "kiln/status.h"

namespace kiln::frontend::gguf {

// tokenizer.ggml.token_type's values.
enum class TokenType : int32_t {
  kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6,
};

// tokenizer.ggml.model: "llama" (SentencePiece) or "gpt2" (byte-level BPE).
enum class TokenizerModel { kSentencePiece, kBytePairEncoding };

struct Token {
  std::string text;
  float score = 0;
  TokenType type = TokenType::kNormal;
};

// A merge's two halves, as tokenizer.ggml.merges spells them ("left right").
struct MergePairHash {
  size_t operator()(const std::pair<std::string, std::string>& pair) const;
};
using MergeRanks = std::unordered_map<std::pair<std::string, std::string>, int32_t, MergePairHash>;

// Token texts looked up by string_view without a copy.
struct TextHash {
  using is_transparent = void;
  size_t operator()(std::string_view text) const { return std::hash<std::string_view>{}(text); }
};

struct Vocabulary {
  static constexpr int32_t kNoToken = -1;

  TokenizerModel model = TokenizerModel::kSentencePiece;
  std::string pre_tokenizer;  // tokenizer.ggml.pre; empty when absent
  std::string model_name;     // general.name; empty when absent
  std::vector<Token> tokens;
  MergeRanks merge_ranks;     // BPE: a merge's position in tokenizer.ggml.merges
  int32_t bos = kNoToken;
  int32_t eos = kNoToken;
  int32_t unknown = kNoToken;
  int32_t padding = kNoToken;
  std::optional<bool> add_bos;           // tokenizer.ggml.add_bos_token, when given
  std::optional<bool> add_eos;           // tokenizer.ggml.add_eos_token, when given
  std::optional<bool> add_space_prefix;  // tokenizer.ggml.add_space_prefix, when given

  std::unordered_map<std::string, int32_t, TextHash, std::equal_to<>> ids;  // text -> id (empty texts left out)

  int32_t size() const { return static_cast<int32_t>(tokens.size()); }
  // The id of the token spelled `text`, if there is one.
  std::optional<int32_t> find(std::string_view text) const;
  // The rank of merging `left` and `right`, if they merge.
  std::optional<int32_t> merge_rank(const std::string& left, const std::string& right) const;
};

// The byte a byte token (TokenType::kByte) stands for: spelled <0xNN>, or the one byte itself.
std::optional<uint8_t> byte_token_value(std::string_view text);

// Reads the token table of `file`. Missing or inconsistent keys are an InvalidModel naming the
// key; a tokenizer model Kiln does not implement is an UnsupportedOperator naming it.
Result<Vocabulary> read_vocabulary(const GgufFile& file);

// The lower-case hex SHA-256 of `file`'s tokenizer: of the GGUF file (gguf_writer.h) holding its
// tokenizer.* metadata entries in key order, so any two packages with the same tokenizer (tokens,
// scores, merges, special tokens, chat template) agree, whatever their weights.
Result<std::string> tokenizer_sha256(const GgufFile& file);

}  // namespace kiln::frontend::gguf
