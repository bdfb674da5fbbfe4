// .npy reading and writing. The header is a Python dict literal; the parser accepts exactly the
// subset numpy writes: string keys, string/bool/int-tuple values. String tensors travel as numpy's
// fixed-width unicode arrays ('<U<n>': n UTF-32 code units per element, NUL-padded), held in
// Kiln as UTF-8.
#include "kiln/io/npy.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <variant>
#include <vector>

#include "kiln/io/file.h"
#include "kiln/io/utf8.h"

namespace kiln::io {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

struct DescrEntry {
  const char* descr;
  DType dtype;
};
constexpr std::array<DescrEntry, 12> kDescrs = {{{"<f4", DType::kFloat},  {"<f8", DType::kDouble},
                                                  {"<f2", DType::kFloat16}, {"|i1", DType::kInt8},
                                                  {"<i2", DType::kInt16},  {"<i4", DType::kInt32},
                                                  {"<i8", DType::kInt64},  {"|u1", DType::kUInt8},
                                                  {"<u2", DType::kUInt16}, {"<u4", DType::kUInt32},
                                                  {"<u8", DType::kUInt64}, {"|b1", DType::kBool}}};

std::optional<DType> dtype_of_descr(const std::string& descr) {
  for (const auto& e : kDescrs)
    if (descr == e.descr) return e.dtype;
  return std::nullopt;
}

std::optional<std::string> descr_of_dtype(DType dtype) {
  for (const auto& e : kDescrs)
    if (dtype == e.dtype) return std::string(e.descr);
  return std::nullopt;
}

using HeaderValue = std::variant<std::string, bool, std::vector<int64_t>>;

// Recursive-descent reader of the header dict; errors name the file and what was expected.
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& path) : text_(text), path_(path) {}

  Result<std::map<std::string, HeaderValue>> parse() {
    std::map<std::string, HeaderValue> fields;
    KILN_RETURN_IF_ERROR(expect('{'));
    while (!peek('}')) {
      KILN_ASSIGN_OR_RETURN(std::string key, parse_string());
      KILN_RETURN_IF_ERROR(expect(':'));
      KILN_ASSIGN_OR_RETURN(fields[key], parse_value(key));
      if (!peek('}')) KILN_RETURN_IF_ERROR(expect(','));
    }
    KILN_RETURN_IF_ERROR(expect('}'));
    skip_space();
    if (pos_ != text_.size()) return error("header has text after the dict");
    return fields;
  }

 private:
  Status error(const std::string& what) const {
    const size_t end = text_.find_last_not_of(" \n");
    return invalid_argument(path_ + ": bad .npy header: " + what + " (header: " + text_.substr(0, end + 1) + ")");
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  Status expect(char c) {
    if (!peek(c)) return error(std::string("expected '") + c + "'");
    ++pos_;
    return Status::ok();
  }
  Result<std::string> parse_string() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) return error("expected a quoted string");
    const char quote = text_[pos_++];
    size_t end = text_.find(quote, pos_);
    if (end == std::string::npos) return error("unterminated string");
    std::string s = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return s;
  }
  Result<int64_t> parse_int(const std::string& key) {
    skip_space();
    int64_t v = 0;
    size_t start = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      if (v > (INT64_MAX - 9) / 10) return error("field '" + key + "' has a dim too large");
      v = v * 10 + (text_[pos_++] - '0');
    }
    if (pos_ == start) return error("field '" + key + "' must be a tuple of non-negative integers");
    return v;
  }
  Result<HeaderValue> parse_value(const std::string& key) {
    skip_space();
    for (bool flag : {true, false}) {
      const std::string word = flag ? "True" : "False";
      if (text_.compare(pos_, word.size(), word) == 0) {
        pos_ += word.size();
        return HeaderValue(flag);
      }
    }
    if (peek('\'') || peek('"')) {
      KILN_ASSIGN_OR_RETURN(std::string s, parse_string());
      return HeaderValue(std::move(s));
    }
    KILN_RETURN_IF_ERROR(expect('('));
    std::vector<int64_t> dims;
    while (!peek(')')) {
      KILN_ASSIGN_OR_RETURN(int64_t d, parse_int(key));
      dims.push_back(d);
      if (!peek(')')) KILN_RETURN_IF_ERROR(expect(','));
    }
    KILN_RETURN_IF_ERROR(expect(')'));
    return HeaderValue(std::move(dims));
  }

  const std::string& text_;
  const std::string& path_;
  size_t pos_ = 0;
};

uint32_t read_le(const std::string& bytes, size_t at, size_t width) {
  uint32_t v = 0;
  for (size_t i = 0; i < width; ++i) v |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  return v;
}

Status bad(const std::string& path, const std::string& what) { return invalid_argument(path + ": " + what); }

