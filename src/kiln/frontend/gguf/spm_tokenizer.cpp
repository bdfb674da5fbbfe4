// SentencePiece tokenization (tokenizer.ggml.model "llama"), as llama.cpp does it: spaces become
// "▁", a space is put before text that starts the input or follows a special token, the text is
// cut into UTF-8 characters, and the adjacent pair whose join is the best-scoring token is merged,
// again and again, until no join is a token. A piece that is no token is spelled by its bytes'
// tokens (<0xNN>).
#include <algorithm>
#include <queue>

#include "kiln/frontend/gguf/tokenizer.h"

namespace kiln::frontend::gguf {
namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581, SentencePiece's space

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  std::string replaced;
  for (size_t at = 0;;) {
    const size_t next = text.find(from, at);
    if (next == std::string_view::npos) {
      replaced += text.substr(at);
      return replaced;
    }
    replaced += text.substr(at, next - at);
    replaced += to;
    at = next + from.size();
  }
}

// A UTF-8 character's length from its first byte (a stray continuation byte counts as one).
size_t utf8_length(unsigned char first) {
  return first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : first >= 0xC0 ? 2 : 1;
}

// A piece of the text being merged: a span of it, linked to its neighbours still in play.
struct SpmPiece {
  size_t begin = 0;
  size_t length = 0;  // 0 once merged into the piece on its left
  int prev = -1;
  int next = -1;
};

// Two adjacent pieces whose join is a token, by that token's score.
struct SpmCandidate {
  int left = 0;
  int right = 0;
  float score = 0;
  size_t length = 0;  // the join's length when proposed: stale once either side has changed

  // Higher scores first; among equal scores, the leftmost.
  bool operator<(const SpmCandidate& other) const {
    return score < other.score || (score == other.score && left > other.left);
  }
};

class SentencePieceTokenizer : public Tokenizer {
 public:
  SentencePieceTokenizer(Vocabulary vocabulary, bool add_bos, bool add_eos, bool add_space_prefix)
      : Tokenizer(std::move(vocabulary), add_bos, add_eos, {.strip_first_space = add_space_prefix}),
        add_space_prefix_(add_space_prefix) {}

 protected:
  Status encode_text(std::string_view text, bool after_special, std::vector<int32_t>& ids) const override {
    std::string marked = add_space_prefix_ && after_special ? std::string(kSpaceMark) : std::string();
    marked += replace_all(text, " ", kSpaceMark);

    std::vector<SpmPiece> pieces;
    for (size_t at = 0; at < marked.size();) {
      const size_t length = std::min(utf8_length(static_cast<unsigned char>(marked[at])), marked.size() - at);
      const int index = static_cast<int>(pieces.size());
      pieces.push_back({at, length, index - 1, at + length < marked.size() ? index + 1 : -1});
      at += length;
    }
    std::priority_queue<SpmCandidate> candidates;
    const auto propose = [&](int left, int right) {
      if (left < 0 || right < 0) return;
      const size_t length = pieces[left].length + pieces[right].length;
      const std::optional<int32_t> id = vocabulary_.find(std::string_view(marked).substr(pieces[left].begin, length));
      if (id) candidates.push({left, right, vocabulary_.tokens[*id].score, length});
    };
    for (int i = 1; i < static_cast<int>(pieces.size()); ++i) propose(i - 1, i);
    while (!candidates.empty()) {
      const SpmCandidate best = candidates.top();
      candidates.pop();
      SpmPiece& left = pieces[best.left];
      SpmPiece& right = pieces[best.right];
      if (left.length == 0 || right.length == 0 || left.length + right.length != best.length) continue;
      left.length += right.length;
      right.length = 0;
      left.next = right.next;
      if (right.next >= 0) pieces[right.next].prev = best.left;
      propose(left.prev, best.left);
      propose(best.left, left.next);
    }
    for (int i = pieces.empty() ? -1 : 0; i >= 0; i = pieces[i].next) {
      KILN_RETURN_IF_ERROR(append_piece(std::string_view(marked).substr(pieces[i].begin, pieces[i].length), ids));
    }
    return Status::ok();
  }

  std::string piece(int32_t id) const override {
    const Token& token = vocabulary_.tokens[id];
    if (token.type == TokenType::kByte) return std::string(1, static_cast<char>(*byte_token_value(token.text)));
    if (token.type == TokenType::kUserDefined) return token.text;
    return replace_all(token.text, kSpaceMark, " ");
  }

 private:
  // A merged piece is always a token; a single character may not be, and is spelled by its bytes.
  Status append_piece(std::string_view text, std::vector<int32_t>& ids) const {
    if (const std::optional<int32_t> id = vocabulary_.find(text)) {
      ids.push_back(*id);
      return Status::ok();
    }
    for (const char byte : text) {
      KILN_ASSIGN_OR_RETURN(const int32_t id, byte_token(static_cast<unsigned char>(byte)));
      ids.push_back(id);
    }
    return Status::ok();
  }

  // <0xNN>, else the byte itself as a token, else the unknown token.
  Result<int32_t> byte_token(unsigned char byte) const {
    static constexpr char kHex[] = "0123456789ABCDEF";
    const std::string spelled = {'<', '0', 'x', kHex[byte >> 4], kHex[byte & 15], '>'};
    if (const std::optional<int32_t> id = vocabulary_.find(spelled)) return *id;
    if (const std::optional<int32_t> id = vocabulary_.find(std::string(1, static_cast<char>(byte)))) return *id;
    if (vocabulary_.unknown != Vocabulary::kNoToken) return vocabulary_.unknown;
    return invalid_argument("the text has byte " + spelled + ", which the vocabulary has no token for (and no unknown token)");
  }

  bool add_space_prefix_;
};

}  // namespace

Result<std::unique_ptr<Tokenizer>> make_sentencepiece_tokenizer(Vocabulary vocabulary) {
  const bool add_bos = vocabulary.add_bos.value_or(true);
  const bool add_eos = vocabulary.add_eos.value_or(false);
  const bool add_space_prefix = vocabulary.add_space_prefix.value_or(true);
  return std::unique_ptr<Tokenizer>(
      std::make_unique<SentencePieceTokenizer>(std::move(vocabulary), add_bos, add_eos, add_space_prefix));
}

}  // namespace kiln::frontend::gguf
