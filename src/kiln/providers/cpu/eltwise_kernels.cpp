// cpu kernels for element-wise ops: unary activations and math as oneDNN eltwise primitives,
// Add/Sub/Mul/Div/Max/Min as oneDNN binary primitives (the second operand broadcast; for the
// commutative ops the operands are swapped when only the first one is broadcast; when both are,
// the first is broadcast-copied into the output and the primitive runs in place), and
// kiln.ElementwiseChain as one binary primitive whose post-ops are the chain's steps (oneDNN's
// JIT picks the vector ISA from the CPU at run time). Every op is viewed at its smallest rank
// (broadcast_view.h); an operand broadcast in a way oneDNN has only reference code for is
// broadcast-copied into the run scratch first, so the primitive reads it whole. Clip with bounds
// computed by the graph, Pow with an exponent tensor, and x^3 run Kiln's own loops; the float32
// unary ops oneDNN's eltwise has no form for (Erf, the trigonometric and hyperbolic functions and
// their inverses, Sign, Floor, IsNaN, Softsign...) run vector_math.h's array functions. Other
// dtypes take the registry's element function (ops::OpDef::element_function, the reference's own
// math) in chunks on OpenMP threads, recorded as `kiln:element-function` (a scalar loop: `kiln
// bench` warns when one takes a share of the run).
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "kiln/ops/activation.h"
#include "kiln/ops/clip.h"
#include "kiln/ops/elementwise_chain.h"
#include "kiln/ops/power.h"
#include "kiln/providers/cpu/broadcast_copy.h"
#include "kiln/providers/cpu/broadcast_loop.h"
#include "kiln/providers/cpu/broadcast_view.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/epilogue.h"
#include "kiln/providers/cpu/onednn_support.h"
#include "kiln/providers/cpu/onednn_target.h"
#include "kiln/providers/cpu/vector_math.h"

