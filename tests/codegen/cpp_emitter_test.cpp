// Tests of C++ emission: shapes as literal loop bounds and strides, the vector width chosen from
// the target's features, parameters as exact float literals, and threads only for large kernels.
#include "kiln/codegen/cpp_emitter.h"

#include <gtest/gtest.h>

namespace kiln::codegen {
namespace {

LoopKernel clip_of_sum(const std::vector<int64_t>& output) {
  LoopKernel k = loop_nest("kiln_kernel_0", {output, {output.back()}}, output);
  k.body.push_back({Instruction::Kind::kLoad, "", 0});
  k.body.push_back({Instruction::Kind::kLoad, "", 1});
  Instruction add{Instruction::Kind::kBinary, "Add"};
  add.lhs = 0;
  add.rhs = 1;
  k.body.push_back(add);
  Instruction clip{Instruction::Kind::kUnary, "Clip"};
  clip.lhs = 2;
  clip.alpha = 0.1f;
  clip.beta = 6.0f;
  k.body.push_back(clip);
  return k;
}

TEST(CppEmitter, ShapesAreLiteralsAndTheWidthFollowsTheTarget) {
  const std::string source = emit_module({clip_of_sum({3, 40})}, vector_width({"avx2", "avx512f"}));
  EXPECT_NE(source.find("extern \"C\" void kiln_kernel_0(const float* const* inputs, float* output)"), std::string::npos) << source;
  EXPECT_NE(source.find("i0 < 3;"), std::string::npos) << source;
  EXPECT_NE(source.find("i1 < 40;"), std::string::npos) << source;
  EXPECT_NE(source.find("in0[i0 * 40 + i1]"), std::string::npos) << source;
  EXPECT_NE(source.find("in1[i1]"), std::string::npos) << source;
  EXPECT_NE(source.find("simdlen(16)"), std::string::npos) << source;
  EXPECT_NE(source.find("0x1.99999ap-4f"), std::string::npos) << source;  // 0.1f exactly
  EXPECT_EQ(source.find("omp parallel"), std::string::npos) << source;  // 120 elements: one thread
  EXPECT_EQ(vector_width({"avx2", "fma"}), 8);
  EXPECT_EQ(vector_width({"sse4_2"}), 4);
}

TEST(CppEmitter, LargeKernelsSplitTheirOuterLoopsOverThreads) {
  const std::string source = emit_module({clip_of_sum({512, 300})}, 8);
  EXPECT_NE(source.find("#pragma omp parallel for collapse(1)"), std::string::npos) << source;
  EXPECT_NE(source.find("simdlen(8)"), std::string::npos) << source;
  LoopKernel copy = loop_nest("flat", {{100000}}, {100000});
  copy.body.push_back({Instruction::Kind::kLoad, "", 0});
  const std::string flat = emit_module({copy}, 16);
  EXPECT_NE(flat.find("#pragma omp parallel for simd simdlen(16)"), std::string::npos) << flat;
}

}  // namespace
}  // namespace kiln::codegen
