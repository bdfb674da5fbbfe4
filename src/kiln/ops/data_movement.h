// Helpers shared by the ops that move elements without looking at them (data movement, shape ops,
// generators): storage-size dispatch so one kernel serves every dtype (strings included), offset
// tables for strided views, and reading integer inputs (shapes, axes, pads) inside shape rules.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/ir/shape.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ops {

// A 16-byte element (complex128) moved as a unit.
struct Bytes16 {
  uint64_t lo = 0, hi = 0;
};

// Calls fn.template operator()<T>() with T an unsigned integer of the element's size, Bytes16 or
// std::string; returns false for kUndefined. Value-initialised T{} is the dtype's zero.
template <class F>
bool visit_storage(DType dtype, F&& fn) {
  if (dtype == DType::kString) {
    fn.template operator()<std::string>();
    return true;
  }
  switch (dtype_size(dtype)) {
    case 1: fn.template operator()<uint8_t>(); return true;
    case 2: fn.template operator()<uint16_t>(); return true;
    case 4: fn.template operator()<uint32_t>(); return true;
    case 8: fn.template operator()<uint64_t>(); return true;
    case 16: fn.template operator()<Bytes16>(); return true;
    default: return false;
  }
}

// Calls fn(index, linear) for every index of `shape` in row-major order.
template <class F>
void for_each_index(const std::vector<int64_t>& shape, F&& fn) {
  const int64_t count = shape_element_count(shape);
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    fn(static_cast<const std::vector<int64_t>&>(index), i);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++index[d] < shape[d]) break;
      index[d] = 0;
    }
  }
}

// Copies `count` elements from src[src_offset...] to dst[dst_offset...] (same dtype).
void copy_elements(const Tensor& src, int64_t src_offset, Tensor& dst, int64_t dst_offset, int64_t count);
// Copies every element of `src` into `dst` (same dtype and element count).
void copy_all_elements(const Tensor& src, Tensor& dst);

// dst[i] = src[offsets[i]] for every element of dst; a negative offset writes the dtype's zero.
void gather_by_offsets(const Tensor& src, Tensor& dst, const std::vector<int64_t>& offsets);

// Offsets read by a strided view: for each index of `out_shape` in row-major order,
// base + sum(index[d] * strides[d]).
std::vector<int64_t> strided_offsets(const std::vector<int64_t>& out_shape, const std::vector<int64_t>& strides,
                                     int64_t base = 0);
// Where a Slice reads its input: output position (i0, i1, ...) reads input element
// base + sum(ik * strides[k]). `args` are Slice's inputs 1..4 (starts, ends, axes, steps; nullptr
// when omitted); before opset 10 the attributes are read instead.
struct StridedView {
  int64_t base = 0;
  std::vector<int64_t> strides;
};
Result<StridedView> slice_view(const ir::Node& node, const std::vector<int64_t>& in_shape,
                               const std::vector<const Tensor*>& args);

// Attribute `attr` of `node` as a permutation of `rank` axes, `fallback` when the node has none.
// InvalidModel naming the node and attribute when it is not a permutation.
Result<std::vector<int64_t>> permutation_attr(const ir::Node& node, const std::string& attr, size_t rank,
                                              std::vector<int64_t> fallback);

// Transpose's permutation of `rank` axes (its perm, or the axes reversed when it has none).
Result<std::vector<int64_t>> transpose_perm(const ir::Node& node, size_t rank);

// Offsets of the elements of a row-major tensor of `in_shape` transposed by `perm`, in output order.
std::vector<int64_t> permuted_offsets(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& perm);

// Pad, shared by the reference and cpu kernels. Pad's mode attribute (InvalidModel naming the node
// when unknown; "wrap" from opset 19).
enum class PadMode { kConstant, kReflect, kEdge, kWrap };
Result<PadMode> pad_mode(const ir::Node& node);
// Input coordinate for output coordinate `o` on an axis of size `n` padded by `begin` (negative:
// cropped); -1 where the position takes the constant.
int64_t pad_source(int64_t o, int64_t begin, int64_t n, PadMode mode);
// A Pad kernel's pads over every axis (begins then ends, 2 x rank), from the attribute (< 11) or
// input 1, over the axes of input 3 (opset 18) when given, checked against the output's shape.
Result<std::vector<int64_t>> run_time_pads(const KernelContext& ctx, PadMode mode);
// The value constant-mode Pad writes, of the input's storage type T: input 2 (opset 11 on; a
// string pads with its string), else the `value` attribute, else zero.
template <class T>
Result<T> pad_constant(const KernelContext& ctx) {
  const Tensor* value = ctx.opset() >= 11 ? ctx.input(2) : nullptr;
  if (value && value->element_count() < 1) return ctx.error("constant_value is empty");
  if (value) return value->data<T>()[0];
  if constexpr (std::is_same_v<T, std::string>) return T{};
  else return from_double<T>(ctx.node().attr_float("value", 0.0f));
}

// ConstantOfShape's fill value: its one-element tensor attribute, float 0 by default; InvalidModel
// naming the node when the tensor holds another count.
Result<Tensor> fill_value(const ir::Node& node);

// GatherElements / ScatterElements: the indices have the data's rank and are no larger on any dim
// but the axis (InvalidArgument naming the node otherwise).
Status check_element_indices_shape(const KernelContext& ctx, const std::vector<int64_t>& data_shape,
                                   const std::vector<int64_t>& index_shape, size_t axis);

// Product of dims [begin, end) of a static shape.
int64_t dims_product(const std::vector<int64_t>& dims, size_t begin, size_t end);
// Product of (possibly symbolic) dims: static when all are static, the symbol when exactly one dim
// is symbolic and the rest are 1, else unknown.
ir::Dim dims_product(const std::vector<ir::Dim>& dims);

// The values of integer input `i` when known at this point; nullopt when not known. InvalidModel
// naming the node when the input is not an int32/int64 tensor.
Result<std::optional<std::vector<int64_t>>> known_int64s(const InferenceContext& ctx, size_t i,
                                                         const std::string& what);

// Wraps a shape rule so that it first checks the first `count` inputs are present: InvalidModel
// naming the node instead of reading a missing input's type.
ShapeRule with_required_inputs(size_t count, ShapeRule rule);

// An output type with the input's dtype and the given shape (nullopt: rank unknown).
inline ir::TensorType typed_like(const ir::TensorType& in, std::optional<ir::Shape> shape) {
  return ir::TensorType{in.dtype, std::move(shape)};
}
// A shape of `rank` unknown dims.
inline ir::Shape unknown_shape(size_t rank) { return ir::Shape(std::vector<ir::Dim>(rank)); }

// DepthToSpace (to_space) and SpaceToDepth as a transpose: the input's 6-d view and the
// permutation of it whose row-major order is the output's. InvalidModel naming the node for a
// blocksize that does not divide the dims.
struct BlockRearrange {
  std::vector<int64_t> view;  // 6-d view of the input
  std::vector<int64_t> perm;  // transpose of the view that gives the output's order
};
Result<BlockRearrange> block_rearrange(const ir::Node& node, const std::vector<int64_t>& in, bool to_space);

}  // namespace kiln::ops
