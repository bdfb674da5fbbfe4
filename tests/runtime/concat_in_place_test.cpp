// Tests of Concat in place: which Concats the plan elides (their inputs written straight into the
// output's buffer, DenseNet's chains sharing one buffer), which it must leave to copy (a batch of
// two, a value two Concats want at different places, graph inputs), and that runs where every
// Concat is elided give the reference's results, on cpu and cpu_ref.
#include "kiln/runtime/concat_in_place.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "kiln/session.h"
#include "support/model_builder.h"

namespace kiln::runtime {
namespace {

auto any_intermediate(const ir::Graph& g) {
  return [&g](const ir::Value* v) {
    return v->producer != nullptr && std::find(g.outputs.begin(), g.outputs.end(), v) == g.outputs.end();
  };
}

// x -> Relu -> f0 -> Neg -> f1; c1 = Concat(f0, f1); f2 = Slice of Relu(c1) back to 16 channels;
// c2 = Concat(f0, f1, f2) -> Neg -> y: DenseNet's pattern, every Concat reading all earlier features.
struct DenseBlock {
  ir::Graph g;
  ir::Value *f0, *f1, *f2, *c1, *c2;
  explicit DenseBlock(int64_t batch) {
    ir::Value* x = g.add_value("x", ir::make_type(DType::kFloat, {batch, 16, 4, 4}));
    f0 = g.add_value("f0", ir::make_type(DType::kFloat, {batch, 16, 4, 4}));
    f1 = g.add_value("f1", ir::make_type(DType::kFloat, {batch, 16, 4, 4}));
    f2 = g.add_value("f2", ir::make_type(DType::kFloat, {batch, 16, 4, 4}));
    c1 = g.add_value("c1", ir::make_type(DType::kFloat, {batch, 32, 4, 4}));
    c2 = g.add_value("c2", ir::make_type(DType::kFloat, {batch, 48, 4, 4}));
    ir::Value* r = g.add_value("r", ir::make_type(DType::kFloat, {batch, 32, 4, 4}));
    ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {batch, 48, 4, 4}));
    g.inputs = {x};
    g.add_node("Relu", {x}, {f0}, "relu", "", 14);
    g.add_node("Neg", {f0}, {f1}, "neg", "", 13);
    g.add_node("Concat", {f0, f1}, {c1}, "concat1", "", 13)->attributes["axis"] = ir::Attribute::of_int(1);
    g.add_node("Relu", {c1}, {r}, "relu2", "", 14);
    ir::Value* starts = g.add_constant("starts", Tensor::from_vector<int64_t>(DType::kInt64, {1}, {8}));
    ir::Value* ends = g.add_constant("ends", Tensor::from_vector<int64_t>(DType::kInt64, {1}, {24}));
    ir::Value* axes = g.add_constant("axes", Tensor::from_vector<int64_t>(DType::kInt64, {1}, {1}));
    g.add_node("Slice", {r, starts, ends, axes}, {f2}, "slice", "", 13);
    g.add_node("Concat", {f0, f1, f2}, {c2}, "concat2", "", 13)->attributes["axis"] = ir::Attribute::of_int(1);
    g.add_node("Neg", {c2}, {y}, "out", "", 13);
    g.outputs = {y};
  }
};

TEST(ConcatInPlace, ADenseBlocksConcatsShareTheLastOnesBuffer) {
  DenseBlock b(1);
  const InPlaceConcats placed = place_concats_in_place(b.g, any_intermediate(b.g), 64);
  EXPECT_EQ(placed.elided.size(), 2u);
  EXPECT_EQ(placed.roots, std::set<const ir::Value*>{b.c2});
  const int64_t piece = 16 * 4 * 4 * 4;
  const std::vector<std::pair<const ir::Value*, int64_t>> expected = {{b.f0, 0}, {b.f1, piece}, {b.f2, 2 * piece}, {b.c1, 0}};
  for (const auto& [v, offset] : expected) {
    ASSERT_TRUE(placed.places.count(v)) << v->name;
    EXPECT_EQ(placed.places.at(v).root, b.c2) << v->name;
    EXPECT_EQ(placed.places.at(v).byte_offset, offset) << v->name;
  }
}

TEST(ConcatInPlace, ABatchOfTwoInterleavesItsInputsSoEachConcatCopies) {
  DenseBlock b(2);
  const InPlaceConcats placed = place_concats_in_place(b.g, any_intermediate(b.g), 64);
  EXPECT_TRUE(placed.elided.empty());
  EXPECT_TRUE(placed.places.empty());
}

TEST(ConcatInPlace, PiecesOffTheAlignmentCopy) {
  DenseBlock b(1);
  const InPlaceConcats placed = place_concats_in_place(b.g, any_intermediate(b.g), 4096);
  EXPECT_TRUE(placed.elided.empty());
}