namespace kiln::providers::cpu {
namespace {

using dnnl::algorithm;
using dnnl::memory;

// x^e as one eltwise op: the exponents models use most (2: variances and norms; 0.5; 1; -1) as the
// cheaper square, sqrt, copy or reciprocal (eltwise_pow computes exp(e log x) for any other e).
EltwiseOp pow_op(float e) {
  if (e == 2.0f) return EltwiseOp{algorithm::eltwise_square};
  if (e == 0.5f) return EltwiseOp{algorithm::eltwise_sqrt};
  if (e == 1.0f) return EltwiseOp{algorithm::eltwise_linear, 1.0f, 0.0f};
  return EltwiseOp{algorithm::eltwise_pow, 1.0f, e};
}

// The eltwise form of a unary node, as oneDNN eltwise steps applied in order (the first the
// primitive, the others its post-ops: HardSigmoid, Selu and Celu take several); empty when none.
// Pow needs a constant scalar exponent.
std::vector<EltwiseOp> eltwise_spec(const ir::Node& node) {
  const std::string& op = node.op_type;
  if (const std::optional<ops::Activation> a = ops::activation_of(node)) return onednn_eltwise(*a);  // kiln.Gelu too
  if (!node.domain.empty()) return {};
  // The table's other unary functions (a fused activation's parameters are activation_of's: Clip
  // with bounds computed by the graph is none).
  if (const ops::ElementwiseFunction* f = ops::find_elementwise(op); f && f->operands == 1 && !f->allows(ops::kFusedActivation))
    return onednn_eltwise(f->function, node.attr_float("alpha", f->default_alpha), node.attr_float("beta", f->default_beta));
  if (op == "Pow") {
    const ir::Value* e = node.input(1);
    if (!e || !e->initializer || e->initializer->element_count() != 1 || e->initializer->dtype() != DType::kFloat)
      return {};
    return {pow_op(e->initializer->data<float>()[0])};
  }
  if (op == "Selu")  // gamma elu_alpha(x)
    return {EltwiseOp{algorithm::eltwise_elu, node.attr_float("alpha", 1.67326319217681884765625f)},
            EltwiseOp{algorithm::eltwise_linear, node.attr_float("gamma", 1.05070102214813232421875f), 0.0f}};
  if (op == "Celu") {  // alpha elu_1(x / alpha)
    const float alpha = node.attr_float("alpha", 1.0f);
    if (alpha == 0.0f) return {};
    return {EltwiseOp{algorithm::eltwise_linear, 1.0f / alpha, 0.0f}, EltwiseOp{algorithm::eltwise_elu, 1.0f},
            EltwiseOp{algorithm::eltwise_linear, alpha, 0.0f}};
  }
  if (op == "Reciprocal") return {EltwiseOp{algorithm::eltwise_pow, 1.0f, -1.0f}};
  if (op == "Round") return {EltwiseOp{algorithm::eltwise_round}};  // halves to even, as ONNX's Round
  return {};
}

Capability eltwise_supports(const ir::Node& node) {
  Capability c = float_tensors(node, {0});
  if (!c.supported) return c;
  if (eltwise_spec(node).empty()) return Capability::no(node.op_type + " with these inputs has no oneDNN eltwise form");
  return Capability::yes();
}

const ops::ElementFunction* element_function_of(const ir::Node& node);
Result<ops::Kernel> build_element_function(const ir::Node& node);

// Up to how many elements the registry's element function (a plain loop on the calling thread)
// beats a oneDNN eltwise primitive, whose execution costs about a microsecond before the first
// element: for the ops that are a compare or a multiply per element, and for the others (exp,
// tanh... in scalar code).
int64_t plain_loop_limit(const ir::Node& node) {
  const ops::ElementwiseFunction* f = ops::find_elementwise(node.op_type);
  return f && f->cheap ? 16384 : 256;
}

Result<ops::Kernel> build_eltwise(const ir::Node& node, KernelBuild& build) {
  if (node.domain.empty() && element_function_of(node) && shape_element_count(output_dims(node, 0)) <= plain_loop_limit(node) &&
      (*element_function_of(node))(node, node.input(0)->type.dtype))
    return build_element_function(node);
  const std::vector<EltwiseOp> spec = eltwise_spec(node);
  std::vector<int64_t> dims = output_dims(node, 0);
  if (dims.empty()) dims = {1};  // a scalar: oneDNN has no rank-0 memory
  const memory::desc data = row_major_desc(dims);
  if (spec.size() == 1) {
    const dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_inference, spec[0].algorithm, data, spec[0].alpha, spec[0].beta);
    return primitive_kernel({node, build}, dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(desc, cpu_engine())),
                            [data](ops::KernelContext& ctx, PrimitiveArgs& args) {
                              args.set(DNNL_ARG_SRC, data, *ctx.input(0));
                              args.set(DNNL_ARG_DST, data, *ctx.output(0));
                            });
  }
  // Several steps: x + 0 with every step an eltwise post-op (oneDNN's eltwise primitive has vector
  // code only without post-ops; its binary primitive has it with them).
  dnnl::post_ops post_ops;
  for (const EltwiseOp& e : spec) post_ops.append_eltwise(1.0f, e.algorithm, e.alpha, e.beta);
  dnnl::primitive_attr attr;
  attr.set_post_ops(post_ops);
  const memory::desc one = row_major_desc(std::vector<int64_t>(dims.size(), 1));
  const memory zero(one, cpu_engine());  // owns its float
  *static_cast<float*>(zero.get_data_handle()) = 0.0f;
  const dnnl::binary::desc desc(algorithm::binary_add, data, one, data);
  return primitive_kernel({node, build}, dnnl::binary(dnnl::binary::primitive_desc(desc, attr, cpu_engine())),
                          [data, zero](ops::KernelContext& ctx, PrimitiveArgs& args) {
                            args.set(DNNL_ARG_SRC_0, data, *ctx.input(0));
                            args.set(DNNL_ARG_SRC_1, zero);
                            args.set(DNNL_ARG_DST, data, *ctx.output(0));
                          });
}

// ---- binary ----

// The table's binary function of a node (Add, Sub, Mul, Div, Max, Min).
const ops::ElementwiseFunction& binary_function(const ir::Node& node) { return *ops::find_elementwise(node.op_type); }

template <class D>
std::vector<D> padded(std::vector<D> dims, size_t rank) {
  dims.insert(dims.begin(), rank - dims.size(), D(1));
  return dims;
}

