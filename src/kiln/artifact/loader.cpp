// Loading a .kiln artifact: container, signature, weights, plan.
#include "kiln/artifact/loader.h"

#include <cstring>
#include <fstream>

#include "kiln/artifact/container.h"
#include "kiln/artifact/plan.h"
#include "kiln/artifact/signing.h"

namespace kiln::artifact {
namespace {

Status malformed(const std::string& what) { return integrity_failure("artifact weights: " + what); }

// The dtype spelled `name` (dtype_name's spelling); kUndefined when none is.
DType dtype_named(const std::string& name) {
  for (int32_t code = 1; dtype_is_known(code); ++code)
    if (name == dtype_name(static_cast<DType>(code))) return static_cast<DType>(code);
  return DType::kUndefined;
}

const SectionView* find_section(const Decoded& d, const std::string& name) {
  for (const SectionView& s : d.sections)
    if (s.name == name) return &s;
  return nullptr;
}

// One tensor per manifest weight entry, copied out of the weights section.
Result<std::vector<Tensor>> read_weights(const Decoded& d) {
  const SectionView* section = find_section(d, "weights");
  if (!section || !d.manifest.contains("weights") || !d.manifest["weights"].is_array())
    return malformed("the weights section or its index is missing");
  std::vector<Tensor> weights;
  for (const nlohmann::json& w : d.manifest["weights"]) {
    const std::string name = w.value("name", "");
    const DType dtype = w.contains("dtype") && w["dtype"].is_string() ? dtype_named(w["dtype"]) : DType::kUndefined;
    if (dtype == DType::kUndefined || dtype == DType::kString || !w.contains("shape") || !w["shape"].is_array() ||
        !w.contains("offset") || !w["offset"].is_number_unsigned() || !w.contains("bytes") || !w["bytes"].is_number_unsigned())
      return malformed("entry '" + name + "' is incomplete");
    std::vector<int64_t> shape;
    for (const nlohmann::json& d : w["shape"]) {
      if (!d.is_number_unsigned()) return malformed("entry '" + name + "' has a bad dim");
      shape.push_back(d.get<int64_t>());
    }
    Tensor t = Tensor::allocate(dtype, shape);
    const uint64_t offset = w["offset"], bytes = w["bytes"];
    if (!t.defined() || bytes != t.byte_size() || offset > section->bytes.size() || bytes > section->bytes.size() - offset)
      return malformed("entry '" + name + "' does not fit its section");
    std::memcpy(t.raw_data(), section->bytes.data() + offset, bytes);
    weights.push_back(std::move(t));
  }
  return weights;
}

}  // namespace

bool looks_like_artifact(std::string_view bytes) { return bytes.substr(0, 4) == "KILN"; }

bool is_artifact_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string head(4, '\0');
  return in.read(head.data(), 4) && looks_like_artifact(head);
}

Result<ir::Model> load_artifact(std::string_view file, const SignaturePolicy& policy) {
  KILN_ASSIGN_OR_RETURN(const Decoded d, decode(file));
  KILN_RETURN_IF_ERROR(check_signature(d, policy.trusted_public_key, policy.required).status());
  const SectionView* plan = find_section(d, "plan");
  if (!plan) return integrity_failure("artifact: no plan section");
  KILN_ASSIGN_OR_RETURN(std::vector<Tensor> weights, read_weights(d));
  KILN_ASSIGN_OR_RETURN(ir::Model model, decode_plan(plan->bytes, weights));
  model.sha256 = d.manifest.value("source_sha256", "");
  return model;
}

}  // namespace kiln::artifact
