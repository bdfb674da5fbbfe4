// Numpy-broadcast copy (see broadcast_copy.h).
#include "kiln/providers/cpu/broadcast_copy.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "kiln/ops/data_movement.h"

namespace kiln::providers::cpu {
namespace {

// A run of adjacent output dims that the source either matches (copied) or lacks (broadcast).
struct Run {
  int64_t size = 1;
  bool broadcast = false;
  int64_t src_stride = 0;  // source elements per step of this run; 0 when broadcast
};

std::vector<Run> collapsed_runs(const std::vector<int64_t>& src_dims, const std::vector<int64_t>& dst_dims) {
  std::vector<int64_t> src(dst_dims.size() - src_dims.size(), 1);
  src.insert(src.end(), src_dims.begin(), src_dims.end());
  std::vector<Run> runs;
  for (size_t i = 0; i < dst_dims.size(); ++i) {
    if (dst_dims[i] == 1) continue;
    const bool broadcast = src[i] == 1;
    if (!runs.empty() && runs.back().broadcast == broadcast) {
      runs.back().size *= dst_dims[i];
    } else {
      runs.push_back({dst_dims[i], broadcast});
    }
  }
  int64_t stride = 1;
  for (size_t i = runs.size(); i-- > 0;) {
    if (runs[i].broadcast) continue;
    runs[i].src_stride = stride;
    stride *= runs[i].size;
  }
  return runs;
}

template <class T>
void copy_rows(const T* src, const std::vector<Run>& runs, T* dst) {
  if (runs.empty()) {
    dst[0] = src[0];
    return;
  }
  const Run inner = runs.back();
  const std::vector<Run> outer(runs.begin(), runs.end() - 1);
  int64_t rows = 1;
  for (const Run& r : outer) rows *= r.size;
  const bool parallel = rows > 1 && rows * inner.size * static_cast<int64_t>(sizeof(T)) > (1 << 16);
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t row = 0; row < rows; ++row) {
    int64_t offset = 0;
    for (int64_t rest = row, i = static_cast<int64_t>(outer.size()); i-- > 0;) {
      offset += (rest % outer[i].size) * outer[i].src_stride;
      rest /= outer[i].size;
    }
    T* out = dst + row * inner.size;
    if (inner.broadcast) {
      std::fill_n(out, inner.size, src[offset]);
    } else {
      std::memcpy(out, src + offset, static_cast<size_t>(inner.size) * sizeof(T));
    }
  }
}

}  // namespace

void broadcast_copy(const Tensor& src, Tensor& dst) {
  if (dst.element_count() == 0) return;
  const std::vector<Run> runs = collapsed_runs(src.shape(), dst.shape());
  ops::visit_storage(dst.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, std::string>)
      copy_rows(static_cast<const T*>(src.raw_data()), runs, static_cast<T*>(dst.raw_data()));
  });
}

}  // namespace kiln::providers::cpu
