// Shared op helpers: broadcasting, axes, integer tensor reading.
#include "kiln/ops/op_helpers.h"

namespace kiln::ops {

bool is_float_dtype(DType d) {
  return d == DType::kFloat || d == DType::kDouble || d == DType::kFloat16 || d == DType::kBFloat16;
}

bool is_integer_dtype(DType d) {
  switch (d) {
    case DType::kInt8: case DType::kInt16: case DType::kInt32: case DType::kInt64:
    case DType::kUInt8: case DType::kUInt16: case DType::kUInt32: case DType::kUInt64: return true;
    default: return false;
  }
}

bool is_signed_dtype(DType d) {
  return d == DType::kInt8 || d == DType::kInt16 || d == DType::kInt32 || d == DType::kInt64 || is_float_dtype(d);
}

Result<int64_t> normalize_axis(int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= rank)
    return invalid_model(what + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

Result<ir::Shape> broadcast_shapes(const ir::Shape& a, const ir::Shape& b) {
  const size_t rank = std::max(a.rank(), b.rank());
  std::vector<ir::Dim> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const bool has_a = i < a.rank(), has_b = i < b.rank();
    const ir::Dim da = has_a ? a[a.rank() - 1 - i] : ir::Dim(1);
    const ir::Dim db = has_b ? b[b.rank() - 1 - i] : ir::Dim(1);
    ir::Dim& o = out[rank - 1 - i];
    if (da.is_static() && db.is_static()) {
      if (da.value() != db.value() && da.value() != 1 && db.value() != 1)
        return invalid_model("shapes " + a.to_string() + " and " + b.to_string() + " cannot be broadcast");
      o = da.value() == 1 ? db : da;
    } else if (da.is_static() && da.value() == 1) {
      o = db;
    } else if (db.is_static() && db.value() == 1) {
      o = da;
    } else if (da.is_static()) {
      o = da;  // the other side must be equal (or 1) at run time
    } else if (db.is_static()) {
      o = db;
    } else {
      o = da == db ? da : ir::Dim::unknown();
    }
  }
  return ir::Shape(std::move(out));
}

Result<std::vector<int64_t>> broadcast_static(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  KILN_ASSIGN_OR_RETURN(ir::Shape s, broadcast_shapes(ir::Shape::from_static(a), ir::Shape::from_static(b)));
  return s.static_dims();
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in_shape, const std::vector<int64_t>& out_shape) {
  std::vector<int64_t> strides(out_shape.size(), 0);
  const std::vector<int64_t> in_strides = contiguous_strides(in_shape);
  const size_t offset = out_shape.size() - in_shape.size();
  for (size_t i = 0; i < in_shape.size(); ++i) strides[offset + i] = in_shape[i] == 1 ? 0 : in_strides[i];
  return strides;
}

BroadcastIterator::BroadcastIterator(std::vector<int64_t> shape, std::vector<std::vector<int64_t>> operand_strides)
    : shape_(std::move(shape)), strides_(std::move(operand_strides)), index_(shape_.size(), 0),
      offsets_(strides_.size(), 0) {}

void BroadcastIterator::next() {
  for (size_t d = shape_.size(); d-- > 0;) {
    if (++index_[d] < shape_[d]) {
      for (size_t k = 0; k < strides_.size(); ++k) offsets_[k] += strides_[k][d];
      return;
    }
    for (size_t k = 0; k < strides_.size(); ++k) offsets_[k] -= strides_[k][d] * (shape_[d] - 1);
    index_[d] = 0;
  }
}

Result<std::vector<int64_t>> read_int64s(const Tensor& t, const std::string& what) {
  std::vector<int64_t> out(static_cast<size_t>(std::max<int64_t>(t.element_count(), 0)));
  if (t.dtype() == DType::kInt64) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = t.data<int64_t>()[i];
  } else if (t.dtype() == DType::kInt32) {
    for (size_t i = 0; i < out.size(); ++i) out[i] = t.data<int32_t>()[i];
  } else {
    return invalid_model(what + " must be an int64 or int32 tensor, got " + dtype_name(t.dtype()));
  }
  return out;
}

Result<std::vector<float>> read_floats(const Tensor& t, const std::string& what) {
  std::vector<float> out(static_cast<size_t>(std::max<int64_t>(t.element_count(), 0)));
  bool ok = false;
  if (is_float_dtype(t.dtype())) {
    visit_dtype(t.dtype(), [&]<class T>() {
      if constexpr (!std::is_same_v<T, std::string> && !std::is_same_v<T, bool>) {
        for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<float>(to_double(t.data<T>()[i]));
        ok = true;
      }
    });
  }
  if (!ok) return invalid_model(what + " must be a floating-point tensor, got " + dtype_name(t.dtype()));
  return out;
}

std::vector<double> as_doubles(const Tensor& t) {
  std::vector<double> out(static_cast<size_t>(t.element_count()));
  visit_dtype(t.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, std::string>)
      for (size_t i = 0; i < out.size(); ++i) out[i] = to_double(t.data<T>()[i]);
  });
  return out;
}

void store_double(Tensor& t, int64_t i, double v) {
  visit_dtype(t.dtype(), [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) t.data<bool>()[i] = v != 0;
    else if constexpr (!std::is_same_v<T, std::string>) t.data<T>()[i] = from_double<T>(v);
  });
}

Tensor make_int64_tensor(const std::vector<int64_t>& values) {
  return Tensor::from_vector<int64_t>(DType::kInt64, {static_cast<int64_t>(values.size())}, values);
}

}  // namespace kiln::ops
