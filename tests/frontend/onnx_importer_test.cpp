// ONNX importer: valid models (types, symbolic dims, initializers, Constant nodes, subgraphs,
// metadata, file hash) and every refusal, each pinned to its StatusCode and the name it must give.
#include "kiln/frontend/onnx/importer.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <random>

#include "frontend/onnx_model_builder.h"

namespace kiln::frontend {
namespace {

using namespace kiln::frontend::testing;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string sha256sum(const std::string& path) {
  std::string out(64, '\0');
  FILE* p = ::popen(("sha256sum '" + path + "'").c_str(), "r");
  size_t n = std::fread(out.data(), 1, out.size(), p);
  ::pclose(p);
  out.resize(n);
  return out;
}

Result<ir::Model> import_model(const ScratchDir& dir, const onnx::ModelProto& m) {
  write_model(dir.file("model.onnx"), m);
  return import_onnx_file(dir.file("model.onnx"));
}

void expect_error(const Result<ir::Model>& r, StatusCode code, const std::vector<std::string>& parts) {
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), code) << r.status().to_string();
  for (const auto& part : parts) EXPECT_TRUE(contains(r.status().message(), part)) << part << " not in: " << r.status().message();
}

// x: float[N,3], mask: bool[?]; y = (x + w) * c with w an initializer and c a Constant.
onnx::ModelProto add_mul_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("kiln-test");
  m.set_producer_version("1.0");
  m.set_domain("org.test");
  m.set_model_version(7);
  m.set_doc_string("a test model");
  auto* meta = m.add_metadata_props();
  meta->set_key("author");
  meta->set_value("kiln");
  auto* opset = m.add_opset_import();
  opset->set_domain("ai.onnx");
  opset->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("add_mul");
  *g->add_input() = tensor_info("x", onnx::TensorProto::FLOAT, {"N", "3"});
  *g->add_input() = tensor_info("mask", onnx::TensorProto::BOOL, {"?"});
  *g->add_output() = tensor_info("y", onnx::TensorProto::FLOAT, {"N", "3"});
  *g->add_initializer() = float_tensor("w", {3}, {1.0f, 2.0f, 3.0f});
  *g->add_value_info() = tensor_info("a", onnx::TensorProto::FLOAT, {"N", "?"});
  add_node(*g, "Add", {"x", "w"}, {"a"}, "add1");
  auto* constant = add_node(*g, "Constant", {}, {"c"});
  auto* value = constant->add_attribute();
  value->set_name("value_float");
  value->set_type(onnx::AttributeProto::FLOAT);
  value->set_f(2.5f);
  add_node(*g, "Mul", {"a", "c"}, {"y"});
  return m;
}

TEST(OnnxImporter, ImportsTypesInitializersConstantsAndMetadata) {
  ScratchDir dir("frontend");
  Result<ir::Model> r = import_model(dir, add_mul_model());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const ir::Model& model = r.value();
  EXPECT_EQ(model.opset_imports, (std::map<std::string, int64_t>{{"", 13}}));
  EXPECT_EQ(model.ir_version, 8);
  EXPECT_EQ(model.producer_name, "kiln-test");
  EXPECT_EQ(model.producer_version, "1.0");
  EXPECT_EQ(model.domain, "org.test");
  EXPECT_EQ(model.model_version, 7);
  EXPECT_EQ(model.doc_string, "a test model");
  EXPECT_EQ(model.metadata.at("author"), "kiln");
  EXPECT_EQ(model.source_path, dir.file("model.onnx"));

  const ir::Graph& g = *model.graph;
  ASSERT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.inputs[0]->type.to_string(), "float[N,3]");
  EXPECT_TRUE(g.inputs[0]->type.shape->dims()[0].is_symbol());
  EXPECT_EQ(g.inputs[1]->type.dtype, DType::kBool);
  EXPECT_FALSE(g.inputs[1]->type.shape->dims()[0].is_static());
  EXPECT_FALSE(g.inputs[1]->type.shape->dims()[0].is_symbol());
  EXPECT_EQ(g.find_value("a")->type.to_string(), "float[N,?]");

  const ir::Value* w = g.find_value("w");
  ASSERT_TRUE(w && w->is_constant());
  EXPECT_EQ(w->initializer->data<float>()[2], 3.0f);
  const ir::Value* c = g.find_value("c");
  ASSERT_TRUE(c && c->is_constant());
  EXPECT_EQ(c->initializer->rank(), 0);
  EXPECT_EQ(c->initializer->data<float>()[0], 2.5f);

  ASSERT_EQ(g.nodes().size(), 2u);  // the Constant became an initializer
  EXPECT_EQ(g.nodes()[0]->name, "add1");
  EXPECT_EQ(g.nodes()[1]->name, "Mul_2");  // generated from op type and position
  EXPECT_EQ(g.nodes()[1]->opset_version, 13);
  EXPECT_EQ(g.nodes()[1]->domain, "");
}

