// Resolving and reading ONNX external tensor data with 64-bit offsets, confined to the model folder.
#include "kiln/frontend/onnx/external_data.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <utility>

namespace kiln::frontend {

namespace {

std::string tensor_label(const std::string& name) { return "tensor '" + name + "'"; }

bool has_parent_component(const std::string& location) {
  size_t start = 0;
  while (start <= location.size()) {
    size_t end = location.find('/', start);
    if (end == std::string::npos) end = location.size();
    if (location.compare(start, end - start, "..") == 0 && end - start == 2) return true;
    start = end + 1;
  }
  return false;
}

std::optional<std::string> real_path(const std::string& path) {
  char buffer[PATH_MAX];
  if (!::realpath(path.c_str(), buffer)) return std::nullopt;
  return std::string(buffer);
}

// A decimal 64-bit number from an external_data entry.
Result<uint64_t> parse_u64(const std::string& text, const std::string& key, const std::string& tensor_name) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return invalid_model(tensor_label(tensor_name) + ": external data " + key + " '" + text +
                         "' is not a non-negative integer");
  return v;
}

struct ExternalRef {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
};

Result<ExternalRef> parse_external_ref(const onnx::TensorProto& proto) {
  ExternalRef ref;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") {
      ref.location = entry.value();
    } else if (entry.key() == "offset") {
      KILN_ASSIGN_OR_RETURN(ref.offset, parse_u64(entry.value(), "offset", proto.name()));
    } else if (entry.key() == "length") {
      KILN_ASSIGN_OR_RETURN(ref.length, parse_u64(entry.value(), "length", proto.name()));
    }
  }
  return ref;
}

Status read_exactly(int fd, uint64_t offset, char* dst, uint64_t count, const std::string& what) {
  while (count > 0) {
    ssize_t n = ::pread(fd, dst, count, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return invalid_model(what + ": read failed: " + (n < 0 ? std::strerror(errno) : "unexpected end"));
    dst += n;
    offset += static_cast<uint64_t>(n);
    count -= static_cast<uint64_t>(n);
  }
  return Status::ok();
}

}  // namespace

Result<std::string> resolve_external_location(const std::string& base_dir, const std::string& location,
                                              const std::string& tensor_name) {
  const std::string what = tensor_label(tensor_name) + ": external data path '" + location + "'";
  if (location.empty()) return invalid_model(tensor_label(tensor_name) + ": external data has no location");
  if (location.front() == '/') return invalid_model(what + " is absolute; it must be relative to the model's folder");
  if (has_parent_component(location)) return invalid_model(what + " uses '..' to leave the model's folder");
  std::optional<std::string> base = real_path(base_dir.empty() ? "." : base_dir);
  if (!base) return invalid_model(what + ": the model's folder '" + base_dir + "' cannot be resolved");
  std::optional<std::string> target = real_path(*base + "/" + location);
  if (!target) return invalid_model(what + " does not exist or cannot be resolved: " + std::strerror(errno));
  const std::string prefix = *base == "/" ? "/" : *base + "/";
  if (target->compare(0, prefix.size(), prefix) != 0)
    return invalid_model(what + " resolves to '" + *target + "', outside the model's folder (a symbolic link?)");
  struct stat st {};
  if (::stat(target->c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return invalid_model(what + " is not a regular file");
  return *target;
}

Result<ExternalData> ExternalData::open(const onnx::TensorProto& proto, const std::string& base_dir,
                                        uint64_t bytes) {
  if (proto.data_type() == onnx::TensorProto::STRING)
    return invalid_model(tensor_label(proto.name()) + ": string tensors cannot use external data");
  KILN_ASSIGN_OR_RETURN(ExternalRef ref, parse_external_ref(proto));
  KILN_ASSIGN_OR_RETURN(std::string path, resolve_external_location(base_dir, ref.location, proto.name()));
  ExternalData data;
  data.what_ = tensor_label(proto.name()) + ": external data '" + ref.location + "'";
  data.offset_ = ref.offset;
  data.bytes_ = bytes;
  if (ref.length && *ref.length != bytes)
    return invalid_model(data.what_ + " has length " + std::to_string(*ref.length) + " but the tensor needs " +
                         std::to_string(bytes) + " bytes");
  data.fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (data.fd_ < 0) return invalid_model(data.what_ + " cannot be opened: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(data.fd_, &st) != 0) return invalid_model(data.what_ + " cannot be read: " + std::strerror(errno));
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  if (ref.offset > size || bytes > size - ref.offset)
    return invalid_model(data.what_ + " is " + std::to_string(size) + " bytes, shorter than offset " +
                         std::to_string(ref.offset) + " + length " + std::to_string(bytes));
  return data;
}

ExternalData::ExternalData(ExternalData&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), offset_(other.offset_), bytes_(other.bytes_), what_(std::move(other.what_)) {}

ExternalData::~ExternalData() {
  if (fd_ >= 0) ::close(fd_);
}

Status ExternalData::read_into(Tensor& out) const {
  if (out.byte_size() != bytes_)
    return internal_error(what_ + ": " + std::to_string(out.byte_size()) + " bytes to fill, " +
                          std::to_string(bytes_) + " checked");
  return read_exactly(fd_, offset_, static_cast<char*>(out.raw_data()), bytes_, what_);
}

}  // namespace kiln::frontend
