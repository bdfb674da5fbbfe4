// String ops: StringNormalizer (stop-word removal, then lower/upper casing). Case mapping is Kiln's
// own, independent of the machine's installed locales: it covers ASCII, Latin-1, Greek and the
// basic Cyrillic block of UTF-8 text and leaves every other code point (and invalid bytes) as is.
#include <set>
#include <string>
#include <vector>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {

namespace {

// ---- UTF-8 case mapping ----

char32_t upper_of(char32_t c) {
  if (c >= U'a' && c <= U'z') return c - 32;
  if ((c >= 0xE0 && c <= 0xFE && c != 0xF7)) return c - 32;  // Latin-1 (not the division sign)
  if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;  // Greek (final sigma stays)
  if (c >= 0x430 && c <= 0x44F) return c - 32;                // Cyrillic а..я
  if (c >= 0x450 && c <= 0x45F) return c - 80;                // Cyrillic ѐ..џ
  return c;
}

char32_t lower_of(char32_t c) {
  if (c >= U'A' && c <= U'Z') return c + 32;
  if ((c >= 0xC0 && c <= 0xDE && c != 0xD7)) return c + 32;   // Latin-1 (not the multiplication sign)
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}

// Marks a byte that is not valid UTF-8: it is written back unchanged.
constexpr char32_t kRawByte = 0x80000000u;

// Decodes one code point at s[i] and advances i past it.
char32_t decode(const std::string& s, size_t& i) {
  const auto b = static_cast<unsigned char>(s[i]);
  const size_t extra = b >= 0xF0 ? 3 : b >= 0xE0 ? 2 : b >= 0xC0 ? 1 : 0;
  bool valid = b < 0x80 || (b >= 0xC0 && i + extra < s.size());
  for (size_t k = 1; valid && k <= extra; ++k) valid = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
  if (!valid) {
    ++i;
    return kRawByte | b;
  }
  char32_t c = extra ? (b & (0x3F >> extra)) : b;
  for (size_t k = 1; k <= extra; ++k) c = (c << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
  i += extra + 1;
  return c;
}

void encode(char32_t c, std::string& out) {
  if (c & kRawByte) {
    out += static_cast<char>(c & 0xFF);
  } else if (c < 0x80) {
    out += static_cast<char>(c);
  } else if (c < 0x800) {
    out += static_cast<char>(0xC0 | (c >> 6));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else if (c < 0x10000) {
    out += static_cast<char>(0xE0 | (c >> 12));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (c >> 18));
    out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (c & 0x3F));
  }
}

std::string map_case(const std::string& s, char32_t (*fn)(char32_t)) {
  std::string out;
  for (size_t i = 0; i < s.size();) encode(fn(decode(s, i)), out);
  return out;
}

// ---- StringNormalizer ----

// The strings that survive stop-word removal, cased as the node asks.
std::vector<std::string> normalize(const ir::Node& node, const Tensor& x) {
  const bool case_sensitive = node.attr_int("is_case_sensitive", 0) != 0;
  std::set<std::string> stopwords;
  if (const ir::Attribute* a = node.attr("stopwords"))
    for (const std::string& w : a->strings) stopwords.insert(case_sensitive ? w : map_case(w, lower_of));
  const std::string action = node.attr_string("case_change_action", "NONE");
  std::vector<std::string> out;
  for (int64_t i = 0; i < x.element_count(); ++i) {
    const std::string& s = x.data<std::string>()[i];
    if (stopwords.count(case_sensitive ? s : map_case(s, lower_of))) continue;
    out.push_back(action == "LOWER" ? map_case(s, lower_of) : action == "UPPER" ? map_case(s, upper_of) : s);
  }
  return out;
}

// [C] -> [C'] and [1, C] -> [1, C']; when everything is dropped, [1] or [1, 1] holding "".
std::vector<int64_t> normalized_shape(int64_t rank, size_t kept) {
  const int64_t c = kept == 0 ? 1 : static_cast<int64_t>(kept);
  return rank == 1 ? std::vector<int64_t>{c} : std::vector<int64_t>{1, c};
}

Status normalizer_infer(InferenceContext& ctx) {
  const ir::TensorType& x = ctx.input_type(0);
  if (x.dtype != DType::kString) return ctx.error("input must be a string tensor");
  const std::string action = ctx.node().attr_string("case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER")
    return ctx.error("case_change_action must be NONE, LOWER or UPPER, not '" + action + "'");
  if (x.shape && x.shape->rank() != 1 && !(x.shape->rank() == 2 && x.shape->dims()[0] == ir::Dim(1)))
    return ctx.error("input must have shape [C] or [1, C]");
  ir::TensorType out{DType::kString};
  if (const Tensor* value = ctx.input_value(0))
    out.shape = ir::Shape::from_static(normalized_shape(value->rank(), normalize(ctx.node(), *value).size()));
  else if (x.shape)
    out.shape = x.shape->rank() == 1 ? ir::Shape({ir::Dim::unknown()}) : ir::Shape({ir::Dim(1), ir::Dim::unknown()});
  ctx.set_output_type(0, out);
  return Status::ok();
}

Status normalizer_kernel(KernelContext& ctx) {
  std::vector<std::string> kept = normalize(ctx.node(), *ctx.input(0));
  if (kept.empty()) kept.push_back("");
  Tensor& out = *ctx.output(0);
  for (size_t i = 0; i < kept.size(); ++i) out.data<std::string>()[i] = std::move(kept[i]);
  return Status::ok();
}

}  // namespace

void register_string_ops(OpRegistry& r) {
  r.add({"", "StringNormalizer", 10, with_required_inputs(1, normalizer_infer), normalizer_kernel});
}

}  // namespace kiln::ops
