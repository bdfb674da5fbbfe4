// cpu kernels for kiln.Attention: Q x Kt as a oneDNN matmul with the scale as its output scale,
// the mask and bias applied in one threaded pass over the scores, oneDNN softmax in place, then a
// second matmul with V. The scores live in the calling thread's run scratch (onednn_support.h),
// shared by every attention kernel of every plan.
// Operands given transposed (ops/attention.h) are read, and a transposed output written, through
// strided memory descriptors: no copies.
// With kv_length (a key/value cache valid up to the tokens seen, whose length changes every call)
// the products are oneDNN's sgemm over the valid keys only (up to 16 query rows, a decoder's step,
// few_row_attention.h's), one pair per batch of heads on OpenMP threads, and the softmax
// softmax_row.h's; the groups of query heads that share a key head are one product (the rows of a
// grouped-query attention).
#include <algorithm>
#include <atomic>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "kiln/ops/attention.h"
#include "kiln/ops/channels_last.h"
#include "kiln/ops/data_movement.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/few_row_attention.h"
#include "kiln/providers/cpu/onednn_support.h"
#include "kiln/providers/cpu/softmax_row.h"

namespace kiln::providers::cpu {
namespace {

using dnnl::memory;

constexpr size_t kMaskInput = 3, kBiasInput = 4, kKvLengthInput = 5;

// The products of a kv_length attention: each one rows x valid keys, Q, K (Kt's transpose), V and
// Y row-major matrices at the offsets and leading dims below (elements).
struct CacheGeometry {
  int64_t rows = 0;                      // query rows per product: the sequence, times the grouped heads when merged
  int64_t keys = 0, depth = 0, width = 0;  // T (the cache's capacity), D, Dv
  int64_t ldq = 0, ldk = 0, ldv = 0, ldy = 0;
  std::vector<int64_t> q_at, k_at, v_at, y_at;
  std::vector<int64_t> batch_of;  // the product's index along the scores' first dim (kv_length's)
  std::vector<int64_t> flat_at;   // the product's first row of scores, as an index over the scores' batch dims
  int64_t sequence = 0;           // S: the query rows of each batch index
  int64_t group_step = 0;         // for merged rows: how far apart the batch indices of successive groups are
  std::vector<int64_t> scores_dims;

