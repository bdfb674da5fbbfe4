// cpu kernels for pooling: MaxPool (without the indices output), AveragePool and the global forms
// as oneDNN pooling primitives built for the plan's shapes, channels-first, or in the activation
// layout of the kiln.InLayout that wraps them.
#include <memory>
#include <set>

#include "kiln/ops/spatial_geometry.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

using dnnl::memory;

bool is_wrapped(const ir::Node& node) { return node.domain == "kiln"; }
// The pooling op: the node's own, or the one kiln.InLayout wraps.
std::string pool_op(const ir::Node& node) { return is_wrapped(node) ? node.attr_string("op") : node.op_type; }
bool is_global(const ir::Node& node) { return pool_op(node).rfind("Global", 0) == 0; }

Capability pool_supports(const ir::Node& node) {
  static const std::set<std::string> pools = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"};
  if (!pools.count(pool_op(node))) return Capability::no("kiln.InLayout of " + pool_op(node) + " has no cpu kernel");
  if (node.outputs.size() > 1 && node.outputs[1]) return Capability::no("MaxPool's Indices output");
  Capability c = float_tensors(node, {0});
  if (!c.supported) return c;
  const size_t rank = node.inputs[0]->type.shape->rank();
  if (rank < 3 || rank > 5) return Capability::no("pooling over " + std::to_string(rank - 2) + " spatial axes (cpu has 1 to 3)");
  if (pool_op(node) == "AveragePool" && node.attr_int("ceil_mode", 0) && node.attr_int("count_include_pad", 0))
    return Capability::no("AveragePool with ceil_mode and count_include_pad");
  return Capability::yes();
}

dnnl::algorithm algorithm_for(const ir::Node& node) {
  if (pool_op(node) == "MaxPool" || pool_op(node) == "GlobalMaxPool") return dnnl::algorithm::pooling_max;
  return node.attr_int("count_include_pad", 0) ? dnnl::algorithm::pooling_avg_include_padding
                                               : dnnl::algorithm::pooling_avg_exclude_padding;
}

Result<ops::Kernel> build_pool(const ir::Node& node) {
  KILN_ASSIGN_OR_RETURN(const ops::ActivationLayout layout,
                        is_wrapped(node) ? ops::layout_attribute(node, "layout") : ops::ActivationLayout::channels_first());
  KILN_ASSIGN_OR_RETURN(const memory::desc src, activation_desc(input_dims(node, 0), layout));
  KILN_ASSIGN_OR_RETURN(const memory::desc dst, activation_desc(output_dims(node, 0), layout));
  const std::vector<int64_t> x = ops::channels_first_dims(input_dims(node, 0), layout),
                             y = ops::channels_first_dims(output_dims(node, 0), layout);
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
  const dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm_for(node), src, dst,
                                            strides, memory::dims(kernel.begin(), kernel.end()), dilations, pad_left,
                                            pad_right);
  return primitive_kernel(dnnl::pooling_v2_forward(dnnl::pooling_v2_forward::primitive_desc(desc, cpu_engine())),
                          [src, dst](ops::KernelContext& ctx) {
                            return std::unordered_map<int, memory>{{DNNL_ARG_SRC, wrap(src, *ctx.input(0))},
                                                                   {DNNL_ARG_DST, wrap(dst, *ctx.output(0))}};
                          });
}

}  // namespace

void add_pool_kernels(CpuKernelTable& table) {
  for (const char* op : {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "kiln.InLayout"})
    table[op] = node_only(pool_supports, build_pool);
}

}  // namespace kiln::providers::cpu
