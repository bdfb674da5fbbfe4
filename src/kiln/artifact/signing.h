// Ed25519 signing of .kiln artifacts (libsodium). The signature block (container.h) is the 64-byte
// detached signature followed by the signer's 32-byte public key; the signed message is the magic
// and format version of the header and the manifest's SHA-256, which covers every section.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kiln/artifact/container.h"
#include "kiln/status.h"

namespace kiln::artifact {

inline constexpr size_t kPublicKeyBytes = 32, kSecretKeyBytes = 64;

struct KeyPair {
  std::string public_key;  // kPublicKeyBytes
  std::string secret_key;  // kSecretKeyBytes (libsodium's seed + public key)
};
Result<KeyPair> generate_key_pair();

// The bytes of a key file of exactly `expected` bytes; InvalidArgument naming the file otherwise.
Result<std::string> read_key_file(const std::string& path, size_t expected);

// `file` (a valid artifact) signed with `secret_key`, replacing any earlier signature.
Result<std::string> sign(std::string_view file, const std::string& secret_key);

// Checks `decoded`'s signature block. IntegrityFailure when a signature does not verify, when
// `trusted_key` is given and the file is unsigned or signed by another key, or when `required`
// and the file is unsigned. Returns what it found: "unsigned" or "signed by <public key, hex>".
Result<std::string> check_signature(const Decoded& decoded, const std::optional<std::string>& trusted_key, bool required);

}  // namespace kiln::artifact
