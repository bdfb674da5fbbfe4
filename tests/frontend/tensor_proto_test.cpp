// TensorProto -> Tensor for every storage form ONNX uses, and size checks that name the tensor.
#include "kiln/frontend/onnx/tensor_proto.h"

#include <gtest/gtest.h>

#include <cstring>

namespace kiln::frontend {
namespace {

onnx::TensorProto proto(const std::string& name, int data_type, const std::vector<int64_t>& dims) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(data_type);
  for (int64_t d : dims) t.add_dims(d);
  return t;
}

Tensor convert(const onnx::TensorProto& t) {
  Result<Tensor> r = tensor_from_proto(t, ".");
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? r.value() : Tensor();
}

template <class T>
std::vector<T> values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.element_count());
}

TEST(TensorProto, SmallIntegerTypesComeFromInt32Data) {
  auto i8 = proto("i8", onnx::TensorProto::INT8, {3});
  for (int v : {-128, 0, 127}) i8.add_int32_data(v);
  EXPECT_EQ(values<int8_t>(convert(i8)), (std::vector<int8_t>{-128, 0, 127}));

  auto u16 = proto("u16", onnx::TensorProto::UINT16, {2});
  for (int v : {0, 65535}) u16.add_int32_data(v);
  EXPECT_EQ(values<uint16_t>(convert(u16)), (std::vector<uint16_t>{0, 65535}));

  auto i16 = proto("i16", onnx::TensorProto::INT16, {1});
  i16.add_int32_data(-300);
  EXPECT_EQ(values<int16_t>(convert(i16)), (std::vector<int16_t>{-300}));

  auto u8 = proto("u8", onnx::TensorProto::UINT8, {1});
  u8.add_int32_data(200);
  EXPECT_EQ(values<uint8_t>(convert(u8)), (std::vector<uint8_t>{200}));

  auto b = proto("b", onnx::TensorProto::BOOL, {3});
  for (int v : {1, 0, 1}) b.add_int32_data(v);
  EXPECT_EQ(values<bool>(convert(b)), (std::vector<bool>{true, false, true}));
}

TEST(TensorProto, HalfFloatsKeepTheirBits) {
  auto h = proto("h", onnx::TensorProto::FLOAT16, {2});
  h.add_int32_data(0x3c00);  // 1.0 in IEEE half
  h.add_int32_data(0xc000);  // -2.0
  Tensor t = convert(h);
  EXPECT_EQ(t.data<Float16>()[0].bits, 0x3c00);
  EXPECT_EQ(t.data<Float16>()[1].bits, 0xc000);

  auto bf = proto("bf", onnx::TensorProto::BFLOAT16, {1});
  bf.add_int32_data(0x3f80);  // 1.0 in bfloat16
  EXPECT_EQ(convert(bf).data<BFloat16>()[0].bits, 0x3f80);
}

TEST(TensorProto, WideTypesUseTheirOwnFields) {
  auto i64 = proto("i64", onnx::TensorProto::INT64, {2});
  i64.add_int64_data(-(int64_t{1} << 40));
  i64.add_int64_data(5);
  EXPECT_EQ(values<int64_t>(convert(i64)), (std::vector<int64_t>{-(int64_t{1} << 40), 5}));

  auto u32 = proto("u32", onnx::TensorProto::UINT32, {1});
  u32.add_uint64_data(4000000000u);
  EXPECT_EQ(values<uint32_t>(convert(u32)), (std::vector<uint32_t>{4000000000u}));

  auto u64 = proto("u64", onnx::TensorProto::UINT64, {1});
  u64.add_uint64_data(uint64_t{1} << 63);
  EXPECT_EQ(values<uint64_t>(convert(u64)), (std::vector<uint64_t>{uint64_t{1} << 63}));

  auto f64 = proto("f64", onnx::TensorProto::DOUBLE, {1});
  f64.add_double_data(0.1);
  EXPECT_EQ(values<double>(convert(f64)), (std::vector<double>{0.1}));

  auto c64 = proto("c64", onnx::TensorProto::COMPLEX64, {1});
  c64.add_float_data(1.5f);
  c64.add_float_data(-2.5f);
  Tensor c = convert(c64);
  EXPECT_EQ(c.data<float>()[0], 1.5f);
  EXPECT_EQ(c.data<float>()[1], -2.5f);
}

TEST(TensorProto, StringsAndRawData) {
  auto s = proto("s", onnx::TensorProto::STRING, {2});
  s.add_string_data("hello");
  s.add_string_data("");
  EXPECT_EQ(values<std::string>(convert(s)), (std::vector<std::string>{"hello", ""}));

  auto raw = proto("raw", onnx::TensorProto::INT32, {2, 1});
  const int32_t data[2] = {7, -9};
  raw.set_raw_data(std::string(reinterpret_cast<const char*>(data), sizeof(data)));
  Tensor t = convert(raw);
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(values<int32_t>(t), (std::vector<int32_t>{7, -9}));

  auto scalar = proto("scalar", onnx::TensorProto::FLOAT, {});
  scalar.add_float_data(3.0f);
  EXPECT_EQ(convert(scalar).rank(), 0);

  auto empty = proto("empty", onnx::TensorProto::FLOAT, {0, 4});
  EXPECT_EQ(convert(empty).element_count(), 0);
}

