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

// Known microarchitectures by vendor, family and model range (display values). Machines Kiln has
// run on are among them; an unknown model leaves the name empty, its numbers still reported.
struct KnownCpu {
  const char* vendor;
  int family, first_model, last_model;
  const char* name;
};
constexpr KnownCpu kKnownCpus[] = {
    {"GenuineIntel", 6, 0x55, 0x55, "Skylake-SP / Cascade Lake"},
    {"GenuineIntel", 6, 0x6a, 0x6c, "Ice Lake-SP"},
    {"GenuineIntel", 6, 0x8f, 0x8f, "Sapphire Rapids"},
    {"GenuineIntel", 6, 0xcf, 0xcf, "Emerald Rapids"},
    {"GenuineIntel", 6, 0xad, 0xae, "Granite Rapids"},
    {"GenuineIntel", 6, 0x97, 0x9a, "Alder Lake"},
    {"GenuineIntel", 6, 0xb7, 0xbf, "Raptor Lake"},
    {"AuthenticAMD", 0x17, 0x00, 0x2f, "Zen / Zen+"},
    {"AuthenticAMD", 0x17, 0x30, 0xff, "Zen 2"},
    {"AuthenticAMD", 0x19, 0x00, 0x0f, "Zen 3"},
    {"AuthenticAMD", 0x19, 0x10, 0x1f, "Zen 4"},
    {"AuthenticAMD", 0x19, 0x20, 0x5f, "Zen 3"},
    {"AuthenticAMD", 0x19, 0x60, 0xaf, "Zen 4"},
    {"AuthenticAMD", 0x1a, 0x00, 0xff, "Zen 5"},
};

CpuIdentity host_cpu() {
  CpuIdentity cpu;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(0, &eax, &ebx, &ecx, &edx)) return cpu;
  char vendor[13] = {};
  for (int i = 0; i < 4; ++i) {
    vendor[i] = static_cast<char>(ebx >> (8 * i));
    vendor[4 + i] = static_cast<char>(edx >> (8 * i));
    vendor[8 + i] = static_cast<char>(ecx >> (8 * i));
  }
  cpu.vendor = vendor;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx)) {
    const int base_family = static_cast<int>((eax >> 8) & 0xf), base_model = static_cast<int>((eax >> 4) & 0xf);
    cpu.stepping = static_cast<int>(eax & 0xf);
    cpu.family = base_family == 0xf ? base_family + static_cast<int>((eax >> 20) & 0xff) : base_family;
    cpu.model = base_family == 0x6 || base_family == 0xf ? (static_cast<int>((eax >> 16) & 0xf) << 4) + base_model : base_model;
  }
  if (__get_cpuid(0x80000000, &eax, &ebx, &ecx, &edx) && eax >= 0x80000004) {
    unsigned words[12];
    for (unsigned leaf = 0; leaf < 3; ++leaf)
      __get_cpuid(0x80000002 + leaf, &words[4 * leaf], &words[4 * leaf + 1], &words[4 * leaf + 2], &words[4 * leaf + 3]);
    std::string brand(reinterpret_cast<const char*>(words), sizeof(words));
    brand = brand.substr(0, brand.find('\0'));
    const size_t first = brand.find_first_not_of(' '), last = brand.find_last_not_of(' ');
    cpu.brand = first == std::string::npos ? "" : brand.substr(first, last - first + 1);
  }
  cpu.microarchitecture = microarchitecture_of(cpu.vendor, cpu.family, cpu.model);
  return cpu;
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
  t.cpu = host_cpu();
  return t;
}

}  // namespace

std::string microarchitecture_of(const std::string& vendor, int family, int model) {
  for (const KnownCpu& known : kKnownCpus)
    if (vendor == known.vendor && family == known.family && model >= known.first_model && model <= known.last_model) return known.name;
  return "";
}

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
      {"avx512vbmi", __builtin_cpu_supports("avx512vbmi")},
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