TEST(OnnxImporter, HashAndSizeDescribeTheFile) {
  ScratchDir dir("frontend");
  Result<ir::Model> r = import_model(dir, add_mul_model());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->sha256, sha256sum(dir.file("model.onnx")));
  EXPECT_EQ(r->file_bytes, static_cast<int64_t>(std::filesystem::file_size(dir.file("model.onnx"))));

  Result<ir::Model> from_bytes = import_onnx_bytes(add_mul_model().SerializeAsString(), dir.path().string());
  ASSERT_TRUE(from_bytes.is_ok()) << from_bytes.status().to_string();
  EXPECT_EQ(from_bytes->sha256, r->sha256);
}

TEST(OnnxImporter, Ir3InitializersListedAsInputsAreConstants) {
  onnx::ModelProto m = relu_model();
  m.set_ir_version(3);
  auto* g = m.mutable_graph();
  g->mutable_node(0)->set_op_type("Add");
  g->mutable_node(0)->add_input("b");
  *g->add_input() = tensor_info("b", onnx::TensorProto::FLOAT, {"3"});
  *g->add_initializer() = float_tensor("b", {3}, {1, 2, 3});
  ScratchDir dir("frontend");
  Result<ir::Model> r = import_model(dir, m);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_EQ(r->graph->inputs.size(), 1u);
  EXPECT_EQ(r->graph->inputs[0]->name, "x");
  EXPECT_TRUE(r->graph->find_value("b")->is_constant());
}

