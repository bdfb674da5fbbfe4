// kiln::Generator (include/kiln/generator.h): the decoder a GGUF package imports as (the format
// table's gguf row, frontend/gguf/decoder_graph.h), run through a Stream whose carried state is
// the KV cache (each block's present key and value become the next call's past), with the
// package's tokenizer. The cache is allocated once for the context and written in place: a new
// text starts over at position 0 and leaves the old keys where they are, never read again.
#include "kiln/generator.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "kiln/frontend/gguf/decoder_graph.h"
#include "kiln/frontend/gguf/gguf_file.h"
#include "kiln/frontend/gguf/gguf_import.h"
#include "kiln/frontend/gguf/llm_hyperparameters.h"
#include "kiln/frontend/gguf/tokenizer.h"
#include "kiln/io/file.h"
#include "kiln/report/report.h"
#include "kiln/runtime/session_access.h"
#include "kiln/runtime/token_sampler.h"
#include "kiln/stream.h"

namespace kiln {

using frontend::gguf::DecoderNames;

namespace {

constexpr int64_t kDefaultContext = 4096;

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// The length of the longest prefix of `bytes` that ends on a whole UTF-8 character (a character
// cut at the end waits for the next token; invalid bytes are let through).
size_t complete_utf8_prefix(const std::string& bytes) {
  for (size_t back = 1; back <= std::min<size_t>(3, bytes.size()); ++back) {
    const auto c = static_cast<unsigned char>(bytes[bytes.size() - back]);
    if ((c & 0xC0) != 0x80) {  // the last character's first byte
      const size_t length = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
      return length > back ? bytes.size() - back : bytes.size();
    }
  }
  return bytes.size();
}

// The process's peak resident memory (getrusage's maximum resident set size, in KiB on Linux).
int64_t peak_resident_bytes() {
  rusage usage{};
  return getrusage(RUSAGE_SELF, &usage) == 0 ? static_cast<int64_t>(usage.ru_maxrss) * 1024 : 0;
}

}  // namespace

struct Generator::Impl {
  std::unique_ptr<frontend::gguf::Tokenizer> tokenizer;
  std::vector<int32_t> end_tokens;  // EOS and the end-of-turn token, where the package has them
  frontend::gguf::LlmHyperparameters hp;
  int64_t context = 0, batch = 0;
  std::unique_ptr<Session> session;
  std::unique_ptr<Stream> stream;
  int64_t position = 0;  // tokens in the cache
  double load_ms = 0;
  GenerationStats last_generation;  // the last generate()'s figures, for the report

  Status check_tokens(const std::vector<int32_t>& tokens) const {
    for (size_t i = 0; i < tokens.size(); ++i)
      if (tokens[i] < 0 || tokens[i] >= hp.vocab_size)
        return invalid_argument("token " + std::to_string(i) + " is id " + std::to_string(tokens[i]) + ", outside the vocabulary of " +
                                std::to_string(hp.vocab_size));
    return Status::ok();
  }

  // Empties the cache: the next call writes at position 0, and attends to nothing before it.
  void reset() { position = 0; }

