// Tests of loading .kiln artifacts through Session::load: the outputs of the ONNX path exactly,
// the caller's signature policy enforced, every flipped byte and truncation of a signed artifact
// refused before anything runs, the CPU features of the chosen kernels required of the target,
// weights bound in the kernels' layouts, and control-flow bodies stored and run.
#include "kiln/artifact/loader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <new>

#include <nlohmann/json.hpp>

#include "kiln/artifact/container.h"
#include "kiln/artifact/signing.h"
#include "kiln/io/file.h"
#include "kiln/target/target.h"
#include "kiln/session.h"
#include "support/model_builder.h"

namespace kiln {
namespace {

using testing::ModelBuilder;
using testing::ScratchDir;
constexpr int kFloat = onnx::TensorProto::FLOAT;

// y = Relu(Gemm(x[N,4], W[3,4]^T, b[3])) with its attributes (transB, alpha)
std::string gemm_model(const ScratchDir& dir) {
  ModelBuilder b;
  b.input("x", kFloat, {std::string("N"), int64_t{4}});
  b.output("y", kFloat, {std::string("N"), int64_t{3}});
  b.float_initializer("w", {3, 4}, {0.1f, -0.2f, 0.3f, 0.4f, 0.5f, 0.6f, -0.7f, 0.8f, 0.9f, 1.0f, 1.1f, -1.2f});
  b.float_initializer("b", {3}, {0.5f, -0.5f, 0.25f});
  onnx::NodeProto& gemm = b.node("Gemm", {"x", "w", "b"}, {"g"}, "gemm");
  auto* trans = gemm.add_attribute();
  trans->set_name("transB");
  trans->set_type(onnx::AttributeProto::INT);
  trans->set_i(1);
  b.node("Relu", {"g"}, {"y"}, "relu");
  return b.save(dir.file("gemm.onnx"));
}

// The Gemm model's artifact, with an asset, so that every kind of section is there.
std::string written_artifact(const ScratchDir& dir) {
  auto session = Session::load(gemm_model(dir));
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  EXPECT_TRUE(io::write_file_atomic(dir.file("labels.txt"), "zero\none\ntwo\n").is_ok());
  ArtifactOptions options;
  options.asset_paths = {{"labels", dir.file("labels.txt")}};
  EXPECT_TRUE(session.value()->write_artifact(dir.file("gemm.kiln"), options).is_ok());
  return dir.file("gemm.kiln");
}

TEST(ArtifactLoading, RunsTheOnnxPathsKernelsToTheBit) {
  ScratchDir dir("loader");
  const std::string artifact = written_artifact(dir);
  auto onnx_session = Session::load(gemm_model(dir));
  auto artifact_session = Session::load(artifact);
  ASSERT_TRUE(artifact_session.is_ok()) << artifact_session.status().to_string();
  const Tensor x = random_tensor(DType::kFloat, {5, 4}, 3);
  auto want = onnx_session.value()->run({{"x", x}});
  auto got = artifact_session.value()->run({{"x", x}});
  ASSERT_TRUE(want.is_ok() && got.is_ok()) << got.status().to_string();
  const Tensor& a = want.value().at("y");
  const Tensor& b = got.value().at("y");
  ASSERT_EQ(a.shape(), b.shape());
  for (int64_t i = 0; i < a.element_count(); ++i) EXPECT_EQ(a.data<float>()[i], b.data<float>()[i]) << i;
  const auto report = nlohmann::json::parse(artifact_session.value()->report_json());
  EXPECT_TRUE(report["passes"].empty()) << "passes ran again on an optimised graph";
}

// An artifact compiled for given shapes of a symbolic model (not specialised) is planned at load for
// those shapes, the ones its weights were packed for, not for the symbolic dims guessed as 1.
TEST(ArtifactLoading, ItIsPlannedAtLoadForTheShapesItWasCompiledFor) {
  ScratchDir dir("loader");
  SessionOptions compile;
  compile.input_shapes = {{"x", {6, 4}}};
  auto session = Session::load(gemm_model(dir), compile);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  ASSERT_TRUE(session.value()->write_artifact(dir.file("six.kiln")).is_ok());
  auto loaded = Session::load(dir.file("six.kiln"));
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  const nlohmann::json report = nlohmann::json::parse(loaded.value()->report_json());
  EXPECT_EQ(report["memory"]["input_shapes"], nlohmann::json::parse("[[6, 4]]")) << report["memory"];
  EXPECT_TRUE(loaded.value()->run({{"x", random_tensor(DType::kFloat, {6, 4}, 1)}}).is_ok());
}

TEST(ArtifactLoading, TheSignaturePolicyIsEnforced) {
  ScratchDir dir("loader");
  const std::string artifact = written_artifact(dir);
  const artifact::KeyPair mine = artifact::generate_key_pair().value(), theirs = artifact::generate_key_pair().value();
  SessionOptions required;
  required.require_signature = true;
  EXPECT_EQ(Session::load(artifact, required).status().code(), StatusCode::kIntegrityFailure);
  auto signed_file = artifact::sign(io::read_file(artifact).value(), mine.secret_key);
  ASSERT_TRUE(signed_file.is_ok());
  ASSERT_TRUE(io::write_file_atomic(artifact, signed_file.value()).is_ok());
  SessionOptions trusting_mine = required, trusting_theirs;
  trusting_mine.artifact_public_key = mine.public_key;
  trusting_theirs.artifact_public_key = theirs.public_key;
  EXPECT_TRUE(Session::load(artifact, trusting_mine).is_ok());
  const Status wrong = Session::load(artifact, trusting_theirs).status();
  EXPECT_EQ(wrong.code(), StatusCode::kIntegrityFailure);
  EXPECT_NE(wrong.message().find("gemm.kiln"), std::string::npos) << wrong.message();
}

// Another process truncating or rewriting a loaded artifact in place changes nothing: the session
// runs on the bytes it read and verified (with a mapped file, the truncation was a SIGBUS).
TEST(ArtifactLoading, AFileTruncatedOrRewrittenAfterLoadChangesNothing) {
  ScratchDir dir("loader");
  const std::string artifact = written_artifact(dir);
  auto session = Session::load(artifact);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const Tensor x = random_tensor(DType::kFloat, {5, 4}, 3);
  auto want = session.value()->run({{"x", x}});
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  const auto expect_same_run = [&](const char* after) {
    auto got = session.value()->run({{"x", x}});
    ASSERT_TRUE(got.is_ok()) << after << ": " << got.status().to_string();
    const Tensor& a = want.value().at("y");
    const Tensor& b = got.value().at("y");
    ASSERT_EQ(a.shape(), b.shape()) << after;
    EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()), 0) << after;
  };
  const std::string bytes = io::read_file(artifact).value();
  std::FILE* rewrite = std::fopen(artifact.c_str(), "r+b");  // in place: the same inode, no rename
  ASSERT_NE(rewrite, nullptr);
  const std::string zeros(bytes.size(), '\0');
  ASSERT_EQ(std::fwrite(zeros.data(), 1, zeros.size(), rewrite), zeros.size());
  std::fclose(rewrite);
  expect_same_run("rewritten with zeros");
  ASSERT_EQ(::truncate(artifact.c_str(), 0), 0);
  expect_same_run("truncated to 0 bytes");
  EXPECT_EQ(Session::load(artifact).status().code(), StatusCode::kInvalidModel) << "an empty file is no artifact";
}

