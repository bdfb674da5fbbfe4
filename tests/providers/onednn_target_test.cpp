// Tests of the cpu provider's view of the target through oneDNN: implementation names map to the
// features of the level they name, reference implementations are recognised, and the preferred
// layouts are ones oneDNN's vector kernels run, widest block first (never NCHW16c on a target whose
// vectors hold 8 floats).
#include "kiln/providers/cpu/onednn_target.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kiln::providers::cpu {
namespace {

bool has(const std::vector<std::string>& features, const std::string& f) {
  return std::find(features.begin(), features.end(), f) != features.end();
}

TEST(OnednnTarget, ImplementationsNeedTheFeaturesOfTheLevelTheyName) {
  const std::vector<std::string> core = implementation_features("brg:avx512_core");
  EXPECT_TRUE(has(core, "avx512f") && has(core, "avx512bw") && has(core, "avx2"));
  EXPECT_FALSE(has(core, "avx512vnni"));
  EXPECT_TRUE(has(implementation_features("jit:avx512_core_bf16"), "avx512bf16"));
  EXPECT_EQ(implementation_features("jit:avx2"), (std::vector<std::string>{"avx", "avx2", "fma"}));
  EXPECT_TRUE(implementation_features("gemm:jit").empty());
  EXPECT_TRUE(implementation_features("ref:any").empty());
}

TEST(OnednnTarget, ReferenceImplementationsAreRecognised) {
  EXPECT_TRUE(is_reference_implementation("ref:any"));
  EXPECT_TRUE(is_reference_implementation("ref_int8:any"));
  EXPECT_FALSE(is_reference_implementation("jit:avx2"));
  EXPECT_FALSE(is_reference_implementation("brg:avx512_core"));
  EXPECT_FALSE(is_reference_implementation("gemm:jit"));
}

TEST(OnednnTarget, PreferredLayoutsAreOnesOneDnnRunsWithVectorKernels) {
  const CpuConfig config = make_cpu_config(target::host_target()).value();
  EXPECT_EQ(config.target.level, target::host_target().level);
  const std::vector<ops::ActivationLayout>& layouts = config.activation_layouts;
  ASSERT_FALSE(layouts.empty());
  const auto effective = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  const auto avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
  const bool wide = (effective & avx512) == avx512;
  // The widest block oneDNN runs fast comes first; 16-channel blocks only where its vectors hold 16 floats.
  EXPECT_EQ(layouts.front(), ops::ActivationLayout::blocked(wide ? 16 : 8));
  if (!wide) {
    EXPECT_EQ(std::count(layouts.begin(), layouts.end(), ops::ActivationLayout::blocked(16)), 0);
  }
  // Channels-last runs at the full width wherever oneDNN has vector kernels: before any block it
  // runs with narrower ones (NCHW8c on AVX-512).
  const auto nhwc = std::find(layouts.begin(), layouts.end(), ops::ActivationLayout::channels_last());
  ASSERT_NE(nhwc, layouts.end());
  if (wide) {
    EXPECT_EQ(nhwc - layouts.begin(), 1);
  }
  EXPECT_EQ(config.winograd, wide);
}

}  // namespace
}  // namespace kiln::providers::cpu
