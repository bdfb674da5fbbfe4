// The report's sections a load records before it compiles: the session's options and the target.
#include "kiln/report/report.h"

namespace kiln::report {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : ",") + i;
  return s;
}

}  // namespace

std::map<std::string, std::string> options_section(const SessionOptions& options) {
  return {{"threads", std::to_string(options.threads)},
          {"providers", join(options.providers)},
          {"allow_fallback", join(options.allow_fallback)},
          {"optimize", options.optimize ? "true" : "false"},
          {"disabled_passes", join(options.disabled_passes)},
          {"specialize", options.specialize ? "true" : "false"},
          {"isa", options.isa},
          {"mode", execution_mode_name(options.mode)},
          {"max_variants", std::to_string(options.max_variants)},
          {"tune", options.tune ? "true" : "false"},
          {"precision", options.precision},
          {"keep_fp32", join(options.keep_fp32)},
          {"accuracy_budget", options.accuracy_budget},
          {"on_budget", options.on_budget}};
}

TargetSection target_section(const target::Target& target, const std::string& isa) {
  TargetSection t;
  t.isa = isa;
  t.level = target.level;
  t.cpu_features = target.features;
  t.vector_bits = target.vector_bits;
  t.cores = target.cores;
  t.cache_bytes = {target.caches.l1d, target.caches.l2, target.caches.l3};
  t.cpu_vendor = target.cpu.vendor;
  t.cpu_family = target.cpu.family;
  t.cpu_model = target.cpu.model;
  t.cpu_stepping = target.cpu.stepping;
  t.cpu_brand = target.cpu.brand;
  t.cpu_microarchitecture = target.cpu.microarchitecture;
  return t;
}

}  // namespace kiln::report
