// Building the manifest and the weights section of a .kiln artifact.
#include "kiln/artifact/builder.h"

#include <dnnl.hpp>

#include <filesystem>
#include <map>

#include "kiln/artifact/container.h"
#include "kiln/artifact/plan.h"

namespace kiln::artifact {
namespace {

// Every initializer of the graph by name (sorted, so the layout never depends on graph order).
std::map<std::string, const Tensor*> weights_by_name(const ir::Graph& graph) {
  std::map<std::string, const Tensor*> weights;
  for (const auto& v : graph.values())
    if (v->initializer) weights[v->name] = &*v->initializer;
  return weights;
}

// The weights section (each tensor 64-byte aligned) and its index for the manifest.
Result<Section> weights_section(const ir::Graph& graph, nlohmann::json& index) {
  for (const auto& node : graph.nodes())
    if (node->has_subgraph())
      return unsupported_operator("artifact: node '" + node->name + "' (" + node->op_type +
                                  ") has subgraphs, which this artifact format version does not store");
  Section section{"weights", {}};
  index = nlohmann::json::array();
  for (const auto& [name, tensor] : weights_by_name(graph)) {
    if (tensor->dtype() == DType::kString)
      return unsupported_operator("artifact: string initializer '" + name + "' cannot be stored in this format version");
    section.bytes.resize((section.bytes.size() + kSectionAlignment - 1) / kSectionAlignment * kSectionAlignment, '\0');
    const size_t bytes = tensor->byte_size();
    index.push_back({{"name", name}, {"dtype", dtype_name(tensor->dtype())}, {"shape", tensor->shape()},
                     {"offset", section.bytes.size()}, {"bytes", bytes}});
    section.bytes.append(static_cast<const char*>(tensor->raw_data()), bytes);
  }
  return section;
}

nlohmann::json toolchain() {
  const dnnl_version_t* onednn = dnnl_version();
  return {{"compiler", std::string("g++ ") + __VERSION__},
          {"onednn", std::to_string(onednn->major) + "." + std::to_string(onednn->minor) + "." + std::to_string(onednn->patch)}};
}

// The report's parts that do not depend on the machine's timing or the file's location.
nlohmann::json deterministic_evidence(const nlohmann::json& report) {
  nlohmann::json passes = nlohmann::json::array();
  for (nlohmann::json run : report.value("passes", nlohmann::json::array())) {
    run.erase("ms");
    passes.push_back(run);
  }
  nlohmann::json model = report.value("model", nlohmann::json::object());
  if (model.contains("path"))
    model["name"] = std::filesystem::path(model["path"].get<std::string>()).filename().string();
  model.erase("path");
  return {{"model", model},
          {"options", report.value("options", nlohmann::json::object())},
          {"analysis", report.value("analysis", nlohmann::json::object())},
          {"passes", passes},
          {"nodes_after_passes", report.value("nodes_after_passes", 0)},
          {"partition", report.value("partition", nlohmann::json::object())},
          {"kernels", report.value("kernels", nlohmann::json::array())},
          {"memory", report.value("memory", nlohmann::json::object())}};
}

}  // namespace

Result<std::string> build_artifact(const ir::Model& model, const nlohmann::json& report) {
  nlohmann::json manifest = deterministic_evidence(report);
  manifest["kiln_version"] = report.value("kiln_version", "");
  manifest["toolchain"] = toolchain();
  manifest["source_sha256"] = model.sha256;
  nlohmann::json weights_index;
  KILN_ASSIGN_OR_RETURN(Section weights, weights_section(*model.graph, weights_index));
  std::map<std::string, int> weight_ids;
  for (const nlohmann::json& w : weights_index) weight_ids[w["name"]] = static_cast<int>(weight_ids.size());
  KILN_ASSIGN_OR_RETURN(std::string plan, encode_plan(model, weight_ids));
  std::vector<Section> sections = {{"plan", std::move(plan)}, std::move(weights)};
  manifest["weights"] = weights_index;
  return encode(manifest, sections);
}

}  // namespace kiln::artifact
