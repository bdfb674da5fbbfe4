// subnormal_flushing: float32 constants' subnormal values flushed to signed zeros.
#include "kiln/passes/subnormal_flushing.h"

#include <cmath>
#include <limits>

namespace kiln::passes {

namespace {

bool is_subnormal(float v) { return v != 0.0f && std::fabs(v) < std::numeric_limits<float>::min(); }

}  // namespace

Result<bool> flush_subnormal_constants(ir::Graph& graph, const PassContext&) {
  bool changed = false;
  for (const auto& value : graph.values()) {
    if (!value->initializer || value->initializer->dtype() != DType::kFloat) continue;
    const Tensor& t = *value->initializer;
    const float* v = t.data<float>();
    const int64_t n = t.element_count();
    int64_t first = 0;
    while (first < n && !is_subnormal(v[first])) ++first;
    if (first == n) continue;
    // A new tensor: the old storage may be shared with another copy of the graph.
    Tensor flushed = Tensor::allocate(DType::kFloat, t.shape());
    float* out = flushed.data<float>();
    for (int64_t i = 0; i < n; ++i) out[i] = is_subnormal(v[i]) ? std::copysign(0.0f, v[i]) : v[i];
    value->initializer = std::move(flushed);
    changed = true;
  }
  return changed;
}

}  // namespace kiln::passes