// Which input oneDNN reads as src0 (it must have the output's dims, symbols included): 0, 1, or
// -1 for neither.
int full_operand(const ir::Node& node) {
  const std::vector<ir::Dim>& y = node.outputs[0]->type.shape->dims();
  auto same = [&](size_t i) {
    const std::vector<ir::Dim>& d = node.inputs[i]->type.shape->dims();
    return d.size() <= y.size() && padded(d, y.size()) == y;
  };
  if (same(0)) return 0;
  if (binary_function(node).commutative && same(1)) return 1;
  return -1;
}

Capability binary_supports(const ir::Node& node) {
  if (node.inputs.size() != 2 || (node.opset_version < 7 && node.has_attr("broadcast")))
    return Capability::no(node.op_type + " with the legacy broadcast attribute");
  Capability c = float_tensors(node, {0, 1});
  if (!c.supported) return c;
  return Capability::yes();
}

// `operand` broadcast to `dims` into `into` (room for their elements).
Tensor expanded(const Tensor& operand, const std::vector<int64_t>& dims, float* into) {
  Tensor whole = Tensor::view(DType::kFloat, dims, into);
  broadcast_copy(operand, whole);
  return whole;
}

// When neither operand has the output's dims, the first is broadcast into the output and the
// primitive runs in place on it.
Result<ops::Kernel> build_binary(const ir::Node& node, KernelBuild& build) {
  const int full = full_operand(node);
  const size_t a = full < 0 ? 0 : static_cast<size_t>(full), b = 1 - a;
  const BroadcastView view = collapse_broadcast(output_dims(node, 0), {input_dims(node, b)});
  const memory::desc src0 = row_major_desc(view.output);
  memory::desc src1 = row_major_desc(view.operands.front());
  const algorithm alg = *onednn_binary(binary_function(node).function);
  dnnl::binary::primitive_desc pd({alg, src0, src1, src0}, cpu_engine());
  // A broadcast oneDNN has no vector kernel for ([2,3,4,5] + [1,3,1,5]): the operand is
  // broadcast-copied into the run scratch first, and the primitive reads it whole.
  const bool expand = is_reference_implementation(pd.impl_info_str());
  if (expand) {
    src1 = src0;
    pd = dnnl::binary::primitive_desc({alg, src0, src1, src0}, cpu_engine());
  }
  const std::vector<int64_t> y = output_dims(node, 0);
  const bool in_place = full < 0;
  ops::Kernel run = primitive_kernel({node, build}, dnnl::binary(pd), [src0, src1, a, b, in_place, expand, y](ops::KernelContext& ctx, PrimitiveArgs& args) {
    args.set(DNNL_ARG_SRC_0, src0, in_place ? *ctx.output(0) : *ctx.input(a));
    args.set(DNNL_ARG_SRC_1, src1, expand ? expanded(*ctx.input(b), y, run_scratch_floats(static_cast<size_t>(shape_element_count(y)))) : *ctx.input(b));
    args.set(DNNL_ARG_DST, src0, *ctx.output(0));
  });
  if (!in_place) return run;
  return ops::Kernel([run](ops::KernelContext& ctx) {
    broadcast_copy(*ctx.input(0), *ctx.output(0));
    return run(ctx);
  });
}

// ---- kiln.ElementwiseChain ----

// One chain step as a oneDNN operation: an eltwise op, or a binary op with the step's operand.
struct ChainOp {
  std::optional<EltwiseOp> eltwise;
  algorithm binary_algorithm = algorithm::undef;
  size_t operand = 0;  // the chain node's input read by a binary op
};

std::optional<ChainOp> chain_op(const ir::Node& node, const ops::ChainStep& step) {
  if (!step.is_binary()) {
    const std::vector<EltwiseOp> e = onednn_eltwise(step.function, step.alpha, step.beta);
    if (e.size() == 1) return ChainOp{e[0]};
    return std::nullopt;
  }
  if (step.operand_first && !step.entry().commutative) return std::nullopt;  // not a chain step (elementwise_chain.h)
  const ir::Value* operand = node.input(static_cast<size_t>(step.operand));
  if (step.function == ops::Elementwise::kPow) {
    if (!operand || !operand->initializer || operand->initializer->element_count() != 1) return std::nullopt;
    return ChainOp{pow_op(operand->initializer->data<float>()[0])};
  }
  const std::optional<algorithm> binary = onednn_binary(step.function);
  if (!binary) return std::nullopt;
  return ChainOp{std::nullopt, *binary, static_cast<size_t>(step.operand)};
}

