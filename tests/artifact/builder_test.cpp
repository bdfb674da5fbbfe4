// Tests of Session::write_artifact and the artifact builder: the same model and options compiled
// in two folders give byte-identical files; the manifest records lineage without paths or times;
// the plan and weights sections hold the optimised graph and its weights, 64-byte aligned; assets
// are stored one section each, hashed in the manifest, and read back by the loaded session; string
// weights and fixtures are stored (lengths, then UTF-8 bytes) and read back, and a string entry
// whose lengths do not add up is an integrity failure.
#include "kiln/artifact/builder.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "kiln/artifact/container.h"
#include "kiln/artifact/tensor_section.h"
#include "kiln/io/file.h"
#include "kiln/session.h"
#include "support/model_builder.h"

namespace kiln {
namespace {

using testing::ModelBuilder;
using testing::ScratchDir;

// y[N,4] = Relu(x[N,4] + bias)
std::string model_in(const std::string& folder) {
  std::filesystem::create_directories(folder);
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {std::string("N"), int64_t{4}});
  b.output("y", onnx::TensorProto::FLOAT, {std::string("N"), int64_t{4}});
  b.float_initializer("bias", {4}, {0.5f, -1.0f, 2.0f, 0.25f});
  b.node("Add", {"x", "bias"}, {"s"}, "add_bias");
  b.node("Relu", {"s"}, {"y"}, "relu");
  return b.save(folder + "/model.onnx");
}

std::string compiled(const std::string& model, const std::string& out) {
  auto session = Session::load(model);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  if (!session.is_ok()) return "";
  const Status written = session.value()->write_artifact(out);
  EXPECT_TRUE(written.is_ok()) << written.to_string();
  auto bytes = io::read_file(out);
  return bytes.is_ok() ? bytes.value() : "";
}

TEST(ArtifactBuilder, SameModelAndOptionsGiveByteIdenticalFiles) {
  ScratchDir dir("artifact");
  const std::string a = compiled(model_in(dir.file("one")), dir.file("one/model.kiln"));
  const std::string b = compiled(model_in(dir.file("two/deeper")), dir.file("two/other.kiln"));
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a, b);
}

TEST(ArtifactBuilder, ManifestRecordsLineageAndWeightsWithoutPathsOrTimes) {
  ScratchDir dir("artifact");
  const std::string model = model_in(dir.file("m"));
  const std::string file = compiled(model, dir.file("m/model.kiln"));
  auto decoded = artifact::decode(file);
  ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
  const nlohmann::json& m = decoded.value().manifest;
  auto source = io::read_file(model);
  ASSERT_TRUE(source.is_ok());
  EXPECT_EQ(m["source_sha256"], io::sha256_hex(source.value()).value());
  EXPECT_EQ(m["model"]["name"], "model.onnx");
  EXPECT_FALSE(m["model"].contains("path"));
  EXPECT_EQ(m.dump().find(dir.file("")), std::string::npos) << "a path leaked into the manifest";
  EXPECT_FALSE(m.contains("stages"));
  for (const auto& pass : m["passes"]) EXPECT_FALSE(pass.contains("ms"));
  EXPECT_TRUE(m["toolchain"].contains("onednn"));
  EXPECT_EQ(m["execution"]["mode"], "aot");
  EXPECT_EQ(m["execution"]["input_shapes"]["x"], nlohmann::json::array({1, 4})) << "symbolic N planned as 1";
  EXPECT_EQ(m["execution"]["threads"], 0);
  ASSERT_EQ(m["weights"].size(), 1u);
  EXPECT_EQ(m["weights"][0]["name"], "bias");
  EXPECT_EQ(m["weights"][0]["offset"].get<size_t>() % artifact::kSectionAlignment, 0u);
  ASSERT_EQ(decoded.value().sections.size(), 5u) << "plan, weights, packed weights, warm-up inputs and outputs";
  EXPECT_EQ(decoded.value().sections[0].name, "plan");
  ASSERT_EQ(decoded.value().sections[1].name, "weights");
  const std::string weights(decoded.value().sections[1].bytes);
  const float expected[4] = {0.5f, -1.0f, 2.0f, 0.25f};
  EXPECT_EQ(weights.substr(0, 16), std::string(reinterpret_cast<const char*>(expected), 16));
}

ArtifactOptions with_assets(std::map<std::string, std::string> paths) {
  ArtifactOptions options;
  options.asset_paths = std::move(paths);
  return options;
}

TEST(ArtifactBuilder, AnArtifactsThreadCountIsTheDefaultOfItsLoads) {
  ScratchDir dir("artifact");
  SessionOptions one_thread;
  one_thread.threads = 1;
  auto session = Session::load(model_in(dir.file("m")), one_thread);
  ASSERT_TRUE(session.is_ok());
  ASSERT_TRUE(session.value()->write_artifact(dir.file("m/model.kiln")).is_ok());
  auto loaded = Session::load(dir.file("m/model.kiln"));
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  EXPECT_EQ(nlohmann::json::parse(loaded.value()->report_json())["options"]["threads"], "1");
  SessionOptions two_threads;
  two_threads.threads = 2;
  auto overridden = Session::load(dir.file("m/model.kiln"), two_threads);
  EXPECT_EQ(nlohmann::json::parse(overridden.value()->report_json())["options"]["threads"], "2");
}

