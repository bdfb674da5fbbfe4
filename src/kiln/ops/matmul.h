// Numpy matmul geometry shared by MatMul and the integer matmuls (MatMulInteger, QLinearMatMul):
// the output-shape rule (1-D operands, broadcast batch dims) and the walk over the batch of
// matrix products for concrete shapes.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "kiln/ir/shape.h"
#include "kiln/ops/elementwise_broadcast.h"
#include "kiln/ops/op_registry.h"
#include "kiln/status.h"

namespace kiln::ops {

// The output shape of matmul(input a, input b); nullopt when either rank is unknown. InvalidModel
// naming the node for rank-0 operands, differing inner dims or batch dims that do not broadcast.
Result<std::optional<ir::Shape>> matmul_output_shape(const InferenceContext& ctx, size_t a, size_t b);
// The same for operand shapes given directly (errors still name ctx's node).
Result<std::optional<ir::Shape>> matmul_output_shape(const InferenceContext& ctx, const std::optional<ir::Shape>& a,
                                                     const std::optional<ir::Shape>& b);

// MatMul of concrete tensors (the reference kernel's body, also used by kiln.FusedMatMul).
Status matmul_reference(const ir::Node& node, const Tensor& a, const Tensor& b, Tensor& y);

// One matmul of concrete shapes: 1-D operands act as [1,K] and [K,1].
struct MatMulGeometry {
  int64_t m = 1, k = 1, n = 1;
  std::vector<int64_t> a_batch, b_batch, y_batch;
};

inline MatMulGeometry matmul_geometry(const std::vector<int64_t>& as, const std::vector<int64_t>& bs,
                                      const std::vector<int64_t>& ys) {
  MatMulGeometry g;
  g.m = as.size() > 1 ? as[as.size() - 2] : 1;
  g.k = as.back();
  g.n = bs.size() > 1 ? bs.back() : 1;
  g.a_batch.assign(as.begin(), as.end() - std::min<size_t>(as.size(), 2));
  g.b_batch.assign(bs.begin(), bs.end() - std::min<size_t>(bs.size(), 2));
  g.y_batch.assign(ys.begin(), ys.end() - (as.size() > 1) - (bs.size() > 1));
  return g;
}

// Calls fn(y_matrix, a_matrix, b_matrix) for every matrix product of the broadcast batch: the
// indices of the M x N output matrix and of the M x K and K x N operand matrices it multiplies.
template <class F>
void for_each_matrix_product(const MatMulGeometry& g, F&& fn) {
  for_each_broadcast<2>(g.y_batch, {g.a_batch, g.b_batch},
                        [&](int64_t i, const std::array<int64_t, 2>& off) { fn(i, off[0], off[1]); });
}

}  // namespace kiln::ops