Capability chain_supports(const ir::Node& node) {
  std::vector<size_t> inputs(node.inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) inputs[i] = i;
  Capability c = float_tensors(node, inputs);
  if (!c.supported) return c;
  Result<std::vector<ops::ChainStep>> steps = ops::chain_steps(node);
  if (!steps.is_ok()) return Capability::no(steps.status().message());
  for (const ops::ChainStep& step : steps.value())
    if (!chain_op(node, step)) return Capability::no("chain step " + std::string(step.name()) + " has no oneDNN form here");
  return Capability::yes();
}

Result<ops::Kernel> build_chain(const ir::Node& node, KernelBuild& build) {
  KILN_ASSIGN_OR_RETURN(const std::vector<ops::ChainStep> steps, ops::chain_steps(node));
  std::vector<ChainOp> chain;
  for (const ops::ChainStep& step : steps) chain.push_back(*chain_op(node, step));
  // The op viewed at its smallest rank (broadcast_view.h); the binary steps' operands in order.
  std::vector<std::vector<int64_t>> operand_dims;
  for (const ChainOp& op : chain)
    if (!op.eltwise) operand_dims.push_back(input_dims(node, op.operand));
  const std::vector<int64_t> y = output_dims(node, 0);
  const BroadcastView view = collapse_broadcast(y, operand_dims);
  const memory::desc data = row_major_desc(view.output);
  const bool binary_first = !chain.front().eltwise;
  // The primitive is the first step when that is binary, else x + 0 with every step a post-op.
  // `whole`: every broadcast operand read whole, after a broadcast copy into the run scratch (for
  // broadcasts oneDNN has no vector kernel for).
  auto primitive_for = [&](bool whole) {
    std::vector<memory::desc> operands;
    for (const std::vector<int64_t>& dims : view.operands)
      operands.push_back(whole && shape_element_count(dims) > 1 ? data : row_major_desc(dims));
    dnnl::post_ops post_ops;
    size_t operand = binary_first ? 1 : 0;
    for (size_t i = binary_first ? 1 : 0; i < chain.size(); ++i) {
      if (chain[i].eltwise) {
        post_ops.append_eltwise(1.0f, chain[i].eltwise->algorithm, chain[i].eltwise->alpha, chain[i].eltwise->beta);
      } else {
        post_ops.append_binary(chain[i].binary_algorithm, operands[operand++]);
      }
    }
    dnnl::primitive_attr attr;
    attr.set_post_ops(post_ops);
    const memory::desc src1 = binary_first ? operands.front() : row_major_desc(std::vector<int64_t>(view.output.size(), 1));
    const dnnl::binary::desc desc(binary_first ? chain.front().binary_algorithm : algorithm::binary_add, data, src1, data);
    return std::make_pair(dnnl::binary::primitive_desc(desc, attr, cpu_engine()), operands);
  };
  auto [pd, operand_descs] = primitive_for(false);
  const bool whole = is_reference_implementation(pd.impl_info_str());
  if (whole) std::tie(pd, operand_descs) = primitive_for(true);
  // Each binary step's (post-op index, node input, descriptor, scratch slot when read whole).
  struct Operand {
    int post_op;
    size_t input;
    memory::desc desc;
    std::optional<size_t> slot;
  };
  std::vector<Operand> operands;
  size_t slots = 0;
  for (size_t i = 0, k = 0; i < chain.size(); ++i) {
    if (chain[i].eltwise) continue;
    const bool copied = whole && shape_element_count(view.operands[k]) > 1;
    operands.push_back({static_cast<int>(i) - (binary_first ? 1 : 0), chain[i].operand, operand_descs[k],
                        copied ? std::optional<size_t>(slots++) : std::nullopt});
    ++k;
  }
  const memory zero(row_major_desc(std::vector<int64_t>(view.output.size(), 1)), cpu_engine());  // owns its float
  *static_cast<float*>(zero.get_data_handle()) = 0.0f;
  const auto elements = static_cast<size_t>(shape_element_count(y));
  return primitive_kernel({node, build}, dnnl::binary(pd), [=](ops::KernelContext& ctx, PrimitiveArgs& args) {
    float* scratch = slots > 0 ? run_scratch_floats(elements * slots) : nullptr;  // one request: it may move when grown
    auto bind = [&](int arg, const Operand& o) {
      args.set(arg, o.desc, o.slot ? expanded(*ctx.input(o.input), y, scratch + elements * *o.slot) : *ctx.input(o.input));
    };
    args.set(DNNL_ARG_SRC_0, data, *ctx.input(0));
    args.set(DNNL_ARG_DST, data, *ctx.output(0));
    if (binary_first)
      bind(DNNL_ARG_SRC_1, operands.front());
    else
      args.set(DNNL_ARG_SRC_1, zero);
    for (size_t i = binary_first ? 1 : 0; i < operands.size(); ++i)
      bind(DNNL_ARG_ATTR_MULTIPLE_POST_OP(operands[i].post_op) | DNNL_ARG_SRC_1, operands[i]);
  });
}

