// Tensor value helpers of the public API: seeded random tensors and element reads as double.
#include <cmath>
#include <random>

#include "kiln/ir/float16.h"
#include "kiln/ir/float8.h"
#include "kiln/tensor.h"

namespace kiln {

namespace {

double random_value(DType dtype, std::mt19937_64& rng) {
  if (dtype == DType::kBool) return static_cast<double>(rng() & 1u);
  if (dtype == DType::kFloat || dtype == DType::kDouble || dtype == DType::kFloat16 || dtype == DType::kBFloat16 ||
      (dtype >= DType::kFloat8E4M3FN && dtype <= DType::kFloat8E5M2FNUZ))
    return std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  if (dtype == DType::kInt4) return static_cast<double>(static_cast<int>(rng() % 16) - 8);
  if (dtype == DType::kUInt4) return static_cast<double>(rng() % 16);
  return static_cast<double>(rng() % 10);
}

template <class T>
void store(void* data, int64_t i, double v) {
  static_cast<T*>(data)[i] = static_cast<T>(v);
}

void store_value(Tensor& t, int64_t i, double v) {
  void* d = t.raw_data();
  switch (t.dtype()) {
    case DType::kFloat: store<float>(d, i, v); break;
    case DType::kDouble: store<double>(d, i, v); break;
    case DType::kFloat16: static_cast<Float16*>(d)[i] = ir::to_float16(static_cast<float>(v)); break;
    case DType::kBFloat16: static_cast<BFloat16*>(d)[i] = ir::to_bfloat16(static_cast<float>(v)); break;
    case DType::kInt8: store<int8_t>(d, i, v); break;
    case DType::kInt16: store<int16_t>(d, i, v); break;
    case DType::kInt32: store<int32_t>(d, i, v); break;
    case DType::kInt64: store<int64_t>(d, i, v); break;
    case DType::kUInt8: store<uint8_t>(d, i, v); break;
    case DType::kUInt16: store<uint16_t>(d, i, v); break;
    case DType::kUInt32: store<uint32_t>(d, i, v); break;
    case DType::kUInt64: store<uint64_t>(d, i, v); break;
    case DType::kBool: store<bool>(d, i, v); break;
    case DType::kFloat8E4M3FN: static_cast<Float8E4M3FN*>(d)[i] = ir::to_float8<Float8E4M3FN>(static_cast<float>(v)); break;
    case DType::kFloat8E4M3FNUZ: static_cast<Float8E4M3FNUZ*>(d)[i] = ir::to_float8<Float8E4M3FNUZ>(static_cast<float>(v)); break;
    case DType::kFloat8E5M2: static_cast<Float8E5M2*>(d)[i] = ir::to_float8<Float8E5M2>(static_cast<float>(v)); break;
    case DType::kFloat8E5M2FNUZ: static_cast<Float8E5M2FNUZ*>(d)[i] = ir::to_float8<Float8E5M2FNUZ>(static_cast<float>(v)); break;
    case DType::kInt4: static_cast<Int4*>(d)[i].value = static_cast<int8_t>(v); break;
    case DType::kUInt4: static_cast<UInt4*>(d)[i].value = static_cast<uint8_t>(v); break;
    case DType::kString: t.data<std::string>()[i] = "s" + std::to_string(static_cast<int64_t>(v)); break;
    default: break;
  }
}

}  // namespace

Tensor random_tensor(DType dtype, std::vector<int64_t> shape, uint64_t seed) {
  Tensor t = Tensor::allocate(dtype, std::move(shape));
  if (!t.defined()) return t;
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < t.element_count(); ++i) store_value(t, i, random_value(dtype, rng));
  return t;
}

double element_as_double(const Tensor& t, int64_t i) {
  if (i < 0 || i >= t.element_count()) return std::nan("");
  const void* d = t.raw_data();
  switch (t.dtype()) {
    case DType::kFloat: return static_cast<const float*>(d)[i];
    case DType::kDouble: return static_cast<const double*>(d)[i];
    case DType::kFloat16: return ir::to_float(static_cast<const Float16*>(d)[i]);
    case DType::kBFloat16: return ir::to_float(static_cast<const BFloat16*>(d)[i]);
    case DType::kInt8: return static_cast<const int8_t*>(d)[i];
    case DType::kInt16: return static_cast<const int16_t*>(d)[i];
    case DType::kInt32: return static_cast<const int32_t*>(d)[i];
    case DType::kInt64: return static_cast<double>(static_cast<const int64_t*>(d)[i]);
    case DType::kUInt8: return static_cast<const uint8_t*>(d)[i];
    case DType::kUInt16: return static_cast<const uint16_t*>(d)[i];
    case DType::kUInt32: return static_cast<const uint32_t*>(d)[i];
    case DType::kUInt64: return static_cast<double>(static_cast<const uint64_t*>(d)[i]);
    case DType::kBool: return static_cast<const bool*>(d)[i] ? 1.0 : 0.0;
    case DType::kFloat8E4M3FN: return ir::to_float(static_cast<const Float8E4M3FN*>(d)[i]);
    case DType::kFloat8E4M3FNUZ: return ir::to_float(static_cast<const Float8E4M3FNUZ*>(d)[i]);
    case DType::kFloat8E5M2: return ir::to_float(static_cast<const Float8E5M2*>(d)[i]);
    case DType::kFloat8E5M2FNUZ: return ir::to_float(static_cast<const Float8E5M2FNUZ*>(d)[i]);
    case DType::kInt4: return static_cast<const Int4*>(d)[i].value;
    case DType::kUInt4: return static_cast<const UInt4*>(d)[i].value;
    default: return std::nan("");
  }
}

}  // namespace kiln
