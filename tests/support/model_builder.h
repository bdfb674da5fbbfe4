// ModelBuilder: writes small ONNX models from C++ for tests (no committed binaries), plus a
// scratch-folder helper. Header-only so every test file can use it.
#pragma once

#include <onnx/onnx_pb.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <variant>
#include <vector>

namespace kiln::testing {

using DimSpec = std::variant<int64_t, std::string>;  // a number or a symbol

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset = 17, const std::string& domain = "") {
    model_.set_ir_version(8);
    model_.set_producer_name("kiln-tests");
    auto* op = model_.add_opset_import();
    op->set_domain(domain);
    op->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }

  onnx::ModelProto& proto() { return model_; }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }

  ModelBuilder& input(const std::string& name, int elem_type, const std::vector<DimSpec>& dims) {
    fill(graph().add_input(), name, elem_type, dims);
    return *this;
  }
  ModelBuilder& output(const std::string& name, int elem_type, const std::vector<DimSpec>& dims) {
    fill(graph().add_output(), name, elem_type, dims);
    return *this;
  }
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "",
                        const std::string& domain = "") {
    onnx::NodeProto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name);
    n->set_domain(domain);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }
  // Attributes of a node the builder made.
  static void int_attribute(onnx::NodeProto& node, const std::string& name, int64_t value) {
    onnx::AttributeProto* a = node.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(value);
  }
  static void ints_attribute(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& values) {
    onnx::AttributeProto* a = node.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values) a->add_ints(v);
  }
  ModelBuilder& float_initializer(const std::string& name, const std::vector<int64_t>& dims,
                                  const std::vector<float>& values) {
    return initializer(name, dims, onnx::TensorProto::FLOAT, values, &onnx::TensorProto::add_float_data);
  }
  ModelBuilder& double_initializer(const std::string& name, const std::vector<int64_t>& dims,
                                   const std::vector<double>& values) {
    return initializer(name, dims, onnx::TensorProto::DOUBLE, values, &onnx::TensorProto::add_double_data);
  }
  ModelBuilder& int64_initializer(const std::string& name, const std::vector<int64_t>& dims,
                                  const std::vector<int64_t>& values) {
    return initializer(name, dims, onnx::TensorProto::INT64, values, &onnx::TensorProto::add_int64_data);
  }

  // Serialises the model to `path` and returns it.
  std::string save(const std::string& path) const {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    model_.SerializeToOstream(&out);
    return path;
  }

 private:
  template <class T>
  ModelBuilder& initializer(const std::string& name, const std::vector<int64_t>& dims, int data_type,
                            const std::vector<T>& values, void (onnx::TensorProto::*add)(T)) {
    onnx::TensorProto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(data_type);
    for (int64_t d : dims) t->add_dims(d);
    for (T v : values) (t->*add)(v);
    return *this;
  }
  static void fill(onnx::ValueInfoProto* v, const std::string& name, int elem_type, const std::vector<DimSpec>& dims) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(elem_type);
    auto* shape = t->mutable_shape();
    for (const DimSpec& d : dims) {
      auto* dim = shape->add_dim();
      if (std::holds_alternative<int64_t>(d)) dim->set_dim_value(std::get<int64_t>(d));
      else dim->set_dim_param(std::get<std::string>(d));
    }
  }

  onnx::ModelProto model_;
};

// A fresh, empty folder under the system temp dir, removed when the object dies.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& tag) {
    path_ = std::filesystem::temp_directory_path() / ("kiln-" + tag + "-" + std::to_string(::getpid()) + "-" +
                                                      std::to_string(counter()++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  static int& counter() {
    static int c = 0;
    return c;
  }
  std::filesystem::path path_;
};

}  // namespace kiln::testing
