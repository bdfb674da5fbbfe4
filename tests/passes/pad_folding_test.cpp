// Tests of pad_folding: a Pad of zeros around a Conv's spatial dims (pads as an input, opset 11+,
// and as an attribute, opset 2) becomes part of the Conv's pads, with the same results, also with
// the Conv's own pads and auto_pad VALID; a Pad of another value, of the channels, with a negative
// pad, or read by another node too stays.
#include "kiln/passes/pad_folding.h"

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

std::vector<float> ramp(size_t n, float scale, float offset = 0) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<float>(static_cast<int>(i % 7) - 3);
  return v;
}

void ints(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

struct Form {
  std::string name;
  int opset = 13;
  std::vector<int64_t> pads{0, 0, 1, 0, 0, 0, 2, 1};  // x[1,2,5,5] -> [1,2,8,6]
  float value = 0;
  std::vector<int64_t> conv_pads;       // the Conv's own
  std::string auto_pad;                 // the Conv's
  bool second_reader = false;           // the padded value is also a graph output
};

Form named(const std::string& name) {
  Form f;
  f.name = name;
  return f;
}

// x[1,2,5,5] -> Pad -> Conv(3 channels, 3x3, stride 2) -> y.
std::string model(const ScratchDir& dir, const Form& f, std::vector<int64_t>* y_shape) {
  ModelBuilder b(f.opset);
  b.input("x", kFloat, {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{5}});
  const int64_t h = 5 + f.pads[2] + f.pads[6], w = 5 + f.pads[3] + f.pads[7];
  const int64_t ph = f.conv_pads.empty() ? 0 : f.conv_pads[0] + f.conv_pads[2];
  const int64_t pw = f.conv_pads.empty() ? 0 : f.conv_pads[1] + f.conv_pads[3];
  *y_shape = {1, 3, (h + ph - 3) / 2 + 1, (w + pw - 3) / 2 + 1};
  b.output("y", kFloat, {int64_t{1}, int64_t{3}, (*y_shape)[2], (*y_shape)[3]});
  if (f.second_reader) b.output("padded", kFloat, {int64_t{1}, int64_t{2}, h, w});
  b.float_initializer("w", {3, 2, 3, 3}, ramp(54, 0.1f));
  if (f.opset >= 11) {
    b.int64_initializer("pads", {8}, f.pads).float_initializer("value", {}, {f.value});
    b.node("Pad", {"x", "pads", "value"}, {"padded"}, "pad");
  } else {
    onnx::NodeProto& pad = b.node("Pad", {"x"}, {"padded"}, "pad");
    ints(pad, "pads", f.pads);
    onnx::AttributeProto* v = pad.add_attribute();
    v->set_name("value");
    v->set_type(onnx::AttributeProto::FLOAT);
    v->set_f(f.value);
  }
  onnx::NodeProto& conv = b.node("Conv", {"padded", "w"}, {"y"}, "conv");
  ints(conv, "strides", {2, 2});
  if (!f.conv_pads.empty()) ints(conv, "pads", f.conv_pads);
  if (!f.auto_pad.empty()) {
    onnx::AttributeProto* a = conv.add_attribute();
    a->set_name("auto_pad");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(f.auto_pad);
  }
  return b.save(dir.file(f.name + ".onnx"));
}

struct Ran {
  Tensor y;
  bool has_pad = false;
};

Ran run(const std::string& path, bool optimize) {
  SessionOptions options;
  options.providers = {"cpu_ref"};  // the pass's semantics, on the reference kernels
  options.optimize = optimize;
  auto session = Session::load(path, options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  if (!session.is_ok()) return {};
  auto out = session.value()->run({{"x", Tensor::from_vector<float>(DType::kFloat, {1, 2, 5, 5}, ramp(50, 0.3f, 0.2f))}});
  EXPECT_TRUE(out.is_ok()) << out.status().to_string();
  const nlohmann::json report = nlohmann::json::parse(session.value()->report_json());
  bool has_pad = false;
  for (const auto& k : report["kernels"]) has_pad = has_pad || k["op"] == "Pad";
  return {out.is_ok() ? out.value().at("y") : Tensor{}, has_pad};
}

void check(const Form& f, bool folds) {
  ScratchDir dir("pad_folding");
  std::vector<int64_t> y_shape;
  const std::string path = model(dir, f, &y_shape);
  const Ran folded = run(path, true), plain = run(path, false);
  EXPECT_EQ(folded.has_pad, !folds) << f.name;
  EXPECT_TRUE(plain.has_pad) << f.name;
  ASSERT_EQ(folded.y.shape(), y_shape) << f.name;
  ASSERT_EQ(plain.y.shape(), y_shape) << f.name;
  for (int64_t i = 0; i < plain.y.element_count(); ++i)
    EXPECT_NEAR(folded.y.data<float>()[i], plain.y.data<float>()[i], 1e-5) << f.name << " " << i;
}

// A Pad of `value` before a Conv with pads [1,1,1,1], as IR text.
std::string padded_conv(const char* value) {
  return std::string(R"(graph main (%x: float[1,2,5,5]) -> (%y) {
    %pads = constant int64[8] [0,0,1,0,0,0,2,1]
    %value = constant float[] [)") +
         value + R"(]
    %w = constant float[3,2,3,3]
    %padded: float[1,2,8,6] = Pad 'pad'(%x, %pads, %value)
    %y = Conv 'conv'(%padded, %w) {pads=[1,1,1,1], strides=[2,2]}
  })";
}

// On IR text: the Pad's top, left, bottom and right add to the Conv's own pads; a Pad of ones stays.
TEST(PadFolding, ThePadsAddToTheConvsOwnOnIrText) {
  const testing::Rewritten zeros = testing::rewrite_ir(padded_conv("0.0"), fold_pads);
  EXPECT_TRUE(zeros.changed);
  EXPECT_EQ(zeros.printed,
            "graph main (%x: float[1,2,5,5]) -> (%y: undefined) {\n"
            "  %w = constant float[3,2,3,3]\n"
            "  %y: undefined = Conv 'conv'(%x, %w) {pads=[2,1,3,2], strides=[2,2]}\n"
            "}");
  EXPECT_FALSE(testing::rewrite_ir(padded_conv("1.0"), fold_pads).changed);
}

TEST(PadFolding, ZeroPadsOfSpatialDimsJoinTheConvsPads) {
  check(named("inputs"), true);
  Form attribute = named("attribute");
  attribute.opset = 10;
  check(attribute, true);
  Form added = named("added");
  added.conv_pads = {1, 1, 0, 1};
  check(added, true);
  Form valid = named("valid");
  valid.auto_pad = "VALID";
  check(valid, true);
}

TEST(PadFolding, OtherPadsStay) {
  Form value = named("value");
  value.value = 1.5f;
  check(value, false);
  Form negative = named("negative");
  negative.pads = {0, 0, 1, -1, 0, 0, 2, 1};
  check(negative, false);
  Form shared = named("shared");
  shared.second_reader = true;
  check(shared, false);
}

}  // namespace
}  // namespace kiln::passes
