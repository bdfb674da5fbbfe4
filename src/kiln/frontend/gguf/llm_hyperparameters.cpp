// A GGUF decoder's architecture table and hyperparameters (llm_hyperparameters.h).
#include "kiln/frontend/gguf/llm_hyperparameters.h"

#include <cmath>

namespace kiln::frontend::gguf {

const std::vector<LlmArchitecture>& llm_architectures() {
  static const std::vector<LlmArchitecture> table = {
      // name    interleaved  qkv_bias qk_norm fused_qkv fused_gate_up
      {"llama", true, false, false, false, false},
      {"qwen2", false, true, false, false, false},
      {"qwen3", false, false, true, false, false},
      {"phi3", false, false, false, true, true},
  };
  return table;
}

namespace {

// Reads the metadata of one file under `prefix` (the architecture's name).
class MetadataReader {
 public:
  MetadataReader(const GgufFile& file, std::string prefix) : file_(file), prefix_(std::move(prefix)) {}

  std::string key(std::string_view name) const { return prefix_ + "." + std::string(name); }

  // A positive integer; `fallback` when absent (0: required).
  Result<int64_t> positive(std::string_view name, int64_t fallback = 0) const {
    const std::string k = key(name);
    const MetadataValue* v = file_.find(k);
    if (!v) {
      if (fallback > 0) return fallback;
      return invalid_model("GGUF key " + k + " is missing");
    }
    if (!v->is_integer()) return invalid_model("GGUF key " + k + " must be an integer, not " + std::string(value_type_name(v->type)));
    const int64_t value = v->as_int();
    if (value <= 0 || value > (int64_t{1} << 32)) return invalid_model("GGUF key " + k + " is " + std::to_string(value) + ": out of range");
    return value;
  }

  // A finite positive float; `fallback` when absent (0: required).
  Result<double> positive_float(std::string_view name, double fallback = 0) const {
    const std::string k = key(name);
    const MetadataValue* v = file_.find(k);
    if (!v) {
      if (fallback > 0) return fallback;
      return invalid_model("GGUF key " + k + " is missing");
    }
    if (v->type != ValueType::kF32 && v->type != ValueType::kF64 && !v->is_integer())
      return invalid_model("GGUF key " + k + " must be a number, not " + std::string(value_type_name(v->type)));
    const double value = v->as_float();
    if (!std::isfinite(value) || value <= 0) return invalid_model("GGUF key " + k + " is " + std::to_string(value) + ": out of range");
    return value;
  }

 private:
  const GgufFile& file_;
  std::string prefix_;
};

Result<LlmArchitecture> architecture_of(const GgufFile& file) {
  const MetadataValue* name = file.find("general.architecture");
  if (!name || name->type != ValueType::kString) return invalid_model("GGUF key general.architecture is missing or not a string");
  for (const LlmArchitecture& a : llm_architectures())
    if (a.name == name->string_value) return a;
  std::string known;
  for (const LlmArchitecture& a : llm_architectures()) known += (known.empty() ? "" : ", ") + std::string(a.name);
  return unsupported_operator("GGUF architecture " + name->string_value + " is not supported (Kiln builds " + known + ")");
}

int64_t token_count(const GgufFile& file) {
  const MetadataValue* tokens = file.find("tokenizer.ggml.tokens");
  return tokens && tokens->type == ValueType::kArray ? static_cast<int64_t>(tokens->elements.size()) : 0;
}

}  // namespace

Result<LlmHyperparameters> read_hyperparameters(const GgufFile& file) {
  LlmHyperparameters hp;
  KILN_ASSIGN_OR_RETURN(hp.architecture, architecture_of(file));
  const MetadataReader m(file, std::string(hp.architecture.name));
  KILN_ASSIGN_OR_RETURN(hp.context_length, m.positive("context_length"));
  KILN_ASSIGN_OR_RETURN(hp.embedding, m.positive("embedding_length"));
  KILN_ASSIGN_OR_RETURN(hp.blocks, m.positive("block_count"));
  KILN_ASSIGN_OR_RETURN(hp.feed_forward, m.positive("feed_forward_length"));
  KILN_ASSIGN_OR_RETURN(hp.heads, m.positive("attention.head_count"));
  KILN_ASSIGN_OR_RETURN(hp.kv_heads, m.positive("attention.head_count_kv", hp.heads));
  if (hp.heads % hp.kv_heads != 0)
    return invalid_model("GGUF key " + m.key("attention.head_count_kv") + " (" + std::to_string(hp.kv_heads) +
                         ") does not divide attention.head_count (" + std::to_string(hp.heads) + ")");
  if (hp.embedding % hp.heads != 0 && !file.find(m.key("attention.key_length")))
    return invalid_model("GGUF key " + m.key("embedding_length") + " (" + std::to_string(hp.embedding) +
                         ") is not a multiple of attention.head_count and attention.key_length is missing");
  KILN_ASSIGN_OR_RETURN(hp.head_size, m.positive("attention.key_length", hp.embedding / hp.heads));
  KILN_ASSIGN_OR_RETURN(const int64_t value_size, m.positive("attention.value_length", hp.head_size));
  if (value_size != hp.head_size)
    return unsupported_operator("GGUF key " + m.key("attention.value_length") + " differs from attention.key_length: not supported");
  KILN_ASSIGN_OR_RETURN(hp.rope_dimensions, m.positive("rope.dimension_count", hp.head_size));
  if (hp.rope_dimensions > hp.head_size || hp.rope_dimensions % 2 != 0)
    return invalid_model("GGUF key " + m.key("rope.dimension_count") + " (" + std::to_string(hp.rope_dimensions) +
                         ") must be even and at most the head size " + std::to_string(hp.head_size));
  KILN_ASSIGN_OR_RETURN(hp.rope_freq_base, m.positive_float("rope.freq_base", 10000.0));
  KILN_ASSIGN_OR_RETURN(hp.rms_epsilon, m.positive_float("attention.layer_norm_rms_epsilon"));
  const int64_t tokens = token_count(file);
  KILN_ASSIGN_OR_RETURN(hp.vocab_size, m.positive("vocab_size", tokens > 0 ? tokens : 0));
  for (const char* scaling : {"rope.scaling.type", "rope.scaling.factor"})
    if (const MetadataValue* v = file.find(m.key(scaling)); v && !(v->type == ValueType::kString && v->string_value == "none") &&
                                                              !(v->type != ValueType::kString && v->as_float() == 1.0))
      return unsupported_operator("GGUF key " + m.key(scaling) + ": rope scaling is not supported yet");
  return hp;
}

}  // namespace kiln::frontend::gguf
