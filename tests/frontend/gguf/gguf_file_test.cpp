// The GGUF reader: a whole file (every value type, nested arrays, alignment, tensors as views),
// llama.cpp's stories260K.gguf when ../shared/llm has it, and broken files, each refused with an
// InvalidModel that names the key or tensor: every truncation of a valid file, a big-endian file,
// counts and lengths past the file, a bad alignment, offsets past the end or off the alignment,
// types Kiln has no layout for.
#include "kiln/frontend/gguf/gguf_file.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/gguf_writer.h"

namespace kiln::frontend::gguf {
namespace {

using kiln::testing::GgufWriter;

// Two keys of every plain type, a string array, a nested array, general.alignment 64 and two
// tensors: F32 [3] and Q8_0 [32, 2] (two blocks of 34 bytes).
std::string sample_file() {
  GgufWriter w;
  w.header(3, 2, 7);
  w.key("general.architecture", 8).str("llama");
  w.key("general.alignment", 4).u32(64);
  w.key("llama.block_count", 4).u32(5);
  w.key("llama.attention.layer_norm_rms_epsilon", 6).f32(1e-5f);
  w.key("tokenizer.ggml.tokens", 9).u32(8).u64(3).str("<unk>").str("<s>").str("</s>");
  w.key("nested", 9).u32(9).u64(2).u32(5).u64(1).i32(-7).u32(7).u64(2).u8(1).u8(0);
  w.key("tokenizer.ggml.add_bos_token", 7).u8(1);
  w.tensor("a", {3}, 0, 0);
  w.tensor("b", {32, 2}, 8, 64);
  w.pad(64);
  const float a[3] = {1.5f, -2.0f, 3.25f};
  w.raw(a, sizeof a);
  w.pad(64);
  std::string blocks(68, '\x01');
  w.raw(blocks.data(), blocks.size());
  return w.bytes();
}

TEST(GgufFile, ReadsEveryValueTypeTheTensorInfosAndViewsOfTheData) {
  const std::string bytes = sample_file();
  const Result<GgufFile> file = parse_gguf(bytes, "sample.gguf");
  ASSERT_TRUE(file.is_ok()) << file.status().to_string();
  EXPECT_EQ(file->version, 3u);
  EXPECT_EQ(file->alignment, 64u);
  EXPECT_EQ(file->data_offset % 64, 0u);
  ASSERT_EQ(file->metadata.size(), 7u);
  EXPECT_EQ(file->find("general.architecture")->string_value, "llama");
  EXPECT_EQ(file->find("llama.block_count")->as_int(), 5);
  EXPECT_FLOAT_EQ(static_cast<float>(file->find("llama.attention.layer_norm_rms_epsilon")->as_float()), 1e-5f);
  const MetadataValue* tokens = file->find("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens->elements.size(), 3u);
  EXPECT_EQ(tokens->element_type, ValueType::kString);
  EXPECT_EQ(tokens->elements[2].string_value, "</s>");
  const MetadataValue* nested = file->find("nested");
  ASSERT_EQ(nested->elements.size(), 2u);
  EXPECT_EQ(nested->elements[0].elements[0].as_int(), -7);
  EXPECT_EQ(nested->elements[1].elements[0].as_int(), 1);  // a bool
  EXPECT_EQ(file->find("tokenizer.ggml.add_bos_token")->as_int(), 1);
  EXPECT_EQ(file->find("missing"), nullptr);
  ASSERT_EQ(file->tensors.size(), 2u);
  const TensorInfo& a = *file->tensor("a");
  EXPECT_EQ(a.type.name, "F32");
  EXPECT_EQ(a.bytes, 12u);
  float first;
  std::memcpy(&first, a.data.data(), 4);
  EXPECT_EQ(first, 1.5f);
  EXPECT_EQ(a.data.data(), bytes.data() + file->data_offset);  // a view, not a copy
  const TensorInfo& b = *file->tensor("b");
  EXPECT_EQ(b.type.name, "Q8_0");
  EXPECT_EQ(b.dims, (std::vector<int64_t>{32, 2}));
  EXPECT_EQ(b.bytes, 68u);
  EXPECT_EQ(b.element_count(), 64);
}

// Every prefix of a valid file is refused as invalid_model (or read, where the cut falls after the
// last byte any tensor needs), never a crash.
TEST(GgufFile, EveryTruncationIsRefusedAndNamesWhere) {
  const std::string bytes = sample_file();
  for (size_t n = 0; n < bytes.size(); ++n) {
    const Result<GgufFile> file = parse_gguf(std::string_view(bytes).substr(0, n), "cut.gguf");
    ASSERT_FALSE(file.is_ok()) << "a file cut at " << n << " bytes was read";
    EXPECT_EQ(file.status().code(), StatusCode::kInvalidModel) << n;
    EXPECT_NE(file.status().message().find("cut.gguf"), std::string::npos) << file.status().message();
  }
}

std::string refusal(const std::string& bytes) {
  const Result<GgufFile> file = parse_gguf(bytes, "bad.gguf");
  EXPECT_FALSE(file.is_ok());
  if (file.is_ok()) return "";
  EXPECT_EQ(file.status().code(), StatusCode::kInvalidModel);
  return file.status().message();
}

TEST(GgufFile, BrokenFilesAreRefusedNamingTheKeyOrTensor) {
  EXPECT_NE(refusal("GGML" + std::string(20, '\0')).find("no \"GGUF\" magic"), std::string::npos);
  {
    GgufWriter w;
    w.raw("GGUF", 4).raw("\0\0\0\3", 4).u64(0).u64(0);  // version 3, big-endian
    EXPECT_NE(refusal(w.bytes()).find("big-endian"), std::string::npos);
  }
  {
    GgufWriter w;
    w.header(1, 0, 0);
    EXPECT_NE(refusal(w.bytes()).find("version 1"), std::string::npos);
  }
  {
    GgufWriter w;
    w.header(3, 0, uint64_t{1} << 60);
    EXPECT_NE(refusal(w.bytes()).find("metadata entries do not fit"), std::string::npos);
  }
  {
    GgufWriter w;
    w.header(3, 0, 1).key("k", 8).u64(uint64_t{1} << 40);
    EXPECT_NE(refusal(w.bytes()).find("key 'k'"), std::string::npos);
  }
  {
    GgufWriter w;
    w.header(3, 0, 1).key("tokens", 9).u32(8).u64(uint64_t{1} << 61);
    EXPECT_NE(refusal(w.bytes()).find("does not fit"), std::string::npos);
  }
  {
    GgufWriter w;
    w.header(3, 0, 1).key("odd", 13).u8(0);
    EXPECT_NE(refusal(w.bytes()).find("unknown value type 13"), std::string::npos);
  }
  {
    GgufWriter w;
    w.header(3, 0, 1).key("general.alignment", 4).u32(48);
    EXPECT_NE(refusal(w.bytes()).find("power of two"), std::string::npos);
  }
  {
    GgufWriter w;
    w.header(3, 0, 2).key("k", 4).u32(1).key("k", 4).u32(2);
    EXPECT_NE(refusal(w.bytes()).find("appears twice"), std::string::npos);
  }
  {  // nested arrays past the depth limit
    GgufWriter w;
    w.header(3, 0, 1).key("deep", 9);
    for (int i = 0; i < 20; ++i) w.u32(9).u64(1);
    w.u32(0).u64(0);
    EXPECT_NE(refusal(w.bytes()).find("nested deeper"), std::string::npos);
  }
  auto one_tensor = [](const std::vector<uint64_t>& dims, uint32_t type, uint64_t offset, size_t data_bytes) {
    GgufWriter w;
    w.header(3, 1, 0).tensor("blk.0.attn_q.weight", dims, type, offset).pad(32);
    w.raw(std::string(data_bytes, '\0').data(), data_bytes);
    return w.bytes();
  };
  EXPECT_NE(refusal(one_tensor({4}, 0, 0, 8)).find("tensor 'blk.0.attn_q.weight': its 16 bytes at offset 0 run past"), std::string::npos);
  EXPECT_NE(refusal(one_tensor({4}, 0, 4, 64)).find("not a multiple of the alignment"), std::string::npos);
  EXPECT_NE(refusal(one_tensor({4}, 0, uint64_t{1} << 63, 64)).find("run past"), std::string::npos);
  EXPECT_NE(refusal(one_tensor({16}, 2, 0, 64)).find("not whole Q4_0 blocks of 32"), std::string::npos);
  EXPECT_NE(refusal(one_tensor({256}, 16, 0, 64)).find("its type IQ2_XXS is not one Kiln reads"), std::string::npos);
  EXPECT_NE(refusal(one_tensor({256}, 99, 0, 64)).find("type 99"), std::string::npos);
  EXPECT_NE(refusal(one_tensor({uint64_t{1} << 40, uint64_t{1} << 40}, 0, 0, 64)).find("overflows"), std::string::npos);
  EXPECT_NE(refusal(one_tensor({1, 1, 1, 1, 1}, 0, 0, 64)).find("rank 5"), std::string::npos);
}

// The fuzz target's seeds (tests/fuzz/make_seeds.py) are files the reader accepts, so that fuzzing
// starts from inside the format.
TEST(GgufFile, TheFuzzSeedsAreValidFiles) {
  const std::filesystem::path folder = std::filesystem::path(KILN_SOURCE_DIR) / "tests" / "fuzz" / "corpus" / "fuzz_gguf";
  int seeds = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().filename().string().rfind("seed-", 0) != 0) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string bytes = buffer.str();
    const Result<GgufFile> file = parse_gguf(bytes, entry.path().string());
    EXPECT_TRUE(file.is_ok()) << file.status().to_string();
    ++seeds;
  }
  EXPECT_GE(seeds, 3);
}

// llama.cpp's own conversion of a trained model (tests/llm/README.md).
TEST(GgufFile, ReadsLlamaCppsStories260K) {
  const std::filesystem::path path = std::filesystem::path(KILN_SOURCE_DIR) / "tests" / "llm" / "stories260K.gguf";
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is part of the repository";
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string bytes = buffer.str();
  const Result<GgufFile> file = parse_gguf(bytes, path.string());
  ASSERT_TRUE(file.is_ok()) << file.status().to_string();
  EXPECT_EQ(file->version, 3u);
  EXPECT_EQ(file->alignment, 32u);
  EXPECT_EQ(file->find("general.architecture")->string_value, "llama");
  EXPECT_EQ(file->find("llama.block_count")->as_int(), 5);
  EXPECT_EQ(file->find("llama.embedding_length")->as_int(), 64);
  EXPECT_EQ(file->find("llama.feed_forward_length")->as_int(), 172);
  EXPECT_EQ(file->find("llama.attention.head_count")->as_int(), 8);
  EXPECT_EQ(file->find("llama.attention.head_count_kv")->as_int(), 4);
  EXPECT_EQ(file->find("tokenizer.ggml.model")->string_value, "llama");
  EXPECT_EQ(file->find("tokenizer.ggml.tokens")->elements.size(), 512u);
  EXPECT_EQ(file->find("tokenizer.ggml.bos_token_id")->as_int(), 1);
  ASSERT_EQ(file->tensors.size(), 48u);
  uint64_t data_bytes = 0;
  for (const TensorInfo& t : file->tensors) {
    EXPECT_EQ(t.type.name, "F32") << t.name;
    data_bytes += t.bytes;
  }
  EXPECT_LE(file->data_offset + data_bytes, bytes.size());
  const TensorInfo* embedding = file->tensor("token_embd.weight");
  ASSERT_NE(embedding, nullptr);
  EXPECT_EQ(embedding->dims, (std::vector<int64_t>{64, 512}));  // 512 rows of 64
  for (size_t i = 0; i < 64; ++i) {
    float v;
    std::memcpy(&v, embedding->data.data() + 4 * i, 4);
    EXPECT_TRUE(std::isfinite(v));
  }
}

}  // namespace
}  // namespace kiln::frontend::gguf
