// The IR graph of a GGUF decoder (decoder_graph.h).
#include "kiln/frontend/gguf/decoder_graph.h"

#include <cmath>
#include <optional>

#include "kiln/ops/block_quantized_matmul.h"

namespace kiln::frontend::gguf {
namespace {

std::string shape_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

class DecoderBuilder {
 public:
  DecoderBuilder(const GgufFile& file, std::shared_ptr<const char> file_bytes, const LlmHyperparameters& hp)
      : file_(file), file_bytes_(std::move(file_bytes)), hp_(hp), graph_(std::make_unique<ir::Graph>("decoder")) {}

  Result<std::unique_ptr<ir::Graph>> build(int64_t max_positions) {
    const ir::Dim seq = ir::Dim::symbol("sequence");
    ir::Value* ids = input(DecoderNames::kInputIds, {DType::kInt64, ir::Shape({1, seq})});
    positions_ = input(DecoderNames::kPositionIds, {DType::kInt64, ir::Shape({1, seq})});
    const ir::Dim logits_count = ir::Dim::symbol("logits_count");
    ir::Value* logits_indices = input(DecoderNames::kLogitsIndices, {DType::kInt64, ir::Shape({logits_count})});
    cache_type_ = {DType::kFloat, ir::Shape({1, hp_.kv_heads, ir::Dim::symbol("cache_length"), hp_.head_size})};
    std::vector<ir::Value*> pasts;
    for (int64_t b = 0; b < hp_.blocks; ++b)
      for (const std::string& name : {DecoderNames::past_key(b), DecoderNames::past_value(b)}) pasts.push_back(input(name, cache_type_));
    KILN_RETURN_IF_ERROR(read_freq_factors());
    rotary_tables(max_positions);
    // This call's tokens go to the cache at the first one's position; the keys up to the last one's
    // are valid.
    write_index_ = op("Gather", {positions_, int_constant({0}, {})}, {{"axis", ir::Attribute::of_int(1)}});  // [1]
    ir::Value* sequence = op("Gather", {op("Shape", {ids}), int_constant({1}, {})}, {{"axis", ir::Attribute::of_int(0)}});
    valid_keys_ = op("Add", {write_index_, sequence});

    KILN_ASSIGN_OR_RETURN(ir::Value* x, embed(reshape(ids, {-1})));  // [sequence, embedding]
    for (int64_t b = 0; b < hp_.blocks; ++b) {
      KILN_ASSIGN_OR_RETURN(x, block(b, x, pasts[static_cast<size_t>(2 * b)], pasts[static_cast<size_t>(2 * b + 1)]));
    }
    // Only the rows whose logits are asked for go through the output norm and head (a prompt's
    // next token needs the last one's alone).
    x = op("Gather", {x, logits_indices}, {{"axis", ir::Attribute::of_int(0)}});
    KILN_ASSIGN_OR_RETURN(ir::Value* norm, weight("output_norm.weight", {hp_.embedding}));
    x = rms_norm(x, norm);
    // The head: output.weight, or tied to the token embeddings.
    KILN_ASSIGN_OR_RETURN(ir::Value* logits,
                          linear(x, file_.tensor("output.weight") ? "output.weight" : "token_embd.weight", hp_.vocab_size, hp_.embedding));
    output(reshape(logits, {1, -1, hp_.vocab_size}), DecoderNames::kLogits, {DType::kFloat, ir::Shape({1, logits_count, hp_.vocab_size})});
    return std::move(graph_);
  }

