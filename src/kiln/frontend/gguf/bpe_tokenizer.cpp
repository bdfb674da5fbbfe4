// Byte-level BPE (tokenizer.ggml.model "gpt2"), as GPT-2 and its descendants tokenize: the text
// is cut into words by the pre-tokenizer tokenizer.ggml.pre names, each word's bytes are spelled
// as GPT-2's printable stand-ins (byte b becomes code point b where that is printable, else one
// from U+0100 on), and within each word the adjacent pair with the lowest merge rank is joined
// until no pair has a rank.
#include <array>
#include <queue>

#include "kiln/frontend/gguf/pre_tokenizer.h"
#include "kiln/frontend/gguf/tokenizer.h"
#include "kiln/io/utf8.h"

namespace kiln::frontend::gguf {
namespace {

// GPT-2's byte <-> code point correspondence.
class ByteSpelling {
 public:
  ByteSpelling() {
    code_point_to_byte_.fill(-1);
    char32_t next_stand_in = 0x100;
    for (int byte = 0; byte < 256; ++byte) {
      const bool printable = (byte >= 0x21 && byte <= 0x7E) || (byte >= 0xA1 && byte <= 0xAC) || byte >= 0xAE;
      const char32_t code_point = printable ? static_cast<char32_t>(byte) : next_stand_in++;
      byte_to_utf8_[byte].clear();
      io::append_utf8(byte_to_utf8_[byte], code_point);
      code_point_to_byte_[code_point] = static_cast<int16_t>(byte);
    }
  }

  std::string spell(std::string_view bytes) const {
    std::string spelled;
    for (const char byte : bytes) spelled += byte_to_utf8_[static_cast<unsigned char>(byte)];
    return spelled;
  }

  // The bytes a spelled token stands for; a code point no byte is spelled as stays as it is.
  std::string unspell(std::string_view spelled) const {
    std::string bytes;
    for (size_t at = 0; at < spelled.size();) {
      const auto decoded = io::decode_utf8(spelled, at);
      if (!decoded) {
        bytes += spelled[at++];
        continue;
      }
      const auto [code_point, length] = *decoded;
      if (code_point < code_point_to_byte_.size() && code_point_to_byte_[code_point] >= 0) {
        bytes += static_cast<char>(code_point_to_byte_[code_point]);
      } else {
        bytes += spelled.substr(at, length);
      }
      at += length;
    }
    return bytes;
  }

 private:
  std::array<std::string, 256> byte_to_utf8_;
  std::array<int16_t, 0x200> code_point_to_byte_;  // the stand-ins all lie below U+0200
};

const ByteSpelling& byte_spelling() {
  static const ByteSpelling spelling;
  return spelling;
}

// `text` with each byte that starts no valid UTF-8 character replaced by U+FFFD, as the
// pre-tokenizer's regexes need.
std::string valid_utf8(std::string_view text) {
  std::string valid;
  for (size_t at = 0; at < text.size();) {
    if (const auto decoded = io::decode_utf8(text, at)) {
      valid += text.substr(at, decoded->second);
      at += decoded->second;
    } else {
      io::append_utf8(valid, 0xFFFD);
      ++at;
    }
  }
  return valid;
}

// A symbol of the word being merged: a span of it, linked to its neighbours still in play.
struct BpeSymbol {
  size_t begin = 0;
  size_t length = 0;  // 0 once merged into the symbol on its left
  int prev = -1;
  int next = -1;
};

// Two adjacent symbols with a merge rank; stale once either has changed.
struct BpeCandidate {
  int left = 0;
  int right = 0;
  int32_t rank = 0;
  std::string joined;

  // Lower ranks first; among equal ranks, the leftmost.
  bool operator<(const BpeCandidate& other) const {
    return rank > other.rank || (rank == other.rank && left > other.left);
  }
};

class BpeTokenizer : public Tokenizer {
 public:
  BpeTokenizer(Vocabulary vocabulary, bool add_bos, bool add_eos, const PreTokenizer& pre_tokenizer,
               WordSplitter splitter)
      : Tokenizer(std::move(vocabulary), add_bos, add_eos, {.clean_up_spaces = pre_tokenizer.clean_up_spaces}),
        whole_word_tokens_(pre_tokenizer.whole_word_tokens),
        splitter_(std::move(splitter)) {}

 protected:
  Status encode_text(std::string_view text, bool /*after_special*/, std::vector<int32_t>& ids) const override {
    const std::string valid = valid_utf8(text);
    for (std::string_view word : splitter_.split(valid)) {
      KILN_RETURN_IF_ERROR(encode_word(byte_spelling().spell(word), ids));
    }
    return Status::ok();
  }

