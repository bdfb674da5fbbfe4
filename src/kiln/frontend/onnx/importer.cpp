// Import steps: parse, scan operators, order nodes, convert the graph and verify it, run ONNX's
// checker. The checker runs after Kiln's verifier so that cycles and dangling inputs get Kiln's
// messages (the checker would only say the nodes are not sorted). Models newer than the checker
// knows (IR 9-10, opsets 18-21) are checked by Kiln's own header checks instead.
#include "kiln/frontend/onnx/importer.h"

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <onnx/checker.h>

#include <climits>
#include <exception>
#include <functional>
#include <set>

#include "kiln/frontend/onnx/external_data.h"
#include "kiln/frontend/onnx/graph_builder.h"
#include "kiln/frontend/onnx/node_order.h"
#include "kiln/frontend/onnx/onnx_names.h"
#include "kiln/frontend/onnx/operator_scan.h"
#include "kiln/frontend/onnx/tensor_proto.h"
#include "kiln/io/file.h"
#include "kiln/ir/verifier.h"

namespace kiln::frontend {

namespace {

using TensorVisitor = std::function<Status(onnx::TensorProto&)>;

// Visits every TensorProto of a graph: initializers, tensor attributes and those of subgraphs.
Status for_each_tensor(onnx::GraphProto& graph, const TensorVisitor& fn) {
  for (auto& t : *graph.mutable_initializer()) KILN_RETURN_IF_ERROR(fn(t));
  for (auto& node : *graph.mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_t()) KILN_RETURN_IF_ERROR(fn(*attr.mutable_t()));
      for (auto& t : *attr.mutable_tensors()) KILN_RETURN_IF_ERROR(fn(t));
      if (attr.has_g()) KILN_RETURN_IF_ERROR(for_each_tensor(*attr.mutable_g(), fn));
      for (auto& g : *attr.mutable_graphs()) KILN_RETURN_IF_ERROR(for_each_tensor(g, fn));
    }
  }
  return Status::ok();
}

// Spells the ONNX domain "" everywhere: ONNX's checker does not accept "ai.onnx" as its alias.
void canonicalize_domains(onnx::GraphProto& graph) {
  for (auto& node : *graph.mutable_node()) {
    node.set_domain(canonical_domain(node.domain()));
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) canonicalize_domains(*attr.mutable_g());
      for (auto& g : *attr.mutable_graphs()) canonicalize_domains(g);
    }
  }
}

void canonicalize_domains(onnx::ModelProto& model) {
  for (auto& opset : *model.mutable_opset_import()) opset.set_domain(canonical_domain(opset.domain()));
  canonicalize_domains(*model.mutable_graph());
}

std::map<std::string, int64_t> opset_imports_of(const onnx::ModelProto& model) {
  std::map<std::string, int64_t> imports;
  for (const auto& opset : model.opset_import()) imports[opset.domain()] = opset.version();
  if (imports.empty() && model.ir_version() < 3) imports[""] = 1;  // what ONNX assumes for IR < 3
  return imports;
}

// ONNX 1.12's checker looks for external data files relative to the working directory, so it is
// given a copy whose locations are the resolved absolute paths (which also refuses escapes early).
Result<onnx::ModelProto> with_resolved_external_paths(const onnx::ModelProto& model, const std::string& base_dir) {
  onnx::ModelProto copy = model;
  KILN_RETURN_IF_ERROR(for_each_tensor(*copy.mutable_graph(), [&](onnx::TensorProto& t) -> Status {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) return Status::ok();
    for (auto& entry : *t.mutable_external_data()) {
      if (entry.key() != "location") continue;
      KILN_ASSIGN_OR_RETURN(std::string path, resolve_external_location(base_dir, entry.value(), t.name()));
      entry.set_value(path);
    }
    return Status::ok();
  }));
  return copy;
}

