// inspect_model() and the model summaries it shares with the Session's report.
#include "kiln/model_info.h"

#include "kiln/frontend/model_formats.h"
#include "kiln/ir/printer.h"
#include "kiln/runtime/model_summary.h"

namespace kiln {

std::string type_text(const TensorInfo& info) {
  if (info.kind == Value::Kind::kSequence) return std::string("seq(") + dtype_name(info.dtype) + ")";
  if (info.kind == Value::Kind::kOptional) return std::string("optional(") + dtype_name(info.dtype) + ")";
  std::string s = dtype_name(info.dtype);
  if (!info.rank_known) return s + "[?...]";
  s += "[";
  for (size_t i = 0; i < info.shape.size(); ++i) {
    if (i) s += ",";
    s += info.shape[i] >= 0 ? std::to_string(info.shape[i]) : (info.dim_names[i].empty() ? "?" : info.dim_names[i]);
  }
  return s + "]";
}

Result<ModelInfo> inspect_model(const std::string& path, bool with_ir_text) {
  KILN_ASSIGN_OR_RETURN(ir::Model model, frontend::import_model_file(path));
  ModelInfo info = runtime::summarize_model(model, with_ir_text);
  info.path = path;
  return info;
}

namespace runtime {

TensorInfo tensor_info(const ir::Value& v) {
  TensorInfo info;
  info.name = v.name;
  if (!v.type.is_tensor()) {
    info.kind = v.type.kind == ir::TensorType::Kind::kSequence ? Value::Kind::kSequence : Value::Kind::kOptional;
    const ir::TensorType* element = v.type.element.get();
    while (element && !element->is_tensor()) element = element->element.get();
    info.dtype = element ? element->dtype : DType::kUndefined;
    info.rank_known = false;
    return info;
  }
  info.dtype = v.type.dtype;
  info.rank_known = v.type.shape.has_value();
  if (v.type.shape)
    for (const ir::Dim& d : v.type.shape->dims()) {
      info.shape.push_back(d.is_static() ? d.value() : -1);
      info.dim_names.push_back(d.is_symbol() ? d.symbol_name() : "");
    }
  return info;
}

ModelInfo summarize_model(const ir::Model& model, bool with_ir_text) {
  ModelInfo info;
  info.path = model.source_path;
  info.sha256 = model.sha256;
  info.file_bytes = model.file_bytes;
  info.ir_version = model.ir_version;
  info.producer = model.producer_name + (model.producer_version.empty() ? "" : " " + model.producer_version);
  for (const auto& [domain, version] : model.opset_imports) info.opset_imports[domain.empty() ? "ai.onnx" : domain] = version;
  info.metadata = model.metadata;
  for (const ir::Value* v : model.graph->inputs) info.inputs.push_back(tensor_info(*v));
  for (const ir::Value* v : model.graph->outputs) info.outputs.push_back(tensor_info(*v));
  for (const auto& node : model.graph->nodes())
    ++info.op_histogram[node->domain.empty() ? node->op_type : node->domain + "." + node->op_type];
  info.nodes = ir::count_nodes(*model.graph);
  const ir::ParameterStats params = ir::parameter_stats(*model.graph);
  info.parameter_tensors = params.count;
  info.parameters = params.elements;
  info.parameter_bytes = params.bytes;
  if (with_ir_text) info.ir_text = ir::print_graph(*model.graph);
  return info;
}

}  // namespace runtime
}  // namespace kiln
