// The pre-tokenizers of byte-level BPE vocabularies, by the name tokenizer.ggml.pre gives: the
// regexes that cut text into words before merging (each applied in turn to the pieces the one
// before left, both its matches and the text between them kept as words), and what else the name
// decides. The regexes are RE2's, with \s widened to Unicode's White_Space (RE2's is ASCII), and
// the lookahead \s+(?!\S), which RE2 cannot say, written as a capture group instead (see
// WordSplitter).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/status.h"

namespace re2 {
class RE2;
}

namespace kiln::frontend::gguf {

struct PreTokenizer {
  std::vector<std::string_view> names;  // the tokenizer.ggml.pre values that mean it
  std::vector<std::string> patterns;
  bool add_bos = false;          // whether BOS is added when the file does not say
  bool whole_word_tokens = false;  // a word that is itself a token is not merged (Llama 3)
  bool clean_up_spaces = true;   // decoding drops the space before punctuation and contractions
};

// The table's entry for `name`; null when there is none. An empty name (older files) is "default".
const PreTokenizer* find_pre_tokenizer(std::string_view name);

// Cuts text into words with a pre-tokenizer's patterns. A capture group in a pattern is a
// whitespace run that, when more text follows it, leaves its last character to the next word:
// the \s+(?!\S) of the original regexes.
class WordSplitter {
 public:
  // An InvalidModel naming the pattern should one not compile (a table error).
  static Result<WordSplitter> make(const PreTokenizer& pre_tokenizer);
  WordSplitter(WordSplitter&&) noexcept;
  WordSplitter& operator=(WordSplitter&&) noexcept;
  ~WordSplitter();

  // `text` must be valid UTF-8.
  std::vector<std::string_view> split(std::string_view text) const;

 private:
  WordSplitter();
  std::vector<std::unique_ptr<re2::RE2>> patterns_;
};

}  // namespace kiln::frontend::gguf