  // Row r of product p as a row of the scores (all their dims but the last, flattened).
  int64_t scores_row(int64_t p, int64_t r) const {
    return (flat_at[static_cast<size_t>(p)] + r / sequence * group_step) * sequence + r % sequence;
  }
};

// Dims and strides of one operand as attention reads it, padded to `rank` with broadcast dims (and
// a batch dim of 1 given stride 0).
struct OperandLayout {
  std::vector<int64_t> dims, strides;
};

OperandLayout operand_layout(std::vector<int64_t> dims, std::vector<int64_t> strides, size_t rank) {
  dims.insert(dims.begin(), rank - dims.size(), 1);
  strides.insert(strides.begin(), rank - strides.size(), 0);
  for (size_t d = 0; d + 2 < rank; ++d)
    if (dims[d] == 1) strides[d] = 0;
  return {std::move(dims), std::move(strides)};
}

Result<CacheGeometry> cache_geometry(const ir::Node& node) {
  const std::vector<int64_t> out = output_dims(node, 0);
  const size_t rank = out.size();
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> out_perm, ops::attention_perm(node, ops::kAttentionOutputPerm, rank));
  const std::vector<int64_t> to_y = ops::inverse_permutation(out_perm);
  const OperandLayout y = operand_layout(ops::permuted(out, to_y), ops::permuted(ops::contiguous_strides(out), to_y), rank);
  std::vector<OperandLayout> operands;
  for (size_t i = 0; i < 3; ++i) {
    const std::vector<int64_t> given = input_dims(node, i);
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> perm, ops::attention_perm(node, ops::kAttentionOperandPerms[i], given.size()));
    if (given.size() > rank) return invalid_model(node.describe() + ": an operand has a higher rank than Y");
    operands.push_back(operand_layout(ops::permuted(given, perm), ops::permuted(ops::contiguous_strides(given), perm), rank));
  }
  const OperandLayout &q = operands[0], &kt = operands[1], &v = operands[2];
  CacheGeometry g;
  const size_t last = rank - 1, before = rank - 2;
  const int64_t sequence = y.dims[before];
  g.depth = q.dims[last], g.keys = kt.dims[last], g.width = y.dims[last];
  // Row-major rows for sgemm: Q's, K's (Kt's columns), V's and Y's elements each contiguous.
  if ((g.depth > 1 && (q.strides[last] != 1 || kt.strides[before] != 1)) || (g.width > 1 && (v.strides[last] != 1 || y.strides[last] != 1)))
    return unsupported_operator("attention over a key/value cache needs the head dim contiguous in Q, K, V and Y");
  g.ldq = sequence > 1 ? q.strides[before] : g.depth;
  g.ldk = g.keys > 1 ? kt.strides[last] : g.depth;
  g.ldv = g.keys > 1 ? v.strides[before] : g.width;
  g.ldy = sequence > 1 ? y.strides[before] : g.width;
  g.rows = sequence, g.sequence = sequence;
  // A batch dim over which K and V broadcast (the query heads that share a key head) joins the
  // rows when its Q and Y rows follow at one stride: the innermost such dim that can.
  const int64_t lengths = ops::dims_product(input_dims(node, kKvLengthInput), 0, input_dims(node, kKvLengthInput).size());
  std::optional<size_t> merged;
  for (size_t m = before; m-- > 0 && !merged;) {
    const int64_t group = y.dims[m];
    if (group == 1 || kt.strides[m] != 0 || v.strides[m] != 0 || (m == 0 && lengths != 1)) continue;
    if (sequence == 1 && q.strides[m] >= g.depth && y.strides[m] >= g.width) {
      g.ldq = q.strides[m], g.ldy = y.strides[m], merged = m;
    } else if (q.strides[m] == sequence * g.ldq && y.strides[m] == sequence * g.ldy) {
      merged = m;
    }
  }
  if (g.ldq < g.depth || g.ldk < g.depth || g.ldv < g.width || g.ldy < g.width)
    return unsupported_operator("attention over a key/value cache needs rows that do not overlap");
  // One product per index of the other batch dims (the merged one at 0).
  std::vector<int64_t> dims(y.dims.begin(), y.dims.begin() + static_cast<std::ptrdiff_t>(before));
  if (merged) {
    g.rows = dims[*merged] * sequence;
    g.group_step = ops::dims_product(dims, *merged + 1, before);
    dims[*merged] = 1;
  }
  std::vector<int64_t> index(before, 0);
  const std::vector<int64_t> flat = ops::contiguous_strides(std::vector<int64_t>(y.dims.begin(), y.dims.begin() + static_cast<std::ptrdiff_t>(before)));
  for (int64_t p = 0, products = ops::dims_product(dims, 0, before); p < products; ++p) {
    int64_t qa = 0, ka = 0, va = 0, ya = 0, fa = 0;
    for (size_t d = 0; d < before; ++d) {
      qa += index[d] * q.strides[d], ka += index[d] * kt.strides[d], va += index[d] * v.strides[d], ya += index[d] * y.strides[d];
      fa += index[d] * flat[d];
    }
    g.q_at.push_back(qa), g.k_at.push_back(ka), g.v_at.push_back(va), g.y_at.push_back(ya), g.flat_at.push_back(fa);
    g.batch_of.push_back(before > 0 ? index[0] : 0);
    for (size_t d = before; d-- > 0;) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  g.scores_dims = y.dims;
  g.scores_dims.back() = g.keys;
  return g;
}

Capability attention_supports(const ir::Node& node) {
  Capability c = float_tensors(node, {0, 1, 2, kBiasInput});
  if (!c.supported) return c;
  for (size_t i = 0; i < 3; ++i)
    if (node.inputs[i]->type.shape->rank() < 2) return Capability::no("Attention operands must be matrices");
  if (node.input(kKvLengthInput)) {
    Result<CacheGeometry> geometry = cache_geometry(node);
    if (!geometry.is_ok()) return Capability::no(geometry.status().message());
  }
  return Capability::yes();
}

// A strided view of `rank` dims: leading dims of 1 added (their stride is immaterial).
memory::desc view_desc(std::vector<int64_t> dims, std::vector<int64_t> strides, size_t rank) {
  const int64_t extent = ops::dims_product(dims, 0, dims.size());
  strides.insert(strides.begin(), rank - dims.size(), std::max<int64_t>(extent, 1));
  dims.insert(dims.begin(), rank - dims.size(), 1);
  return strided_desc(dims, strides);
}

// Operand i (0 Q, 1 Kt, 2 V) as the matmul reads it: its input through the operand's permutation.
Result<memory::desc> operand_desc(const ir::Node& node, size_t i, size_t rank) {
  const std::vector<int64_t> given = input_dims(node, i);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> perm, ops::attention_perm(node, ops::kAttentionOperandPerms[i], given.size()));
  return view_desc(ops::permuted(given, perm), ops::permuted(ops::contiguous_strides(given), perm), rank);
}

