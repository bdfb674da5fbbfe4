// inspect_model: import and summarise a model without compiling it.
#include "kiln/model_info.h"

#include "kiln/frontend/onnx/importer.h"
#include "kiln/ir/printer.h"

namespace kiln {

namespace {

TensorInfo declared_info(const ir::Value& v) {
  TensorInfo info;
  info.name = v.name;
  info.dtype = v.type.dtype;
  info.rank_known = v.type.shape.has_value();
  if (v.type.shape)
    for (const ir::Dim& d : v.type.shape->dims()) {
      info.shape.push_back(d.is_static() ? d.value() : -1);
      info.dim_names.push_back(d.is_symbol() ? d.symbol_name() : "");
    }
  return info;
}

}  // namespace

Result<ModelInfo> inspect_model(const std::string& path, bool with_ir_text) {
  KILN_ASSIGN_OR_RETURN(ir::Model model, frontend::import_onnx_file(path));
  ModelInfo info;
  info.path = path;
  info.sha256 = model.sha256;
  info.file_bytes = model.file_bytes;
  info.ir_version = model.ir_version;
  info.producer = model.producer_name + (model.producer_version.empty() ? "" : " " + model.producer_version);
  for (const auto& [domain, version] : model.opset_imports) info.opset_imports[domain.empty() ? "ai.onnx" : domain] = version;
  info.metadata = model.metadata;
  for (const ir::Value* v : model.graph->inputs) info.inputs.push_back(declared_info(*v));
  for (const ir::Value* v : model.graph->outputs) info.outputs.push_back(declared_info(*v));
  for (const auto& node : model.graph->nodes())
    ++info.op_histogram[node->domain.empty() ? node->op_type : node->domain + "." + node->op_type];
  info.nodes = static_cast<int64_t>(model.graph->nodes().size());
  const ir::ParameterStats params = ir::parameter_stats(*model.graph);
  info.parameter_tensors = params.count;
  info.parameters = params.elements;
  info.parameter_bytes = params.bytes;
  if (with_ir_text) info.ir_text = ir::print_graph(*model.graph);
  return info;
}

}  // namespace kiln
