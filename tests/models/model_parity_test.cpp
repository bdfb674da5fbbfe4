// Parity with PyTorch on real model exports: each model written by bench/models/export.py
// (--variant test, into ${KILN_BINARY_DIR}/models) runs its reference input through a default
// Session and must match PyTorch's saved output within 1e-4 * max(1, max|reference|). The target
// is this machine's, or the level KILN_TEST_ISA names (tests/CMakeLists.txt runs them again capped
// at AVX2); either way no kernel may use a feature the target lacks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kiln/session.h"
#include "kiln/tensor_io.h"
#include "kiln/target/target.h"
#include "support/model_builder.h"
#include "support/test_target.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

constexpr double kRelativeTolerance = 1e-4;
constexpr const char* kExportHint =
    "the parity models are missing; export them with `make models`, or from the source directory run "
    "`/usr/bin/python3 bench/models/export.py --variant test --out <build dir>/models`";

fs::path model_dir(const std::string& model) { return fs::path(KILN_BINARY_DIR) / "models" / model; }

std::vector<std::string> value_names(const nlohmann::json& values) {
  std::vector<std::string> names;
  for (const auto& v : values) names.push_back(v.at("name").get<std::string>());
  return names;
}

struct Difference {
  double max_abs_error = 0;  // +inf when Kiln produced a NaN or Inf the reference does not have
  double reference_scale = 0;
};

Difference compare(const Tensor& got, const Tensor& want) {
  Difference d;
  const float* g = got.data<float>();
  const float* w = want.data<float>();
  for (int64_t i = 0; i < want.element_count(); ++i) {
    const double err = std::fabs(static_cast<double>(g[i]) - static_cast<double>(w[i]));
    d.max_abs_error = std::max(d.max_abs_error, std::isfinite(err) ? err : std::numeric_limits<double>::infinity());
    d.reference_scale = std::max(d.reference_scale, std::fabs(static_cast<double>(w[i])));
  }
  return d;
}

std::string format(double v) {
  std::ostringstream s;
  s.precision(3);
  s << std::scientific << v;
  return s.str();
}

// Every kernel the session planned (its report's implementations, e.g. "brg:avx512_core",
// "jit:avx2") needs only features of the session's target.
void expect_only_target_features(const Session& session, const std::string& what) {
  const nlohmann::json target = nlohmann::json::parse(session.report_json())["target"];
  EXPECT_EQ(target["level"], testing::test_target().level) << what;
  const std::vector<std::string> features = target["cpu_features"];
  for (const auto& [impl, count] : target["implementations"].items()) {
    EXPECT_NE(impl.rfind("ref", 0), 0u) << what << ": " << count << " kernels run oneDNN's reference " << impl;
    const size_t colon = impl.rfind(':');
    for (const std::string& needed : target::level_features(colon == std::string::npos ? impl : impl.substr(colon + 1)))
      EXPECT_NE(std::find(features.begin(), features.end(), needed), features.end())
          << what << ": " << impl << " needs " << needed << ", which the target (" << target["level"] << ") lacks";
  }
}

// The model on one provider configuration, compared with PyTorch output by output.
void check_parity_on(const std::string& model, const SessionOptions& options) {
  const fs::path dir = model_dir(model);
  std::ifstream meta_file(dir / "meta.json");
  ASSERT_TRUE(meta_file.good() && fs::exists(dir / "model.onnx")) << "no " << (dir / "meta.json") << ": " << kExportHint;
  const nlohmann::json meta = nlohmann::json::parse(meta_file);

  std::map<std::string, Tensor> inputs;
  for (const std::string& name : value_names(meta.at("inputs"))) {
    auto input = read_tensor_file((dir / ("input_" + name + ".npy")).string());
    ASSERT_TRUE(input.is_ok()) << input.status().to_string() << " (" << kExportHint << ")";
    inputs[name] = std::move(input).value();
  }
  const std::string providers = std::string(execution_mode_name(options.mode)) + "_" + options.providers.front() +
                                (options.specialize ? "_specialised" : "");
  SessionOptions session_options = options;
  session_options.isa = testing::test_isa();
  if (options.specialize)
    for (const auto& [name, tensor] : inputs) session_options.input_shapes[name] = tensor.shape();
  auto session = Session::load((dir / "model.onnx").string(), session_options);
  ASSERT_TRUE(session.is_ok()) << model << ": " << session.status().to_string();
  auto outputs = session.value()->run(inputs);
  ASSERT_TRUE(outputs.is_ok()) << model << ": " << outputs.status().to_string();
  expect_only_target_features(*session.value(), model + " on " + providers);

  for (const std::string& name : value_names(meta.at("outputs"))) {
    auto reference = read_tensor_file((dir / ("output_" + name + ".npy")).string());
    ASSERT_TRUE(reference.is_ok()) << reference.status().to_string() << " (" << kExportHint << ")";
    ASSERT_EQ(reference.value().dtype(), DType::kFloat) << name;
    const auto found = outputs.value().find(name);
    ASSERT_NE(found, outputs.value().end()) << model << ": no output '" << name << "'";
    const Tensor& got = found->second;
    ASSERT_EQ(got.dtype(), DType::kFloat) << model << ": output '" << name << "'";
    ASSERT_EQ(got.shape(), reference.value().shape())
        << model << ": output '" << name << "' has shape " << shape_to_string(got.shape()) << ", PyTorch gave "
        << shape_to_string(reference.value().shape());

    const Difference d = compare(got, reference.value());
    const double tolerance = kRelativeTolerance * std::max(1.0, d.reference_scale);
    std::cout << "[parity] " << model << " on " << providers << " " << name << shape_to_string(got.shape()) << ": max abs error "
              << format(d.max_abs_error) << ", reference max|y| " << format(d.reference_scale) << ", tolerance "
              << format(tolerance) << "\n";
    ::testing::Test::RecordProperty(providers + "_" + name + "_max_abs_error", format(d.max_abs_error));
    ::testing::Test::RecordProperty(providers + "_" + name + "_reference_max_abs", format(d.reference_scale));
    EXPECT_LE(d.max_abs_error, tolerance) << model << " on " << providers << ": output '" << name << "' differs from PyTorch";
  }
}

