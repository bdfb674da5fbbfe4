// File reading with streaming SHA-256 (libsodium) and atomic writes (temp file + rename).
#include "kiln/io/file.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace kiln::io {

namespace {

std::string errno_text() { return std::strerror(errno); }

std::string to_hex(crypto_hash_sha256_state& state) {
  unsigned char digest[crypto_hash_sha256_BYTES];
  crypto_hash_sha256_final(&state, digest);
  char hex[2 * crypto_hash_sha256_BYTES + 1];
  sodium_bin2hex(hex, sizeof(hex), digest, sizeof(digest));
  return hex;
}

Status start_hash(crypto_hash_sha256_state& state) {
  if (sodium_init() < 0) return internal_error("libsodium failed to initialise");
  crypto_hash_sha256_init(&state);
  return Status::ok();
}

// Closes a file descriptor when it goes out of scope.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

Status write_all(int fd, const std::string& bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return invalid_argument("cannot write '" + path + "': " + errno_text());
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

}  // namespace

Result<std::string> read_file(const std::string& path, std::string* sha256_hex) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return not_found("file '" + path + "' does not exist");
    return invalid_argument("cannot open '" + path + "': " + errno_text());
  }
  FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return invalid_argument("'" + path + "' is not a regular file");

  crypto_hash_sha256_state state;
  if (sha256_hex) KILN_RETURN_IF_ERROR(start_hash(state));
  std::string bytes;
  bytes.reserve(static_cast<size_t>(st.st_size));
  std::vector<unsigned char> chunk(1 << 20);
  for (;;) {
    ssize_t n = ::read(fd, chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return invalid_argument("cannot read '" + path + "': " + errno_text());
    if (n == 0) break;
    if (sha256_hex) crypto_hash_sha256_update(&state, chunk.data(), static_cast<unsigned long long>(n));
    bytes.append(reinterpret_cast<const char*>(chunk.data()), static_cast<size_t>(n));
  }
  if (sha256_hex) *sha256_hex = to_hex(state);
  return bytes;
}

Result<std::string> sha256_hex(std::string_view bytes) {
  crypto_hash_sha256_state state;
  KILN_RETURN_IF_ERROR(start_hash(state));
  crypto_hash_sha256_update(&state, reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
  return to_hex(state);
}

Status write_file_atomic(const std::string& path, const std::string& bytes, unsigned mode) {
  std::string temp = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(temp.data());
  if (fd < 0) return invalid_argument("cannot create a temporary file beside '" + path + "': " + errno_text());
  Status status = write_all(fd, bytes, temp);
  if (status.is_ok() && ::fsync(fd) != 0) status = invalid_argument("cannot flush '" + temp + "': " + errno_text());
  if (::close(fd) != 0 && status.is_ok()) status = invalid_argument("cannot close '" + temp + "': " + errno_text());
  if (status.is_ok() && ::fchmodat(AT_FDCWD, temp.c_str(), static_cast<mode_t>(mode), 0) != 0)
    status = invalid_argument("cannot set the mode of '" + temp + "': " + errno_text());
  if (status.is_ok() && ::rename(temp.c_str(), path.c_str()) != 0)
    status = invalid_argument("cannot rename '" + temp + "' to '" + path + "': " + errno_text());
  if (!status.is_ok()) ::unlink(temp.c_str());
  return status;
}

std::string parent_folder(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace kiln::io