// y = If(cond) then Identity(x) else Neg(x), both branches reading x from the enclosing graph.
TEST(OnnxImporter, SubgraphsReadEnclosingValues) {
  onnx::ModelProto m = relu_model();
  auto* g = m.mutable_graph();
  g->clear_node();
  *g->add_input() = tensor_info("cond", onnx::TensorProto::BOOL, {});
  auto* if_node = add_node(*g, "If", {"cond"}, {"y"}, "branch");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* attr = if_node->add_attribute();
    attr->set_name(branch);
    attr->set_type(onnx::AttributeProto::GRAPH);
    auto* body = attr->mutable_g();
    body->set_name(branch);
    add_node(*body, std::string(branch) == "then_branch" ? "Identity" : "Neg", {"x"}, {std::string(branch) + "_out"});
    auto* out = body->add_output();  // a subgraph output may leave its shape out
    out->set_name(std::string(branch) + "_out");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  ScratchDir dir("frontend");
  Result<ir::Model> r = import_model(dir, m);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const ir::Node& node = *r->graph->nodes()[0];
  const ir::Attribute* then_branch = node.attr("then_branch");
  ASSERT_TRUE(then_branch && then_branch->kind == ir::Attribute::Kind::kGraph);
  const ir::Graph& body = *then_branch->g;
  EXPECT_EQ(body.parent(), r->graph.get());
  const ir::Value* x = body.find_value("x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->producer, nullptr);
  EXPECT_FALSE(x->is_constant());
  EXPECT_EQ(body.outer_scope_reads(), std::vector<std::string>{"x"});
  EXPECT_EQ(body.nodes()[0]->opset_version, 13);
  EXPECT_EQ(body.outputs[0]->type.dtype, DType::kFloat);
  EXPECT_FALSE(body.outputs[0]->type.shape.has_value());
}

TEST(OnnxImporter, NodesListedOutOfOrderAreSorted) {
  onnx::ModelProto m = relu_model();
  auto* g = m.mutable_graph();
  g->clear_node();
  add_node(*g, "Relu", {"a"}, {"y"}, "second");
  add_node(*g, "Relu", {"x"}, {"a"}, "first");
  ScratchDir dir("frontend");
  Result<ir::Model> r = import_model(dir, m);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(r->graph->nodes()[0]->name, "first");
  EXPECT_EQ(r->graph->nodes()[1]->name, "second");
}

TEST(OnnxImporter, OmittedOptionalInputsAreNull) {
  onnx::ModelProto m = relu_model();
  auto* g = m.mutable_graph();
  g->clear_node();
  *g->add_initializer() = float_tensor("lo", {}, {0.0f});
  add_node(*g, "Clip", {"x", "", "lo"}, {"y"}, "clip");
  ScratchDir dir("frontend");
  Result<ir::Model> r = import_model(dir, m);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const ir::Node& clip = *r->graph->nodes()[0];
  ASSERT_EQ(clip.inputs.size(), 3u);
  EXPECT_EQ(clip.inputs[1], nullptr);
  EXPECT_EQ(clip.inputs[2]->name, "lo");
}

TEST(OnnxImporter, MissingFileIsNotFound) {
  ScratchDir dir("frontend");
  Result<ir::Model> r = import_onnx_file(dir.file("absent.onnx"));
  expect_error(r, StatusCode::kNotFound, {"absent.onnx"});
}

TEST(OnnxImporter, TruncatedFileIsInvalidModel) {
  onnx::ModelProto m = add_mul_model();
  *m.mutable_graph()->add_initializer() = float_tensor("big", {64}, std::vector<float>(64, 1.0f));
  std::string bytes = m.SerializeAsString();
  ScratchDir dir("frontend");
  write_bytes(dir.file("model.onnx"), bytes.substr(0, bytes.size() / 2));
  expect_error(import_onnx_file(dir.file("model.onnx")), StatusCode::kInvalidModel, {"model.onnx"});
}

TEST(OnnxImporter, RandomBytesAreInvalidModel) {
  std::mt19937 rng(1234);
  std::string bytes(4096, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  ScratchDir dir("frontend");
  write_bytes(dir.file("model.onnx"), bytes);
  expect_error(import_onnx_file(dir.file("model.onnx")), StatusCode::kInvalidModel, {});
}

TEST(OnnxImporter, UnknownOperatorNamesOpAndNode) {
  onnx::ModelProto m = relu_model();
  m.mutable_graph()->mutable_node(0)->set_op_type("FrobnicateAll");
  ScratchDir dir("frontend");
  expect_error(import_model(dir, m), StatusCode::kUnsupportedOperator,
               {"unknown operator FrobnicateAll", "node 'relu1'"});
}

TEST(OnnxImporter, UnknownOperatorInsideSubgraphIsFound) {
  onnx::ModelProto m = relu_model();
  auto* g = m.mutable_graph();
  g->clear_node();
  *g->add_input() = tensor_info("cond", onnx::TensorProto::BOOL, {});
  auto* if_node = add_node(*g, "If", {"cond"}, {"y"}, "branch");
  for (const char* branch : {"then_branch", "else_branch"}) {
    auto* attr = if_node->add_attribute();
    attr->set_name(branch);
    attr->set_type(onnx::AttributeProto::GRAPH);
    add_node(*attr->mutable_g(), "Mystery", {"x"}, {"out"});
    *attr->mutable_g()->add_output() = tensor_info("out", onnx::TensorProto::FLOAT, {"N", "3"});
  }
  ScratchDir dir("frontend");
  expect_error(import_model(dir, m), StatusCode::kUnsupportedOperator, {"Mystery", "node 'Mystery_0'"});
}

TEST(OnnxImporter, OperatorFromUnknownDomainIsUnsupported) {
  onnx::ModelProto m = relu_model();
  auto* opset = m.add_opset_import();
  opset->set_domain("com.example");
  opset->set_version(1);
  m.mutable_graph()->mutable_node(0)->set_domain("com.example");
  m.mutable_graph()->mutable_node(0)->set_op_type("Custom");
  ScratchDir dir("frontend");
  expect_error(import_model(dir, m), StatusCode::kUnsupportedOperator, {"com.example", "Custom", "node 'relu1'"});
}

TEST(OnnxImporter, DomainMissingFromOpsetImportIsUnsupported) {
  onnx::ModelProto m = relu_model();
  m.mutable_graph()->mutable_node(0)->set_domain("ai.onnx.ml");
  ScratchDir dir("frontend");
  expect_error(import_model(dir, m), StatusCode::kUnsupportedOperator, {"ai.onnx.ml", "not import", "node 'relu1'"});
}

TEST(OnnxImporter, CycleIsInvalidModelNamingANode) {
  onnx::ModelProto m = relu_model();
  auto* g = m.mutable_graph();
  g->clear_node();
  add_node(*g, "Relu", {"y"}, {"a"}, "loop_a");
  add_node(*g, "Relu", {"a"}, {"y"}, "loop_b");
  ScratchDir dir("frontend");
  expect_error(import_model(dir, m), StatusCode::kInvalidModel, {"cycle", "'loop_"});
}

TEST(OnnxImporter, DanglingInputIsInvalidModelNamingNodeAndValue) {
  onnx::ModelProto m = relu_model();
  m.mutable_graph()->mutable_node(0)->set_input(0, "nowhere");
  ScratchDir dir("frontend");
  expect_error(import_model(dir, m), StatusCode::kInvalidModel, {"'relu1'", "'nowhere'"});
}

TEST(OnnxImporter, SequenceAndOptionalInputsAreTyped) {
  onnx::ModelProto m = relu_model();
  auto* seq = m.mutable_graph()->add_input();
  seq->set_name("items");
  seq->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(1);
  auto* opt = m.mutable_graph()->add_input();
  opt->set_name("maybe");
  opt->mutable_type()->mutable_optional_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(7);
  ScratchDir dir("frontend");
  auto model = import_model(dir, m);
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  EXPECT_EQ(model.value().graph->find_value("items")->type.to_string(), "seq(float)");
  EXPECT_EQ(model.value().graph->find_value("maybe")->type.to_string(), "optional(int64)");
}

TEST(OnnxImporter, MapInputIsUnsupportedNamingTheValue) {
  onnx::ModelProto m = relu_model();
  auto* map = m.mutable_graph()->add_input();
  map->set_name("table");
  map->mutable_type()->mutable_map_type()->set_key_type(7);
  map->mutable_type()->mutable_map_type()->mutable_value_type()->mutable_tensor_type()->set_elem_type(1);
  ScratchDir dir("frontend");
  expect_error(import_model(dir, m), StatusCode::kUnsupportedOperator, {"input 'table'", "map"});
}

TEST(OnnxImporter, SparseConstantIsUnsupported) {
  onnx::ModelProto m = relu_model();
  auto* g = m.mutable_graph();
  g->clear_node();
  auto* constant = add_node(*g, "Constant", {}, {"y"}, "sparse_c");
  auto* attr = constant->add_attribute();
  attr->set_name("sparse_value");
  attr->set_type(onnx::AttributeProto::SPARSE_TENSOR);
  *attr->mutable_sparse_tensor()->mutable_values() = float_tensor("v", {1}, {1.0f});
  attr->mutable_sparse_tensor()->mutable_indices()->set_data_type(onnx::TensorProto::INT64);
  attr->mutable_sparse_tensor()->mutable_indices()->add_dims(1);
  attr->mutable_sparse_tensor()->mutable_indices()->add_int64_data(0);
  attr->mutable_sparse_tensor()->add_dims(3);
  g->clear_input();
  g->clear_output();
  *g->add_output() = tensor_info("y", onnx::TensorProto::FLOAT, {"3"});
  ScratchDir dir("frontend");
  expect_error(import_model(dir, m), StatusCode::kUnsupportedOperator, {"sparse_value", "'sparse_c'"});
}

TEST(OnnxImporter, BadInitializerSizeNamesTheTensor) {
  onnx::ModelProto m = relu_model();
  auto* g = m.mutable_graph();
  g->mutable_node(0)->set_op_type("Add");
  g->mutable_node(0)->add_input("bias");
  *g->add_initializer() = float_tensor("bias", {3}, {1.0f, 2.0f});
  ScratchDir dir("frontend");
  expect_error(import_model(dir, m), StatusCode::kInvalidModel, {"tensor 'bias'", "float_data holds 2"});
}

// --- External data ---

// relu_model with y = x + w, w: float[3] stored externally at `location`/`offset`.
onnx::ModelProto external_model(const std::string& location, uint64_t offset) {
  onnx::ModelProto m = relu_model();
  auto* g = m.mutable_graph();
  g->mutable_node(0)->set_op_type("Add");
  g->mutable_node(0)->add_input("w");
  onnx::TensorProto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  w->add_dims(3);
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [key, value] : {std::pair<std::string, std::string>{"location", location},
                            {"offset", std::to_string(offset)}, {"length", "12"}}) {
    auto* e = w->add_external_data();
    e->set_key(key);
    e->set_value(value);
  }
  return m;
}

void write_floats_at(const std::string& path, uint64_t offset, const std::vector<float>& values, uint64_t file_size) {
  int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(file_size)), 0);  // sparse: only the values are real data
  const ssize_t bytes = static_cast<ssize_t>(values.size() * sizeof(float));
  ASSERT_EQ(::pwrite(fd, values.data(), values.size() * sizeof(float), static_cast<off_t>(offset)), bytes);
  ::close(fd);
}

