// The target machine: detection and ISA-level caps (see target.h).
#include "kiln/target/target.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>

namespace kiln::target {
namespace {

struct Level {
  std::string name;
  std::vector<std::string> features;  // including the lower levels', sorted
  int vector_bits;
};

// Each level with the features oneDNN requires of it (its cpu_isa_traits), lowest first.
const std::vector<Level>& levels() {
  static const std::vector<Level> all = [] {
    std::vector<std::string> features = {"avx", "avx2", "fma"};
    std::vector<Level> l;
    l.push_back({"avx2", features, 256});
    for (const char* f : {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}) features.push_back(f);
    l.push_back({"avx512_core", features, 512});
    features.push_back("avx512vnni");
    l.push_back({"avx512_core_vnni", features, 512});
    features.push_back("avx512bf16");
    l.push_back({"avx512_core_bf16", features, 512});
    for (Level& level : l) std::sort(level.features.begin(), level.features.end());
    return l;
  }();
  return all;
}

const Level* level_named(const std::string& name) {
  for (const Level& level : levels())
    if (level.name == name) return &level;
  return nullptr;
}

bool contains_all(const std::vector<std::string>& have, const std::vector<std::string>& need) {
  return std::includes(have.begin(), have.end(), need.begin(), need.end());
}

int64_t cache_bytes(int name) {
  const long bytes = sysconf(name);
  return bytes > 0 ? bytes : 0;
}

int available_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  return online > 0 ? static_cast<int>(online) : 1;
}

// `level`'s target on a machine with `host` features.
Target at_level(const Level& level, const std::vector<std::string>& host, bool capped) {
  Target t;
  t.level = level.name;
  t.capped = capped;
  t.vector_bits = level.vector_bits;
  if (capped) {
    std::set_intersection(host.begin(), host.end(), level.features.begin(), level.features.end(),
                          std::back_inserter(t.features));
  } else {
    t.features = host;
  }
  t.caches = {cache_bytes(_SC_LEVEL1_DCACHE_SIZE), cache_bytes(_SC_LEVEL2_CACHE_SIZE), cache_bytes(_SC_LEVEL3_CACHE_SIZE)};
  t.cores = available_cores();
  return t;
}

}  // namespace

bool Target::has(const std::string& feature) const { return std::binary_search(features.begin(), features.end(), feature); }

std::string Target::describe() const {
  std::string s = level + " (" + std::to_string(vector_bits) + "-bit" + (capped ? ", capped" : "") + ":";
  for (const std::string& f : features) s += " " + f;
  return s + ")";
}

std::vector<std::string> isa_level_names() {
  std::vector<std::string> names;
  for (const Level& level : levels()) names.push_back(level.name);
  return names;
}

std::vector<std::string> level_features(const std::string& level) {
  const Level* l = level_named(level);
  return l ? l->features : std::vector<std::string>{};
}

std::vector<std::string> host_features() {
  __builtin_cpu_init();
  // __builtin_cpu_supports needs literal names, hence one test per feature.
  const std::pair<const char*, bool> known[] = {
      {"avx", __builtin_cpu_supports("avx")},
      {"avx2", __builtin_cpu_supports("avx2")},
      {"fma", __builtin_cpu_supports("fma")},
      {"avx512f", __builtin_cpu_supports("avx512f")},
      {"avx512cd", __builtin_cpu_supports("avx512cd")},
      {"avx512bw", __builtin_cpu_supports("avx512bw")},
      {"avx512dq", __builtin_cpu_supports("avx512dq")},
      {"avx512vl", __builtin_cpu_supports("avx512vl")},
      {"avx512vnni", __builtin_cpu_supports("avx512vnni")},
      {"avx512bf16", __builtin_cpu_supports("avx512bf16")},
      {"avxvnni", __builtin_cpu_supports("avxvnni")}};
  std::vector<std::string> features;
  for (const auto& [name, present] : known)
    if (present) features.push_back(name);
  std::sort(features.begin(), features.end());
  return features;
}

const Target& host_target() {
  static const Target host = [] {
    const std::vector<std::string> features = host_features();
    const Level* best = &levels().front();  // Kiln's build needs AVX2: no machine runs it below
    for (const Level& level : levels())
      if (contains_all(features, level.features)) best = &level;
    return at_level(*best, features, false);
  }();
  return host;
}

Result<Target> make_target(const std::string& level) {
  if (level.empty()) return host_target();
  const Level* cap = level_named(level);
  if (!cap) {
    std::string known;
    for (const std::string& n : isa_level_names()) known += (known.empty() ? "" : ", ") + n;
    return invalid_argument("unknown ISA level '" + level + "' (known: " + known + ")");
  }
  const std::vector<std::string>& host = host_target().features;
  std::vector<std::string> missing;
  std::set_difference(cap->features.begin(), cap->features.end(), host.begin(), host.end(), std::back_inserter(missing));
  if (!missing.empty()) {
    std::string names;
    for (const std::string& f : missing) names += (names.empty() ? "" : ", ") + f;
    return unsupported_target("ISA level '" + level + "' needs CPU features this machine lacks: " + names +
                              " (this machine: " + host_target().level + ")");
  }
  return at_level(*cap, host, true);
}

}  // namespace kiln::target
