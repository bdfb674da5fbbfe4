// .npy reading and writing: round trips for every dtype, numpy's exact bytes, and every refusal
// naming the file and the field at fault.
#include "kiln/io/npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "frontend/onnx_model_builder.h"

namespace kiln::io {
namespace {

using kiln::frontend::testing::ScratchDir;
using kiln::frontend::testing::write_bytes;

std::string npy_v1(const std::string& header_dict, const std::string& data) {
  std::string header = header_dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

void expect_invalid(const std::string& bytes, const std::vector<std::string>& parts) {
  ScratchDir dir("io");
  write_bytes(dir.file("t.npy"), bytes);
  Result<Tensor> r = read_npy(dir.file("t.npy"));
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("t.npy"), std::string::npos) << r.status().message();
  for (const auto& part : parts)
    EXPECT_NE(r.status().message().find(part), std::string::npos) << part << " not in: " << r.status().message();
}

TEST(Npy, RoundTripsEveryDtype) {
  ScratchDir dir("io");
  for (DType dtype : {DType::kFloat, DType::kDouble, DType::kFloat16, DType::kInt8, DType::kInt16, DType::kInt32,
                      DType::kInt64, DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64, DType::kBool}) {
    Tensor t = Tensor::allocate(dtype, {2, 3});
    auto* bytes = static_cast<unsigned char*>(t.raw_data());
    for (size_t i = 0; i < t.byte_size(); ++i) bytes[i] = static_cast<unsigned char>(dtype == DType::kBool ? i % 2 : i * 7 + 1);
    const std::string path = dir.file(std::string(dtype_name(dtype)) + ".npy");
    ASSERT_TRUE(write_npy(path, t).is_ok()) << dtype_name(dtype);
    Result<Tensor> back = read_npy(path);
    ASSERT_TRUE(back.is_ok()) << back.status().to_string();
    EXPECT_EQ(back->dtype(), dtype);
    EXPECT_EQ(back->shape(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(std::memcmp(back->raw_data(), t.raw_data(), t.byte_size()), 0) << dtype_name(dtype);
  }
  // Nothing but the written files: no temporary file is left behind.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), std::filesystem::directory_iterator()), 12);
}

TEST(Npy, WritesExactlyWhatNumpyWrites) {
  // From numpy 1.24: np.save(f, np.array([[1,2,3],[4,5,6]], dtype='<i4')): a 118-byte header.
  std::string header = "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }";
  header.append(117 - header.size(), ' ');
  std::string expected = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + header + "\n";
  for (int32_t v = 1; v <= 6; ++v) expected.append(reinterpret_cast<const char*>(&v), 4);
  Tensor t = Tensor::from_vector(DType::kInt32, {2, 3}, std::vector<int32_t>{1, 2, 3, 4, 5, 6});
  Result<std::string> bytes = serialize_npy(t);
  ASSERT_TRUE(bytes.is_ok());
  EXPECT_EQ(bytes.value(), expected);
}

TEST(Npy, ScalarsAndVectorsUseTupleSyntax) {
  Result<std::string> scalar = serialize_npy(Tensor::from_vector(DType::kDouble, {}, std::vector<double>{2.5}));
  ASSERT_TRUE(scalar.is_ok());
  EXPECT_NE(scalar->find("'shape': (), }"), std::string::npos);
  Result<std::string> vec = serialize_npy(Tensor::from_vector(DType::kBool, {2}, std::vector<bool>{true, false}));
  ASSERT_TRUE(vec.is_ok());
  EXPECT_NE(vec->find("'descr': '|b1', 'fortran_order': False, 'shape': (2,), }"), std::string::npos);
  Result<Tensor> back = parse_npy(*scalar, "scalar.npy");
  ASSERT_TRUE(back.is_ok());
  EXPECT_EQ(back->rank(), 0);
  EXPECT_EQ(back->data<double>()[0], 2.5);
}

TEST(Npy, ReadsVersion2Headers) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }";
  header.append((64 - (12 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string bytes("\x93NUMPY\x02\x00", 8);
  for (int i = 0; i < 4; ++i) bytes += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  const float one = 1.0f;
  bytes += header + std::string(reinterpret_cast<const char*>(&one), 4);
  Result<Tensor> t = parse_npy(bytes, "v2.npy");
  ASSERT_TRUE(t.is_ok()) << t.status().to_string();
  EXPECT_EQ(t->data<float>()[0], 1.0f);
}

TEST(Npy, RefusesBadFiles) {
  const std::string f4 = std::string(8, '\0');
  expect_invalid("PK\x03\x04 not numpy at all", {"magic"});
  expect_invalid(std::string("\x93NUMPY\x07\x00", 8) + "xx", {"version 7"});
  expect_invalid(npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", f4), {"bad .npy header", "expected ','"});
  expect_invalid(npy_v1("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", f4), {"'descr'", ">f4"});
  expect_invalid(npy_v1("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", f4), {"'descr'", "<c8"});
  expect_invalid(npy_v1("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", f4), {"'fortran_order'"});
  expect_invalid(npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1), }", f4), {"'shape'"});
  expect_invalid(npy_v1("{'descr': '<f4', 'fortran_order': False, }", f4), {"'shape'"});
  expect_invalid(npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", f4), {"data section", "8 bytes", "12"});
  std::string cut = npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", f4);
  expect_invalid(cut.substr(0, 40), {"header is cut off"});
}

// A few bytes declaring a huge array are refused before anything is allocated (fuzz_npy: 1.9 billion
// U4 strings were allocated, 61 GB, before the data section was measured).
TEST(Npy, HugeDeclaredShapesAreRefusedBeforeAllocating) {
  expect_invalid(npy_v1("{'descr': '<U4', 'fortran_order': False, 'shape': (1921975264, 1), }", std::string(16, 'a')),
                 {"data section", "16 bytes", "U4 strings", "needs 30751604224"});
  expect_invalid(npy_v1("{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,), }", std::string(8, '\0')),
                 {"data section", "8 bytes", "needs 8796093022208"});
  expect_invalid(npy_v1("{'descr': '<U4611686018', 'fortran_order': False, 'shape': (4611686018,), }", ""),
                 {"'shape'", "too large"});
  expect_invalid(npy_v1("{'descr': '<U0', 'fortran_order': False, 'shape': (1000000000,), }", ""), {"'<U0'", "U1"});
  Result<Tensor> empty = parse_npy(npy_v1("{'descr': '<U0', 'fortran_order': False, 'shape': (0,), }", ""), "e.npy");
  ASSERT_TRUE(empty.is_ok()) << empty.status().to_string();
  EXPECT_EQ(empty->shape(), (std::vector<int64_t>{0}));
}

TEST(Npy, MissingFileIsNotFound) {
  ScratchDir dir("io");
  Result<Tensor> r = read_npy(dir.file("none.npy"));
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

// UTF-32LE code units of `text`'s code points, each element padded with NULs to `width`.
std::string utf32_elements(const std::vector<std::u32string>& elements, size_t width) {
  std::string out;
  for (const std::u32string& e : elements)
    for (size_t k = 0; k < width; ++k)
      for (int b = 0; b < 4; ++b) out += static_cast<char>(((k < e.size() ? e[k] : 0) >> (8 * b)) & 0xff);
  return out;
}

TEST(Npy, StringsAreNumpysUnicodeArrays) {
  // np.save(f, np.array([['ab', 'é'], ['', '日本語']])): '<U3', four code points of 4 bytes each.
  const std::string numpy_bytes = npy_v1("{'descr': '<U3', 'fortran_order': False, 'shape': (2, 2), }",
                                         utf32_elements({U"ab", U"\u00e9", U"", U"\u65e5\u672c\u8a9e"}, 3));
  ASSERT_EQ(numpy_bytes.size(), 176u);  // what numpy 1.24 writes
  Result<Tensor> t = parse_npy(numpy_bytes, "s.npy");
  ASSERT_TRUE(t.is_ok()) << t.status().to_string();
  EXPECT_EQ(t->dtype(), DType::kString);
  EXPECT_EQ(t->shape(), (std::vector<int64_t>{2, 2}));
  const std::vector<std::string> utf8 = {"ab", "\xc3\xa9", "", "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e"};
  EXPECT_EQ(std::vector<std::string>(t->data<std::string>(), t->data<std::string>() + 4), utf8);
  Result<std::string> back = serialize_npy(*t);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(*back, numpy_bytes);
  // All-empty strings are '<U1', numpy's narrowest.
  Result<std::string> empty = serialize_npy(Tensor::from_vector(DType::kString, {1}, std::vector<std::string>{""}));
  ASSERT_TRUE(empty.is_ok());
  EXPECT_NE(empty->find("'descr': '<U1'"), std::string::npos);
}

TEST(Npy, RefusesStringsThatAreNotUnicode) {
  expect_invalid(npy_v1("{'descr': '<U1', 'fortran_order': False, 'shape': (2,), }",
                        utf32_elements({U"a", std::u32string(1, char32_t{0xD800})}, 1)),
                 {"string element 1", "not a Unicode code point"});
  expect_invalid(npy_v1("{'descr': '<U2', 'fortran_order': False, 'shape': (2,), }", std::string(12, 'a')),
                 {"data section", "12 bytes", "16"});
  expect_invalid(npy_v1("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", "x"), {"object array", "|O"});
  Result<std::string> latin1 =
      serialize_npy(Tensor::from_vector(DType::kString, {2}, std::vector<std::string>{"ok", "caf\xe9"}));
  ASSERT_FALSE(latin1.is_ok());
  EXPECT_NE(latin1.status().message().find("string element 1 is not valid UTF-8 at byte 3"), std::string::npos)
      << latin1.status().message();
}

TEST(Npy, FailedWritesLeaveNoFile) {
  ScratchDir dir("io");
  Tensor strings = Tensor::from_vector(DType::kString, {1}, std::vector<std::string>{"\xff"});
  Status s = write_npy(dir.file("out.npy"), strings);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  Tensor floats = Tensor::from_vector(DType::kFloat, {1}, std::vector<float>{1.0f});
  EXPECT_FALSE(write_npy(dir.file("no_such_folder/out.npy"), floats).is_ok());
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

}  // namespace
}  // namespace kiln::io
