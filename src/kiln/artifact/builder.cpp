// Building a .kiln artifact: the manifest and every section (see builder.h).
#include "kiln/artifact/builder.h"

#include <dnnl.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

#include "kiln/artifact/container.h"
#include "kiln/artifact/packed_weights.h"
#include "kiln/codegen/kernel_generator.h"
#include "kiln/artifact/plan.h"
#include "kiln/artifact/tensor_section.h"
#include "kiln/io/file.h"

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
  // How the artifact runs: ahead-of-time compiled, for these input shapes, on these threads by default.
  nlohmann::json execution = {{"mode", "aot"}, {"input_shapes", nlohmann::json::object()},
                              {"threads", std::stoi(report["options"].value("threads", "0"))}};
  const nlohmann::json inputs = report["model"].value("inputs", nlohmann::json::array());
  const nlohmann::json shapes = report["memory"].value("input_shapes", nlohmann::json::array());
  for (size_t i = 0; i < inputs.size() && i < shapes.size(); ++i) execution["input_shapes"][inputs[i].value("name", "")] = shapes[i];
  nlohmann::json target = report.value("target", nlohmann::json::object());
  // The compiling machine's, not the artifact's (its level, layouts and features needed stay).
  for (const char* field : {"cpu_features", "cores", "cache_bytes", "cpu"}) target.erase(field);
  return {{"model", model},
          {"options", report.value("options", nlohmann::json::object())},
          {"analysis", report.value("analysis", nlohmann::json::object())},
          {"passes", passes},
          {"nodes_after_passes", report.value("nodes_after_passes", 0)},
          {"partition", report.value("partition", nlohmann::json::object())},
          {"kernels", report.value("kernels", nlohmann::json::array())},
          {"memory", report.value("memory", nlohmann::json::object())},
          {"target", target},
          {"tuning", report.value("tuning", nlohmann::json::object())},
          {"execution", execution}};
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

Result<std::string> build_artifact(const ir::Model& model, const nlohmann::json& report, const ArtifactExtras& extras) {
  nlohmann::json manifest = deterministic_evidence(report);
  manifest["kiln_version"] = report.value("kiln_version", "");
  manifest["toolchain"] = toolchain();
  manifest["source_sha256"] = model.sha256;
  const providers::KernelBuild no_kernels;
  const providers::KernelBuild& kernels = extras.kernels ? *extras.kernels : no_kernels;
  PackedSection packed = encode_packed(kernels);
  KILN_ASSIGN_OR_RETURN(TensorSection weights, weights_section(*model.graph, packed_only_values(*model.graph, kernels), packed.index));
  std::map<std::string, int> weight_ids;
  for (const nlohmann::json& w : weights.index) weight_ids[w["name"]] = static_cast<int>(weight_ids.size());
  KILN_ASSIGN_OR_RETURN(std::string plan, encode_plan(model, weight_ids));
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
  if (const codegen::ModuleBuilder* module = kernels.generated_module(); module && !module->object_bytes().empty()) {
    KILN_ASSIGN_OR_RETURN(const std::string sha256, io::sha256_hex(module->object_bytes()));
    manifest["generated_code"] = {{"source_key", module->source_key()}, {"bytes", module->object_bytes().size()}, {"sha256", sha256}};
    sections.push_back({"code", module->object_bytes()});
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
