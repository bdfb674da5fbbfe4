// Window geometry for Conv, ConvTranspose and pooling: attribute reading and output-size rules.
#include "kiln/ops/spatial_geometry.h"

namespace kiln::ops {

namespace {

// An ints attribute of `n` positive values, `fallback` when absent.
Result<std::vector<int64_t>> positive_ints(const ir::Node& node, const std::string& key, size_t n, int64_t fallback) {
  if (!node.has_attr(key)) return std::vector<int64_t>(n, fallback);
  std::vector<int64_t> v = node.attr_ints(key);
  if (v.size() != n)
    return invalid_model(node.describe() + ": " + key + " has " + std::to_string(v.size()) + " values for " +
                         std::to_string(n) + " spatial axes");
  for (int64_t x : v)
    if (x <= 0) return invalid_model(node.describe() + ": " + key + " must be positive");
  return v;
}

}  // namespace

Result<WindowAttrs> read_window_attrs(const ir::Node& node, std::vector<int64_t> kernel) {
  const size_t n = kernel.size();
  WindowAttrs a;
  for (int64_t k : kernel)
    if (k <= 0) return invalid_model(node.describe() + ": kernel dims must be positive");
  a.kernel = std::move(kernel);
  KILN_ASSIGN_OR_RETURN(a.strides, positive_ints(node, "strides", n, 1));
  KILN_ASSIGN_OR_RETURN(a.dilations, positive_ints(node, "dilations", n, 1));
  a.pads = node.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  if (a.pads.size() != 2 * n)
    return invalid_model(node.describe() + ": pads has " + std::to_string(a.pads.size()) + " values, expected " +
                         std::to_string(2 * n));
  for (int64_t p : a.pads)
    if (p < 0) return invalid_model(node.describe() + ": pads must not be negative");
  a.auto_pad = node.attr_string("auto_pad", "NOTSET");
  if (a.auto_pad != "NOTSET" && a.auto_pad != "SAME_UPPER" && a.auto_pad != "SAME_LOWER" && a.auto_pad != "VALID")
    return invalid_model(node.describe() + ": unknown auto_pad '" + a.auto_pad + "'");
  a.ceil_mode = node.attr_int("ceil_mode", 0) != 0;
  return a;
}

Result<int64_t> window_output_size(WindowAttrs& a, size_t axis, int64_t in, const ir::Node& node) {
  const size_t n = a.kernel.size();
  const int64_t s = a.strides[axis];
  const int64_t extent = (a.kernel[axis] - 1) * a.dilations[axis] + 1;
  int64_t& begin = a.pads[axis];
  int64_t& end = a.pads[axis + n];
  if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
    const int64_t out = (in + s - 1) / s;
    const int64_t total = std::max<int64_t>(0, (out - 1) * s + extent - in);
    begin = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    end = total - begin;
    return out;
  }
  if (a.auto_pad == "VALID") begin = end = 0;
  const int64_t span = in + begin + end - extent;
  if (span < 0)
    return invalid_model(node.describe() + ": window of extent " + std::to_string(extent) + " does not fit axis " +
                         std::to_string(axis) + " of size " + std::to_string(in) + " with its pads");
  int64_t out = (a.ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (a.ceil_mode && (out - 1) * s >= in + begin) --out;  // the last window must start inside the image
  return out;
}

Result<std::vector<ir::Dim>> window_output_dims(WindowAttrs a, const std::vector<ir::Dim>& in, const ir::Node& node) {
  std::vector<ir::Dim> out;
  for (size_t d = 0; d < in.size(); ++d) {
    if (!in[d].is_static()) {
      out.emplace_back();
      continue;
    }
    KILN_ASSIGN_OR_RETURN(int64_t size, window_output_size(a, d, in[d].value(), node));
    out.emplace_back(size);
  }
  return out;
}

Result<int64_t> transposed_output_size(WindowAttrs& a, size_t axis, int64_t in, int64_t output_padding,
                                       int64_t requested, const ir::Node& node) {
  const size_t n = a.kernel.size();
  const int64_t extent = (a.kernel[axis] - 1) * a.dilations[axis] + 1;
  const int64_t full = a.strides[axis] * (in - 1) + output_padding + extent;
  int64_t& begin = a.pads[axis];
  int64_t& end = a.pads[axis + n];
  const bool same = a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER";
  if (a.auto_pad == "VALID") begin = end = 0;
  if (requested < 0 && same) requested = in * a.strides[axis];
  if (requested >= 0) {
    // A negative total grows the end, like output_padding (ONNX's test_convtranspose_output_shape).
    const int64_t total = full - requested;
    begin = total < 0 ? 0 : a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    end = total - begin;
    return requested;
  }
  const int64_t out = full - begin - end;
  if (out <= 0) return invalid_model(node.describe() + ": pads leave no output on axis " + std::to_string(axis));
  return out;
}

int64_t TapGrid::position_count() const {
  int64_t p = 1;
  for (int64_t d : positions) p *= d;
  return p;
}

int64_t TapGrid::kernel_count() const {
  int64_t p = 1;
  for (int64_t d : kernel) p *= d;
  return p;
}

}  // namespace kiln::ops