 private:
  // ---- one block ----
  Result<ir::Value*> block(int64_t b, ir::Value* x, ir::Value* past_key, ir::Value* past_value) {
    const std::string p = "blk." + std::to_string(b) + ".";
    const int64_t q_width = hp_.heads * hp_.head_size, kv_width = hp_.kv_heads * hp_.head_size;
    KILN_ASSIGN_OR_RETURN(ir::Value* attn_norm, weight(p + "attn_norm.weight", {hp_.embedding}));
    ir::Value* h = rms_norm(x, attn_norm);
    ir::Value *q = nullptr, *k = nullptr, *v = nullptr;
    if (hp_.architecture.fused_qkv) {
      KILN_ASSIGN_OR_RETURN(ir::Value* qkv, linear(h, p + "attn_qkv.weight", q_width + 2 * kv_width, hp_.embedding));
      std::vector<ir::Value*> parts = split(qkv, {q_width, kv_width, kv_width});
      q = parts[0], k = parts[1], v = parts[2];
    } else {
      KILN_ASSIGN_OR_RETURN(q, projection(h, p + "attn_q", q_width, hp_.architecture.qkv_bias));
      KILN_ASSIGN_OR_RETURN(k, projection(h, p + "attn_k", kv_width, hp_.architecture.qkv_bias));
      KILN_ASSIGN_OR_RETURN(v, projection(h, p + "attn_v", kv_width, hp_.architecture.qkv_bias));
    }
    if (hp_.architecture.qk_norm) {
      KILN_ASSIGN_OR_RETURN(ir::Value* q_norm, weight(p + "attn_q_norm.weight", {hp_.head_size}));
      KILN_ASSIGN_OR_RETURN(ir::Value* k_norm, weight(p + "attn_k_norm.weight", {hp_.head_size}));
      q = reshape(rms_norm(reshape(q, {-1, hp_.heads, hp_.head_size}), q_norm), {-1, q_width});
      k = reshape(rms_norm(reshape(k, {-1, hp_.kv_heads, hp_.head_size}), k_norm), {-1, kv_width});
    }
    // [sequence, heads * head] -> rotated -> Q [1, group, kv_heads, sequence, head] (query head
    // h = kv * group + g reads key head kv), K and V [1, kv_heads, sequence, head].
    const int64_t group = hp_.heads / hp_.kv_heads;
    q = transpose(reshape(rotate(q, hp_.heads), {1, -1, hp_.kv_heads, group, hp_.head_size}), {0, 3, 2, 1, 4});
    k = transpose(reshape(rotate(k, hp_.kv_heads), {1, -1, hp_.kv_heads, hp_.head_size}), {0, 2, 1, 3});
    v = transpose(reshape(v, {1, -1, hp_.kv_heads, hp_.head_size}), {0, 2, 1, 3});
    ir::Value* present_key = op("TensorScatter", {past_key, k, write_index_}, {{"axis", ir::Attribute::of_int(2)}}, "kiln");
    ir::Value* present_value = op("TensorScatter", {past_value, v, write_index_}, {{"axis", ir::Attribute::of_int(2)}}, "kiln");
    output(present_key, DecoderNames::present_key(b), cache_type_);
    output(present_value, DecoderNames::present_value(b), cache_type_);
    if (!mask_) mask_ = causal_mask(present_key);
    // The cache's keys and values broadcast over the group dim; only the valid ones are read.
    ir::Value* attention = op("Attention", {q, present_key, present_value, mask_, nullptr, valid_keys_},
                              {{"scale", ir::Attribute::of_float(static_cast<float>(1.0 / std::sqrt(static_cast<double>(hp_.head_size))))},
                               {"kt_perm", ir::Attribute::of_ints({0, 1, 3, 2})}},
                              "kiln");
    ir::Value* merged = reshape(transpose(attention, {0, 3, 2, 1, 4}), {-1, q_width});
    KILN_ASSIGN_OR_RETURN(ir::Value* attn_out, projection(merged, p + "attn_output", hp_.embedding, false, q_width));
    x = op("Add", {x, attn_out});

    KILN_ASSIGN_OR_RETURN(ir::Value* ffn_norm, weight(p + "ffn_norm.weight", {hp_.embedding}));
    h = rms_norm(x, ffn_norm);
    ir::Value *gate = nullptr, *up = nullptr;
    if (hp_.architecture.fused_gate_up) {
      KILN_ASSIGN_OR_RETURN(ir::Value* gate_up, linear(h, p + "ffn_up.weight", 2 * hp_.feed_forward, hp_.embedding));
      std::vector<ir::Value*> parts = split(gate_up, {hp_.feed_forward, hp_.feed_forward});
      gate = parts[0], up = parts[1];
    } else {
      KILN_ASSIGN_OR_RETURN(gate, projection(h, p + "ffn_gate", hp_.feed_forward, false));
      KILN_ASSIGN_OR_RETURN(up, projection(h, p + "ffn_up", hp_.feed_forward, false));
    }
    ir::Value* swiglu = op("Mul", {op("Mul", {gate, op("Sigmoid", {gate})}), up});
    KILN_ASSIGN_OR_RETURN(ir::Value* down, projection(swiglu, p + "ffn_down", hp_.embedding, false, hp_.feed_forward));
    return op("Add", {x, down});
  }