struct Header {
  DType dtype;
  std::vector<int64_t> shape;
  int64_t string_width = 0;  // code points per element of a '<U<n>' string array
};

// n of a '<U<n>' descr (numpy's little-endian fixed-width unicode), or nullopt.
std::optional<int64_t> unicode_width(const std::string& descr) {
  if (descr.size() < 3 || descr.compare(0, 2, "<U") != 0 || descr.size() > 12) return std::nullopt;
  int64_t width = 0;
  for (size_t i = 2; i < descr.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(descr[i]))) return std::nullopt;
    width = width * 10 + (descr[i] - '0');
  }
  return width;
}

Result<Header> interpret_header(const std::map<std::string, HeaderValue>& fields, const std::string& path) {
  auto descr = fields.find("descr");
  if (descr == fields.end() || !std::holds_alternative<std::string>(descr->second))
    return bad(path, "header field 'descr' is missing or not a string");
  const std::string& descr_text = std::get<std::string>(descr->second);
  std::optional<DType> dtype = dtype_of_descr(descr_text);
  const std::optional<int64_t> width = unicode_width(descr_text);
  if (width) dtype = DType::kString;
  if (!dtype)
    return bad(path, "header field 'descr' is '" + descr_text +
                         "', which Kiln does not read (little-endian f2/f4/f8, i1-i8, u1-u8, b1, or U<n> for "
                         "strings; an object array is pickled Python, save strings with dtype str instead)");
  auto fortran = fields.find("fortran_order");
  if (fortran == fields.end() || !std::holds_alternative<bool>(fortran->second))
    return bad(path, "header field 'fortran_order' is missing or not True/False");
  if (std::get<bool>(fortran->second)) return bad(path, "header field 'fortran_order' is True; only C order is read");
  auto shape = fields.find("shape");
  if (shape == fields.end() || !std::holds_alternative<std::vector<int64_t>>(shape->second))
    return bad(path, "header field 'shape' is missing or not a tuple");
  const auto& dims = std::get<std::vector<int64_t>>(shape->second);
  if (shape_element_count(dims) < 0) return bad(path, "header field 'shape' " + shape_to_string(dims) + " is too large");
  return Header{*dtype, dims, width.value_or(0)};
}

// The elements of a '<U<width>' data section as UTF-8; trailing NULs end an element, as in numpy.
Status decode_unicode(const std::string& bytes, size_t at, const Header& header, Tensor& tensor,
                      const std::string& path) {
  std::string* out = tensor.data<std::string>();
  const size_t width = static_cast<size_t>(header.string_width);
  for (int64_t e = 0; e < tensor.element_count(); ++e) {
    std::vector<char32_t> code_points(width);
    for (size_t k = 0; k < width; ++k)
      code_points[k] = static_cast<char32_t>(read_le(bytes, at + (static_cast<size_t>(e) * width + k) * 4, 4));
    while (!code_points.empty() && code_points.back() == 0) code_points.pop_back();
    for (char32_t cp : code_points) {
      if (!is_unicode_scalar(cp))
        return bad(path, "string element " + std::to_string(e) + " holds " + std::to_string(cp) +
                             ", which is not a Unicode code point");
      append_utf8(out[e], cp);
    }
  }
  return Status::ok();
}

// The code points of each string element; InvalidArgument naming the first that is not UTF-8.
Result<std::vector<std::u32string>> code_points_of(const Tensor& tensor) {
  std::vector<std::u32string> elements(static_cast<size_t>(tensor.element_count()));
  for (size_t e = 0; e < elements.size(); ++e) {
    const std::string& s = tensor.data<std::string>()[e];
    for (size_t i = 0; i < s.size();) {
      const std::optional<std::pair<char32_t, size_t>> cp = decode_utf8(s, i);
      if (!cp)
        return invalid_argument("string element " + std::to_string(e) + " is not valid UTF-8 at byte " +
                                std::to_string(i) + "; .npy holds only Unicode text");
      elements[e] += cp->first;
      i += cp->second;
    }
  }
  return elements;
}

// The data section's size against what the header declares, checked before anything is allocated
// (a few bytes declaring a huge shape are refused, not allocated). Strings take 4 bytes per code
// point of their width; a width of 0 holds no elements' worth of bytes, so only an empty array.
Status check_data_size(const Header& header, size_t data_size, const std::string& path) {
  const bool strings = header.dtype == DType::kString;
  const uint64_t element_bytes = strings ? static_cast<uint64_t>(header.string_width) * 4 : dtype_size(header.dtype);
  const auto count = static_cast<uint64_t>(shape_element_count(header.shape));
  const std::string what = strings ? "U" + std::to_string(header.string_width) + " strings" : dtype_name(header.dtype);
  uint64_t needed = 0;
  if (__builtin_mul_overflow(count, element_bytes, &needed))
    return bad(path, "header field 'shape' " + shape_to_string(header.shape) + " of " + what + " is too large");
  if (strings && header.string_width == 0 && count > 0)
    return bad(path, "header field 'descr' is '<U0' for " + std::to_string(count) + " elements; numpy writes at least U1");
  if (data_size != needed)
    return bad(path, "data section is " + std::to_string(data_size) + " bytes but shape " +
                         shape_to_string(header.shape) + " of " + what + " needs " + std::to_string(needed));
  return Status::ok();
}