// Clip with constant float32 bounds is oneDNN's clip; any other (bounds the graph computes, other
// dtypes) runs Kiln's loop with the reference's bounds and element function.
bool clip_by_primitive(const ir::Node& node) { return !eltwise_spec(node).empty() && eltwise_supports(node).supported; }

Capability clip_supports(const ir::Node& node) {
  if (clip_by_primitive(node)) return Capability::yes();
  const ir::Value* x = node.input(0);
  if (!x || !x->type.is_tensor() || !ops::list_has(ops::NumericTypes{}, x->type.dtype))
    return Capability::no("Clip of a value that is not a numeric tensor");
  return Capability::yes();
}

Result<ops::Kernel> build_clip(const ir::Node& node, KernelBuild& build) {
  if (clip_by_primitive(node)) return build_eltwise(node, build);
  ops::Kernel kernel;
  ops::dispatch<ops::NumericTypes>(node.input(0)->type.dtype, [&]<class T>() {
    kernel = [](ops::KernelContext& ctx) -> Status {
      KILN_ASSIGN_OR_RETURN(const auto bounds, ops::clip_bounds<T>(ctx));
      const auto lo = bounds.first, hi = bounds.second;  // not a structured binding: clang 14 cannot capture those
      Tensor& y = *ctx.output(0);
      broadcast_loop(y.data<T>(), y.shape(), [lo, hi](T v) { return ops::store<T>(ops::clip_value(ops::load(v), lo, hi)); },
                     Operand<T>{ctx.input(0)->data<T>(), y.shape()});
      return Status::ok();
    };
  });
  return kernel;
}

// A vector_math.h array function over a float32 tensor (y: float32, or bool for the predicates),
// in chunks on threads.
template <class Y>
ops::Kernel array_function_kernel(std::function<void(const float* x, Y* y, int64_t n)> function) {
  return ops::Kernel([function = std::move(function)](ops::KernelContext& ctx) {
    constexpr int64_t kChunk = int64_t{1} << 13;
    const float* x = ctx.input(0)->data<float>();
    Y* y = ctx.output(0)->data<Y>();
    const int64_t n = ctx.output(0)->element_count(), chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (chunks > 1)
    for (int64_t c = 0; c < chunks; ++c) function(x + c * kChunk, y + c * kChunk, std::min(kChunk, n - c * kChunk));
    return Status::ok();
  });
}

using VectorFunction = std::function<ops::Kernel(const ir::Node& node)>;

VectorFunction plain(void (*function)(const float*, float*, int64_t)) {
  return [function](const ir::Node&) { return array_function_kernel<float>(function); };
}

