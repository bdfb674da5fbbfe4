// kiln::Generator against llama.cpp on the random-weight test decoders of tests/llm/make_models.py
// (llama in F32, F16 and every ggml block type; qwen2, qwen3 and phi3 in F32), which
// tests/llm/llm.sh writes into $KILN_LLM_DIR/models with llama.cpp's references in refs/ (skipped,
// naming what is missing, where they are not there).
//   F32 models: every log-probability within 1e-4 of llama.cpp's and the greedy continuation
//   identical. Other types: Kiln dequantizes the weights to float32 while llama.cpp multiplies in
//   the quantized domain with activations rounded to 8 bits (F16 for F16 weights), so the
//   distributions are compared: top-1 token agreement >= 99% of positions and mean KL divergence
//   (llama.cpp's distribution against Kiln's) <= 1e-3.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "kiln/generator.h"
#include "kiln/tensor_io.h"
#include "support/test_target.h"

namespace kiln {
namespace generator_parity {
namespace {

std::filesystem::path llm_dir() {
  const char* dir = std::getenv("KILN_LLM_DIR");
  const char* home = std::getenv("HOME");
  return dir ? std::filesystem::path(dir) : std::filesystem::path(home ? home : "") / ".cache" / "kiln" / "llm";
}

// Why `file` is missing ("" when present), with llm.sh's STATUS when it wrote one.
std::string missing(const std::filesystem::path& file) {
  if (std::filesystem::exists(file)) return "";
  std::string why = "no " + file.string() + " (tests/llm/llm.sh writes it; make test runs it)";
  std::ifstream status(llm_dir() / "STATUS");
  std::string line;
  if (std::getline(status, line)) why += ": " + line;
  return why;
}

// Figures of Kiln's log-probabilities against llama.cpp's over every position.
struct Agreement {
  double max_difference = 0;  // largest |log p| difference where llama.cpp's probability is not 0
  int64_t top1_same = 0, positions = 0;
  double mean_kl = 0;  // mean over positions of KL(llama.cpp || Kiln)
};

Agreement compare(const Tensor& logits, const Tensor& want) {
  Agreement a;
  const int64_t rows = want.shape()[0], vocab = want.shape()[1];
  std::vector<double> mine(static_cast<size_t>(vocab));
  for (int64_t row = 0; row < rows; ++row) {
    const float* z = logits.data<float>() + row * vocab;
    const float* theirs = want.data<float>() + row * vocab;
    double top = z[0], sum = 0;
    for (int64_t i = 0; i < vocab; ++i) top = std::max<double>(top, z[i]);
    for (int64_t i = 0; i < vocab; ++i) sum += std::exp(z[i] - top);
    const double lse = top + std::log(sum);
    int64_t my_best = 0, their_best = 0;
    double kl = 0;
    for (int64_t i = 0; i < vocab; ++i) {
      const double lp = z[i] - lse;
      if (z[i] > z[my_best]) my_best = i;
      if (theirs[i] > theirs[their_best]) their_best = i;
      if (!std::isfinite(theirs[i])) continue;
      a.max_difference = std::max(a.max_difference, std::abs(lp - theirs[i]));
      kl += std::exp(static_cast<double>(theirs[i])) * (theirs[i] - lp);
    }
    a.top1_same += my_best == their_best;
    a.mean_kl += kl / static_cast<double>(rows);
  }
  a.positions = rows;
  return a;
}

class GeneratorParity : public ::testing::TestWithParam<std::string> {};

TEST_P(GeneratorParity, MatchesLlamaCpp) {
  const std::string name = GetParam();
  const std::filesystem::path model = llm_dir() / "models" / (name + ".gguf");
  const std::filesystem::path greedy_file = llm_dir() / "refs" / (name + ".greedy.json");
  const std::filesystem::path logprobs_file = llm_dir() / "refs" / (name + ".logprobs.npy");
  for (const auto& file : {model, greedy_file, logprobs_file})
    if (const std::string why = missing(file); !why.empty()) GTEST_SKIP() << why;
  std::ifstream in(greedy_file);
  const nlohmann::json greedy = nlohmann::json::parse(in);
  const auto prompt = greedy["prompt_tokens"].get<std::vector<int32_t>>();
  const auto continuation = greedy["tokens"].get<std::vector<int32_t>>();

  GeneratorOptions options;
  options.session.threads = 2;
  options.session.isa = testing::test_isa();  // the AVX2 cap in the avx2.* run
  options.context = 256;
  Result<std::unique_ptr<Generator>> loaded = Generator::load(model.string(), options);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  Generator& g = **loaded;
  const Result<std::vector<int32_t>> tokenized = g.tokenize(greedy["prompt"].get<std::string>());
  ASSERT_TRUE(tokenized.is_ok()) << tokenized.status().to_string();
  EXPECT_EQ(*tokenized, prompt) << "the prompt's tokens differ from llama.cpp's";

  std::vector<int32_t> tokens = prompt;
  tokens.insert(tokens.end(), continuation.begin(), continuation.end());
  const Result<Tensor> want = read_tensor_file(logprobs_file.string());
  ASSERT_TRUE(want.is_ok()) << want.status().to_string();
  ASSERT_EQ(want->shape(), (std::vector<int64_t>{static_cast<int64_t>(tokens.size()), g.vocab_size()}));
  const Result<Tensor> logits = g.logits(tokens);
  ASSERT_TRUE(logits.is_ok()) << logits.status().to_string();
  const Agreement a = compare(*logits, *want);

  std::vector<int32_t> generated;
  SamplingOptions keep_going;
  keep_going.stop_at_end_of_generation = false;
  ASSERT_TRUE(g.generate(prompt, static_cast<int64_t>(continuation.size()), keep_going, [&](int32_t id, const std::string&) {
                 generated.push_back(id);
                 return true;
               }).is_ok());
  size_t same_prefix = 0;
  while (same_prefix < generated.size() && same_prefix < continuation.size() && generated[same_prefix] == continuation[same_prefix]) ++same_prefix;

  std::cout << "[llm] " << name << " vs llama.cpp over " << a.positions << " positions: max |dlogprob| " << a.max_difference << ", top-1 "
            << a.top1_same << "/" << a.positions << ", mean KL " << a.mean_kl << ", greedy " << same_prefix << "/" << continuation.size()
            << " tokens alike\n";
  const bool f32 = name.size() > 4 && name.compare(name.size() - 4, 4, "-f32") == 0;
  if (f32) {
    EXPECT_LE(a.max_difference, 1e-4) << "largest log-probability difference from llama.cpp";
    EXPECT_EQ(generated, continuation) << "greedy continuation differs from llama.cpp's";
  } else {
    EXPECT_GE(static_cast<double>(a.top1_same), 0.99 * static_cast<double>(a.positions)) << "top-1 agreement with llama.cpp";
    EXPECT_LE(a.mean_kl, 1e-3) << "mean KL divergence from llama.cpp";
  }
}

// tests/llm/make_models.py's models (named Generator/GeneratorParity.MatchesLlamaCpp/<model>).
INSTANTIATE_TEST_SUITE_P(Generator, GeneratorParity,
                         ::testing::Values("llama-f32", "llama-f16", "llama-q8_0", "llama-q4_0", "llama-q4_1", "llama-q5_0", "llama-q5_1",
                                           "llama-q4_k", "llama-q5_k", "llama-q6_k", "llama-q2_k", "llama-q3_k", "qwen2-f32", "qwen3-f32",
                                           "phi3-f32"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace generator_parity
}  // namespace kiln
