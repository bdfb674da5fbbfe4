// kiln.RotaryEmbedding: ONNX's RotaryEmbedding (ai.onnx opset 23, newer than the opsets Kiln
// imports) in domain "kiln", where the GGUF frontend's decoders use it. X is [batch, heads, seq, head] or
// [batch, seq, heads * head] (then `num_heads` says how many heads); the first
// `rotary_embedding_dim` values of each head (0: all) are rotated in pairs, (x1, x2) ->
// (x1 cos - x2 sin, x1 sin + x2 cos), the pairs being adjacent values when `interleaved` (GPT-J,
// llama.cpp's llama) or the two halves of the rotated part otherwise (GPT-NeoX, Qwen, Phi-3); the
// rest is copied. cos_cache and sin_cache hold the angles' cosines and sines: [max position + 1,
// rotary / 2] indexed by position_ids [batch, seq], or [batch, seq, rotary / 2] when there are none.
#include <vector>

#include "kiln/ops/family_support.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"

namespace kiln::ops {
namespace {

// X's geometry as [batch, seq, heads, head] with the strides of its layout.
struct RotaryGeometry {
  int64_t batch = 0, seq = 0, heads = 0, head = 0, rotary = 0;
  int64_t batch_stride = 0, seq_stride = 0, head_stride = 0;
};

Result<RotaryGeometry> rotary_geometry(const ir::Node& node, const std::vector<int64_t>& x) {
  RotaryGeometry g;
  const int64_t num_heads = node.attr_int("num_heads", 0);
  if (x.size() == 4) {
    if (num_heads != 0 && num_heads != x[1])
      return invalid_model(node.describe() + ": num_heads " + std::to_string(num_heads) + " differs from X's " + std::to_string(x[1]));
    g = {x[0], x[2], x[1], x[3], 0, x[1] * x[2] * x[3], x[3], x[2] * x[3]};
  } else if (x.size() == 3) {
    if (num_heads <= 0) return invalid_model(node.describe() + ": a 3-d X needs num_heads");
    if (x[2] % num_heads != 0)
      return invalid_model(node.describe() + ": X's hidden size " + std::to_string(x[2]) + " is not a multiple of num_heads " +
                           std::to_string(num_heads));
    g = {x[0], x[1], num_heads, x[2] / num_heads, 0, x[1] * x[2], x[2], x[2] / num_heads};
  } else {
    return invalid_model(node.describe() + ": X must have rank 3 or 4");
  }
  g.rotary = node.attr_int("rotary_embedding_dim", 0);
  if (g.rotary == 0) g.rotary = g.head;
  if (g.rotary < 0 || g.rotary > g.head || g.rotary % 2 != 0)
    return invalid_model(node.describe() + ": rotary_embedding_dim " + std::to_string(g.rotary) + " must be even and at most the head size " +
                         std::to_string(g.head));
  return g;
}

Status rotary_rule(InferenceContext& ctx) {
  KILN_RETURN_IF_ERROR(check_input_count(ctx, 3, 4));
  for (size_t i = 0; i < 3; ++i) KILN_RETURN_IF_ERROR(check_input_dtype<FloatTypes>(ctx, i));
  if (ctx.input_type(1).dtype != ctx.input_type(0).dtype || ctx.input_type(2).dtype != ctx.input_type(0).dtype)
    return ctx.error("cos_cache and sin_cache must have X's element type");
  if (ctx.has_input(3) && ctx.input_type(3).dtype != DType::kInt64) return ctx.error("position_ids must be int64");
  const ir::TensorType& x = ctx.input_type(0);
  if (x.shape && x.shape->rank() != 3 && x.shape->rank() != 4) return ctx.error("X must have rank 3 or 4");
  const size_t cache_rank = ctx.has_input(3) ? 2 : 3;
  for (size_t i = 1; i < 3; ++i)
    if (ctx.input_type(i).shape && ctx.input_type(i).shape->rank() != cache_rank)
      return ctx.error(std::string(i == 1 ? "cos_cache" : "sin_cache") + " must have rank " + std::to_string(cache_rank));
  ctx.set_output_type(0, x);
  return Status::ok();
}

template <class T>
void rotate(const RotaryGeometry& g, bool interleaved, const T* x, const T* cos, const T* sin, const std::vector<int64_t>& cache_rows,
            T* y) {
  const int64_t half = g.rotary / 2;
#pragma omp parallel for collapse(2) if (g.batch * g.seq * g.heads * g.head > (1 << 15))
  for (int64_t b = 0; b < g.batch; ++b)
    for (int64_t s = 0; s < g.seq; ++s) {
      const int64_t row = cache_rows[static_cast<size_t>(b * g.seq + s)] * half;
      for (int64_t h = 0; h < g.heads; ++h) {
        const int64_t base = b * g.batch_stride + s * g.seq_stride + h * g.head_stride;
        const T* in = x + base;
        T* out = y + base;
        for (int64_t i = 0; i < half; ++i) {
          const int64_t first = interleaved ? 2 * i : i, second = interleaved ? 2 * i + 1 : i + half;
          const double c = load(cos[row + i]), sn = load(sin[row + i]);
          const double x1 = load(in[first]), x2 = load(in[second]);
          out[first] = store<T>(x1 * c - x2 * sn);
          out[second] = store<T>(x1 * sn + x2 * c);
        }
        for (int64_t i = g.rotary; i < g.head; ++i) out[i] = in[i];
      }
    }
}

Status rotary_kernel(KernelContext& ctx) {
  const Tensor& x = *ctx.input(0);
  const Tensor& cos = *ctx.input(1);
  const Tensor& sin = *ctx.input(2);
  KILN_ASSIGN_OR_RETURN(const RotaryGeometry g, rotary_geometry(ctx.node(), x.shape()));
  const int64_t half = g.rotary / 2;
  if (cos.shape() != sin.shape()) return ctx.error("cos_cache and sin_cache differ in shape");
  // The cache row of each (batch, seq) position.
  std::vector<int64_t> rows(static_cast<size_t>(g.batch * g.seq));
  const Tensor* positions = ctx.input(3);
  if (positions) {
    if (positions->shape() != std::vector<int64_t>{g.batch, g.seq})
      return ctx.error("position_ids must have shape [batch, sequence] = [" + std::to_string(g.batch) + ", " + std::to_string(g.seq) + "]");
    if (cos.rank() != 2 || cos.shape()[1] != half)
      return ctx.error("cos_cache must be [max position + 1, " + std::to_string(half) + "] with position_ids");
    for (size_t i = 0; i < rows.size(); ++i) {
      const int64_t p = positions->data<int64_t>()[i];
      if (p < 0 || p >= cos.shape()[0])
        return ctx.error("position " + std::to_string(p) + " is outside cos_cache's " + std::to_string(cos.shape()[0]) + " rows");
      rows[i] = p;
    }
  } else {
    if (cos.shape() != std::vector<int64_t>{g.batch, g.seq, half})
      return ctx.error("cos_cache must be [batch, sequence, " + std::to_string(half) + "] without position_ids");
    for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int64_t>(i);
  }
  const bool interleaved = ctx.node().attr_int("interleaved", 0) != 0;
  dispatch<FloatTypes>(x.dtype(), [&]<class T>() {
    rotate<T>(g, interleaved, x.data<T>(), cos.data<T>(), sin.data<T>(), rows, ctx.output(0)->data<T>());
  });
  return Status::ok();
}

}  // namespace

void register_rotary_embedding_ops(OpRegistry& r) {
  r.add(OpDef{"kiln", "RotaryEmbedding", 1, rotary_rule, rotary_kernel});
}

}  // namespace kiln::ops
