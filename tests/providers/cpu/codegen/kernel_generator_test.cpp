// Tests of generated kernels: results against the chain's reference math, their object cache
// (hits across generators, corrupted entries rebuilt, an unwritable folder), a missing or failing
// compiler, and jit sessions running generated kernels.
#include "kiln/providers/cpu/codegen/kernel_generator.h"

#include "kiln/providers/cpu/codegen/lowering.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "kiln/io/file.h"
#include "kiln/ops/elementwise_chain.h"
#include "kiln/ops/elementwise_functions.h"
#include "kiln/target/target.h"
#include "kiln/session.h"
#include "kiln/providers/registry/provider_registry.h"
#include "support/differential.h"
#include "support/model_builder.h"
#include "support/scoped_env.h"
#include "support/op_cases.h"

namespace kiln::codegen {
namespace {

using kiln::testing::ScopedEnv;
using kiln::testing::ScratchDir;
namespace fs = std::filesystem;


// x[4,33] * row[33] + full[4,33] -> Tanh -> Max(., 0.25) -> Pow 2 -> Sub from c (c - x) -> Clip(0, 0.5)
std::vector<ops::ChainStep> test_steps() {
  std::vector<ops::ChainStep> steps(7);
  steps[0] = {ops::Elementwise::kMul};
  steps[0].operand = 1;
  steps[1] = {ops::Elementwise::kAdd};
  steps[1].operand = 2;
  steps[2] = {ops::Elementwise::kTanh};
  steps[3] = {ops::Elementwise::kMax};
  steps[3].operand = 3;
  steps[4] = {ops::Elementwise::kPow};
  steps[4].operand = 4;
  steps[5] = {ops::Elementwise::kSub};
  steps[5].operand = 3;
  steps[5].operand_first = true;
  steps[6] = {ops::Elementwise::kClip, 0.0f, 0.5f};
  return steps;
}

const std::vector<std::vector<int64_t>> kDims = {{4, 33}, {33}, {4, 33}, {}, {}};

LoopKernel test_kernel() {
  ir::Node chain;
  chain.name = "chain";
  ops::set_chain_steps(chain, test_steps());
  return lower_elementwise_chain(chain, kDims, {4, 33}).value();
}

std::shared_ptr<KernelGenerator> generator_in(const std::string& folder, int64_t max_bytes = io::ObjectCache::kDefaultMaxBytes) {
  Result<std::shared_ptr<KernelGenerator>> g =
      KernelGenerator::create(target::host_target().features, io::ObjectCache(folder, max_bytes));
  EXPECT_TRUE(g.is_ok()) << g.status().to_string();
  return g.is_ok() ? g.value() : nullptr;
}

// Builds the test kernel with `generator` and checks it against the steps' own math, in float
// after every step as the reference kernel rounds.
void expect_test_kernel_is_right(const std::shared_ptr<KernelGenerator>& generator) {
  ModuleBuilder module(generator);
  std::shared_ptr<const GeneratedKernel> kernel = module.add(test_kernel());
  const Status built = module.build();
  ASSERT_TRUE(built.is_ok()) << built.to_string();
  ASSERT_NE(kernel->function, nullptr);
  std::vector<float> x(132), row(33), full(132), y(132);
  const float floor_value = 0.25f, exponent = 2.0f;
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = 0.05f * static_cast<float>(static_cast<int>(i % 23) - 11);
    full[i] = 0.01f * static_cast<float>(static_cast<int>(i % 7) - 3);
  }
  for (size_t i = 0; i < row.size(); ++i) row[i] = 0.1f * static_cast<float>(static_cast<int>(i % 5) - 2);
  const float* inputs[] = {x.data(), row.data(), full.data(), &floor_value, &exponent};
  kernel->function(inputs, y.data());
  const std::vector<ops::ChainStep> steps = test_steps();
  for (size_t i = 0; i < x.size(); ++i) {
    const float operand[] = {0, row[i % 33], full[i], floor_value, exponent};
    float v = x[i];
    for (const ops::ChainStep& s : steps) v = static_cast<float>(s.apply(v, s.is_binary() ? operand[s.operand] : 0.0));
    ASSERT_NEAR(y[i], v, 1e-6f) << i;
  }
}

TEST(KernelGenerator, GeneratedKernelsComputeTheChainsSteps) {
  ScratchDir dir("codegen");
  auto generator = generator_in(dir.file("cache"));
  ASSERT_TRUE(generator);
  expect_test_kernel_is_right(generator);
  const CodegenStats stats = generator->stats();
  EXPECT_EQ(stats.kernels, 1);
  EXPECT_EQ(stats.cache_misses, 1);
  EXPECT_GT(stats.compile_ms, 0);
  EXPECT_FALSE(stats.compiler.empty());
}

TEST(KernelGenerator, GeneratedKernelsMatchTheReferenceOnTheStandardCases) {
  ScratchDir dir("codegen");
  auto generator = generator_in(dir.file("cache"));
  ASSERT_TRUE(generator);
  auto cpu = providers::make_provider("cpu", {target::host_target()});
  ASSERT_TRUE(cpu.is_ok());
  int64_t reductions = 0;
  for (const kiln::testing::OpCase& c : kiln::testing::standard_op_cases()) {
    const int64_t before = generator->stats().kernels;
    const kiln::testing::DifferentialResult r = kiln::testing::check_against_reference(*cpu.value(), c, 1, generator);
    EXPECT_TRUE(r.verdict == kiln::testing::Verdict::kMatch || r.verdict == kiln::testing::Verdict::kDeclined) << c.label() << ": " << r.detail;
    if (c.op.starts_with("Reduce")) reductions += generator->stats().kernels - before;
  }
  // The chains, the LayerNormalizations, the innermost-axis Softmaxes and the seven sums,
  // means, products and norms over innermost dims were generated (the other reductions keep the
  // library's kernels).
  EXPECT_GE(generator->stats().kernels, 13);
  EXPECT_EQ(reductions, 7);
}

// Every chain step of the element-wise table (ops/elementwise_functions.h), unary and binary, gives
// in generated code the reference's value (ChainStep::apply, in double) at extreme inputs: +-100
// (Softplus's overflow in the naive form), +-1e30, subnormals, zeros, inf and NaN, against
// operands as extreme.
TEST(KernelGenerator, EveryChainStepOfTheTableMatchesTheReferenceAtExtremeInputs) {
  ScratchDir dir("codegen");
  auto generator = generator_in(dir.file("cache"));
  ASSERT_TRUE(generator);
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {100.0f, -100.0f, 1e30f, -1e30f, 1e-40f, -1e-40f, 0.0f, -0.0f, 3.5f, -3.5f, inf, -inf, std::nanf("")};
  std::vector<float> b = x;
  std::rotate(b.begin(), b.begin() + 3, b.end());  // each x against another extreme
  int steps = 0;
  for (const ops::ElementwiseFunction& f : ops::elementwise_functions()) {
    if (!f.allows(ops::kChainStep)) continue;
    ++steps;
    const bool binary = f.operands == 2;
    // Parameters where the function has them (LeakyRelu and Elu alpha; Clip's bounds).
    const ops::ChainStep step{f.function, f.function == ops::Elementwise::kClip ? -1.0f : 0.7f,
                              f.function == ops::Elementwise::kClip ? 2.0f : 0.0f, binary ? 1 : -1};
    ir::Node chain;
    chain.name = "chain_" + std::string(f.name);
    ops::set_chain_steps(chain, {step});
    const std::vector<int64_t> dims = {static_cast<int64_t>(x.size())};
    Result<LoopKernel> lowered = binary ? lower_elementwise_chain(chain, {dims, dims}, dims) : lower_elementwise_chain(chain, {dims}, dims);
    ASSERT_TRUE(lowered.is_ok()) << f.name << ": " << lowered.status().to_string();
    ModuleBuilder module(generator);
    std::shared_ptr<const GeneratedKernel> kernel = module.add(lowered.value());
    ASSERT_TRUE(module.build().is_ok()) << f.name;
    std::vector<float> y(x.size());
    const float* inputs[] = {x.data(), b.data()};
    kernel->function(inputs, y.data());
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = static_cast<float>(step.apply(x[i], binary ? b[i] : 0.0));
      const std::string at = std::string(f.name) + "(" + std::to_string(x[i]) + (binary ? ", " + std::to_string(b[i]) : "") + ")";
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(y[i])) << at << " = " << y[i];
      } else if (std::isinf(want)) {
        EXPECT_EQ(y[i], want) << at;
      } else {
        EXPECT_NEAR(y[i], want, 1e-6f + 1e-6f * std::fabs(want)) << at;
      }
    }
  }
  EXPECT_EQ(steps, 20);  // 7 activations, 6 unary math, 7 binary
}

