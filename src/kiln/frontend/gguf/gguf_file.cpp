// The GGUF reader (see gguf_file.h): a cursor over the file's bytes that checks every read against
// what is left, then the header, the metadata, the tensor infos and the data section's bounds.
#include "kiln/frontend/gguf/gguf_file.h"

#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <set>

namespace kiln::frontend::gguf {
namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr int kMaxArrayDepth = 8;        // nested arrays deeper than this are refused (the stack)
constexpr uint32_t kMaxDims = 4;

// The smallest number of bytes one value of `type` takes in the file: bounds how many elements a
// count may claim before anything is allocated for them.
uint64_t min_value_bytes(ValueType type) {
  switch (type) {
    case ValueType::kU8: case ValueType::kI8: case ValueType::kBool: return 1;
    case ValueType::kU16: case ValueType::kI16: return 2;
    case ValueType::kU32: case ValueType::kI32: case ValueType::kF32: return 4;
    case ValueType::kU64: case ValueType::kI64: case ValueType::kF64: case ValueType::kString: return 8;
    case ValueType::kArray: return 12;
  }
  return 1;
}

bool known_value_type(uint32_t t) { return t <= static_cast<uint32_t>(ValueType::kF64); }

class Cursor {
 public:
  Cursor(std::string_view bytes, const std::string& what) : bytes_(bytes), what_(what) {}

  uint64_t position() const { return at_; }
  uint64_t left() const { return bytes_.size() - at_; }

  Status fail(const std::string& where, const std::string& why) const {
    return invalid_model(what_ + ": GGUF " + where + ": " + why + " (at byte " + std::to_string(at_) + " of " +
                         std::to_string(bytes_.size()) + ")");
  }

  template <class T>
  Result<T> read(const std::string& where) {
    if (left() < sizeof(T)) return fail(where, "the file ends inside it");
    T v;
    std::memcpy(&v, bytes_.data() + at_, sizeof(T));  // the file is little-endian, as x86 is
    at_ += sizeof(T);
    return v;
  }

  Result<std::string> read_string(const std::string& where) {
    KILN_ASSIGN_OR_RETURN(const uint64_t length, read<uint64_t>(where + " (its length)"));
    if (length > left()) return fail(where, "a string of " + std::to_string(length) + " bytes is longer than the rest of the file");
    std::string s(bytes_.substr(at_, length));
    at_ += length;
    return s;
  }

