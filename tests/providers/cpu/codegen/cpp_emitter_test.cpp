// Tests of C++ emission: shapes as literal loop bounds and strides, the vector width chosen from
// the target's features, parameters as exact float literals, threads only for large kernels, and
// reductions whose result is stored once per row.
#include "kiln/providers/cpu/codegen/cpp_emitter.h"

#include <gtest/gtest.h>

namespace kiln::codegen {
namespace {

LoopKernel clip_of_sum(const std::vector<int64_t>& output) {
  LoopKernel k = loop_nest("kiln_kernel_0", {output, {output.back()}}, output);
  k.body.push_back(Instruction::load(0));
  k.body.push_back(Instruction::load(1));
  k.body.push_back(Instruction::binary(ops::Elementwise::kAdd, 0, 1));
  k.body.push_back(Instruction::unary(ops::Elementwise::kClip, 2, 0.1f, 6.0f));
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
  copy.body.push_back(Instruction::load(0));
  const std::string flat = emit_module({copy}, 16);
  EXPECT_NE(flat.find("#pragma omp parallel for simd simdlen(16)"), std::string::npos) << flat;
}

// Mean of each row of a [6, 50] input: the sum folds over the row, the scaled result is stored
// once per row, after the row's loop.
TEST(CppEmitter, APerRowResultIsStoredOncePerRow) {
  LoopKernel k = row_nest("row_mean", 6, 50, {false});
  const int sum = k.add(Instruction::reduce(Instruction::Fold::kSum, k.add(Instruction::load(0))));
  k.add(Instruction::binary(ops::Elementwise::kMul, sum, k.add(Instruction::constant(0.02f))));
  ASSERT_TRUE(k.stores_per_row());
  const std::string source = emit_module({k}, 16);
  EXPECT_NE(source.find("reduction(+:v1)"), std::string::npos) << source;
  const size_t row_loop_end = source.find("v1 += v0;\n    }\n");
  const size_t store = source.find("output[i0] = v3;");
  ASSERT_NE(row_loop_end, std::string::npos) << source;
  ASSERT_NE(store, std::string::npos) << source;
  EXPECT_LT(row_loop_end, store) << source;
  EXPECT_NE(source.find("const float v3 = (v1 * v2);"), std::string::npos) << source;
  LoopKernel product = row_nest("row_product", 2, 9, {false});
  product.add(Instruction::reduce(Instruction::Fold::kProd, product.add(Instruction::load(0))));
  const std::string prod = emit_module({product}, 8);
  EXPECT_NE(prod.find("float v1 = 1.0f;"), std::string::npos) << prod;
  EXPECT_NE(prod.find("reduction(*:v1)"), std::string::npos) << prod;
  EXPECT_NE(prod.find("output[i0] = v1;"), std::string::npos) << prod;
}

}  // namespace
}  // namespace kiln::codegen
