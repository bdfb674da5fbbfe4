// kiln::Generator: a language model (a GGUF decoder package) decoding text token by token. It
// loads the model into a Session (the same compile, plan and report as any model), keeps its
// tokenizer (from the package's metadata) and runs the decoder through a Stream whose carried
// state is the KV cache: the prompt is processed in batches (prefill), then one token per call.
//
//   auto gen = Generator::load("stories260K.gguf", {}).value();
//   auto prompt = gen->tokenize("Once upon a time").value();          // BOS added as the model says
//   gen->generate(prompt, 64, {}, [](int32_t id, const std::string& text) {
//     std::cout << text << std::flush; return true; });                // greedy at temperature 0
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kiln/session.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln {

struct GeneratorOptions {
  SessionOptions session;
  // Positions the KV cache holds (prompt and generated tokens together); 0: the model's context
  // length, at most 4096. More than the model's context length is an InvalidArgument.
  int64_t context = 0;
  // Prompt tokens processed per call.
  int64_t batch = 512;
};

struct SamplingOptions {
  float temperature = 0;  // 0: greedy (the most probable token)
  int64_t top_k = 0;      // 0: all tokens
  float top_p = 1;        // nucleus: the smallest set of tokens whose probabilities sum to top_p
  uint64_t seed = 0;
  bool stop_at_end_of_generation = true;  // stop at EOS (and the model's other end tokens)
};

struct GenerationStats {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  double time_to_first_token_ms = 0;  // the prompt's processing and the first token's sampling
  double prompt_tokens_per_second = 0;
  double generation_tokens_per_second = 0;  // the tokens after the first, one call each
  int64_t peak_resident_bytes = 0;          // the process's peak resident memory after the call
};

class Generator {
 public:
  // Called with each generated token and the text it completes (possibly empty while a UTF-8
  // character is split across tokens); return false to stop.
  using TokenCallback = std::function<bool(int32_t token, const std::string& text)>;

  static Result<std::unique_ptr<Generator>> load(const std::string& path, const GeneratorOptions& options = {});
  ~Generator();
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;

  // Token ids of `text`; with `add_special`, the model's BOS (and EOS) as its package says.
  Result<std::vector<int32_t>> tokenize(const std::string& text, bool add_special = true) const;
  // The text of `tokens` (byte-fallback pieces joined into their UTF-8). InvalidArgument for an id
  // outside the vocabulary.
  Result<std::string> detokenize(const std::vector<int32_t>& tokens) const;

  // Processes `prompt` from an empty cache, then generates up to `max_tokens` tokens, calling
  // `on_token` for each. When `logits` is given it receives the float32 logits of every prompt
  // position and every generated token, [prompt + generated, vocab]. InvalidArgument for an empty
  // prompt, an id outside the vocabulary, or a prompt and max_tokens beyond the context.
  Result<GenerationStats> generate(const std::vector<int32_t>& prompt, int64_t max_tokens, const SamplingOptions& sampling,
                                   const TokenCallback& on_token, Tensor* logits = nullptr);
  // The logits of every position of `tokens` from an empty cache: [tokens, vocab].
  Result<Tensor> logits(const std::vector<int32_t>& tokens);

  int64_t vocab_size() const;
  int64_t context() const;
  const Session& session() const;
  // The session's report (docs/REPORT.md) with its `generation` section: the key/value cache's
  // positions and bytes, the load time and the last generate() call's figures.
  std::string report_json(int indent = 2) const;

 private:
  struct Impl;
  explicit Generator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln
