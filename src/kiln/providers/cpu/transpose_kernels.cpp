// cpu kernels for Transpose, DepthToSpace and SpaceToDepth: a oneDNN reorder that reads the
// input through permuted strides, so any permutation (the channels-last boundaries above all; the
// block rearrangements are transposes of a 6-d view) runs as one threaded, vectorized copy.
// Tensors of other dtypes than float32 move as bytes: their elements are lanes of 32-bit or 8-bit
// words in an extra innermost dim, which a reorder copies bit for bit. kiln.ChannelShuffle runs the
// reference's channel permutation (ops/channel_shuffle.h) threaded: whole planes channels-first,
// a word permutation per position channels-last (a reorder would transpose [2, 58] matrices).
#include <memory>

#include "kiln/ops/channel_shuffle.h"
#include "kiln/ops/data_movement.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

constexpr size_t kMaxRank = 6;

// How a reorder copies elements of `dtype` exactly: as one word of `type`, or `lanes` of them.
struct ElementWords {
  dnnl::memory::data_type type = dnnl::memory::data_type::f32;
  int64_t lanes = 1;
};

ElementWords words_of(DType dtype) {
  const auto bytes = static_cast<int64_t>(dtype_size(dtype));
  if (dtype == DType::kFloat) return {};
  if (bytes % 4 == 0) return {dnnl::memory::data_type::s32, bytes / 4};
  return {dnnl::memory::data_type::u8, bytes};
}

// `dims` read through `strides` (in elements), as words of `words`.
dnnl::memory::desc words_desc(std::vector<int64_t> dims, std::vector<int64_t> strides, const ElementWords& words) {
  if (words.lanes > 1) {
    for (int64_t& s : strides) s *= words.lanes;
    dims.push_back(words.lanes);
    strides.push_back(1);
  }
  return dnnl::memory::desc(dnnl::memory::dims(dims.begin(), dims.end()), words.type,
                            dnnl::memory::dims(strides.begin(), strides.end()));
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(dims[i], 1);
  return strides;
}

Capability supports_transpose(const ir::Node& node) {
  const Capability numeric = fixed_size_tensor(node, 0);
  if (!numeric.supported) return numeric;
  if (!node.inputs[0]->type.shape) return Capability::no("input '" + node.inputs[0]->name + "' has unknown rank");
  const size_t rank = node.inputs[0]->type.shape->rank();
  if (rank < 1 || rank > kMaxRank)
    return Capability::no("Transpose of rank " + std::to_string(rank) + " (cpu has 1 to " + std::to_string(kMaxRank) + ")");
  return Capability::yes();
}

// The input, of dims `x` (a view of it), copied in the order of its axes permuted by `perm`.
Result<ops::Kernel> permuted_copy(const KernelSite& site, DType dtype, const std::vector<int64_t>& x, const std::vector<int64_t>& perm) {
  std::vector<int64_t> y;
  for (int64_t p : perm) y.push_back(x[static_cast<size_t>(p)]);
  const std::vector<int64_t> x_strides = row_major_strides(x);
  std::vector<int64_t> read_strides;
  for (int64_t p : perm) read_strides.push_back(x_strides[static_cast<size_t>(p)]);
  const ElementWords words = words_of(dtype);
  const dnnl::memory::desc src = words_desc(y, read_strides, words);  // the input, seen in the output's axis order
  const dnnl::memory::desc dst = words_desc(y, row_major_strides(y), words);
  return primitive_kernel(site, dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), src, cpu_engine(), dst)),
                          [src, dst](ops::KernelContext& ctx, PrimitiveArgs& args) {
                            args.set(DNNL_ARG_FROM, src, *ctx.input(0));
                            args.set(DNNL_ARG_TO, dst, *ctx.output(0));
                          });
}

Result<ops::Kernel> build_transpose(const ir::Node& node, KernelBuild& build) {
  const std::vector<int64_t> x = input_dims(node, 0);
  std::vector<int64_t> perm = node.attr_ints("perm");
  if (perm.empty())
    for (size_t i = x.size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
  return permuted_copy({node, build}, node.inputs[0]->type.dtype, x, perm);
}

Result<ops::Kernel> build_block_rearrange(const ir::Node& node, KernelBuild& build) {
  KILN_ASSIGN_OR_RETURN(const ops::BlockRearrange r, ops::block_rearrange(node, input_dims(node, 0), node.op_type == "DepthToSpace"));
  return permuted_copy({node, build}, node.inputs[0]->type.dtype, r.view, r.perm);
}

Capability block_rearrange_supports(const ir::Node& node) {
  const Capability numeric = fixed_size_tensor(node, 0);
  if (!numeric.supported) return numeric;
  if (!node.inputs[0]->type.shape || node.inputs[0]->type.shape->rank() != 4) return Capability::no(node.op_type + " of rank other than 4");
  return Capability::yes();
}

Result<ops::Kernel> build_channel_shuffle(const ir::Node& node) {
  KILN_ASSIGN_OR_RETURN(const ops::ChannelShuffleView v, ops::channel_shuffle_view(node, input_dims(node, 0)));
  const size_t element_size = dtype_size(node.inputs[0]->type.dtype);
  const bool parallel = v.outer * v.channels * v.inner * static_cast<int64_t>(element_size) >= (1 << 16);
  return ops::Kernel([v, element_size, parallel](ops::KernelContext& ctx) {
    ops::shuffle_channels(ctx.input(0)->raw_data(), ctx.output(0)->raw_data(), v.outer, v.channels, v.inner, v.groups, element_size,
                          parallel);
    return Status::ok();
  });
}

Capability channel_shuffle_supports(const ir::Node& node) {
  const Capability numeric = fixed_size_tensor(node, 0);
  if (!numeric.supported) return numeric;
  if (!node.inputs[0]->type.has_static_shape() || node.inputs[0]->type.shape->rank() < 2)
    return Capability::no("ChannelShuffle of a tensor of unknown dims or rank below 2");
  return Capability::yes();
}

}  // namespace

void add_transpose_kernels(CpuKernelTable& table) {
  table["kiln.ChannelShuffle"] = node_only(channel_shuffle_supports, build_channel_shuffle);
  table["Transpose"] = CpuKernel{supports_transpose, build_transpose};
  for (const char* op : {"DepthToSpace", "SpaceToDepth"}) table[op] = CpuKernel{block_rearrange_supports, build_block_rearrange};
}

}  // namespace kiln::providers::cpu