// ONNX codes of the narrow types (onnx 1.17's TensorProto.DataType; Debian's headers predate them).
constexpr int kFloat8E4M3FNCode = 17, kFloat8E5M2FNUZCode = 20, kUInt4Code = 21, kInt4Code = 22;

TEST(TensorProto, Float8KeepsItsBitsFromInt32DataOrRawData) {
  auto typed = proto("f8", kFloat8E4M3FNCode, {2});
  typed.add_int32_data(0x38);  // 1.0
  typed.add_int32_data(0xFE);  // -448
  Tensor t = convert(typed);
  ASSERT_EQ(t.dtype(), DType::kFloat8E4M3FN);
  EXPECT_EQ(t.data<Float8E4M3FN>()[0].bits, 0x38);
  EXPECT_EQ(t.data<Float8E4M3FN>()[1].bits, 0xFE);

  auto raw = proto("f8raw", kFloat8E5M2FNUZCode, {3});
  raw.set_raw_data(std::string("\x00\x80\x44", 3));
  Tensor r = convert(raw);
  ASSERT_EQ(r.dtype(), DType::kFloat8E5M2FNUZ);
  EXPECT_EQ(r.data<Float8E5M2FNUZ>()[1].bits, 0x80);
  EXPECT_EQ(r.data<Float8E5M2FNUZ>()[2].bits, 0x44);
}

TEST(TensorProto, FourBitIntegersAreUnpackedLowNibbleFirst) {
  // int4 [-8, 7, -1, 3, 5]: bytes (7 << 4 | 8), (3 << 4 | 0xF), (0 << 4 | 5) -- odd count, padded.
  auto raw = proto("w", kInt4Code, {5});
  raw.set_raw_data(std::string("\x78\x3F\x05", 3));
  Tensor t = convert(raw);
  ASSERT_EQ(t.dtype(), DType::kInt4);
  ASSERT_EQ(t.element_count(), 5);
  std::vector<int> got;
  for (int64_t i = 0; i < 5; ++i) got.push_back(t.data<Int4>()[i].value);
  EXPECT_EQ(got, (std::vector<int>{-8, 7, -1, 3, 5}));

  // uint4 in int32_data: one packed byte per entry.
  auto typed = proto("u", kUInt4Code, {2, 2});
  typed.add_int32_data(0xF0);
  typed.add_int32_data(0x21);
  Tensor u = convert(typed);
  std::vector<int> ugot;
  for (int64_t i = 0; i < 4; ++i) ugot.push_back(u.data<UInt4>()[i].value);
  EXPECT_EQ(ugot, (std::vector<int>{0, 15, 1, 2}));
}

void expect_invalid(const onnx::TensorProto& t, const std::vector<std::string>& parts) {
  Result<Tensor> r = tensor_from_proto(t, ".");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidModel);
  for (const auto& part : parts)
    EXPECT_NE(r.status().message().find(part), std::string::npos) << part << " not in: " << r.status().message();
}

TEST(TensorProto, SizeMismatchesNameTheTensor) {
  auto raw = proto("weights", onnx::TensorProto::FLOAT, {4});
  raw.set_raw_data(std::string(12, '\0'));
  expect_invalid(raw, {"tensor 'weights'", "16 bytes", "12 bytes"});

  auto typed = proto("ids", onnx::TensorProto::INT64, {2, 2});
  for (int64_t i : {1, 2, 3}) typed.add_int64_data(i);
  expect_invalid(typed, {"tensor 'ids'", "int64_data holds 3"});

  auto none = proto("nothing", onnx::TensorProto::INT8, {2});
  expect_invalid(none, {"tensor 'nothing'", "2 elements", "at most 0"});

  // Dims far beyond the data are refused before anything is allocated (fuzz_tensor_proto: a few
  // bytes asked for 175 GB).
  auto huge = proto("huge", onnx::TensorProto::FLOAT, {1 << 16, 1 << 16});
  huge.add_float_data(1.0f);
  expect_invalid(huge, {"tensor 'huge'", "4294967296 elements", "at most 2"});

  auto negative = proto("neg", onnx::TensorProto::FLOAT, {-1});
  expect_invalid(negative, {"tensor 'neg'", "negative"});

  // 5 int4 elements pack into 3 bytes; 5 bytes (one per element) is not the ONNX form.
  auto unpacked = proto("w4", kInt4Code, {5});
  unpacked.set_raw_data(std::string(5, '\0'));
  expect_invalid(unpacked, {"tensor 'w4'", "int4", "3 bytes", "holds 5 bytes"});

  auto unknown = proto("odd", 99, {1});
  expect_invalid(unknown, {"tensor 'odd'", "data type 99"});
}

}  // namespace
}  // namespace kiln::frontend
