// Tests of kiln::Generator on llama.cpp's stories260K (tests/llm): the greedy continuation and the
// per-position log-probabilities against llama.cpp's own, recorded by tests/llm/llm.sh (skipped,
// naming the reason, where they are missing), sampling, and the refusals of bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "kiln/generator.h"
#include "kiln/tensor_io.h"
#include "support/model_builder.h"
#include "support/test_target.h"

namespace kiln {
namespace {

const std::filesystem::path kModel = std::filesystem::path(KILN_SOURCE_DIR) / "tests" / "llm" / "stories260K.gguf";

std::filesystem::path references() {
  const char* dir = std::getenv("KILN_LLM_DIR");
  const char* home = std::getenv("HOME");
  return (dir ? std::filesystem::path(dir) : std::filesystem::path(home ? home : "") / ".cache" / "kiln" / "llm") / "refs";
}

// Why llama.cpp's references are missing ("" when present).
std::string missing_reference(const std::filesystem::path& file) {
  if (std::filesystem::exists(file)) return "";
  std::string why = "no " + file.string() + " (tests/llm/llm.sh records it; make test runs it)";
  std::ifstream status(references().parent_path() / "STATUS");
  std::string line;
  if (std::getline(status, line)) why += ": " + line;
  return why;
}

std::unique_ptr<Generator> load(GeneratorOptions options = {}) {
  options.session.threads = 2;
  options.session.isa = testing::test_isa();  // the AVX2 cap in the avx2.* run
  Result<std::unique_ptr<Generator>> g = Generator::load(kModel.string(), options);
  EXPECT_TRUE(g.is_ok()) << g.status().to_string();
  return g.is_ok() ? std::move(g).value() : nullptr;
}

struct Greedy {
  std::vector<int32_t> prompt, tokens;
  std::string text, prompt_text;
};

Greedy read_greedy(const std::filesystem::path& file) {
  std::ifstream in(file);
  const nlohmann::json j = nlohmann::json::parse(in);
  return {j["prompt_tokens"].get<std::vector<int32_t>>(), j["tokens"].get<std::vector<int32_t>>(), j["text"].get<std::string>(),
          j["prompt"].get<std::string>()};
}

TEST(Generator, GreedyContinuationIsLlamaCpps) {
  const std::filesystem::path file = references() / "stories260K.greedy.json";
  if (const std::string why = missing_reference(file); !why.empty()) GTEST_SKIP() << why;
  const Greedy want = read_greedy(file);
  std::unique_ptr<Generator> g = load();
  ASSERT_NE(g, nullptr);
  const Result<std::vector<int32_t>> prompt = g->tokenize(want.prompt_text);
  ASSERT_TRUE(prompt.is_ok()) << prompt.status().to_string();
  EXPECT_EQ(*prompt, want.prompt);
  std::vector<int32_t> tokens;
  std::string text;
  const Result<GenerationStats> stats = g->generate(*prompt, static_cast<int64_t>(want.tokens.size()), {}, [&](int32_t id, const std::string& piece) {
    tokens.push_back(id);
    text += piece;
    return true;
  });
  ASSERT_TRUE(stats.is_ok()) << stats.status().to_string();
  EXPECT_EQ(tokens, want.tokens);
  EXPECT_EQ(text, want.text);
  EXPECT_EQ(stats->prompt_tokens, static_cast<int64_t>(want.prompt.size()));
  EXPECT_EQ(stats->generated_tokens, static_cast<int64_t>(want.tokens.size()));
}

// Log-probabilities of every vocabulary token after each position of the prompt and llama.cpp's
// continuation (69 positions), F32 weights and cache: within 1e-4 of llama.cpp's.
TEST(Generator, LogProbabilitiesAreLlamaCpps) {
  const std::filesystem::path greedy = references() / "stories260K.greedy.json", logprobs = references() / "stories260K.logprobs.npy";
  for (const auto& file : {greedy, logprobs})
    if (const std::string why = missing_reference(file); !why.empty()) GTEST_SKIP() << why;
  const Greedy run = read_greedy(greedy);
  std::vector<int32_t> tokens = run.prompt;
  tokens.insert(tokens.end(), run.tokens.begin(), run.tokens.end());
  const Result<Tensor> want = read_tensor_file(logprobs.string());
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  std::unique_ptr<Generator> g = load();
  ASSERT_NE(g, nullptr);
  // Evaluated in one call and, through generate, one token per call after the prompt: the same.
  const Result<Tensor> logits = g->logits(tokens);
  ASSERT_TRUE(logits.is_ok()) << logits.status().to_string();
  const int64_t vocab = g->vocab_size();
  ASSERT_EQ(want->shape(), (std::vector<int64_t>{static_cast<int64_t>(tokens.size()), vocab}));
  Tensor stepped;
  SamplingOptions keep_going;
  keep_going.stop_at_end_of_generation = false;
  ASSERT_TRUE(g->generate(run.prompt, static_cast<int64_t>(run.tokens.size()), keep_going, nullptr, &stepped).is_ok());
  ASSERT_EQ(stepped.shape(), want->shape());
  for (const Tensor* got : {&logits.value(), static_cast<const Tensor*>(&stepped)}) {
    double worst = 0;
    for (int64_t row = 0; row < want->shape()[0]; ++row) {
      const float* z = got->data<float>() + row * vocab;
      double top = z[0], sum = 0;
      for (int64_t i = 0; i < vocab; ++i) top = std::max<double>(top, z[i]);
      for (int64_t i = 0; i < vocab; ++i) sum += std::exp(z[i] - top);
      for (int64_t i = 0; i < vocab; ++i)
        worst = std::max(worst, std::abs(z[i] - top - std::log(sum) - want->data<float>()[row * vocab + i]));
    }
    EXPECT_LE(worst, 1e-4) << "largest log-probability difference from llama.cpp";
    std::cout << "[llm] stories260K log-probabilities vs llama.cpp: max difference " << worst << "\n";
  }
}

TEST(Generator, SamplingIsSeededAndStaysInTheVocabulary) {
  std::unique_ptr<Generator> g = load();
  ASSERT_NE(g, nullptr);
  SamplingOptions sampling;
  sampling.temperature = 0.8f;
  sampling.top_k = 40;
  sampling.top_p = 0.9f;
  sampling.seed = 7;
  sampling.stop_at_end_of_generation = false;
  auto draw = [&] {
    std::vector<int32_t> ids;
    EXPECT_TRUE(g->generate({1, 403}, 16, sampling, [&](int32_t id, const std::string&) {
                   ids.push_back(id);
                   return true;
                 }).is_ok());
    return ids;
  };
  const std::vector<int32_t> first = draw();
  EXPECT_EQ(first.size(), 16u);
  EXPECT_EQ(draw(), first);  // same seed, same draw
  for (int32_t id : first) EXPECT_TRUE(id >= 0 && id < g->vocab_size());
}

// The report names the model (architecture, hyperparameters, tokenizer hash), the cache and the
// last generation's figures, and each product's kernel.
TEST(Generator, ReportNamesTheModelTheCacheAndTheFigures) {
  GeneratorOptions options;
  options.context = 96;
  std::unique_ptr<Generator> g = load(options);
  ASSERT_NE(g, nullptr);
  SamplingOptions greedy;
  greedy.stop_at_end_of_generation = false;
  const std::vector<int32_t> prompt = {1, 403, 407};
  ASSERT_TRUE(g->generate(prompt, 8, greedy, nullptr).is_ok());
  const nlohmann::json report = nlohmann::json::parse(g->report_json());
  const nlohmann::json& metadata = report["model"]["metadata"];
  EXPECT_EQ(metadata["gguf.architecture"], "llama");
  EXPECT_EQ(metadata["gguf.tokenizer_sha256"].get<std::string>().size(), 64u);
  const nlohmann::json& generation = report["generation"];
  EXPECT_EQ(generation["context"], 96);
  const int64_t blocks = std::stoll(metadata["gguf.block_count"].get<std::string>());
  const int64_t kv_heads = std::stoll(metadata["gguf.head_count_kv"].get<std::string>());
  const int64_t head = std::stoll(metadata["gguf.head_size"].get<std::string>());
  EXPECT_EQ(generation["kv_cache_bytes"], 2 * blocks * kv_heads * 96 * head * 4);
  EXPECT_EQ(generation["prompt_tokens"], 3);
  EXPECT_EQ(generation["generated_tokens"], 8);
  for (const char* positive : {"load_ms", "time_to_first_token_ms", "prompt_tokens_per_s", "generation_tokens_per_s", "peak_resident_bytes"})
    EXPECT_GT(generation[positive].get<double>(), 0) << positive;
  EXPECT_FALSE(report["target"]["node_implementations"].empty());
}

// `kiln compile model.gguf -o model.kiln`: the artifact carries the package's metadata (its
// tokenizer and hyperparameters, tokenizer.gguf) and a valid first call as its warm-up fixture,
// and the Generator runs from it as from the package. A model that is neither is refused.
TEST(Generator, RunsFromAnArtifactCompiledFromThePackage) {
  testing::ScratchDir dir("generator");
  SessionOptions session_options;
  session_options.threads = 2;
  session_options.isa = testing::test_isa();
  Result<std::unique_ptr<Session>> session = Session::load(kModel.string(), session_options);
  ASSERT_TRUE(session.is_ok()) << session.status().to_string();
  const std::string artifact = dir.file("stories260K.kiln");
  const Status written = (*session)->write_artifact(artifact, {});
  ASSERT_TRUE(written.is_ok()) << written.to_string();

  GeneratorOptions options;
  options.session = session_options;
  Result<std::unique_ptr<Generator>> compiled = Generator::load(artifact, options);
  ASSERT_TRUE(compiled.is_ok()) << compiled.status().to_string();
  std::unique_ptr<Generator> package = load();
  ASSERT_NE(package, nullptr);
  const Result<std::vector<int32_t>> prompt = package->tokenize("Once upon a time");
  ASSERT_TRUE(prompt.is_ok());
  EXPECT_EQ(*(*compiled)->tokenize("Once upon a time"), *prompt);
  auto greedy_text = [&](Generator& g) {
    std::string text;
    EXPECT_TRUE(g.generate(*prompt, 24, {}, [&](int32_t, const std::string& piece) {
                  text += piece;
                  return true;
                }).is_ok());
    return text;
  };
  EXPECT_EQ(greedy_text(**compiled), greedy_text(*package));
  const nlohmann::json report = nlohmann::json::parse((*compiled)->report_json());
  EXPECT_EQ(report["warmup"]["state"], "ready");
  EXPECT_EQ(report["warmup"]["fixtures"], "artifact");
  EXPECT_TRUE(report["warmup"]["checked"].get<bool>()) << "the recorded first call's logits were checked";

  testing::ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {int64_t{2}}).output("y", onnx::TensorProto::FLOAT, {int64_t{2}});
  b.node("Relu", {"x"}, {"y"}, "relu");
  const Result<std::unique_ptr<Generator>> onnx = Generator::load(b.save(dir.file("relu.onnx")), options);
  ASSERT_FALSE(onnx.is_ok());
  EXPECT_EQ(onnx.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(onnx.status().message().find("neither a GGUF package nor an artifact"), std::string::npos) << onnx.status().message();
}

TEST(Generator, RefusesBadInputNamingIt) {
  GeneratorOptions options;
  options.context = 16;
  std::unique_ptr<Generator> g = load(options);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->context(), 16);
  auto refusal = [&](const std::vector<int32_t>& prompt, int64_t n) {
    const Result<GenerationStats> r = g->generate(prompt, n, {}, nullptr);
    EXPECT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument) << r.status().to_string();
    return r.status().message();
  };
  EXPECT_NE(refusal({}, 4).find("empty"), std::string::npos);
  EXPECT_NE(refusal({1, 512}, 4).find("512"), std::string::npos);
  EXPECT_NE(refusal({1, -3}, 4).find("-3"), std::string::npos);
  EXPECT_NE(refusal({1, 403}, 15).find("context of 16"), std::string::npos);
  EXPECT_FALSE(g->logits(std::vector<int32_t>(17, 1)).is_ok());
  EXPECT_FALSE(g->detokenize({600}).is_ok());
  // The generator still serves a good request after refusing bad ones.
  EXPECT_TRUE(g->generate({1, 403}, 4, {}, nullptr).is_ok());

  GeneratorOptions too_long;
  too_long.context = 4096;  // the model's context length is 2048
  const Result<std::unique_ptr<Generator>> refused = Generator::load(kModel.string(), too_long);
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln
