// Which dims a Reduce* node reduces: its axes come from the `axes` attribute, or from input 1 for
// ReduceSum from opset 13 and every other reduction from opset 18, where noop_with_empty_axes makes
// an empty list an identity. Shared by the ops' shape rule and reference kernel and by the
// providers' kernels.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ops {

// Whether `node` reads its axes from input 1.
bool reduction_axes_from_input(const ir::Node& node);

// The axes a node reduces over: nullopt while an axes input's value is unknown; an empty list
// means every axis unless `noop` is set.
struct ReductionAxes {
  std::optional<std::vector<int64_t>> axes;
  bool noop = false;
};

// `has_axes_input`: the node has an input 1; `axes_value`: its value when known.
Result<ReductionAxes> reduction_axes(const ir::Node& node, bool has_axes_input, const Tensor* axes_value);

// Which of `rank` dims are reduced (all when `axes` is empty); InvalidModel on an axis out of range
// or repeated.
Result<std::vector<bool>> reduced_dims(const std::vector<int64_t>& axes, int64_t rank);

// A reduction of a dense tensor seen as [outer, count, inner]: `count` reduced elements for each
// of the outer x inner kept positions.
struct ReductionView {
  int64_t outer = 1, count = 1, inner = 1;
};

// The view of reducing the `reduced` dims of `x`, when its reduced dims above 1 are adjacent (dims
// of 1 between them do not matter); nullopt when a kept dim above 1 lies between two of them.
std::optional<ReductionView> reduction_view(const std::vector<int64_t>& x, const std::vector<bool>& reduced);

}  // namespace kiln::ops