TEST(OnnxImporterExternalData, LoadsTensorAtOffset) {
  ScratchDir dir("frontend");
  std::filesystem::create_directory(dir.file("weights"));
  write_floats_at(dir.file("weights/w.bin"), 16, {4, 5, 6}, 28);
  Result<ir::Model> r = import_model(dir, external_model("weights/w.bin", 16));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Tensor& w = *r->graph->find_value("w")->initializer;
  EXPECT_EQ((std::vector<float>(w.data<float>(), w.data<float>() + 3)), (std::vector<float>{4, 5, 6}));
}

TEST(OnnxImporterExternalData, LoadsTensorBeyondTwoGiB) {
  ScratchDir dir("frontend");
  const uint64_t offset = (uint64_t{5} << 30) / 2;  // 2.5 GiB
  write_floats_at(dir.file("w.bin"), offset, {7, 8, 9}, offset + 4096);
  Result<ir::Model> r = import_model(dir, external_model("w.bin", offset));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const Tensor& w = *r->graph->find_value("w")->initializer;
  EXPECT_EQ(w.data<float>()[0], 7.0f);
  EXPECT_EQ(w.data<float>()[2], 9.0f);
}

TEST(OnnxImporterExternalData, ShortFileIsInvalidModel) {
  ScratchDir dir("frontend");
  write_floats_at(dir.file("w.bin"), 0, {1, 2}, 8);
  expect_error(import_model(dir, external_model("w.bin", 0)), StatusCode::kInvalidModel,
               {"tensor 'w'", "w.bin", "shorter"});
}

