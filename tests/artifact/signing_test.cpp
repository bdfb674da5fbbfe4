// Tests of artifact signing: a signature verifies with its key and no other; every byte of a
// signed file flipped, and every truncation, is caught by decoding or by the signature check;
// unsigned files fail when a key or a signature is required; key files of the wrong length fail.
#include "kiln/artifact/signing.h"

#include <gtest/gtest.h>

#include "kiln/io/file.h"
#include "support/model_builder.h"

namespace kiln::artifact {
namespace {

std::string unsigned_artifact() {
  return encode({{"kiln_version", "test"}}, {{"weights", std::string(100, '\x07')}}).value();
}

KeyPair keys() {
  auto k = generate_key_pair();
  EXPECT_TRUE(k.is_ok());
  return k.value();
}

Status check(std::string_view file, const std::optional<std::string>& trusted, bool required = false) {
  auto decoded = decode(file);
  if (!decoded.is_ok()) return decoded.status();
  return check_signature(decoded.value(), trusted, required).status();
}

TEST(ArtifactSigning, VerifiesWithItsKeyAndNoOther) {
  const KeyPair mine = keys(), theirs = keys();
  auto signed_file = sign(unsigned_artifact(), mine.secret_key);
  ASSERT_TRUE(signed_file.is_ok()) << signed_file.status().to_string();
  auto decoded = decode(signed_file.value());
  ASSERT_TRUE(decoded.is_ok()) << decoded.status().to_string();
  auto found = check_signature(decoded.value(), mine.public_key, true);
  ASSERT_TRUE(found.is_ok()) << found.status().to_string();
  EXPECT_EQ(found.value().rfind("signed by ", 0), 0u);
  EXPECT_TRUE(check(signed_file.value(), std::nullopt).is_ok());
  const Status other = check(signed_file.value(), theirs.public_key);
  EXPECT_EQ(other.code(), StatusCode::kIntegrityFailure);
  EXPECT_NE(other.message().find("not by the given public key"), std::string::npos);
  // Re-signing replaces the signature rather than adding one.
  auto resigned = sign(signed_file.value(), theirs.secret_key);
  ASSERT_TRUE(resigned.is_ok());
  EXPECT_EQ(resigned.value().size(), signed_file.value().size());
  EXPECT_TRUE(check(resigned.value(), theirs.public_key).is_ok());
}

TEST(ArtifactSigning, EveryFlippedByteAndTruncationOfASignedFileIsCaught) {
  const KeyPair k = keys();
  const std::string file = sign(unsigned_artifact(), k.secret_key).value();
  for (size_t i = 0; i < file.size(); ++i) {
    std::string bad = file;
    bad[i] = static_cast<char>(bad[i] ^ 0x01);
    EXPECT_FALSE(check(bad, k.public_key).is_ok()) << "flipping byte " << i << " went unnoticed";
  }
  for (size_t size = 0; size < file.size(); ++size)
    EXPECT_FALSE(check(std::string_view(file).substr(0, size), k.public_key).is_ok()) << "truncated to " << size;
}

TEST(ArtifactSigning, UnsignedFilesFailWhenAKeyOrASignatureIsRequired) {
  const std::string file = unsigned_artifact();
  EXPECT_TRUE(check(file, std::nullopt).is_ok());
  EXPECT_EQ(check(file, keys().public_key).code(), StatusCode::kIntegrityFailure);
  const Status required = check(file, std::nullopt, true);
  EXPECT_EQ(required.code(), StatusCode::kIntegrityFailure);
  EXPECT_NE(required.message().find("unsigned"), std::string::npos);
}

TEST(ArtifactSigning, KeyFilesOfTheWrongLengthAreInvalidArguments) {
  testing::ScratchDir dir("signing");
  ASSERT_TRUE(io::write_file_atomic(dir.file("short.sk"), std::string(63, 'k')).is_ok());
  const auto r = read_key_file(dir.file("short.sk"), kSecretKeyBytes);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("short.sk"), std::string::npos);
  EXPECT_EQ(read_key_file(dir.file("missing.pk"), kPublicKeyBytes).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(sign(unsigned_artifact(), "too short").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln::artifact
