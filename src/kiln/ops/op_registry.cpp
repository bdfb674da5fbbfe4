// OpRegistry lookup and the global registry built from every op family.
#include "kiln/ops/op_registry.h"

#include <algorithm>
#include <map>
#include <set>

#include "kiln/ops/op_families.h"
#include "kiln/ops/subgraph_runner.h"

namespace kiln::ops {

KernelContext::KernelContext(const ir::Node& node, std::vector<const Value*> inputs, std::vector<Value*> outputs,
                             const ValueScope* scope)
    : node_(node), input_values_(std::move(inputs)), output_values_(std::move(outputs)), scope_(scope) {
  for (const Value* v : input_values_) inputs_.push_back(v && v->is_tensor() ? &v->tensor() : nullptr);
  for (Value* v : output_values_) outputs_.push_back(v ? &v->tensor() : nullptr);
}

Result<std::vector<Value>> KernelContext::run_body(const ir::Graph& body, const std::vector<Value>& inputs) const {
  return body_runner_ ? (*body_runner_)(body, inputs, scope()) : run_subgraph(body, inputs, scope());
}

Status KernelContext::set_output(size_t i, Value value) const {
  if (i < output_values_.size()) {
    if (output_values_[i]) *output_values_[i] = std::move(value);
    return Status::ok();
  }
  if (!value.is_tensor())
    return internal_error(node_.describe() + ": output " + std::to_string(i) + " is a " + value.describe() +
                          ", which a tensor-only context cannot hold");
  if (Tensor* out = output(i)) *out = std::move(value.tensor());
  return Status::ok();
}

const OpRegistry& OpRegistry::global() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    register_all_op_families(r);
    return r;
  }();
  return registry;
}

void OpRegistry::add(OpDef def) {
  auto& versions = defs_[{def.domain, def.op_type}];
  versions.push_back(std::move(def));
  std::sort(versions.begin(), versions.end(),
            [](const OpDef& a, const OpDef& b) { return a.since_version < b.since_version; });
}

const OpDef* OpRegistry::find(const std::string& domain, const std::string& op_type, int opset_version) const {
  auto it = defs_.find({domain, op_type});
  if (it == defs_.end()) return nullptr;
  const OpDef* best = nullptr;
  for (const OpDef& def : it->second)
    if (def.since_version <= opset_version) best = &def;
  return best;
}

bool OpRegistry::knows(const std::string& domain, const std::string& op_type) const {
  return defs_.count({domain, op_type}) != 0;
}

std::vector<std::string> OpRegistry::domains() const {
  std::set<std::string> out;
  for (const auto& [key, defs] : defs_) out.insert(key.first);
  return {out.begin(), out.end()};
}

std::map<std::pair<std::string, std::string>, std::vector<int>> OpRegistry::listing() const {
  std::map<std::pair<std::string, std::string>, std::vector<int>> out;
  for (const auto& [key, defs] : defs_)
    for (const OpDef& def : defs) out[key].push_back(def.since_version);
  return out;
}

bool is_nondeterministic(const ir::Node& node) {
  static const std::set<std::string> kRandomOps = {"RandomNormal",      "RandomUniform", "RandomNormalLike",
                                                   "RandomUniformLike", "Bernoulli",     "Multinomial"};
  return (node.domain.empty() || node.domain == "ai.onnx") && kRandomOps.count(node.op_type) != 0;
}

int newest_supported_opset(const std::string& domain) {
  if (domain.empty() || domain == "ai.onnx") return 21;
  return 1000;  // other domains version their ops individually
}

Result<const OpDef*> resolve_op(const OpRegistry& registry, const ir::Node& node) {
  const std::string domain_name = node.domain.empty() ? "ai.onnx" : node.domain;
  if (node.opset_version > newest_supported_opset(node.domain))
    return unsupported_operator("operator " + node.op_type + " in node '" + node.name + "' uses " + domain_name +
                                " opset " + std::to_string(node.opset_version) + ", newer than Kiln supports (" +
                                std::to_string(newest_supported_opset(node.domain)) + ")");
  if (const OpDef* def = registry.find(node.domain, node.op_type, node.opset_version)) return def;
  if (registry.knows(node.domain, node.op_type))
    return unsupported_operator("operator " + node.op_type + " (domain " + domain_name + ") at opset " +
                                std::to_string(node.opset_version) + " is not implemented; node '" + node.name + "'");
  const auto domains = registry.domains();
  if (std::find(domains.begin(), domains.end(), node.domain) == domains.end())
    return unsupported_operator("domain '" + domain_name + "' is not supported (operator " + node.op_type +
                                ", node '" + node.name + "')");
  return unsupported_operator("operator " + node.op_type + " (domain " + domain_name + ") is not implemented by Kiln; node '" +
                              node.name + "'");
}

}  // namespace kiln::ops
