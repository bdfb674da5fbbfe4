// Reduce* axes: from the attribute or input 1, as a mask over the dims, and the [outer, count,
// inner] view of the reduction.
#include "kiln/ops/reduction_axes.h"

#include <string>

#include "kiln/ops/op_helpers.h"

namespace kiln::ops {

bool reduction_axes_from_input(const ir::Node& node) {
  return node.opset_version >= 18 || (node.op_type == "ReduceSum" && node.opset_version >= 13);
}

Result<ReductionAxes> reduction_axes(const ir::Node& node, bool has_axes_input, const Tensor* axes_value) {
  ReductionAxes spec;
  if (!reduction_axes_from_input(node)) {
    spec.axes = node.attr_ints("axes");
    return spec;
  }
  if (has_axes_input && !axes_value) return spec;
  if (axes_value) {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, read_int64s(*axes_value, "axes"));
    spec.axes = std::move(axes);
  } else {
    spec.axes = std::vector<int64_t>{};
  }
  spec.noop = spec.axes->empty() && node.attr_int("noop_with_empty_axes", 0) != 0;
  return spec;
}

Result<std::vector<bool>> reduced_dims(const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty());
  for (int64_t a : axes) {
    KILN_ASSIGN_OR_RETURN(int64_t axis, normalize_axis(a, rank, "axis"));
    if (reduced[static_cast<size_t>(axis)]) return invalid_model("axis " + std::to_string(a) + " is repeated");
    reduced[static_cast<size_t>(axis)] = true;
  }
  return reduced;
}

std::optional<ReductionView> reduction_view(const std::vector<int64_t>& x, const std::vector<bool>& reduced) {
  ReductionView view;
  bool after_reduced = false;  // past a reduced dim above 1
  for (size_t d = 0; d < x.size(); ++d) {
    if (x[d] == 1) continue;
    if (reduced[d] && view.inner > 1) return std::nullopt;  // a kept dim between two reduced ones
    if (reduced[d]) after_reduced = true;
    (reduced[d] ? view.count : after_reduced ? view.inner : view.outer) *= x[d];
  }
  return view;
}

}  // namespace kiln::ops
