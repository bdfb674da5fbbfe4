// cpu kernel for ConvTranspose: one oneDNN deconvolution primitive per node and plan, with constant
// weights reordered once into the layout it prefers. ONNX's W is [C, M/group, k...], which oneDNN
// reads as its weights [(group,) M/group, C/group, k...] with the two channel strides swapped. The
// pads come from the op's problem (explicit, SAME, or set by output_shape); the right pads follow
// from the output size, negative where output_padding or output_shape grow the output past the
// last tap (those positions hold only the bias). oneDNN takes a right pad above -stride only: an
// output grown further (output_shape 12 from one input row of stride 3) is computed from X
// extended by rows of zeros, which add nothing to the output but reach the positions left.
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <vector>

#include "kiln/ir/buffer.h"
#include "kiln/ops/conv.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

using dnnl::memory;

Capability conv_transpose_supports(const ir::Node& node) {
  if (node.inputs.size() < 2) return Capability::no("ConvTranspose needs X and W");
  Capability c = float_tensors(node, {0, 1, 2});
  if (!c.supported) return c;
  const size_t rank = node.inputs[0]->type.shape->rank();
  if (rank < 3 || rank > 5) return Capability::no("ConvTranspose over " + std::to_string(rank - 2) + " spatial axes (cpu has 1 to 3)");
  return Capability::yes();
}

// X extended at the end of its spatial axes by rows of zeros: its copy of X (a view of the
// extended buffer, written by a reorder on each run) and the zeros past it (written once).
struct ZeroExtendedInput {
  std::shared_ptr<void> buffer;  // from allocate_buffer: charged to the session's budget
  memory::desc given, view;
  dnnl::reorder copy;
  PrimitiveArgs args;  // the copy's arguments of the last run
};

struct DeconvState {
  dnnl::deconvolution_forward primitive;
  memory::desc src, dst, bias;
  PrimitiveWeights weights;
  bool has_bias = false;
  std::optional<ZeroExtendedInput> extended;
  dnnl::stream stream{cpu_engine()};
  PrimitiveArgs args;  // the arguments of the last run
};

// The rows of zeros axis i of X needs so that its right pad (`right`, for stride `stride`) is
// above -stride: each row of input reaches `stride` more output positions.
int64_t zero_rows_needed(int64_t right, int64_t stride) { return right > -stride ? 0 : (-right - stride) / stride + 1; }

ZeroExtendedInput zero_extended(const std::vector<int64_t>& x, const std::vector<int64_t>& extended_dims) {
  ZeroExtendedInput e;
  const size_t bytes = static_cast<size_t>(shape_element_count(extended_dims)) * sizeof(float);
  e.buffer = allocate_buffer(bytes);
  if (!e.buffer) throw std::bad_alloc();  // an AllocationFailure at the session's load or run
  std::memset(e.buffer.get(), 0, bytes);
  e.given = row_major_desc(x);
  e.view = strided_desc(x, ops::contiguous_strides(extended_dims));  // X's box at the start of the buffer
  e.copy = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), e.given, cpu_engine(), e.view));
  return e;
}

Result<ops::Kernel> build_conv_transpose(const ir::Node& node, KernelBuild& build) {
  const std::vector<int64_t> x = input_dims(node, 0), w = input_dims(node, 1), y = output_dims(node, 0);
  KILN_ASSIGN_OR_RETURN(const ops::ConvProblem p, ops::conv_problem(node, x, w, y, true));
  const size_t spatial = x.size() - 2;
  memory::dims strides, dilations, pad_left, pad_right;
  std::vector<int64_t> src_dims = x;  // X, or X extended by rows of zeros
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t extent = (p.grid.kernel[i] - 1) * p.grid.dilations[i] + 1, stride = p.grid.strides[i];
    const int64_t right = (x[i + 2] - 1) * stride + extent - p.grid.pads_begin[i] - y[i + 2];
    const int64_t zero_rows = zero_rows_needed(right, stride);
    src_dims[i + 2] += zero_rows;
    strides.push_back(stride);
    dilations.push_back(p.grid.dilations[i] - 1);  // oneDNN counts dilation from 0
    pad_left.push_back(p.grid.pads_begin[i]);
    pad_right.push_back(right + zero_rows * stride);
  }
  // oneDNN's dims are [(group,) M/group, C/group, k...]; the memory is ONNX's [C, M/group, k...],
  // that is [(group,) C/group, M/group, k...] row-major: the two channel strides swap.
  const int64_t taps = p.grid.kernel_count(), per_group_in = x[1] / p.group, per_group_out = y[1] / p.group;
  std::vector<int64_t> weight_dims{per_group_out, per_group_in}, weight_strides{taps, per_group_out * taps};
  int64_t tap_stride = taps;
  for (size_t i = 2; i < w.size(); ++i) {
    weight_dims.push_back(w[i]);
    weight_strides.push_back(tap_stride /= w[i]);
  }
  if (p.group > 1) {
    weight_dims.insert(weight_dims.begin(), p.group);
    weight_strides.insert(weight_strides.begin(), per_group_in * per_group_out * taps);
  }
  const memory::dims wd(weight_dims.begin(), weight_dims.end());

  auto state = std::make_shared<DeconvState>();
  state->src = row_major_desc(src_dims);
  if (src_dims != x) state->extended = zero_extended(x, src_dims);
  state->dst = row_major_desc(y);
  const memory::desc weights_plain = strided_desc(weight_dims, weight_strides);
  state->has_bias = node.input(2) != nullptr;
  state->bias = row_major_desc({y[1]});
  const memory::desc weights_any(wd, memory::data_type::f32, memory::format_tag::any);
  const auto kind = dnnl::prop_kind::forward_inference;
  const auto alg = dnnl::algorithm::deconvolution_direct;
  const auto desc = state->has_bias ? dnnl::deconvolution_forward::desc(kind, alg, state->src, weights_any, state->bias, state->dst,
                                                                        strides, dilations, pad_left, pad_right)
                                    : dnnl::deconvolution_forward::desc(kind, alg, state->src, weights_any, state->dst, strides,
                                                                        dilations, pad_left, pad_right);
  const dnnl::deconvolution_forward::primitive_desc pd(desc, cpu_engine());
  state->primitive = checked({node, build}, dnnl::deconvolution_forward(pd));
  state->weights = PrimitiveWeights(node, 1, weights_plain, pd, build);
  return ops::Kernel([state](ops::KernelContext& ctx) {
    return guard(ctx.node(), [&] {
      PrimitiveArgs& args = state->args;
      if (ZeroExtendedInput* e = state->extended ? &*state->extended : nullptr) {
        e->args.set(DNNL_ARG_FROM, e->given, *ctx.input(0));
        e->args.set(DNNL_ARG_TO, e->view, e->buffer.get());
        e->copy.execute(state->stream, e->args.map());
        args.set(DNNL_ARG_SRC, state->src, e->buffer.get());
      } else {
        args.set(DNNL_ARG_SRC, state->src, *ctx.input(0));
      }
      args.set(DNNL_ARG_WEIGHTS, state->weights.for_run(ctx));
      args.set(DNNL_ARG_DST, state->dst, *ctx.output(0));
      if (state->has_bias) args.set(DNNL_ARG_BIAS, state->bias, *ctx.input(2));
      state->primitive.execute(state->stream, args.map());
      state->stream.wait();
      return Status::ok();
    });
  });
}

}  // namespace

void add_conv_transpose_kernels(CpuKernelTable& table) {
  table["ConvTranspose"] = {conv_transpose_supports, build_conv_transpose};
}

}  // namespace kiln::providers::cpu
