// .pb (TensorProto, SequenceProto, OptionalProto) files: ONNX's test data, files written here, and
// refusals naming the file.
#include "kiln/frontend/onnx/tensor_pb.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "frontend/onnx_model_builder.h"
#include "kiln/tensor_io.h"

namespace kiln::frontend {
namespace {

using namespace kiln::frontend::testing;

TEST(TensorPb, ReadsAFileWrittenWithProtobuf) {
  ScratchDir dir("io");
  write_bytes(dir.file("t.pb"), float_tensor("t", {2, 2}, {1, 2, 3, 4}).SerializeAsString());
  Result<Tensor> t = read_tensor_pb(dir.file("t.pb"));
  ASSERT_TRUE(t.is_ok()) << t.status().to_string();
  EXPECT_EQ(t->shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(t->data<float>()[3], 4.0f);
}

TEST(TensorPb, ReadsOnnxBackendTestData) {
  const std::string path = "/usr/share/libonnx-testdata/data/node/test_abs/test_data_set_0/input_0.pb";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "libonnx-testdata is not installed";
  Result<Tensor> t = read_tensor_pb(path);
  ASSERT_TRUE(t.is_ok()) << t.status().to_string();
  EXPECT_EQ(t->dtype(), DType::kFloat);
  EXPECT_EQ(t->shape(), (std::vector<int64_t>{3, 4, 5}));
}

TEST(TensorPb, RefusesBadFilesNamingThem) {
  ScratchDir dir("io");
  write_bytes(dir.file("garbage.pb"), std::string("\xff\xff\xff\xff\x0f garbage", 14));
  Result<Tensor> garbage = read_tensor_pb(dir.file("garbage.pb"));
  ASSERT_FALSE(garbage.is_ok());
  EXPECT_EQ(garbage.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(garbage.status().message().find("garbage.pb"), std::string::npos);

  write_bytes(dir.file("short.pb"), float_tensor("short", {3}, {1, 2}).SerializeAsString());
  Result<Tensor> short_data = read_tensor_pb(dir.file("short.pb"));
  ASSERT_FALSE(short_data.is_ok());
  EXPECT_EQ(short_data.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(short_data.status().message().find("short.pb"), std::string::npos);
  EXPECT_NE(short_data.status().message().find("tensor 'short'"), std::string::npos);

  Result<Tensor> missing = read_tensor_pb(dir.file("missing.pb"));
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

TEST(TensorIo, PicksTheFormatByExtension) {
  ScratchDir dir("io");
  write_bytes(dir.file("t.pb"), float_tensor("t", {1}, {5}).SerializeAsString());
  Tensor t = Tensor::from_vector(DType::kInt64, {2}, std::vector<int64_t>{3, 4});
  ASSERT_TRUE(write_npy_file(dir.file("t.npy"), t).is_ok());
  Result<Tensor> pb = read_tensor_file(dir.file("t.pb"));
  ASSERT_TRUE(pb.is_ok()) << pb.status().to_string();
  EXPECT_EQ(pb->data<float>()[0], 5.0f);
  Result<Tensor> npy = read_tensor_file(dir.file("t.npy"));
  ASSERT_TRUE(npy.is_ok()) << npy.status().to_string();
  EXPECT_EQ(npy->data<int64_t>()[1], 4);
  Result<Tensor> other = read_tensor_file(dir.file("t.txt"));
  EXPECT_EQ(other.status().code(), StatusCode::kInvalidArgument);
}

// Every value kind written as .pb reads back the same; bfloat16 goes through .npy as uint16 bits.
TEST(TensorIo, ValuesRoundTripThroughPbAndBfloat16ThroughNpy) {
  ScratchDir dir("io");
  Tensor text = Tensor::allocate(DType::kString, {2});
  text.data<std::string>()[0] = "a";
  text.data<std::string>()[1] = "bc";
  const Tensor int4 = Tensor::from_vector<int8_t>(DType::kInt4, {3}, {-8, 7, -1});  // packs into 2 bytes
  const Tensor floats = Tensor::from_vector<float>(DType::kFloat, {2}, {1.5f, -2});
  struct Case {
    const char* file;
    Value value;
  };
  const std::vector<Case> cases = {
      {"text.pb", text},
      {"int4.pb", int4},
      {"seq.pb", Value::sequence(DType::kFloat, {floats, floats})},
      {"empty_seq.pb", Value::sequence(DType::kFloat, {})},
      {"empty.pb", Value::empty_optional()},
      {"full.pb", Value::optional_of(floats)},
      {"seq_in_optional.pb", Value::optional_of(Value::sequence(DType::kFloat, {floats}))},
  };
  for (const Case& c : cases) {
    ASSERT_TRUE(write_value_file(dir.file(c.file), c.value).is_ok()) << c.file;
    const DType dtype = c.value.is_tensor() ? c.value.tensor().dtype() : DType::kFloat;
    Result<Value> back = read_value_file(dir.file(c.file), c.value.kind(), dtype);
    ASSERT_TRUE(back.is_ok()) << c.file << ": " << back.status().to_string();
    EXPECT_EQ(back->describe(), c.value.describe()) << c.file;
  }
  Result<Value> int4_back = read_value_file(dir.file("int4.pb"), Value::Kind::kTensor, DType::kInt4);
  ASSERT_TRUE(int4_back.is_ok());
  EXPECT_EQ(int4_back->tensor().data<int8_t>()[0], -8);
  EXPECT_EQ(int4_back->tensor().data<int8_t>()[2], -1);

  Tensor bfloat16 = Tensor::allocate(DType::kBFloat16, {2});
  bfloat16.data<BFloat16>()[0].bits = 0x3F80;
  bfloat16.data<BFloat16>()[1].bits = 0xC000;
  ASSERT_TRUE(write_value_file(dir.file("b.npy"), bfloat16).is_ok());
  Result<Tensor> bits = read_tensor_file(dir.file("b.npy"));
  ASSERT_TRUE(bits.is_ok());
  EXPECT_EQ(bits->dtype(), DType::kUInt16);
  Result<Value> as_bfloat16 = read_value_file(dir.file("b.npy"), Value::Kind::kTensor, DType::kBFloat16);
  ASSERT_TRUE(as_bfloat16.is_ok());
  EXPECT_EQ(as_bfloat16->tensor().dtype(), DType::kBFloat16);
  EXPECT_EQ(as_bfloat16->tensor().data<BFloat16>()[1].bits, 0xC000);
  Result<Value> as_read = read_value_file(dir.file("b.npy"), Value::Kind::kTensor, DType::kUInt16);
  EXPECT_EQ(as_read->tensor().dtype(), DType::kUInt16);

  EXPECT_EQ(write_value_file(dir.file("seq.npy"), cases[2].value).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(read_value_file(dir.file("b.npy"), Value::Kind::kSequence, DType::kFloat).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln::frontend
