// GGUF metadata written back (gguf_writer.h) reads back entry for entry: every value type, nested
// arrays, in order, and no tensors.
#include "kiln/frontend/gguf/gguf_writer.h"

#include <gtest/gtest.h>

namespace kiln::frontend::gguf {
namespace {

MetadataValue scalar(ValueType type, uint64_t u, int64_t i, double f) {
  MetadataValue v;
  v.type = type;
  v.unsigned_value = u;
  v.signed_value = i;
  v.float_value = f;
  return v;
}

void expect_same(const MetadataValue& a, const MetadataValue& b, const std::string& where) {
  ASSERT_EQ(a.type, b.type) << where;
  EXPECT_EQ(a.as_int(), b.as_int()) << where;
  if (a.type == ValueType::kF32 || a.type == ValueType::kF64) {
    EXPECT_EQ(a.float_value, b.float_value) << where;
  }
  EXPECT_EQ(a.string_value, b.string_value) << where;
  ASSERT_EQ(a.elements.size(), b.elements.size()) << where;
  if (a.type == ValueType::kArray) {
    EXPECT_EQ(a.element_type, b.element_type) << where;
  }
  for (size_t i = 0; i < a.elements.size(); ++i) expect_same(a.elements[i], b.elements[i], where + "[" + std::to_string(i) + "]");
}

TEST(GgufWriter, MetadataReadsBackEntryForEntry) {
  std::vector<MetadataEntry> entries = {
      {"u8", scalar(ValueType::kU8, 200, 0, 0)},      {"i8", scalar(ValueType::kI8, 0, -100, 0)},
      {"u16", scalar(ValueType::kU16, 60000, 0, 0)},  {"i16", scalar(ValueType::kI16, 0, -30000, 0)},
      {"u32", scalar(ValueType::kU32, 4000000000u, 0, 0)}, {"i32", scalar(ValueType::kI32, 0, -2000000000, 0)},
      {"u64", scalar(ValueType::kU64, 1ull << 40, 0, 0)},  {"i64", scalar(ValueType::kI64, 0, -(int64_t{1} << 40), 0)},
      {"f32", scalar(ValueType::kF32, 0, 0, 0.25)},        {"f64", scalar(ValueType::kF64, 0, 0, 1e-300)},
      {"bool", scalar(ValueType::kBool, 1, 0, 0)},
  };
  MetadataValue text;
  text.type = ValueType::kString;
  text.string_value = std::string("tok\0en\xE2\x96\x81", 9);
  entries.push_back({"string", text});
  MetadataValue strings;
  strings.type = ValueType::kArray;
  strings.element_type = ValueType::kString;
  strings.elements = {text, text};
  MetadataValue nested;
  nested.type = ValueType::kArray;
  nested.element_type = ValueType::kArray;
  nested.elements = {strings, strings};
  entries.push_back({"strings", strings});
  entries.push_back({"nested", nested});

  const std::string bytes = write_metadata_gguf(entries);
  const Result<GgufFile> file = parse_gguf(bytes, "written.gguf");
  ASSERT_TRUE(file.is_ok()) << file.status().to_string();
  EXPECT_EQ(file->version, 3u);
  EXPECT_TRUE(file->tensors.empty());
  ASSERT_EQ(file->metadata.size(), entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_EQ(file->metadata[i].key, entries[i].key);
    expect_same(file->metadata[i].value, entries[i].value, entries[i].key);
  }
}

}  // namespace
}  // namespace kiln::frontend::gguf
