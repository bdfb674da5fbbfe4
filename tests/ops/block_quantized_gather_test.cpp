// Tests of kiln.BlockQuantizedGather: rows of a Q8_0 table dequantized exactly, negative indices,
// and an index outside the table refused naming it.
#include <cstring>

#include "kiln/ir/float16.h"
#include "ops/family_test_util.h"

namespace kiln::ops::testing {
namespace {

// A Q8_0 table of 3 rows of 32 values: row r is d = r + 1, quants j - 16.
Tensor q8_table() {
  Tensor t = Tensor::allocate(DType::kUInt8, {3, 34});
  for (int r = 0; r < 3; ++r) {
    const Float16 d = ir::to_float16(static_cast<float>(r + 1));
    std::memcpy(t.data<uint8_t>() + r * 34, &d.bits, 2);
    for (int j = 0; j < 32; ++j) t.data<uint8_t>()[r * 34 + 2 + j] = static_cast<uint8_t>(static_cast<int8_t>(j - 16));
  }
  return t;
}

TEST(BlockQuantizedGather, DequantizesTheIndexedRows) {
  const Tensor table = q8_table();
  const Tensor ids = int64s({1, 2}, {2, -3});
  auto out = run_kiln("BlockQuantizedGather", {&table, &ids}, {{"block_type", ir::Attribute::of_int(8)}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  std::vector<double> want;
  for (int r : {2, 0})
    for (int j = 0; j < 32; ++j) want.push_back((r + 1) * (j - 16));
  expect_near(out.value()[0], want, {1, 2, 32});
}

TEST(BlockQuantizedGather, RefusesAnIndexOutsideTheTable) {
  const Tensor table = q8_table();
  const Tensor ids = int64s({1}, {3});
  auto out = run_kiln("BlockQuantizedGather", {&table, &ids}, {{"block_type", ir::Attribute::of_int(8)}});
  ASSERT_FALSE(out.is_ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("index 3"), std::string::npos) << out.status().message();
  auto wrong_type = run_kiln("BlockQuantizedGather", {&table, &ids}, {{"block_type", ir::Attribute::of_int(2)}});  // 34 bytes: not Q4_0 rows
  EXPECT_FALSE(wrong_type.is_ok());
}

}  // namespace
}  // namespace kiln::ops::testing
