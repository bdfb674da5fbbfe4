// Tests of the on-disk object cache: the byte bound with least-recently-used eviction, and
// processes inserting one entry at once.
#include "kiln/io/object_cache.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "support/model_builder.h"

namespace kiln::io {
namespace {

using kiln::testing::ScratchDir;

// A cache entry of `bytes` bytes under `key` (a fake object: the cache only moves and hashes it).
void insert_fake(const ObjectCache& cache, const std::string& key, size_t bytes, const ScratchDir& dir) {
  const std::string path = dir.file("object.so");
  std::ofstream(path, std::ios::binary) << std::string(bytes, 'k');
  ASSERT_TRUE(cache.insert(key, path).is_ok());
}

std::string key(char c) { return std::string(64, c); }

TEST(ObjectCache, EvictsLeastRecentlyUsedEntriesDownToItsBound) {
  ScratchDir dir("object_cache");
  const ObjectCache cache(dir.file("cache"), 2500);
  insert_fake(cache, key('a'), 1000, dir);
  insert_fake(cache, key('b'), 1000, dir);
  ASSERT_TRUE(cache.find(key('a')));  // a is now more recent than b
  insert_fake(cache, key('c'), 1000, dir);
  EXPECT_TRUE(cache.find(key('a')));
  EXPECT_FALSE(cache.find(key('b')));
  EXPECT_TRUE(cache.find(key('c')));
  EXPECT_LE(cache.total_bytes(), 2500);
  ASSERT_TRUE(cache.clear().is_ok());
  EXPECT_TRUE(cache.entries().empty());
}

TEST(ObjectCache, ProcessesInsertingTheSameEntryLeaveAValidOne) {
  ScratchDir dir("object_cache");
  const ObjectCache cache(dir.file("cache"), ObjectCache::kDefaultMaxBytes);
  // Each child inserts its own bytes under one key, many times, racing the others.
  std::vector<pid_t> children;
  for (int child = 0; child < 4; ++child) {
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const std::string path = dir.file("object" + std::to_string(child) + ".so");
      { std::ofstream(path, std::ios::binary) << std::string(static_cast<size_t>(100000 + child * 7919), static_cast<char>('a' + child)); }
      bool ok = true;
      for (int i = 0; i < 40 && ok; ++i) ok = cache.insert(key('e'), path).is_ok();
      _exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  bool corrupted = true;
  EXPECT_TRUE(cache.find(key('e'), &corrupted));
  EXPECT_FALSE(corrupted);
  EXPECT_EQ(cache.entries().size(), 1u);
}

}  // namespace
}  // namespace kiln::io
