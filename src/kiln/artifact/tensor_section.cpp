// Named tensors in one artifact section (see tensor_section.h).
#include "kiln/artifact/tensor_section.h"

#include <cstdint>

#include "kiln/artifact/container.h"

namespace kiln::artifact {
namespace {

// The dtype spelled `name` (dtype_name's spelling); kUndefined when none is.
DType dtype_named(const std::string& name) {
  for (int32_t code = 1; dtype_is_known(code); ++code)
    if (name == dtype_name(static_cast<DType>(code))) return static_cast<DType>(code);
  return DType::kUndefined;
}

}  // namespace

Result<Tensor> decode_tensor(std::string_view bytes, const std::shared_ptr<const char>& owner, const nlohmann::json& e,
                             const std::string& what) {
  const std::string name = e.is_object() && e.contains("name") && e["name"].is_string() ? e["name"].get<std::string>() : "";
  const auto malformed = [&](const std::string& why) { return integrity_failure("artifact " + what + ": entry '" + name + "' " + why); };
  const bool placed = e.is_object() && (e.contains("offset") || e.contains("bytes"));
  if (!e.is_object() || !e.contains("name") || !e["name"].is_string() || !e.contains("dtype") || !e["dtype"].is_string() ||
      !e.contains("shape") || !e["shape"].is_array() ||
      (placed && (!e.contains("offset") || !e["offset"].is_number_unsigned() || !e.contains("bytes") || !e["bytes"].is_number_unsigned())))
    return malformed("is incomplete");
  const DType dtype = dtype_named(e["dtype"]);
  if (dtype == DType::kUndefined || dtype == DType::kString) return malformed("has an unknown dtype");
  std::vector<int64_t> shape;
  for (const nlohmann::json& d : e["shape"]) {
    if (!d.is_number_unsigned()) return malformed("has a bad dim");
    shape.push_back(d.get<int64_t>());
  }
  const int64_t count = shape_element_count(shape);
  const uint64_t size = static_cast<uint64_t>(count) * dtype_size(dtype);
  if (count < 0 || count > (int64_t{1} << 40) || (placed && e["bytes"].get<uint64_t>() != size))
    return malformed("has a size that does not match its shape");
  const uint64_t offset = placed ? e["offset"].get<uint64_t>() : 0;
  if (!holds_aligned(bytes, offset, size))
    return malformed("does not fit its section");
  std::shared_ptr<void> view(std::const_pointer_cast<char>(owner), const_cast<char*>(bytes.data() + offset));
  return Tensor::shared_view(dtype, std::move(shape), std::move(view));
}

Result<TensorSection> encode_tensors(const std::vector<std::pair<std::string, const Tensor*>>& tensors) {
  TensorSection section{{}, nlohmann::json::array()};
  for (const auto& [name, tensor] : tensors) {
    if (tensor->dtype() == DType::kString)
      return unsupported_operator("artifact: string tensor '" + name + "' cannot be stored in this format version");
    section.bytes.resize(aligned(section.bytes.size()), '\0');
    const size_t bytes = tensor->byte_size();
    section.index.push_back({{"name", name}, {"dtype", dtype_name(tensor->dtype())}, {"shape", tensor->shape()},
                             {"offset", section.bytes.size()}, {"bytes", bytes}});
    section.bytes.append(static_cast<const char*>(tensor->raw_data()), bytes);
  }
  return section;
}

Result<NamedTensors> decode_tensors(std::string_view bytes, const std::shared_ptr<const char>& owner,
                                    const nlohmann::json& index, const std::string& what) {
  if (!index.is_array()) return integrity_failure("artifact " + what + ": the index is not a list");
  NamedTensors tensors;
  for (const nlohmann::json& e : index) {
    KILN_ASSIGN_OR_RETURN(Tensor t, decode_tensor(bytes, owner, e, what));
    tensors.emplace_back(e["name"], std::move(t));
  }
  return tensors;
}

}  // namespace kiln::artifact
