// cpu kernels for the comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual), the logic
// ops (And, Or, Xor, Not), the bitwise ops (BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot), Where
// and PRelu, over every numeric dtype the reference runs: Kiln's
// own broadcast loop (broadcast_loop.h) applying the element functions the reference kernels use
// (ops/compare_select.h). oneDNN 2.6's binary primitive compares float and 8/32-bit integers only.
// A float PRelu whose slope runs along the last axis only (a per-channel slope on a channels-last
// activation, where activation_layout puts a Conv -> PRelu) reads the slope tiled over whole rows
// instead: rows of 13 or 103 channels cost the broadcast loop more per row than per element.
#include <algorithm>
#include <vector>

#include "kiln/ops/compare_select.h"
#include "kiln/providers/cpu/broadcast_loop.h"
#include "kiln/providers/cpu/cpu_kernels.h"

namespace kiln::providers::cpu {
namespace {

// a op b -> bool for the comparisons (numeric and, for Equal, bool inputs) and And/Or/Xor.
template <class List, class WithFn>
CpuKernel binary_to_bool(WithFn with_fn) {
  return node_only([](const ir::Node& node) { return typed_tensors<List>(node); },
                   [with_fn](const ir::Node& node) -> Result<ops::Kernel> {
                     ops::Kernel kernel;
                     const std::string op = node.op_type;
                     ops::dispatch<List>(node.input(0)->type.dtype, [&]<class T>() {
                       with_fn(op, [&](auto fn) {
                         kernel = [fn](ops::KernelContext& ctx) {
                           Tensor& out = *ctx.output(0);
                           broadcast_loop(out.data<bool>(), out.shape(),
                                          [fn](T a, T b) { return fn(ops::load(a), ops::load(b)); },
                                          operand<T>(*ctx.input(0)), operand<T>(*ctx.input(1)));
                           return Status::ok();
                         };
                       });
                     });
                     return kernel;
                   });
}

// a op b -> a's type for the bitwise ops.
CpuKernel bitwise_kernel() {
  return node_only([](const ir::Node& node) { return typed_tensors<ops::IntTypes>(node); },
                   [](const ir::Node& node) -> Result<ops::Kernel> {
                     ops::Kernel kernel;
                     const std::string op = node.op_type;
                     ops::dispatch<ops::IntTypes>(node.input(0)->type.dtype, [&]<class T>() {
                       ops::with_bitwise(op, [&](auto fn) {
                         kernel = [fn](ops::KernelContext& ctx) {
                           Tensor& out = *ctx.output(0);
                           broadcast_loop(out.data<T>(), out.shape(), [fn](T a, T b) { return fn(a, b); },
                                          operand<T>(*ctx.input(0)), operand<T>(*ctx.input(1)));
                           return Status::ok();
                         };
                       });
                     });
                     return kernel;
                   });
}

CpuKernel bitwise_not_kernel() {
  return node_only([](const ir::Node& node) { return typed_tensors<ops::IntTypes>(node); },
                   [](const ir::Node& node) -> Result<ops::Kernel> {
                     ops::Kernel kernel;
                     ops::dispatch<ops::IntTypes>(node.input(0)->type.dtype, [&]<class T>() {
                       kernel = [](ops::KernelContext& ctx) {
                         Tensor& out = *ctx.output(0);
                         broadcast_loop(out.data<T>(), out.shape(), [](T a) { return ops::BitwiseNotFn{}(a); },
                                        operand<T>(*ctx.input(0)));
                         return Status::ok();
                       };
                     });
                     return kernel;
                   });
}

CpuKernel not_kernel() {
  return node_only([](const ir::Node& node) { return typed_tensors<ops::BoolTypes>(node); },
                   [](const ir::Node&) -> Result<ops::Kernel> {
                     return ops::Kernel([](ops::KernelContext& ctx) {
                       Tensor& out = *ctx.output(0);
                       broadcast_loop(out.data<bool>(), out.shape(), ops::NotFn{}, operand<bool>(*ctx.input(0)));
                       return Status::ok();
                     });
                   });
}

CpuKernel where_kernel() {
  return node_only([](const ir::Node& node) { return typed_tensors<ops::NumericOrBoolTypes>(node, 1); },
                   [](const ir::Node& node) -> Result<ops::Kernel> {
                     ops::Kernel kernel;
                     ops::dispatch<ops::NumericOrBoolTypes>(node.input(1)->type.dtype, [&]<class T>() {
                       kernel = [](ops::KernelContext& ctx) {
                         Tensor& out = *ctx.output(0);
                         broadcast_loop(out.data<T>(), out.shape(), [](bool c, T x, T y) { return c ? x : y; },
                                        operand<bool>(*ctx.input(0)), operand<T>(*ctx.input(1)), operand<T>(*ctx.input(2)));
                         return Status::ok();
                       };
                     });
                     return kernel;
                   });
}

// y = PRelu(x, slope) for x viewed as [rows, channels], the slope one value per channel: the slope
// repeated over enough rows to fill a vector-friendly tile, the tensor walked tile by tile.
void prelu_per_last_axis(const float* x, const float* slope, float* y, int64_t rows, int64_t channels) {
  const int64_t rows_per_tile = std::max<int64_t>(1, 256 / channels);
  const int64_t tile = rows_per_tile * channels, total = rows * channels;
  std::vector<float> tiled(static_cast<size_t>(tile));
  for (int64_t i = 0; i < tile; ++i) tiled[static_cast<size_t>(i)] = slope[i % channels];
  const float* s = tiled.data();
  const int64_t tiles = (total + tile - 1) / tile;
#pragma omp parallel for schedule(static) if (total >= (1 << 14) && tiles > 1)
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t begin = t * tile, n = std::min(tile, total - begin);
    const float* xt = x + begin;
    float* yt = y + begin;
    for (int64_t j = 0; j < n; ++j) yt[j] = ops::PReluFn{}(xt[j], s[j]);
  }
}

CpuKernel prelu_kernel() {
  return node_only([](const ir::Node& node) { return typed_tensors<ops::NumericTypes>(node); },
                   [](const ir::Node& node) -> Result<ops::Kernel> {
                     ops::Kernel kernel;
                     ops::dispatch<ops::NumericTypes>(node.input(0)->type.dtype, [&]<class T>() {
                       kernel = [](ops::KernelContext& ctx) {
                         Tensor& out = *ctx.output(0);
                         if constexpr (std::is_same_v<T, float>) {
                           const Tensor &x = *ctx.input(0), &slope = *ctx.input(1);
                           const BroadcastView view = collapse_broadcast(out.shape(), {x.shape(), slope.shape()});
                           if (view.output.size() == 2 && view.operands[0] == view.output && view.operands[1][0] == 1 &&
                               view.operands[1][1] == view.output[1] && view.output[1] > 1) {
                             prelu_per_last_axis(x.data<float>(), slope.data<float>(), out.data<float>(), view.output[0], view.output[1]);
                             return Status::ok();
                           }
                         }
                         broadcast_loop(out.data<T>(), out.shape(),
                                        [](T x, T slope) { return ops::store<T>(ops::PReluFn{}(ops::load(x), ops::load(slope))); },
                                        operand<T>(*ctx.input(0)), operand<T>(*ctx.input(1)));
                         return Status::ok();
                       };
                     });
                     return kernel;
                   });
}

}  // namespace

void add_compare_select_kernels(CpuKernelTable& table) {
  auto comparison = [](const std::string& op, auto&& fn) { return ops::with_comparison(op, fn); };
  auto logic = [](const std::string& op, auto&& fn) { return ops::with_logic(op, fn); };
  table["Equal"] = binary_to_bool<ops::NumericOrBoolTypes>(comparison);
  for (const char* op : {"Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) table[op] = binary_to_bool<ops::NumericTypes>(comparison);
  for (const char* op : {"And", "Or", "Xor"}) table[op] = binary_to_bool<ops::BoolTypes>(logic);
  table["Not"] = not_kernel();
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) table[op] = bitwise_kernel();
  table["BitwiseNot"] = bitwise_not_kernel();
  table["Where"] = where_kernel();
  table["PRelu"] = prelu_kernel();
}

}  // namespace kiln::providers::cpu
