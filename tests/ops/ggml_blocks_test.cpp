// ggml's block types (ops/ggml_blocks.h): the table's sizes, and each dequantization on blocks
// written by hand from the layouts of ../shared/llm/README.md, every element checked against the
// layout's formula (nibble order, the fifth bits, the minimum, the scale's half-precision bits, the
// K types' packed sub-block scales); the K types also against llama.cpp's reference floats.
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

// Two random blocks per K type (the second with any finite half for d and dmin: zero, subnormal,
// large) and their dequantization by llama.cpp's own numpy reference (gguf-py/gguf/quants.py),
// computed once offline (random bytes, fixed seed): the FNV-1a hash of all 512 floats' bits, and
// some of them. Kiln's floats must be the same bit for bit.
struct ReferenceBlocks {
  uint32_t id;
  const char* hex;
  uint64_t fnv;
  std::vector<std::pair<int, uint32_t>> samples;  // index, float bits
};

const ReferenceBlocks kReference[] = {
    {10,  // Q2_K
     "19b588f60d0885387248a0ddc730f12876c6fd6763e1db45bbe23f3ad75e10da741d1d5b49388eb2a425e8c46c6f1b9d0e85"
     "39c8609a6b75148e3a8b8ab7db84973b6ae3a6472bc06881273d87b9e4098da8c01e4cab1f8beadc803515fce7b75894de14"
     "7f55c4236121031049eb91f81f719491cd011f1c0570b07d033b47c1dc24206d843f94177ea9cdc552add85b2aeafb13813a"
     "efba18602772d70b627c53055fb3314bf930",
     0x355b11dfd02760f6ull,
     {{0, 0xbf258400}, {1, 0xbf258400}, {31, 0xbe802400}, {64, 0xbfb17b00}, {100, 0xbe6c0800},
      {127, 0xbf16b000}, {128, 0xbe40e000}, {200, 0xbea7ec00}, {254, 0xbf5dd000}, {255, 0xbc580000},
      {256, 0x44014a38}, {300, 0x4421c48e}, {383, 0x428ee550}, {450, 0x42e49230}, {511, 0x42e5d070}}},
    {11,  // Q3_K
     "9228701d1ee3cadc67d947852c2b0b16ec10277d4ca34a96a7d11c4b7e5bcee5654070b8bea89ea3fb31613956947831b545"
     "c620d81a09ceb3e27c99e0b98ef30b552e045bb67dda92dc62dbd2b5c5c5ddeed26290139217cbca7a85d6c4c0676f7fe362"
     "6909ca923b8fbdab182545c0d177bd589dd71609b33e92c84381544970b827b4d61ab3315cfe561710c08c43ab8e045523bf"
     "5eacbc971ed0c8b3f0fda1df054b75d425fc4863376bf7864a1c22c151dece7e7eb8fe98fb6b484c66b16646e08ae64c2047"
     "bb37180f961491545123cc6233c94f8ee3ab159e",
     0x84ba61616142dadfull,
     {{0, 0xbfecdc00}, {1, 0xc01de800}, {31, 0x3fecdc00}, {64, 0xbeb76000}, {100, 0x3f847000},
      {127, 0xbd230000}, {128, 0x3fa81800}, {200, 0xbf047000}, {254, 0x3f098800}, {255, 0x3e376000},
      {256, 0x80000000}, {300, 0xbe9b1780}, {383, 0x3ddaf400}, {450, 0x3d42a000}, {511, 0x80000000}}},
    {12,  // Q4_K
     "9f176da5ec0dbc313687c56192bbc27bbf791e4969e1a7f2ba79262e2331429093a16bd17708074db5e532e435be4521c862"
     "a8c5df55514243774e2a151be840eb99afd4b1c02a6d715ace5b2d2c5a37cd066844b1f792ba8a93f5c2c42dc46093518927"
     "ff9b56eecbffa6d508d91267b9a87a184e6e178763e0430f3d91ecf9fa9d5179f572bc665189f7ba6095bba8e3eb5bc6d866"
     "24b53e137a54879325e63daeef2d892a11e6e6c29c661cf6113e118924ca4692cad089b1565d61b6e0226fe055e9647db39e"
     "3f6760a43016de63e9e789eed4d36108516c6f9d72af7621eb353e12745449b96b4a6172f19ca13cc66955148b6bb90d65de"
     "8414360abcb2a123f27a80a0f95ca513f7bb81191c0987b6db8e7099b43c1a888b5931d965e1",
     0xffda970918d6cc61ull,
     {{0, 0x4017d730}, {1, 0x3ff0cea0}, {31, 0x3f9cf9a0}, {64, 0x3f7fc300}, {100, 0x3ff13b98},
      {127, 0x3f7911d0}, {128, 0x3fb33830}, {200, 0x3fbb10d0}, {254, 0x3f366d70}, {255, 0x3f313020},
      {256, 0xc999be30}, {300, 0xc815bad0}, {383, 0xc8d0ef9c}, {450, 0xc71d499a}, {511, 0xca031ae5}}},
    {13,  // Q5_K
     "4fb3a6cc21a5cff34eb56d9ec38a90254a95b850a2c2caf0d1a2a53dcd47664b7173849e845ca4390a2b2cc14fb536e7e0cd"
     "b81426d2b48b0246bdd93331fd3d2cda1e0bb26440d9bf16c76d88d3f26636b7cfae6b447193312289a383d44aab93615018"
     "5e44cd325511df41138b9d919fd27bf005260159f98f830a70db2ee2256fa78b71b11a053cb7574d50e2660335cedacc41e9"
     "a443bc0bfa2e5768c8d3b4631ee4cf6dce4511a8faaae960787b95af4f119245d7632136a9887904becd8ec29f15a6938015"
     "9b9086c447dacc6a6052784c989903a95d24a1583457515688b23fe8c62b958c2cce40278d5561a4097e32d0c9eea30f791e"
     "8277c03efdfdeed229ecc7f3c458e0ef4bff6535b2e7925b9c77ef4593c1e56e1737c566dc5a6b887c4d19a7154e8c9559e4"
     "14337d1d292807ea45964792d1eb77a382572a9be671b523b6f31b3669ca828d2b61653abaea88b1ff1ecfcdcfe23043c301"
     "2b6e",
     0x7a24dc19961c4a83ull,
     {{0, 0x43822800}, {1, 0x4226f5a0}, {31, 0x42bcff60}, {64, 0x444c0a74}, {100, 0x43f3f648},
      {127, 0x43e27d6c}, {128, 0x43ff2c74}, {200, 0x431de200}, {254, 0x4408dd06}, {255, 0x43b0e34c},
      {256, 0xc188a5cc}, {300, 0xc1640555}, {383, 0xc1a5e5fe}, {450, 0xc2130369}, {511, 0xc1a52325}}},
    {14,  // Q6_K
     "9cfaf394ae1785273234d7e012332f56a9547a07bd2df0e05efd7dae1437d69f51b826e8004334499d0606179315c6878791"
     "e53d2f9a21536acd79a46d73b13bff9072d7d9600174b381c73248ba96436ae70e1e1b8b9c4c96b3fa346e1d0b9768854589"
     "cdc4b86be35d8d15bf31e7a2eb2184f0323011544a54990f75597b49b0a97df655754cb1b1a7eb85f7b94108cafb3af89b10"
     "a57a8a467d847f9ec5543b7759e408dc2a936c3e98bb60e8bd73659880a600f4fbc46ac9ef90122ccb4aa9c2adcb2efa44fe"
     "93f52b18c6a479bf5b463eb79042faf8720f6ac98be88a2fdcdb5504b4ef8b8170810aeb25e146eae05e6dc95bdd9cef9699"
     "7b7de64d0d62c94b2a9fa1c09f0a4debd9e8ff0cf7b2b56bf6d2de9263f44425482f6bdefaac962ed902e34f62ae25c98951"
     "8da3af6ff9c2020f1ed95c2aed292760a743f85a2eccf63aa767ec4c7469eac0e182096c384926e9f505d2db2b71dcaf7522"
     "191f4253f01e04c42c3088d9a043b993a04b16c45cbd281c6d681a387a61e0aa4b96b90f9e420015ed8a552f4221c8494b86"
     "9759412ef76be7f529955f1cec55d0e655bb1cad",
     0x5a753025b77303e7ull,
     {{0, 0x462cca10}, {1, 0x454f58e0}, {31, 0x45d15550}, {64, 0x45e46650}, {100, 0xc5d81600},
      {127, 0x43253e00}, {128, 0xc6a7c642}, {200, 0xc57d6ca0}, {254, 0xc61475b4}, {255, 0x459aea20},
      {256, 0xc2914c40}, {300, 0x41157300}, {383, 0x433bede0}, {450, 0x42474400}, {511, 0xc2843480}}},
};

TEST(GgmlBlocks, KTypesMatchLlamaCppsReferenceBitForBit) {
  for (const ReferenceBlocks& r : kReference) {
    const std::string hex = r.hex;
    std::string blocks;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) blocks += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
    ASSERT_EQ(static_cast<int64_t>(blocks.size()), 2 * ggml_type(r.id)->block_bytes);
    const std::vector<float> y = dequantized(r.id, blocks, 512);
    uint64_t fnv = 0xcbf29ce484222325ull;
    for (float v : y) {
      uint32_t bits;
      std::memcpy(&bits, &v, 4);
      for (int k = 0; k < 4; ++k) fnv = (fnv ^ ((bits >> (8 * k)) & 0xFF)) * 0x100000001b3ull;
    }
    EXPECT_EQ(fnv, r.fnv) << ggml_type_name(r.id);
    for (const auto& [index, expected] : r.samples) {
      uint32_t bits;
      std::memcpy(&bits, &y[static_cast<size_t>(index)], 4);
      EXPECT_EQ(bits, expected) << ggml_type_name(r.id) << " value " << index << " = " << y[static_cast<size_t>(index)];
    }
  }
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