  std::string piece(int32_t id) const override {
    const Token& token = vocabulary_.tokens[id];
    if (token.type == TokenType::kByte) return std::string(1, static_cast<char>(*byte_token_value(token.text)));
    if (token.type == TokenType::kUserDefined) return token.text;
    return byte_spelling().unspell(token.text);
  }

 private:
  Status encode_word(const std::string& word, std::vector<int32_t>& ids) const {
    if (whole_word_tokens_) {
      if (const std::optional<int32_t> id = vocabulary_.find(word)) {
        ids.push_back(*id);
        return Status::ok();
      }
    }
    std::vector<BpeSymbol> symbols;
    for (size_t at = 0; at < word.size();) {
      const size_t length = io::decode_utf8(word, at)->second;  // spelled words are valid UTF-8
      const int index = static_cast<int>(symbols.size());
      symbols.push_back({at, length, index - 1, at + length < word.size() ? index + 1 : -1});
      at += length;
    }
    const auto text_of = [&](int symbol) { return word.substr(symbols[symbol].begin, symbols[symbol].length); };
    std::priority_queue<BpeCandidate> candidates;
    const auto propose = [&](int left, int right) {
      if (left < 0 || right < 0) return;
      const std::string left_text = text_of(left);
      const std::string right_text = text_of(right);
      if (const std::optional<int32_t> rank = vocabulary_.merge_rank(left_text, right_text)) {
        candidates.push({left, right, *rank, left_text + right_text});
      }
    };
    for (int i = 1; i < static_cast<int>(symbols.size()); ++i) propose(i - 1, i);
    while (!candidates.empty()) {
      const BpeCandidate best = candidates.top();
      candidates.pop();
      BpeSymbol& left = symbols[best.left];
      BpeSymbol& right = symbols[best.right];
      if (left.length == 0 || right.length == 0 || left.length + right.length != best.joined.size() ||
          text_of(best.left) + text_of(best.right) != best.joined) {
        continue;
      }
      left.length += right.length;
      right.length = 0;
      left.next = right.next;
      if (right.next >= 0) symbols[right.next].prev = best.left;
      propose(left.prev, best.left);
      propose(best.left, left.next);
    }
    for (int i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[i].next) {
      KILN_RETURN_IF_ERROR(append_symbol(text_of(i), ids));
    }
    return Status::ok();
  }

  // A merge's result that is no token (a vocabulary whose merges outrun its tokens) is spelled
  // by its characters' tokens, else the unknown token.
  Status append_symbol(const std::string& text, std::vector<int32_t>& ids) const {
    if (const std::optional<int32_t> id = vocabulary_.find(text)) {
      ids.push_back(*id);
      return Status::ok();
    }
    for (size_t at = 0; at < text.size();) {
      const size_t length = io::decode_utf8(text, at)->second;
      if (const std::optional<int32_t> id = vocabulary_.find(std::string_view(text).substr(at, length))) {
        ids.push_back(*id);
      } else if (vocabulary_.unknown != Vocabulary::kNoToken) {
        ids.push_back(vocabulary_.unknown);
      } else {
        return invalid_argument("the text has '" + byte_spelling().unspell(text.substr(at, length)) +
                                "', which the vocabulary has no token for (and no unknown token)");
      }
      at += length;
    }
    return Status::ok();
  }

  bool whole_word_tokens_;
  WordSplitter splitter_;
};

}  // namespace

Result<std::unique_ptr<Tokenizer>> make_bpe_tokenizer(Vocabulary vocabulary) {
  const PreTokenizer* pre_tokenizer = find_pre_tokenizer(vocabulary.pre_tokenizer);
  if (pre_tokenizer == nullptr) {
    return unsupported_operator("'tokenizer.ggml.pre' is '" + vocabulary.pre_tokenizer +
                                "', a pre-tokenizer Kiln does not know");
  }
  KILN_ASSIGN_OR_RETURN(WordSplitter splitter, WordSplitter::make(*pre_tokenizer));
  const bool add_bos = vocabulary.add_bos.value_or(pre_tokenizer->add_bos);
  const bool add_eos = vocabulary.add_eos.value_or(false);
  return std::unique_ptr<Tokenizer>(std::make_unique<BpeTokenizer>(std::move(vocabulary), add_bos, add_eos,
                                                                   *pre_tokenizer, std::move(splitter)));
}

}  // namespace kiln::frontend::gguf
