// Object cache: entries, their digests, the folder lock and LRU eviction.
#include "kiln/io/object_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "kiln/io/file.h"

namespace kiln::io {
namespace {

namespace fs = std::filesystem;

// An flock on the folder's lock file for the scope (none when the file cannot be opened: a
// read-only folder still serves lookups).
class FolderLock {
 public:
  FolderLock(const std::string& folder, bool exclusive) {
    fd_ = open((folder + "/.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) fd_ = open((folder + "/.lock").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ >= 0)
      while (flock(fd_, exclusive ? LOCK_EX : LOCK_SH) != 0 && errno == EINTR) {
      }
  }
  ~FolderLock() {
    if (fd_ >= 0) close(fd_);  // releases the lock
  }
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  int fd_ = -1;
};

bool is_key(const std::string& name) {
  return name.size() == 64 && std::all_of(name.begin(), name.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

ObjectCache ObjectCache::from_environment() {
  std::string folder;
  if (const char* dir = std::getenv("KILN_CACHE_DIR"); dir && *dir) {
    folder = dir;
  } else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) {
    folder = std::string(xdg) + "/kiln";
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    folder = std::string(home) + "/.cache/kiln";
  } else {
    folder = (fs::temp_directory_path() / ("kiln-cache-" + std::to_string(getuid()))).string();
  }
  int64_t max_bytes = kDefaultMaxBytes;
  if (const char* bound = std::getenv("KILN_CACHE_MAX_BYTES"); bound && *bound) {
    char* end = nullptr;
    const long long parsed = std::strtoll(bound, &end, 10);
    if (end && *end == '\0' && parsed > 0) max_bytes = parsed;
  }
  return ObjectCache(folder, max_bytes);
}

std::string ObjectCache::path_of(const std::string& key, const char* extension) const { return folder_ + "/" + key + extension; }

std::optional<std::string> ObjectCache::find(const std::string& key, bool* corrupted) const {
  if (corrupted) *corrupted = false;
  const std::string object = path_of(key, extension_.c_str()), digest = path_of(key, ".sha256");
  std::error_code ec;
  if (!fs::exists(object, ec) && !fs::exists(digest, ec)) return std::nullopt;
  FolderLock lock(folder_, true);
  std::string actual;
  const Result<std::string> bytes = io::read_file(object, &actual);
  const Result<std::string> expected = io::read_file(digest);
  if (bytes.is_ok() && expected.is_ok() && *expected == actual && !bytes->empty()) {
    utimensat(AT_FDCWD, object.c_str(), nullptr, 0);  // most recently used (fails harmlessly when read-only)
    return object;
  }
  if (corrupted) *corrupted = true;
  fs::remove(object, ec);
  fs::remove(digest, ec);
  return std::nullopt;
}

Result<std::string> ObjectCache::insert(const std::string& key, const std::string& object_path) const {
  KILN_ASSIGN_OR_RETURN(const std::string bytes, io::read_file(object_path));
  return insert_bytes(key, bytes);
}

Result<std::string> ObjectCache::insert_bytes(const std::string& key, const std::string& bytes) const {
  std::error_code ec;
  fs::create_directories(folder_, ec);
  KILN_ASSIGN_OR_RETURN(const std::string digest, io::sha256_hex(bytes));
  FolderLock lock(folder_, true);
  const std::string object = path_of(key, extension_.c_str());
  const Status written = io::write_file_atomic(object, bytes, 0755);
  if (!written.is_ok()) return invalid_argument("the kernel cache folder " + folder_ + " cannot be written: " + written.message());
  const Status digest_written = io::write_file_atomic(path_of(key, ".sha256"), digest);
  if (!digest_written.is_ok()) {
    fs::remove(object, ec);
    return invalid_argument("the kernel cache folder " + folder_ + " cannot be written: " + digest_written.message());
  }
  evict(key);
  return object;
}

std::vector<CacheEntry> ObjectCache::entries() const {
  std::vector<CacheEntry> found;
  std::error_code ec;
  for (const auto& item : fs::directory_iterator(folder_, ec)) {
    const fs::path p = item.path();
    if (p.extension() != extension_ || !is_key(p.stem().string())) continue;
    struct stat st {};
    if (stat(p.c_str(), &st) != 0) continue;
    found.push_back({p.stem().string(), static_cast<int64_t>(st.st_size), static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec});
  }
  std::sort(found.begin(), found.end(), [](const CacheEntry& a, const CacheEntry& b) {
    return a.last_used_ns != b.last_used_ns ? a.last_used_ns > b.last_used_ns : a.key < b.key;
  });
  return found;
}

int64_t ObjectCache::total_bytes() const {
  int64_t total = 0;
  for (const CacheEntry& e : entries()) total += e.bytes;
  return total;
}

void ObjectCache::evict(const std::string& keep) const {
  std::vector<CacheEntry> all = entries();
  int64_t total = 0;
  for (const CacheEntry& e : all) total += e.bytes;
  std::error_code ec;
  for (auto it = all.rbegin(); it != all.rend() && total > max_bytes_; ++it) {
    if (it->key == keep) continue;
    fs::remove(path_of(it->key, extension_.c_str()), ec);
    fs::remove(path_of(it->key, ".sha256"), ec);
    total -= it->bytes;
  }
}

Result<int64_t> ObjectCache::clear() const {
  std::error_code ec;
  if (!fs::exists(folder_, ec)) return int64_t{0};
  FolderLock lock(folder_, true);
  int64_t removed = 0;
  for (const CacheEntry& e : entries()) {
    if (!fs::remove(path_of(e.key, extension_.c_str()), ec) || ec)
      return invalid_argument("cannot remove " + path_of(e.key, extension_.c_str()) + ": " + ec.message());
    fs::remove(path_of(e.key, ".sha256"), ec);
    ++removed;
  }
  return removed;
}

}  // namespace kiln::io
