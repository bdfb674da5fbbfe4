// Whole-file reading (optionally hashing the bytes as they stream in), whole-file mapping and
// atomic file writing: the only places Kiln touches files byte by byte.
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

// The first `count` bytes of `path` (all of it when shorter): what a reader sniffs a format from.
// Errors as read_file's.
Result<std::string> read_file_head(const std::string& path, size_t count);

// A file read front to back in chunks, hashing (SHA-256) what it reads when asked: for parsers
// that pull their input (protobuf), so that a large file is never held whole in memory.
class HashingReader {
 public:
  // NotFound when `path` does not exist, InvalidArgument when it cannot be opened or is not a
  // regular file.
  static Result<std::unique_ptr<HashingReader>> open(const std::string& path, bool hash = true);
  ~HashingReader();
  HashingReader(const HashingReader&) = delete;
  HashingReader& operator=(const HashingReader&) = delete;

  size_t size() const;
  // Up to `capacity` next bytes into `buffer`: how many, 0 at the end; InvalidArgument naming the
  // file when reading fails.
  Result<size_t> read(void* buffer, size_t capacity);
  // The lower-case hex SHA-256 of what was read (the whole file once read() returned 0); opened
  // with `hash`.
  Result<std::string> sha256_hex();

 private:
  struct State;
  explicit HashingReader(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// A whole file's bytes: `bytes` stays valid while any copy of `owner` lives (empty for an empty
// file). `owner` may be the start of an aliasing pointer (std::shared_ptr's aliasing constructor)
// for a tensor that views part of the bytes and keeps them alive.
struct FileImage {
  std::shared_ptr<const char> owner;
  std::string_view bytes;
  bool mapped = false;  // the file's pages themselves (map_file_image), not a copy in memory
};

// Reads `path` whole into memory of its own (64-byte aligned; charged to the current memory
// budget, ir/memory_budget.h). Read, not mapped: a file changed or truncated by another process
// after the read cannot reach these bytes (no SIGBUS, and what a load verified is what it runs).
// NotFound when it does not exist, InvalidArgument when it cannot be read or changed size while
// being read, AllocationFailure when its size cannot be allocated.
Result<FileImage> read_file_image(const std::string& path);

// Maps `path` whole, read-only and private (unmapped when the last copy of `owner` goes): the
// bytes are the OS's cached pages of the file, read from disk when first touched, shared with
// every other process that maps or reads it, and not charged to the memory budget (clean pages
// the OS may drop and read again). The price of not copying: truncating the file while it is
// mapped makes a read of the lost pages fault (SIGBUS), and rewriting it in place changes what
// later reads see, so a mapped file must stay as it is while its bytes are in use (as llama.cpp's
// models do). An empty file, or one the OS cannot map, is read instead (read_file_image, `mapped`
// false). Errors as read_file_image's.
Result<FileImage> map_file_image(const std::string& path);

// Lower-case hex SHA-256 of `bytes`.
Result<std::string> sha256_hex(std::string_view bytes);

// Writes `bytes` to `path` through a temporary file in the same folder that is renamed over
// `path` once complete, so a failure never leaves a partial file at `path`. The file gets `mode`
// (0600 for secrets).
Status write_file_atomic(const std::string& path, const std::string& bytes, unsigned mode = 0644);

// The folder part of `path` ("." when it has none).
std::string parent_folder(const std::string& path);

}  // namespace kiln::io