TEST(ArtifactLoading, ACorruptedArtifactIsRefusedNamingTheSection) {
  ScratchDir dir("loader");
  const std::string artifact = written_artifact(dir);
  std::string bytes = io::read_file(artifact).value();
  auto decoded = artifact::decode(bytes);
  ASSERT_TRUE(decoded.is_ok());
  ASSERT_EQ(decoded.value().manifest["sections"].size(), 6u) << "plan, weights, packed weights, warm-up inputs and outputs, an asset";
  for (const nlohmann::json& section : decoded.value().manifest["sections"]) {
    if (section["size"] == 0) continue;  // nothing to corrupt: no weight packed on this machine (AVX2)
    std::string bad = bytes;
    const size_t at = section["offset"].get<size_t>() + section["size"].get<size_t>() / 2;
    bad[at] = static_cast<char>(bad[at] ^ 0x10);
    ASSERT_TRUE(io::write_file_atomic(dir.file("bad.kiln"), bad).is_ok());
    const Status s = Session::load(dir.file("bad.kiln")).status();
    EXPECT_EQ(s.code(), StatusCode::kIntegrityFailure) << s.to_string();
    EXPECT_NE(s.message().find("'" + section["name"].get<std::string>() + "'"), std::string::npos) << s.message();
  }
  ASSERT_TRUE(io::write_file_atomic(dir.file("empty.kiln"), "KILN").is_ok());
  EXPECT_EQ(Session::load(dir.file("empty.kiln")).status().code(), StatusCode::kIntegrityFailure);
}

