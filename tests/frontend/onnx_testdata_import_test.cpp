// Imports every model of ONNX's backend test data (Debian libonnx-testdata): all must import, or be
// refused as UnsupportedOperator only for the reasons Kiln documents (non-tensor graph values).
#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/frontend/onnx/importer.h"

namespace kiln::frontend {
namespace {

constexpr const char* kDataRoot = "/usr/share/libonnx-testdata/data";

TEST(OnnxTestdataImport, EveryBackendModelImports) {
  if (!std::filesystem::exists(kDataRoot)) GTEST_SKIP() << "libonnx-testdata is not installed";
  int imported = 0, non_tensor = 0;
  for (const char* suite : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    for (const auto& entry : std::filesystem::directory_iterator(std::string(kDataRoot) + "/" + suite)) {
      const std::string path = entry.path().string() + "/model.onnx";
      if (!std::filesystem::exists(path)) continue;
      Result<ir::Model> model = import_onnx_file(path);
      if (model.is_ok()) {
        ++imported;
        EXPECT_EQ(model->sha256.size(), 64u);
        continue;
      }
      const std::string& message = model.status().message();
      const bool refused_non_tensor = model.status().code() == StatusCode::kUnsupportedOperator &&
                                      message.find("Kiln runs only tensor-typed") != std::string::npos;
      EXPECT_TRUE(refused_non_tensor) << path << ": " << model.status().to_string();
      non_tensor += refused_non_tensor;
    }
  }
  EXPECT_GT(imported, 1000);
  std::printf("imported %d models; %d refused for non-tensor graph inputs/outputs\n", imported, non_tensor);
}

}  // namespace
}  // namespace kiln::frontend
