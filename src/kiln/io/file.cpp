// File reading with streaming SHA-256 (OpenSSL's, which uses the CPU's SHA instructions: about 4x
// libsodium's portable one here), read-only mappings (mmap) and atomic writes (temp file + rename).
#include "kiln/io/file.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "kiln/ir/buffer.h"

namespace kiln::io {

namespace {

std::string errno_text() { return std::strerror(errno); }

// A streaming SHA-256.
class Sha256 {
 public:
  Sha256() : ctx_(EVP_MD_CTX_new()) { ok_ = ctx_ && EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr) == 1; }
  ~Sha256() { EVP_MD_CTX_free(ctx_); }
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  Status status() const { return ok_ ? Status::ok() : internal_error("OpenSSL's SHA-256 failed to start"); }
  void update(const void* data, size_t bytes) { ok_ = ok_ && EVP_DigestUpdate(ctx_, data, bytes) == 1; }
  Result<std::string> hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    ok_ = ok_ && EVP_DigestFinal_ex(ctx_, digest, &length) == 1;
    KILN_RETURN_IF_ERROR(status());
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < length; ++i) {
      out += digits[digest[i] >> 4];
      out += digits[digest[i] & 15];
    }
    return out;
  }

 private:
  EVP_MD_CTX* ctx_;
  bool ok_ = false;
};

// Closes a file descriptor when it goes out of scope.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

// `path` opened for reading, with its size. NotFound when it does not exist, InvalidArgument when
// it cannot be opened or is not a regular file.
Result<size_t> open_regular_file(const std::string& path, FdCloser& file) {
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) {
    if (errno == ENOENT) return not_found("file '" + path + "' does not exist");
    return invalid_argument("cannot open '" + path + "': " + errno_text());
  }
  struct stat st {};
  if (::fstat(file.fd, &st) != 0 || !S_ISREG(st.st_mode)) return invalid_argument("'" + path + "' is not a regular file");
  return static_cast<size_t>(st.st_size);
}

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

struct HashingReader::State {
  std::string path;
  FdCloser file{-1};
  size_t size = 0;
  bool hashing = true;
  Sha256 hash;
};

HashingReader::HashingReader(std::unique_ptr<State> state) : state_(std::move(state)) {}
HashingReader::~HashingReader() = default;

Result<std::unique_ptr<HashingReader>> HashingReader::open(const std::string& path, bool hash) {
  auto state = std::make_unique<State>();
  state->path = path;
  state->hashing = hash;
  KILN_ASSIGN_OR_RETURN(state->size, open_regular_file(path, state->file));
  KILN_RETURN_IF_ERROR(state->hash.status());
  return std::unique_ptr<HashingReader>(new HashingReader(std::move(state)));
}

size_t HashingReader::size() const { return state_->size; }

Result<size_t> HashingReader::read(void* buffer, size_t capacity) {
  for (;;) {
    const ssize_t n = ::read(state_->file.fd, buffer, capacity);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return invalid_argument("cannot read '" + state_->path + "': " + errno_text());
    if (state_->hashing) state_->hash.update(buffer, static_cast<size_t>(n));
    return static_cast<size_t>(n);
  }
}

Result<std::string> HashingReader::sha256_hex() { return state_->hash.hex(); }

Result<std::string> read_file(const std::string& path, std::string* sha256_hex) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<HashingReader> reader, HashingReader::open(path, sha256_hex != nullptr));
  std::string bytes;
  bytes.reserve(reader->size());
  std::vector<char> chunk(1 << 20);
  for (;;) {
    KILN_ASSIGN_OR_RETURN(const size_t n, reader->read(chunk.data(), chunk.size()));
    if (n == 0) break;
    bytes.append(chunk.data(), n);
  }
  if (sha256_hex) {
    KILN_ASSIGN_OR_RETURN(*sha256_hex, reader->sha256_hex());
  }
  return bytes;
}

Result<std::string> read_file_head(const std::string& path, size_t count) {
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<HashingReader> reader, HashingReader::open(path, false));
  std::string head(count, '\0');
  size_t done = 0;
  while (done < count) {
    KILN_ASSIGN_OR_RETURN(const size_t n, reader->read(head.data() + done, count - done));
    if (n == 0) break;
    done += n;
  }
  head.resize(done);
  return head;
}

Result<FileImage> read_file_image(const std::string& path) {
  FdCloser file{-1};
  KILN_ASSIGN_OR_RETURN(const size_t size, open_regular_file(path, file));
  if (size == 0) return FileImage{};
  std::shared_ptr<void> storage = allocate_buffer(size, Paging::kBasePages);
  if (!storage) return allocation_failure("cannot allocate " + std::to_string(size) + " bytes to read '" + path + "'");
  char* data = static_cast<char*>(storage.get());
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(file.fd, data + done, std::min<size_t>(size - done, size_t{1} << 30), static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return invalid_argument("cannot read '" + path + "': " + errno_text());
    if (n == 0)
      return invalid_argument("'" + path + "' shrank while being read (" + std::to_string(size) + " bytes when opened, " +
                              std::to_string(done) + " read)");
    done += static_cast<size_t>(n);
  }
  std::shared_ptr<const char> owner(storage, data);
  return FileImage{owner, std::string_view(data, size)};
}

Result<FileImage> map_file_image(const std::string& path) {
  FdCloser file{-1};
  KILN_ASSIGN_OR_RETURN(const size_t size, open_regular_file(path, file));
  if (size == 0) return FileImage{};
  void* base = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd, 0);
  if (base == MAP_FAILED) return read_file_image(path);
  // The mapping outlives the descriptor: it is undone when the last copy of the owner goes.
  std::shared_ptr<const char> owner(static_cast<const char*>(base), [size](const char* p) { ::munmap(const_cast<char*>(p), size); });
  return FileImage{owner, std::string_view(owner.get(), size), true};
}

Result<std::string> sha256_hex(std::string_view bytes) {
  Sha256 hash;
  hash.update(bytes.data(), bytes.size());
  return hash.hex();
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
