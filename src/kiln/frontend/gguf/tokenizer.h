// Text to token ids and back for a GGUF model, as llama.cpp tokenizes: the model's special tokens
// are cut out of the text first (user-defined ones always, control and unknown ones when asked),
// each stretch between them is tokenized by the model's algorithm (spm_tokenizer.cpp for
// tokenizer.ggml.model "llama", bpe_tokenizer.cpp for "gpt2"), and BOS/EOS are added where the
// vocabulary says so. Decoding joins the tokens' pieces; control and unknown tokens decode to
// nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/frontend/gguf/gguf_file.h"
#include "kiln/frontend/gguf/vocabulary.h"
#include "kiln/status.h"

namespace kiln::frontend::gguf {

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  const Vocabulary& vocabulary() const { return vocabulary_; }
  bool adds_bos() const { return add_bos_; }
  bool adds_eos() const { return add_eos_; }

  // The ids of `text`. `add_special`: BOS and EOS where the vocabulary adds them.
  // `parse_special`: control and unknown tokens spelled in the text are those tokens (otherwise
  // they are plain text; user-defined tokens are matched either way).
  Result<std::vector<int32_t>> encode(std::string_view text, bool add_special, bool parse_special) const;
  // The text of `ids` (bytes: a token may end inside a UTF-8 character). Control and unknown
  // tokens give nothing; SentencePiece's leading space is taken off the first token. An id outside
  // the vocabulary is an InvalidArgument naming it.
  Result<std::string> decode(const std::vector<int32_t>& ids) const;
  // The bytes one token stands for, control and unknown tokens as their text (for printing a
  // stream of generated tokens one at a time).
  Result<std::string> token_piece(int32_t id) const;

 protected:
  struct DecodeRules {
    bool strip_first_space = false;  // the leading space SentencePiece adds to the text
    bool clean_up_spaces = false;    // " ," -> ",", " 's" -> "'s" and the like
  };
  Tokenizer(Vocabulary vocabulary, bool add_bos, bool add_eos, DecodeRules rules);

  // Appends the ids of `text`, a stretch of the input with no special token in it; `after_special`
  // says it starts the input or follows a special token.
  virtual Status encode_text(std::string_view text, bool after_special, std::vector<int32_t>& ids) const = 0;
  // The bytes a normal, user-defined or byte token stands for.
  virtual std::string piece(int32_t id) const = 0;

  Vocabulary vocabulary_;

 private:
  Status check_id(int32_t id) const;

  bool add_bos_;
  bool add_eos_;
  DecodeRules rules_;
  std::vector<int32_t> special_tokens_;  // control, user-defined and unknown; longest text first
};

// The tokenizer `vocabulary` names: an UnsupportedOperator naming tokenizer.ggml.model or
// tokenizer.ggml.pre where Kiln has no such tokenizer, an InvalidModel where BOS or EOS is to be
// added but the vocabulary has none.
Result<std::unique_ptr<Tokenizer>> make_tokenizer(Vocabulary vocabulary);
// read_vocabulary, then make_tokenizer.
Result<std::unique_ptr<Tokenizer>> make_tokenizer(const GgufFile& file);

// One per algorithm (spm_tokenizer.cpp, bpe_tokenizer.cpp), for make_tokenizer.
Result<std::unique_ptr<Tokenizer>> make_sentencepiece_tokenizer(Vocabulary vocabulary);
Result<std::unique_ptr<Tokenizer>> make_bpe_tokenizer(Vocabulary vocabulary);

}  // namespace kiln::frontend::gguf
