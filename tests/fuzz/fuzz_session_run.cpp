// Fuzz target: Session::run on a small fixed model with input tensors whose dtype, shape and data
// come from the input. The model (built here) has a dynamic batch dim and data-dependent parts:
//   y = Reshape(Concat(Relu(MatMul(x, W) + B), x), [-1, 4])   x: float[batch, 4]
//   g = Gather(x, indices, axis 0)                             indices: int64[k]
//   s = Slice(x, starts, [INT64_MAX], axes [0])                starts: int64[1]
// Input: a byte choosing the session (graph mode on cpu, or eager on cpu_ref), then per model
// input a dtype byte, a rank byte, a byte per dim, and its data. Dims are at most 5 and ranks at
// most 3, so every run is small.
#include <onnx/onnx_pb.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "kiln/session.h"

namespace {

void add_initializer(onnx::GraphProto& graph, const std::string& name, const std::vector<int64_t>& dims,
                     const std::vector<float>& floats, const std::vector<int64_t>& ints) {
  onnx::TensorProto& t = *graph.add_initializer();
  t.set_name(name);
  for (int64_t d : dims) t.add_dims(d);
  t.set_data_type(floats.empty() ? onnx::TensorProto::INT64 : onnx::TensorProto::FLOAT);
  for (float f : floats) t.add_float_data(f);
  for (int64_t i : ints) t.add_int64_data(i);
}

void add_value(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& values, const std::string& name,
               onnx::TensorProto::DataType dtype, const std::vector<std::string>& dims) {
  onnx::ValueInfoProto& v = *values.Add();
  v.set_name(name);
  onnx::TypeProto::Tensor& t = *v.mutable_type()->mutable_tensor_type();
  t.set_elem_type(dtype);
  for (const std::string& d : dims) {
    if (d.empty() || !std::isdigit(static_cast<unsigned char>(d[0])))
      t.mutable_shape()->add_dim()->set_dim_param(d);
    else
      t.mutable_shape()->add_dim()->set_dim_value(std::stoll(d));
  }
}

onnx::NodeProto& add_node(onnx::GraphProto& graph, const std::string& op, const std::vector<std::string>& inputs,
                          const std::string& output) {
  onnx::NodeProto& node = *graph.add_node();
  node.set_op_type(op);
  node.set_name(output);
  for (const std::string& in : inputs) node.add_input(in);
  node.add_output(output);
  return node;
}

std::string model_bytes() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto& g = *model.mutable_graph();
  g.set_name("fuzz");
  add_value(*g.mutable_input(), "x", onnx::TensorProto::FLOAT, {"batch", "4"});
  add_value(*g.mutable_input(), "indices", onnx::TensorProto::INT64, {"k"});
  add_value(*g.mutable_input(), "starts", onnx::TensorProto::INT64, {"1"});
  std::vector<float> w(16);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i) / 8 - 1;
  add_initializer(g, "W", {4, 4}, w, {});
  add_initializer(g, "B", {4}, {0.5f, -0.5f, 0.25f, -0.25f}, {});
  add_initializer(g, "shape", {2}, {}, {-1, 4});
  add_initializer(g, "ends", {1}, {}, {std::numeric_limits<int64_t>::max()});
  add_initializer(g, "axes", {1}, {}, {0});
  add_node(g, "MatMul", {"x", "W"}, "mm");
  add_node(g, "Add", {"mm", "B"}, "sum");
  add_node(g, "Relu", {"sum"}, "relu");
  onnx::AttributeProto& concat_axis = *add_node(g, "Concat", {"relu", "x"}, "concat").add_attribute();
  concat_axis.set_name("axis");
  concat_axis.set_type(onnx::AttributeProto::INT);
  concat_axis.set_i(1);
  add_node(g, "Reshape", {"concat", "shape"}, "y");
  add_node(g, "Gather", {"x", "indices"}, "g");
  add_node(g, "Slice", {"x", "starts", "ends", "axes"}, "s");
  add_value(*g.mutable_output(), "y", onnx::TensorProto::FLOAT, {"rows", "4"});
  add_value(*g.mutable_output(), "g", onnx::TensorProto::FLOAT, {"k", "4"});
  add_value(*g.mutable_output(), "s", onnx::TensorProto::FLOAT, {"sliced", "4"});
  return model.SerializeAsString();
}

std::unique_ptr<kiln::Session> load_session(kiln::ExecutionMode mode, const std::string& provider) {
  kiln::SessionOptions options;
  options.mode = mode;
  options.providers = {provider};
  options.threads = 1;
  options.max_loop_iterations = 1000;
  return kiln::Session::load_bytes(model_bytes(), options).value();
}

kiln::Session& session(uint8_t choice) {
  static const std::unique_ptr<kiln::Session> graph = load_session(kiln::ExecutionMode::kGraph, "cpu");
  static const std::unique_ptr<kiln::Session> eager = load_session(kiln::ExecutionMode::kEager, "cpu_ref");
  return choice % 2 == 0 ? *graph : *eager;
}

kiln::Tensor fuzzed_tensor(kiln::fuzz::FuzzInput& input, const kiln::TensorInfo& info) {
  const kiln::DType dtypes[] = {info.dtype, kiln::DType::kFloat, kiln::DType::kInt64, kiln::DType::kInt32};
  const kiln::DType dtype = dtypes[input.byte() % 4];
  const uint8_t rank_byte = input.byte();
  const size_t rank = rank_byte < 128 ? info.shape.size() : rank_byte % 4;
  std::vector<int64_t> shape;
  for (size_t i = 0; i < rank; ++i) shape.push_back(input.byte() % 6);
  kiln::Tensor tensor = kiln::Tensor::allocate(dtype, shape);
  const std::string bytes = input.bytes(tensor.byte_size());
  std::memset(tensor.data<char>(), 0, tensor.byte_size());
  std::memcpy(tensor.data<char>(), bytes.data(), bytes.size());
  return tensor;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  kiln::fuzz::FuzzInput input(data, size);
  kiln::Session& s = session(input.byte());
  std::map<std::string, kiln::Tensor> inputs;
  for (const kiln::TensorInfo& info : s.inputs()) inputs[info.name] = fuzzed_tensor(input, info);
  kiln::RunOptions run_options;
  run_options.timeout_ms = 1000;
  (void)s.run(inputs, run_options);
  return 0;
}
