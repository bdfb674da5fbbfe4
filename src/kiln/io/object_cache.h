// The on-disk cache of compiled objects (generated kernels, and the tuner's timings), shared by
// every Kiln process of a user: content-addressed by a SHA-256 key of everything that decides the
// object's bytes (source, compiler identity, flags, target features, Kiln version). Each entry is
// KEY.so with KEY.sha256,
// the digest of its bytes, checked before every use: a truncated or altered entry is removed and
// reported as corrupted, so the caller rebuilds it. The folder is bounded in bytes: least recently
// used entries (by modification time, refreshed on each hit) are evicted after an insert. Inserts
// and checks hold a lock on the folder (flock), and objects are renamed into place whole, so two
// processes writing the same entry never leave a mixed one. The same cache keeps other entries
// in a folder of their own (the tuner's timings, providers/tuning.h) under another extension.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::io {

struct CacheEntry {
  std::string key;
  int64_t bytes = 0;
  int64_t last_used_ns = 0;  // since the Unix epoch
};

class ObjectCache {
 public:
  // The folder: $KILN_CACHE_DIR, else $XDG_CACHE_HOME/kiln, else $HOME/.cache/kiln. The bound:
  // $KILN_CACHE_MAX_BYTES, else kDefaultMaxBytes.
  static ObjectCache from_environment();
  static constexpr int64_t kDefaultMaxBytes = int64_t{512} << 20;

  ObjectCache(std::string folder, int64_t max_bytes, std::string extension = ".so")
      : folder_(std::move(folder)), max_bytes_(max_bytes), extension_(std::move(extension)) {}

  const std::string& folder() const { return folder_; }
  int64_t max_bytes() const { return max_bytes_; }

  // The path of a valid entry for `key`, refreshed as recently used; nullopt when there is none.
  // `corrupted` (when given) is set when an entry existed but failed its check and was removed.
  std::optional<std::string> find(const std::string& key, bool* corrupted = nullptr) const;
  // Moves the compiled object at `object_path` into the cache as `key` and evicts down to the
  // bound; the entry's path. InvalidArgument naming the folder when it cannot be written.
  Result<std::string> insert(const std::string& key, const std::string& object_path) const;
  // The same for bytes in memory.
  Result<std::string> insert_bytes(const std::string& key, const std::string& bytes) const;

  std::vector<CacheEntry> entries() const;  // most recently used first
  int64_t total_bytes() const;
  // Removes every entry; how many.
  Result<int64_t> clear() const;

 private:
  std::string path_of(const std::string& key, const char* extension) const;
  void evict(const std::string& keep) const;

  std::string folder_;
  int64_t max_bytes_;
  std::string extension_;  // of the entries' bytes (".so")
};

}  // namespace kiln::io