// The float32 unary ops oneDNN has no eltwise form of: vector_math.h's array functions, made for a
// node (its attributes read once).
const std::map<std::string, VectorFunction>& vector_functions() {
  static const std::map<std::string, VectorFunction> table = {
      {"Erf", plain(erf_of)},     {"Sin", plain(sin_of)},       {"Cos", plain(cos_of)},           {"Tan", plain(tan_of)},
      {"Asin", plain(asin_of)},   {"Acos", plain(acos_of)},     {"Atan", plain(atan_of)},         {"Sinh", plain(sinh_of)},
      {"Cosh", plain(cosh_of)},   {"Asinh", plain(asinh_of)},   {"Acosh", plain(acosh_of)},       {"Atanh", plain(atanh_of)},
      {"Sign", plain(sign_of)},   {"Floor", plain(floor_of)},   {"Ceil", plain(ceil_of)},         {"Softsign", plain(softsign_of)},
      {"Shrink",
       [](const ir::Node& node) {
         const float lambd = node.attr_float("lambd", 0.5f), bias = node.attr_float("bias", 0.0f);
         return array_function_kernel<float>([lambd, bias](const float* x, float* y, int64_t n) { shrink_of(x, y, n, lambd, bias); });
       }},
      {"ThresholdedRelu",
       [](const ir::Node& node) {
         const float alpha = node.attr_float("alpha", 1.0f);
         return array_function_kernel<float>([alpha](const float* x, float* y, int64_t n) { thresholded_relu_of(x, y, n, alpha); });
       }},
      {"IsNaN", [](const ir::Node&) { return array_function_kernel<bool>(isnan_of); }},
      {"IsInf",
       [](const ir::Node& node) {
         const bool negative = node.attr_int("detect_negative", 1) != 0, positive = node.attr_int("detect_positive", 1) != 0;
         return array_function_kernel<bool>(
             [negative, positive](const float* x, bool* y, int64_t n) { isinf_of(x, y, n, negative, positive); });
       }},
  };
  return table;
}

// A float32 input (the output is float32, or bool for IsNaN and IsInf).
Capability vector_function_supports(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  if (!x || !x->type.is_tensor() || x->type.dtype != DType::kFloat) return Capability::no(node.op_type + " of an input that is not float32");
  return Capability::yes();
}

Result<ops::Kernel> build_vector_function(const ir::Node& node) { return vector_functions().at(node.op_type)(node); }

// float32 x^3 (GELU's tanh form reads 0.044715 x^3): a vector loop, where oneDNN's pow computes
// exp(3 log x).
bool is_float_cube(const ir::Node& node) {
  const ir::Value* e = node.input(1);
  return e && e->initializer && e->initializer->element_count() == 1 && e->initializer->dtype() == DType::kFloat &&
         e->initializer->data<float>()[0] == 3.0f && float_tensors(node, {0}).supported;
}

Result<ops::Kernel> build_cube(const ir::Node&) { return array_function_kernel<float>(cube_of); }

// Pow whose exponent is not one float constant (a tensor, or computed inside a body): Kiln's own
// loop over the broadcast, with the reference's element function for every base and exponent type.
Capability pow_supports(const ir::Node& node) {
  if (is_float_cube(node)) return Capability::yes();
  if (!eltwise_spec(node).empty()) return eltwise_supports(node);
  if (node.opset_version < 7) return Capability::no("Pow-" + std::to_string(node.opset_version) + " (its legacy broadcast attribute)");
  for (const ir::Value* v : {node.input(0), node.input(1)})
    if (!v || !v->type.is_tensor()) return Capability::no("Pow of a value that is not a tensor");
  if (!ops::list_has(ops::PowBaseTypes{}, node.input(0)->type.dtype) || !ops::list_has(ops::NumericTypes{}, node.input(1)->type.dtype))
    return Capability::no(std::string("Pow of ") + dtype_name(node.input(0)->type.dtype) + " to " + dtype_name(node.input(1)->type.dtype));
  return Capability::yes();
}

Result<ops::Kernel> build_pow(const ir::Node& node, KernelBuild& build) {
  if (is_float_cube(node)) return build_cube(node);
  if (!eltwise_spec(node).empty()) return build_eltwise(node, build);
  ops::Kernel kernel;
  ops::dispatch<ops::PowBaseTypes>(node.input(0)->type.dtype, [&]<class X>() {
    ops::dispatch<ops::NumericTypes>(node.input(1)->type.dtype, [&]<class Y>() {
      kernel = [](ops::KernelContext& ctx) {
        Tensor& z = *ctx.output(0);
        broadcast_loop(z.data<X>(), z.shape(), [](X x, Y y) { return ops::store<X>(ops::power<X, Y>(ops::load(x), ops::load(y))); },
                       Operand<X>{ctx.input(0)->data<X>(), ctx.input(0)->shape()}, Operand<Y>{ctx.input(1)->data<Y>(), ctx.input(1)->shape()});
        return Status::ok();
      };
    });
  });
  return kernel;
}