 private:
  std::string_view bytes_;
  const std::string& what_;
  uint64_t at_ = 0;
};

Result<MetadataValue> read_value(Cursor& in, ValueType type, const std::string& key, int depth) {
  MetadataValue v;
  v.type = type;
  switch (type) {
    case ValueType::kU8: { KILN_ASSIGN_OR_RETURN(uint8_t x, in.read<uint8_t>(key)); v.unsigned_value = x; break; }
    case ValueType::kI8: { KILN_ASSIGN_OR_RETURN(int8_t x, in.read<int8_t>(key)); v.signed_value = x; break; }
    case ValueType::kU16: { KILN_ASSIGN_OR_RETURN(uint16_t x, in.read<uint16_t>(key)); v.unsigned_value = x; break; }
    case ValueType::kI16: { KILN_ASSIGN_OR_RETURN(int16_t x, in.read<int16_t>(key)); v.signed_value = x; break; }
    case ValueType::kU32: { KILN_ASSIGN_OR_RETURN(uint32_t x, in.read<uint32_t>(key)); v.unsigned_value = x; break; }
    case ValueType::kI32: { KILN_ASSIGN_OR_RETURN(int32_t x, in.read<int32_t>(key)); v.signed_value = x; break; }
    case ValueType::kU64: { KILN_ASSIGN_OR_RETURN(uint64_t x, in.read<uint64_t>(key)); v.unsigned_value = x; break; }
    case ValueType::kI64: { KILN_ASSIGN_OR_RETURN(int64_t x, in.read<int64_t>(key)); v.signed_value = x; break; }
    case ValueType::kF32: { KILN_ASSIGN_OR_RETURN(float x, in.read<float>(key)); v.float_value = x; break; }
    case ValueType::kF64: { KILN_ASSIGN_OR_RETURN(double x, in.read<double>(key)); v.float_value = x; break; }
    case ValueType::kBool: {
      KILN_ASSIGN_OR_RETURN(uint8_t x, in.read<uint8_t>(key));
      if (x > 1) return in.fail("key '" + key + "'", "a bool of " + std::to_string(x));
      v.unsigned_value = x;
      break;
    }
    case ValueType::kString: { KILN_ASSIGN_OR_RETURN(v.string_value, in.read_string("key '" + key + "'")); break; }
    case ValueType::kArray: {
      if (depth >= kMaxArrayDepth) return in.fail("key '" + key + "'", "arrays nested deeper than " + std::to_string(kMaxArrayDepth));
      KILN_ASSIGN_OR_RETURN(const uint32_t element, in.read<uint32_t>("key '" + key + "' (its element type)"));
      if (!known_value_type(element)) return in.fail("key '" + key + "'", "an array of unknown value type " + std::to_string(element));
      v.element_type = static_cast<ValueType>(element);
      KILN_ASSIGN_OR_RETURN(const uint64_t count, in.read<uint64_t>("key '" + key + "' (its element count)"));
      if (count > in.left() / min_value_bytes(v.element_type))
        return in.fail("key '" + key + "'", "an array of " + std::to_string(count) + " elements does not fit in the rest of the file");
      v.elements.reserve(static_cast<size_t>(count));
      for (uint64_t i = 0; i < count; ++i) {
        KILN_ASSIGN_OR_RETURN(MetadataValue e, read_value(in, v.element_type, key + "[" + std::to_string(i) + "]", depth + 1));
        v.elements.push_back(std::move(e));
      }
      break;
    }
  }
  return v;
}

// a * b, or nullopt past int64.
std::optional<int64_t> checked_product(int64_t a, int64_t b) {
  if (a != 0 && b > std::numeric_limits<int64_t>::max() / a) return std::nullopt;
  return a * b;
}

Result<TensorInfo> read_tensor_info(Cursor& in, uint64_t index) {
  TensorInfo t;
  const std::string where = "tensor " + std::to_string(index);
  KILN_ASSIGN_OR_RETURN(t.name, in.read_string(where + " (its name)"));
  const std::string named = "tensor '" + t.name + "'";
  KILN_ASSIGN_OR_RETURN(const uint32_t n_dims, in.read<uint32_t>(named + " (its rank)"));
  if (n_dims == 0 || n_dims > kMaxDims) return in.fail(named, "rank " + std::to_string(n_dims) + " (GGUF tensors have 1 to 4 dims)");
  int64_t elements = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    KILN_ASSIGN_OR_RETURN(const uint64_t dim, in.read<uint64_t>(named + " (its dims)"));
    if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return in.fail(named, "a dim of " + std::to_string(dim));
    const std::optional<int64_t> product = checked_product(elements, static_cast<int64_t>(dim));
    if (!product) return in.fail(named, "its element count overflows");
    elements = *product;
    t.dims.push_back(static_cast<int64_t>(dim));
  }
  KILN_ASSIGN_OR_RETURN(t.type_id, in.read<uint32_t>(named + " (its type)"));
  const std::optional<ops::GgmlType> type = ops::ggml_type(t.type_id);
  if (!type) return in.fail(named, "its type " + ops::ggml_type_name(t.type_id) + " is not one Kiln reads");
  t.type = *type;
  if (t.dims[0] % t.type.block_values != 0)
    return in.fail(named, "its rows of " + std::to_string(t.dims[0]) + " values are not whole " + std::string(t.type.name) +
                              " blocks of " + std::to_string(t.type.block_values));
  const std::optional<int64_t> bytes = checked_product(elements / t.type.block_values, t.type.block_bytes);
  if (!bytes) return in.fail(named, "its byte size overflows");
  t.bytes = static_cast<uint64_t>(*bytes);
  KILN_ASSIGN_OR_RETURN(t.offset, in.read<uint64_t>(named + " (its offset)"));
  return t;
}

}  // namespace

