// Tests of warm-up: a loaded session becomes ready only after its warm-up; an artifact's recorded
// fixtures are run and their outputs checked, and an artifact whose recorded outputs this machine
// does not reproduce is refused (even when every hash in it is valid); warm-up runs are not
// requests in the report; fixtures are generated for ONNX models and given ones are used as they are.
#include "kiln/runtime/warmup.h"

#include <gtest/gtest.h>

#include "kiln/artifact/builder.h"
#include "kiln/artifact/container.h"
#include "kiln/io/file.h"
#include "kiln/session.h"
#include "support/model_builder.h"

namespace kiln {
namespace {

using testing::ModelBuilder;
using testing::ScratchDir;
constexpr int kFloat = onnx::TensorProto::FLOAT;

// y[2,3] = Tanh(x[2,4] x W[4,3])
std::string matmul_model(const ScratchDir& dir) {
  ModelBuilder b;
  b.input("x", kFloat, {int64_t{2}, int64_t{4}});
  b.output("y", kFloat, {int64_t{2}, int64_t{3}});
  b.float_initializer("w", {4, 3}, {0.1f, -0.2f, 0.3f, 0.4f, 0.5f, 0.6f, -0.7f, 0.8f, 0.9f, 1.0f, 1.1f, -1.2f});
  b.node("MatMul", {"x", "w"}, {"m"}, "matmul");
  b.node("Tanh", {"m"}, {"y"}, "tanh");
  return b.save(dir.file("matmul.onnx"));
}

std::string compiled_artifact(const ScratchDir& dir) {
  auto session = Session::load(matmul_model(dir));
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  EXPECT_TRUE(session.value()->write_artifact(dir.file("matmul.kiln")).is_ok());
  return dir.file("matmul.kiln");
}

nlohmann::json report_of(const Session& session) { return nlohmann::json::parse(session.report_json()); }

TEST(Warmup, AnArtifactIsReadyOnlyAfterItsRecordedFixturesReproduce) {
  ScratchDir dir("warmup");
  auto session = Session::load(compiled_artifact(dir));
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  EXPECT_EQ(session.value()->state(), SessionState::kLoaded);
  EXPECT_EQ(report_of(*session.value())["warmup"]["state"], "loaded");
  ASSERT_TRUE(session.value()->warm_up({}, 3).is_ok());
  EXPECT_EQ(session.value()->state(), SessionState::kReady);
  const nlohmann::json report = report_of(*session.value());
  EXPECT_EQ(report["warmup"]["state"], "ready");
  EXPECT_EQ(report["warmup"]["fixtures"], "artifact");
  EXPECT_EQ(report["warmup"]["runs"], 3);
  EXPECT_TRUE(report["warmup"]["checked"]);
  EXPECT_EQ(report["warmup"]["max_relative_error"], 0.0) << "same machine, same kernels: bit-identical";
  EXPECT_EQ(report["run"]["runs"], 0) << "warm-up runs are not requests";
  ASSERT_TRUE(session.value()->run({{"x", random_tensor(DType::kFloat, {2, 4}, 9)}}).is_ok());
  EXPECT_EQ(report_of(*session.value())["run"]["runs"], 1);
}

// The artifact with its recorded outputs replaced by `outputs`, every hash recomputed: what a
// faulty build or a different machine's kernels would look like.
std::string with_recorded_outputs(const std::string& file, const Tensor& y) {
  artifact::Decoded d = artifact::decode(file).value();
  nlohmann::json manifest = d.manifest;
  manifest.erase("format_version");
  manifest.erase("sections");
  std::vector<artifact::Section> sections;
  for (const artifact::SectionView& s : d.sections) {
    std::string bytes(s.bytes);
    if (s.name == artifact::warmup_section_name("outputs")) bytes.replace(0, y.byte_size(), static_cast<const char*>(y.raw_data()), y.byte_size());
    sections.push_back({s.name, bytes});
  }
  return artifact::encode(manifest, sections).value();
}

TEST(Warmup, RecordedOutputsThisMachineDoesNotReproduceAreAnIntegrityFailure) {
  ScratchDir dir("warmup");
  const std::string file = io::read_file(compiled_artifact(dir)).value();
  Tensor wrong = Tensor::allocate(DType::kFloat, {2, 3});
  for (int i = 0; i < 6; ++i) wrong.data<float>()[i] = 0.5f;
  ASSERT_TRUE(io::write_file_atomic(dir.file("wrong.kiln"), with_recorded_outputs(file, wrong)).is_ok());
  auto session = Session::load(dir.file("wrong.kiln"));
  ASSERT_TRUE(session.is_ok()) << "the file itself is intact: " << session.status().to_string();
  const Status refused = session.value()->warm_up();
  EXPECT_EQ(refused.code(), StatusCode::kIntegrityFailure);
  EXPECT_NE(refused.message().find("output 'y'"), std::string::npos) << refused.message();
  EXPECT_EQ(session.value()->state(), SessionState::kLoaded);
}

TEST(Warmup, OnnxModelsWarmUpOnGeneratedOrGivenFixtures) {
  ScratchDir dir("warmup");
  auto generated = Session::load(matmul_model(dir));
  ASSERT_TRUE(generated.is_ok());
  ASSERT_TRUE(generated.value()->warm_up().is_ok());
  EXPECT_EQ(report_of(*generated.value())["warmup"]["fixtures"], "generated");
  EXPECT_FALSE(report_of(*generated.value())["warmup"]["checked"]);
  auto given = Session::load(matmul_model(dir));
  ASSERT_TRUE(given.value()->warm_up({{"x", random_tensor(DType::kFloat, {2, 4}, 4)}}).is_ok());
  EXPECT_EQ(report_of(*given.value())["warmup"]["fixtures"], "given");
  const Status bad = given.value()->warm_up({{"x", random_tensor(DType::kFloat, {3, 4}, 4)}});
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument) << bad.to_string();
  EXPECT_EQ(given.value()->warm_up({}, 0).code(), StatusCode::kInvalidArgument);
}

TEST(Warmup, FixtureChecksNameTheOutputThatDiffers) {
  const Tensor y = random_tensor(DType::kFloat, {4}, 1);
  Tensor near = random_tensor(DType::kFloat, {4}, 1), far = random_tensor(DType::kFloat, {4}, 1);
  near.data<float>()[2] += 1e-6f;
  far.data<float>()[2] += 0.1f;
  EXPECT_TRUE(runtime::check_fixture_outputs({{"y", y}}, {{"y", near}}).is_ok());
  const Status differs = runtime::check_fixture_outputs({{"y", y}}, {{"y", far}}).status();
  EXPECT_EQ(differs.code(), StatusCode::kIntegrityFailure);
  EXPECT_NE(differs.message().find("'y'"), std::string::npos);
  EXPECT_EQ(runtime::check_fixture_outputs({{"y", y}}, {}).status().code(), StatusCode::kIntegrityFailure);
}

}  // namespace
}  // namespace kiln
