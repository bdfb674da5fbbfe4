// cpu kernels for Slice, Concat and Split. Slice of float32 with constant arguments and positive
// steps is a oneDNN reorder that reads the input through the slice's offset and strides; any other
// Slice (arguments computed by the graph, negative steps, other dtypes) is Kiln's strided copy of
// output rows over OpenMP threads, the view computed when it runs by the reference's own rule.
// Concat is oneDNN's concat primitive along any axis for float32 of dims known at plan time, else
// (other dtypes, run-time dims, or rows of small pieces) one copy per input and outer row; Split copies each output's block of every
// outer row with one memcpy, the copies spread over OpenMP threads, for any fixed-size dtype.
#include <algorithm>
#include <cstdint>
#include <cstring>

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

// Whether oneDNN's reorder runs the Slice: float32, constant arguments, positive steps.
bool slice_by_reorder(const ir::Node& node) {
  if (!float_tensors(node, {0}).supported) return false;
  for (size_t i = 1; i < node.inputs.size(); ++i)
    if (node.inputs[i] && !constant_input(node, i)) return false;
  if (const Tensor* steps = node.inputs.size() > 4 ? constant_input(node, 4) : nullptr)
    for (int64_t i = 0; i < steps->element_count(); ++i)
      if (element_as_double(*steps, i) <= 0) return false;
  return true;
}

Capability slice_supports(const ir::Node& node) {
  return fixed_size_tensor(node, 0);
}

// out[o] = in[base + sum(o_d * strides_d)], one output row of the innermost dim at a time.
void strided_copy(const Tensor& in, const ops::StridedView& view, Tensor& out) {
  const std::vector<int64_t>& shape = out.shape();
  const int64_t element = static_cast<int64_t>(dtype_size(out.dtype()));
  if (out.element_count() == 0) return;
  if (shape.empty()) {
    std::memcpy(out.raw_data(), static_cast<const char*>(in.raw_data()) + view.base * element, static_cast<size_t>(element));
    return;
  }
  const size_t rank = shape.size();
  const int64_t inner = shape[rank - 1], step = view.strides[rank - 1], rows = out.element_count() / inner;
  const auto* src = static_cast<const char*>(in.raw_data());
  auto* dst = static_cast<char*>(out.raw_data());
#pragma omp parallel for schedule(static) if (out.byte_size() >= (1 << 16) && rows > 1)
  for (int64_t row = 0; row < rows; ++row) {
    int64_t offset = view.base;
    for (int64_t rest = row, d = static_cast<int64_t>(rank) - 2; d >= 0; --d) {
      offset += (rest % shape[static_cast<size_t>(d)]) * view.strides[static_cast<size_t>(d)];
      rest /= shape[static_cast<size_t>(d)];
    }
    char* o = dst + row * inner * element;
    if (step == 1) {
      std::memcpy(o, src + offset * element, static_cast<size_t>(inner * element));
      continue;
    }
    for (int64_t j = 0; j < inner; ++j)
      std::memcpy(o + j * element, src + (offset + j * step) * element, static_cast<size_t>(element));
  }
}

Result<ops::Kernel> build_strided_slice() {
  return ops::Kernel([](ops::KernelContext& ctx) -> Status {
    std::vector<const Tensor*> args;
    for (size_t i = 1; i < ctx.input_count(); ++i) args.push_back(ctx.input(i));
    KILN_ASSIGN_OR_RETURN(const ops::StridedView view, ops::slice_view(ctx.node(), ctx.input(0)->shape(), args));
    strided_copy(*ctx.input(0), view, *ctx.output(0));
    return Status::ok();
  });
}

