// ggml's block types (ops/ggml_blocks.h): the table's sizes, and each dequantization on blocks
// written by hand from the layouts of ../shared/llm/README.md, every element checked against the
// layout's formula (nibble order, the fifth bits, the minimum, the scale's half-precision bits, the
// K types' packed sub-block scales).
#include "kiln/ops/ggml_blocks.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <utility>
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

// A block's bytes, in place: `bytes` at `offset`.
void put(std::string& block, size_t offset, const std::string& bytes) { block.replace(offset, bytes.size(), bytes); }

// A byte pattern that gives neighbouring bytes (and the 2-bit fields within one) different values.
uint8_t pattern(int i) { return static_cast<uint8_t>(i * 37 + 11); }

TEST(GgmlBlocks, Q2KTakesFourBitScalesAndMinimumsPerSixteenValues) {
  // 16 scale bytes, 64 quant bytes, d, dmin.
  std::string block(84, '\0');
  for (int i = 0; i < 16; ++i) block[static_cast<size_t>(i)] = static_cast<char>(i | (15 - i) << 4);
  for (int b = 0; b < 64; ++b) block[static_cast<size_t>(16 + b)] = static_cast<char>(pattern(b));
  put(block, 80, half_bytes(kHalfHalf));
  put(block, 82, half_bytes(kHalfMinusOne));
  const std::vector<float> y = dequantized(10, block, 256);
  // Each half of 128 values: byte l of its 32 holds element 32 k + l at bits 2k, 2k + 1.
  for (int half = 0; half < 2; ++half)
    for (int k = 0; k < 4; ++k)
      for (int l = 0; l < 32; ++l) {
        const int e = 128 * half + 32 * k + l, sub = e / 16;
        const int q = (pattern(32 * half + l) >> (2 * k)) & 3;
        EXPECT_EQ(y[static_cast<size_t>(e)], 0.5f * static_cast<float>(sub * q) + static_cast<float>(15 - sub)) << e;
      }
}

TEST(GgmlBlocks, Q3KTakesTheHighBitMaskAndSignedSixBitScales) {
  // 32 high-bit bytes, 64 quant bytes, 12 scale bytes, d.
  std::string block(110, '\0');
  for (int b = 0; b < 32; ++b) block[static_cast<size_t>(b)] = static_cast<char>(pattern(b + 100));
  for (int b = 0; b < 64; ++b) block[static_cast<size_t>(32 + b)] = static_cast<char>(pattern(b));
  int scales[16];
  for (int i = 0; i < 16; ++i) {
    scales[i] = (i * 23 + 5) & 63;  // 0-63, below and above 32, every high pair
    block[static_cast<size_t>(96 + i % 8)] |= static_cast<char>((scales[i] & 15) << (4 * (i / 8)));
    block[static_cast<size_t>(104 + i % 4)] |= static_cast<char>((scales[i] >> 4) << (2 * (i / 4)));
  }
  put(block, 108, half_bytes(kHalfQuarter));
  const std::vector<float> y = dequantized(11, block, 256);
  for (int half = 0; half < 2; ++half)
    for (int k = 0; k < 4; ++k)
      for (int l = 0; l < 32; ++l) {
        const int e = 128 * half + 32 * k + l;
        const int low = (pattern(32 * half + l) >> (2 * k)) & 3;
        const bool high = (pattern(l + 100) >> (4 * half + k)) & 1;  // bit e / 32 of byte e % 32
        const int q = high ? low : low - 4;
        EXPECT_EQ(y[static_cast<size_t>(e)], 0.25f * static_cast<float>((scales[e / 16] - 32) * q)) << e;
      }
}

// The 12 bytes of Q4_K's and Q5_K's eight 6-bit scales and minimums: 0-3 in the low 6 bits of
// bytes 0-3 and 4-7; 4-7 as nibbles of bytes 8-11 (scale low, minimum high), their top 2 bits in
// the top 2 bits of bytes 0-3 (scales) and 4-7 (minimums).
constexpr int kKScales[8] = {1, 63, 17, 40, 33, 62, 5, 48}, kKMins[8] = {60, 0, 31, 32, 47, 2, 63, 21};

std::string packed_k_scales() {
  std::string packed(12, '\0');
  for (int j = 0; j < 4; ++j) {
    packed[static_cast<size_t>(j)] = static_cast<char>(kKScales[j] | (kKScales[j + 4] >> 4) << 6);
    packed[static_cast<size_t>(j + 4)] = static_cast<char>(kKMins[j] | (kKMins[j + 4] >> 4) << 6);
    packed[static_cast<size_t>(j + 8)] = static_cast<char>((kKScales[j + 4] & 15) | (kKMins[j + 4] & 15) << 4);
  }
  return packed;
}

