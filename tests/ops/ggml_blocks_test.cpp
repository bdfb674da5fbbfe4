// ggml's block types (ops/ggml_blocks.h): the table's sizes, and each dequantization on blocks
// written by hand from the layouts of ../shared/llm/README.md, every element checked against the
// layout's formula (nibble order, the fifth bits, the minimum, the scale's half-precision bits).
#include "kiln/ops/ggml_blocks.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace kiln::ops {
namespace {

constexpr uint16_t kHalfHalf = 0x3800, kHalfQuarter = 0x3400, kHalfOne = 0x3C00, kHalfMinusOne = 0xBC00, kHalfTwo = 0x4000;

std::string half_bytes(uint16_t bits) { return std::string(reinterpret_cast<const char*>(&bits), 2); }

std::vector<float> dequantized(uint32_t id, const std::string& blocks, int64_t count) {
  std::vector<float> out(static_cast<size_t>(count), -999.0f);
  const Status s = dequantize(*ggml_type(id), blocks.data(), count, out.data());
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  return out;
}

TEST(GgmlBlocks, TheTableHasTheLayoutsBlockSizes) {
  const std::pair<const char*, std::pair<int64_t, int64_t>> sizes[] = {
      {"Q4_0", {32, 18}}, {"Q4_1", {32, 20}}, {"Q5_0", {32, 22}}, {"Q5_1", {32, 24}}, {"Q8_0", {32, 34}},
      {"Q2_K", {256, 84}}, {"Q3_K", {256, 110}}, {"Q4_K", {256, 144}}, {"Q5_K", {256, 176}}, {"Q6_K", {256, 210}}};
  for (uint32_t id = 0; id < 40; ++id) {
    const std::optional<GgmlType> t = ggml_type(id);
    if (!t) continue;
    for (const auto& [name, size] : sizes)
      if (t->name == name) {
        EXPECT_EQ(t->block_values, size.first) << name;
        EXPECT_EQ(t->block_bytes, size.second) << name;
      }
  }
  EXPECT_EQ(ggml_type(12)->name, "Q4_K");
  EXPECT_FALSE(ggml_type(16));
  EXPECT_EQ(ggml_type_name(16), "IQ2_XXS");
  EXPECT_EQ(ggml_type_name(39), "MXFP4");
  EXPECT_EQ(ggml_type_name(200), "type 200");
}

TEST(GgmlBlocks, PlainTypesConvertEachValue) {
  const float f[2] = {1.5f, -2.25f};
  EXPECT_EQ(dequantized(0, std::string(reinterpret_cast<const char*>(f), 8), 2), (std::vector<float>{1.5f, -2.25f}));
  EXPECT_EQ(dequantized(1, half_bytes(kHalfHalf) + half_bytes(kHalfMinusOne), 2), (std::vector<float>{0.5f, -1.0f}));
  const uint16_t bf16[2] = {0x3FC0, 0xC010};  // 1.5, -2.25
  EXPECT_EQ(dequantized(30, std::string(reinterpret_cast<const char*>(bf16), 4), 2), (std::vector<float>{1.5f, -2.25f}));
  const double d = -0.125;
  EXPECT_EQ(dequantized(28, std::string(reinterpret_cast<const char*>(&d), 8), 1), (std::vector<float>{-0.125f}));
}

// Low nibbles hold elements 0-15, high nibbles 16-31.
std::string nibbles() {
  std::string qs(16, '\0');
  for (int j = 0; j < 16; ++j) qs[static_cast<size_t>(j)] = static_cast<char>(j | ((15 - j) << 4));
  return qs;
}

TEST(GgmlBlocks, FourBitBlocksTakeTheirScaleAndMinimum) {
  const std::vector<float> q4_0 = dequantized(2, half_bytes(kHalfHalf) + nibbles(), 32);
  const std::vector<float> q4_1 = dequantized(3, half_bytes(kHalfQuarter) + half_bytes(kHalfMinusOne) + nibbles(), 32);
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(q4_0[static_cast<size_t>(j)], (j - 8) * 0.5f) << j;
    EXPECT_EQ(q4_0[static_cast<size_t>(j + 16)], (15 - j - 8) * 0.5f) << j;
    EXPECT_EQ(q4_1[static_cast<size_t>(j)], j * 0.25f - 1.0f) << j;
    EXPECT_EQ(q4_1[static_cast<size_t>(j + 16)], (15 - j) * 0.25f - 1.0f) << j;
  }
}

TEST(GgmlBlocks, FiveBitBlocksReadTheFifthBitOfElementJAtBitJ) {
  const uint32_t high = 0xA5C3F00Fu;  // a bit pattern unlike its neighbours
  const std::string bits(reinterpret_cast<const char*>(&high), 4);
  const std::vector<float> q5_0 = dequantized(6, half_bytes(kHalfOne) + bits + nibbles(), 32);
  const std::vector<float> q5_1 = dequantized(7, half_bytes(kHalfTwo) + half_bytes(kHalfHalf) + bits + nibbles(), 32);
  for (int j = 0; j < 32; ++j) {
    const int low4 = j < 16 ? j : 15 - (j - 16);
    const int q = low4 | static_cast<int>((high >> j) & 1u) << 4;
    EXPECT_EQ(q5_0[static_cast<size_t>(j)], static_cast<float>(q - 16)) << j;
    EXPECT_EQ(q5_1[static_cast<size_t>(j)], static_cast<float>(q) * 2.0f + 0.5f) << j;
  }
}

TEST(GgmlBlocks, EightBitBlocksAreSignedBytesTimesTheScale) {
  std::string qs(32, '\0');
  for (int j = 0; j < 32; ++j) qs[static_cast<size_t>(j)] = static_cast<char>(static_cast<int8_t>(j * 8 - 128));
  const std::vector<float> q8_0 = dequantized(8, half_bytes(kHalfTwo) + qs, 32);
  const std::vector<float> q8_1 = dequantized(9, half_bytes(kHalfTwo) + half_bytes(kHalfOne) + qs, 32);
  for (int j = 0; j < 32; ++j) {
    EXPECT_EQ(q8_0[static_cast<size_t>(j)], static_cast<float>(j * 8 - 128) * 2.0f) << j;
    EXPECT_EQ(q8_1[static_cast<size_t>(j)], static_cast<float>(j * 8 - 128) * 2.0f) << j;
  }
}

TEST(GgmlBlocks, TypesWithoutADequantizationYetAndPartialBlocksAreRefused) {
  std::vector<float> out(256);
  const std::string block(144, '\0');
  const Status k = dequantize(*ggml_type(12), block.data(), 256, out.data());
  EXPECT_EQ(k.code(), StatusCode::kUnsupportedOperator);
  EXPECT_NE(k.message().find("Q4_K"), std::string::npos);
  const Status partial = dequantize(*ggml_type(2), block.data(), 16, out.data());
  EXPECT_EQ(partial.code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln::ops