const ops::ElementFunction* element_function_of(const ir::Node& node) {
  Result<const ops::OpDef*> def = ops::resolve_op(ops::OpRegistry::global(), node);
  return def.is_ok() && def.value()->element_function ? &def.value()->element_function : nullptr;
}

Capability element_function_supports(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  if (!x || !x->type.is_tensor()) return Capability::no(node.op_type + " of a value that is not a tensor");
  const ops::ElementFunction* function = element_function_of(node);
  if (!function) return Capability::no(node.op_type + "-" + std::to_string(node.opset_version) + " has no element function");
  if (!(*function)(node, x->type.dtype)) return Capability::no(node.op_type + " of " + dtype_name(x->type.dtype));
  return Capability::yes();
}

// The element function for the dtypes oneDNN's eltwise lacks (float32 stays with oneDNN, which
// decides at a plan's shapes when the rank is not known yet).
Capability other_dtype_supports(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  if (x && x->type.is_tensor() && x->type.dtype == DType::kFloat) return Capability::no(node.op_type + " of float32 runs on oneDNN");
  return element_function_supports(node);
}

Result<ops::Kernel> build_element_function(const ir::Node& node) {
  const std::optional<ops::ElementRange> range = (*element_function_of(node))(node, node.input(0)->type.dtype);
  return ops::Kernel([range = *range](ops::KernelContext& ctx) {
    constexpr int64_t kChunk = int64_t{1} << 13;
    const Tensor& x = *ctx.input(0);
    const int64_t n = x.element_count(), chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (chunks > 1)
    for (int64_t c = 0; c < chunks; ++c) range(x, *ctx.output(0), c * kChunk, std::min(n, (c + 1) * kChunk));
    return Status::ok();
  });
}

CpuKernel element_function_kernel(std::function<Capability(const ir::Node&)> supports) {
  return {std::move(supports), [](const ir::Node& node, KernelBuild& build) {
            build.evidence.record_implementation(node.name, "kiln:element-function");
            return build_element_function(node);
          }};
}

}  // namespace

void add_eltwise_kernels(CpuKernelTable& table) {
  table["kiln.ElementwiseChain"] = generated_or(CpuKernel{chain_supports, build_chain});
  table["Clip"] = CpuKernel{clip_supports, build_clip};
  table["Pow"] = CpuKernel{pow_supports, build_pow};
  // oneDNN's eltwise for float32; other dtypes (float64, float16, integers) take the registry's
  // element function, a loop over chunks on threads.
  for (const char* op : {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Elu", "HardSigmoid", "HardSwish", "Selu", "Celu", "Exp", "Log",
                         "Sqrt", "Reciprocal", "Round", "Abs", "Neg", "Softplus", "kiln.Gelu", "Gelu", "Mish"})
    table[op] = first_of(CpuKernel{eltwise_supports, build_eltwise}, element_function_kernel(other_dtype_supports));
  for (const ops::ElementwiseFunction& f : ops::elementwise_functions())
    if (onednn_binary(f.function)) table[std::string(f.name)] = CpuKernel{binary_supports, build_binary};
  for (const auto& [op, function] : vector_functions())
    table[op] = first_of(node_only(vector_function_supports, build_vector_function),
                         element_function_kernel(element_function_supports));
  // Every other ai.onnx op with an element function (those above run on oneDNN instead).
  for (const auto& [key, versions] : ops::OpRegistry::global().listing()) {
    const ops::OpDef* def = ops::OpRegistry::global().find(key.first, key.second, versions.back());
    if (key.first.empty() && def && def->element_function) table.emplace(key.second, element_function_kernel(element_function_supports));
  }
}

}  // namespace kiln::providers::cpu
