// Kiln's own element-wise loop over numpy-broadcast operands of any element types, for the ops
// oneDNN has no primitive for (comparisons, logic, Where, PRelu, Cast, Mod, BitShift, the variadic
// Sum, Mean, Max and Min), with the capability check they share. The op is viewed at its
// smallest rank (broadcast_view.h); the innermost dim is cut into chunks spread over OpenMP
// threads; within a chunk each operand is either read in step or held as one value, fixed at
// compile time, so the inner loop vectorises.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

#include "kiln/ops/family_support.h"
#include "kiln/providers/cpu/broadcast_view.h"
#include "kiln/providers/provider.h"

namespace kiln::providers::cpu {

template <class T>
struct Operand {
  const T* data;
  std::vector<int64_t> shape;
};

namespace broadcast_detail {

// out[j] = f(in_k[j] or in_k[0], ...) for j < n; bit k of Held: operand k is one value here.
template <unsigned Held, class Out, class F, class Pointers, size_t... K>
void run_chunk(Out* out, int64_t n, const F& f, const Pointers& in, std::index_sequence<K...>) {
  for (int64_t j = 0; j < n; ++j) out[j] = f(std::get<K>(in)[((Held >> K) & 1u) ? 0 : j]...);
}

template <class Out, class F, class Pointers, size_t... K>
void run_chunk_held(unsigned held, Out* out, int64_t n, const F& f, const Pointers& in, std::index_sequence<K...> ks) {
  [&]<unsigned... H>(std::integer_sequence<unsigned, H...>) {
    ((held == H ? (run_chunk<H>(out, n, f, in, ks), true) : false) || ...);
  }(std::make_integer_sequence<unsigned, (1u << sizeof...(K))>{});
}

}  // namespace broadcast_detail

// out (of out_shape, row-major) = f(operands...) element by element, the operands broadcast
// numpy-style to out_shape. f takes the operands' element types and returns Out.
template <class Out, class F, class... In>
void broadcast_loop(Out* out, const std::vector<int64_t>& out_shape, const F& f, const Operand<In>&... operands) {
  constexpr size_t N = sizeof...(In);
  const BroadcastView view = collapse_broadcast(out_shape, {operands.shape...});
  const size_t rank = view.output.size();
  int64_t total = 1;
  for (int64_t d : view.output) total *= d;
  if (total <= 0) return;
  // Each operand's element stride per view dim: 0 where it is broadcast.
  std::array<std::vector<int64_t>, N> strides;
  for (size_t k = 0; k < N; ++k) {
    strides[k].assign(rank, 0);
    for (int64_t d = static_cast<int64_t>(rank) - 1, step = 1; d >= 0; --d) {
      const auto du = static_cast<size_t>(d);
      strides[k][du] = view.operands[k][du] == 1 && view.output[du] != 1 ? 0 : step;
      step *= view.operands[k][du];
    }
  }
  unsigned held = 0;
  for (size_t k = 0; k < N; ++k) held |= (strides[k][rank - 1] == 0 ? 1u : 0u) << k;
  const int64_t inner = view.output[rank - 1], rows = total / inner;
  constexpr int64_t kChunk = 1 << 14;
  const int64_t chunks_per_row = (inner + kChunk - 1) / kChunk, tasks = rows * chunks_per_row;
  const bool parallel = tasks > 1 && total * static_cast<int64_t>(sizeof(Out)) >= (1 << 16);
  const std::tuple<const In*...> bases{operands.data...};
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t task = 0; task < tasks; ++task) {
    const int64_t row = task / chunks_per_row, begin = (task % chunks_per_row) * kChunk;
    std::array<int64_t, N> offset{};
    for (int64_t rest = row, d = static_cast<int64_t>(rank) - 2; d >= 0; --d) {
      const int64_t i = rest % view.output[static_cast<size_t>(d)];
      rest /= view.output[static_cast<size_t>(d)];
      for (size_t k = 0; k < N; ++k) offset[k] += i * strides[k][static_cast<size_t>(d)];
    }
    for (size_t k = 0; k < N; ++k) offset[k] += begin * strides[k][rank - 1];
    const std::tuple<const In*...> in = [&]<size_t... K>(std::index_sequence<K...>) {
      return std::tuple<const In*...>{(std::get<K>(bases) + offset[K])...};
    }(std::index_sequence_for<In...>{});
    broadcast_detail::run_chunk_held(held, out + row * inner + begin, std::min(kChunk, inner - begin), f, in,
                                     std::index_sequence_for<In...>{});
  }
}

// Every input and output is a tensor (of any rank: the loops read shapes when they run); the
// first input's dtype is in List.
template <class List>
Capability typed_tensors(const ir::Node& node, size_t typed_input = 0) {
  if (node.opset_version < 7 && node.op_type != "Not")
    return Capability::no(node.op_type + "-" + std::to_string(node.opset_version) + " (its legacy broadcast attribute)");
  for (const ir::Value* v : node.inputs)
    if (!v || !v->type.is_tensor()) return Capability::no(node.op_type + " of a value that is not a tensor");
  for (const ir::Value* v : node.outputs)
    if (v && !v->type.is_tensor()) return Capability::no(node.op_type + " of a value that is not a tensor");
  const DType d = node.input(typed_input)->type.dtype;
  if (!ops::list_has(List{}, d)) return Capability::no(node.op_type + " of " + dtype_name(d));
  return Capability::yes();
}

template <class T>
Operand<T> operand(const Tensor& t) {
  return {t.data<T>(), t.shape()};
}

}  // namespace kiln::providers::cpu
