// A Loop model for tests of run limits (tests/runtime/run_limits_test.cpp, tests/cli).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "support/model_builder.h"

namespace kiln::testing {

constexpr int kLoopFloat = onnx::TensorProto::FLOAT;
constexpr int kLoopInt64 = onnx::TensorProto::INT64;
constexpr int kLoopBool = onnx::TensorProto::BOOL;

inline void tensor_value(onnx::ValueInfoProto* v, const std::string& name, int elem_type, const std::vector<int64_t>& dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(elem_type);
  auto* shape = t->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

// x: float[1] -> Loop(M, cond) { x + 1 } -> y, the Loop named "count_up". `with_trip_count` /
// `with_cond` make M / cond graph inputs, `constant_trip_count` makes M a weight; else that Loop
// input is omitted (no cond: exactly M iterations; no M: until cond turns false, which it never does).
inline std::string loop_model(const ScratchDir& dir, bool with_trip_count, bool with_cond,
                              std::optional<int64_t> constant_trip_count = std::nullopt) {
  ModelBuilder b;
  if (with_trip_count) b.input("M", kLoopInt64, {});
  if (constant_trip_count) b.int64_initializer("M", {}, {*constant_trip_count});
  if (with_cond) b.input("cond", kLoopBool, {});
  b.input("x", kLoopFloat, {int64_t{1}});
  b.output("y", kLoopFloat, {int64_t{1}});
  onnx::NodeProto& loop = b.node("Loop", {with_trip_count || constant_trip_count ? "M" : "", with_cond ? "cond" : "", "x"}, {"y"}, "count_up");
  onnx::AttributeProto* attr = loop.add_attribute();
  attr->set_name("body");
  attr->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto* body = attr->mutable_g();
  body->set_name("body");
  tensor_value(body->add_input(), "i", kLoopInt64, {});
  tensor_value(body->add_input(), "cond_in", kLoopBool, {});
  tensor_value(body->add_input(), "x_in", kLoopFloat, {1});
  tensor_value(body->add_output(), "cond_out", kLoopBool, {});
  tensor_value(body->add_output(), "x_out", kLoopFloat, {1});
  onnx::TensorProto* one = body->add_initializer();
  one->set_name("one");
  one->set_data_type(kLoopFloat);
  one->add_dims(1);
  one->add_float_data(1.0f);
  onnx::NodeProto* add = body->add_node();
  add->set_op_type("Add");
  add->add_input("x_in");
  add->add_input("one");
  add->add_output("x_out");
  onnx::NodeProto* pass = body->add_node();
  pass->set_op_type("Identity");
  pass->add_input("cond_in");
  pass->add_output("cond_out");
  return b.save(dir.file(std::string("loop") + (with_trip_count ? "_m" : "") + (with_cond ? "_cond" : "") + ".onnx"));
}

}  // namespace kiln::testing
