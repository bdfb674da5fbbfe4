// A GGUF decoder's architecture and hyperparameters, read from the file's metadata. The
// architectures Kiln builds are one table (llm_architectures()): each row says how that family
// differs from llama (rotary style, Q/K/V biases, per-head Q/K norms, fused projections); any other
// `general.architecture` is refused naming it. A missing required key, or one of the wrong type
// or out of range, is an InvalidModel naming the key.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/frontend/gguf/gguf_file.h"
#include "kiln/status.h"

namespace kiln::frontend::gguf {

struct LlmArchitecture {
  std::string_view name;         // general.architecture: "llama"
  bool rope_interleaved = true;  // rotates adjacent pairs (llama) rather than the two halves
  bool qkv_bias = false;         // attn_q/k/v have biases (qwen2)
  bool qk_norm = false;          // per-head RMS norms of Q and K before the rotation (qwen3)
  bool fused_qkv = false;        // one attn_qkv projection (phi3)
  bool fused_gate_up = false;    // ffn_up holds gate then up, 2 x feed-forward rows (phi3)
};

// Every architecture Kiln builds.
const std::vector<LlmArchitecture>& llm_architectures();

struct LlmHyperparameters {
  LlmArchitecture architecture;
  int64_t context_length = 0;
  int64_t embedding = 0;        // width of the residual stream
  int64_t blocks = 0;
  int64_t feed_forward = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;         // grouped-query attention: heads / kv_heads queries share a key
  int64_t head_size = 0;        // attention.key_length, else embedding / heads
  int64_t rope_dimensions = 0;  // rope.dimension_count, else head_size
  double rope_freq_base = 10000;
  double rms_epsilon = 0;
  int64_t vocab_size = 0;       // vocab_size, else the tokenizer's token count, else output rows
};

// The decoder's hyperparameters. UnsupportedOperator naming an architecture outside the table.
Result<LlmHyperparameters> read_hyperparameters(const GgufFile& file);

}  // namespace kiln::frontend::gguf