bool has_external_data(onnx::ModelProto& model) {
  bool found = false;
  (void)for_each_tensor(*model.mutable_graph(), [&](onnx::TensorProto& t) {
    found = found || t.data_location() == onnx::TensorProto::EXTERNAL;
    return Status::ok();
  });
  return found;
}

Status run_checker(onnx::ModelProto& model, const std::string& base_dir) {
  try {
    if (has_external_data(model)) {
      KILN_ASSIGN_OR_RETURN(onnx::ModelProto resolved, with_resolved_external_paths(model, base_dir));
      onnx::checker::check_model(resolved);
    } else {
      onnx::checker::check_model(model);
    }
  } catch (const std::bad_alloc&) {
    throw;  // out of memory, not an invalid model: the session's load classifies it
  } catch (const std::exception& e) {
    return invalid_model(std::string("ONNX checker: ") + e.what());
  }
  return Status::ok();
}

// The newest IR version Kiln reads (ONNX 1.16's), and the newest the linked ONNX checker knows.
constexpr int64_t kNewestIrVersion = 10;

int64_t checker_newest_opset() {
  const auto& ranges = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  const auto it = ranges.find(onnx::ONNX_DOMAIN);
  return it == ranges.end() ? 0 : it->second.second;
}

// Whether the linked ONNX checker (Debian's 1.12: IR 8, opset 17) knows the model's IR version and
// default-domain opset. Newer models are checked by Kiln's own checks instead of being refused:
// check_model_header here, ir::verify's structure, the operator scan and every node's shape rule.
bool checker_knows(const onnx::ModelProto& model) {
  if (model.ir_version() > onnx::IR_VERSION) return false;
  for (const auto& opset : model.opset_import())
    if (opset.domain().empty() && opset.version() > checker_newest_opset()) return false;
  return true;
}

// What the checker checks of the model as a whole, for models it does not know: a known IR
// version, positive opset versions imported once each, the default domain imported.
Status check_model_header(const onnx::ModelProto& model) {
  if (model.ir_version() > kNewestIrVersion)
    return invalid_model("IR version " + std::to_string(model.ir_version()) + " is newer than Kiln reads (" +
                         std::to_string(kNewestIrVersion) + ")");
  std::set<std::string> domains;
  for (const auto& opset : model.opset_import()) {
    if (opset.version() <= 0)
      return invalid_model("opset_import of domain '" + opset.domain() + "' has version " + std::to_string(opset.version()));
    if (!domains.insert(opset.domain()).second) return invalid_model("opset_import lists domain '" + opset.domain() + "' twice");
  }
  if (!domains.count("")) return invalid_model("opset_import does not import the default ONNX domain");
  return Status::ok();
}

Status check_parsed(const onnx::ModelProto& proto, bool parsed) {
  if (!parsed) return invalid_model("not a valid ONNX model: the protobuf cannot be parsed (truncated or not ONNX)");
  if (proto.ir_version() <= 0 || !proto.has_graph())
    return invalid_model("not a valid ONNX model: no ir_version or no graph");
  return Status::ok();
}

Status check_size(size_t bytes) {
  if (bytes > static_cast<size_t>(INT_MAX))
    return invalid_model("the model is over 2 GiB; large weights must be stored as external data");
  return Status::ok();
}

Status parse_model(const std::string& bytes, onnx::ModelProto& proto) {
  KILN_RETURN_IF_ERROR(check_size(bytes.size()));
  return check_parsed(proto, proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())));
}

// protobuf pulling a file through `reader`, which hashes it on the way: the file is never held
// whole in memory.
class ReaderStream final : public google::protobuf::io::CopyingInputStream {
 public:
  explicit ReaderStream(io::HashingReader& reader) : reader_(reader) {}
  int Read(void* buffer, int size) override {
    Result<size_t> n = reader_.read(buffer, static_cast<size_t>(size));
    return n.is_ok() ? static_cast<int>(n.value()) : -1;
  }

 private:
  io::HashingReader& reader_;
};

