// What every tokenizer shares: cutting special tokens out of the text, BOS and EOS, decoding.
#include "kiln/frontend/gguf/tokenizer.h"

#include <algorithm>

namespace kiln::frontend::gguf {
namespace {

bool is_special(TokenType type) {
  return type == TokenType::kControl || type == TokenType::kUserDefined || type == TokenType::kUnknown;
}

// A stretch of the input: plain text still to tokenize, or a special token found in it.
struct Fragment {
  std::string_view text;
  int32_t special_id = Vocabulary::kNoToken;
};

// Cuts every occurrence of `special` (spelled `spelling`) out of the text fragments.
std::vector<Fragment> cut_out(const std::vector<Fragment>& fragments, int32_t special, std::string_view spelling) {
  std::vector<Fragment> cut;
  for (const Fragment& fragment : fragments) {
    if (fragment.special_id != Vocabulary::kNoToken) {
      cut.push_back(fragment);
      continue;
    }
    std::string_view rest = fragment.text;
    for (size_t at = rest.find(spelling); at != std::string_view::npos; at = rest.find(spelling)) {
      if (at > 0) cut.push_back({rest.substr(0, at)});
      cut.push_back({spelling, special});
      rest.remove_prefix(at + spelling.size());
    }
    if (!rest.empty()) cut.push_back({rest});
  }
  return cut;
}

// The clean-up Hugging Face's decoders do (clean_up_tokenization_spaces): no space before
// ? ! . , ; a lone ' between spaces joins its neighbours; no space before 's 'm 're 've.
std::string clean_up_spaces(const std::string& text) {
  std::string before_punctuation;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const bool punctuation = c == '?' || c == '!' || c == '.' || c == ',';
    if (i > 0 && punctuation && text[i - 1] == ' ') before_punctuation.pop_back();
    before_punctuation += c;
  }
  std::string lone_quotes;
  size_t taken_space = std::string::npos;  // the space after the last lone quote, gone with it
  for (size_t i = 0; i < before_punctuation.size(); ++i) {
    const std::string& s = before_punctuation;
    if (s[i] == '\'' && i > 0 && i + 1 < s.size() && s[i - 1] == ' ' && i - 1 != taken_space && s[i + 1] == ' ') {
      lone_quotes.back() = '\'';
      taken_space = ++i;
      continue;
    }
    lone_quotes += s[i];
  }
  std::string contractions;
  for (size_t i = 0; i < lone_quotes.size(); ++i) {
    const std::string& s = lone_quotes;
    if (i > 0 && s[i] == '\'' && s[i - 1] == ' ' && i + 1 < s.size()) {
      const char next = s[i + 1];
      const bool two_letters = i + 2 < s.size() && ((next == 'r' || next == 'v') && s[i + 2] == 'e');
      if (next == 's' || next == 'm' || two_letters) contractions.pop_back();
    }
    contractions += s[i];
  }
  return contractions;
}

}  // namespace

Tokenizer::Tokenizer(Vocabulary vocabulary, bool add_bos, bool add_eos, DecodeRules rules)
    : vocabulary_(std::move(vocabulary)), add_bos_(add_bos), add_eos_(add_eos), rules_(rules) {
  for (int32_t id = 0; id < vocabulary_.size(); ++id) {
    const Token& token = vocabulary_.tokens[id];
    if (is_special(token.type) && !token.text.empty()) special_tokens_.push_back(id);
  }
  std::stable_sort(special_tokens_.begin(), special_tokens_.end(), [&](int32_t a, int32_t b) {
    return vocabulary_.tokens[a].text.size() > vocabulary_.tokens[b].text.size();
  });
}

Status Tokenizer::check_id(int32_t id) const {
  if (id >= 0 && id < vocabulary_.size()) return Status::ok();
  return invalid_argument("token id " + std::to_string(id) + " is outside the vocabulary's " +
                          std::to_string(vocabulary_.size()) + " tokens");
}

Result<std::vector<int32_t>> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  std::vector<Fragment> fragments;
  if (!text.empty()) fragments.push_back({text});
  for (int32_t id : special_tokens_) {
    const Token& token = vocabulary_.tokens[id];
    if (!parse_special && token.type != TokenType::kUserDefined) continue;
    fragments = cut_out(fragments, id, token.text);
  }
  std::vector<int32_t> ids;
  if (add_special && add_bos_) ids.push_back(vocabulary_.bos);
  bool after_special = true;
  for (const Fragment& fragment : fragments) {
    if (fragment.special_id != Vocabulary::kNoToken) {
      ids.push_back(fragment.special_id);
      after_special = true;
      continue;
    }
    KILN_RETURN_IF_ERROR(encode_text(fragment.text, after_special, ids));
    after_special = false;
  }
  if (add_special && add_eos_) ids.push_back(vocabulary_.eos);
  return ids;
}

Result<std::string> Tokenizer::decode(const std::vector<int32_t>& ids) const {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) {
    KILN_RETURN_IF_ERROR(check_id(ids[i]));
    const TokenType type = vocabulary_.tokens[ids[i]].type;
    if (type == TokenType::kControl || type == TokenType::kUnknown || type == TokenType::kUnused) continue;
    std::string token_text = piece(ids[i]);
    if (i == 0 && rules_.strip_first_space && !token_text.empty() && token_text[0] == ' ') token_text.erase(0, 1);
    text += token_text;
  }
  return rules_.clean_up_spaces ? clean_up_spaces(text) : text;
}

Result<std::string> Tokenizer::token_piece(int32_t id) const {
  KILN_RETURN_IF_ERROR(check_id(id));
  const Token& token = vocabulary_.tokens[id];
  switch (token.type) {
    case TokenType::kControl:
    case TokenType::kUnknown:
      return token.text;
    case TokenType::kUnused:
      return std::string();
    default:
      return piece(id);
  }
}

Result<std::unique_ptr<Tokenizer>> make_tokenizer(Vocabulary vocabulary) {
  Result<std::unique_ptr<Tokenizer>> tokenizer = vocabulary.model == TokenizerModel::kSentencePiece
                                                     ? make_sentencepiece_tokenizer(std::move(vocabulary))
                                                     : make_bpe_tokenizer(std::move(vocabulary));
  if (!tokenizer.is_ok()) return tokenizer;
  const Tokenizer& made = **tokenizer;
  if (made.adds_bos() && made.vocabulary().bos == Vocabulary::kNoToken) {
    return invalid_model("the tokenizer adds BOS ('tokenizer.ggml.add_bos_token') but 'tokenizer.ggml.bos_token_id' names none");
  }
  if (made.adds_eos() && made.vocabulary().eos == Vocabulary::kNoToken) {
    return invalid_model("the tokenizer adds EOS ('tokenizer.ggml.add_eos_token') but 'tokenizer.ggml.eos_token_id' names none");
  }
  return tokenizer;
}

Result<std::unique_ptr<Tokenizer>> make_tokenizer(const GgufFile& file) {
  KILN_ASSIGN_OR_RETURN(Vocabulary vocabulary, read_vocabulary(file));
  return make_tokenizer(std::move(vocabulary));
}

}  // namespace kiln::frontend::gguf