  // The token embeddings of `ids`: rows of token_embd.weight, a block-quantized table read in place
  // (kiln.BlockQuantizedGather), a float one widened to float32 (Gather).
  Result<ir::Value*> embed(ir::Value* ids) {
    const TensorInfo* t = file_.tensor("token_embd.weight");
    if (t && t->type.block_values > 1) {
      KILN_ASSIGN_OR_RETURN(ir::Value* blocks, block_weight(*t, {hp_.vocab_size, hp_.embedding}));
      return op("BlockQuantizedGather", {blocks, ids}, {{ops::kBlockTypeAttribute, ir::Attribute::of_int(t->type_id)}}, "kiln");
    }
    KILN_ASSIGN_OR_RETURN(ir::Value* table, weight("token_embd.weight", {hp_.vocab_size, hp_.embedding}));
    return op("Gather", {table, ids});
  }

  // x [rows, in] times the weight `<name>.weight` [out, in] (+ `<name>.bias` [out]).
  Result<ir::Value*> projection(ir::Value* x, const std::string& name, int64_t out, bool bias, int64_t in = 0) {
    KILN_ASSIGN_OR_RETURN(ir::Value* y, linear(x, name + ".weight", out, in > 0 ? in : hp_.embedding));
    if (!bias) return y;
    KILN_ASSIGN_OR_RETURN(ir::Value* b, weight(name + ".bias", {out}));
    return op("Add", {y, b});
  }

  // x [rows, in] times the weight tensor `name` [out, in]: in the quantized domain for a
  // block-quantized tensor (kiln.BlockQuantizedMatMul over its blocks), else as a float product.
  Result<ir::Value*> linear(ir::Value* x, const std::string& name, int64_t out, int64_t in) {
    const TensorInfo* t = file_.tensor(name);
    if (!t || t->type.block_values == 1) {
      KILN_ASSIGN_OR_RETURN(ir::Value* w, weight(name, {out, in}));
      return op("Gemm", {x, w}, {{"transB", ir::Attribute::of_int(1)}});
    }
    KILN_ASSIGN_OR_RETURN(ir::Value* blocks, block_weight(*t, {out, in}));
    return op("BlockQuantizedMatMul", {x, blocks}, {{ops::kBlockTypeAttribute, ir::Attribute::of_int(t->type_id)}}, "kiln");
  }

  ir::Value* rms_norm(ir::Value* x, ir::Value* scale) {
    return op("RMSNormalization", {x, scale},
              {{"axis", ir::Attribute::of_int(-1)}, {"epsilon", ir::Attribute::of_float(static_cast<float>(hp_.rms_epsilon))}}, "kiln");
  }

  // x [sequence, heads * head] rotated per head at the tokens' positions.
  ir::Value* rotate(ir::Value* x, int64_t heads) {
    ir::Value* rotated = op("RotaryEmbedding", {reshape(x, {1, -1, heads * hp_.head_size}), cos_, sin_, positions_},
                            {{"num_heads", ir::Attribute::of_int(heads)},
                             {"rotary_embedding_dim", ir::Attribute::of_int(hp_.rope_dimensions)},
                             {"interleaved", ir::Attribute::of_int(hp_.architecture.rope_interleaved ? 1 : 0)}},
                            "kiln");
    return rotated;
  }

