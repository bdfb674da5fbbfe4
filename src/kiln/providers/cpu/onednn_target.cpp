// oneDNN's instruction-set cap, and what it wants on the target (see onednn_target.h).
#include "kiln/providers/cpu/onednn_target.h"

#include <algorithm>
#include <optional>

#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

using memory = dnnl::memory;
using tag = memory::format_tag;

std::optional<dnnl::cpu_isa> onednn_isa(const std::string& level) {
  if (level == "avx2") return dnnl::cpu_isa::avx2;
  if (level == "avx512_core") return dnnl::cpu_isa::avx512_core;
  if (level == "avx512_core_vnni") return dnnl::cpu_isa::avx512_core_vnni;
  if (level == "avx512_core_bf16") return dnnl::cpu_isa::avx512_core_bf16;
  return std::nullopt;
}

// A representative convolution (64 -> 64 channels, 3x3, 28x28, padded) with its activations in
// `activations` (any: oneDNN's choice) and `algorithm`; nullopt when oneDNN has no implementation.
std::optional<dnnl::convolution_forward::primitive_desc> probe_convolution(tag activations, dnnl::algorithm algorithm) {
  const memory::dims src{1, 64, 28, 28}, weights{64, 64, 3, 3}, strides{1, 1}, pads{1, 1};
  const memory::desc x(src, memory::data_type::f32, activations), w(weights, memory::data_type::f32, tag::any);
  try {
    const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm, x, w, x, strides, pads, pads);
    return dnnl::convolution_forward::primitive_desc(desc, cpu_engine());
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

// Whether oneDNN runs the representative convolution in `layout` with a vector kernel.
bool runs_fast(tag activations, dnnl::algorithm algorithm = dnnl::algorithm::convolution_direct) {
  const auto pd = probe_convolution(activations, algorithm);
  return pd && !is_reference_implementation(pd->impl_info_str());
}

// The vector width (bits) of the kernel oneDNN runs the representative convolution with in
// `activations`: 512 for an AVX-512 one, 256 for AVX2, 0 for its reference code or none.
int kernel_width(tag activations) {
  const auto pd = probe_convolution(activations, dnnl::algorithm::convolution_direct);
  if (!pd || is_reference_implementation(pd->impl_info_str())) return 0;
  const std::vector<std::string> needs = implementation_features(pd->impl_info_str());
  const auto has = [&](const char* f) { return std::find(needs.begin(), needs.end(), f) != needs.end(); };
  return has("avx512f") ? 512 : has("avx2") ? 256 : 128;
}

std::optional<tag> blocked_tag(int64_t block) {
  if (block == 16) return tag::nChw16c;
  if (block == 8) return tag::nChw8c;
  return std::nullopt;
}

// Caps oneDNN's kernels at `target`'s level when the target is capped (nothing otherwise).
// InvalidArgument when kernels above it were already built in this process.
Status cap_onednn(const target::Target& target) {
  if (!target.capped) return Status::ok();
  const std::optional<dnnl::cpu_isa> cap = onednn_isa(target.level);
  if (!cap) return internal_error("no oneDNN ISA for level '" + target.level + "'");
  if (dnnl::set_max_cpu_isa(*cap) == dnnl::status::success) return Status::ok();
  // oneDNN fixes its level at its first kernel; a cap it already honours is no error.
  const auto effective = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  if ((effective & static_cast<unsigned>(*cap)) == effective) return Status::ok();
  return invalid_argument("the ISA can be capped at '" + target.level +
                          "' only before this process builds its first kernel at a higher level");
}

}  // namespace

Result<CpuConfig> make_cpu_config(const target::Target& target) {
  KILN_RETURN_IF_ERROR(cap_onednn(target));
  CpuConfig config;
  config.target = target;
  // Blocked layouts widest first, then channels-last; then those whose kernels use the widest
  // vectors first (on AVX-512 oneDNN runs NCHW8c with its AVX2 kernels, NHWC with AVX-512 ones).
  std::vector<std::pair<ops::ActivationLayout, int>> candidates;
  for (int64_t block : ops::channel_blocks()) candidates.emplace_back(ops::ActivationLayout::blocked(block), kernel_width(*blocked_tag(block)));
  candidates.emplace_back(ops::ActivationLayout::channels_last(), kernel_width(tag::nhwc));
  std::stable_sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  for (const auto& [layout, width] : candidates)
    if (width > 0) config.activation_layouts.push_back(layout);
  config.winograd = runs_fast(tag::nChw16c, dnnl::algorithm::convolution_winograd);
  return config;
}

std::vector<std::string> implementation_features(const std::string& impl) {
  const size_t colon = impl.rfind(':');
  return target::level_features(colon == std::string::npos ? impl : impl.substr(colon + 1));
}

bool is_reference_implementation(const std::string& impl) { return impl.rfind("ref", 0) == 0; }

std::string onednn_version() {
  const dnnl_version_t* v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) + " (" +
         (v->hash ? v->hash : "") + ")";
}

std::string implementation_of(const dnnl::primitive& primitive) {
  const char* name = nullptr;
  if (dnnl_primitive_desc_query(primitive.get_primitive_desc(), dnnl_query_impl_info_str, 0, &name) != dnnl_success || !name)
    return "unknown";
  return name;
}

bool runs_int8_with_vnni(const dnnl::primitive& primitive) {
  const std::vector<std::string> features = implementation_features(implementation_of(primitive));
  return std::find(features.begin(), features.end(), "avx512vnni") != features.end() ||
         std::find(features.begin(), features.end(), "avxvnni") != features.end();
}

SplitInt8Weights split_int8_weights(const std::vector<int8_t>& weights) {
  SplitInt8Weights split{std::vector<int8_t>(weights.size()), std::vector<int8_t>(weights.size())};
  for (size_t i = 0; i < weights.size(); ++i) {
    const int w = weights[i];
    const int low = w & 63;  // w - low is a multiple of 64 in [-128, 64]
    split.low[i] = static_cast<int8_t>(low);
    split.high[i] = static_cast<int8_t>((w - low) / 64);
  }
  return split;
}

}  // namespace kiln::providers::cpu
