// Ed25519 keys, signatures and their checks for .kiln artifacts.
#include "kiln/artifact/signing.h"

#include <sodium.h>

#include "kiln/io/file.h"

namespace kiln::artifact {
namespace {

constexpr size_t kSignatureBytes = 64;
static_assert(kSignatureBytes + kPublicKeyBytes == kSignatureBlockBytes);
static_assert(crypto_sign_PUBLICKEYBYTES == kPublicKeyBytes && crypto_sign_SECRETKEYBYTES == kSecretKeyBytes &&
              crypto_sign_BYTES == kSignatureBytes);

Status start_sodium() {
  return sodium_init() < 0 ? internal_error("libsodium failed to start") : Status::ok();
}

// What a signature covers: the file's format version and its manifest's SHA-256.
std::string message(const Decoded& decoded) {
  return std::string("KILN\r\n\x1a\n", 8) + "format " + std::to_string(decoded.format_version) + " manifest sha256 " +
         decoded.manifest_sha256;
}

const unsigned char* bytes(const std::string& s) { return reinterpret_cast<const unsigned char*>(s.data()); }

std::string hex(const std::string& key) {
  std::string out(key.size() * 2 + 1, '\0');
  sodium_bin2hex(out.data(), out.size(), bytes(key), key.size());
  out.pop_back();
  return out;
}

}  // namespace

Result<KeyPair> generate_key_pair() {
  KILN_RETURN_IF_ERROR(start_sodium());
  KeyPair keys{std::string(kPublicKeyBytes, '\0'), std::string(kSecretKeyBytes, '\0')};
  crypto_sign_keypair(reinterpret_cast<unsigned char*>(keys.public_key.data()),
                      reinterpret_cast<unsigned char*>(keys.secret_key.data()));
  return keys;
}

Result<std::string> read_key_file(const std::string& path, size_t expected) {
  KILN_ASSIGN_OR_RETURN(std::string key, io::read_file(path));
  if (key.size() != expected)
    return invalid_argument("key file '" + path + "' has " + std::to_string(key.size()) + " bytes; a " +
                            (expected == kSecretKeyBytes ? "secret" : "public") + " key has " + std::to_string(expected));
  return key;
}

Result<std::string> sign(std::string_view file, const std::string& secret_key) {
  KILN_RETURN_IF_ERROR(start_sodium());
  if (secret_key.size() != kSecretKeyBytes) return invalid_argument("a secret key has " + std::to_string(kSecretKeyBytes) + " bytes");
  KILN_ASSIGN_OR_RETURN(const Decoded decoded, decode(file));
  const std::string signed_message = message(decoded);
  std::string block(kSignatureBlockBytes, '\0');
  crypto_sign_detached(reinterpret_cast<unsigned char*>(block.data()), nullptr, bytes(signed_message), signed_message.size(),
                       bytes(secret_key));
  block.replace(kSignatureBytes, kPublicKeyBytes, secret_key.substr(kSecretKeyBytes - kPublicKeyBytes));
  return with_signature_block(file, block);
}

Result<std::string> check_signature(const Decoded& decoded, const std::optional<std::string>& trusted_key, bool required) {
  KILN_RETURN_IF_ERROR(start_sodium());
  if (decoded.signature_block.empty()) {
    if (trusted_key) return integrity_failure("artifact is unsigned but a public key was given to check it against");
    if (required) return integrity_failure("artifact is unsigned and a signature is required");
    return std::string("unsigned");
  }
  const std::string signature = decoded.signature_block.substr(0, kSignatureBytes);
  const std::string signer = decoded.signature_block.substr(kSignatureBytes);
  const std::string signed_message = message(decoded);
  if (crypto_sign_verify_detached(bytes(signature), bytes(signed_message), signed_message.size(), bytes(signer)) != 0)
    return integrity_failure("artifact signature: does not verify (signer " + hex(signer) + ")");
  if (trusted_key && *trusted_key != signer)
    return integrity_failure("artifact signature: signed by " + hex(signer) + ", not by the given public key " + hex(*trusted_key));
  return "signed by " + hex(signer);
}

}  // namespace kiln::artifact