// The model compiled to a .kiln artifact and loaded back runs the same kernels: outputs identical
// to the bit with the ONNX path's.
void check_artifact_round_trip(const std::string& model) {
  const fs::path dir = model_dir(model);
  std::map<std::string, Tensor> inputs;
  std::ifstream meta_file(dir / "meta.json");
  for (const std::string& name : value_names(nlohmann::json::parse(meta_file).at("inputs")))
    inputs[name] = read_tensor_file((dir / ("input_" + name + ".npy")).string()).value();
  SessionOptions options;
  options.isa = testing::test_isa();
  auto from_onnx = Session::load((dir / "model.onnx").string(), options);
  ASSERT_TRUE(from_onnx.is_ok()) << from_onnx.status().to_string();
  kiln::testing::ScratchDir scratch("artifact_round_trip");
  const std::string artifact = scratch.file(model + ".kiln");
  ASSERT_TRUE(from_onnx.value()->write_artifact(artifact).is_ok());
  auto from_artifact = Session::load(artifact, options);
  ASSERT_TRUE(from_artifact.is_ok()) << from_artifact.status().to_string();
  auto want = from_onnx.value()->run(inputs);
  auto got = from_artifact.value()->run(inputs);
  ASSERT_TRUE(want.is_ok() && got.is_ok()) << got.status().to_string();
  for (const auto& [name, tensor] : want.value()) {
    const Tensor& other = got.value().at(name);
    ASSERT_EQ(other.shape(), tensor.shape()) << name;
    EXPECT_EQ(std::memcmp(other.raw_data(), tensor.raw_data(), tensor.byte_size()), 0) << model << ": output '" << name
                                                                                         << "' differs after the artifact round trip";
  }
}

// Every model on the reference provider, on the fast cpu provider alone (the default, fail closed:
// the cpu provider must run every node of these models), on cpu specialised to the inputs' shapes
// (as bench/ runs it: the static-shape rewrites apply), in eager mode (no rewrites; cpu with the
// reference for what cpu lacks unfused) and in jit mode; and through an artifact.
void check_parity(const std::string& model) {
  SessionOptions reference;
  reference.providers = {"cpu_ref"};
  check_parity_on(model, reference);
  check_parity_on(model, SessionOptions{});
  SessionOptions specialised;
  specialised.specialize = true;
  check_parity_on(model, specialised);
  SessionOptions eager;
  eager.mode = ExecutionMode::kEager;
  eager.allow_fallback = {"cpu_ref"};
  check_parity_on(model, eager);
  SessionOptions jit;
  jit.mode = ExecutionMode::kJit;
  check_parity_on(model, jit);
  check_artifact_round_trip(model);
}

TEST(ModelParity, ResNet50) { check_parity("resnet50"); }
TEST(ModelParity, MobileNetV2) { check_parity("mobilenet_v2"); }
TEST(ModelParity, SqueezeNet11) { check_parity("squeezenet1_1"); }
TEST(ModelParity, VitB16) { check_parity("vit_b_16"); }
TEST(ModelParity, BertEncoder) { check_parity("bert_encoder"); }
TEST(ModelParity, Gpt2Decoder) { check_parity("gpt2_decoder"); }
TEST(ModelParity, OcrDetector) { check_parity("ocr_det"); }

}  // namespace
}  // namespace kiln