TEST(KernelGenerator, AnotherGeneratorFindsTheObjectInTheCache) {
  ScratchDir dir("codegen");
  expect_test_kernel_is_right(generator_in(dir.file("cache")));
  auto second = generator_in(dir.file("cache"));
  expect_test_kernel_is_right(second);
  const CodegenStats stats = second->stats();
  EXPECT_EQ(stats.cache_hits, 1);
  EXPECT_EQ(stats.cache_misses, 0);
  EXPECT_EQ(stats.compile_ms, 0);
}

TEST(KernelGenerator, ATruncatedEntryIsDetectedAndRebuilt) {
  ScratchDir dir("codegen");
  const std::string folder = dir.file("cache");
  expect_test_kernel_is_right(generator_in(folder));
  const std::vector<io::CacheEntry> entries = io::ObjectCache(folder, io::ObjectCache::kDefaultMaxBytes).entries();
  ASSERT_EQ(entries.size(), 1u);
  const std::string object = folder + "/" + entries[0].key + ".so";
  fs::resize_file(object, static_cast<uintmax_t>(entries[0].bytes / 2));
  auto second = generator_in(folder);
  expect_test_kernel_is_right(second);
  const CodegenStats stats = second->stats();
  EXPECT_EQ(stats.corrupted_entries, 1);
  EXPECT_EQ(stats.cache_misses, 1);
  bool corrupted = true;
  EXPECT_TRUE(io::ObjectCache(folder, io::ObjectCache::kDefaultMaxBytes).find(entries[0].key, &corrupted));
  EXPECT_FALSE(corrupted);
}

