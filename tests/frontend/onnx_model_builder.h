// Frontend test helpers beyond tests/support/model_builder.h: value infos with unknown dims, nodes
// in any graph (subgraphs included), TensorProto values and raw file writing.
#pragma once

#include <onnx/onnx_pb.h>

#include <cctype>
#include <fstream>
#include <string>
#include <vector>

#include "support/model_builder.h"

namespace kiln::frontend::testing {

using ScratchDir = kiln::testing::ScratchDir;

// dims: numbers are concrete, strings symbolic, "?" unknown.
inline onnx::ValueInfoProto tensor_info(const std::string& name, int elem_type, const std::vector<std::string>& dims) {
  onnx::ValueInfoProto info;
  info.set_name(name);
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  auto* shape = tensor->mutable_shape();
  for (const auto& d : dims) {
    auto* dim = shape->add_dim();
    if (d == "?") continue;
    if (std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
    else dim->set_dim_param(d);
  }
  return info;
}

inline onnx::NodeProto* add_node(onnx::GraphProto& g, const std::string& op, const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs, const std::string& name = "",
                                 const std::string& domain = "") {
  onnx::NodeProto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(name);
  n->set_domain(domain);
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return n;
}

inline onnx::TensorProto float_tensor(const std::string& name, const std::vector<int64_t>& dims,
                                      const std::vector<float>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  for (float v : values) t.add_float_data(v);
  return t;
}

// An IR-8, opset-13 model whose graph is y = Relu(x), x: float[N,3].
inline onnx::ModelProto relu_model() {
  kiln::testing::ModelBuilder b(13);
  b.input("x", onnx::TensorProto::FLOAT, {"N", 3}).output("y", onnx::TensorProto::FLOAT, {"N", 3});
  b.node("Relu", {"x"}, {"y"}, "relu1");
  return b.proto();
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

inline void write_model(const std::string& path, const onnx::ModelProto& m) { write_bytes(path, m.SerializeAsString()); }

}  // namespace kiln::frontend::testing
