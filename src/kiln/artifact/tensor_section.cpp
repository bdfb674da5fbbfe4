// Named tensors in one artifact section (see tensor_section.h).
#include "kiln/artifact/tensor_section.h"

#include <cstring>

#include "kiln/artifact/container.h"

namespace kiln::artifact {
namespace {

// The dtype spelled `name` (dtype_name's spelling); kUndefined when none is.
DType dtype_named(const std::string& name) {
  for (int32_t code = 1; dtype_is_known(code); ++code)
    if (name == dtype_name(static_cast<DType>(code))) return static_cast<DType>(code);
  return DType::kUndefined;
}

// The tensor entry `e` describes, with storage of its own (not yet filled).
Result<Tensor> allocate_entry(const nlohmann::json& e, const std::string& what) {
  const std::string name = e.is_object() ? e.value("name", "") : "";
  const auto malformed = [&](const std::string& why) { return integrity_failure("artifact " + what + ": entry '" + name + "' " + why); };
  if (!e.is_object() || !e.contains("dtype") || !e["dtype"].is_string() || !e.contains("shape") || !e["shape"].is_array() ||
      !e.contains("offset") || !e["offset"].is_number_unsigned() || !e.contains("bytes") || !e["bytes"].is_number_unsigned())
    return malformed("is incomplete");
  const DType dtype = dtype_named(e["dtype"]);
  if (dtype == DType::kUndefined || dtype == DType::kString) return malformed("has an unknown dtype");
  std::vector<int64_t> shape;
  for (const nlohmann::json& d : e["shape"]) {
    if (!d.is_number_unsigned()) return malformed("has a bad dim");
    shape.push_back(d.get<int64_t>());
  }
  Tensor t = Tensor::allocate(dtype, shape);
  if (!t.defined() || e["bytes"].get<uint64_t>() != t.byte_size()) return malformed("has a size that does not match its shape");
  return t;
}

}  // namespace

Result<TensorSection> encode_tensors(const std::vector<std::pair<std::string, const Tensor*>>& tensors) {
  TensorSection section{{}, nlohmann::json::array()};
  for (const auto& [name, tensor] : tensors) {
    if (tensor->dtype() == DType::kString)
      return unsupported_operator("artifact: string tensor '" + name + "' cannot be stored in this format version");
    section.bytes.resize((section.bytes.size() + kSectionAlignment - 1) / kSectionAlignment * kSectionAlignment, '\0');
    const size_t bytes = tensor->byte_size();
    section.index.push_back({{"name", name}, {"dtype", dtype_name(tensor->dtype())}, {"shape", tensor->shape()},
                             {"offset", section.bytes.size()}, {"bytes", bytes}});
    section.bytes.append(static_cast<const char*>(tensor->raw_data()), bytes);
  }
  return section;
}

Result<NamedTensors> decode_tensors(std::string_view bytes, const nlohmann::json& index, const std::string& what) {
  if (!index.is_array()) return integrity_failure("artifact " + what + ": the index is not a list");
  NamedTensors tensors;
  for (const nlohmann::json& e : index) {
    KILN_ASSIGN_OR_RETURN(Tensor t, allocate_entry(e, what));
    const uint64_t offset = e["offset"], size = e["bytes"];
    if (offset > bytes.size() || size > bytes.size() - offset)
      return integrity_failure("artifact " + what + ": entry '" + e.value("name", "") + "' does not fit its section");
    std::memcpy(t.raw_data(), bytes.data() + offset, size);
    tensors.emplace_back(e.value("name", ""), std::move(t));
  }
  return tensors;
}

}  // namespace kiln::artifact
