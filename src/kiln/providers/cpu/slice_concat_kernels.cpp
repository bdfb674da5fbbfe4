// cpu kernels for Slice and Concat. Slice with constant arguments and positive steps is a oneDNN
// reorder that reads the input through the slice's offset and strides; Concat is oneDNN's concat
// primitive along any axis.
#include "kiln/ops/data_movement.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

using dnnl::memory;

std::vector<const Tensor*> slice_arguments(const ir::Node& node) {
  std::vector<const Tensor*> args;
  for (size_t i = 1; i < node.inputs.size(); ++i) args.push_back(constant_input(node, i));
  return args;
}

Capability slice_supports(const ir::Node& node) {
  Capability c = float_tensors(node, {0});
  if (!c.supported) return c;
  for (size_t i = 1; i < node.inputs.size(); ++i)
    if (node.inputs[i] && !constant_input(node, i)) return Capability::no("Slice with run-time starts, ends, axes or steps");
  if (const Tensor* steps = node.inputs.size() > 4 ? constant_input(node, 4) : nullptr)
    for (int64_t i = 0; i < steps->element_count(); ++i)
      if (element_as_double(*steps, i) <= 0) return Capability::no("Slice with negative steps");
  return Capability::yes();
}

Result<ops::Kernel> build_slice(const ir::Node& node) {
  KILN_ASSIGN_OR_RETURN(const ops::StridedView view, ops::slice_view(node, input_dims(node, 0), slice_arguments(node)));
  const std::vector<int64_t> y = output_dims(node, 0);
  const memory::desc src = strided_desc(y, view.strides), dst = row_major_desc(y);
  const int64_t base = view.base;
  return primitive_kernel(dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), src, cpu_engine(), dst)),
                          [src, dst, base](ops::KernelContext& ctx) {
                            const float* first = ctx.input(0)->data<float>() + base;
                            return std::unordered_map<int, memory>{
                                {DNNL_ARG_FROM, memory(src, cpu_engine(), const_cast<float*>(first))},
                                {DNNL_ARG_TO, wrap(dst, *ctx.output(0))}};
                          });
}

Capability concat_supports(const ir::Node& node) {
  std::vector<size_t> inputs;
  for (size_t i = 0; i < node.inputs.size(); ++i) inputs.push_back(i);
  return float_tensors(node, inputs);
}

Result<ops::Kernel> build_concat(const ir::Node& node) {
  const std::vector<int64_t> y = output_dims(node, 0);
  KILN_ASSIGN_OR_RETURN(const int64_t axis, ops::normalize_axis(node.attr_int("axis", 0), static_cast<int64_t>(y.size())));
  std::vector<memory::desc> sources;
  std::vector<size_t> present;  // inputs with elements (oneDNN rejects empty sources)
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const std::vector<int64_t> dims = input_dims(node, i);
    if (dims[static_cast<size_t>(axis)] == 0) continue;
    sources.push_back(row_major_desc(dims));
    present.push_back(i);
  }
  const memory::desc dst = row_major_desc(y);
  if (sources.empty()) return ops::Kernel([](ops::KernelContext&) { return Status::ok(); });
  return primitive_kernel(dnnl::concat(dnnl::concat::primitive_desc(dst, static_cast<int>(axis), sources, cpu_engine())),
                          [sources, present, dst](ops::KernelContext& ctx) {
                            std::unordered_map<int, memory> args{{DNNL_ARG_DST, wrap(dst, *ctx.output(0))}};
                            for (size_t k = 0; k < present.size(); ++k)
                              args.emplace(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(k), wrap(sources[k], *ctx.input(present[k])));
                            return args;
                          });
}

}  // namespace

void add_slice_concat_kernels(CpuKernelTable& table) {
  table["Slice"] = node_only(slice_supports, build_slice);
  table["Concat"] = node_only(concat_supports, build_concat);
}

}  // namespace kiln::providers::cpu