TEST(KernelGenerator, AnUnwritableCacheFolderStillRunsFromATemporaryObject) {
  ScratchDir dir("codegen");
  std::ofstream(dir.file("not_a_folder")) << "a file where the cache folder's parent should be";
  auto generator = generator_in(dir.file("not_a_folder") + "/cache");
  expect_test_kernel_is_right(generator);
  EXPECT_FALSE(generator->stats().cache_writable);
}

TEST(HostCompiler, AMissingCompilerIsAnUnsupportedTarget) {
  ScopedEnv cxx("KILN_CXX", "/nonexistent/c++");
  const Result<HostCompiler> found = HostCompiler::find();
  ASSERT_FALSE(found.is_ok());
  EXPECT_EQ(found.status().code(), StatusCode::kUnsupportedTarget);
  EXPECT_NE(found.status().message().find("/nonexistent/c++"), std::string::npos) << found.status().message();
}

TEST(HostCompiler, AFailingCompilerIsABackendFailureCarryingItsMessages) {
  ScratchDir dir("codegen");
  const std::string script = dir.file("fakecc");
  std::ofstream(script) << "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'fakecc 1.0'; exit 0; fi\n"
                           "echo 'kernels.cpp:3:1: error: the kernel is broken' >&2\nexit 1\n";
  fs::permissions(script, fs::perms::owner_all);
  ScopedEnv cxx("KILN_CXX", script);
  auto generator = generator_in(dir.file("cache"));
  ASSERT_TRUE(generator);
  EXPECT_EQ(generator->stats().compiler, "fakecc 1.0");
  ModuleBuilder module(generator);
  module.add(test_kernel());
  const Status built = module.build();
  EXPECT_EQ(built.code(), StatusCode::kBackendFailure);
  EXPECT_NE(built.message().find("the kernel is broken"), std::string::npos) << built.message();
}

