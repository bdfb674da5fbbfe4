// The cpu provider's kiln.BlockQuantizedMatMul against dequantize-then-multiply (ggml_blocks' exact
// dequantization, sums in double), for every block type of the table, over shapes of one and
// several activation rows (from 16 rows the prompt path: 8-bit tiles with the target's dot
// instructions, VNNI where it has them, or float tiles for sgemm; over more than one tile here). Activations that are whole numbers with a block maximum of 127 are
// quantized without loss, so there the products must agree to float rounding; for other
// activations the difference is bounded by the 8-bit quantization: half a step (max |x| / 127 of
// the quantized group: 32 values, or a K type's 256 for the one-token path) times the sum of |w|
// over the group.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kiln/ir/float16.h"
#include "kiln/ops/block_quantized_matmul.h"
#include "kiln/providers/registry/provider_registry.h"
#include "support/test_target.h"

namespace kiln::testing {
namespace {

// Where a block type keeps its fp16 scales (the rest of a block is any bytes), and for Q8_K the
// float scale.
struct ScaleFields {
  uint32_t type;
  std::vector<int> halves;
  int float_at = -1;
};
const std::vector<ScaleFields> kTypes = {
    {2, {0}}, {3, {0, 2}}, {6, {0}}, {7, {0, 2}}, {8, {0}}, {9, {0, 2}}, {10, {80, 82}}, {11, {108}},
    {12, {0, 2}}, {13, {0, 2}}, {14, {208}}, {15, {}, 0},
};

void put_half(uint8_t* p, float value) {
  const Float16 h = ir::to_float16(value);
  std::memcpy(p, &h.bits, 2);
}

// Random blocks of `type` for a [n, k] weight, scales in [0.002, 0.03].
Tensor random_blocks(const ScaleFields& fields, const ops::GgmlType& type, int64_t n, int64_t k, std::mt19937& random) {
  const int64_t row_bytes = k / type.block_values * type.block_bytes;
  Tensor w = Tensor::allocate(DType::kUInt8, {n, row_bytes});
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(0.002f, 0.03f);
  uint8_t* p = w.data<uint8_t>();
  for (int64_t i = 0; i < n * row_bytes; ++i) p[i] = static_cast<uint8_t>(byte(random));
  for (int64_t b = 0; b < n * row_bytes / type.block_bytes; ++b) {
    uint8_t* block = p + b * type.block_bytes;
    for (int at : fields.halves) put_half(block + at, scale(random));
    if (fields.float_at >= 0) {
      const float d = scale(random);
      std::memcpy(block + fields.float_at, &d, 4);
    }
  }
  return w;
}

struct Shape {
  int64_t m, k, n;
};

void check_type(const ScaleFields& fields, const Shape& s, bool whole_numbers) {
  const ops::GgmlType type = *ops::ggml_type(fields.type);
  SCOPED_TRACE(std::string(type.name) + " m=" + std::to_string(s.m) + " k=" + std::to_string(s.k) + " n=" + std::to_string(s.n) +
               (whole_numbers ? " whole-number activations" : " float activations"));
  std::mt19937 random(static_cast<unsigned>(fields.type * 1000 + s.m * 7 + s.n));
  const Tensor w = random_blocks(fields, type, s.n, s.k, random);
  Tensor x = Tensor::allocate(DType::kFloat, {s.m, s.k});
  std::uniform_int_distribution<int> whole(-127, 127);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int64_t i = 0; i < s.m * s.k; ++i) x.data<float>()[i] = whole_numbers ? static_cast<float>(whole(random)) : normal(random);
  if (whole_numbers)
    for (int64_t i = 0; i < s.m * s.k; i += 32) x.data<float>()[i] = 127.0f;  // each block's maximum

  ir::Graph graph;
  ir::Value* xv = graph.add_value("x", ir::make_type(DType::kFloat, x.shape()));
  ir::Value* wv = graph.add_constant("w", w);
  ir::Value* y = graph.add_value("y", ir::make_type(DType::kFloat, {s.m, s.n}));
  ir::Node* node = graph.add_node("BlockQuantizedMatMul", {xv, wv}, {y}, "product", "kiln", 1);
  node->attributes[ops::kBlockTypeAttribute] = ir::Attribute::of_int(fields.type);
  auto provider = providers::make_provider("cpu", {test_target()});
  ASSERT_TRUE(provider.is_ok()) << provider.status().to_string();
  ASSERT_TRUE(provider.value()->supports(*node).supported);
  providers::PlanContext context;
  provider.value()->begin_plan(context);  // the prompt path's dot instructions come from the test's target
  providers::PlanEvidence evidence;
  providers::KernelBuild build{context, evidence};
  auto kernel = provider.value()->kernel_for(*node, build);
  ASSERT_TRUE(kernel.is_ok()) << kernel.status().to_string();
  Tensor got = Tensor::allocate(DType::kFloat, {s.m, s.n});
  const std::vector<const Tensor*> inputs = {&x, &w};
  ops::KernelContext ctx(*node, inputs, {&got});
  ASSERT_TRUE(kernel.value()(ctx).is_ok());