// y = Conv(x[1,C,9,9], W[K,C,3,3]) saved as conv<C>x<K>.onnx; oneDNN packs W in an ISA-specific
// layout when C and K are wide enough, and pads it to its blocks when they are not multiples.
std::string conv_model(const ScratchDir& dir, int64_t c = 16, int64_t k = 16) {
  ModelBuilder b;
  b.input("x", kFloat, {int64_t{1}, c, int64_t{9}, int64_t{9}});
  b.output("y", kFloat, {int64_t{1}, k, int64_t{7}, int64_t{7}});
  std::vector<float> w(static_cast<size_t>(k * c * 9));
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i % 7) * 0.1f - 0.3f;
  b.float_initializer("w", {k, c, 3, 3}, w);
  b.node("Conv", {"x", "w"}, {"y"}, "conv");
  return b.save(dir.file("conv" + std::to_string(c) + "x" + std::to_string(k) + ".onnx"));
}

TEST(ArtifactLoading, TheManifestNamesTheCpuFeaturesOfTheChosenKernels) {
  ScratchDir dir("loader");
  auto session = Session::load(conv_model(dir));
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  ASSERT_TRUE(session.value()->write_artifact(dir.file("conv.kiln")).is_ok());
  const std::string bytes = io::read_file(dir.file("conv.kiln")).value();
  const nlohmann::json target = artifact::decode(bytes).value().manifest["target"];
  const auto report = nlohmann::json::parse(session.value()->report_json());
  EXPECT_EQ(target["required_features"], report["target"]["required_features"]);
  // Every kernel's implementation, by node: the convolution's and the reorders around its region.
  ASSERT_TRUE(target["node_implementations"].contains("conv")) << target.dump();
  EXPECT_TRUE(target["implementations"].contains(target["node_implementations"]["conv"].get<std::string>())) << target.dump();
  EXPECT_FALSE(target.contains("cores") || target.contains("cache_bytes")) << "the compiling machine's, not the artifact's";
  EXPECT_FALSE(target.contains("cpu_features")) << "the compiling machine's features are not the artifact's";
  for (const nlohmann::json& feature : target["required_features"])
    EXPECT_NE(std::find(report["target"]["cpu_features"].begin(), report["target"]["cpu_features"].end(), feature),
              report["target"]["cpu_features"].end()) << feature;
}

TEST(ArtifactLoading, FeaturesTheTargetLacksAreAnUnsupportedTargetNamingThem) {
  const nlohmann::json manifest = {{"target", {{"isa", ""}, {"required_features", {"avx2", "avx512bw", "avx512f"}}}}};
  const Status lacking = artifact::check_target(manifest, {std::nullopt, false, {"avx", "avx2", "fma"}, "avx2"});
  EXPECT_EQ(lacking.code(), StatusCode::kUnsupportedTarget);
  EXPECT_NE(lacking.message().find("avx512bw, avx512f"), std::string::npos) << lacking.message();
  EXPECT_NE(lacking.message().find("--isa avx2"), std::string::npos) << lacking.message();
  EXPECT_TRUE(artifact::check_target(manifest, {std::nullopt, false, {"avx2", "avx512bw", "avx512f", "fma"}, ""}).is_ok());
  EXPECT_EQ(artifact::check_target(nlohmann::json::object(), {}).code(), StatusCode::kIntegrityFailure);
}