TEST(GgmlBlocks, Q4KAndQ5KUnpackAllEightSixBitScalesAndMinimums) {
  // d, dmin, 12 scale bytes, (Q5_K: 32 fifth-bit bytes,) 128 nibble bytes.
  std::string nibbles(128, '\0'), fifth(32, '\0');
  for (int b = 0; b < 128; ++b) nibbles[static_cast<size_t>(b)] = static_cast<char>(pattern(b));
  for (int b = 0; b < 32; ++b) fifth[static_cast<size_t>(b)] = static_cast<char>(pattern(b + 200));
  const std::string head = half_bytes(kHalfHalf) + half_bytes(kHalfTwo) + packed_k_scales();
  const std::vector<float> q4 = dequantized(12, head + nibbles, 256);
  const std::vector<float> q5 = dequantized(13, head + fifth + nibbles, 256);
  // Each 64 values: 32 bytes, low nibbles (sub-block 2c) then high nibbles (2c + 1).
  for (int j = 0; j < 8; ++j)
    for (int l = 0; l < 32; ++l) {
      const int e = 32 * j + l;
      const int q = j % 2 == 0 ? pattern(32 * (j / 2) + l) & 15 : pattern(32 * (j / 2) + l) >> 4;
      const int q_fifth = q + 16 * ((pattern(l + 200) >> j) & 1);
      EXPECT_EQ(q4[static_cast<size_t>(e)], 0.5f * static_cast<float>(kKScales[j] * q) - 2.0f * static_cast<float>(kKMins[j])) << e;
      EXPECT_EQ(q5[static_cast<size_t>(e)], 0.5f * static_cast<float>(kKScales[j] * q_fifth) - 2.0f * static_cast<float>(kKMins[j])) << e;
    }
}

TEST(GgmlBlocks, Q6KTakesInt8ScalesAndCountsFromMinus32) {
  // 128 low-nibble bytes, 64 high-pair bytes, 16 int8 scales, d.
  std::string block(210, '\0');
  for (int b = 0; b < 192; ++b) block[static_cast<size_t>(b)] = static_cast<char>(pattern(b));
  for (int i = 0; i < 16; ++i) block[static_cast<size_t>(192 + i)] = static_cast<char>(static_cast<int8_t>(i * 17 - 128));
  put(block, 208, half_bytes(kHalfMinusOne));
  const std::vector<float> y = dequantized(14, block, 256);
  // Each half: 64 nibble bytes, 32 pair bytes; element 32 k + l takes nibble k / 2 of byte
  // l + 32 (k % 2) and the pair at bits 2k of pair byte l.
  for (int half = 0; half < 2; ++half)
    for (int k = 0; k < 4; ++k)
      for (int l = 0; l < 32; ++l) {
        const int e = 128 * half + 32 * k + l;
        const int nibble = (pattern(64 * half + 32 * (k % 2) + l) >> (4 * (k / 2))) & 15;
        const int pair = (pattern(128 + 32 * half + l) >> (2 * k)) & 3;
        const int scale = (e / 16) * 17 - 128;
        EXPECT_EQ(y[static_cast<size_t>(e)], -static_cast<float>(scale * ((nibble | pair << 4) - 32))) << e;
      }
}

TEST(GgmlBlocks, Q8KIsAFloatScaleTimesSignedBytes) {
  // float d, 256 int8, 16 int16 sums (unused here).
  std::string block(292, '\x7f');
  const float d = -1.5f;
  std::memcpy(block.data(), &d, 4);
  for (int j = 0; j < 256; ++j) block[static_cast<size_t>(4 + j)] = static_cast<char>(static_cast<int8_t>(j - 128));
  const std::vector<float> y = dequantized(15, block + block, 512);
  for (int j = 0; j < 512; ++j) EXPECT_EQ(y[static_cast<size_t>(j)], -1.5f * static_cast<float>(j % 256 - 128)) << j;
}

TEST(GgmlBlocks, IntegerTypesConvertToTheNearestFloat) {
  const int8_t i8[2] = {-128, 127};
  const int16_t i16[2] = {-30000, 7};
  const int32_t i32[2] = {16777217, -3};                       // 2^24 + 1 rounds to 2^24
  const int64_t i64[2] = {-(int64_t{1} << 40) - 1, 1 << 20};  // -(2^40 + 1) rounds to -2^40
  EXPECT_EQ(dequantized(24, std::string(reinterpret_cast<const char*>(i8), 2), 2), (std::vector<float>{-128.0f, 127.0f}));
  EXPECT_EQ(dequantized(25, std::string(reinterpret_cast<const char*>(i16), 4), 2), (std::vector<float>{-30000.0f, 7.0f}));
  EXPECT_EQ(dequantized(26, std::string(reinterpret_cast<const char*>(i32), 8), 2), (std::vector<float>{16777216.0f, -3.0f}));
  EXPECT_EQ(dequantized(27, std::string(reinterpret_cast<const char*>(i64), 16), 2),
            (std::vector<float>{-1099511627776.0f, 1048576.0f}));
}

TEST(GgmlBlocks, TypesOutsideTheTableAndPartialBlocksAreRefused) {
  std::vector<float> out(512);
  const std::string block(292, '\0');
  const GgmlType iq2{16, "IQ2_XXS", 256, 66};
  const Status other = dequantize(iq2, block.data(), 256, out.data());
  EXPECT_EQ(other.code(), StatusCode::kUnsupportedOperator);
  EXPECT_NE(other.message().find("IQ2_XXS"), std::string::npos);
  for (uint32_t id : {2u, 10u, 12u, 15u}) {
    for (int64_t count : {16, 255, 300}) {
      const Status partial = dequantize(*ggml_type(id), block.data(), count, out.data());
      EXPECT_EQ(partial.code(), StatusCode::kInvalidArgument) << id << " " << count;
    }
  }
}

}  // namespace
}  // namespace kiln::ops