// For each row of the scores (all dims but the last), where a broadcast operand's row starts, and
// the operand's stride along the row.
struct RowMap {
  std::vector<int64_t> row_start;
  int64_t step = 0;
};

RowMap row_map(const std::vector<int64_t>& operand, const std::vector<int64_t>& scores) {
  const std::vector<int64_t> strides = ops::broadcast_strides(operand, scores);
  RowMap m;
  m.step = strides.back();
  const size_t lead = scores.size() - 1;
  std::vector<int64_t> index(lead, 0);
  const int64_t rows = ops::dims_product(scores, 0, lead);
  m.row_start.reserve(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    int64_t start = 0;
    for (size_t d = 0; d < lead; ++d) start += index[d] * strides[d];
    m.row_start.push_back(start);
    for (size_t d = lead; d-- > 0;) {
      if (++index[d] < scores[d]) break;
      index[d] = 0;
    }
  }
  return m;
}

struct AttentionState {
  dnnl::matmul scores_product, output_product;
  dnnl::softmax_v2_forward softmax;
  memory::desc q, kt, v, y, scores_desc;
  std::vector<int64_t> scores_dims;
  std::optional<RowMap> mask, bias;
  float fill = 0;
  dnnl::stream stream{cpu_engine()};
  PrimitiveArgs scores_args, softmax_args, output_args;  // of the last run
};

// Applies mask (select) and bias (add) to each row of the scores.
void mask_scores(const AttentionState& s, float* scores, const Tensor* mask, const Tensor* bias) {
  const int64_t t = s.scores_dims.back(), rows = ops::dims_product(s.scores_dims, 0, s.scores_dims.size() - 1);
  const bool* m = mask ? mask->data<bool>() : nullptr;
  const float* b = bias ? bias->data<float>() : nullptr;
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    float* row = scores + r * t;
    if (m) {
      const bool* mr = m + s.mask->row_start[static_cast<size_t>(r)];
      for (int64_t j = 0; j < t; ++j) row[j] = mr[j * s.mask->step] ? s.fill : row[j];
    }
    if (b) {
      const float* br = b + s.bias->row_start[static_cast<size_t>(r)];
      for (int64_t j = 0; j < t; ++j) row[j] += br[j * s.bias->step];
    }
  }
}

Result<ops::Kernel> build_cache_attention(const ir::Node& node, KernelBuild& build);

