// cpu kernels for the comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual), the logic
// ops (And, Or, Xor, Not), the bitwise ops (BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot), Where
// and PRelu, over every numeric dtype the reference runs: Kiln's
// own broadcast loop (broadcast_loop.h) applying the element functions the reference kernels use
// (ops/compare_select.h). oneDNN 2.6's binary primitive compares float and 8/32-bit integers only.
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

CpuKernel prelu_kernel() {
  return node_only([](const ir::Node& node) { return typed_tensors<ops::NumericTypes>(node); },
                   [](const ir::Node& node) -> Result<ops::Kernel> {
                     ops::Kernel kernel;
                     ops::dispatch<ops::NumericTypes>(node.input(0)->type.dtype, [&]<class T>() {
                       kernel = [](ops::KernelContext& ctx) {
                         Tensor& out = *ctx.output(0);
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
