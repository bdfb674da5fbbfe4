// .pb (TensorProto) files: ONNX's test data, files written here, and refusals naming the file.
#include "kiln/io/tensor_pb.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "frontend/onnx_model_builder.h"
#include "kiln/tensor_io.h"

namespace kiln::io {
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

}  // namespace
}  // namespace kiln::io
