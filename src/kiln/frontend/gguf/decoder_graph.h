// The IR graph of a GGUF decoder (the architectures of llm_hyperparameters.h), built from its
// hyperparameters and tensors, so that the same analysis, passes, partition, memory plan and report
// apply to it as to an ONNX model. One call processes `sequence` new tokens after the ones in a key/
// value cache preallocated for the context (names as Hugging Face optimum's exports, the cache as
// ONNX Runtime GenAI's shared past/present buffer):
//   inputs   input_ids [1, sequence] int64, position_ids [1, sequence] int64 (each token's
//            position; the first one's is the number of tokens cached, p), past_key_values.<b>.key /
//            .value [1, kv_heads, cache_length, head_size] float32 for each block b, valid up to p,
//            logits_indices [logits_count] int64: the tokens of this call (0..sequence-1) whose
//            logits are computed (the last alone to pick the next token, all of them to score)
//   outputs  logits [1, logits_count, vocab] float32, present.<b>.key / .value: the cache with this
//            call's keys and values written at p..p+sequence-1 (kiln.TensorScatter, ONNX's
//            TensorScatter-24), the next call's past: a stream carries it in place
// A block: RMSNormalization -> Q/K/V products (biases, per-head norms, a fused projection as the
// architecture has them) -> RotaryEmbedding of Q and K -> kiln.Attention over the cache's valid
// keys (kv_length p + sequence) with grouped heads and a causal mask -> output product -> residual; RMSNormalization -> SwiGLU
// feed-forward -> residual. Then the output norm and head (token_embd when there is no output.weight).
// A block-quantized weight (Q4_0, Q8_0, the K types...) is multiplied in the quantized domain
// (kiln.BlockQuantizedMatMul over its bytes) and looked up in place (kiln.BlockQuantizedGather, the
// token embeddings); its constant is a view of its bytes in the file, never a copy. Float ones
// (F32, F16, BF16) are float32 constants of their own. A tensor missing or of a shape the
// hyperparameters contradict is an InvalidModel naming it.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "kiln/frontend/gguf/gguf_file.h"
#include "kiln/frontend/gguf/llm_hyperparameters.h"
#include "kiln/ir/graph.h"
#include "kiln/status.h"

namespace kiln::frontend::gguf {

// The names of the decoder's inputs and outputs.
struct DecoderNames {
  static constexpr const char* kInputIds = "input_ids";
  static constexpr const char* kPositionIds = "position_ids";
  static constexpr const char* kLogitsIndices = "logits_indices";
  static constexpr const char* kLogits = "logits";
  static std::string past_key(int64_t block) { return "past_key_values." + std::to_string(block) + ".key"; }
  static std::string past_value(int64_t block) { return "past_key_values." + std::to_string(block) + ".value"; }
  static std::string present_key(int64_t block) { return "present." + std::to_string(block) + ".key"; }
  static std::string present_value(int64_t block) { return "present." + std::to_string(block) + ".value"; }
};

// Valid inputs of the decoder: token 0 at position 0 over a zero cache of one position, its logits
// asked for (a compiled package's warm-up fixture, ir::Model::example_inputs).
std::map<std::string, Tensor> decoder_example_inputs(const LlmHyperparameters& hp);

// The decoder's graph; `max_positions` rows of rotary angles are precomputed (the context length).
// `file_bytes` owns the bytes `file` views (a mapped file): each block-quantized constant shares it
// (null: the caller keeps the bytes alive as long as the graph).
Result<std::unique_ptr<ir::Graph>> build_decoder_graph(const GgufFile& file, const std::shared_ptr<const char>& file_bytes,
                                                       const LlmHyperparameters& hp, int64_t max_positions);

}  // namespace kiln::frontend::gguf
