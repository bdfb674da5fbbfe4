// The pre-tokenizer table and the word splitter that runs its patterns with RE2.
#include "kiln/frontend/gguf/pre_tokenizer.h"

#include <re2/re2.h>

#include <algorithm>

namespace kiln::frontend::gguf {
namespace {

// GPT-2's words: contractions, letters, digits, other symbols, each after an optional space.
const std::string kGpt2Words = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|(\\s+)";
// Llama 3's: contractions in either case, a letter run after an optional non-letter, digits in
// threes, symbols with the line breaks after them, line breaks with the spaces before them.
const std::string kLlama3Words =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}|"
    " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|(\\s+)";
// Qwen 2's: Llama 3's with single digits.
const std::string kQwen2Words =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}|"
    " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|(\\s+)";
// Qwen 3.5's: Qwen 2's with combining marks counted as letters.
const std::string kQwen35Words =
    "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}|"
    " ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|(\\s+)";

const std::vector<PreTokenizer>& pre_tokenizers() {
  static const std::vector<PreTokenizer> table = {
      {.names = {"default"},
       .patterns = {"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2Words, "\\p{N}+", "[0-9][0-9][0-9]"}},
      {.names = {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2"},
       .patterns = {kLlama3Words}, .add_bos = true, .whole_word_tokens = true},
      {.names = {"dbrx", "smaug-bpe"}, .patterns = {kLlama3Words}},
      {.names = {"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de", "mellum",
                 "exaone4", "mpt", "olmo", "jais"},
       .patterns = {kGpt2Words}},
      {.names = {"qwen2", "deepseek-r1-qwen", "kormo"}, .patterns = {kQwen2Words}, .clean_up_spaces = false},
      {.names = {"stablelm2", "megrez"}, .patterns = {kQwen2Words}},
      {.names = {"qwen35"}, .patterns = {kQwen35Words}, .clean_up_spaces = false},
      {.names = {"starcoder", "refact", "codeshell", "exaone", "minerva-7b"}, .patterns = {"\\p{N}", kGpt2Words}},
      {.names = {"command-r", "smollm"}, .patterns = {"\\p{N}", kGpt2Words}, .clean_up_spaces = false},
      // Line breaks, letters, punctuation, CJK and Hangul runs, single digits.
      {.names = {"deepseek-coder"},
       .patterns = {"[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", "[\\x{4E00}-\\x{9FA5}\\x{0800}-\\x{4E00}\\x{AC00}-\\x{D7FF}]+",
                    "\\p{N}"},
       .clean_up_spaces = false},
      {.names = {"falcon"}, .patterns = {"[\\p{P}\\$\\+<=>\\^~\\|`]+", kGpt2Words, "[0-9][0-9][0-9]"}},
  };
  return table;
}

// Unicode's White_Space characters, as the body of a character class.
constexpr std::string_view kWhiteSpace =
    "\\t-\\r \\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}";

// `pattern` with each \s widened to kWhiteSpace, inside a character class or on its own.
std::string widen_white_space(std::string_view pattern) {
  std::string widened;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\' && i + 1 < pattern.size()) {
      if (pattern[i + 1] == 's') {
        widened += in_class ? std::string(kWhiteSpace) : "[" + std::string(kWhiteSpace) + "]";
      } else {
        widened += pattern.substr(i, 2);
      }
      ++i;
      continue;
    }
    if (pattern[i] == '[') in_class = true;
    if (pattern[i] == ']') in_class = false;
    widened += pattern[i];
  }
  return widened;
}

// The start of the last UTF-8 character of `text` (not empty).
size_t last_character_start(std::string_view text) {
  size_t at = text.size() - 1;
  while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
  return at;
}

// The words `pattern` cuts `text` into: its matches and the stretches between them.
void split_with(const re2::RE2& pattern, std::string_view text, std::vector<std::string_view>& words) {
  re2::StringPiece groups[2];
  const int group_count = pattern.NumberOfCapturingGroups() > 0 ? 2 : 1;
  size_t at = 0;
  while (at < text.size()) {
    if (!pattern.Match(text, at, text.size(), re2::RE2::UNANCHORED, groups, group_count)) break;
    const size_t begin = static_cast<size_t>(groups[0].data() - text.data());
    size_t end = begin + groups[0].size();
    if (end == begin) break;  // the table's patterns never match nothing; were one to, the rest is one word
    const bool white_space_run = group_count == 2 && groups[1].data() != nullptr;
    if (white_space_run && end < text.size()) {
      const size_t last = last_character_start(text.substr(begin, end - begin));
      if (last > 0) end = begin + last;
    }
    if (begin > at) words.push_back(text.substr(at, begin - at));
    words.push_back(text.substr(begin, end - begin));
    at = end;
  }
  if (at < text.size()) words.push_back(text.substr(at));
}

}  // namespace

const PreTokenizer* find_pre_tokenizer(std::string_view name) {
  if (name.empty()) name = "default";
  for (const PreTokenizer& entry : pre_tokenizers()) {
    if (std::find(entry.names.begin(), entry.names.end(), name) != entry.names.end()) return &entry;
  }
  return nullptr;
}

WordSplitter::WordSplitter() = default;
WordSplitter::WordSplitter(WordSplitter&&) noexcept = default;
WordSplitter& WordSplitter::operator=(WordSplitter&&) noexcept = default;
WordSplitter::~WordSplitter() = default;

Result<WordSplitter> WordSplitter::make(const PreTokenizer& pre_tokenizer) {
  WordSplitter splitter;
  for (const std::string& pattern : pre_tokenizer.patterns) {
    re2::RE2::Options options;
    options.set_log_errors(false);
    auto compiled = std::make_unique<re2::RE2>(widen_white_space(pattern), options);
    if (!compiled->ok()) {
      return invalid_model("pre-tokenizer '" + std::string(pre_tokenizer.names.front()) + "': pattern '" + pattern +
                           "' does not compile: " + compiled->error());
    }
    splitter.patterns_.push_back(std::move(compiled));
  }
  return splitter;
}

std::vector<std::string_view> WordSplitter::split(std::string_view text) const {
  std::vector<std::string_view> words;
  if (!text.empty()) words.push_back(text);
  for (const auto& pattern : patterns_) {
    std::vector<std::string_view> finer;
    for (std::string_view word : words) split_with(*pattern, word, finer);
    words = std::move(finer);
  }
  return words;
}

}  // namespace kiln::frontend::gguf
