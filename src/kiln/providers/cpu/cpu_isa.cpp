// CPU features and oneDNN ISA levels (see cpu_isa.h).
#include "kiln/providers/cpu/cpu_isa.h"

#include <dnnl.hpp>

#include <algorithm>

namespace kiln::providers::cpu {
namespace {

struct IsaLevel {
  std::string name;
  dnnl::cpu_isa isa;
  std::vector<std::string> features;  // including the lower levels'
};

// Each level with the features oneDNN requires of it (oneDNN's cpu_isa_traits).
const std::vector<IsaLevel>& levels() {
  static const std::vector<IsaLevel> all = [] {
    std::vector<std::string> features = {"avx", "avx2", "fma"};
    std::vector<IsaLevel> l;
    l.push_back({"avx2", dnnl::cpu_isa::avx2, features});
    for (const char* f : {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}) features.push_back(f);
    l.push_back({"avx512_core", dnnl::cpu_isa::avx512_core, features});
    features.push_back("avx512vnni");
    l.push_back({"avx512_core_vnni", dnnl::cpu_isa::avx512_core_vnni, features});
    features.push_back("avx512bf16");
    l.push_back({"avx512_core_bf16", dnnl::cpu_isa::avx512_core_bf16, features});
    for (IsaLevel& level : l) std::sort(level.features.begin(), level.features.end());
    return l;
  }();
  return all;
}

const IsaLevel* level_named(const std::string& name) {
  for (const IsaLevel& level : levels())
    if (level.name == name) return &level;
  return nullptr;
}

Status unknown_level(const std::string& name) {
  std::string known;
  for (const std::string& n : isa_level_names()) known += (known.empty() ? "" : ", ") + n;
  return invalid_argument("unknown ISA level '" + name + "' (known: " + known + ")");
}

}  // namespace

std::vector<std::string> isa_level_names() {
  std::vector<std::string> names;
  for (const IsaLevel& level : levels()) names.push_back(level.name);
  return names;
}

std::vector<std::string> host_features() {
  __builtin_cpu_init();
  // __builtin_cpu_supports needs literal names, hence one test per feature.
  const std::pair<const char*, bool> known[] = {
      {"avx", __builtin_cpu_supports("avx")},           {"avx2", __builtin_cpu_supports("avx2")},
      {"fma", __builtin_cpu_supports("fma")},           {"avx512f", __builtin_cpu_supports("avx512f")},
      {"avx512cd", __builtin_cpu_supports("avx512cd")}, {"avx512bw", __builtin_cpu_supports("avx512bw")},
      {"avx512dq", __builtin_cpu_supports("avx512dq")}, {"avx512vl", __builtin_cpu_supports("avx512vl")},
      {"avx512vnni", __builtin_cpu_supports("avx512vnni")}, {"avx512bf16", __builtin_cpu_supports("avx512bf16")}};
  std::vector<std::string> features;
  for (const auto& [name, present] : known)
    if (present) features.push_back(name);
  std::sort(features.begin(), features.end());
  return features;
}

Result<std::vector<std::string>> target_features(const std::string& level) {
  std::vector<std::string> features = host_features();
  if (level.empty()) return features;
  const IsaLevel* cap = level_named(level);
  if (!cap) return unknown_level(level);
  std::vector<std::string> capped;
  std::set_intersection(features.begin(), features.end(), cap->features.begin(), cap->features.end(),
                        std::back_inserter(capped));
  return capped;
}

Status cap_isa(const std::string& level) {
  if (level.empty()) return Status::ok();
  const IsaLevel* cap = level_named(level);
  if (!cap) return unknown_level(level);
  if (dnnl::set_max_cpu_isa(cap->isa) == dnnl::status::success) return Status::ok();
  // oneDNN fixes its level at its first kernel; a cap it already honours is no error.
  const auto effective = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  if ((effective & static_cast<unsigned>(cap->isa)) == effective) return Status::ok();
  return invalid_argument("the ISA can be capped at '" + level +
                          "' only before this process builds its first kernel at a higher level");
}

std::vector<std::string> implementation_features(const std::string& impl) {
  const size_t colon = impl.rfind(':');
  const IsaLevel* level = level_named(colon == std::string::npos ? impl : impl.substr(colon + 1));
  return level ? level->features : std::vector<std::string>{};
}

}  // namespace kiln::providers::cpu
