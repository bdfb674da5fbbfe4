// Whole-file reading (optionally hashing the bytes as they stream in) and atomic file writing:
// the only places Kiln touches files byte by byte.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "kiln/status.h"

namespace kiln::io {

// The bytes of `path`. NotFound when it does not exist, InvalidArgument when it cannot be read.
// When `sha256_hex` is given, it receives the lower-case hex SHA-256 of the bytes, computed
// chunk by chunk while reading.
Result<std::string> read_file(const std::string& path, std::string* sha256_hex = nullptr);

// A file mapped read-only into memory (pages are read in when first touched: an artifact's load
// touches them all while hashing, on every core); `bytes` stays valid while any copy of `owner`
// lives (empty for an empty file). A file truncated by another process while mapped faults on
// access (SIGBUS); writers replace files atomically (write_file_atomic) instead.
struct MappedFile {
  std::shared_ptr<const char> owner;
  std::string_view bytes;
};

// Maps `path`. NotFound when it does not exist, InvalidArgument when it cannot be mapped.
Result<MappedFile> map_file(const std::string& path);

// Lower-case hex SHA-256 of `bytes`.
Result<std::string> sha256_hex(std::string_view bytes);

// Writes `bytes` to `path` through a temporary file in the same folder that is renamed over
// `path` once complete, so a failure never leaves a partial file at `path`. The file gets `mode`
// (0600 for secrets).
Status write_file_atomic(const std::string& path, const std::string& bytes, unsigned mode = 0644);

// The folder part of `path` ("." when it has none).
std::string parent_folder(const std::string& path);

}  // namespace kiln::io
