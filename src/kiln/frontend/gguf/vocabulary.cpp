// Reading tokenizer.ggml.* into a Vocabulary, each key checked before use.
#include "kiln/frontend/gguf/vocabulary.h"

#include <algorithm>

#include "kiln/frontend/gguf/gguf_writer.h"
#include "kiln/io/file.h"

namespace kiln::frontend::gguf {
namespace {

const MetadataValue* find_array(const GgufFile& file, const std::string& key, ValueType element_type,
                                Status& error) {
  const MetadataValue* value = file.find(key);
  if (value == nullptr) return nullptr;
  if (value->type != ValueType::kArray || value->element_type != element_type) {
    error = invalid_model("'" + key + "' must be an array of " + std::string(value_type_name(element_type)));
  }
  return value;
}

Status check_count(const std::string& key, size_t count, size_t tokens) {
  if (count == tokens) return Status::ok();
  return invalid_model("'" + key + "' has " + std::to_string(count) + " entries for " + std::to_string(tokens) +
                       " tokens");
}

Result<std::vector<Token>> read_tokens(const GgufFile& file) {
  Status error;
  const MetadataValue* texts = find_array(file, "tokenizer.ggml.tokens", ValueType::kString, error);
  if (texts == nullptr) return invalid_model("missing key 'tokenizer.ggml.tokens'");
  KILN_RETURN_IF_ERROR(error);
  if (texts->elements.empty()) return invalid_model("'tokenizer.ggml.tokens' is empty");
  if (texts->elements.size() > static_cast<size_t>(INT32_MAX)) {
    return invalid_model("'tokenizer.ggml.tokens' has more tokens than int32 ids can number");
  }
  std::vector<Token> tokens(texts->elements.size());
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i].text = texts->elements[i].string_value;

  // Scores are floats, or integers in some converters' output.
  if (const MetadataValue* scores = file.find("tokenizer.ggml.scores")) {
    if (scores->type != ValueType::kArray ||
        (scores->element_type != ValueType::kF32 && scores->element_type != ValueType::kI32)) {
      return invalid_model("'tokenizer.ggml.scores' must be an array of F32 or I32");
    }
    KILN_RETURN_IF_ERROR(check_count("tokenizer.ggml.scores", scores->elements.size(), tokens.size()));
    for (size_t i = 0; i < tokens.size(); ++i) tokens[i].score = static_cast<float>(scores->elements[i].as_float());
  }
  const MetadataValue* types = find_array(file, "tokenizer.ggml.token_type", ValueType::kI32, error);
  KILN_RETURN_IF_ERROR(error);
  if (types != nullptr) {
    KILN_RETURN_IF_ERROR(check_count("tokenizer.ggml.token_type", types->elements.size(), tokens.size()));
    for (size_t i = 0; i < tokens.size(); ++i) {
      const int64_t type = types->elements[i].as_int();
      if (type < static_cast<int64_t>(TokenType::kNormal) || type > static_cast<int64_t>(TokenType::kByte)) {
        return invalid_model("'tokenizer.ggml.token_type' gives token " + std::to_string(i) + " the unknown type " +
                             std::to_string(type));
      }
      tokens[i].type = static_cast<TokenType>(type);
      if (tokens[i].type == TokenType::kByte && !byte_token_value(tokens[i].text)) {
        return invalid_model("'tokenizer.ggml.token_type' makes token " + std::to_string(i) + " ('" + tokens[i].text +
                             "') a byte token, but it spells no byte (<0xNN>)");
      }
    }
  }
  return tokens;
}

Status read_merges(const GgufFile& file, MergeRanks& ranks) {
  Status error;
  const MetadataValue* merges = find_array(file, "tokenizer.ggml.merges", ValueType::kString, error);
  if (merges == nullptr) return invalid_model("missing key 'tokenizer.ggml.merges' (a gpt2 tokenizer needs its merges)");
  KILN_RETURN_IF_ERROR(error);
  ranks.reserve(merges->elements.size());
  for (size_t i = 0; i < merges->elements.size(); ++i) {
    const std::string& merge = merges->elements[i].string_value;
    // The halves are split at the first space after the first byte (a half may start with one).
    const size_t space = merge.find(' ', 1);
    if (space == std::string::npos) {
      return invalid_model("'tokenizer.ggml.merges' entry " + std::to_string(i) + " ('" + merge +
                           "') is not two tokens separated by a space");
    }
    ranks.emplace(std::make_pair(merge.substr(0, space), merge.substr(space + 1)), static_cast<int32_t>(i));
  }
  return Status::ok();
}

// A special id: absent keeps `id`; -1 (also written as u32 0xFFFFFFFF) means none.
Status read_special_id(const GgufFile& file, const std::string& key, int32_t size, int32_t& id) {
  const MetadataValue* value = file.find(key);
  if (value == nullptr) return Status::ok();
  if (!value->is_integer()) return invalid_model("'" + key + "' must be an integer");
  const int64_t given = value->as_int();
  if (given == -1 || given == 0xFFFFFFFF) {
    id = Vocabulary::kNoToken;
    return Status::ok();
  }
  if (given < 0 || given >= size) {
    return invalid_model("'" + key + "' is " + std::to_string(given) + ", outside the " + std::to_string(size) +
                         " tokens");
  }
  id = static_cast<int32_t>(given);
  return Status::ok();
}

Status read_flag(const GgufFile& file, const std::string& key, std::optional<bool>& flag) {
  const MetadataValue* value = file.find(key);
  if (value == nullptr) return Status::ok();
  if (value->type != ValueType::kBool) return invalid_model("'" + key + "' must be a bool");
  flag = value->unsigned_value != 0;
  return Status::ok();
}

}  // namespace

