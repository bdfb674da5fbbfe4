// Imports every model of ONNX's backend test data (Debian libonnx-testdata): all must import.
#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/frontend/onnx/importer.h"

namespace kiln::frontend {
namespace {

constexpr const char* kDataRoot = "/usr/share/libonnx-testdata/data";

TEST(OnnxTestdataImport, EveryBackendModelImports) {
  if (!std::filesystem::exists(kDataRoot)) GTEST_SKIP() << "libonnx-testdata is not installed";
  int imported = 0;
  for (const char* suite : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    for (const auto& entry : std::filesystem::directory_iterator(std::string(kDataRoot) + "/" + suite)) {
      const std::string path = entry.path().string() + "/model.onnx";
      if (!std::filesystem::exists(path)) continue;
      Result<ir::Model> model = import_onnx_file(path);
      EXPECT_TRUE(model.is_ok()) << path << ": " << model.status().to_string();
      if (!model.is_ok()) continue;
      ++imported;
      EXPECT_EQ(model->sha256.size(), 64u);
    }
  }
  EXPECT_EQ(imported, 1072);
}

}  // namespace
}  // namespace kiln::frontend