std::string shape_tuple(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

}  // namespace

Result<Tensor> parse_npy(const std::string& bytes, const std::string& path) {
  if (bytes.size() < kMagicSize + 2 || bytes.compare(0, kMagicSize, kMagic, kMagicSize) != 0)
    return bad(path, "bad magic: not a .npy file");
  const int major = static_cast<unsigned char>(bytes[kMagicSize]);
  if (major != 1 && major != 2) return bad(path, "unsupported .npy version " + std::to_string(major));
  const size_t len_width = major == 1 ? 2 : 4;
  const size_t header_start = kMagicSize + 2 + len_width;
  if (bytes.size() < header_start) return bad(path, "header length is cut off");
  const size_t header_len = read_le(bytes, kMagicSize + 2, len_width);
  if (bytes.size() - header_start < header_len)
    return bad(path, "header is cut off (" + std::to_string(header_len) + " bytes announced)");
  const std::string text = bytes.substr(header_start, header_len);
  KILN_ASSIGN_OR_RETURN(auto fields, HeaderParser(text, path).parse());
  KILN_ASSIGN_OR_RETURN(Header header, interpret_header(fields, path));

  const size_t data_start = header_start + header_len;
  const size_t data_size = bytes.size() - data_start;
  KILN_RETURN_IF_ERROR(check_data_size(header, data_size, path));
  Tensor tensor = Tensor::allocate(header.dtype, header.shape);
  if (!tensor.defined())
    return allocation_failure(path + ": cannot allocate " + dtype_name(header.dtype) + shape_to_string(header.shape));
  if (header.dtype == DType::kString) {
    KILN_RETURN_IF_ERROR(decode_unicode(bytes, data_start, header, tensor, path));
    return tensor;
  }
  if (data_size) std::memcpy(tensor.raw_data(), bytes.data() + data_start, data_size);
  if (tensor.dtype() == DType::kBool) {
    const uint8_t* raw = static_cast<const uint8_t*>(tensor.raw_data());
    for (size_t i = 0; i < data_size; ++i)
      if (raw[i] > 1) return bad(path, "data section holds a bool byte other than 0 or 1 at index " + std::to_string(i));
  }
  return tensor;
}

Result<Tensor> read_npy(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, read_file(path));
  return parse_npy(bytes, path);
}

Result<std::string> serialize_npy(const Tensor& tensor) {
  std::optional<std::string> descr = descr_of_dtype(tensor.dtype());
  std::vector<std::u32string> strings;
  size_t string_width = 1;  // numpy's narrowest unicode array, also for empty strings
  if (tensor.dtype() == DType::kString) {
    KILN_ASSIGN_OR_RETURN(strings, code_points_of(tensor));
    for (const std::u32string& s : strings) string_width = std::max(string_width, s.size());
    descr = "<U" + std::to_string(string_width);
  }
  if (!descr) return invalid_argument(std::string(".npy cannot hold ") + dtype_name(tensor.dtype()) + " tensors here");
  std::string header = "{'descr': '" + *descr + "', 'fortran_order': False, 'shape': " + shape_tuple(tensor.shape()) + ", }";
  // numpy pads with spaces so that the data starts on a 64-byte boundary, and ends with '\n'.
  const size_t preamble_v1 = kMagicSize + 2 + 2;
  const bool v2 = header.size() + 1 + preamble_v1 + 63 > 0xffff;
  const size_t preamble = v2 ? kMagicSize + 2 + 4 : preamble_v1;
  header.append((64 - (preamble + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, kMagicSize);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  out += header;
  if (tensor.dtype() != DType::kString) {
    out.append(static_cast<const char*>(tensor.raw_data()), tensor.byte_size());
    return out;
  }
  for (const std::u32string& s : strings)
    for (size_t k = 0; k < string_width; ++k) {
      const char32_t cp = k < s.size() ? s[k] : 0;
      for (int b = 0; b < 4; ++b) out += static_cast<char>((cp >> (8 * b)) & 0xff);
    }
  return out;
}

Status write_npy(const std::string& path, const Tensor& tensor) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, serialize_npy(tensor));
  return write_file_atomic(path, bytes);
}

}  // namespace kiln::io
