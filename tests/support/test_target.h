// The target the machine-dependent tests compile for: this machine's, or the level named by
// KILN_TEST_ISA (tests/CMakeLists.txt registers those tests again with KILN_TEST_ISA=avx2 and
// oneDNN capped the same way, so that an AVX-512 machine proves the AVX2 path too).
#pragma once

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "kiln/target/target.h"

namespace kiln::testing {

inline std::string test_isa() {
  const char* isa = std::getenv("KILN_TEST_ISA");
  return isa ? isa : "";
}

inline const target::Target& test_target() {
  static const target::Target target = [] {
    Result<target::Target> made = target::make_target(test_isa());
    if (!made.is_ok()) throw std::runtime_error("KILN_TEST_ISA: " + made.status().to_string());
    return made.value();
  }();
  return target;
}

}  // namespace kiln::testing
