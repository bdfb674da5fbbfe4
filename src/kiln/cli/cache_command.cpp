// `kiln cache ls|stats|clear`: the on-disk cache of generated kernel objects (codegen/object_cache.h)
// that jit sessions share: its entries, its size against its bound, and emptying it; stats and
// clear cover the tuner's timing cache beside it too (providers/tuning.h).
#include <ctime>
#include <iomanip>
#include <sstream>
#include <iostream>

#include "kiln/cli/cli_common.h"
#include "kiln/cli/commands.h"
#include "kiln/io/object_cache.h"
#include "kiln/providers/tuning.h"

namespace kiln::cli {
namespace {

std::string local_time(int64_t ns) {
  const std::time_t seconds = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  localtime_r(&seconds, &tm);
  std::ostringstream out;
  out << std::put_time(&tm, "%Y-%m-%d %H:%M:%S");
  return out.str();
}

int run_ls(const io::ObjectCache& cache) {
  const std::vector<io::CacheEntry> entries = cache.entries();
  std::cout << "cache folder " << cache.folder() << ": " << entries.size() << " object(s), most recently used first\n";
  for (const io::CacheEntry& e : entries)
    std::cout << "  " << e.key << "  " << std::setw(10) << e.bytes << " bytes  last used " << local_time(e.last_used_ns) << "\n";
  return 0;
}

int run_stats(const io::ObjectCache& cache, const io::ObjectCache& timings) {
  const std::vector<io::CacheEntry> entries = cache.entries();
  int64_t total = 0;
  for (const io::CacheEntry& e : entries) total += e.bytes;
  std::cout << "folder     " << cache.folder() << " ($KILN_CACHE_DIR)\n"
            << "objects    " << entries.size() << "\n"
            << "bytes      " << total << " of " << cache.max_bytes() << " ($KILN_CACHE_MAX_BYTES; least recently used evicted beyond)\n"
            << "timings    " << timings.entries().size() << " (" << timings.total_bytes() << " of " << timings.max_bytes()
            << " bytes) in " << timings.folder() << "\n";
  return 0;
}

int run_clear(const io::ObjectCache& cache, const io::ObjectCache& timings) {
  const Result<int64_t> removed = cache.clear();
  if (!removed.is_ok()) return report_error(removed.status());
  const Result<int64_t> forgotten = timings.clear();
  if (!forgotten.is_ok()) return report_error(forgotten.status());
  std::cout << "removed " << removed.value() << " object(s) from " << cache.folder() << " and " << forgotten.value()
            << " timing(s) from " << timings.folder() << "\n";
  return 0;
}

}  // namespace

void add_cache_command(CLI::App& app, std::function<void(int)> set_exit) {
  CLI::App* cache = app.add_subcommand("cache", "The cache of generated kernel objects jit sessions share");
  cache->require_subcommand(1);
  cache->add_subcommand("ls", "List the cached objects")->callback([set_exit] {
    set_exit(run_ls(io::ObjectCache::from_environment()));
  });
  cache->add_subcommand("stats", "The cache's folder, object count and size against its bound")->callback([set_exit] {
    set_exit(run_stats(io::ObjectCache::from_environment(), providers::Tuner::timing_cache()));
  });
  cache->add_subcommand("clear", "Remove every cached object and kernel timing")->callback([set_exit] {
    set_exit(run_clear(io::ObjectCache::from_environment(), providers::Tuner::timing_cache()));
  });
}

}  // namespace kiln::cli
