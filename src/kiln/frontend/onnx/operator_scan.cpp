// Operator and domain scan over the ModelProto, consulting Kiln's registry and ONNX's schemas.
#include "kiln/frontend/onnx/operator_scan.h"

#include <onnx/defs/schema.h>

#include <algorithm>

#include "kiln/frontend/onnx/onnx_names.h"
#include "kiln/ops/op_registry.h"

namespace kiln::frontend {

namespace {

bool domain_known(const std::string& domain) {
  const auto kiln_domains = ops::OpRegistry::global().domains();
  if (std::find(kiln_domains.begin(), kiln_domains.end(), domain) != kiln_domains.end()) return true;
  return onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map().count(domain) != 0;
}

bool operator_known(const std::string& domain, const std::string& op_type) {
  return ops::OpRegistry::global().knows(domain, op_type) || onnx::OpSchemaRegistry::Schema(op_type, domain) != nullptr;
}

Status check_node(const onnx::NodeProto& node, int index, const std::map<std::string, int64_t>& opset_imports) {
  const std::string domain = canonical_domain(node.domain());
  const std::string where = "node '" + node_name(node, index) + "'";
  const std::string domain_text = domain.empty() ? "ai.onnx" : domain;
  if (!opset_imports.count(domain))
    return unsupported_operator(where + " uses op " + node.op_type() + " from domain '" + domain_text +
                                "', which the model does not import (opset_import)");
  if (!domain_known(domain))
    return unsupported_operator(where + " uses op " + node.op_type() + " from domain '" + domain_text +
                                "', which neither Kiln nor ONNX knows");
  if (!operator_known(domain, node.op_type()))
    return unsupported_operator("unknown operator " + node.op_type() + " (domain '" + domain_text + "') in " + where);
  for (const auto& attr : node.attribute()) {
    if (attr.has_g()) KILN_RETURN_IF_ERROR(check_operators_known(attr.g(), opset_imports));
    for (const auto& g : attr.graphs()) KILN_RETURN_IF_ERROR(check_operators_known(g, opset_imports));
  }
  return Status::ok();
}

}  // namespace

Status check_operators_known(const onnx::GraphProto& graph, const std::map<std::string, int64_t>& opset_imports) {
  for (int i = 0; i < graph.node_size(); ++i) KILN_RETURN_IF_ERROR(check_node(graph.node(i), i, opset_imports));
  return Status::ok();
}

}  // namespace kiln::frontend
