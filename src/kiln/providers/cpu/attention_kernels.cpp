// cpu kernel for kiln.Attention: Q x Kt as a oneDNN matmul with the scale as its output scale,
// the mask and bias applied in one threaded pass over the scores, oneDNN softmax in place, then a
// second matmul with V. The scores live in the calling thread's run scratch (onednn_support.h),
// shared by every attention kernel of every plan.
// Operands given transposed (ops/attention.h) are read, and a transposed output written, through
// strided memory descriptors: no copies.
#include <limits>
#include <memory>

#include "kiln/ops/attention.h"
#include "kiln/ops/channels_last.h"
#include "kiln/ops/data_movement.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

using dnnl::memory;

constexpr size_t kMaskInput = 3, kBiasInput = 4;

Capability attention_supports(const ir::Node& node) {
  Capability c = float_tensors(node, {0, 1, 2, kBiasInput});
  if (!c.supported) return c;
  for (size_t i = 0; i < 3; ++i)
    if (node.inputs[i]->type.shape->rank() < 2) return Capability::no("Attention operands must be matrices");
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

Result<ops::Kernel> build_attention(const ir::Node& node, KernelBuild& build) {
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

}  // namespace

void add_attention_kernels(CpuKernelTable& table) {
  CpuKernel attention = CpuKernel{attention_supports, build_attention};
  // Q, Kt and V are the matmuls' operands: no keys (T of 0) leave the scores empty but not Y.
  attention.data_inputs = {0, 1, 2};
  table["kiln.Attention"] = std::move(attention);
}

}  // namespace kiln::providers::cpu