Result<ops::Kernel> build_attention(const ir::Node& node, KernelBuild& build) {
  if (node.input(kKvLengthInput)) return build_cache_attention(node, build);
  const std::vector<int64_t> out = output_dims(node, 0);
  const size_t rank = out.size();
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> out_perm, ops::attention_perm(node, ops::kAttentionOutputPerm, rank));
  const std::vector<int64_t> to_y = ops::inverse_permutation(out_perm);
  const std::vector<int64_t> y = ops::permuted(out, to_y);  // the logical output, written through out's strides
  auto state = std::make_shared<AttentionState>();
  KILN_ASSIGN_OR_RETURN(state->q, operand_desc(node, 0, rank));
  KILN_ASSIGN_OR_RETURN(state->kt, operand_desc(node, 1, rank));
  KILN_ASSIGN_OR_RETURN(state->v, operand_desc(node, 2, rank));
  state->y = strided_desc(y, ops::permuted(ops::contiguous_strides(out), to_y));
  std::vector<int64_t> scores_dims = y;
  scores_dims.back() = state->kt.dims().back();
  state->scores_desc = row_major_desc(scores_dims);
  state->scores_dims = scores_dims;
  state->fill = node.attr_float("mask_fill", std::numeric_limits<float>::lowest());
  if (node.input(kMaskInput)) state->mask = row_map(input_dims(node, kMaskInput), scores_dims);
  if (node.input(kBiasInput)) state->bias = row_map(input_dims(node, kBiasInput), scores_dims);
  dnnl::primitive_attr scaled;  // the scale as output scales: a post-op slows the brgemm kernel
  if (const float scale = node.attr_float("scale", 1.0f); scale != 1.0f) scaled.set_output_scales(0, {scale});
  state->scores_product = checked({node, build}, dnnl::matmul(
      dnnl::matmul::primitive_desc(dnnl::matmul::desc(state->q, state->kt, state->scores_desc), scaled, cpu_engine())));
  state->output_product =
      checked({node, build}, dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(state->scores_desc, state->v, state->y), cpu_engine())));
  const dnnl::softmax_v2_forward::desc softmax(dnnl::prop_kind::forward_inference, dnnl::algorithm::softmax_accurate,
                                               state->scores_desc, state->scores_desc, static_cast<int>(rank - 1));
  state->softmax = checked({node, build}, dnnl::softmax_v2_forward(dnnl::softmax_v2_forward::primitive_desc(softmax, cpu_engine())));
  return ops::Kernel([state](ops::KernelContext& ctx) {
    return guard(ctx.node(), [&] {
      float* scores = run_scratch_floats(static_cast<size_t>(shape_element_count(state->scores_dims)));
      state->scores_args.set(DNNL_ARG_SRC, state->q, *ctx.input(0));
      state->scores_args.set(DNNL_ARG_WEIGHTS, state->kt, *ctx.input(1));
      state->scores_args.set(DNNL_ARG_DST, state->scores_desc, scores);
      state->scores_product.execute(state->stream, state->scores_args.map());
      state->stream.wait();
      if (state->mask || state->bias) mask_scores(*state, scores, ctx.input(kMaskInput), ctx.input(kBiasInput));
      state->softmax_args.set(DNNL_ARG_SRC, state->scores_desc, scores);
      state->softmax_args.set(DNNL_ARG_DST, state->scores_desc, scores);
      state->softmax.execute(state->stream, state->softmax_args.map());
      state->output_args.set(DNNL_ARG_SRC, state->scores_desc, scores);
      state->output_args.set(DNNL_ARG_WEIGHTS, state->v, *ctx.input(2));
      state->output_args.set(DNNL_ARG_DST, state->y, *ctx.output(0));
      state->output_product.execute(state->stream, state->output_args.map());
      state->stream.wait();
      return Status::ok();
    });
  });
}


