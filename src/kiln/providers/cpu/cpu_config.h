// CpuConfig: what the cpu provider knows of its target, made once when the provider is made
// (make_cpu_config, onednn_target.cpp) and kept by it, never read back from process-global state.
#pragma once

#include <vector>

#include "kiln/ops/activation_layout.h"
#include "kiln/status.h"
#include "kiln/target/target.h"

namespace kiln::providers::cpu {

// The Target, and what oneDNN wants there, asked of oneDNN (capped first), not assumed.
struct CpuConfig {
  target::Target target;
  // The activation layouts oneDNN runs a representative convolution in with a vector kernel,
  // best first: those whose kernel uses the widest vectors first, and among equals the blocked
  // layouts widest first, then channels-last. AVX-512: NCHW16c, NHWC, NCHW8c (oneDNN runs
  // 8-channel blocks with its AVX2 kernels); AVX2: NCHW8c, NHWC (oneDNN 2.6 runs 16-channel blocks
  // with its reference code). Blocked before channels-last, though oneDNN's own pick for
  // format_tag::any is channels-last on AVX-512 (its brgemm kernels): the blocked kernels measured
  // faster on Kiln's convolution regions (MobileNetV2 b8: 71.9 -> 52.7 ms at 1 thread).
  std::vector<ops::ActivationLayout> activation_layouts;
  bool winograd = false;  // oneDNN runs Winograd convolutions here (it has them for AVX-512 only)
};

// Caps oneDNN's kernels at `target`'s level when the target is capped (the cap is the process's:
// oneDNN keeps one), then asks oneDNN what it wants there. InvalidArgument when kernels above the
// cap were already built in this process.
Result<CpuConfig> make_cpu_config(const target::Target& target);

}  // namespace kiln::providers::cpu
