// Models whose declared shapes are stale (tests/analysis/stale_declarations/make_models.py: a Loop
// carrying a tensor that grows from empty, nested Ifs whose branches give different ranks, shape
// arithmetic in branches) run in graph and eager mode, match ONNX Runtime's outputs for fixed
// inputs, and their report lists each declaration inference contradicted. What the spec makes a
// fact is still refused: a model input fed a shape its declared dims forbid, a loop-carried value
// that changes element type.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "kiln/parity.h"
#include "kiln/session.h"
#include "kiln/tensor_io.h"
#include "support/loop_model.h"

namespace kiln {
namespace {

const std::string kModels = std::string(KILN_SOURCE_DIR) + "/tests/analysis/stale_declarations/";

// One set of fixed inputs and ONNX Runtime's outputs for them: CASE/input_NAME.npy, output_NAME.npy.
struct OrtCase {
  std::string name;
  std::map<std::string, Tensor> inputs;
  std::map<std::string, Tensor> outputs;
};

std::vector<OrtCase> ort_cases(const std::string& model) {
  std::set<std::filesystem::path> folders;
  for (const auto& entry : std::filesystem::directory_iterator(kModels + model)) folders.insert(entry.path());
  std::vector<OrtCase> cases;
  for (const std::filesystem::path& folder : folders) {
    OrtCase c{folder.filename().string(), {}, {}};
    for (const auto& file : std::filesystem::directory_iterator(folder)) {
      const std::string stem = file.path().stem().string();
      auto tensor = read_tensor_file(file.path().string());
      EXPECT_TRUE(tensor.is_ok()) << tensor.status().to_string();
      if (!tensor.is_ok()) continue;
      if (stem.rfind("input_", 0) == 0) c.inputs[stem.substr(6)] = tensor.value();
      if (stem.rfind("output_", 0) == 0) c.outputs[stem.substr(7)] = tensor.value();
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

std::unique_ptr<Session> load_model(const std::string& model, ExecutionMode mode) {
  SessionOptions options;
  options.mode = mode;
  auto session = Session::load(kModels + model + ".onnx", options);
  EXPECT_TRUE(session.is_ok()) << model << ": " << session.status().to_string();
  return session.is_ok() ? std::move(session).value() : nullptr;
}

void expect_ort_outputs(const std::string& model, ExecutionMode mode) {
  SCOPED_TRACE(model + " in " + execution_mode_name(mode) + " mode");
  const std::unique_ptr<Session> session = load_model(model, mode);
  if (!session) return;
  const std::vector<OrtCase> cases = ort_cases(model);
  ASSERT_FALSE(cases.empty());
  for (const OrtCase& c : cases) {
    auto outputs = session->run(c.inputs);
    ASSERT_TRUE(outputs.is_ok()) << c.name << ": " << outputs.status().to_string();
    for (const auto& [name, reference] : c.outputs) {
      ASSERT_TRUE(outputs.value().count(name)) << c.name << ": no output " << name;
      const ParityResult parity = compare_tensors(name, outputs.value().at(name), reference);
      EXPECT_TRUE(parity.within(1e-6)) << c.name << ": " << name << " " << parity.mismatch << " error "
                                       << parity.relative_error();
    }
  }
}

// The report's analysis.declared_shape_disagreements, one "value in WHERE: declared -> used" each.
std::set<std::string> disagreements(const std::string& model) {
  const std::unique_ptr<Session> session = load_model(model, ExecutionMode::kGraph);
  std::set<std::string> lines;
  if (!session) return lines;
  const nlohmann::json report = nlohmann::json::parse(session->report_json());
  for (const auto& d : report["analysis"]["declared_shape_disagreements"])
    lines.insert(d["value"].get<std::string>() + " in " + d["where"].get<std::string>() + ": " +
                 d["declared"].get<std::string>() + " -> " + d["used"].get<std::string>());
  return lines;
}

TEST(StaleDeclarations, LoopGrowingFromEmptyMatchesOrt) {
  expect_ort_outputs("loop_growing_concat", ExecutionMode::kGraph);
  expect_ort_outputs("loop_growing_concat", ExecutionMode::kEager);
}

TEST(StaleDeclarations, NestedIfsOfDifferentRanksMatchOrt) {
  expect_ort_outputs("nested_if_ranks", ExecutionMode::kGraph);
  expect_ort_outputs("nested_if_ranks", ExecutionMode::kEager);
}

TEST(StaleDeclarations, ShapeArithmeticInBranchesMatchesOrt) {
  expect_ort_outputs("branch_shape_arithmetic", ExecutionMode::kGraph);
  expect_ort_outputs("branch_shape_arithmetic", ExecutionMode::kEager);
}

// The carried value's path: the body's input and output and the Loop's output, declared with the
// starting size, get its size unknown (it grows each iteration).
TEST(StaleDeclarations, ReportListsLoopCarriedDeclarations) {
  const std::string body = "loop_growing_concat > Loop 'append_loop' subgraph 'grow'";
  EXPECT_EQ(disagreements("loop_growing_concat"),
            (std::set<std::string>{"acc_in in " + body + ": float[0,3,4] -> float[?,3,4]",
                                   "acc_out in " + body + ": float[0,3,4] -> float[?,3,4]",
                                   "grown in loop_growing_concat: float[0,3,4] -> float[?,3,4]"}));
}

// Each If's output is declared for one branch's rank: the branches decide at run time.
TEST(StaleDeclarations, ReportListsIfOutputsDeclaredForOneBranch) {
  const std::string level1 = "nested_if_ranks > If 'level1_if' subgraph 'level1_then'";
  const std::string level2 = level1 + " > If 'level2_if' subgraph 'level2_then'";
  EXPECT_EQ(disagreements("nested_if_ranks"),
            (std::set<std::string>{"level3 in " + level2 + ": float[S,T,8] -> float",
                                   "level2 in " + level1 + ": float[1,T,8] -> float",
                                   "level1 in nested_if_ranks: float[1,2,8] -> float"}));
}

TEST(StaleDeclarations, ReportListsBranchShapesOfTheWrongRank) {
  EXPECT_EQ(disagreements("branch_shape_arithmetic"),
            (std::set<std::string>{
                "column in branch_shape_arithmetic > If 'batch_if' subgraph 'batch_of_one': float[1,6,1] -> float[?,?]",
                "y in branch_shape_arithmetic: float[1,T,1] -> float[?,T,?,1]"}));
}

// A model input's declared dims are a contract with the caller, as in ONNX Runtime.
TEST(StaleDeclarations, InputContradictingItsDeclaredDimsIsRefused) {
  const std::unique_ptr<Session> session = load_model("loop_growing_concat", ExecutionMode::kGraph);
  ASSERT_TRUE(session);
  std::map<std::string, Tensor> inputs = ort_cases("loop_growing_concat").front().inputs;
  inputs["x"] = Tensor::allocate(DType::kFloat, {2, 3, 4});
  auto outputs = session->run(inputs);
  EXPECT_EQ(outputs.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(outputs.status().message().find("input 'x' dim 0 is 2 but the model requires 1"), std::string::npos)
      << outputs.status().message();
}

// A Loop body that turns its carried float into an int64 breaks the spec: refused, naming the rule.
TEST(StaleDeclarations, LoopCarriedElementTypeChangeIsRefused) {
  testing::ScratchDir dir("stale_declarations");
  testing::ModelBuilder b;
  b.input("x", testing::kLoopFloat, {int64_t{2}});
  b.int64_initializer("M", {}, {2});
  b.output("y", testing::kLoopFloat, {int64_t{2}});
  onnx::NodeProto& loop = b.node("Loop", {"M", "", "x"}, {"y"}, "retyping_loop");
  onnx::AttributeProto* attr = loop.add_attribute();
  attr->set_name("body");
  attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = attr->mutable_g();
  body->set_name("retype");
  testing::tensor_value(body->add_input(), "i", testing::kLoopInt64, {});
  testing::tensor_value(body->add_input(), "cond_in", testing::kLoopBool, {});
  testing::tensor_value(body->add_input(), "x_in", testing::kLoopFloat, {2});
  testing::tensor_value(body->add_output(), "cond_out", testing::kLoopBool, {});
  body->add_output()->set_name("x_out");
  onnx::NodeProto* cast = body->add_node();
  cast->set_op_type("Cast");
  cast->add_input("x_in");
  cast->add_output("x_out");
  testing::ModelBuilder::int_attribute(*cast, "to", testing::kLoopInt64);
  onnx::NodeProto* pass = body->add_node();
  pass->set_op_type("Identity");
  pass->add_input("cond_in");
  pass->add_output("cond_out");
  auto session = Session::load(b.save(dir.file("retyping_loop.onnx")));
  EXPECT_EQ(session.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(session.status().message().find("Loop 'retyping_loop': loop-carried value 'x_in' enters as float[2]"),
            std::string::npos)
      << session.status().message();
  EXPECT_NE(session.status().message().find("a loop-carried value keeps its element type"), std::string::npos)
      << session.status().message();
}

}  // namespace
}  // namespace kiln