// Checked against the file before the tensor is allocated: 4 TiB declared in a 12-byte file is an
// invalid model, not an allocation (nor an allocation failure).
TEST(OnnxImporterExternalData, HugeTensorInASmallFileIsRefusedBeforeAllocating) {
  ScratchDir dir("frontend");
  write_floats_at(dir.file("w.bin"), 0, {1, 2, 3}, 12);
  onnx::ModelProto m = external_model("w.bin", 0);
  onnx::TensorProto* w = m.mutable_graph()->mutable_initializer(0);
  w->set_dims(0, int64_t{1} << 40);
  w->mutable_external_data()->RemoveLast();  // no declared length: the file's size decides
  expect_error(import_model(dir, m), StatusCode::kInvalidModel,
               {"tensor 'w'", "w.bin", "is 12 bytes, shorter than offset 0 + length 4398046511104"});
}

TEST(OnnxImporterExternalData, ParentEscapeIsRefused) {
  ScratchDir outer("frontend");
  std::filesystem::create_directory(outer.file("model"));
  write_floats_at(outer.file("w.bin"), 0, {1, 2, 3}, 12);
  write_model(outer.file("model/model.onnx"), external_model("../w.bin", 0));
  expect_error(import_onnx_file(outer.file("model/model.onnx")), StatusCode::kInvalidModel,
               {"tensor 'w'", "'../w.bin'", ".."});
}

TEST(OnnxImporterExternalData, AbsolutePathIsRefused) {
  ScratchDir dir("frontend"), elsewhere("frontend-other");
  write_floats_at(elsewhere.file("w.bin"), 0, {1, 2, 3}, 12);
  expect_error(import_model(dir, external_model(elsewhere.file("w.bin"), 0)), StatusCode::kInvalidModel,
               {"tensor 'w'", elsewhere.file("w.bin"), "absolute"});
}

TEST(OnnxImporterExternalData, SymlinkLeavingTheFolderIsRefused) {
  ScratchDir dir("frontend"), elsewhere("frontend-other");
  write_floats_at(elsewhere.file("w.bin"), 0, {1, 2, 3}, 12);
  std::filesystem::create_symlink(elsewhere.file("w.bin"), dir.file("link.bin"));
  expect_error(import_model(dir, external_model("link.bin", 0)), StatusCode::kInvalidModel,
               {"tensor 'w'", "'link.bin'", "outside"});
}

TEST(OnnxImporterExternalData, SymlinkInsideTheFolderIsAccepted) {
  ScratchDir dir("frontend");
  write_floats_at(dir.file("w.bin"), 0, {1, 2, 3}, 12);
  std::filesystem::create_symlink("w.bin", dir.file("link.bin"));
  Result<ir::Model> r = import_model(dir, external_model("link.bin", 0));
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const ir::Value* w = r.value().graph->find_value("w");  // the bytes read through the link
  ASSERT_TRUE(w && w->initializer);
  ASSERT_EQ(w->initializer->element_count(), 3);
  EXPECT_EQ(std::vector<float>(w->initializer->data<float>(), w->initializer->data<float>() + 3), (std::vector<float>{1, 2, 3}));
}

}  // namespace
}  // namespace kiln::frontend