TEST(ConcatInPlace, AValueTwoConcatsWantAtDifferentPlacesIsPlacedOnce) {
  ir::Graph g;
  ir::Value* x = g.add_value("x", ir::make_type(DType::kFloat, {1, 16}));
  ir::Value* a = g.add_value("a", ir::make_type(DType::kFloat, {1, 16}));
  ir::Value* b = g.add_value("b", ir::make_type(DType::kFloat, {1, 16}));
  ir::Value* ab = g.add_value("ab", ir::make_type(DType::kFloat, {1, 32}));
  ir::Value* ba = g.add_value("ba", ir::make_type(DType::kFloat, {1, 32}));
  ir::Value* y = g.add_value("y", ir::make_type(DType::kFloat, {1, 32}));
  g.inputs = {x};
  g.add_node("Relu", {x}, {a}, "relu", "", 14);
  g.add_node("Neg", {x}, {b}, "neg", "", 13);
  g.add_node("Concat", {a, b}, {ab}, "ab", "", 13)->attributes["axis"] = ir::Attribute::of_int(1);
  g.add_node("Concat", {b, a}, {ba}, "ba", "", 13)->attributes["axis"] = ir::Attribute::of_int(1);
  g.add_node("Add", {ab, ba}, {y}, "add", "", 14);
  g.outputs = {y};
  const InPlaceConcats placed = place_concats_in_place(g, any_intermediate(g), 64);
  ASSERT_EQ(placed.elided.size(), 1u);
  EXPECT_EQ((*placed.elided.begin())->name, "ba");  // the later one is placed first
  EXPECT_EQ(placed.places.at(a).byte_offset, 64);
}

TEST(ConcatInPlace, GraphInputsAndOutputsKeepTheirOwnBuffers) {
  DenseBlock b(1);
  const InPlaceConcats placed = place_concats_in_place(b.g, [&](const ir::Value* v) { return v != b.f1 && v->producer; }, 64);
  EXPECT_TRUE(placed.elided.empty()) << "both Concats read f1, which may not share";
}

void set_axis(onnx::NodeProto& node, int64_t axis) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name("axis");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(axis);
}

// The same dense block as a model, whose Concats and the ops around them run on `provider`; the
// Reshape after the first Concat may overwrite its input in place, which it must not do here.
std::string dense_block_model(testing::ScratchDir& dir) {
  testing::ModelBuilder m(17);
  m.input("x", onnx::TensorProto::FLOAT, {int64_t{1}, int64_t{16}, int64_t{4}, int64_t{4}});
  m.output("y", onnx::TensorProto::FLOAT, {int64_t{1}, int64_t{48}, int64_t{4}, int64_t{4}});
  m.output("z", onnx::TensorProto::FLOAT, {int64_t{1}, int64_t{512}});
  m.int64_initializer("starts", {1}, {8});
  m.int64_initializer("ends", {1}, {24});
  m.int64_initializer("axes", {1}, {1});
  m.int64_initializer("flat", {2}, {1, 512});
  m.node("Relu", {"x"}, {"f0"});
  m.node("Neg", {"f0"}, {"f1"});
  set_axis(m.node("Concat", {"f0", "f1"}, {"c1"}), 1);
  m.node("Reshape", {"c1", "flat"}, {"z_raw"});
  m.node("Sigmoid", {"z_raw"}, {"z"});
  m.node("Slice", {"c1", "starts", "ends", "axes"}, {"s"});
  m.node("Sigmoid", {"s"}, {"f2"});
  set_axis(m.node("Concat", {"f0", "f1", "f2"}, {"c2"}), 1);
  m.node("Neg", {"c2"}, {"y"});
  return m.save(dir.file("dense.onnx"));
}

TEST(ConcatInPlace, RunsWithEveryConcatElidedMatchTheReference) {
  testing::ScratchDir dir("concat_in_place");
  const std::string model = dense_block_model(dir);
  std::vector<float> x(256);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(static_cast<int>(i % 13) - 6) * 0.25f;
  const Tensor input = Tensor::from_vector<float>(DType::kFloat, {1, 16, 4, 4}, x);
  for (const char* provider : {"cpu", "cpu_ref"}) {
    SessionOptions options;
    options.providers = {provider};
    auto session = Session::load(model, options);
    ASSERT_TRUE(session.is_ok()) << session.status().to_string();
    auto outputs = session.value()->run({{"x", input}});
    ASSERT_TRUE(outputs.is_ok()) << outputs.status().to_string();
    const auto report = nlohmann::json::parse(session.value()->report_json());
    EXPECT_EQ(report["memory"]["concats_in_place"], 2) << provider;
    const Tensor& y = outputs.value().at("y");
    const Tensor& z = outputs.value().at("z");
    for (int64_t i = 0; i < 256; ++i) {
      const float f0 = std::max(x[static_cast<size_t>(i)], 0.0f), f1 = -f0;
      EXPECT_EQ(y.data<float>()[i], -f0) << provider << " f0 at " << i;
      EXPECT_EQ(y.data<float>()[256 + i], -f1) << provider << " f1 at " << i;
      EXPECT_FLOAT_EQ(z.data<float>()[i], 1.0f / (1.0f + std::exp(-f0))) << provider << " z at " << i;
    }
    // f2 = Sigmoid(c1's channels 8..23): f0's channels 8..15, then f1's 0..7.
    for (int64_t c = 0; c < 16; ++c)
      for (int64_t p = 0; p < 16; ++p) {
        const int64_t from = c < 8 ? (c + 8) * 16 + p : (c - 8) * 16 + p;
        const float f0 = std::max(x[static_cast<size_t>(from)], 0.0f);
        const float s = c < 8 ? f0 : -f0;
        EXPECT_FLOAT_EQ(y.data<float>()[512 + c * 16 + p], -1.0f / (1.0f + std::exp(-s))) << provider << " f2 at " << c << "," << p;
      }
  }
}

}  // namespace
}  // namespace kiln::runtime
