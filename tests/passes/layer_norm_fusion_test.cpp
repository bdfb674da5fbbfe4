// Tests of layer_norm_fusion: the reduction form of layer normalisation (Pow or Mul squares, with
// and without scale and bias) becomes one LayerNormalization computing the same values.
#include "kiln/passes/layer_norm_fusion.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kiln/session.h"
#include "passes/pass_test_util.h"
#include "support/model_builder.h"

namespace kiln::passes {
namespace {

using kiln::testing::ModelBuilder;
using kiln::testing::ScratchDir;

constexpr int kFloat = onnx::TensorProto::FLOAT;

void add_ints(onnx::NodeProto& n, const char* name, std::vector<int64_t> values) {
  onnx::AttributeProto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

// x[2,3,8] -> decomposed layer norm over the last axis -> y
std::string model(const ScratchDir& dir, bool pow_square, bool affine) {
  ModelBuilder b(13);
  b.input("x", kFloat, {int64_t{2}, int64_t{3}, int64_t{8}});
  b.output("y", kFloat, {int64_t{2}, int64_t{3}, int64_t{8}});
  b.float_initializer("two", {}, {2.0f});
  b.float_initializer("eps", {}, {1e-5f});
  b.float_initializer("gamma", {8}, {1, 2, 3, 4, 0.5f, 0.25f, -1, 1});
  b.float_initializer("beta", {8}, {0, 0.1f, 0.2f, 0.3f, -0.1f, 0, 1, 2});
  add_ints(b.node("ReduceMean", {"x"}, {"mean"}, "mean"), "axes", {-1});
  b.node("Sub", {"x", "mean"}, {"d"}, "sub");
  if (pow_square) b.node("Pow", {"d", "two"}, {"sq"}, "square");
  else b.node("Mul", {"d", "d"}, {"sq"}, "square");
  add_ints(b.node("ReduceMean", {"sq"}, {"var"}, "var"), "axes", {2});
  b.node("Add", {"var", "eps"}, {"ve"}, "add_eps");
  b.node("Sqrt", {"ve"}, {"std"}, "sqrt");
  b.node("Div", {"d", "std"}, {affine ? "n" : "y"}, "div");
  if (affine) {
    b.node("Mul", {"n", "gamma"}, {"scaled"}, "scale");
    b.node("Add", {"scaled", "beta"}, {"y"}, "shift");
  }
  return b.save(dir.file("model.onnx"));
}

struct Ran {
  Tensor y;
  int nodes = 0;
};

Ran run(const std::string& path, bool optimize) {
  SessionOptions options;
  options.providers = {"cpu_ref"};  // the pass's semantics, on the reference kernels
  options.optimize = optimize;
  auto session = Session::load(path, options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  if (!session.is_ok()) return {};
  std::vector<float> x(48);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 11) * 0.3f - 1.0f;
  auto out = session.value()->run({{"x", Tensor::from_vector<float>(DType::kFloat, {2, 3, 8}, x)}});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  return {out.is_ok() ? out.value().at("y") : Tensor{},
          nlohmann::json::parse(session.value()->report_json())["nodes_after_passes"].get<int>()};
}

// The node it makes, on IR text: over the trailing axis, with the epsilon, scale and bias it found.
TEST(LayerNormFusion, TheAffineFormIsOneLayerNormalizationOnIrText) {
  const testing::Rewritten r = testing::rewrite_ir(R"(graph main (%x: float[2,3,8]) -> (%y: float[2,3,8]) {
    %two = constant float[] [2.0]
    %eps = constant float[] [1e-05]
    %gamma = constant float[8] [1.0,2.0,3.0,4.0,0.5,0.25,-1.0,1.0]
    %beta = constant float[8] [0.0,0.1,0.2,0.3,-0.1,0.0,1.0,2.0]
    %mean: float[2,3,1] = ReduceMean 'mean'(%x) {axes=[-1]}
    %d: float[2,3,8] = Sub 'sub'(%x, %mean)
    %sq: float[2,3,8] = Pow 'square'(%d, %two)
    %var: float[2,3,1] = ReduceMean 'var'(%sq) {axes=[2]}
    %ve: float[2,3,1] = Add 'add_eps'(%var, %eps)
    %std: float[2,3,1] = Sqrt 'sqrt'(%ve)
    %n: float[2,3,8] = Div 'div'(%d, %std)
    %scaled: float[2,3,8] = Mul 'scale'(%n, %gamma)
    %y: float[2,3,8] = Add 'shift'(%scaled, %beta)
  })",
                                                   fuse_layer_norm);
  EXPECT_TRUE(r.changed);
  ASSERT_TRUE(r.graph);
  EXPECT_EQ(r.printed,
            "graph main (%x: float[2,3,8]) -> (%y: float[2,3,8]) {\n"
            "  %shift_scale = constant float[8]\n"
            "  %shift_bias = constant float[8]\n"
            "  %y: float[2,3,8] = LayerNormalization 'shift_layer_norm'(%x, %shift_scale, %shift_bias) {axis=2, epsilon=1e-05}\n"
            "}");
  EXPECT_EQ(testing::floats_of(r.graph->find_value("shift_scale")), (std::vector<float>{1, 2, 3, 4, 0.5f, 0.25f, -1, 1}));
  EXPECT_EQ(testing::floats_of(r.graph->find_value("shift_bias")), (std::vector<float>{0, 0.1f, 0.2f, 0.3f, -0.1f, 0, 1, 2}));
}

TEST(LayerNormFusion, DecomposedFormsBecomeOneNodeWithTheSameValues) {
  for (bool pow_square : {true, false}) {
    for (bool affine : {true, false}) {
      ScratchDir dir("layer_norm");
      const std::string path = model(dir, pow_square, affine);
      const Ran fused = run(path, true), plain = run(path, false);
      EXPECT_EQ(fused.nodes, 1) << pow_square << affine;
      ASSERT_EQ(fused.y.shape(), plain.y.shape());
      for (int64_t i = 0; i < plain.y.element_count(); ++i)
        EXPECT_NEAR(fused.y.data<float>()[i], plain.y.data<float>()[i], 1e-5) << pow_square << affine << " " << i;
    }
  }
}

}  // namespace
}  // namespace kiln::passes
