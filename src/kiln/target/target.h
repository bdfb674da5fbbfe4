// Target: the machine a session compiles for, made once (detected, or capped at a named ISA level)
// and handed as a value to every stage that makes a machine-dependent choice: the providers (which
// kernels, layouts and algorithms), generated code (instruction set and vector width), an
// artifact's target check, and the report, which only records it. Nothing else reads CPU features.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::target {

// Cache sizes in bytes (0 when the system does not say).
struct CacheSizes {
  int64_t l1d = 0;
  int64_t l2 = 0;
  int64_t l3 = 0;
};

// Which processor this is, from CPUID: vendor ("GenuineIntel", "AuthenticAMD"), family and model
// (the display values, extended fields folded in), stepping, the brand string, and the
// microarchitecture where the table of known ones has it ("" otherwise). Evidence for the report
// only: no choice is made from it (choices come from features and caches).
struct CpuIdentity {
  std::string vendor;
  int family = 0;
  int model = 0;
  int stepping = 0;
  std::string brand;
  std::string microarchitecture;
};

struct Target {
  // The ISA level kernels are built for: one of isa_level_names(), the highest the host reaches
  // when nothing caps it.
  std::string level;
  // Whether `level` was given (a cap simulating a lesser machine) rather than detected.
  bool capped = false;
  // CPU features kernels may use (GCC's names: "avx2", "avx512f", ...): the host's, limited to
  // the level's when capped. Sorted.
  std::vector<std::string> features;
  int vector_bits = 256;  // the widest float vector kernels may use
  CacheSizes caches;
  int cores = 1;          // CPUs this process may run on
  CpuIdentity cpu;

  bool has(const std::string& feature) const;
  // float32 lanes per vector: the channel block of a blocked activation layout that fills one.
  int64_t float_lanes() const { return vector_bits / 32; }
  // 8-bit integer dot products (VNNI) and bfloat16 arithmetic.
  bool int8_dot() const { return has("avx512vnni") || has("avxvnni"); }
  bool bf16() const { return has("avx512bf16"); }
  // "avx512_core (512-bit, avx2 avx512bw ...)" for messages and summaries.
  std::string describe() const;
};

// Level names, lowest first: "avx2", "avx512_core", "avx512_core_vnni", "avx512_core_bf16".
std::vector<std::string> isa_level_names();

// The features a level requires (including the lower levels'), sorted; empty for an unknown name.
std::vector<std::string> level_features(const std::string& level);

// The features this machine has, of those any level names (plus "avxvnni"), sorted.
std::vector<std::string> host_features();

// The microarchitecture of (vendor, family, model), from the table of the ones known ("" otherwise).
std::string microarchitecture_of(const std::string& vendor, int family, int model);

// This machine's target: its highest level, features, caches and cores (detected once).
const Target& host_target();

// The target for `level`: the host's when empty; else the host capped at that level.
// InvalidArgument naming the known levels for an unknown name; UnsupportedTarget naming the
// missing features when this machine lacks the level.
Result<Target> make_target(const std::string& level);
// The same on a machine whose target is `host` (make_target passes host_target()).
Result<Target> capped_target(const Target& host, const std::string& level);

}  // namespace kiln::target
