// Tests of the .kiln container: round trip, and fail-closed decoding of every corruption: each
// byte flipped in turn (header, sections, padding, manifest), every truncation, an extension, an
// empty file, a newer format version and the development format 1; large sections hashed in
// chunks.
#include "kiln/artifact/container.h"

#include <gtest/gtest.h>

#include "kiln/io/file.h"

namespace kiln::artifact {
namespace {

std::string small_artifact() {
  const std::vector<Section> sections = {{"weights", std::string("\x01\x02\x03\x04\x05", 5)},
                                         {"asset:labels.txt", "cat\ndog\n"}};
  Result<std::string> file = encode({{"kiln_version", "test"}, {"note", "small"}}, sections);
  EXPECT_TRUE(file.is_ok());
  return file.is_ok() ? file.value() : "";
}

TEST(ArtifactContainer, RoundTripsManifestAndSectionsAtAlignedOffsets) {
  const std::string file = small_artifact();
  auto decoded = decode(file);
  ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded.value().manifest["note"], "small");
  EXPECT_EQ(decoded.value().manifest["format_version"], kFormatVersion);
  ASSERT_EQ(decoded.value().sections.size(), 2u);
  EXPECT_EQ(decoded.value().sections[0].name, "weights");
  EXPECT_EQ(decoded.value().sections[0].bytes, std::string("\x01\x02\x03\x04\x05", 5));
  EXPECT_EQ(decoded.value().sections[1].bytes, "cat\ndog\n");
  for (const auto& entry : decoded.value().manifest["sections"]) EXPECT_EQ(entry["offset"].get<size_t>() % kSectionAlignment, 0u);
  EXPECT_EQ(file.substr(0, 4), "KILN");
}

TEST(ArtifactContainer, EveryFlippedByteIsAnIntegrityFailure) {
  const std::string file = small_artifact();
  for (size_t i = 0; i < file.size(); ++i) {
    std::string bad = file;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    auto decoded = decode(bad);
    ASSERT_FALSE(decoded.is_ok()) << "flipping byte " << i << " went unnoticed";
    const StatusCode code = decoded.status().code();
    EXPECT_TRUE(code == StatusCode::kIntegrityFailure || code == StatusCode::kUnsupportedTarget)
        << i << ": " << decoded.status().to_string();
  }
}

TEST(ArtifactContainer, TruncationsExtensionsAndEmptyFilesAreIntegrityFailures) {
  const std::string file = small_artifact();
  for (size_t size = 0; size < file.size(); ++size) {
    auto decoded = decode(std::string_view(file).substr(0, size));
    ASSERT_FALSE(decoded.is_ok()) << "truncated to " << size << " bytes";
    EXPECT_EQ(decoded.status().code(), StatusCode::kIntegrityFailure) << size;
  }
  EXPECT_EQ(decode(file + '\0').status().code(), StatusCode::kIntegrityFailure);
  EXPECT_NE(decode("").status().message().find("truncated"), std::string::npos);
}

TEST(ArtifactContainer, TheMessageNamesTheSectionAtFault) {
  std::string file = small_artifact();
  auto decoded = decode(file);
  ASSERT_TRUE(decoded.is_ok());
  const size_t labels = decoded.value().manifest["sections"][1]["offset"];
  file[labels] = 'b';
  EXPECT_NE(decode(file).status().message().find("section 'asset:labels.txt': SHA-256 mismatch"), std::string::npos);
}

TEST(ArtifactContainer, ANewerFormatVersionIsAnUnsupportedTarget) {
  std::string file = small_artifact();
  file[8] = static_cast<char>(kFormatVersion + 1);
  auto decoded = decode(file);
  EXPECT_EQ(decoded.status().code(), StatusCode::kUnsupportedTarget);
  EXPECT_NE(decoded.status().message().find("format version " + std::to_string(kFormatVersion + 1)), std::string::npos);
  file[8] = 1;
  EXPECT_EQ(decode(file).status().code(), StatusCode::kUnsupportedTarget) << "the development format is not read";
}

// Files of the oldest format still read (2: plans without subgraphs) decode, their version kept
// (a signature covers it); a header and manifest that disagree on the version are corrupt.
TEST(ArtifactContainer, TheOldestReadFormatVersionIsStillRead) {
  std::string file = small_artifact();
  const size_t manifest_at = file.find("{\"");
  const std::string newest = "\"format_version\":" + std::to_string(kFormatVersion);
  const size_t field = file.find(newest, manifest_at);
  ASSERT_NE(field, std::string::npos);
  file.replace(field, newest.size(), "\"format_version\":" + std::to_string(kOldestReadFormatVersion));
  const std::string disagreeing = file;
  file[8] = static_cast<char>(kOldestReadFormatVersion);
  const std::string hash = io::sha256_hex(std::string_view(file).substr(manifest_at)).value();
  file.replace(48, hash.size(), hash);
  auto decoded = decode(file);
  ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded.value().format_version, kOldestReadFormatVersion);
  EXPECT_EQ(decoded.value().sections[1].bytes, "cat\ndog\n");
  file[8] = static_cast<char>(kFormatVersion);
  EXPECT_EQ(decode(file).status().code(), StatusCode::kIntegrityFailure) << "header and manifest disagree";
  EXPECT_EQ(decode(disagreeing).status().code(), StatusCode::kIntegrityFailure);
}

TEST(ArtifactContainer, LargeSectionsAreHashedInChunksAndTheMessageNamesTheChunk) {
  std::string weights(kHashChunkBytes * 2 + 100, '\0');
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<char>(i * 7);
  std::string file = encode(nlohmann::json::object(), {{"weights", weights}}).value();
  auto decoded = decode(file);
  ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
  EXPECT_EQ(decoded.value().manifest["sections"][0]["sha256"].size(), 3u);
  EXPECT_EQ(decoded.value().sections[0].bytes, weights);
  const size_t at = decoded.value().manifest["sections"][0]["offset"].get<size_t>() + kHashChunkBytes * 2 + 50;
  file[at] = static_cast<char>(file[at] ^ 1);
  const Status s = decode(file).status();
  EXPECT_EQ(s.code(), StatusCode::kIntegrityFailure);
  EXPECT_NE(s.message().find("section 'weights': SHA-256 mismatch in chunk 2"), std::string::npos) << s.message();
}

// JSON holds only UTF-8: a section name or manifest string that is not is an InvalidArgument, not
// an exception out of the encoder (fuzz_artifact).
TEST(ArtifactContainer, NamesThatAreNotUtf8AreRefused) {
  EXPECT_EQ(encode(nlohmann::json::object(), {{"asset:\xff", "a"}}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(encode({{"note", "\xc3"}}, {}).status().code(), StatusCode::kInvalidArgument);
}

TEST(ArtifactContainer, RepeatedSectionNamesAreRefused) {
  EXPECT_EQ(encode(nlohmann::json::object(), {{"weights", "a"}, {"weights", "b"}}).status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln::artifact