TEST(ArtifactBuilder, AssetsAreSectionsListedWithTheirHashesAndLoadBack) {
  ScratchDir dir("artifact");
  const std::string model = model_in(dir.file("m"));
  ASSERT_TRUE(io::write_file_atomic(dir.file("m/labels.txt"), "cat\ndog\n").is_ok());
  auto session = Session::load(model);
  ASSERT_TRUE(session.is_ok());
  ASSERT_TRUE(session.value()->write_artifact(dir.file("m/model.kiln"), with_assets({{"labels.txt", dir.file("m/labels.txt")}})).is_ok());
  const std::string file = io::read_file(dir.file("m/model.kiln")).value();
  auto decoded = artifact::decode(file);
  ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
  const nlohmann::json& assets = decoded.value().manifest["assets"];
  ASSERT_EQ(assets.size(), 1u);
  EXPECT_EQ(assets[0]["name"], "labels.txt");
  EXPECT_EQ(assets[0]["sha256"], io::sha256_hex("cat\ndog\n").value());
  EXPECT_EQ(decoded.value().sections.back().name, "asset:labels.txt");
  EXPECT_EQ(decoded.value().sections.back().bytes, "cat\ndog\n");

  auto loaded = Session::load(dir.file("m/model.kiln"));
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  EXPECT_EQ(loaded.value()->asset("labels.txt").value(), "cat\ndog\n");
  const Status unknown = loaded.value()->asset("vocab.txt").status();
  EXPECT_EQ(unknown.code(), StatusCode::kNotFound);
  EXPECT_NE(unknown.message().find("labels.txt"), std::string::npos) << unknown.message();
}

TEST(ArtifactBuilder, MissingAssetFilesAndBadAssetNamesAreRefused) {
  ScratchDir dir("artifact");
  auto session = Session::load(model_in(dir.file("m")));
  ASSERT_TRUE(session.is_ok());
  const Status missing = session.value()->write_artifact(dir.file("m/model.kiln"), with_assets({{"vocab", dir.file("m/nope.txt")}}));
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
  EXPECT_NE(missing.message().find("asset 'vocab'"), std::string::npos) << missing.message();
  EXPECT_NE(missing.message().find("nope.txt"), std::string::npos) << missing.message();
  EXPECT_FALSE(std::filesystem::exists(dir.file("m/model.kiln"))) << "a failed build left a file";
  ASSERT_TRUE(io::write_file_atomic(dir.file("m/a.txt"), "a").is_ok());
  for (const std::string& bad : std::vector<std::string>{"", "../etc", "a b", std::string(129, 'x')})
    EXPECT_EQ(session.value()->write_artifact(dir.file("m/model.kiln"), with_assets({{bad, dir.file("m/a.txt")}})).code(),
              StatusCode::kInvalidArgument) << bad;
}

// z[2] = StringConcat(x[2], suffix): a string input, a string weight (opset 20).
std::string string_model(const std::string& folder) {
  std::filesystem::create_directories(folder);
  ModelBuilder b(20);
  b.input("x", onnx::TensorProto::STRING, {int64_t{2}});
  b.output("z", onnx::TensorProto::STRING, {int64_t{2}});
  onnx::TensorProto* suffix = b.graph().add_initializer();
  suffix->set_name("suffix");
  suffix->set_data_type(onnx::TensorProto::STRING);
  suffix->add_dims(2);
  suffix->add_string_data("-\xc3\xa9");
  suffix->add_string_data("");
  b.node("StringConcat", {"x", "suffix"}, {"z"}, "concat");
  return b.save(folder + "/model.onnx");
}

Tensor strings(const std::vector<std::string>& v) {
  return Tensor::from_vector<std::string>(DType::kString, {static_cast<int64_t>(v.size())}, v);
}

TEST(ArtifactBuilder, StringWeightsAndFixturesRoundTrip) {
  ScratchDir dir("artifact_builder");
  auto session = Session::load(string_model(dir.file("m")));
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  ArtifactOptions options;
  options.warmup_inputs = {{"x", strings({"a", "\xe6\x97\xa5"})}};
  ASSERT_TRUE(session.value()->write_artifact(dir.file("m/model.kiln"), options).is_ok());
  auto loaded = Session::load(dir.file("m/model.kiln"));
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  ASSERT_TRUE(loaded.value()->warm_up().is_ok());  // the recorded string outputs are reproduced
  auto out = loaded.value()->run({{"x", strings({"b", "c"})}});
  ASSERT_TRUE(out.is_ok()) << out.status().to_string();
  const Tensor& z = out.value().at("z");
  EXPECT_EQ(std::vector<std::string>(z.data<std::string>(), z.data<std::string>() + 2),
            (std::vector<std::string>{"b-\xc3\xa9", "c"}));

  // Lengths that claim more bytes than the entry holds.
  const Tensor two = strings({"ab", "c"});
  auto section = artifact::encode_tensors({{"t", &two}});
  ASSERT_TRUE(section.is_ok());
  const nlohmann::json index = nlohmann::json::parse(section.value().index.dump());  // as a manifest holds it
  std::string bytes = section.value().bytes;
  bytes[0] = 9;  // "ab" is now 9 bytes long
  auto bad = artifact::decode_tensors(bytes, nullptr, index, "weights");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kIntegrityFailure);
  EXPECT_NE(bad.status().message().find("entry 't' has string lengths"), std::string::npos) << bad.status().message();
  auto good = artifact::decode_tensors(section.value().bytes, nullptr, index, "weights");
  ASSERT_TRUE(good.is_ok()) << good.status().to_string();
  EXPECT_EQ(good.value()[0].second.data<std::string>()[0], "ab");
}

}  // namespace
}  // namespace kiln