  // The rotary angles' cosines and sines for every position: angle(p, i) = p * base^(-2i / dims)
  // (divided by rope_freqs.weight[i] where the file has one), computed in float as llama.cpp
  // computes them, so positions deep in the context rotate alike.
  void rotary_tables(int64_t max_positions) {
    const int64_t half = hp_.rope_dimensions / 2;
    Tensor cos = Tensor::allocate(DType::kFloat, {max_positions, half}), sin = Tensor::allocate(DType::kFloat, {max_positions, half});
    const float theta_scale = std::pow(static_cast<float>(hp_.rope_freq_base), -2.0f / static_cast<float>(hp_.rope_dimensions));
    for (int64_t p = 0; p < max_positions; ++p) {
      float theta = static_cast<float>(p);
      for (int64_t i = 0; i < half; ++i) {
        const float angle = theta / (freq_factors_.empty() ? 1.0f : freq_factors_[static_cast<size_t>(i)]);
        cos.data<float>()[p * half + i] = std::cos(angle);
        sin.data<float>()[p * half + i] = std::sin(angle);
        theta *= theta_scale;
      }
    }
    cos_ = graph_->add_constant("rotary_cos", std::move(cos));
    sin_ = graph_->add_constant("rotary_sin", std::move(sin));
  }

  // rope_freqs.weight (Llama 3's per-pair frequency divisors), when the file has it.
  Status read_freq_factors() {
    const TensorInfo* factors = file_.tensor("rope_freqs.weight");
    if (!factors) return Status::ok();
    if (factors->element_count() != hp_.rope_dimensions / 2)
      return invalid_model("GGUF tensor rope_freqs.weight has " + std::to_string(factors->element_count()) + " values, expected " +
                           std::to_string(hp_.rope_dimensions / 2));
    freq_factors_.resize(static_cast<size_t>(factors->element_count()));
    return ops::dequantize(factors->type, factors->data.data(), factors->element_count(), freq_factors_.data());
  }

  // mask [sequence, cache]: true where key j comes after query i's position (j > position_i).
  ir::Value* causal_mask(ir::Value* present_key) {
    ir::Value* total = op("Gather", {op("Shape", {present_key}), int_constant({2}, {})}, {{"axis", ir::Attribute::of_int(0)}});
    ir::Value* keys = op("Range", {int_constant({0}, {}), total, int_constant({1}, {})});
    return op("Greater", {reshape(keys, {1, -1}), reshape(positions_, {-1, 1})});
  }

  // ---- weights ----
  // The tensor `name`, which must have `shape` (outermost first), as a float32 constant of its own:
  // converted from F16 and BF16, and copied from F32 as well, since a kernel that is a constant's
  // only reader may pack it in place into its storage (the cpu provider's oneDNN weights), which a
  // read-only mapping cannot take. These are the norms and biases (the few float weights of a
  // quantized package), or a float package's all.
  Result<ir::Value*> weight(const std::string& name, const std::vector<int64_t>& shape) {
    if (ir::Value* known = graph_->find_value(name)) return known;
    const TensorInfo* t = file_.tensor(name);
    if (!t) return invalid_model("GGUF tensor " + name + " is missing (architecture " + std::string(hp_.architecture.name) + ")");
    const std::vector<int64_t> dims(t->dims.rbegin(), t->dims.rend());
    if (dims != shape)
      return invalid_model("GGUF tensor " + name + " has shape " + shape_text(dims) + ", the hyperparameters give " + shape_text(shape));
    Tensor values = Tensor::allocate(DType::kFloat, shape);
    Status s = ops::dequantize(t->type, t->data.data(), t->element_count(), values.data<float>());
    if (!s.is_ok()) return Status(s.code(), "GGUF tensor " + name + ": " + s.message());
    return graph_->add_constant(name, std::move(values));
  }

  // A block-quantized tensor, which must have `shape` [out, in], as its bytes: uint8 [out, row bytes],
  // a view of them in the file that keeps the file's bytes alive (its kernels only read it, with
  // unaligned loads: a block's bytes have no alignment to keep).
  Result<ir::Value*> block_weight(const TensorInfo& t, const std::vector<int64_t>& shape) {
    const std::string name = t.name + ".blocks";
    if (ir::Value* known = graph_->find_value(name)) return known;
    const std::vector<int64_t> dims(t.dims.rbegin(), t.dims.rend());
    if (dims != shape)
      return invalid_model("GGUF tensor " + t.name + " has shape " + shape_text(dims) + ", the hyperparameters give " + shape_text(shape));
    const int64_t row_bytes = shape[1] / t.type.block_values * t.type.block_bytes;
    std::shared_ptr<void> bytes(std::const_pointer_cast<char>(file_bytes_), const_cast<char*>(t.data.data()));
    return graph_->add_constant(name, Tensor::shared_view(DType::kUInt8, {shape[0], row_bytes}, std::move(bytes)));
  }

