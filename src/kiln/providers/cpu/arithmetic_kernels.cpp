// cpu kernels for the arithmetic oneDNN has no primitive for: Mod (any numeric dtype, both sign
// conventions), BitShift, the variadic Sum, Mean, Max and Min (any number of inputs, any
// numeric dtype for Max and Min; oneDNN's binary primitive keeps two float inputs), and Add, Sub,
// Mul and Div of the dtypes other than float32 (double, the integers, float16). Kiln's own
// broadcast loop (broadcast_loop.h) applies the element functions the reference kernels use
// (ops/arithmetic.h); the variadic ops fold their inputs into the output in order, as the
// reference does.
#include "kiln/ops/arithmetic.h"
#include "kiln/providers/cpu/broadcast_loop.h"
#include "kiln/providers/cpu/cpu_kernels.h"

namespace kiln::providers::cpu {
namespace {

CpuKernel mod_kernel() {
  return node_only([](const ir::Node& node) { return typed_tensors<ops::NumericTypes>(node); },
                   [](const ir::Node& node) -> Result<ops::Kernel> {
                     const bool c_style = node.attr_int("fmod", 0) != 0;
                     ops::Kernel kernel;
                     ops::dispatch<ops::NumericTypes>(node.input(0)->type.dtype, [&]<class T>() {
                       kernel = [c_style](ops::KernelContext& ctx) -> Status {
                         if (ops::has_integer_zero<T>(*ctx.input(1))) return ctx.error("integer division by zero");
                         Tensor& out = *ctx.output(0);
                         broadcast_loop(out.data<T>(), out.shape(),
                                        [c_style](T a, T b) { return ops::store<T>(ops::modulo(ops::load(a), ops::load(b), c_style)); },
                                        operand<T>(*ctx.input(0)), operand<T>(*ctx.input(1)));
                         return Status::ok();
                       };
                     });
                     return kernel;
                   });
}

CpuKernel bitshift_kernel() {
  return node_only([](const ir::Node& node) { return typed_tensors<ops::UnsignedIntTypes>(node); },
                   [](const ir::Node& node) -> Result<ops::Kernel> {
                     const std::string direction = node.attr_string("direction");
                     if (direction != "LEFT" && direction != "RIGHT")
                       return invalid_model(node.describe() + ": attribute direction must be LEFT or RIGHT, got '" + direction + "'");
                     const bool left = direction == "LEFT";
                     ops::Kernel kernel;
                     ops::dispatch<ops::UnsignedIntTypes>(node.input(0)->type.dtype, [&]<class T>() {
                       kernel = [left](ops::KernelContext& ctx) {
                         Tensor& out = *ctx.output(0);
                         broadcast_loop(out.data<T>(), out.shape(), [left](T x, T by) { return ops::shift(x, by, left); },
                                        operand<T>(*ctx.input(0)), operand<T>(*ctx.input(1)));
                         return Status::ok();
                       };
                     });
                     return kernel;
                   });
}

// out = fn(a, b) over the broadcast, any numeric dtype; `divisor`: integer zeros are refused.
template <class Fn>
CpuKernel binary_loop_kernel(Fn fn, bool divisor) {
  return node_only([](const ir::Node& node) { return typed_tensors<ops::NumericTypes>(node); },
                   [fn, divisor](const ir::Node& node) -> Result<ops::Kernel> {
                     ops::Kernel kernel;
                     ops::dispatch<ops::NumericTypes>(node.input(0)->type.dtype, [&]<class T>() {
                       kernel = [fn, divisor](ops::KernelContext& ctx) -> Status {
                         if (divisor && ops::has_integer_zero<T>(*ctx.input(1))) return ctx.error("integer division by zero");
                         Tensor& out = *ctx.output(0);
                         broadcast_loop(out.data<T>(), out.shape(), [fn](T a, T b) { return ops::store<T>(fn(ops::load(a), ops::load(b))); },
                                        operand<T>(*ctx.input(0)), operand<T>(*ctx.input(1)));
                         return Status::ok();
                       };
                     });
                     return kernel;
                   });
}

// out = input 0 broadcast, then out = fn(out, input k) for each further input; Mean divides by
// the input count at the end.
template <class List, class Fn>
CpuKernel variadic_kernel(Fn fn, bool mean) {
  return node_only([](const ir::Node& node) { return typed_tensors<List>(node); },
                   [fn, mean](const ir::Node& node) -> Result<ops::Kernel> {
                     ops::Kernel kernel;
                     ops::dispatch<List>(node.input(0)->type.dtype, [&]<class T>() {
                       kernel = [fn, mean](ops::KernelContext& ctx) {
                         Tensor& out = *ctx.output(0);
                         T* y = out.data<T>();
                         broadcast_loop(y, out.shape(), [](T a) { return a; }, operand<T>(*ctx.input(0)));
                         for (size_t k = 1; k < ctx.input_count(); ++k)
                           broadcast_loop(y, out.shape(), [fn](T a, T b) { return ops::store<T>(fn(ops::load(a), ops::load(b))); },
                                          Operand<T>{y, out.shape()}, operand<T>(*ctx.input(k)));
                         if (mean) {
                           const auto n = static_cast<ops::Compute<T>>(ctx.input_count());
                           broadcast_loop(y, out.shape(), [n](T a) { return ops::store<T>(ops::load(a) / n); },
                                          Operand<T>{y, out.shape()});
                         }
                         return Status::ok();
                       };
                     });
                     return kernel;
                   });
}

}  // namespace

void add_arithmetic_kernels(CpuKernelTable& table) {
  table["Mod"] = mod_kernel();
  table["Add"] = first_of(table.at("Add"), binary_loop_kernel(ops::SumFn{}, false));
  table["Sub"] = first_of(table.at("Sub"), binary_loop_kernel(ops::DifferenceFn{}, false));
  table["Mul"] = first_of(table.at("Mul"), binary_loop_kernel(ops::ProductFn{}, false));
  table["Div"] = first_of(table.at("Div"), binary_loop_kernel(ops::QuotientFn{}, true));
  table["BitShift"] = bitshift_kernel();
  table["Sum"] = variadic_kernel<ops::FloatTypes>(ops::SumFn{}, false);
  table["Mean"] = variadic_kernel<ops::FloatTypes>(ops::SumFn{}, true);
  // Two float inputs stay on oneDNN's binary primitive (add_eltwise_kernels); other counts and
  // dtypes fold here.
  table["Max"] = first_of(table.at("Max"), variadic_kernel<ops::NumericTypes>(ops::MaxFn{}, false));
  table["Min"] = first_of(table.at("Min"), variadic_kernel<ops::NumericTypes>(ops::MinFn{}, false));
}

}  // namespace kiln::providers::cpu