size_t MergePairHash::operator()(const std::pair<std::string, std::string>& pair) const {
  const size_t left = std::hash<std::string>{}(pair.first);
  return left ^ (std::hash<std::string>{}(pair.second) + 0x9e3779b97f4a7c15ull + (left << 6) + (left >> 2));
}

std::optional<uint8_t> byte_token_value(std::string_view text) {
  if (text.size() == 1) return static_cast<uint8_t>(text[0]);
  const auto hex = [](char c) -> int {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  if (text.size() != 6 || !text.starts_with("<0x") || text.back() != '>' || hex(text[3]) < 0 || hex(text[4]) < 0) {
    return std::nullopt;
  }
  return static_cast<uint8_t>(hex(text[3]) * 16 + hex(text[4]));
}

std::optional<int32_t> Vocabulary::find(std::string_view text) const {
  const auto it = ids.find(text);
  if (it == ids.end()) return std::nullopt;
  return it->second;
}

std::optional<int32_t> Vocabulary::merge_rank(const std::string& left, const std::string& right) const {
  const auto it = merge_ranks.find(std::make_pair(left, right));
  if (it == merge_ranks.end()) return std::nullopt;
  return it->second;
}

Result<Vocabulary> read_vocabulary(const GgufFile& file) {
  Vocabulary vocabulary;
  const MetadataValue* model = file.find("tokenizer.ggml.model");
  if (model == nullptr) return invalid_model("missing key 'tokenizer.ggml.model'");
  if (model->type != ValueType::kString) return invalid_model("'tokenizer.ggml.model' must be a string");
  if (model->string_value == "llama") {
    vocabulary.model = TokenizerModel::kSentencePiece;
  } else if (model->string_value == "gpt2") {
    vocabulary.model = TokenizerModel::kBytePairEncoding;
  } else {
    return unsupported_operator("'tokenizer.ggml.model' is '" + model->string_value +
                                "'; Kiln's tokenizers are 'llama' (SentencePiece) and 'gpt2' (byte-level BPE)");
  }
  if (const MetadataValue* pre = file.find("tokenizer.ggml.pre")) {
    if (pre->type != ValueType::kString) return invalid_model("'tokenizer.ggml.pre' must be a string");
    vocabulary.pre_tokenizer = pre->string_value;
  }
  if (const MetadataValue* name = file.find("general.name"); name != nullptr && name->type == ValueType::kString) {
    vocabulary.model_name = name->string_value;
  }

  KILN_ASSIGN_OR_RETURN(vocabulary.tokens, read_tokens(file));
  vocabulary.ids.reserve(vocabulary.tokens.size());
  for (int32_t id = 0; id < vocabulary.size(); ++id) {
    const std::string& text = vocabulary.tokens[id].text;
    if (text.empty()) continue;  // never matches anything
    if (!vocabulary.ids.emplace(text, id).second) {
      return invalid_model("'tokenizer.ggml.tokens' lists '" + text + "' twice (ids " +
                           std::to_string(vocabulary.ids[text]) + " and " + std::to_string(id) + ")");
    }
  }
  if (vocabulary.model == TokenizerModel::kBytePairEncoding) {
    KILN_RETURN_IF_ERROR(read_merges(file, vocabulary.merge_ranks));
  } else {
    // SentencePiece's conventional ids, where the file does not say.
    vocabulary.unknown = 0;
    vocabulary.bos = vocabulary.size() > 1 ? 1 : Vocabulary::kNoToken;
    vocabulary.eos = vocabulary.size() > 2 ? 2 : Vocabulary::kNoToken;
  }
  const int32_t size = vocabulary.size();
  KILN_RETURN_IF_ERROR(read_special_id(file, "tokenizer.ggml.bos_token_id", size, vocabulary.bos));
  KILN_RETURN_IF_ERROR(read_special_id(file, "tokenizer.ggml.eos_token_id", size, vocabulary.eos));
  KILN_RETURN_IF_ERROR(read_special_id(file, "tokenizer.ggml.unknown_token_id", size, vocabulary.unknown));
  KILN_RETURN_IF_ERROR(read_special_id(file, "tokenizer.ggml.padding_token_id", size, vocabulary.padding));
  KILN_RETURN_IF_ERROR(read_flag(file, "tokenizer.ggml.add_bos_token", vocabulary.add_bos));
  KILN_RETURN_IF_ERROR(read_flag(file, "tokenizer.ggml.add_eos_token", vocabulary.add_eos));
  KILN_RETURN_IF_ERROR(read_flag(file, "tokenizer.ggml.add_space_prefix", vocabulary.add_space_prefix));
  return vocabulary;
}

Result<std::string> tokenizer_sha256(const GgufFile& file) {
  std::vector<MetadataEntry> entries;
  for (const MetadataEntry& entry : file.metadata)
    if (entry.key.rfind("tokenizer.", 0) == 0) entries.push_back(entry);
  std::sort(entries.begin(), entries.end(), [](const MetadataEntry& a, const MetadataEntry& b) { return a.key < b.key; });
  return io::sha256_hex(write_metadata_gguf(entries));
}

}  // namespace kiln::frontend::gguf