// x[2,3,4,5] -> Mul(scale) -> Add(shift) -> Sigmoid -> Mul(x2) : an element-wise chain after fusion.
std::string chain_model(const ScratchDir& dir) {
  kiln::testing::ModelBuilder b(13);
  constexpr int kFloat = onnx::TensorProto::FLOAT;
  b.input("x", kFloat, {int64_t{2}, int64_t{3}, int64_t{4}, int64_t{5}});
  b.output("y", kFloat, {int64_t{2}, int64_t{3}, int64_t{4}, int64_t{5}});
  b.float_initializer("scale", {5}, {0.5f, -1.0f, 2.0f, 0.25f, 1.5f});
  b.float_initializer("shift", {}, {0.125f});
  b.node("Mul", {"x", "scale"}, {"a"}, "mul");
  b.node("Add", {"a", "shift"}, {"b"}, "add");
  b.node("Sigmoid", {"b"}, {"c"}, "sigmoid");
  b.node("Mul", {"c", "x"}, {"y"}, "gate");
  return b.save(dir.file("model.onnx"));
}

Tensor run_chain(const std::string& model, ExecutionMode mode, std::string* report = nullptr) {
  SessionOptions options;
  options.mode = mode;
  auto session = Session::load(model, options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  if (!session.is_ok()) return {};
  std::vector<float> x(120);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.1f * static_cast<float>(static_cast<int>(i % 17) - 8);
  auto out = session.value()->run({{"x", Tensor::from_vector<float>(DType::kFloat, {2, 3, 4, 5}, x)}});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  if (report) *report = session.value()->report_json();
  return out.is_ok() ? out.value().at("y") : Tensor{};
}

TEST(KernelGenerator, JitSessionsRunGeneratedKernelsAndReportThem) {
  ScratchDir dir("codegen");
  ScopedEnv cache("KILN_CACHE_DIR", dir.file("cache"));
  const std::string model = chain_model(dir);
  const Tensor graph = run_chain(model, ExecutionMode::kGraph);
  std::string first_report, second_report;
  const Tensor jit = run_chain(model, ExecutionMode::kJit, &first_report);
  run_chain(model, ExecutionMode::kJit, &second_report);
  ASSERT_EQ(jit.shape(), graph.shape());
  for (int64_t i = 0; i < graph.element_count(); ++i) EXPECT_NEAR(jit.data<float>()[i], graph.data<float>()[i], 1e-6) << i;
  const auto first = nlohmann::json::parse(first_report)["execution"]["generated"];
  const auto second = nlohmann::json::parse(second_report)["execution"]["generated"];
  ASSERT_TRUE(first.is_object()) << first_report;
  EXPECT_EQ(first["kernels"], 1);
  EXPECT_EQ(first["object_cache_misses"], 1);
  EXPECT_EQ(second["object_cache_hits"], 1);
  EXPECT_EQ(second["object_cache_misses"], 0);
}

TEST(KernelGenerator, JitWithoutACompilerIsRefusedAtLoad) {
  ScratchDir dir("codegen");
  ScopedEnv cxx("KILN_CXX", "/nonexistent/c++");
  SessionOptions options;
  options.mode = ExecutionMode::kJit;
  auto session = Session::load(chain_model(dir), options);
  ASSERT_FALSE(session.is_ok());
  EXPECT_EQ(session.status().code(), StatusCode::kUnsupportedTarget);
  EXPECT_NE(session.status().message().find("compiler"), std::string::npos) << session.status().message();
}

}  // namespace
}  // namespace kiln::codegen
