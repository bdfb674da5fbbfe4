// The unit tests' environment, set before any test runs. CTest gives a discovered test only its
// first environment variable (gtest_discover_tests splits a list), so the avx2.* tests set one,
// KILN_TEST_ISA, and the cap on oneDNN follows from it here (ONEDNN_MAX_CPU_ISA, which oneDNN reads
// when it first dispatches); generated kernels are cached under the build tree unless told otherwise.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>

namespace {

const bool environment_set = [] {
  if (const char* isa = std::getenv("KILN_TEST_ISA"); isa && *isa) {
    std::string onednn = isa;
    std::transform(onednn.begin(), onednn.end(), onednn.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    setenv("ONEDNN_MAX_CPU_ISA", onednn.c_str(), 0);
  }
  setenv("KILN_CACHE_DIR", KILN_BINARY_DIR "/test-kernel-cache", 0);
  return true;
}();

}  // namespace
