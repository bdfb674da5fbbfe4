// cpu kernel for Transpose: a oneDNN reorder that reads the input through permuted strides, so any
// permutation (the channels-last boundaries above all) runs as one threaded, vectorized copy.
#include <memory>

#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

Result<ops::Kernel> build_transpose(const ir::Node& node) {
  const std::vector<int64_t> x = input_dims(node, 0), y = output_dims(node, 0);
  std::vector<int64_t> perm = node.attr_ints("perm");
  if (perm.empty())
    for (size_t i = x.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  std::vector<int64_t> x_strides(x.size(), 1), read_strides;
  for (size_t i = x.size(); i-- > 1;) x_strides[i - 1] = x_strides[i] * x[i];
  for (int64_t p : perm) read_strides.push_back(x_strides[static_cast<size_t>(p)]);
  const dnnl::memory::desc src = strided_desc(y, read_strides);  // the input, seen in the output's axis order
  const dnnl::memory::desc dst = row_major_desc(y);
  return primitive_kernel(dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), src, cpu_engine(), dst)),
                          [src, dst](ops::KernelContext& ctx) {
                            return std::unordered_map<int, dnnl::memory>{{DNNL_ARG_FROM, wrap(src, *ctx.input(0))},
                                                                         {DNNL_ARG_TO, wrap(dst, *ctx.output(0))}};
                          });
}

}  // namespace

void add_transpose_kernels(CpuKernelTable& table) {
  table["Transpose"] = node_only([](const ir::Node& node) { return float_tensor_of_rank(node, 1, 6); }, build_transpose);
}

}  // namespace kiln::providers::cpu
