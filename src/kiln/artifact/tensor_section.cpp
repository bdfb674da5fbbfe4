// Named tensors in one artifact section (see tensor_section.h).
#include "kiln/artifact/tensor_section.h"

#include <cstdint>
#include <optional>

#include "kiln/artifact/container.h"

namespace kiln::artifact {
namespace {

// The dtype spelled `name` (dtype_name's spelling); kUndefined when none is.
DType dtype_named(const std::string& name) {
  for (int32_t code = 1; dtype_is_known(code); ++code)
    if (name == dtype_name(static_cast<DType>(code))) return static_cast<DType>(code);
  return DType::kUndefined;
}

// A string tensor's bytes: the UTF-8 length of each element as 8 little-endian bytes, then the
// elements' bytes one after another.
std::string encode_strings(const Tensor& tensor) {
  std::string out;
  const std::string* elements = tensor.data<std::string>();
  for (int64_t i = 0; i < tensor.element_count(); ++i)
    for (int b = 0; b < 8; ++b) out += static_cast<char>((static_cast<uint64_t>(elements[i].size()) >> (8 * b)) & 0xff);
  for (int64_t i = 0; i < tensor.element_count(); ++i) out += elements[i];
  return out;
}

// The string tensor of `shape` whose encoding is `bytes` (whole); nullopt when the lengths do not
// add up to the bytes there are.
std::optional<Tensor> decode_strings(std::string_view bytes, const std::vector<int64_t>& shape) {
  const int64_t count = shape_element_count(shape);
  if (count < 0 || static_cast<uint64_t>(count) > bytes.size() / 8) return std::nullopt;
  Tensor t = Tensor::allocate(DType::kString, shape);
  if (!t.defined()) return std::nullopt;
  size_t at = static_cast<size_t>(count) * 8;
  for (int64_t i = 0; i < count; ++i) {
    uint64_t length = 0;
    for (int b = 0; b < 8; ++b) length |= static_cast<uint64_t>(static_cast<unsigned char>(bytes[static_cast<size_t>(i) * 8 + b])) << (8 * b);
    if (length > bytes.size() - at) return std::nullopt;
    t.data<std::string>()[i].assign(bytes.data() + at, static_cast<size_t>(length));
    at += static_cast<size_t>(length);
  }
  if (at != bytes.size()) return std::nullopt;
  return t;
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
  if (dtype == DType::kUndefined) return malformed("has an unknown dtype");
  std::vector<int64_t> shape;
  for (const nlohmann::json& d : e["shape"]) {
    if (!d.is_number_unsigned()) return malformed("has a bad dim");
    shape.push_back(d.get<int64_t>());
  }
  if (dtype == DType::kString) {  // copied out of the section: strings are not viewed in place
    const uint64_t offset = placed ? e["offset"].get<uint64_t>() : 0;
    const uint64_t size = placed ? e["bytes"].get<uint64_t>() : bytes.size();
    if (offset > bytes.size() || size > bytes.size() - offset) return malformed("does not fit its section");
    std::optional<Tensor> strings = decode_strings(bytes.substr(offset, size), shape);
    if (!strings) return malformed("has string lengths that do not match its bytes");
    return std::move(*strings);
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
    section.bytes.resize(aligned(section.bytes.size()), '\0');
    const std::string strings = tensor->dtype() == DType::kString ? encode_strings(*tensor) : std::string();
    const size_t bytes = tensor->dtype() == DType::kString ? strings.size() : tensor->byte_size();
    section.index.push_back({{"name", name}, {"dtype", dtype_name(tensor->dtype())}, {"shape", tensor->shape()},
                             {"offset", section.bytes.size()}, {"bytes", bytes}});
    if (tensor->dtype() == DType::kString) section.bytes += strings;
    else section.bytes.append(static_cast<const char*>(tensor->raw_data()), bytes);
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