  ir::Value* int_constant(const std::vector<int64_t>& values, const std::vector<int64_t>& shape) {
    return graph_->add_constant(graph_->unique_name("const"), Tensor::from_vector(DType::kInt64, shape, values));
  }

  // ---- nodes ----
  // A node's name, unique in the graph (its outputs are named after it: an artifact requires
  // every value name once).
  std::string fresh_name(const std::string& type) { return type + "." + std::to_string(++nodes_); }

  ir::Value* op(const std::string& type, std::vector<ir::Value*> inputs, std::map<std::string, ir::Attribute> attributes = {},
                const std::string& domain = "") {
    const std::string name = fresh_name(type);
    ir::Value* out = graph_->add_value(name);
    ir::Node* node = graph_->add_node(type, std::move(inputs), {out}, name, domain, domain.empty() ? 17 : 1);
    node->attributes = std::move(attributes);
    return out;
  }

  ir::Value* reshape(ir::Value* x, const std::vector<int64_t>& shape) {
    return op("Reshape", {x, int_constant(shape, {static_cast<int64_t>(shape.size())})});
  }
  ir::Value* transpose(ir::Value* x, const std::vector<int64_t>& perm) { return op("Transpose", {x}, {{"perm", ir::Attribute::of_ints(perm)}}); }

  // x's last axis cut into pieces of `sizes`.
  std::vector<ir::Value*> split(ir::Value* x, const std::vector<int64_t>& sizes) {
    const std::string name = fresh_name("Split");
    std::vector<ir::Value*> outs;
    for (size_t i = 0; i < sizes.size(); ++i) outs.push_back(graph_->add_value(name + "_" + std::to_string(i)));
    ir::Node* node = graph_->add_node("Split", {x, int_constant(sizes, {static_cast<int64_t>(sizes.size())})}, outs, name, "", 17);
    node->attributes["axis"] = ir::Attribute::of_int(-1);
    return outs;
  }

  ir::Value* input(const std::string& name, ir::TensorType type) {
    ir::Value* v = graph_->add_value(name, std::move(type));
    graph_->inputs.push_back(v);
    return v;
  }

  // `v` as the graph output `name`, declared of `type` (a hint, as an ONNX model's declarations are).
  void output(ir::Value* v, const std::string& name, ir::TensorType type) {
    graph_->rename_value(v, name);
    v->type = std::move(type);
    graph_->outputs.push_back(v);
  }

  const GgufFile& file_;
  const std::shared_ptr<const char> file_bytes_;
  const LlmHyperparameters& hp_;
  std::unique_ptr<ir::Graph> graph_;
  int64_t nodes_ = 0;
  ir::Value *positions_ = nullptr, *cos_ = nullptr, *sin_ = nullptr, *mask_ = nullptr;
  ir::Value *write_index_ = nullptr, *valid_keys_ = nullptr;  // [1]: where this call's keys go, and the keys valid after it
  ir::TensorType cache_type_;
  std::vector<float> freq_factors_;
};

}  // namespace

Result<std::unique_ptr<ir::Graph>> build_decoder_graph(const GgufFile& file, const std::shared_ptr<const char>& file_bytes,
                                                       const LlmHyperparameters& hp, int64_t max_positions) {
  return DecoderBuilder(file, file_bytes, hp).build(max_positions);
}

std::map<std::string, Tensor> decoder_example_inputs(const LlmHyperparameters& hp) {
  std::map<std::string, Tensor> inputs;  // Tensor::allocate's are zeros
  inputs[DecoderNames::kInputIds] = Tensor::allocate(DType::kInt64, {1, 1});
  inputs[DecoderNames::kPositionIds] = Tensor::allocate(DType::kInt64, {1, 1});
  inputs[DecoderNames::kLogitsIndices] = Tensor::allocate(DType::kInt64, {1});
  for (int64_t b = 0; b < hp.blocks; ++b)
    for (const std::string& name : {DecoderNames::past_key(b), DecoderNames::past_value(b)})
      inputs[name] = Tensor::allocate(DType::kFloat, {1, hp.kv_heads, 1, hp.head_size});
  return inputs;
}

}  // namespace kiln::frontend::gguf
