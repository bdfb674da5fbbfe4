// cpu provider: dispatch from a node to the kernel table of its op family.
#include "kiln/providers/cpu/cpu_provider.h"

#include <omp.h>

#include <algorithm>
#include <optional>

#include "kiln/analysis/flops.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"
#include "kiln/providers/cpu/onednn_target.h"
#include "kiln/providers/cpu/run_time_shapes.h"
#include "kiln/providers/cpu/scoped_threads.h"
#include "kiln/ops/family_support.h"
#include "kiln/ops/fused_product_inputs.h"
#include "kiln/providers/cpu/shape_arithmetic.h"

namespace kiln::providers {
namespace {

const cpu::CpuKernelTable& table() {
  static const cpu::CpuKernelTable kernels = [] {
    cpu::CpuKernelTable t;
    cpu::add_conv_kernels(t);
    cpu::add_matmul_kernels(t);
    cpu::add_pool_kernels(t);
    cpu::add_transpose_kernels(t);
    cpu::add_eltwise_kernels(t);
    cpu::add_normalization_kernels(t);
    cpu::add_copy_kernels(t);
    cpu::add_slice_concat_kernels(t);
    cpu::add_attention_kernels(t);
    cpu::add_gather_kernels(t);
    cpu::add_expand_kernels(t);
    cpu::add_resize_kernels(t);
    cpu::add_conv_transpose_kernels(t);
    cpu::add_relayout_kernels(t);
    cpu::add_reduce_kernels(t);
    cpu::add_compare_select_kernels(t);
    cpu::add_cast_kernels(t);
    cpu::add_pad_kernels(t);
    cpu::add_fill_kernels(t);
    cpu::add_control_flow_kernels(t);
    cpu::add_recurrent_kernels(t);
    cpu::add_quantization_kernels(t);
    cpu::add_integer_conv_kernels(t);
    cpu::add_integer_matmul_kernels(t);
    cpu::add_indexed_kernels(t);
    cpu::add_topk_kernels(t);
    cpu::add_cumsum_kernels(t);
    cpu::add_block_quantized_matmul_kernels(t);
    cpu::add_trilu_kernels(t);
    cpu::add_detection_kernels(t);
    cpu::add_selection_kernels(t);
    cpu::add_einsum_kernels(t);
    cpu::add_reverse_sequence_kernels(t);
    cpu::add_signal_kernels(t);
    cpu::add_deform_conv_kernels(t);
    cpu::add_det_kernels(t);
    cpu::add_reference_loop_kernels(t);
    cpu::add_arithmetic_kernels(t);
    cpu::add_reference_loop_forms(t);
    return t;
  }();
  return kernels;
}

// Table keys are ai.onnx op types, and "<domain>.<op>" for other domains.
const cpu::CpuKernel* entry_for(const ir::Node& node) {
  const auto it = table().find(node.domain.empty() ? node.op_type : node.domain + "." + node.op_type);
  return it == table().end() ? nullptr : &it->second;
}

// The activation layouts a layout-aware kernel (kiln.FusedConv, kiln.InLayout) computes in.
std::vector<std::string> computing_layouts(const ir::Node& node) {
  if (node.domain != "kiln" || (node.op_type != "FusedConv" && node.op_type != "InLayout")) return {};
  std::vector<std::string> layouts{node.attr_string("layout", "NCHW")};
  if (node.op_type == "FusedConv") layouts.push_back(node.attr_string("input_layout", layouts.front()));
  return layouts;
}

// Whether a tensor the node reads or writes has a dim the plan does not know, on a node of tensors
// only (sequence and optional ops take their elements as they come).
bool has_unknown_dims(const ir::Node& node) {
  auto container = [](const ir::Value* v) { return v && !v->type.is_tensor(); };
  auto unknown = [](const ir::Value* v) { return v && v->type.is_tensor() && !v->type.has_static_shape(); };
  if (std::any_of(node.inputs.begin(), node.inputs.end(), container) || std::any_of(node.outputs.begin(), node.outputs.end(), container))
    return false;
  return std::any_of(node.inputs.begin(), node.inputs.end(), unknown) ||
         std::any_of(node.outputs.begin(), node.outputs.end(), unknown);
}

// Whether every output of `node` is a tensor with a dim of 0 at this plan's shapes: there is nothing
// to compute, and oneDNN's primitives fail on such dims (a matmul of 0 rows divides by zero when
// its primitive is created).
bool outputs_all_empty(const ir::Node& node) {
  auto empty = [](const ir::Value* v) {
    if (!v || !v->type.is_tensor() || !v->type.has_static_shape()) return false;
    const std::vector<int64_t> dims = v->type.shape->static_dims();
    return std::find(dims.begin(), dims.end(), 0) != dims.end();
  };
  return !node.outputs.empty() && std::all_of(node.outputs.begin(), node.outputs.end(), empty);
}

// Whether a data input of `node` (CpuKernel::data_inputs) has a dim of 0 at this plan's shapes: a
// product over an empty inner dimension (A is [M, 0]), a convolution of no input channels, a
// reduction or pool over an empty axis, attention over no keys. When some output is not empty, its
// values are the op's identities, biases and fills, work proportional to the outputs alone.
bool reads_empty_data(const ir::Node& node, const std::vector<size_t>& data_inputs) {
  return std::any_of(data_inputs.begin(), data_inputs.end(), [&](size_t i) {
    const ir::Value* data = node.input(i);
    if (!data || !data->type.is_tensor() || !data->type.has_static_shape()) return false;
    const std::vector<int64_t> dims = data->type.shape->static_dims();
    return std::find(dims.begin(), dims.end(), 0) != dims.end();
  });
}

// Whether analysis left a tensor of `node` without a rank or dtype (it follows an If whose branches
// give different ranks): its kernel's constraints can only be checked once a plan's shapes are known.
bool has_unknown_rank(const ir::Node& node) {
  auto unknown = [](const ir::Value* v) {
    return v && v->type.is_tensor() && (!v->type.shape || v->type.dtype == DType::kUndefined);
  };
  return std::any_of(node.inputs.begin(), node.inputs.end(), unknown) ||
         std::any_of(node.outputs.begin(), node.outputs.end(), unknown);
}

// A node whose work would take one core only a few microseconds runs on the calling thread: its
// primitive is made for one thread and its runs leave the others asleep, since waking them costs
// more than they save on a small kernel (the wake-word heads: 0.030 -> 0.022 ms on 2 cores). The
// work is estimated from the node's FLOPs and the bytes it reads and writes, at rates one core
// sustains on small, cache-resident kernels.
constexpr double kFlopsPerMicrosecond = 20e3, kBytesPerMicrosecond = 20e3, kCallingThreadMicroseconds = 10, kWeightByteShare = 0.25;

bool runs_on_calling_thread(const ir::Node& node) {
  if (node.has_subgraph()) return false;
  double bytes = 0;
  for (const auto* values : {&node.inputs, &node.outputs})
    for (const ir::Value* v : *values) {
      if (!v) continue;
      if (!v->type.is_tensor() || !v->type.has_static_shape() || v->type.dtype == DType::kString) return false;
      // Constant weights are read once per run from caches warm since the last one: at a
      // fraction of the cost of activations.
      const double weight = v->initializer ? kWeightByteShare : 1.0;
      bytes += weight * static_cast<double>(shape_element_count(v->type.shape->static_dims())) * static_cast<double>(dtype_size(v->type.dtype));
    }
  const double flops = static_cast<double>(analysis::estimate_flops(node));
  return flops / kFlopsPerMicrosecond + bytes / kBytesPerMicrosecond < kCallingThreadMicroseconds;
}

}  // namespace

std::vector<std::string> CpuProvider::op_types() const {
  std::vector<std::string> ops;
  for (const auto& [op, kernel] : table()) ops.push_back(op);
  return ops;
}

Capability CpuProvider::supports(const ir::Node& node) const {
  if (cpu::is_shape_arithmetic(node)) return Capability::yes();
  const cpu::CpuKernel* entry = entry_for(node);
  if (!entry) return Capability::no("no cpu kernel for " + (node.domain.empty() ? "" : node.domain + ".") + node.op_type);
  const Capability layouts = runs_layouts_fast(node);
  const Capability capability = layouts.supported ? entry->supports(node) : layouts;
  if (!capability.supported && has_unknown_rank(node))
    return Capability::when_shapes_known(capability.reason + " (decided when a plan's shapes are known)");
  return capability;
}

Capability CpuProvider::runs_layouts_fast(const ir::Node& node) const {
  const std::vector<std::string> layouts = computing_layouts(node);
  for (const std::string& name : layouts) {
    const std::optional<ops::ActivationLayout> layout = ops::ActivationLayout::parse(name);
    if (!layout || *layout == ops::ActivationLayout::channels_first()) continue;
    const auto& preferred = config_.activation_layouts;
    if (std::find(preferred.begin(), preferred.end(), *layout) == preferred.end())
      return Capability::no(name + " activations on this target (oneDNN has no vector kernel for them here; the cpu provider "
                                   "computes in " + preferred_names() + ")");
  }
  if (layouts.size() == 2 && layouts[0] != layouts[1] && layouts[0] != "NCHW" && layouts[1] != "NCHW")
    return Capability::no("a convolution from " + layouts[1] + " to " + layouts[0] +
                          " (oneDNN has no vector kernel between two different non-plain layouts)");
  return Capability::yes();
}

std::string CpuProvider::preferred_names() const {
  std::string names = "NCHW";
  for (const ops::ActivationLayout& layout : config_.activation_layouts) names += ", " + layout.name();
  return names;
}

Result<ops::Kernel> CpuProvider::kernel_for(const ir::Node& node, KernelBuild& build) const {
  if (cpu::is_shape_arithmetic(node)) return cpu::shape_arithmetic_kernel(node);
  const cpu::CpuKernel* entry = entry_for(node);
  // Shapes this plan does not know either (an If chose its branch by an input's value; a length
  // that depends on data, as Range's or NonZero's): the kernel is built on each run for that run's
  // shapes.
  if (entry && has_unknown_dims(node) && !node.has_subgraph()) {
    build.evidence.record_implementation(node.name, "kiln:run-time-shapes");
    return cpu::run_time_shaped_kernel(node, [this](const ir::Node& typed, KernelBuild& b) { return kernel_for(typed, b); });
  }
  const Capability capability = entry ? entry->supports(node) : Capability::no("no cpu kernel");
  // A node placed before its shapes were known (Capability::deferred) may be declined at a plan's.
  if (!capability.supported)
    return unsupported_target(node.describe() + " at this plan's shapes: cpu has no kernel for it: " + capability.reason);
  if (outputs_all_empty(node) && !node.has_subgraph()) {
    build.evidence.record_implementation(node.name, "kiln:empty");
    return ops::Kernel([](ops::KernelContext&) { return Status::ok(); });
  }
  // Libraries are never handed empty data: oneDNN's primitive creation divides by an empty dim on
  // some machines (a matmul with K = 0 died with SIGFPE on AMD Zen 4, even capped at AVX2). The
  // reference's loop computes what the spec defines for such shapes (zeros plus bias, beta * C,
  // a reduction's identity), in time proportional to the outputs.
  if (reads_empty_data(node, entry->data_inputs) && !node.has_subgraph()) {
    build.evidence.record_implementation(node.name, "kiln:empty-input");
    return cpu::reference_kernel(node);
  }
  Result<ops::Kernel> kernel = internal_error("unset");
  const bool calling_thread = runs_on_calling_thread(node) && omp_get_max_threads() > 1;
  KILN_RETURN_IF_ERROR(cpu::guard(node, [&] {
    std::optional<cpu::ScopedThreads> one;
    if (calling_thread) one.emplace(1);
    kernel = entry->build(node, build);
    return Status::ok();
  }));
  // A kernel that runs neither a oneDNN primitive nor generated code runs Kiln's own loops, built
  // for the x86-64-v3 baseline.
  if (kernel.is_ok() && !build.evidence.node_implementations().count(node.name)) build.evidence.record_implementation(node.name, "kiln:x86-64-v3");
  if (kernel.is_ok() && calling_thread)
    return ops::Kernel([run = std::move(kernel).value()](ops::KernelContext& ctx) {
      const cpu::ScopedThreads one(1);
      return run(ctx);
    });
  return kernel;
}

namespace cpu {

namespace {

// Why `v`, named `what`, is not a tensor of known rank of one of `dtypes`; empty when it is (or absent).
std::string tensor_mismatch(const ir::Value* v, const std::string& what, const std::vector<DType>& dtypes) {
  if (!v) return "";
  if (!v->type.is_tensor() || std::find(dtypes.begin(), dtypes.end(), v->type.dtype) == dtypes.end()) {
    std::string names;
    for (const DType d : dtypes) names += (names.empty() ? "" : " or ") + std::string(d == DType::kFloat ? "float32" : dtype_name(d));
    return what + " '" + v->name + "' is not " + names;
  }
  if (!v->type.shape) return what + " '" + v->name + "' has unknown rank";
  return "";
}

// float32 tensors for `inputs` and every output; input 0 (and a fused product's residual) and the
// outputs may also be of the types in `activations`.
Capability typed_tensors(const ir::Node& node, const std::vector<size_t>& inputs, const std::vector<DType>& activations) {
  const std::vector<DType> float32{DType::kFloat};
  for (size_t i : inputs)
    if (const std::string why = tensor_mismatch(node.input(i), "input", i == 0 || i == ops::kFusedResidualInput ? activations : float32);
        !why.empty())
      return Capability::no(why);
  for (const ir::Value* out : node.outputs)
    if (const std::string why = tensor_mismatch(out, "output", activations); !why.empty()) return Capability::no(why);
  return Capability::yes();
}

}  // namespace

Capability float_tensors(const ir::Node& node, const std::vector<size_t>& inputs) { return typed_tensors(node, inputs, {DType::kFloat}); }

Capability product_tensors(const ir::Node& node, const std::vector<size_t>& inputs) {
  switch (ops::node_precision(node)) {
    case ops::Precision::kBf16: return typed_tensors(node, inputs, {DType::kFloat, DType::kBFloat16});
    case ops::Precision::kInt8: {
      // A uint8 activation is read and written in its calibrated quantization, which the node carries.
      if (node.input(0) && node.input(0)->type.dtype == DType::kUInt8 && !ops::input_quantization(node))
        return Capability::no("uint8 input '" + node.input(0)->name + "' without the node's input_scale");
      const Result<std::optional<DType>> output = ops::fused_output_dtype(node);
      if (!output.is_ok()) return Capability::no(output.status().message());
      if (const ir::Value* residual = node.input(ops::kFusedResidualInput)) {
        const Status sum = ops::check_residual_dtype(node, residual->type.dtype, output.value().value_or(DType::kFloat));
        if (!sum.is_ok()) return Capability::no(sum.message());
      }
      return typed_tensors(node, inputs, {DType::kFloat, DType::kUInt8});
    }
    case ops::Precision::kFp32: break;
  }
  return typed_tensors(node, inputs, {DType::kFloat});
}

Capability float_tensor_of_rank(const ir::Node& node, size_t min_rank, size_t max_rank) {
  Capability c = float_tensors(node, {0});
  if (!c.supported) return c;
  const size_t rank = node.inputs[0]->type.shape->rank();
  if (rank < min_rank || rank > max_rank)
    return Capability::no(node.op_type + " of rank " + std::to_string(rank) + " (cpu has " + std::to_string(min_rank) + " to " +
                          std::to_string(max_rank) + ")");
  return Capability::yes();
}

CpuKernel node_only(std::function<Capability(const ir::Node&)> supports,
                    std::function<Result<ops::Kernel>(const ir::Node&)> build) {
  return {std::move(supports), [build = std::move(build)](const ir::Node& node, KernelBuild&) { return build(node); }};
}

void run_on_threads(int64_t count, const std::function<void(int64_t)>& task) {
#pragma omp parallel for schedule(dynamic) if (count > 1)
  for (int64_t i = 0; i < count; ++i) task(i);
}

CpuKernel first_of(CpuKernel preferred, CpuKernel otherwise) {
  return {[=](const ir::Node& node) {
            const Capability first = preferred.supports(node);
            return first.supported ? first : otherwise.supports(node);
          },
          [=](const ir::Node& node, KernelBuild& build) {
            return preferred.supports(node).supported ? preferred.build(node, build) : otherwise.build(node, build);
          },
          preferred.data_inputs};
}

bool is_8bit_tensor(const ir::Value* v) {
  return v && v->type.is_tensor() && (v->type.dtype == DType::kUInt8 || v->type.dtype == DType::kInt8);
}

Capability numeric_tensor(const ir::Node& node, size_t input) {
  const ir::Value* v = node.input(input);
  if (!v || !v->type.is_tensor() || !ops::list_has(ops::NumericTypes{}, v->type.dtype))
    return Capability::no(node.op_type + " of a non-numeric or non-tensor value");
  return Capability::yes();
}

Capability fixed_size_tensor(const ir::Node& node, size_t input) {
  const ir::Value* v = node.input(input);
  if (!v || !v->type.is_tensor() || v->type.dtype == DType::kString || v->type.dtype == DType::kUndefined)
    return Capability::no(node.op_type + " of a non-numeric or non-tensor value");
  return Capability::yes();
}

}  // namespace cpu

Result<std::shared_ptr<const Provider>> CpuProvider::create(const ProviderConfig& config) {
  KILN_ASSIGN_OR_RETURN(cpu::CpuConfig cpu, cpu::make_cpu_config(config.target));
  std::shared_ptr<codegen::KernelGenerator> generator;
  if (!config.embedded_code.empty()) {
    generator = codegen::KernelGenerator::for_embedded(config.target.features, config.embedded_code);
  } else if (config.generate_kernels) {
    KILN_ASSIGN_OR_RETURN(generator, codegen::KernelGenerator::create(config.target.features));
  }
  return std::shared_ptr<const Provider>(new CpuProvider(std::move(cpu), std::move(generator)));
}

// int8 convolutions run in channels-last only (oneDNN 2.6 has only its reference code for them in
// blocked layouts): when convolutions take int8 (the first precision asked for), channels-last
// comes first, and Winograd (fp32, blocked) is off. ResNet-50 at batch 1 on Zen 4: 16.0 ms in int8
// channels-last against 28.5 ms in int8 with every convolution's input and output reordered from
// and to NCHW16c; its fp32 convolutions take about the same time in either layout.
ops::GraphPreferences CpuProvider::graph_preferences(const std::vector<ops::Precision>& precision) const {
  using ops::GraphForm;
  const bool int8_convolutions = !precision.empty() && precision.front() == ops::Precision::kInt8;
  std::vector<ops::ActivationLayout> layouts = config_.activation_layouts;
  if (int8_convolutions)
    std::stable_partition(layouts.begin(), layouts.end(), [](const ops::ActivationLayout& l) { return !l.is_blocked(); });
  // No float16 kernels; oneDNN runs a chain of element-wise steps as post-ops in one pass.
  ops::GraphPreferences preferences{{GraphForm::kHalfInFloat, GraphForm::kElementwiseChains}, layouts};
  if (!layouts.empty()) preferences.forms.insert(GraphForm::kActivationLayouts);
  if (config_.winograd && !int8_convolutions) preferences.forms.insert(GraphForm::kWinograd);
  return preferences;
}

namespace {

// A convolution with a group per input channel (and so as many weights' output channels).
bool depthwise_convolution(const ir::Node& product) {
  const bool convolution = product.is("", "Conv") || product.is("kiln", "FusedConv");
  const int64_t group = product.attr_int("group", 1);
  return convolution && group > 1 && product.inputs[1]->type.shape && !product.inputs[1]->type.shape->static_dims().empty() &&
         group == product.inputs[1]->type.shape->static_dims()[0];
}

}  // namespace

// bfloat16 products run on oneDNN's avx512_core_bf16 kernels (VDPBF16PS); without that instruction
// oneDNN has only its reference code for them. int8 products run on every target (with VNNI one
// instruction per 4 products, else vpmaddubsw pairs), their input quantized on each run;
// convolutions in channels-last (conv_kernels.cpp).
Capability CpuProvider::computes_in(ops::Precision precision, const ir::Node* product) const {
  if (precision == ops::Precision::kBf16 && !config_.target.bf16())
    return Capability::no("bf16 products need AVX512_BF16 (feature avx512bf16), which the target " + config_.target.describe() +
                          " lacks");
  // A depthwise convolution (a group per channel) does 9 multiply-adds per value it reads: memory
  // bound, so a reduced precision saves no arithmetic worth the input's conversion (MobileNetV2 ran
  // 1.1-1.6x slower with its depthwise layers in bf16; in static int8, calibrated, its 17 depthwise
  // layers took 1.19 ms against 0.48 in fp32 at batch 1 on Zen 4, oneDNN's brdgmm_dw either way).
  if (precision != ops::Precision::kFp32 && product && depthwise_convolution(*product))
    return Capability::no(std::string("a depthwise convolution is memory-bound: ") + ops::precision_name(precision) +
                          " would only add its input's conversion");
  return Capability::yes();
}

// int8 depthwise convolutions between uint8 values read and write a quarter of fp32's bytes and
// convert nothing: MobileNetV2 in static int8 ran 1.5-1.7x faster with its 17 depthwise layers so
// (Zen 5, batch 1 and 8). bf16's depthwise kernel in oneDNN 2.6 is slower than fp32 even so.
bool CpuProvider::computes_where_kept(ops::Precision precision, const ir::Node& product) const {
  return precision == ops::Precision::kInt8 && depthwise_convolution(product);
}

// oneDNN's max pooling reads and writes bfloat16 and uint8 as they are (pool_kernels.cpp); the max
// commutes with the rounding into either (and with saturation), so a kept value passes through it.
bool CpuProvider::passes_reduced_activations(ops::Precision precision, const ir::Node& node) const {
  return precision != ops::Precision::kFp32 && cpu::max_pools_stored_type(node);
}

// The convolution and matrix product primitives read and write bfloat16 and uint8 activations as
// they are (the output converted from the float32 or int32 accumulator after the epilogue's
// post-ops; uint8 quantized by a last post-op). Not Gemm, whose alpha, beta and broadcast bias run
// after the primitive in float32.
bool CpuProvider::keeps_reduced_activations(ops::Precision precision, const ir::Node& product) const {
  return precision != ops::Precision::kFp32 && (product.is("", "Conv") || product.is("kiln", "FusedConv") ||
                                                 product.is("", "MatMul") || product.is("kiln", "FusedMatMul"));
}

// Without an int8 dot product (AVX512_VNNI, AVX_VNNI) oneDNN multiplies uint8 inputs by int8 weights
// with vpmaddubsw, which adds each pair of products into a saturating 16-bit sum: 2 x 255 x 127
// overflows it, 2 x 255 x 63 does not. Weights of 7 bits keep that arithmetic exact (measured at the
// AVX2 cap with 8-bit weights: outputs off by 15% of their largest value on random data).
int CpuProvider::int8_weight_levels() const { return config_.target.int8_dot() ? 127 : 63; }

void CpuProvider::begin_plan(PlanContext& context) const {
  context.set_provider_state(name(), std::make_shared<cpu::CpuPlanState>(config_.target, context.generated_kernels_allowed() ? generator_ : nullptr));
}

Status CpuProvider::finish_plan(KernelBuild& build) const {
  codegen::ModuleBuilder* module = cpu::generated_module(build.context);
  if (!module || module->size() == 0) return Status::ok();
  KILN_RETURN_IF_ERROR(module->build().with_context("generated kernels"));
  build.evidence.require_features(module->required_features());
  if (!module->object_bytes().empty()) build.evidence.record_code_object({module->source_key(), build.context.shared_provider_state(name()), module->object_bytes()});
  return Status::ok();
}

std::optional<GeneratedCodeEvidence> CpuProvider::generated_code() const {
  if (!generator_) return std::nullopt;
  const codegen::CodegenStats g = generator_->stats();
  return GeneratedCodeEvidence{g.compiler,   g.cache_folder, g.cache_writable,    g.modules,       g.kernels,     g.cache_hits,
                               g.cache_misses, g.corrupted_entries, g.embedded_hits, g.compile_ms, g.source_bytes};
}

}  // namespace kiln::providers
