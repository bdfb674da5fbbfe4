// Tests of generated kernels compiled ahead into artifacts: a graph session with generate_kernels
// writes its generated object into the artifact (section "code", manifest generated_code, its CPU
// features in the target), the artifact loads and runs with no compiler on the machine and gives
// the library kernels' results, and compiling twice gives the same bytes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "kiln/artifact/container.h"
#include "kiln/providers/cpu/codegen/host_compiler.h"
#include "kiln/io/file.h"
#include "kiln/target/target.h"
#include "kiln/session.h"
#include "support/model_builder.h"
#include "support/scoped_env.h"

namespace kiln {
namespace {

using testing::ModelBuilder;
using testing::ScopedEnv;
using testing::ScratchDir;


std::vector<float> wave(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = scale * static_cast<float>(static_cast<int>((i * 5) % 11) - 5);
  return v;
}

// x[2,8,16] -> LayerNormalization(scale, bias) -> Mul(gain) -> Sigmoid -> Mul(x): one generated
// LayerNormalization and one generated element-wise chain.
std::string normalized_model(const ScratchDir& dir) {
  ModelBuilder b(17);
  constexpr int kFloat = onnx::TensorProto::FLOAT;
  b.input("x", kFloat, {int64_t{2}, int64_t{8}, int64_t{16}});
  b.output("y", kFloat, {int64_t{2}, int64_t{8}, int64_t{16}});
  b.float_initializer("scale", {16}, wave(16, 0.2f));
  b.float_initializer("bias", {16}, wave(16, 0.05f));
  b.float_initializer("gain", {16}, wave(16, 0.3f));
  b.node("LayerNormalization", {"x", "scale", "bias"}, {"n"}, "norm");
  b.node("Mul", {"n", "gain"}, {"g"}, "gain");
  b.node("Sigmoid", {"g"}, {"s"}, "sigmoid");
  b.node("Mul", {"s", "x"}, {"y"}, "gate");
  return b.save(dir.file("model.onnx"));
}

Tensor input() { return Tensor::from_vector<float>(DType::kFloat, {2, 8, 16}, wave(256, 0.1f)); }

// Compiles `model` ahead with generated kernels into `out`.
void compile_with_generated_kernels(const std::string& model, const std::string& out) {
  SessionOptions options;
  options.generate_kernels = true;
  auto session = Session::load(model, options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const Status written = session.value()->write_artifact(out);
  ASSERT_TRUE(written.is_ok()) << written.to_string();
}

nlohmann::json manifest_of(const std::string& path) {
  const Result<std::string> bytes = io::read_file(path);
  EXPECT_TRUE(bytes.is_ok());
  const Result<artifact::Decoded> decoded = artifact::decode(bytes.value());
  EXPECT_TRUE(decoded.is_ok()) << decoded.status().to_string();
  return decoded.is_ok() ? decoded.value().manifest : nlohmann::json();
}

TEST(GeneratedCode, AnArtifactCarriesItsGeneratedKernelsAndRunsWithoutACompiler) {
  ScratchDir dir("generated_code");
  ScopedEnv cache("KILN_CACHE_DIR", dir.file("cache"));
  const std::string model = normalized_model(dir), compiled = dir.file("model.kiln");
  compile_with_generated_kernels(model, compiled);
  const nlohmann::json manifest = manifest_of(compiled);
  ASSERT_TRUE(manifest["generated_code"].is_object()) << manifest.dump(2);
  EXPECT_GT(manifest["generated_code"]["bytes"].get<int64_t>(), 0);
  const std::vector<std::string> needed = codegen::HostCompiler::used_features(target::host_target().features);
  for (const std::string& feature : needed) {
    const auto& required = manifest["target"]["required_features"];
    EXPECT_NE(std::find(required.begin(), required.end(), feature), required.end()) << feature;
  }

  auto library = Session::load(model, SessionOptions{});
  ASSERT_TRUE(library.is_ok());
  const Tensor want = library.value()->run({{"x", input()}}).value().at("y");

  ScopedEnv no_compiler("KILN_CXX", "/nonexistent/c++");
  auto loaded = Session::load(compiled, SessionOptions{});
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  auto out = loaded.value()->run({{"x", input()}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  const Tensor& got = out.value().at("y");
  ASSERT_EQ(got.shape(), want.shape());
  for (int64_t i = 0; i < want.element_count(); ++i) EXPECT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-5) << i;
  const nlohmann::json generated = nlohmann::json::parse(loaded.value()->report_json())["execution"]["generated"];
  ASSERT_TRUE(generated.is_object());
  EXPECT_EQ(generated["artifact_objects"], 1);
  EXPECT_EQ(generated["kernels"], 2);
  EXPECT_EQ(generated["object_cache_misses"], 0);
}

TEST(GeneratedCode, CompilingTwiceGivesTheSameBytes) {
  ScratchDir dir("generated_code");
  const std::string model = normalized_model(dir);
  for (const char* run : {"a", "b"}) {
    ScopedEnv cache("KILN_CACHE_DIR", dir.file(std::string("cache_") + run));  // each compiles its own object
    compile_with_generated_kernels(model, dir.file(std::string(run) + ".kiln"));
  }
  EXPECT_EQ(io::read_file(dir.file("a.kiln")).value(), io::read_file(dir.file("b.kiln")).value());
}

TEST(GeneratedCode, WithoutGeneratedKernelsTheArtifactHoldsNoCode) {
  ScratchDir dir("generated_code");
  const std::string model = normalized_model(dir);
  auto session = Session::load(model, SessionOptions{});
  ASSERT_TRUE(session.is_ok());
  ASSERT_TRUE(session.value()->write_artifact(dir.file("plain.kiln")).is_ok());
  EXPECT_TRUE(manifest_of(dir.file("plain.kiln"))["generated_code"].is_null());
}

TEST(GeneratedCode, GeneratingKernelsWithoutACompilerIsRefused) {
  ScratchDir dir("generated_code");
  ScopedEnv no_compiler("KILN_CXX", "/nonexistent/c++");
  SessionOptions options;
  options.generate_kernels = true;
  auto session = Session::load(normalized_model(dir), options);
  ASSERT_FALSE(session.is_ok());
  EXPECT_EQ(session.status().code(), StatusCode::kUnsupportedTarget);
}

}  // namespace
}  // namespace kiln