std::string_view value_type_name(ValueType type) {
  static constexpr std::string_view kNames[] = {"u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64"};
  const auto i = static_cast<uint32_t>(type);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

bool MetadataValue::is_integer() const {
  switch (type) {
    case ValueType::kU8: case ValueType::kI8: case ValueType::kU16: case ValueType::kI16: case ValueType::kU32:
    case ValueType::kI32: case ValueType::kU64: case ValueType::kI64: case ValueType::kBool: return true;
    default: return false;
  }
}

int64_t MetadataValue::as_int() const {
  switch (type) {
    case ValueType::kI8: case ValueType::kI16: case ValueType::kI32: case ValueType::kI64: return signed_value;
    default:
      return unsigned_value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? -1 : static_cast<int64_t>(unsigned_value);
  }
}

double MetadataValue::as_float() const {
  if (type == ValueType::kF32 || type == ValueType::kF64) return float_value;
  return static_cast<double>(as_int());
}

int64_t TensorInfo::element_count() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

const MetadataValue* GgufFile::find(std::string_view key) const {
  for (const MetadataEntry& e : metadata)
    if (e.key == key) return &e.value;
  return nullptr;
}

const TensorInfo* GgufFile::tensor(std::string_view name) const {
  for (const TensorInfo& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

bool looks_like_gguf(std::string_view head) { return head.size() >= 4 && (head.substr(0, 4) == "GGUF" || head.substr(0, 4) == "FUGG"); }

Result<GgufFile> parse_gguf(std::string_view bytes, const std::string& what) {
  Cursor in(bytes, what);
  GgufFile file;
  KILN_ASSIGN_OR_RETURN(const uint32_t magic, in.read<uint32_t>("header (its magic)"));
  if (magic != kMagic) return in.fail("header", "not a GGUF file (no \"GGUF\" magic)");
  KILN_ASSIGN_OR_RETURN(file.version, in.read<uint32_t>("header (its version)"));
  // A big-endian file's version reads byte-swapped here: 3 becomes 0x03000000.
  if (file.version >= 0x01000000) return in.fail("header", "a big-endian file (Kiln reads little-endian GGUF only)");
  if (file.version != 2 && file.version != 3)
    return in.fail("header", "version " + std::to_string(file.version) + " (Kiln reads versions 2 and 3)");
  KILN_ASSIGN_OR_RETURN(const uint64_t tensor_count, in.read<uint64_t>("header (its tensor count)"));
  KILN_ASSIGN_OR_RETURN(const uint64_t metadata_count, in.read<uint64_t>("header (its metadata count)"));
  // A key is at least its length and type (12 bytes), a tensor info at least 32 bytes.
  if (metadata_count > in.left() / 12) return in.fail("header", std::to_string(metadata_count) + " metadata entries do not fit in the file");
  if (tensor_count > in.left() / 32) return in.fail("header", std::to_string(tensor_count) + " tensors do not fit in the file");

  std::set<std::string> keys;
  file.metadata.reserve(static_cast<size_t>(metadata_count));
  for (uint64_t i = 0; i < metadata_count; ++i) {
    MetadataEntry entry;
    KILN_ASSIGN_OR_RETURN(entry.key, in.read_string("metadata entry " + std::to_string(i) + " (its key)"));
    KILN_ASSIGN_OR_RETURN(const uint32_t type, in.read<uint32_t>("key '" + entry.key + "' (its type)"));
    if (!known_value_type(type)) return in.fail("key '" + entry.key + "'", "unknown value type " + std::to_string(type));
    KILN_ASSIGN_OR_RETURN(entry.value, read_value(in, static_cast<ValueType>(type), entry.key, 0));
    if (!keys.insert(entry.key).second) return in.fail("key '" + entry.key + "'", "it appears twice");
    file.metadata.push_back(std::move(entry));
  }
  if (const MetadataValue* alignment = file.find("general.alignment")) {
    if (!alignment->is_integer() || alignment->as_int() <= 0 || (alignment->as_int() & (alignment->as_int() - 1)) != 0)
      return in.fail("key 'general.alignment'", "it must be a positive power of two");
    file.alignment = static_cast<uint64_t>(alignment->as_int());
  }

  std::set<std::string> names;
  file.tensors.reserve(static_cast<size_t>(tensor_count));
  for (uint64_t i = 0; i < tensor_count; ++i) {
    KILN_ASSIGN_OR_RETURN(TensorInfo t, read_tensor_info(in, i));
    if (!names.insert(t.name).second) return in.fail("tensor '" + t.name + "'", "it appears twice");
    file.tensors.push_back(std::move(t));
  }

  // The data section starts at the next multiple of the alignment.
  const uint64_t end_of_infos = in.position();
  const uint64_t padding = (file.alignment - end_of_infos % file.alignment) % file.alignment;
  file.data_offset = end_of_infos + padding;
  if (file.data_offset > bytes.size() && !file.tensors.empty())
    return in.fail("data section", "it starts past the end of the file");
  const uint64_t data_size = file.data_offset <= bytes.size() ? bytes.size() - file.data_offset : 0;
  for (TensorInfo& t : file.tensors) {
    if (t.offset % file.alignment != 0)
      return in.fail("tensor '" + t.name + "'", "its offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                                                   std::to_string(file.alignment));
    if (t.offset > data_size || t.bytes > data_size - t.offset)
      return in.fail("tensor '" + t.name + "'", "its " + std::to_string(t.bytes) + " bytes at offset " + std::to_string(t.offset) +
                                                   " run past the end of the file");
    t.data = bytes.substr(static_cast<size_t>(file.data_offset + t.offset), static_cast<size_t>(t.bytes));
  }
  return file;
}

}  // namespace kiln::frontend::gguf
