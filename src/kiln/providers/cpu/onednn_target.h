// The cpu provider's Target as oneDNN sees it: the cap on oneDNN's instruction set (set once per
// process, before its first kernel), what oneDNN wants on that target (the activation layouts its
// convolutions run fastest in, whether it has Winograd convolutions: asked of oneDNN, not
// assumed), and what a chosen implementation ("brg:avx512_core", "ref:any") needs and is.
#pragma once

#include <dnnl.hpp>

#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ops/activation_layout.h"
#include "kiln/status.h"
#include "kiln/target/target.h"

namespace kiln::providers::cpu {

// Caps oneDNN's kernels at `target`'s level when the target is capped (nothing otherwise).
// InvalidArgument when kernels above it were already built in this process.
Status cap_onednn(const target::Target& target);

// The activation layouts oneDNN runs a representative convolution in with a vector kernel on
// this process's (capped) instruction set, best first: those whose kernel uses the widest vectors
// first, and among equals the blocked layouts widest first, then channels-last. AVX-512: NCHW16c,
// NHWC, NCHW8c (oneDNN runs 8-channel blocks with its AVX2 kernels); AVX2: NCHW8c, NHWC (oneDNN
// 2.6 runs 16-channel blocks with its reference code). Blocked before channels-last, though
// oneDNN's own pick for format_tag::any is channels-last on AVX-512 (its brgemm kernels): the
// blocked kernels measured faster on Kiln's convolution regions (MobileNetV2 b8: 71.9 -> 52.7 ms
// at 1 thread).
std::vector<ops::ActivationLayout> preferred_activation_layouts();

// Whether oneDNN runs Winograd convolutions here (it has them for AVX-512 only).
bool has_winograd_convolutions();

// The features implementation `impl` (oneDNN's impl_info_str) needs: those of the level it names;
// none for ISA-neutral ones ("gemm:jit", "ref:any").
std::vector<std::string> implementation_features(const std::string& impl);

// oneDNN's reference implementations ("ref:any", "ref_int8:any"...): correct but scalar, often
// 100x slower than a vector kernel. The cpu provider never plans one.
bool is_reference_implementation(const std::string& impl);

// A primitive's implementation name.
std::string implementation_of(const dnnl::primitive& primitive);

// Whether `primitive` runs its int8 products with VNNI. Without it (vpmaddubsw), a pair of uint8 x
// int8 products is summed in 16 bits and may saturate, so exact kernels split their weights
// (split_int8_weights).
bool runs_int8_with_vnni(const dnnl::primitive& primitive);

// Int8 weights w as 64 * high + low, high in [-2, 1] and low in [0, 63]: a pair sum of uint8 x
// either part fits 16 bits (2 x 255 x 63 < 32768), so two products without VNNI give the exact one.
struct SplitInt8Weights {
  std::vector<int8_t> high, low;
};
SplitInt8Weights split_int8_weights(const std::vector<int8_t>& weights);

// "oneDNN 2.6.3 (hash)": what a timing depends on besides the target.
std::string onednn_version();

}  // namespace kiln::providers::cpu
