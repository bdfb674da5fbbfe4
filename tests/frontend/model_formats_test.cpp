// The format table: a file's row is chosen by its first bytes, not its name; ONNX (no magic) takes
// what no other row claims; a missing file is NotFound and bytes no importer reads are refused by
// the row that took them.
#include "kiln/frontend/model_formats.h"

#include <gtest/gtest.h>

#include <set>

#include "frontend/onnx_model_builder.h"

namespace kiln::frontend {
namespace {

using namespace kiln::frontend::testing;

TEST(ModelFormats, EachFormatIsOneNamedRowAndOnnxIsTheLast) {
  std::set<std::string_view> names;
  for (const ModelFormat& format : model_formats()) {
    EXPECT_TRUE(names.insert(format.name).second) << format.name;
    EXPECT_NE(format.recognises, nullptr);
    EXPECT_NE(format.import_file, nullptr);
    EXPECT_NE(format.import_bytes, nullptr);
  }
  EXPECT_EQ(model_formats().back().name, "onnx");
  EXPECT_EQ(format_of("").name, "onnx");
}

TEST(ModelFormats, AModelImportsByItsBytesWhateverItsFileIsCalled) {
  ScratchDir dir("frontend");
  const std::string bytes = relu_model().SerializeAsString();
  write_bytes(dir.file("weights.bin"), bytes);  // an ONNX model under a name that says nothing
  EXPECT_EQ(format_of(bytes).name, "onnx");
  Result<ir::Model> from_file = import_model_file(dir.file("weights.bin"));
  ASSERT_TRUE(from_file.is_ok()) << from_file.status().to_string();
  Result<ir::Model> from_bytes = import_model_bytes(bytes, dir.path().string());
  ASSERT_TRUE(from_bytes.is_ok()) << from_bytes.status().to_string();
  EXPECT_EQ(from_file.value().sha256, from_bytes.value().sha256);
  EXPECT_EQ(from_file.value().graph->nodes().size(), from_bytes.value().graph->nodes().size());
}

TEST(ModelFormats, AMissingFileIsNotFoundAndUnreadableBytesAreAnInvalidModel) {
  ScratchDir dir("frontend");
  Result<ir::Model> missing = import_model_file(dir.file("absent.gguf"));
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("absent.gguf"), std::string::npos) << missing.status().to_string();
  write_bytes(dir.file("empty.onnx"), "");
  write_bytes(dir.file("text.onnx"), "this is not a model at all");
  for (const char* name : {"empty.onnx", "text.onnx"}) {
    Result<ir::Model> r = import_model_file(dir.file(name));
    ASSERT_FALSE(r.is_ok()) << name;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidModel) << r.status().to_string();
  }
}

}  // namespace
}  // namespace kiln::frontend