TEST(ArtifactLoading, AnAvx512ArtifactLoadedForAvx2IsRefusedBeforeAnythingRuns) {
  ScratchDir dir("loader");
  auto session = Session::load(conv_model(dir));
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  ASSERT_TRUE(session.value()->write_artifact(dir.file("conv.kiln")).is_ok());
  const auto report = nlohmann::json::parse(session.value()->report_json());
  const auto& required = report["target"]["required_features"];
  if (std::find(required.begin(), required.end(), "avx512f") == required.end())
    GTEST_SKIP() << "this machine's conv kernels do not use AVX-512, so no lesser level can lack them";
  SessionOptions avx2;
  avx2.isa = "avx2";
  const Status refused = Session::load(dir.file("conv.kiln"), avx2).status();
  EXPECT_EQ(refused.code(), StatusCode::kUnsupportedTarget) << refused.to_string();
  EXPECT_NE(refused.message().find("avx512f"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("conv.kiln"), std::string::npos) << refused.message();
}

TEST(ArtifactLoading, WeightsAreStoredInTheKernelsLayoutsAndBoundWithoutPacking) {
  ScratchDir dir("loader");
  const std::string model = conv_model(dir, 3, 8);
  std::string first;
  for (const char* name : {"a.kiln", "b.kiln"}) {
    auto session = Session::load(model);
    ASSERT_TRUE(session.is_ok()) << session.status().to_string();
    ASSERT_TRUE(session.value()->write_artifact(dir.file(name)).is_ok());
    const std::string bytes = io::read_file(dir.file(name)).value();
    if (first.empty()) first = bytes;
    EXPECT_EQ(bytes, first) << "packed padding must be deterministic";
  }
  const nlohmann::json manifest = artifact::decode(first).value().manifest;
  ASSERT_EQ(manifest["packed"].size(), 1u);
  EXPECT_EQ(manifest["packed"][0]["value"], "w");
  ASSERT_EQ(manifest["weights"].size(), 1u);
  EXPECT_TRUE(manifest["weights"][0].contains("packed")) << "only Conv reads w, so no plain copy is stored";

  auto onnx = Session::load(model);
  auto loaded = Session::load(dir.file("a.kiln"));
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  const Tensor x = random_tensor(DType::kFloat, {1, 3, 9, 9}, 5);
  const Tensor want = onnx.value()->run({{"x", x}}).value().at("y");
  const Tensor got = loaded.value()->run({{"x", x}}).value().at("y");
  for (int64_t i = 0; i < want.element_count(); ++i) ASSERT_EQ(want.data<float>()[i], got.data<float>()[i]) << i;
}

TEST(ArtifactLoading, AProviderThatCannotTakePackedOnlyWeightsIsAnUnsupportedTarget) {
  ScratchDir dir("loader");
  auto session = Session::load(conv_model(dir, 3, 8));
  ASSERT_TRUE(session.is_ok());
  ASSERT_TRUE(session.value()->write_artifact(dir.file("conv.kiln")).is_ok());
  SessionOptions reference;
  reference.providers = {"cpu_ref"};
  const Status refused = Session::load(dir.file("conv.kiln"), reference).status();
  EXPECT_EQ(refused.code(), StatusCode::kUnsupportedTarget) << refused.to_string();
  EXPECT_NE(refused.message().find("'conv'"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("weights 'w'"), std::string::npos) << refused.message();
}

// `bytes` as a load sees a file read into memory (aligned, so sections are 64-byte aligned).
io::FileImage in_memory(const std::string& bytes) {
  std::shared_ptr<char> owner(static_cast<char*>(::operator new(bytes.size() + 1, std::align_val_t(4096))),
                              [](char* p) { ::operator delete(p, std::align_val_t(4096)); });
  std::memcpy(owner.get(), bytes.data(), bytes.size());
  return {owner, std::string_view(owner.get(), bytes.size())};
}

TEST(ArtifactLoading, EveryByteFlippedAndEveryTruncationOfASignedArtifactIsCaught) {
  ScratchDir dir("loader");
  const artifact::KeyPair key = artifact::generate_key_pair().value();
  const std::string file = artifact::sign(io::read_file(written_artifact(dir)).value(), key.secret_key).value();
  const artifact::LoadPolicy policy{key.public_key, true, target::host_target().features, ""};
  const Status intact = artifact::load_artifact(in_memory(file), policy).status();
  ASSERT_TRUE(intact.is_ok()) << intact.to_string();
  // Header, plan, weights, packed weights, fixtures, asset, padding, manifest and signature block:
  // every byte of the file, one at a time.
  for (size_t i = 0; i < file.size(); ++i) {
    std::string bad = file;
    bad[i] = static_cast<char>(bad[i] ^ 0x20);
    const Status s = artifact::load_artifact(in_memory(bad), policy).status();
    ASSERT_TRUE(s.code() == StatusCode::kIntegrityFailure || s.code() == StatusCode::kUnsupportedTarget)
        << "flipping byte " << i << " of " << file.size() << ": " << s.to_string();
  }
  for (size_t size = 0; size < file.size(); ++size)
    ASSERT_EQ(artifact::load_artifact(in_memory(file.substr(0, size)), policy).status().code(), StatusCode::kIntegrityFailure)
        << "truncated to " << size;
}

// y = If(c1, then: x * k (k a constant of the branch), else: If(c2, then: -x, else: |x| + s)),
// the inner branches reading x and s two levels up.
std::string nested_if_model(const ScratchDir& dir) {
  const auto branch = [](const char* op, std::vector<std::string> inputs, const std::string& out) {
    ModelBuilder body;
    body.output(out, kFloat, {int64_t{3}});
    body.node(op, inputs, {out}, std::string(op) + "_" + out);
    return body;
  };
  const auto set_branches = [](onnx::NodeProto& node, const onnx::GraphProto& then_graph, const onnx::GraphProto& else_graph) {
    for (const auto& [name, graph] : {std::pair{"then_branch", &then_graph}, std::pair{"else_branch", &else_graph}}) {
      auto* a = node.add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::GRAPH);
      *a->mutable_g() = *graph;
    }
  };
  ModelBuilder scaled = branch("Mul", {"x", "k"}, "scaled");
  scaled.float_initializer("k", {3}, {2.0f, -3.0f, 0.5f});
  ModelBuilder shifted;
  shifted.output("shifted", kFloat, {int64_t{3}});
  shifted.node("Abs", {"x"}, {"abs_x"}, "abs");
  shifted.node("Add", {"abs_x", "s"}, {"shifted"}, "shift");
  ModelBuilder inner = branch("Identity", {"inner_y"}, "chosen");
  onnx::NodeProto& inner_if = inner.node("If", {"c2"}, {"inner_y"}, "inner_if");
  set_branches(inner_if, branch("Neg", {"x"}, "negated").graph(), shifted.graph());
  ModelBuilder b;
  b.input("c1", onnx::TensorProto::BOOL, {});
  b.input("c2", onnx::TensorProto::BOOL, {});
  b.input("x", kFloat, {int64_t{3}});
  b.output("y", kFloat, {int64_t{3}});
  b.float_initializer("s", {3}, {10.0f, 20.0f, 30.0f});
  set_branches(b.node("If", {"c1"}, {"y"}, "outer_if"), scaled.graph(), inner.graph());
  return b.save(dir.file("if.onnx"));
}

// Control-flow bodies (nested, with constants of their own, reading values of enclosing graphs)
// are stored in the plan and run from the artifact as from the ONNX file, on every branch.
TEST(ArtifactLoading, ControlFlowBodiesAreStoredAndRunAsFromTheOnnxFile) {
  ScratchDir dir("loader");
  auto onnx_session = Session::load(nested_if_model(dir));
  ASSERT_TRUE(onnx_session.is_ok()) << onnx_session.status().to_string();
  ASSERT_TRUE(onnx_session.value()->write_artifact(dir.file("if.kiln")).is_ok());
  auto artifact_session = Session::load(dir.file("if.kiln"));
  ASSERT_TRUE(artifact_session.is_ok()) << artifact_session.status().to_string();
  const Tensor x = Tensor::from_vector<float>(DType::kFloat, {3}, {1.5f, -2.0f, 4.0f});
  const std::vector<std::pair<bool, bool>> conditions = {{true, false}, {false, true}, {false, false}};
  const std::vector<std::vector<float>> expected = {{3.0f, 6.0f, 2.0f}, {-1.5f, 2.0f, -4.0f}, {11.5f, 22.0f, 34.0f}};
  for (size_t i = 0; i < conditions.size(); ++i) {
    std::map<std::string, Tensor> inputs = {{"c1", Tensor::from_vector<bool>(DType::kBool, {}, {conditions[i].first})},
                                            {"c2", Tensor::from_vector<bool>(DType::kBool, {}, {conditions[i].second})},
                                            {"x", x}};
    auto want = onnx_session.value()->run(inputs);
    auto got = artifact_session.value()->run(inputs);
    ASSERT_TRUE(want.is_ok() && got.is_ok()) << got.status().to_string();
    const Tensor& a = want.value().at("y");
    const Tensor& b = got.value().at("y");
    ASSERT_EQ(b.shape(), std::vector<int64_t>{3});
    for (int64_t k = 0; k < 3; ++k) {
      EXPECT_EQ(a.data<float>()[k], expected[i][static_cast<size_t>(k)]) << i << " " << k;
      EXPECT_EQ(b.data<float>()[k], expected[i][static_cast<size_t>(k)]) << i << " " << k;
    }
  }
}

}  // namespace
}  // namespace kiln
