// `kiln generate MODEL.gguf --prompt TEXT -n N`: a language model's continuation of a prompt,
// printed as it is produced, then time to first token, prompt tokens/s and generation tokens/s
// (on stderr, so stdout is the text alone). Greedy at --temperature 0; --logits-out writes the
// float32 logits of every prompt position and generated token as .npy, [tokens, vocab]; --json the
// figures (with the load time) for bench/llm.sh.
#include <chrono>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "kiln/cli/cli_common.h"
#include "kiln/cli/commands.h"
#include "kiln/generator.h"
#include "kiln/tensor_io.h"

namespace kiln::cli {
namespace {

struct GenerateArgs {
  std::string model;
  std::string prompt;
  std::string tokens;  // "1,2,3"
  int64_t max_tokens = 64;
  float temperature = 0;
  int64_t top_k = 0;
  float top_p = 1;
  uint64_t seed = 0;
  int64_t context = 0;
  int64_t batch = GeneratorOptions{}.batch;
  bool ignore_eos = false;
  std::string logits_path;
  std::string report_path;
  std::string json_path;
  SessionFlags flags;
};

Result<std::vector<int32_t>> parse_token_list(const std::string& text) {
  std::vector<int32_t> ids;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    long long value = 0;
    try {
      value = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || value < 0 || value > INT32_MAX)
      return invalid_argument("--tokens: '" + item + "' is not a token id");
    ids.push_back(static_cast<int32_t>(value));
  }
  return ids;
}

Status generate(const GenerateArgs& args) {
  if (args.prompt.empty() == args.tokens.empty()) return invalid_argument("give one of --prompt and --tokens");
  GeneratorOptions options;
  KILN_ASSIGN_OR_RETURN(options.session, to_options(args.flags));
  options.context = args.context;
  options.batch = args.batch;
  const auto load_start = std::chrono::steady_clock::now();
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Generator> generator, Generator::load(args.model, options));
  const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count();
  std::vector<int32_t> prompt;
  if (!args.prompt.empty()) {
    KILN_ASSIGN_OR_RETURN(prompt, generator->tokenize(args.prompt));
  } else {
    KILN_ASSIGN_OR_RETURN(prompt, parse_token_list(args.tokens));
  }
  SamplingOptions sampling{args.temperature, args.top_k, args.top_p, args.seed, !args.ignore_eos};
  Tensor logits;
  KILN_ASSIGN_OR_RETURN(const GenerationStats stats, generator->generate(prompt, args.max_tokens, sampling,
                                                                          [](int32_t, const std::string& text) {
                                                                            std::cout << text << std::flush;
                                                                            return true;
                                                                          },
                                                                          args.logits_path.empty() ? nullptr : &logits));
  std::cout << "\n";
  std::cerr << "prompt " << stats.prompt_tokens << " tokens, generated " << stats.generated_tokens << "\n"
            << "time to first token " << stats.time_to_first_token_ms << " ms, prompt " << stats.prompt_tokens_per_second
            << " tokens/s, generation " << stats.generation_tokens_per_second << " tokens/s\n";
  if (!args.logits_path.empty()) KILN_RETURN_IF_ERROR(write_npy_file(args.logits_path, logits));
  if (!args.report_path.empty()) KILN_RETURN_IF_ERROR(write_text_file(args.report_path, generator->report_json()));
  if (!args.json_path.empty()) {
    const nlohmann::json figures = {{"load_ms", load_ms},
                                    {"prompt_tokens", stats.prompt_tokens},
                                    {"generated_tokens", stats.generated_tokens},
                                    {"time_to_first_token_ms", stats.time_to_first_token_ms},
                                    {"prompt_tokens_per_s", stats.prompt_tokens_per_second},
                                    {"generation_tokens_per_s", stats.generation_tokens_per_second},
                                    {"peak_resident_bytes", stats.peak_resident_bytes}};
    KILN_RETURN_IF_ERROR(write_text_file(args.json_path, figures.dump() + "\n"));
  }
  return Status::ok();
}

}  // namespace

void add_generate_command(CLI::App& app, std::function<void(int)> set_exit) {
  auto args = std::make_shared<GenerateArgs>();
  CLI::App* cmd = app.add_subcommand("generate", "Continue a prompt with a language model (GGUF), token by token");
  cmd->add_option("model", args->model, "GGUF package, or a .kiln artifact compiled from one")->required();
  cmd->add_option("--prompt", args->prompt, "Text to continue (tokenized with the model's tokenizer, BOS as the model says)");
  cmd->add_option("--tokens", args->tokens, "Token ids to continue instead of a prompt: 1,2,3");
  cmd->add_option("-n,--max-tokens", args->max_tokens, "Tokens to generate")->check(CLI::NonNegativeNumber);
  cmd->add_option("--temperature", args->temperature, "Sampling temperature; 0: greedy")->check(CLI::NonNegativeNumber);
  cmd->add_option("--top-k", args->top_k, "Sample among the k most probable tokens (0: all)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--top-p", args->top_p, "Nucleus sampling's probability mass")->check(CLI::Range(0.0, 1.0));
  cmd->add_option("--seed", args->seed, "Seed of the sampler");
  cmd->add_option("--ctx", args->context, "Positions the KV cache holds (0: the model's, at most 4096)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--batch", args->batch, "Prompt tokens per call")->check(CLI::PositiveNumber);
  cmd->add_flag("--ignore-eos", args->ignore_eos, "Keep generating past the end-of-text token");
  cmd->add_option("--logits-out", args->logits_path, "Write the logits of every position as .npy [tokens, vocab]");
  cmd->add_option("--report", args->report_path, "Write the session's report (JSON)");
  cmd->add_option("--json", args->json_path, "Write load time, time to first token and tokens/s as JSON (for bench/llm.sh)");
  add_session_flags(*cmd, args->flags);
  cmd->callback([args, set_exit] {
    Status s = generate(*args);
    set_exit(s.is_ok() ? 0 : report_error(s));
  });
}

}  // namespace kiln::cli
