// Building a .kiln artifact: the manifest and every section (see builder.h).
#include "kiln/artifact/builder.h"

#include <dnnl.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "kiln/artifact/container.h"
#include "kiln/artifact/packed_weights.h"
#include "kiln/artifact/plan.h"
#include "kiln/artifact/tensor_section.h"
#include "kiln/io/file.h"
#include "kiln/ops/numeric_precision.h"

namespace kiln::artifact {
namespace {

// Every initializer of the graph by name (sorted, so the layout never depends on graph order); the
// constants of its control-flow bodies are stored in the plan with their bodies.
std::map<std::string, const Tensor*> weights_by_name(const ir::Graph& graph) {
  std::map<std::string, const Tensor*> weights;
  for (const auto& v : graph.values())
    if (v->initializer) weights[v->name] = &*v->initializer;
  return weights;
}

// The weights section (the plain tensors, each 64-byte aligned) and the manifest's weight list:
// every initializer by name, plain ones with their place in the section, those stored only packed
// with the index of their entry in `packed_index`.
Result<TensorSection> weights_section(const ir::Graph& graph, const std::set<std::string>& packed_only,
                                      const nlohmann::json& packed_index) {
  const std::map<std::string, const Tensor*> by_name = weights_by_name(graph);
  std::vector<std::pair<std::string, const Tensor*>> plain;
  for (const auto& [name, tensor] : by_name)
    if (!packed_only.count(name)) plain.emplace_back(name, tensor);
  KILN_ASSIGN_OR_RETURN(TensorSection section, encode_tensors(plain));
  nlohmann::json list = nlohmann::json::array();
  size_t next_plain = 0;
  for (const auto& [name, tensor] : by_name) {
    if (!packed_only.count(name)) {
      list.push_back(section.index[next_plain++]);
      continue;
    }
    size_t entry = 0;
    while (packed_index[entry]["value"] != name) ++entry;  // packed_only names only packed values
    list.push_back({{"name", name}, {"dtype", dtype_name(tensor->dtype())}, {"shape", tensor->shape()}, {"packed", entry}});
  }
  section.index = std::move(list);
  return section;
}

nlohmann::json toolchain() {
  const dnnl_version_t* onednn = dnnl_version();
  return {{"compiler", std::string("g++ ") + __VERSION__},
          {"onednn", std::to_string(onednn->major) + "." + std::to_string(onednn->minor) + "." + std::to_string(onednn->patch)}};
}

// The manifest's fields that say how the artifact runs (`execution`) and what it needs (`target`).
nlohmann::json execution_and_target(const compiler::CompiledModel& compiled, const CompileRecord& record,
                                    const ArtifactExtras& extras, const providers::PlanEvidence& kernels) {
  const ir::Graph& graph = *compiled.model.graph;
  nlohmann::json shapes = nlohmann::json::object();
  for (size_t i = 0; i < graph.inputs.size() && i < extras.input_shapes.size(); ++i) shapes[graph.inputs[i]->name] = extras.input_shapes[i];
  const ops::GraphPreferences preferred = compiled.providers.front()->graph_preferences(compiled.options.precision.preference);
  std::vector<std::string> layouts;
  for (const ops::ActivationLayout& layout : preferred.activation_layouts) layouts.push_back(layout.name());
  // The compiling machine's CPU is not the artifact's: its level, layouts and needed features are.
  return {{"execution", {{"mode", "aot"}, {"input_shapes", shapes}, {"threads", record.threads}}},
          {"target",
           {{"isa", record.isa},
            {"level", compiled.target.level},
            {"vector_bits", compiled.target.vector_bits},
            {"activation_layouts", layouts},
            {"winograd", preferred.prefers(ops::GraphForm::kWinograd)},
            {"required_features", kernels.required_features()},
            {"implementations", kernels.implementations()},
            {"node_implementations", kernels.node_implementations()}}}};
}

Status check_asset_name(const std::string& name) {
  const bool ok = !name.empty() && name.size() <= 128 && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
  return ok ? Status::ok()
            : invalid_argument("asset name '" + name + "' must be 1-128 letters, digits, '.', '_' or '-'");
}

}  // namespace

std::string asset_section_name(const std::string& name) { return "asset:" + name; }
std::string warmup_section_name(const std::string& part) { return "warmup." + part; }

Result<std::string> build_artifact(const compiler::CompiledModel& compiled, const CompileRecord& record, const ArtifactExtras& extras) {
  const ir::Model& model = compiled.model;
  const providers::PlanEvidence no_kernels;
  const providers::PlanEvidence& kernels = extras.kernels ? *extras.kernels : no_kernels;
  nlohmann::json manifest = record.evidence;
  manifest.update(execution_and_target(compiled, record, extras, kernels));
  manifest["kiln_version"] = record.kiln_version;
  manifest["toolchain"] = toolchain();
  manifest["source_sha256"] = model.sha256;
  PackedSection packed = encode_packed(kernels);
  KILN_ASSIGN_OR_RETURN(TensorSection weights, weights_section(*model.graph, packed_only_values(*model.graph, kernels), packed.index));
  std::map<std::string, int> weight_ids;
  for (const nlohmann::json& w : weights.index) weight_ids[w["name"]] = static_cast<int>(weight_ids.size());
  const compiler::PrecisionOptions& chosen = compiled.options.precision;
  const PlanPrecision precision{ops::preference_name(chosen.preference), chosen.kept_source_nodes, chosen.fallback_source_nodes};
  KILN_ASSIGN_OR_RETURN(std::string plan, encode_plan(model, weight_ids, precision));
  std::vector<Section> sections = {{"plan", std::move(plan)}, {"weights", std::move(weights.bytes)}, {"packed", std::move(packed.bytes)}};
  manifest["weights"] = std::move(weights.index);
  manifest["packed"] = std::move(packed.index);
  manifest["assets"] = nlohmann::json::array();
  for (const std::string part : {"inputs", "outputs"}) {
    std::vector<std::pair<std::string, const Tensor*>> fixtures;
    for (const auto& [name, tensor] : part == "inputs" ? extras.warmup_inputs : extras.warmup_outputs)
      fixtures.emplace_back(name, &tensor);
    KILN_ASSIGN_OR_RETURN(TensorSection section, encode_tensors(fixtures));
    manifest["warmup"][part] = std::move(section.index);
    sections.push_back({warmup_section_name(part), std::move(section.bytes)});
  }
  manifest["generated_code"] = nullptr;
  if (const std::optional<providers::CodeObject>& code = kernels.code_object()) {
    KILN_ASSIGN_OR_RETURN(const std::string sha256, io::sha256_hex(code->bytes));
    manifest["generated_code"] = {{"source_key", code->key}, {"bytes", code->bytes.size()}, {"sha256", sha256}};
    sections.push_back({"code", std::string(code->bytes)});
  }
  for (const auto& [name, bytes] : extras.assets) {
    KILN_RETURN_IF_ERROR(check_asset_name(name));
    KILN_ASSIGN_OR_RETURN(const std::string sha256, io::sha256_hex(bytes));
    manifest["assets"].push_back({{"name", name}, {"bytes", bytes.size()}, {"sha256", sha256}});
    sections.push_back({asset_section_name(name), bytes});
  }
  return encode(manifest, sections);
}

}  // namespace kiln::artifact
