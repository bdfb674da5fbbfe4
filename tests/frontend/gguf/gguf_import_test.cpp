// The GGUF import maps the file and never copies a block-quantized weight: each one's constant is a
// view of its bytes in the mapping, which it keeps alive, while the float weights are float32
// copies of their own; a session's report counts the mapped bytes (memory.mapped_bytes). On
// tests/llm/make_models.py's llama-q4_0 and llama-f32 in $KILN_LLM_DIR/models (skipped, naming
// them, where they are missing): a float package keeps no mapping. Imported from bytes, the
// weights view a copy that the model holds.
#include "kiln/frontend/gguf/gguf_import.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "kiln/io/file.h"
#include "kiln/session.h"
#include "support/test_target.h"

namespace kiln::frontend::gguf {
namespace {

std::filesystem::path test_model(const std::string& name) {
  const char* dir = std::getenv("KILN_LLM_DIR");
  const char* home = std::getenv("HOME");
  return (dir ? std::filesystem::path(dir) : std::filesystem::path(home ? home : "") / ".cache" / "kiln" / "llm") / "models" /
         (name + ".gguf");
}

std::filesystem::path quantized_model() { return test_model("llama-q4_0"); }

bool is_block_constant(const ir::Value& v) { return v.name.size() > 7 && v.name.compare(v.name.size() - 7, 7, ".blocks") == 0; }

// Whether `t`'s bytes lie inside `bytes`.
bool lies_in(const Tensor& t, std::string_view bytes) {
  const auto begin = reinterpret_cast<uintptr_t>(bytes.data()), data = reinterpret_cast<uintptr_t>(t.raw_data());
  return data >= begin && data - begin <= bytes.size() && t.byte_size() <= bytes.size() - (data - begin);
}

TEST(GgufImport, BlockQuantizedWeightsAreViewsOfTheMappedFile) {
  const std::filesystem::path path = quantized_model();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path << " (tests/llm/llm.sh writes it)";
  Result<std::string> file = io::read_file(path.string());
  ASSERT_TRUE(file.is_ok());
  std::vector<Tensor> weights;
  std::string_view mapped;
  {
    Result<ir::Model> model = import_gguf_file(path.string());
    ASSERT_TRUE(model.is_ok()) << model.status().to_string();
    mapped = model->mapped_file;
    ASSERT_EQ(mapped.size(), file->size());
    int64_t block_bytes = 0;
    for (const auto& v : model->graph->values()) {
      if (!v->is_constant()) continue;
      const Tensor& t = *v->initializer;
      EXPECT_EQ(lies_in(t, mapped), is_block_constant(*v)) << v->name << ": the block-quantized weights, and only they, are mapped";
      if (!is_block_constant(*v)) continue;
      block_bytes += static_cast<int64_t>(t.byte_size());
      weights.push_back(t);
    }
    EXPECT_FALSE(weights.empty());
    EXPECT_EQ(ir::parameter_stats(*model->graph, mapped).mapped_bytes, block_bytes);
  }
  // The weights keep the mapping alive without the model, and hold the file's bytes.
  for (const Tensor& t : weights) {
    const size_t offset = static_cast<size_t>(static_cast<const char*>(t.raw_data()) - mapped.data());
    ASSERT_EQ(std::string_view(static_cast<const char*>(t.raw_data()), t.byte_size()), std::string_view(*file).substr(offset, t.byte_size()));
  }
}

TEST(GgufImport, ImportedFromBytesTheWeightsViewACopyAndNothingIsMapped) {
  const std::filesystem::path path = quantized_model();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path << " (tests/llm/llm.sh writes it)";
  Result<std::string> file = io::read_file(path.string());
  ASSERT_TRUE(file.is_ok());
  Result<ir::Model> model = import_gguf_bytes(*file, ".");
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  EXPECT_TRUE(model->mapped_file.empty());
  EXPECT_EQ(ir::parameter_stats(*model->graph, model->mapped_file).mapped_bytes, 0);
  file->assign(file->size(), '\0');  // the caller's bytes may go: the model holds its own
  for (const auto& v : model->graph->values()) {
    if (!v->is_constant() || !is_block_constant(*v)) continue;
    EXPECT_FALSE(lies_in(*v->initializer, *file)) << v->name;
  }
}

TEST(GgufImport, AFloatPackageKeepsNoMapping) {
  const std::filesystem::path path = test_model("llama-f32");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path << " (tests/llm/llm.sh writes it)";
  Result<ir::Model> model = import_gguf_file(path.string());
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  EXPECT_FALSE(model->mapping) << "its weights are float32 copies: nothing views the file";
  EXPECT_TRUE(model->mapped_file.empty());
}

TEST(GgufImport, TheSessionReportCountsTheMappedWeights) {
  const std::filesystem::path path = quantized_model();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path << " (tests/llm/llm.sh writes it)";
  SessionOptions options;
  options.threads = 2;
  options.isa = testing::test_isa();
  Result<std::unique_ptr<Session>> session = Session::load(path.string(), options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const nlohmann::json report = nlohmann::json::parse((*session)->report_json());
  Result<ir::Model> model = import_gguf_file(path.string());
  ASSERT_TRUE(model.is_ok());
  const ir::ParameterStats stats = ir::parameter_stats(*model->graph, model->mapped_file);
  EXPECT_GT(stats.mapped_bytes, 0);
  EXPECT_EQ(report["memory"]["mapped_bytes"].get<int64_t>(), stats.mapped_bytes);
}

}  // namespace
}  // namespace kiln::frontend::gguf
