// cpu kernels for pooling: MaxPool (without the indices output), AveragePool and the global forms
// as oneDNN pooling primitives built for the plan's shapes.
#include <memory>

#include "kiln/ops/spatial_geometry.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

using dnnl::memory;

bool is_global(const ir::Node& node) { return node.op_type.rfind("Global", 0) == 0; }

Capability pool_supports(const ir::Node& node) {
  if (node.outputs.size() > 1 && node.outputs[1]) return Capability::no("MaxPool's Indices output");
  Capability c = float_tensors(node, {0});
  if (!c.supported) return c;
  const size_t rank = node.inputs[0]->type.shape->rank();
  if (rank < 3 || rank > 5) return Capability::no("pooling over " + std::to_string(rank - 2) + " spatial axes (cpu has 1 to 3)");
  if (node.op_type == "AveragePool" && node.attr_int("ceil_mode", 0) && node.attr_int("count_include_pad", 0))
    return Capability::no("AveragePool with ceil_mode and count_include_pad");
  return Capability::yes();
}

dnnl::algorithm algorithm_for(const ir::Node& node) {
  if (node.op_type == "MaxPool" || node.op_type == "GlobalMaxPool") return dnnl::algorithm::pooling_max;
  return node.attr_int("count_include_pad", 0) ? dnnl::algorithm::pooling_avg_include_padding
                                               : dnnl::algorithm::pooling_avg_exclude_padding;
}

struct PoolState {
  dnnl::pooling_v2_forward primitive;
  memory::desc src, dst;
  dnnl::stream stream{cpu_engine()};
};

Result<ops::Kernel> build_pool(const ir::Node& node) {
  const std::vector<int64_t> x = input_dims(node, 0), y = output_dims(node, 0);
  const size_t spatial = x.size() - 2;
  std::vector<int64_t> kernel(x.begin() + 2, x.end());
  if (!is_global(node)) kernel = node.attr_ints("kernel_shape");
  KILN_ASSIGN_OR_RETURN(ops::WindowAttrs w, ops::read_window_attrs(node, kernel));
  if (is_global(node)) w.pads.assign(2 * spatial, 0);
  memory::dims strides, dilations, pad_left, pad_right;
  for (size_t i = 0; i < spatial; ++i) {
    KILN_RETURN_IF_ERROR(ops::window_output_size(w, i, x[i + 2], node).status());  // resolves auto_pad
    const int64_t extent = (w.kernel[i] - 1) * w.dilations[i] + 1;
    strides.push_back(w.strides[i]);
    dilations.push_back(w.dilations[i] - 1);
    pad_left.push_back(w.pads[i]);
    // Past the input by as much as the last window needs (ceil_mode windows may overhang).
    pad_right.push_back(std::max<int64_t>(0, (y[i + 2] - 1) * w.strides[i] + extent - x[i + 2] - w.pads[i]));
  }
  auto state = std::make_shared<PoolState>();
  state->src = row_major_desc(x);
  state->dst = row_major_desc(y);
  const dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm_for(node), state->src, state->dst,
                                            strides, memory::dims(kernel.begin(), kernel.end()), dilations, pad_left,
                                            pad_right);
  state->primitive = dnnl::pooling_v2_forward(dnnl::pooling_v2_forward::primitive_desc(desc, cpu_engine()));
  return ops::Kernel([state](ops::KernelContext& ctx) {
    return guard(ctx.node(), [&] {
      state->primitive.execute(state->stream, {{DNNL_ARG_SRC, wrap(state->src, *ctx.input(0))},
                                               {DNNL_ARG_DST, wrap(state->dst, *ctx.output(0))}});
      state->stream.wait();
      return Status::ok();
    });
  });
}

}  // namespace

void add_pool_kernels(CpuKernelTable& table) {
  for (const char* op : {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"}) table[op] = {pool_supports, build_pool};
}

}  // namespace kiln::providers::cpu