  std::vector<float> row(static_cast<size_t>(s.k));
  int64_t failures = 0;
  for (int64_t n = 0; n < s.n; ++n) {
    ASSERT_TRUE(ops::dequantize(type, w.data<char>() + n * w.shape()[1], s.k, row.data()).is_ok());
    for (int64_t m = 0; m < s.m; ++m) {
      const float* xs = x.data<float>() + m * s.k;
      double want = 0, magnitude = 0, quantization = 0;
      const int64_t group = type.block_values == 256 ? 256 : 32;
      for (int64_t b = 0; b < s.k / group; ++b) {
        double amax = 0, wsum = 0;
        for (int64_t j = b * group; j < b * group + group; ++j) {
          want += static_cast<double>(xs[j]) * row[static_cast<size_t>(j)];
          magnitude += std::abs(static_cast<double>(xs[j]) * row[static_cast<size_t>(j)]);
          amax = std::max(amax, std::abs(static_cast<double>(xs[j])));
          wsum += std::abs(row[static_cast<size_t>(j)]);
        }
        if (!whole_numbers) quantization += amax / 127.0 / 2.0 * wsum;  // where the kernel quantizes activations
      }
      const double bound = quantization * 1.01 + 1e-5 * magnitude + 1e-6;
      const double error = std::abs(got.data<float>()[m * s.n + n] - want);
      if (error > bound && ++failures <= 5)
        ADD_FAILURE() << "y[" << m << ", " << n << "] = " << got.data<float>()[m * s.n + n] << ", dequantize-then-multiply gives " << want
                      << " (allowed " << bound << ")";
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(BlockQuantizedMatMulCpu, EveryBlockTypeMatchesDequantizeThenMultiply) {
  for (const ScaleFields& fields : kTypes)
    // From 16 rows the prompt path: 300 weight rows are a tile and a part, 37 end in a partial group
    // of 8, 19 activation rows in a partial register tile.
    for (const Shape& s : {Shape{1, 256, 5}, Shape{4, 512, 64}, Shape{13, 256, 1}, Shape{20, 256, 300}, Shape{19, 512, 37}})
      for (bool whole : {true, false}) check_type(fields, s, whole);
}

TEST(BlockQuantizedMatMulCpu, ThirtyTwoValueTypesEndingInAPartialGroup) {
  // The one-token rows take 4 blocks of 32 at a time (AVX-512): rows of 1, 3 and 7 blocks end in a
  // partial group; 41 rows leave some over after each thread's streams.
  for (const ScaleFields& fields : kTypes)
    if (ops::ggml_type(fields.type)->block_values == 32)
      for (const Shape& s : {Shape{1, 32, 3}, Shape{1, 96, 9}, Shape{3, 224, 41}}) check_type(fields, s, false);
}

TEST(BlockQuantizedMatMulCpu, RefusesALayoutThatIsNotBlocks) {
  ir::Graph graph;
  ir::Value* x = graph.add_value("x", ir::make_type(DType::kFloat, {1, 64}));
  ir::Value* w = graph.add_constant("w", Tensor::allocate(DType::kUInt8, {3, 35}));
  ir::Node* node = graph.add_node("BlockQuantizedMatMul", {x, w}, {graph.add_value("y")}, "product", "kiln", 1);
  node->attributes[ops::kBlockTypeAttribute] = ir::Attribute::of_int(8);  // Q8_0 rows are multiples of 34 bytes
  auto layout = ops::block_quantized_weight(*node, {3, 35});
  ASSERT_FALSE(layout.is_ok());
  EXPECT_EQ(layout.status().code(), StatusCode::kInvalidModel);
  node->attributes[ops::kBlockTypeAttribute] = ir::Attribute::of_int(0);  // F32 is not a block type
  EXPECT_FALSE(ops::block_quantized_weight(*node, {3, 34}).is_ok());
  node->attributes[ops::kBlockTypeAttribute] = ir::Attribute::of_int(16);  // IQ2_XXS: no layout
  EXPECT_NE(ops::block_quantized_weight(*node, {3, 34}).status().message().find("IQ2_XXS"), std::string::npos);
}

}  // namespace
}  // namespace kiln::testing
