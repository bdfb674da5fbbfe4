// The target machine: detection and ISA-level caps (see target.h).
#include "kiln/target/target.h"

#include <cpuid.h>
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

// The host's target: its highest level, with every feature it has.
Target host_at(const Level& level, const std::vector<std::string>& features) {
  Target t;
  t.level = level.name;
  t.vector_bits = level.vector_bits;
  t.features = features;
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

namespace {
// AVX-VNNI (CPUID leaf 7, subleaf 1, EAX bit 4): clang 14's __builtin_cpu_supports has no name for it.
bool host_has_avx_vnni() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax & (1u << 4)) != 0;
}
}  // namespace

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
      {"avxvnni", host_has_avx_vnni()}};
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
    return host_at(*best, features);
  }();
  return host;
}

Result<Target> make_target(const std::string& level) { return capped_target(host_target(), level); }

Result<Target> capped_target(const Target& host, const std::string& level) {
  if (level.empty()) return host;
  const Level* cap = level_named(level);
  if (!cap) {
    std::string known;
    for (const std::string& n : isa_level_names()) known += (known.empty() ? "" : ", ") + n;
    return invalid_argument("unknown ISA level '" + level + "' (known: " + known + ")");
  }
  std::vector<std::string> missing;
  std::set_difference(cap->features.begin(), cap->features.end(), host.features.begin(), host.features.end(),
                      std::back_inserter(missing));
  if (!missing.empty()) {
    std::string names;
    for (const std::string& f : missing) names += (names.empty() ? "" : ", ") + f;
    return unsupported_target("ISA level '" + level + "' needs CPU features this machine lacks: " + names +
                              " (this machine: " + host.level + ")");
  }
  Target capped = host;
  capped.level = cap->name;
  capped.capped = true;
  capped.vector_bits = cap->vector_bits;
  capped.features.clear();
  std::set_intersection(host.features.begin(), host.features.end(), cap->features.begin(), cap->features.end(),
                        std::back_inserter(capped.features));
  return capped;
}

}  // namespace kiln::target