Status parse_model(io::HashingReader& reader, onnx::ModelProto& proto) {
  KILN_RETURN_IF_ERROR(check_size(reader.size()));
  ReaderStream input(reader);
  google::protobuf::io::CopyingInputStreamAdaptor stream(&input, 1 << 20);
  const bool parsed = proto.ParseFromZeroCopyStream(&stream);
  // Whatever protobuf left unread (a parse that stopped early) is still hashed.
  char rest[4096];
  for (Result<size_t> n = reader.read(rest, sizeof rest); n.is_ok() && n.value() > 0; n = reader.read(rest, sizeof rest)) {
  }
  return check_parsed(proto, parsed);
}

// The main graph's initializers stored as raw_data, converted; each one's bytes in `proto` are
// then replaced by a one-byte stand-in, so that the model's weights are never held twice. (ONNX's
// checker, which runs later, asks only that a tensor has one value field.)
Result<std::map<std::string, Tensor>> take_initializers(onnx::GraphProto& graph, const std::string& base_dir) {
  std::map<std::string, Tensor> taken;
  for (onnx::TensorProto& init : *graph.mutable_initializer()) {
    if (init.raw_data().empty() || taken.count(init.name())) continue;
    KILN_ASSIGN_OR_RETURN(Tensor t, tensor_from_proto(init, base_dir));
    taken.emplace(init.name(), std::move(t));
    std::string(1, '\0').swap(*init.mutable_raw_data());
  }
  return taken;
}

Result<ir::Model> convert_model(onnx::ModelProto& proto, const std::string& base_dir) {
  canonicalize_domains(proto);
  ImportContext ctx{opset_imports_of(proto), base_dir, {}};
  KILN_RETURN_IF_ERROR(check_operators_known(proto.graph(), ctx.opset_imports));
  sort_nodes(*proto.mutable_graph());

  ir::Model model;
  KILN_ASSIGN_OR_RETURN(ctx.main_initializers, take_initializers(*proto.mutable_graph(), base_dir));
  KILN_ASSIGN_OR_RETURN(model.graph, convert_graph(proto.graph(), ctx, nullptr));
  KILN_RETURN_IF_ERROR(ir::verify(*model.graph));
  KILN_RETURN_IF_ERROR(checker_knows(proto) ? run_checker(proto, base_dir) : check_model_header(proto));
  model.opset_imports = ctx.opset_imports;
  model.ir_version = proto.ir_version();
  model.producer_name = proto.producer_name();
  model.producer_version = proto.producer_version();
  model.domain = proto.domain();
  model.model_version = proto.model_version();
  model.doc_string = proto.doc_string();
  for (const auto& entry : proto.metadata_props()) model.metadata[entry.key()] = entry.value();
  return model;
}

}  // namespace

Result<ir::Model> import_onnx_file(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<io::HashingReader> reader, io::HashingReader::open(path));
  onnx::ModelProto proto;
  KILN_RETURN_IF_ERROR(parse_model(*reader, proto).with_context(path));
  KILN_ASSIGN_OR_RETURN(const std::string sha256, reader->sha256_hex());
  const auto file_bytes = static_cast<int64_t>(reader->size());
  reader.reset();
  Result<ir::Model> model = convert_model(proto, io::parent_folder(path));
  if (!model.is_ok()) return model.status().with_context(path);
  model->source_path = path;
  model->sha256 = sha256;
  model->file_bytes = file_bytes;
  return model;
}

Result<ir::Model> import_onnx_bytes(const std::string& bytes, const std::string& base_dir) {
  onnx::ModelProto proto;
  KILN_RETURN_IF_ERROR(parse_model(bytes, proto));
  KILN_ASSIGN_OR_RETURN(ir::Model model, convert_model(proto, base_dir));
  KILN_ASSIGN_OR_RETURN(model.sha256, io::sha256_hex(bytes));
  model.file_bytes = static_cast<int64_t>(bytes.size());
  return model;
}

}  // namespace kiln::frontend