  // Runs `count` tokens from `tokens` at the next positions; their logits are appended to `logits`
  // when given (else only the last token's are computed), and the last row is copied to `last`.
  Status evaluate(const int32_t* tokens, int64_t count, std::vector<float>* logits, std::vector<float>& last) {
    for (int64_t start = 0; start < count; start += batch) {
      const int64_t n = std::min(batch, count - start), kept = logits ? n : 1;
      Tensor ids = Tensor::allocate(DType::kInt64, {1, n}), positions = Tensor::allocate(DType::kInt64, {1, n});
      Tensor indices = Tensor::allocate(DType::kInt64, {kept});
      for (int64_t i = 0; i < n; ++i) {
        ids.data<int64_t>()[i] = tokens[start + i];
        positions.data<int64_t>()[i] = position + i;
      }
      for (int64_t i = 0; i < kept; ++i) indices.data<int64_t>()[i] = n - kept + i;
      KILN_RETURN_IF_ERROR(stream->bind_input(DecoderNames::kInputIds, ids));
      KILN_RETURN_IF_ERROR(stream->bind_input(DecoderNames::kPositionIds, positions));
      KILN_RETURN_IF_ERROR(stream->bind_input(DecoderNames::kLogitsIndices, indices));
      KILN_RETURN_IF_ERROR(stream->run());
      KILN_ASSIGN_OR_RETURN(const Tensor out, stream->output(DecoderNames::kLogits));
      const float* rows = out.data<float>();
      if (logits) logits->insert(logits->end(), rows, rows + kept * hp.vocab_size);
      last.assign(rows + (kept - 1) * hp.vocab_size, rows + kept * hp.vocab_size);
      position += n;
    }
    return Status::ok();
  }
};

Generator::Generator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Generator::~Generator() = default;

Result<std::unique_ptr<Generator>> Generator::load(const std::string& path, const GeneratorOptions& options) {
  const auto load_start = std::chrono::steady_clock::now();
  auto impl = std::make_unique<Impl>();
  {
    // The package's metadata, from a mapping of the file: only the pages of the metadata are read
    // here (the session maps it again and reads the weights from the same cached pages). An
    // artifact compiled from a package carries it as an asset.
    KILN_ASSIGN_OR_RETURN(const io::FileImage image, io::map_file_image(path));
    std::string carried;
    std::string_view metadata = image.bytes;
    if (!frontend::gguf::looks_like_gguf(image.bytes)) {
      KILN_ASSIGN_OR_RETURN(impl->session, Session::load(path, options.session));
      Result<std::string> asset = impl->session->asset(frontend::gguf::kPackageMetadataAsset);
      if (!asset.is_ok())
        return invalid_argument(path + " is neither a GGUF package nor an artifact compiled from one: " + asset.status().message());
      carried = std::move(asset).value();
      metadata = carried;
      // The first call the compile recorded, run and checked against its recorded logits: the
      // artifact still computes what it did where it was compiled.
      KILN_RETURN_IF_ERROR(impl->session->warm_up());
    }
    KILN_ASSIGN_OR_RETURN(const frontend::gguf::GgufFile file, frontend::gguf::parse_gguf(metadata, path));
    KILN_ASSIGN_OR_RETURN(impl->hp, frontend::gguf::read_hyperparameters(file));
    KILN_ASSIGN_OR_RETURN(impl->tokenizer, frontend::gguf::make_tokenizer(file));
    const frontend::gguf::Vocabulary& vocab = impl->tokenizer->vocabulary();
    if (vocab.eos != frontend::gguf::Vocabulary::kNoToken) impl->end_tokens.push_back(vocab.eos);
    if (const frontend::gguf::MetadataValue* eot = file.find("tokenizer.ggml.eot_token_id"); eot && eot->is_integer())
      impl->end_tokens.push_back(static_cast<int32_t>(eot->as_int()));
  }
  const int64_t model_context = std::min(impl->hp.context_length, frontend::gguf::kMaxRotaryPositions);
  if (options.context < 0 || options.context > model_context)
    return invalid_argument("context " + std::to_string(options.context) + " is outside 1.." + std::to_string(model_context) +
                            " (the model's context length)");
  if (options.batch <= 0) return invalid_argument("batch must be positive, got " + std::to_string(options.batch));
  impl->context = options.context > 0 ? options.context : std::min(model_context, kDefaultContext);
  impl->batch = options.batch;
  if (!impl->session) {
    KILN_ASSIGN_OR_RETURN(impl->session, Session::load(path, options.session));
  }
  KILN_ASSIGN_OR_RETURN(impl->stream, impl->session->open_stream());
  // Every block's cache: zeros in buffers of the stream's own (charged to the session's memory
  // budget, resident only as the context fills), written in place from the first call.
  const std::vector<int64_t> cache_shape = {1, impl->hp.kv_heads, impl->context, impl->hp.head_size};
  for (int64_t b = 0; b < impl->hp.blocks; ++b) {
    KILN_RETURN_IF_ERROR(impl->stream->bind_zeros(DecoderNames::past_key(b), cache_shape));
    KILN_RETURN_IF_ERROR(impl->stream->bind_zeros(DecoderNames::past_value(b), cache_shape));
    KILN_RETURN_IF_ERROR(impl->stream->carry(DecoderNames::present_key(b), DecoderNames::past_key(b)));
    KILN_RETURN_IF_ERROR(impl->stream->carry(DecoderNames::present_value(b), DecoderNames::past_value(b)));
  }
  impl->load_ms = ms_between(load_start, std::chrono::steady_clock::now());
  return std::unique_ptr<Generator>(new Generator(std::move(impl)));
}

Result<std::vector<int32_t>> Generator::tokenize(const std::string& text, bool add_special) const {
  return impl_->tokenizer->encode(text, add_special, add_special);
}

Result<std::string> Generator::detokenize(const std::vector<int32_t>& tokens) const { return impl_->tokenizer->decode(tokens); }

Result<GenerationStats> Generator::generate(const std::vector<int32_t>& prompt, int64_t max_tokens, const SamplingOptions& sampling,
                                            const TokenCallback& on_token, Tensor* logits) {
  Impl& g = *impl_;
  if (prompt.empty()) return invalid_argument("the prompt is empty");
  if (max_tokens < 0) return invalid_argument("max_tokens is negative");
  KILN_RETURN_IF_ERROR(g.check_tokens(prompt));
  const int64_t prompt_tokens = static_cast<int64_t>(prompt.size());
  if (prompt_tokens + max_tokens > g.context)
    return invalid_argument("the prompt's " + std::to_string(prompt_tokens) + " tokens and " + std::to_string(max_tokens) +
                            " to generate exceed the context of " + std::to_string(g.context) + " positions");
  g.reset();
  GenerationStats stats;
  stats.prompt_tokens = prompt_tokens;
  std::vector<float> all_logits, last;
  std::vector<float>* kept = logits ? &all_logits : nullptr;
  runtime::TokenSampler sampler(sampling);
  const auto start = std::chrono::steady_clock::now();
  KILN_RETURN_IF_ERROR(g.evaluate(prompt.data(), prompt_tokens, kept, last));
  const auto prompt_done = std::chrono::steady_clock::now();
  std::string pending;  // bytes of a UTF-8 character not yet complete
  auto first_token = prompt_done;
  for (int64_t i = 0; i < max_tokens; ++i) {
    const int32_t token = sampler.sample(last.data(), g.hp.vocab_size);
    if (i == 0) {
      first_token = std::chrono::steady_clock::now();
      stats.time_to_first_token_ms = ms_between(start, first_token);
    }
    if (sampling.stop_at_end_of_generation && std::find(g.end_tokens.begin(), g.end_tokens.end(), token) != g.end_tokens.end()) break;
    ++stats.generated_tokens;
    KILN_ASSIGN_OR_RETURN(const std::string piece, g.tokenizer->token_piece(token));
    pending += piece;
    const size_t ready = complete_utf8_prefix(pending);
    const std::string text = pending.substr(0, ready);
    pending.erase(0, ready);
    if (on_token && !on_token(token, text)) break;
    // The last token needs no call unless its logits are asked for.
    if (i + 1 < max_tokens || kept) KILN_RETURN_IF_ERROR(g.evaluate(&token, 1, kept, last));
  }
  const auto end = std::chrono::steady_clock::now();
  const double prompt_ms = ms_between(start, prompt_done);
  stats.prompt_tokens_per_second = prompt_ms > 0 ? 1000.0 * static_cast<double>(prompt_tokens) / prompt_ms : 0;
  const double generation_ms = ms_between(first_token, end);
  stats.generation_tokens_per_second =
      stats.generated_tokens > 1 && generation_ms > 0 ? 1000.0 * static_cast<double>(stats.generated_tokens - 1) / generation_ms : 0;
  stats.peak_resident_bytes = peak_resident_bytes();
  g.last_generation = stats;
  if (logits) {
    const int64_t rows = static_cast<int64_t>(all_logits.size()) / g.hp.vocab_size;
    *logits = Tensor::allocate(DType::kFloat, {rows, g.hp.vocab_size});
    std::memcpy(logits->data<float>(), all_logits.data(), all_logits.size() * sizeof(float));
  }
  return stats;
}

Result<Tensor> Generator::logits(const std::vector<int32_t>& tokens) {
  Impl& g = *impl_;
  if (tokens.empty()) return invalid_argument("no tokens");
  KILN_RETURN_IF_ERROR(g.check_tokens(tokens));
  if (static_cast<int64_t>(tokens.size()) > g.context)
    return invalid_argument(std::to_string(tokens.size()) + " tokens exceed the context of " + std::to_string(g.context) + " positions");
  g.reset();
  std::vector<float> all, last;
  KILN_RETURN_IF_ERROR(g.evaluate(tokens.data(), static_cast<int64_t>(tokens.size()), &all, last));
  Tensor out = Tensor::allocate(DType::kFloat, {static_cast<int64_t>(tokens.size()), g.hp.vocab_size});
  std::memcpy(out.data<float>(), all.data(), all.size() * sizeof(float));
  return out;
}

int64_t Generator::vocab_size() const { return impl_->hp.vocab_size; }
int64_t Generator::context() const { return impl_->context; }
const Session& Generator::session() const { return *impl_->session; }

std::string Generator::report_json(int indent) const {
  const Impl& g = *impl_;
  const GenerationStats& last = g.last_generation;
  report::Report report = SessionAccess::report(*g.session);
  report.generation = report::GenerationSection{
      g.context,
      2 * g.hp.blocks * g.hp.kv_heads * g.context * g.hp.head_size * static_cast<int64_t>(sizeof(float)),
      g.load_ms,
      last.prompt_tokens,
      last.generated_tokens,
      last.time_to_first_token_ms,
      last.prompt_tokens_per_second,
      last.generation_tokens_per_second,
      last.peak_resident_bytes};
  return report::to_json(report, indent);
}

}  // namespace kiln
