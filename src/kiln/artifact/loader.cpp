// Loading a .kiln artifact: container, signature, target, weights (plain and packed), plan,
// assets, warm-up fixtures.
#include "kiln/artifact/loader.h"

#include <algorithm>
#include <optional>

#include "kiln/artifact/builder.h"
#include "kiln/artifact/container.h"
#include "kiln/artifact/packed_weights.h"
#include "kiln/artifact/plan.h"
#include "kiln/artifact/signing.h"
#include "kiln/artifact/tensor_section.h"
#include "kiln/io/file.h"
#include "kiln/ops/numeric_precision.h"

namespace kiln::artifact {
namespace {

const SectionView* find_section(const Decoded& d, const std::string& name) {
  for (const SectionView& s : d.sections)
    if (s.name == name) return &s;
  return nullptr;
}

// The packed constants the manifest lists, views into the packed section.
Result<std::vector<providers::PackedConstant>> read_packed(const Decoded& d, const std::shared_ptr<const char>& owner) {
  const SectionView* section = find_section(d, "packed");
  if (!section || !d.manifest.contains("packed"))
    return integrity_failure("artifact packed weights: the packed section or its index is missing");
  return decode_packed(section->bytes, owner, d.manifest["packed"]);
}

// One tensor per manifest weight entry: a view into the weights section, or into the packed
// bytes of a weight stored only packed (whose name joins `packed_only`).
Result<std::vector<Tensor>> read_weights(const Decoded& d, const std::shared_ptr<const char>& owner,
                                         const std::vector<providers::PackedConstant>& packed, std::set<std::string>& packed_only) {
  const SectionView* section = find_section(d, "weights");
  if (!section || !d.manifest.contains("weights") || !d.manifest["weights"].is_array())
    return integrity_failure("artifact weights: the weights section or its index is missing");
  std::vector<Tensor> weights;
  for (const nlohmann::json& e : d.manifest["weights"]) {
    if (!e.is_object() || !e.contains("packed")) {
      KILN_ASSIGN_OR_RETURN(Tensor t, decode_tensor(section->bytes, owner, e, "weights"));
      weights.push_back(std::move(t));
      continue;
    }
    const std::string name = e.value("name", "");
    if (!e["packed"].is_number_unsigned() || e["packed"].get<size_t>() >= packed.size() || packed[e["packed"].get<size_t>()].value != name)
      return integrity_failure("artifact weights: entry '" + name + "' refers to a packed entry of another weight");
    const providers::PackedConstant& p = packed[e["packed"].get<size_t>()];
    KILN_ASSIGN_OR_RETURN(Tensor t, decode_tensor(std::string_view(static_cast<const char*>(p.data.get()), p.bytes), owner, e, "weights"));
    weights.push_back(std::move(t));
    packed_only.insert(name);
  }
  return weights;
}

// The warm-up fixtures' `part` ("inputs" or "outputs") by name.
Result<std::map<std::string, Tensor>> read_fixtures(const Decoded& d, const std::shared_ptr<const char>& owner,
                                                    const std::string& part) {
  const SectionView* section = find_section(d, warmup_section_name(part));
  if (!section || !d.manifest.contains("warmup") || !d.manifest["warmup"].is_object() || !d.manifest["warmup"].contains(part))
    return integrity_failure("artifact: the warm-up " + part + " or their index are missing");
  KILN_ASSIGN_OR_RETURN(NamedTensors named, decode_tensors(section->bytes, owner, d.manifest["warmup"][part], "warm-up " + part));
  std::map<std::string, Tensor> fixtures;
  for (auto& [name, tensor] : named) fixtures[name] = std::move(tensor);
  return fixtures;
}

// The generated kernels' object the manifest lists (`generated_code`, null when none).
Result<std::map<std::string, std::string_view>> read_generated_code(const Decoded& d) {
  std::map<std::string, std::string_view> code;
  const nlohmann::json entry = d.manifest.value("generated_code", nlohmann::json());
  if (entry.is_null()) return code;
  if (!entry.is_object() || !entry.contains("source_key") || !entry["source_key"].is_string())
    return integrity_failure("artifact manifest: generated_code needs its source_key");
  const SectionView* section = find_section(d, "code");
  if (!section) return integrity_failure("artifact: generated_code has no code section");
  code[entry["source_key"].get<std::string>()] = section->bytes;
  return code;
}

// The assets the manifest lists, each from its section.
Result<std::map<std::string, std::string>> read_assets(const Decoded& d) {
  std::map<std::string, std::string> assets;
  if (!d.manifest.contains("assets") || !d.manifest["assets"].is_array())
    return integrity_failure("artifact manifest: the asset list is missing");
  for (const nlohmann::json& a : d.manifest["assets"]) {
    const std::string name = a.is_object() ? a.value("name", "") : "";
    const SectionView* section = find_section(d, asset_section_name(name));
    if (!section) return integrity_failure("artifact: asset '" + name + "' has no section");
    assets[name] = std::string(section->bytes);
  }
  return assets;
}

}  // namespace

bool looks_like_artifact(std::string_view bytes) { return bytes.substr(0, 4) == "KILN"; }

bool is_artifact_file(const std::string& path) {
  const Result<std::string> head = io::read_file_head(path, 4);
  return head.is_ok() && looks_like_artifact(head.value());
}

Status check_target(const nlohmann::json& manifest, const LoadPolicy& policy) {
  const nlohmann::json* required = nullptr;
  if (manifest.contains("target") && manifest["target"].is_object() && manifest["target"].contains("required_features"))
    required = &manifest["target"]["required_features"];
  if (!required || !required->is_array()) return integrity_failure("artifact manifest: target.required_features is missing");
  std::string missing;
  for (const nlohmann::json& feature : *required) {
    if (!feature.is_string()) return integrity_failure("artifact manifest: target.required_features holds a non-string");
    if (std::find(policy.cpu_features.begin(), policy.cpu_features.end(), feature.get<std::string>()) == policy.cpu_features.end())
      missing += (missing.empty() ? "" : ", ") + feature.get<std::string>();
  }
  if (missing.empty()) return Status::ok();
  const std::string built_for = manifest["target"].value("isa", "");
  return unsupported_target("artifact kernels need CPU features this target lacks: " + missing + " (target: " +
                            (policy.isa.empty() ? "this machine" : "--isa " + policy.isa) + "; built for " +
                            (built_for.empty() ? "its compiling machine's best" : "--isa " + built_for) + ")");
}

Result<LoadedArtifact> load_artifact(const io::FileImage& file, const LoadPolicy& policy) {
  KILN_ASSIGN_OR_RETURN(const Decoded d, decode(file.bytes));
  KILN_RETURN_IF_ERROR(check_signature(d, policy.trusted_public_key, policy.signature_required).status());
  KILN_RETURN_IF_ERROR(check_target(d.manifest, policy));
  const SectionView* plan = find_section(d, "plan");
  if (!plan) return integrity_failure("artifact: no plan section");
  LoadedArtifact loaded;
  KILN_ASSIGN_OR_RETURN(loaded.precompiled.packed, read_packed(d, file.owner));
  KILN_ASSIGN_OR_RETURN(std::vector<Tensor> weights, read_weights(d, file.owner, loaded.precompiled.packed, loaded.precompiled.packed_only));
  PlanPrecision precision;
  KILN_ASSIGN_OR_RETURN(loaded.model, decode_plan(plan->bytes, weights, precision));
  if (!precision.preference.empty()) {
    const std::optional<std::vector<ops::Precision>> preference = ops::parse_preference(precision.preference);
    if (!preference) return integrity_failure("artifact plan: unknown precision preference '" + precision.preference + "'");
    loaded.precompiled.precision_preference = *preference;
  }
  loaded.precompiled.kept_fp32_sources = std::move(precision.kept_fp32_sources);
  loaded.precompiled.fallback_fp32_sources = std::move(precision.fallback_fp32_sources);
  loaded.model.sha256 = d.manifest.value("source_sha256", "");
  KILN_ASSIGN_OR_RETURN(loaded.assets, read_assets(d));
  const nlohmann::json execution = d.manifest.value("execution", nlohmann::json::object());
  if (!execution.contains("threads") || !execution["threads"].is_number_integer() || execution["threads"].get<int64_t>() < 0 ||
      execution["threads"].get<int64_t>() > 4096)
    return integrity_failure("artifact manifest: execution.threads is missing");
  loaded.default_threads = execution["threads"].get<int>();
  KILN_ASSIGN_OR_RETURN(loaded.precompiled.generated_code, read_generated_code(d));
  loaded.precompiled.file = file.owner;
  KILN_ASSIGN_OR_RETURN(loaded.warmup_inputs, read_fixtures(d, file.owner, "inputs"));
  KILN_ASSIGN_OR_RETURN(loaded.warmup_outputs, read_fixtures(d, file.owner, "outputs"));
  return loaded;
}

}  // namespace kiln::artifact
