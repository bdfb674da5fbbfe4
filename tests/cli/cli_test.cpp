// Tests of the `kiln` tool as a user runs it: subcommands, files written, exit codes and messages
// for bad input, and no partial output on failure.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "kiln/io/object_cache.h"
#include "kiln/io/file.h"
#include "kiln/target/target.h"
#include "kiln/tensor_io.h"
#include "support/loop_model.h"
#include "support/model_builder.h"

namespace kiln {
namespace {

using testing::ModelBuilder;
using testing::ScratchDir;

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};

// `kiln ARGS` run by the shell, with `env` ("NAME=value ...") set for it.
CommandResult run_kiln_with(const std::string& env, const std::string& args) {
  CommandResult r;
  const std::string cmd = env + std::string(KILN_CLI_PATH) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.output.append(buf.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

CommandResult run_kiln(const std::string& args) { return run_kiln_with("", args); }

std::string small_model(const ScratchDir& dir) {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {std::string("N"), int64_t{3}});
  b.output("y", onnx::TensorProto::FLOAT, {std::string("N"), int64_t{3}});
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("Neg", {"r"}, {"y"}, "neg");
  return b.save(dir.file("small.onnx"));
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(Cli, HelpOnEverySubcommand) {
  for (const char* sub : {"", "inspect ", "compile ", "run ", "bench "}) {
    CommandResult r = run_kiln(std::string(sub) + "--help");
    EXPECT_EQ(r.exit_code, 0) << sub << r.output;
    EXPECT_NE(r.output.find("Usage"), std::string::npos) << sub;
  }
}

TEST(Cli, InspectShowsInputsOpsAndParameters) {
  ScratchDir dir("cli");
  CommandResult r = run_kiln("inspect " + small_model(dir) + " --ir");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("x: float[N,3]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Relu 1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ai.onnx=17"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("= Neg 'neg'(%r)"), std::string::npos) << r.output;
}

TEST(Cli, CompileWritesReport) {
  ScratchDir dir("cli");
  CommandResult r = run_kiln("compile " + small_model(dir) + " --report " + dir.file("r.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("partition"), std::string::npos);
  std::ifstream in(dir.file("r.json"));
  auto report = nlohmann::json::parse(in);
  EXPECT_EQ(report["schema_version"], 1);
  ASSERT_EQ(report["partition"]["nodes"].size(), 1u);  // Relu -> Neg fused into one chain on cpu
  EXPECT_EQ(report["partition"]["nodes"][0]["provider"], "cpu");
}

TEST(Cli, CompileWritesAnArtifactOrAClassifiedError) {
  ScratchDir dir("cli");
  CommandResult r = run_kiln("compile " + small_model(dir) + " -o " + dir.file("small.kiln"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("artifact   " + dir.file("small.kiln")), std::string::npos) << r.output;
  std::ifstream in(dir.file("small.kiln"), std::ios::binary);
  std::string magic(4, '\0');
  in.read(magic.data(), 4);
  EXPECT_EQ(magic, "KILN");
  CommandResult bad = run_kiln("compile " + small_model(dir) + " -o " + dir.file("no/such/folder/small.kiln"));
  EXPECT_GE(bad.exit_code, 10) << bad.output;
  EXPECT_NE(bad.output.find("error ("), std::string::npos) << bad.output;
  EXPECT_NE(bad.output.find("no/such/folder"), std::string::npos) << bad.output;
}

TEST(Cli, KeygenSignAndVerifyAnArtifact) {
  ScratchDir dir("cli");
  const std::string artifact = dir.file("small.kiln");
  ASSERT_EQ(run_kiln("compile " + small_model(dir) + " -o " + artifact).exit_code, 0);
  ASSERT_EQ(run_kiln("keygen --out " + dir.file("key")).exit_code, 0);
  ASSERT_EQ(run_kiln("keygen --out " + dir.file("other")).exit_code, 0);
  EXPECT_EQ(std::filesystem::status(dir.file("key.sk")).permissions() & std::filesystem::perms::others_read,
            std::filesystem::perms::none);
  CommandResult unsigned_check = run_kiln("verify " + artifact + " --require-signature");
  EXPECT_EQ(unsigned_check.exit_code, 19) << unsigned_check.output;  // integrity_failure
  ASSERT_EQ(run_kiln("sign " + artifact + " --key " + dir.file("key.sk")).exit_code, 0);
  CommandResult good = run_kiln("verify " + artifact + " --pubkey " + dir.file("key.pk"));
  EXPECT_EQ(good.exit_code, 0) << good.output;
  for (const char* check : {"structure  ok", "manifest   ok", "section    ok: weights", "signature  ok: signed by", "target     ok"})
    EXPECT_NE(good.output.find(check), std::string::npos) << check << "\n" << good.output;
  CommandResult wrong = run_kiln("verify " + artifact + " --pubkey " + dir.file("other.pk"));
  EXPECT_EQ(wrong.exit_code, 19) << wrong.output;
  EXPECT_NE(wrong.output.find("signature  FAILED"), std::string::npos) << wrong.output;
  CommandResult bad_key = run_kiln("sign " + artifact + " --key " + dir.file("key.pk"));
  EXPECT_EQ(bad_key.exit_code, 14) << bad_key.output;  // invalid_argument: a public key is not a secret key
  EXPECT_NE(bad_key.output.find("key.pk"), std::string::npos) << bad_key.output;
}

TEST(Cli, VerifySaysWhenAnArtifactWasCompiledForAnotherTarget) {
  ScratchDir dir("cli");
  const std::string artifact = dir.file("avx2.kiln");
  ASSERT_EQ(run_kiln("compile " + small_model(dir) + " --isa avx2 -o " + artifact).exit_code, 0);
  const CommandResult here = run_kiln("verify " + artifact);
  EXPECT_EQ(here.exit_code, 0) << here.output;
  // Compiled for AVX2: a note on an AVX-512 machine, none on an AVX2 one or at the same cap.
  const bool other = target::host_target().level != "avx2";
  EXPECT_EQ(here.output.find("note       compiled for avx2, this target is " + target::host_target().level) != std::string::npos,
            other)
      << here.output;
  const CommandResult capped = run_kiln("verify " + artifact + " --isa avx2");
  EXPECT_EQ(capped.exit_code, 0) << capped.output;
  EXPECT_EQ(capped.output.find("note"), std::string::npos) << capped.output;
}

// x[1,16,8,8] -> MaxPool 2x2 -> y: a region with no weights, so an artifact of it needs no CPU
// feature, only its layout.
std::string pool_model(const ScratchDir& dir) {
  ModelBuilder b(13);
  b.input("x", onnx::TensorProto::FLOAT, {int64_t{1}, int64_t{16}, int64_t{8}, int64_t{8}});
  b.output("y", onnx::TensorProto::FLOAT, {int64_t{1}, int64_t{16}, int64_t{4}, int64_t{4}});
  onnx::NodeProto& pool = b.node("MaxPool", {"x"}, {"y"}, "pool");
  for (const char* name : {"kernel_shape", "strides"}) {
    onnx::AttributeProto* window = pool.add_attribute();
    window->set_name(name);
    window->set_type(onnx::AttributeProto::INTS);
    window->add_ints(2);
    window->add_ints(2);
  }
  return b.save(dir.file("pool.onnx"));
}

TEST(Cli, AnArtifactInALayoutTheTargetLacksIsRefusedOrFallsBackByPolicy) {
  if (target::host_target().vector_bits < 512) GTEST_SKIP() << "this machine compiles NCHW8c, which every level runs";
  ScratchDir dir("cli");
  const std::string artifact = dir.file("pool16.kiln");
  ASSERT_EQ(run_kiln("compile " + pool_model(dir) + " -o " + artifact).exit_code, 0);  // NCHW16c here
  const CommandResult refused = run_kiln("run " + artifact + " --input x=random --isa avx2");
  EXPECT_EQ(refused.exit_code, 12) << refused.output;  // unsupported_operator: fail closed
  EXPECT_NE(refused.output.find("NCHW16c activations on this target"), std::string::npos) << refused.output;
  const CommandResult fallback = run_kiln("run " + artifact + " --input x=random --isa avx2 --allow-fallback cpu_ref");
  EXPECT_EQ(fallback.exit_code, 0) << fallback.output;
  EXPECT_NE(fallback.output.find("fallback 1 nodes"), std::string::npos) << fallback.output;
}

TEST(Cli, CompileStoresAssetsAndRefusesMissingOnes) {
  ScratchDir dir("cli");
  const std::string model = small_model(dir);
  ASSERT_TRUE(io::write_file_atomic(dir.file("labels.txt"), "a\nb\n").is_ok());
  CommandResult stored = run_kiln("compile " + model + " -o " + dir.file("a.kiln") + " --asset labels=" + dir.file("labels.txt"));
  ASSERT_EQ(stored.exit_code, 0) << stored.output;
  CommandResult shown = run_kiln("inspect " + dir.file("a.kiln"));
  EXPECT_NE(shown.output.find("asset      labels: 4 bytes"), std::string::npos) << shown.output;
  CommandResult ran = run_kiln("run " + dir.file("a.kiln") + " --input x=random --iterations 2");
  EXPECT_EQ(ran.exit_code, 0) << ran.output;
  EXPECT_NE(ran.output.find("warm-up    1 run(s) on artifact fixtures"), std::string::npos) << ran.output;
  EXPECT_NE(ran.output.find("outputs match the recorded ones; ready"), std::string::npos) << ran.output;
  EXPECT_NE(ran.output.find("run        2 runs"), std::string::npos) << "warm-up is not a timed run\n" << ran.output;
  CommandResult missing = run_kiln("compile " + model + " -o " + dir.file("b.kiln") + " --asset vocab=" + dir.file("none.txt"));
  EXPECT_EQ(missing.exit_code, 20) << missing.output;  // not_found
  EXPECT_NE(missing.output.find("asset 'vocab'"), std::string::npos) << missing.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("b.kiln")));
  EXPECT_EQ(run_kiln("compile " + model + " -o " + dir.file("b.kiln") + " --asset novalue").exit_code, 14);
  CommandResult bad_isa = run_kiln("compile " + model + " --isa avx9");
  EXPECT_EQ(bad_isa.exit_code, 14) << bad_isa.output;
  EXPECT_NE(bad_isa.output.find("avx512_core"), std::string::npos) << bad_isa.output;
}

TEST(Cli, EagerRunDumpsEveryValueInNodeOrder) {
  ScratchDir dir("cli");
  CommandResult r = run_kiln("run " + small_model(dir) + " --mode eager --input x=random:3 --shape x=2x3 --dump-values " +
                             dir.file("values"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::ifstream listing(dir.file("values/values.json"));
  const nlohmann::json values = nlohmann::json::parse(listing);
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[0]["node"], "relu");
  EXPECT_EQ(values[0]["value"], "r");
  EXPECT_EQ(values[1]["value"], "y");
  auto r_values = read_tensor_file(dir.file("values/" + values[0]["file"].get<std::string>()));
  ASSERT_TRUE(r_values.is_ok()) << r_values.status().to_string();
  EXPECT_EQ(r_values.value().shape(), (std::vector<int64_t>{2, 3}));
  for (int64_t i = 0; i < 6; ++i) EXPECT_GE(r_values.value().data<float>()[i], 0.0f) << "Relu's output";
  CommandResult bad = run_kiln("run " + small_model(dir) + " --mode turbo --input x=random");
  EXPECT_EQ(bad.exit_code, 14) << bad.output;
  EXPECT_NE(bad.output.find("jit"), std::string::npos) << bad.output;
}

TEST(Cli, InspectAndDiffArtifacts) {
  ScratchDir dir("cli");
  const std::string model = small_model(dir);
  ASSERT_EQ(run_kiln("compile " + model + " -o " + dir.file("a.kiln")).exit_code, 0);
  ASSERT_EQ(run_kiln("compile " + model + " -o " + dir.file("same.kiln")).exit_code, 0);
  ASSERT_EQ(run_kiln("compile " + model + " --threads 1 --no-optimize -o " + dir.file("b.kiln")).exit_code, 0);
  CommandResult shown = run_kiln("inspect " + dir.file("a.kiln"));
  EXPECT_EQ(shown.exit_code, 0) << shown.output;
  for (const char* line : {"every hash checked", "source     small.onnx sha256", "partition  cpu x1", "section    plan:", "signature  unsigned"})
    EXPECT_NE(shown.output.find(line), std::string::npos) << line << "\n" << shown.output;
  CommandResult same = run_kiln("diff " + dir.file("a.kiln") + " " + dir.file("same.kiln"));
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_NE(same.output.find("same:"), std::string::npos) << same.output;
  CommandResult differ = run_kiln("diff " + dir.file("a.kiln") + " " + dir.file("b.kiln"));
  EXPECT_EQ(differ.exit_code, 1) << differ.output;
  for (const char* line : {"options.threads: 0 -> 1", "options.optimize: true -> false", "partition:"})
    EXPECT_NE(differ.output.find(line), std::string::npos) << line << "\n" << differ.output;
  CommandResult missing = run_kiln("diff " + dir.file("a.kiln") + " " + dir.file("none.kiln"));
  EXPECT_EQ(missing.exit_code, 10 + static_cast<int>(StatusCode::kNotFound)) << missing.output;
}

TEST(Cli, RunWritesOutputsAndReport) {
  ScratchDir dir("cli");
  CommandResult r = run_kiln("run " + small_model(dir) + " --input x=random:3 --shape x=2x3 --output-dir " +
                             dir.file("out") + " --report " + dir.file("r.json") + " --iterations 3 --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(std::filesystem::exists(dir.file("out/y.npy")));
  EXPECT_NE(r.output.find("y: float[2,3]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("steady median"), std::string::npos) << r.output;
  std::ifstream in(dir.file("r.json"));
  EXPECT_EQ(nlohmann::json::parse(in)["run"]["runs"], 3);
}

// `kiln replay`: calls with varying shapes in order; jit builds one variant per new shape (the
// load's, N as 1, then N = 4 and 7) and reuses it on a repeat (calls 0 and 2), and the figures file carries the report's execution and guards sections.
TEST(Cli, ReplayRunsCallsInOrderAndCountsTheVariantsItBuilt) {
  ScratchDir dir("cli");
  write_bytes(dir.file("calls.json"), R"([{"x": [1, 3]}, {"x": [4, 3]}, {"x": [1, 3]}, {"x": [7, 3]}])");
  CommandResult r = run_kiln("replay " + small_model(dir) + " --calls " + dir.file("calls.json") + " --mode jit --json " +
                             dir.file("replay.json") + " --threads 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("4 calls in"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("3 variants built, 0 evicted"), std::string::npos) << r.output;
  std::ifstream in(dir.file("replay.json"));
  const nlohmann::json figures = nlohmann::json::parse(in);
  EXPECT_EQ(figures["mode"], "jit");
  EXPECT_EQ(figures["calls"], 4);
  EXPECT_EQ(figures["latencies_ms"].size(), 4u);
  EXPECT_EQ(figures["execution"]["variants_built"], 3);
  EXPECT_EQ(figures["execution"]["cache_hits"], 2);
  EXPECT_TRUE(figures["guards"].is_object()) << figures.dump();
  // A call naming no model input is refused, naming the call and the name.
  write_bytes(dir.file("bad.json"), R"([{"x": [1, 3]}, {"z": [1, 3]}])");
  r = run_kiln("replay " + small_model(dir) + " --calls " + dir.file("bad.json"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("call 1 names 'z'"), std::string::npos) << r.output;
}

// The warm-up runs on the inputs given: random data would be out of range for an axes input.
TEST(Cli, RunWarmsUpOnTheInputsItWasGiven) {
  ScratchDir dir("cli");
  ModelBuilder b(13);
  b.input("x", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{3}});
  b.input("axes", onnx::TensorProto::INT64, {int64_t{1}});
  b.output("y", onnx::TensorProto::FLOAT, {int64_t{2}, int64_t{1}});
  b.node("ReduceSum", {"x", "axes"}, {"y"}, "sum");
  const std::string model = b.save(dir.file("sum.onnx"));
  ASSERT_TRUE(write_npy_file(dir.file("x.npy"), Tensor::from_vector<float>(DType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6})).is_ok());
  ASSERT_TRUE(write_npy_file(dir.file("axes.npy"), Tensor::from_vector<int64_t>(DType::kInt64, {1}, {1})).is_ok());
  CommandResult r = run_kiln("run " + model + " --input x=" + dir.file("x.npy") + " --input axes=" + dir.file("axes.npy") +
                             " --providers cpu --allow-fallback cpu_ref --output-dir " + dir.file("out") + " --report " +
                             dir.file("r.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  Result<Tensor> y = read_tensor_file(dir.file("out/y.npy"));
  ASSERT_TRUE(y.is_ok()) << y.status().to_string();
  EXPECT_EQ(y->data<float>()[0], 6.0f);
  EXPECT_EQ(y->data<float>()[1], 15.0f);
  std::ifstream in(dir.file("r.json"));
  EXPECT_EQ(nlohmann::json::parse(in)["warmup"]["fixtures"], "given");
}

TEST(Cli, BenchWritesTimingsAndAChromeTraceNamingOnnxNodes) {
  ScratchDir dir("cli");
  CommandResult r = run_kiln("bench " + small_model(dir) + " --shape x=4x3 --warmup 1 --runs 5 --threads 1 --providers cpu "
                             "--json " + dir.file("b.json") + " --profile " + dir.file("trace.json") + " --output-dir " +
                             dir.file("out"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("median"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ElementwiseChain"), std::string::npos) << r.output;  // Relu + Neg, fused for cpu
  std::ifstream bench_file(dir.file("b.json"));
  const auto bench = nlohmann::json::parse(bench_file);
  EXPECT_EQ(bench["runner"], "kiln");
  EXPECT_EQ(bench["samples_ms"].size(), 5u);
  const auto& latency = bench["latency_ms"];
  EXPECT_LE(latency["min"].get<double>(), latency["median"].get<double>());
  EXPECT_LE(latency["median"].get<double>(), latency["p90"].get<double>());
  EXPECT_LE(latency["p90"].get<double>(), latency["max"].get<double>());
  std::ifstream trace_file(dir.file("trace.json"));
  const auto events = nlohmann::json::parse(trace_file)["traceEvents"];
  ASSERT_EQ(events.size(), 5u);  // 1 kernel x 5 runs
  EXPECT_EQ(events[0]["ph"], "X");
  EXPECT_EQ(events[0]["cat"], "cpu");
  EXPECT_EQ(events[0]["args"]["onnx_nodes"], nlohmann::json::array({"relu", "neg"}));
  EXPECT_TRUE(std::filesystem::exists(dir.file("out/y.npy")));
}

// The kernel list names each kernel's implementation; a scalar loop (float64 Atan: the registry's
// element function; vector_math's arctangent is float32) taking most of the run is warned about; a
// vector kernel is not.
TEST(Cli, BenchNamesImplementationsAndWarnsAboutScalarLoops) {
  ScratchDir dir("cli");
  ModelBuilder b;
  b.input("x", onnx::TensorProto::DOUBLE, {int64_t{64}, int64_t{1024}});
  b.output("y", onnx::TensorProto::FLOAT, {int64_t{64}, int64_t{1024}});
  b.node("Atan", {"x"}, {"s"}, "arctangent");
  onnx::AttributeProto* to = b.node("Cast", {"s"}, {"f"}, "to_float").add_attribute();
  to->set_name("to");
  to->set_type(onnx::AttributeProto::INT);
  to->set_i(onnx::TensorProto::FLOAT);
  b.node("Relu", {"f"}, {"y"}, "relu");
  const std::string model = b.save(dir.file("arctangent.onnx"));
  CommandResult r = run_kiln("bench " + model + " --warmup 1 --runs 3 --threads 1 --providers cpu --json " + dir.file("b.json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("kiln:element-function"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("warning: Atan runs kiln:element-function (a scalar loop)"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("warning: Relu"), std::string::npos) << r.output;
  std::ifstream bench_file(dir.file("b.json"));
  const auto bench = nlohmann::json::parse(bench_file);
  bool listed = false;
  for (const auto& k : bench["kernels"]) {
    if (k["op_type"] != "Atan") continue;
    listed = true;
    EXPECT_EQ(k["implementation"], "kiln:element-function");
    EXPECT_TRUE(k["scalar_loop"].get<bool>());
  }
  EXPECT_TRUE(listed);
}

TEST(Cli, ExpectRecordsParityAndFailsBeyondTolerance) {
  ScratchDir dir("cli");
  const std::string model = small_model(dir);
  ASSERT_EQ(run_kiln("run " + model + " --input x=random:3 --output-dir " + dir.file("a")).exit_code, 0);
  ASSERT_EQ(run_kiln("run " + model + " --input x=random:4 --output-dir " + dir.file("b")).exit_code, 0);

  CommandResult same = run_kiln("run " + model + " --input x=random:3 --expect y=" + dir.file("a/y.npy") +
                                " --report " + dir.file("same.json"));
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_NE(same.output.find("y: max abs error 0"), std::string::npos) << same.output;
  std::ifstream in(dir.file("same.json"));
  auto report = nlohmann::json::parse(in);
  EXPECT_EQ(report["parity"][0]["output"], "y");
  EXPECT_EQ(report["parity"][0]["max_abs_error"], 0.0);

  CommandResult differ = run_kiln("run " + model + " --input x=random:3 --expect y=" + dir.file("b/y.npy"));
  EXPECT_EQ(differ.exit_code, 18) << differ.output;
  EXPECT_NE(differ.output.find("error (numerical_issue)"), std::string::npos) << differ.output;
}

TEST(Cli, BadInputsFailWithClassifiedErrorAndNoOutputFile) {
  ScratchDir dir("cli");
  const std::string model = small_model(dir);
  write_bytes(dir.file("bad.npy"), std::string("\x93NUMPY\x01\x00\x10\x00{'descr': garbage", 26));
  write_bytes(dir.file("random.onnx"), std::string("\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01\x12\x05hello", 17));
  std::string truncated;
  {
    std::ifstream in(model, std::ios::binary);
    truncated.assign(std::istreambuf_iterator<char>(in), {});
  }
  write_bytes(dir.file("truncated.onnx"), truncated.substr(0, truncated.size() / 2));
  ASSERT_TRUE(write_npy_file(dir.file("x2.npy"), random_tensor(DType::kFloat, {2, 3}, 1)).is_ok());
  struct Case {
    std::string args;
    std::string code;
    std::string text;
  };
  const std::vector<Case> cases = {
      {"run " + model + " --input x=" + dir.file("bad.npy"), "invalid_argument", "bad.npy"},
      {"run " + model, "invalid_argument", "missing input 'x'"},
      {"run " + model + " --input q=random", "invalid_argument", "'q'"},
      {"run " + model + " --input x=random --shape x=2x4", "invalid_argument", "dim 1"},
      {"run " + model + " --input x=" + dir.file("x2.npy") + " --shape x=4x3 --specialize", "shape_guard_failure",
       "'x' dim 0 is 2"},
      {"run " + dir.file("truncated.onnx") + " --input x=random", "invalid_model", ""},
      {"run " + dir.file("random.onnx") + " --input x=random", "invalid_model", ""},
      {"run " + dir.file("missing.onnx") + " --input x=random", "not_found", "missing.onnx"},
      {"run " + model + " --input x=random --providers tpu", "unsupported_target", "tpu"},
  };
  for (const Case& c : cases) {
    CommandResult r = run_kiln(c.args + " --output-dir " + dir.file("out") + " --report " + dir.file("r.json"));
    EXPECT_GE(r.exit_code, 10) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find("error (" + c.code + ")"), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.text), std::string::npos) << c.args << "\n" << r.output;
    EXPECT_FALSE(std::filesystem::exists(dir.file("out/y.npy"))) << c.args;
    EXPECT_FALSE(std::filesystem::exists(dir.file("r.json"))) << c.args;
  }
}

TEST(Cli, CacheListsCountsAndClearsTheObjectsJitGenerated) {
  ScratchDir dir("cli");
  const std::string model = small_model(dir);  // Relu -> Neg: one element-wise chain
  const std::string env = "KILN_CACHE_DIR=" + dir.file("cache") + " ";
  CommandResult run = run_kiln_with(env, "run " + model + " --mode jit --shape x=2x3 --input x=random");
  ASSERT_EQ(run.exit_code, 0) << run.output;
  // A kernel timing beside the objects, as a tuned session leaves one (providers/tuning.h).
  ASSERT_TRUE(io::ObjectCache(dir.file("cache") + "/tactics", 1 << 20, ".json")
                  .insert_bytes(std::string(64, 'a'), R"({"key": "k", "candidate_ms": {}, "chosen": "direct"})")
                  .is_ok());
  CommandResult stats = run_kiln_with(env, "cache stats");
  EXPECT_EQ(stats.exit_code, 0) << stats.output;
  EXPECT_NE(stats.output.find("objects    1"), std::string::npos) << stats.output;
  EXPECT_NE(stats.output.find("timings    1"), std::string::npos) << stats.output;
  EXPECT_NE(stats.output.find(dir.file("cache")), std::string::npos) << stats.output;
  CommandResult ls = run_kiln_with(env, "cache ls");
  EXPECT_EQ(ls.exit_code, 0) << ls.output;
  EXPECT_NE(ls.output.find(" bytes  last used "), std::string::npos) << ls.output;
  CommandResult clear = run_kiln_with(env, "cache clear");
  EXPECT_EQ(clear.exit_code, 0) << clear.output;
  EXPECT_NE(clear.output.find("removed 1 object(s)"), std::string::npos) << clear.output;
  EXPECT_NE(clear.output.find("and 1 timing(s)"), std::string::npos) << clear.output;
  EXPECT_NE(run_kiln_with(env, "cache stats").output.find("objects    0"), std::string::npos);
  CommandResult bare = run_kiln_with(env, "cache");
  EXPECT_NE(bare.exit_code, 0) << bare.output;  // ls, stats or clear is required
}

TEST(Cli, RunLimitsStopALongLoop) {
  ScratchDir dir("cli-limits");
  const std::string model = testing::loop_model(dir, false, false, int64_t{1'000'000'000'000});
  const std::string x = dir.file("x.npy");
  ASSERT_TRUE(write_npy_file(x, Tensor::from_vector<float>(DType::kFloat, {1}, {0.0f})).is_ok());
  CommandResult refused = run_kiln("run " + model + " --input x=" + x);
  EXPECT_EQ(refused.exit_code, 14) << refused.output;  // invalid_argument: above the default bound
  EXPECT_NE(refused.output.find("count_up"), std::string::npos) << refused.output;
  CommandResult timed_out = run_kiln("run " + model + " --input x=" + x + " --max-loop-iterations 0 --timeout 50");
  EXPECT_EQ(timed_out.exit_code, 22) << timed_out.output;  // cancelled
  EXPECT_NE(timed_out.output.find("deadline (timeout 50 ms)"), std::string::npos) << timed_out.output;
}

TEST(Cli, MemoryLimitRefusesARunPastItBeforeItAllocates) {
  ScratchDir dir("cli-memory");
  const std::string model = small_model(dir);
  CommandResult refused = run_kiln("run " + model + " --input x=random:3 --shape x=100000x3 --memory-limit 64K");
  EXPECT_EQ(refused.exit_code, 16) << refused.output;  // allocation_failure
  EXPECT_NE(refused.output.find("memory limit 65536 bytes"), std::string::npos) << refused.output;
  EXPECT_NE(refused.output.find("largest buffers"), std::string::npos) << refused.output;
  CommandResult fits = run_kiln("run " + model + " --input x=random:3 --shape x=2x3 --memory-limit 1MiB --report " + dir.file("r.json"));
  ASSERT_EQ(fits.exit_code, 0) << fits.output;
  std::ifstream in(dir.file("r.json"));
  EXPECT_EQ(nlohmann::json::parse(in)["memory"]["limit_bytes"], 1 << 20);
  for (const char* bad : {"12Q", "-5", "G", "99999999999T"}) {
    CommandResult r = run_kiln("run " + model + " --input x=random:3 --memory-limit=" + bad);
    EXPECT_EQ(r.exit_code, 14) << bad << ": " << r.output;  // invalid_argument
    EXPECT_NE(r.output.find("--memory-limit"), std::string::npos) << r.output;
  }
}

// A model input or output of type seq(float) or optional(float[2]).
void set_sequence_type(onnx::ValueInfoProto* v, const std::string& name) {
  v->set_name(name);
  v->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}
void set_optional_type(onnx::ValueInfoProto* v, const std::string& name) {
  v->set_name(name);
  auto* tensor = v->mutable_type()->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  tensor->mutable_shape()->add_dim()->set_dim_value(2);
}

Tensor floats(const std::vector<float>& values) {
  return Tensor::from_vector<float>(DType::kFloat, {static_cast<int64_t>(values.size())}, values);
}

// seq_out = SequenceInsert(seq_in, x): a sequence read from a SequenceProto .pb, written back as
// one, and compared element by element by --expect.
TEST(Cli, RunReadsWritesAndComparesSequences) {
  ScratchDir dir("cli-seq");
  ModelBuilder b;
  set_sequence_type(b.graph().add_input(), "seq_in");
  b.input("x", onnx::TensorProto::FLOAT, {int64_t{2}});
  set_sequence_type(b.graph().add_output(), "seq_out");
  b.node("SequenceInsert", {"seq_in", "x"}, {"seq_out"}, "insert");
  const std::string model = b.save(dir.file("seq.onnx"));
  ASSERT_TRUE(write_value_file(dir.file("seq.pb"), Value::sequence(DType::kFloat, {floats({1, 2, 3})})).is_ok());
  ASSERT_TRUE(write_npy_file(dir.file("x.npy"), floats({4, 5})).is_ok());
  const std::string inputs = " --input seq_in=" + dir.file("seq.pb") + " --input x=" + dir.file("x.npy");

  CommandResult r = run_kiln("run " + model + inputs + " --output-dir " + dir.file("out"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("seq_out: seq(float)[2 elements]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("seq_out[1]: float[2]"), std::string::npos) << r.output;
  auto written = read_value_file(dir.file("out/seq_out.pb"), Value::Kind::kSequence, DType::kFloat);
  ASSERT_TRUE(written.is_ok()) << written.status().to_string();
  ASSERT_EQ(written->elements().size(), 2u);
  EXPECT_EQ(written->elements()[0].shape(), std::vector<int64_t>{3});
  EXPECT_EQ(written->elements()[1].data<float>()[1], 5.0f);

  CommandResult same = run_kiln("run " + model + inputs + " --expect seq_out=" + dir.file("out/seq_out.pb"));
  EXPECT_EQ(same.exit_code, 0) << same.output;
  EXPECT_NE(same.output.find("seq_out[0]: max abs error 0"), std::string::npos) << same.output;
  EXPECT_NE(same.output.find("seq_out[1]: max abs error 0"), std::string::npos) << same.output;
  ASSERT_TRUE(write_value_file(dir.file("short.pb"), Value::sequence(DType::kFloat, {floats({1, 2, 3})})).is_ok());
  CommandResult shorter = run_kiln("run " + model + inputs + " --expect seq_out=" + dir.file("short.pb"));
  EXPECT_EQ(shorter.exit_code, 18) << shorter.output;  // numerical_issue
  EXPECT_NE(shorter.output.find("2 elements vs reference 1"), std::string::npos) << shorter.output;

  CommandResult as_npy = run_kiln("run " + model + " --input seq_in=" + dir.file("x.npy") + " --input x=" + dir.file("x.npy"));
  EXPECT_EQ(as_npy.exit_code, 14) << as_npy.output;  // invalid_argument
  EXPECT_NE(as_npy.output.find("input 'seq_in'"), std::string::npos) << as_npy.output;
  EXPECT_NE(as_npy.output.find("SequenceProto"), std::string::npos) << as_npy.output;
}

// has = OptionalHasElement(opt), same = Identity(opt): an empty optional and a full one read from
// OptionalProto files, written back as OptionalProto files and compared by --expect.
TEST(Cli, RunReadsWritesAndComparesOptionalsEmptyOrFull) {
  ScratchDir dir("cli-optional");
  ModelBuilder b(18);
  set_optional_type(b.graph().add_input(), "opt");
  b.output("has", onnx::TensorProto::BOOL, {});
  set_optional_type(b.graph().add_output(), "same");
  b.node("OptionalHasElement", {"opt"}, {"has"}, "has");
  b.node("Identity", {"opt"}, {"same"}, "same");
  const std::string model = b.save(dir.file("optional.onnx"));
  ASSERT_TRUE(write_value_file(dir.file("empty.pb"), Value::empty_optional()).is_ok());
  ASSERT_TRUE(write_value_file(dir.file("full.pb"), Value::optional_of(floats({1.5f, -2}))).is_ok());

  for (const std::string kind : {"empty", "full"}) {
    const std::string out = dir.file("out-" + kind);
    CommandResult r = run_kiln("run " + model + " --input opt=" + dir.file(kind + ".pb") + " --output-dir " + out);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find(kind == "empty" ? "same: optional(none)" : "same: optional(float[2])"), std::string::npos)
        << r.output;
    auto has = read_tensor_file(out + "/has.npy");
    ASSERT_TRUE(has.is_ok()) << has.status().to_string();
    EXPECT_EQ(has->data<bool>()[0], kind == "full");
    auto same = read_value_file(out + "/same.pb", Value::Kind::kOptional, DType::kFloat);
    ASSERT_TRUE(same.is_ok()) << same.status().to_string();
    EXPECT_EQ(same->has_element(), kind == "full");
    CommandResult expect = run_kiln("run " + model + " --input opt=" + dir.file(kind + ".pb") + " --expect same=" +
                                    out + "/same.pb --expect has=" + out + "/has.npy");
    EXPECT_EQ(expect.exit_code, 0) << expect.output;
    EXPECT_NE(expect.output.find("parity     same: max abs error 0"), std::string::npos) << expect.output;
  }
  CommandResult mismatch = run_kiln("run " + model + " --input opt=" + dir.file("empty.pb") + " --expect same=" +
                                    dir.file("full.pb"));
  EXPECT_EQ(mismatch.exit_code, 18) << mismatch.output;
  EXPECT_NE(mismatch.output.find("optional(none) vs reference optional(float[2])"), std::string::npos) << mismatch.output;
}

// y = Identity(x), f = Cast(x, float) on bfloat16: the input from a uint16 .npy of bfloat16 bits, a
// UINT16 .pb and a BFLOAT16 .pb; the output written as a uint16 .npy and read back by --expect in
// either form; any other input dtype is refused naming the input.
TEST(Cli, RunTakesBfloat16AsUint16BitsAndWritesItBack) {
  ScratchDir dir("cli-bf16");
  ModelBuilder b;
  b.input("x", onnx::TensorProto::BFLOAT16, {int64_t{3}});
  b.output("y", onnx::TensorProto::BFLOAT16, {int64_t{3}});
  b.output("f", onnx::TensorProto::FLOAT, {int64_t{3}});
  b.node("Identity", {"x"}, {"y"}, "same");
  ModelBuilder::int_attribute(b.node("Cast", {"x"}, {"f"}, "widen"), "to", onnx::TensorProto::FLOAT);
  const std::string model = b.save(dir.file("bf16.onnx"));
  const std::vector<uint16_t> bits = {0x3F80, 0xC000, 0x3F00};  // 1, -2, 0.5
  const Tensor as_uint16 = Tensor::from_vector<uint16_t>(DType::kUInt16, {3}, bits);
  Tensor as_bfloat16 = Tensor::allocate(DType::kBFloat16, {3});
  for (int i = 0; i < 3; ++i) as_bfloat16.data<BFloat16>()[i].bits = bits[static_cast<size_t>(i)];
  ASSERT_TRUE(write_npy_file(dir.file("x.npy"), as_uint16).is_ok());
  ASSERT_TRUE(write_value_file(dir.file("x_uint16.pb"), as_uint16).is_ok());
  ASSERT_TRUE(write_value_file(dir.file("x_bfloat16.pb"), as_bfloat16).is_ok());
  ASSERT_TRUE(write_npy_file(dir.file("f.npy"), floats({1, -2, 0.5f})).is_ok());

  for (const char* file : {"x.npy", "x_uint16.pb", "x_bfloat16.pb"}) {
    const std::string out = dir.file(std::string("out-") + file);
    CommandResult r = run_kiln("run " + model + " --input x=" + dir.file(file) + " --expect f=" + dir.file("f.npy") +
                               " --output-dir " + out);
    ASSERT_EQ(r.exit_code, 0) << file << "\n" << r.output;
    EXPECT_NE(r.output.find("y: bfloat16[3] (.npy: its uint16 bits)"), std::string::npos) << r.output;
    auto y = read_tensor_file(out + "/y.npy");
    ASSERT_TRUE(y.is_ok()) << y.status().to_string();
    ASSERT_EQ(y->dtype(), DType::kUInt16);
    EXPECT_EQ(std::vector<uint16_t>(y->data<uint16_t>(), y->data<uint16_t>() + 3), bits) << file;
  }
  for (const char* reference : {"out-x.npy/y.npy", "x_bfloat16.pb", "x_uint16.pb"}) {
    CommandResult r = run_kiln("run " + model + " --input x=" + dir.file("x.npy") + " --expect y=" + dir.file(reference));
    EXPECT_EQ(r.exit_code, 0) << reference << "\n" << r.output;
    EXPECT_NE(r.output.find("parity     y: max abs error 0"), std::string::npos) << r.output;
  }
  ASSERT_TRUE(write_npy_file(dir.file("x_float.npy"), floats({1, -2, 0.5f})).is_ok());
  CommandResult wrong = run_kiln("run " + model + " --input x=" + dir.file("x_float.npy"));
  EXPECT_EQ(wrong.exit_code, 14) << wrong.output;  // invalid_argument
  EXPECT_NE(wrong.output.find("input 'x'"), std::string::npos) << wrong.output;
  EXPECT_NE(wrong.output.find("bfloat16"), std::string::npos) << wrong.output;
}

}  // namespace
}  // namespace kiln

namespace kiln {
namespace {

// y[N, 4] = x[N, 8] x W[8, 4] + b: one matrix product with constant weights.
std::string product_model(const ScratchDir& dir) {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {std::string("N"), int64_t{8}});
  b.output("y", onnx::TensorProto::FLOAT, {std::string("N"), int64_t{4}});
  std::vector<float> w(32);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * float(int(i % 7) - 3);
  b.float_initializer("w", {8, 4}, w);
  b.float_initializer("b", {4}, {0.1f, -0.2f, 0.3f, 0.0f});
  b.node("Gemm", {"x", "w", "b"}, {"y"}, "dense");
  return b.save(dir.file("product.onnx"));
}

TEST(Cli, PrecisionIsMeasuredOnValidationFoldersAndShownByInspectAndVerify) {
  ScratchDir dir("cli-precision");
  const std::string model = product_model(dir);
  std::filesystem::create_directories(dir.file("empty"));
  CommandResult empty = run_kiln("compile " + model + " --precision int8 --validation " + dir.file("empty"));
  EXPECT_EQ(empty.exit_code, 14) << empty.output;
  EXPECT_NE(empty.output.find(dir.file("empty")), std::string::npos) << empty.output;

  std::filesystem::create_directories(dir.file("sets/a"));
  std::filesystem::create_directories(dir.file("sets/b"));
  ASSERT_TRUE(write_npy_file(dir.file("sets/a/x.npy"), random_tensor(DType::kFloat, {3, 8}, 1)).is_ok());
  ASSERT_TRUE(write_npy_file(dir.file("sets/b/image.npy"), random_tensor(DType::kFloat, {3, 8}, 2)).is_ok());
  CommandResult misnamed = run_kiln("compile " + model + " --shape x=3x8 --precision int8 --validation " + dir.file("sets"));
  EXPECT_EQ(misnamed.exit_code, 14) << misnamed.output;
  for (const std::string& part : {dir.file("sets/b"), std::string("image")})
    EXPECT_NE(misnamed.output.find(part), std::string::npos) << misnamed.output;

  std::filesystem::remove(dir.file("sets/b/image.npy"));
  ASSERT_TRUE(write_npy_file(dir.file("sets/b/x.npy"), random_tensor(DType::kFloat, {3, 8}, 2)).is_ok());
  CommandResult compiled = run_kiln("compile " + model + " --shape x=3x8 --precision int8 --validation " + dir.file("sets") + " -o " +
                                    dir.file("product.kiln"));
  ASSERT_EQ(compiled.exit_code, 0) << compiled.output;
  EXPECT_NE(compiled.output.find("precision  int8: 1 of 1 products; vs fp32 on 2 given input sets"), std::string::npos) << compiled.output;
  for (const char* command : {"inspect ", "verify "}) {
    CommandResult shown = run_kiln(command + dir.file("product.kiln"));
    EXPECT_EQ(shown.exit_code, 0) << shown.output;
    EXPECT_NE(shown.output.find("precision  int8: 1 of 1 products; vs fp32 on 2 given input sets: 'y' max abs"), std::string::npos)
        << command << shown.output;
  }
}

TEST(Cli, CalibrateFixesTheInt8ScalesWhichInspectVerifyAndTheExportShow) {
  ScratchDir dir("cli-calibrate");
  const std::string model = product_model(dir);
  std::filesystem::create_directories(dir.file("empty"));
  CommandResult empty = run_kiln("compile " + model + " --shape x=3x8 --precision int8 --calibrate " + dir.file("empty"));
  EXPECT_EQ(empty.exit_code, 14) << empty.output;
  for (const std::string& part : {std::string("--calibrate"), dir.file("empty")})
    EXPECT_NE(empty.output.find(part), std::string::npos) << empty.output;
  CommandResult method = run_kiln("compile " + model + " --precision int8 --calibrate " + dir.file("empty") + " --calibration-method mean");
  EXPECT_NE(method.exit_code, 0) << method.output;
  EXPECT_NE(method.output.find("--calibration-method"), std::string::npos) << method.output;

  for (const char* set : {"a", "b", "c"}) {
    std::filesystem::create_directories(dir.file(std::string("sets/") + set));
    ASSERT_TRUE(write_npy_file(dir.file(std::string("sets/") + set + "/x.npy"), random_tensor(DType::kFloat, {3, 8}, set[0])).is_ok());
  }
  CommandResult compiled = run_kiln("compile " + model + " --shape x=3x8 --precision int8 --calibrate " + dir.file("sets") +
                                    " --calibration-method percentile -o " + dir.file("static.kiln") + " --emit-onnx " + dir.file("q.onnx"));
  ASSERT_EQ(compiled.exit_code, 0) << compiled.output;
  for (const char* part : {"1 int8 inputs calibrated (percentile) on 3 input sets, sha256 ", "vs fp32 on 3 calibration input sets",
                           "1 as QuantizeLinear/DequantizeLinear pairs (QDQ)"})
    EXPECT_NE(compiled.output.find(part), std::string::npos) << part << "\n" << compiled.output;
  for (const char* command : {"inspect ", "verify "}) {
    CommandResult shown = run_kiln(command + dir.file("static.kiln"));
    EXPECT_EQ(shown.exit_code, 0) << shown.output;
    EXPECT_NE(shown.output.find("1 int8 inputs calibrated (percentile) on 3 input sets"), std::string::npos) << command << shown.output;
  }
}

}  // namespace
}  // namespace kiln