Result<ops::Kernel> build_slice(const ir::Node& node, KernelBuild& build) {
  if (!slice_by_reorder(node)) return build_strided_slice();
  KILN_ASSIGN_OR_RETURN(const ops::StridedView view, ops::slice_view(node, input_dims(node, 0), slice_arguments(node)));
  const std::vector<int64_t> y = output_dims(node, 0);
  const memory::desc src = strided_desc(y, view.strides), dst = row_major_desc(y);
  const int64_t base = view.base;
  return primitive_kernel({node, build}, dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), src, cpu_engine(), dst)),
                          [src, dst, base](ops::KernelContext& ctx, PrimitiveArgs& args) {
                            args.set(DNNL_ARG_FROM, src, ctx.input(0)->data<float>() + base);
                            args.set(DNNL_ARG_TO, dst, *ctx.output(0));
                          });
}

// Output rows whose pieces average fewer bytes than this concatenate by Kiln's copies: oneDNN's
// concat pays a fixed cost per piece (fp_detect's [1, 4420, 2] + [1, 4420, 2] along the last axis:
// 80 us by the primitive).
constexpr int64_t kSmallPieceBytes = 256;

// Whether oneDNN's concat runs the node: float32 inputs of dims known when the plan is built,
// concatenated in pieces that are not small.
bool concat_by_primitive(const ir::Node& node) {
  std::vector<size_t> inputs;
  for (size_t i = 0; i < node.inputs.size(); ++i) inputs.push_back(i);
  if (!float_tensors(node, inputs).supported) return false;
  for (const ir::Value* v : node.inputs)
    if (!v->type.shape->is_static()) return false;
  const std::vector<int64_t> y = output_dims(node, 0);
  const Result<int64_t> axis = ops::normalize_axis(node.attr_int("axis", 0), static_cast<int64_t>(y.size()));
  if (!axis.is_ok()) return true;  // the primitive's build names the error
  const int64_t outer = ops::dims_product(y, 0, static_cast<size_t>(*axis));
  const int64_t row_bytes = ops::dims_product(y, static_cast<size_t>(*axis), y.size()) * static_cast<int64_t>(sizeof(float));
  return outer <= 1 || row_bytes >= kSmallPieceBytes * static_cast<int64_t>(node.inputs.size());
}

Capability concat_supports(const ir::Node& node) {
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    const Capability c = fixed_size_tensor(node, i);
    if (!c.supported) return c;
  }
  return Capability::yes();
}

// Concat of other dtypes, or of shapes known only when it runs: each input's block of every outer
// row is one memcpy, the copies spread over OpenMP threads.
Result<ops::Kernel> build_copied_concat(const ir::Node& node) {
  return ops::Kernel([given_axis = node.attr_int("axis", 0)](ops::KernelContext& ctx) -> Status {
    Tensor& out = *ctx.output(0);
    KILN_ASSIGN_OR_RETURN(const int64_t axis, ops::normalize_axis(given_axis, static_cast<int64_t>(out.rank())));
    const auto a = static_cast<size_t>(axis);
    const int64_t outer = ops::dims_product(out.shape(), 0, a), row = ops::dims_product(out.shape(), a, out.rank());
    const int64_t element = static_cast<int64_t>(dtype_size(out.dtype()));
    std::vector<int64_t> start, width;  // each input's bytes within an output row
    for (size_t k = 0, sum = 0; k < ctx.input_count(); ++k) {
      const Tensor& in = *ctx.input(k);
      const int64_t w = outer == 0 ? 0 : in.element_count() / outer * element;
      start.push_back(static_cast<int64_t>(sum));
      width.push_back(w);
      sum += static_cast<size_t>(w);
    }
    const auto pieces = static_cast<int64_t>(ctx.input_count()), copies = outer * pieces;
    if (row * element < kSmallPieceBytes * pieces && row * element % 4 == 0 &&
        std::all_of(width.begin(), width.end(), [](int64_t w) { return w % 4 == 0; })) {
      // Small pieces: word loops per input, not a memcpy call per piece.
      auto* to = static_cast<uint32_t*>(out.raw_data());
      const int64_t row_words = row * element / 4;
      for (size_t k = 0; k < width.size(); ++k) {
        const auto* from = static_cast<const uint32_t*>(ctx.input(k)->raw_data());
        const int64_t words = width[k] / 4, first = start[k] / 4;
#pragma omp parallel for schedule(static) if (out.byte_size() >= (1 << 18))
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t w = 0; w < words; ++w) to[o * row_words + first + w] = from[o * words + w];
      }
      return Status::ok();
    }
#pragma omp parallel for schedule(static) if (out.byte_size() >= (1 << 16) && copies > 1)
    for (int64_t c = 0; c < copies; ++c) {
      const int64_t o = c / pieces;
      const auto k = static_cast<size_t>(c % pieces);
      if (width[k] == 0) continue;
      std::memcpy(static_cast<char*>(out.raw_data()) + o * row * element + start[k],
                  static_cast<const char*>(ctx.input(k)->raw_data()) + o * width[k], static_cast<size_t>(width[k]));
    }
    return Status::ok();
  });
}

