// The cpu provider's Target as oneDNN sees it (CpuConfig): the cap on oneDNN's instruction set (set
// once per process, before its first kernel), what oneDNN wants on that target (the activation
// layouts its convolutions run fastest in, whether it has Winograd convolutions: asked of oneDNN,
// not assumed), and what a chosen implementation ("brg:avx512_core", "ref:any") needs and is.
#pragma once

#include <dnnl.hpp>

#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/providers/cpu/cpu_config.h"
#include "kiln/ops/activation_layout.h"
#include "kiln/status.h"
#include "kiln/target/target.h"

namespace kiln::providers::cpu {

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