// kiln.Attention with kv_length: per product, scores [rows, valid keys] = scale Q K^T by sgemm,
// mask and bias, softmax, then Y = scores V by sgemm; products on OpenMP threads (sgemm runs on
// the calling thread inside them), the scores in a buffer of each thread's.
Result<ops::Kernel> build_cache_attention(const ir::Node& node, KernelBuild& build) {
  KILN_ASSIGN_OR_RETURN(CacheGeometry geometry, cache_geometry(node));
  auto g = std::make_shared<const CacheGeometry>(std::move(geometry));
  std::optional<RowMap> mask, bias;
  if (node.input(kMaskInput)) mask = row_map(input_dims(node, kMaskInput), g->scores_dims);
  if (node.input(kBiasInput)) bias = row_map(input_dims(node, kBiasInput), g->scores_dims);
  const float scale = node.attr_float("scale", 1.0f), fill = node.attr_float("mask_fill", std::numeric_limits<float>::lowest());
  build.evidence.record_implementation(node.name, has_few_row_attention(g->rows, g->depth, g->width)
                                                      ? "kiln:few-row products over the valid keys (avx2), avx2 softmax"
                                                      : "kiln:sgemm over the valid keys (oneDNN), avx2 softmax");
  return ops::Kernel([g, mask, bias, scale, fill](ops::KernelContext& ctx) -> Status {
    const Tensor& length = *ctx.input(kKvLengthInput);
    const int64_t batch = g->scores_dims.size() > 2 ? g->scores_dims[0] : 1;
    if (length.rank() > 1 || (length.rank() == 1 && length.shape()[0] != 1 && length.shape()[0] != batch))
      return ctx.error("kv_length must be a scalar or [" + std::to_string(batch) + "], got " + shape_to_string(length.shape()));
    const int64_t* lengths = length.data<int64_t>();
    for (int64_t i = 0; i < length.element_count(); ++i)
      if (lengths[i] < 0 || lengths[i] > g->keys)
        return ctx.error("kv_length " + std::to_string(lengths[i]) + " is outside 0.." + std::to_string(g->keys) + " (the keys there are)");
    const bool per_batch = length.element_count() > 1;
    const float *q = ctx.input(0)->data<float>(), *k = ctx.input(1)->data<float>(), *v = ctx.input(2)->data<float>();
    const bool* mask_values = mask ? ctx.input(kMaskInput)->data<bool>() : nullptr;
    const float* bias_values = bias ? ctx.input(kBiasInput)->data<float>() : nullptr;
    float* y = ctx.output(0)->data<float>();
    const auto products = static_cast<int64_t>(g->q_at.size());
    const bool few_rows = has_few_row_attention(g->rows, g->depth, g->width);
    std::atomic<bool> failed{false};
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t p = 0; p < products; ++p) {
      const auto at = static_cast<size_t>(p);
      const int64_t valid = lengths[per_batch ? g->batch_of[at] : 0];
      float* out = y + g->y_at[at];
      if (valid == 0) {
        for (int64_t r = 0; r < g->rows; ++r) std::fill(out + r * g->ldy, out + r * g->ldy + g->width, 0.0f);
        continue;
      }
      thread_local std::vector<float> scores;
      try {
        scores.resize(static_cast<size_t>(g->rows * valid));
      } catch (const std::bad_alloc&) {
        failed = true;
        continue;
      }
      if (few_rows) {
        few_row_scores(q + g->q_at[at], g->ldq, k + g->k_at[at], g->ldk, g->rows, valid, g->depth, scale, scores.data());
      } else if (dnnl_sgemm('N', 'T', g->rows, valid, g->depth, scale, q + g->q_at[at], g->ldq, k + g->k_at[at], g->ldk, 0.0f, scores.data(),
                            valid) != dnnl_success) {
        failed = true;
      }
      for (int64_t r = 0; r < g->rows; ++r) {
        float* row = scores.data() + r * valid;
        const auto scores_row = static_cast<size_t>(g->scores_row(p, r));
        if (mask_values) {
          const bool* m = mask_values + mask->row_start[scores_row];
          for (int64_t j = 0; j < valid; ++j) row[j] = m[j * mask->step] ? fill : row[j];
        }
        if (bias_values) {
          const float* b = bias_values + bias->row_start[scores_row];
          for (int64_t j = 0; j < valid; ++j) row[j] += b[j * bias->step];
        }
        softmax_row(row, valid);
      }
      if (few_rows) {
        few_row_values(scores.data(), g->rows, valid, v + g->v_at[at], g->ldv, g->width, out, g->ldy);
      } else if (dnnl_sgemm('N', 'N', g->rows, g->width, valid, 1.0f, scores.data(), valid, v + g->v_at[at], g->ldv, 0.0f, out, g->ldy) !=
                 dnnl_success) {
        failed = true;
      }
    }
    if (failed) return ctx.error("oneDNN's sgemm failed, or its scores could not be allocated");
    return Status::ok();
  });
}

}  // namespace

void add_attention_kernels(CpuKernelTable& table) {
  CpuKernel attention = CpuKernel{attention_supports, build_attention};
  // Q, Kt and V are the matmuls' operands: no keys (T of 0) leave the scores empty but not Y.
  attention.data_inputs = {0, 1, 2};
  table["kiln.Attention"] = std::move(attention);
}

}  // namespace kiln::providers::cpu
