// The instruction sets the cpu provider builds kernels for: this machine's CPU features, the ISA
// levels oneDNN dispatches on (each a set of features), a cap on the level that simulates a lesser
// machine (`--isa avx2`), and the features a chosen oneDNN implementation needs.
#pragma once

#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::providers::cpu {

// Level names, lowest first: "avx2", "avx512_core", "avx512_core_vnni", "avx512_core_bf16".
std::vector<std::string> isa_level_names();

// The CPU features (GCC's names: "avx2", "avx512f", ...) this machine has, sorted.
std::vector<std::string> host_features();

// The features kernels may use on the target `level` names: the host's, limited to the level's
// when `level` is not empty. InvalidArgument naming the known levels for an unknown one.
Result<std::vector<std::string>> target_features(const std::string& level);

// Caps oneDNN's kernels at `level` for the rest of the process (nothing when empty).
// InvalidArgument for an unknown level, or when kernels above it were already built.
Status cap_isa(const std::string& level);

// The features implementation `impl` (oneDNN's impl_info_str: "brg:avx512_core") needs: those of
// the level it names; none for ISA-neutral ones ("gemm:jit", "ref:any").
std::vector<std::string> implementation_features(const std::string& impl);

}  // namespace kiln::providers::cpu