Result<ops::Kernel> build_concat(const ir::Node& node, KernelBuild& build) {
  if (!concat_by_primitive(node)) return build_copied_concat(node);
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
  return primitive_kernel({node, build}, dnnl::concat(dnnl::concat::primitive_desc(dst, static_cast<int>(axis), sources, cpu_engine())),
                          [sources, present, dst](ops::KernelContext& ctx, PrimitiveArgs& args) {
                            args.set(DNNL_ARG_DST, dst, *ctx.output(0));
                            for (size_t k = 0; k < present.size(); ++k)
                              args.set(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(k), sources[k], *ctx.input(present[k]));
                          });
}

Capability split_supports(const ir::Node& node) { return fixed_size_tensor(node, 0); }

// The pieces' sizes along the axis are the outputs' own (the plan's shapes); an omitted output
// keeps its slot.
Result<ops::Kernel> build_split(const ir::Node& node) {
  return ops::Kernel([given_axis = node.attr_int("axis", 0)](ops::KernelContext& ctx) -> Status {
    const Tensor& in = *ctx.input(0);
    KILN_ASSIGN_OR_RETURN(const int64_t axis, ops::normalize_axis(given_axis, static_cast<int64_t>(in.rank())));
    const std::vector<int64_t>& shape = in.shape();
    const auto a = static_cast<size_t>(axis);
    const int64_t outer = ops::dims_product(shape, 0, a), inner = ops::dims_product(shape, a + 1, shape.size());
    const int64_t element = static_cast<int64_t>(dtype_size(in.dtype()));
    std::vector<int64_t> start, size;  // along the axis, per output
    int64_t sum = 0;
    for (size_t k = 0; k < ctx.output_count(); ++k) {
      const Tensor* piece = ctx.output(k);
      const int64_t n = piece ? piece->shape()[a] : 0;
      if (piece && piece->element_count() != outer * n * inner) return ctx.error("output " + std::to_string(k) + " does not fit the split");
      start.push_back(sum);
      size.push_back(n);
      sum += n;
    }
    if (sum > shape[a]) return ctx.error("the outputs take " + std::to_string(sum) + " along an axis of " + std::to_string(shape[a]));
    const auto* src = static_cast<const char*>(in.raw_data());
    const int64_t pieces = static_cast<int64_t>(size.size()), copies = outer * pieces;
    const bool parallel = copies > 1 && in.byte_size() >= (1 << 16);
#pragma omp parallel for schedule(static) if (parallel)
    for (int64_t c = 0; c < copies; ++c) {
      const int64_t o = c / pieces;
      const auto k = static_cast<size_t>(c % pieces);
      Tensor* piece = ctx.output(k);
      if (!piece || size[k] == 0) continue;
      const int64_t bytes = size[k] * inner * element;
      std::memcpy(static_cast<char*>(piece->raw_data()) + o * bytes, src + ((o * shape[a] + start[k]) * inner) * element,
                  static_cast<size_t>(bytes));
    }
    return Status::ok();
  });
}

}  // namespace

void add_slice_concat_kernels(CpuKernelTable& table) {
  table["Slice"] = CpuKernel{slice_supports, build_slice};
  table["Concat"] = CpuKernel{concat_supports, build_concat};
  table["Split"] = node_only(split_supports, build_split);
}

}  // namespace kiln::providers::cpu
