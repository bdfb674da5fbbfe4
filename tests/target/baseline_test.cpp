// Kiln's own code is built for the x86-64-v3 baseline (CMakeLists.txt), so one binary runs on every
// supported machine, AVX2-only ones included: the kiln binary must hold no 512-bit (zmm)
// instructions, whatever machine built it. Wider code comes from oneDNN and generated kernels,
// chosen at run time from the Target.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

// objdump's disassembly of `path`, and whether objdump ran.
std::pair<std::string, bool> disassembly(const std::string& path) {
  std::string text;
  FILE* pipe = popen(("objdump -d --no-show-raw-insn " + path + " 2>/dev/null").c_str(), "r");
  if (!pipe) return {text, false};
  std::array<char, 1 << 16> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) text.append(buf.data(), n);
  return {text, pclose(pipe) == 0};
}

TEST(Baseline, TheKilnBinaryHoldsNoAvx512Instructions) {
#ifdef KILN_BUILT_NATIVE
  GTEST_SKIP() << "built with KILN_NATIVE=ON, for this machine only";
#endif
  if (std::system("objdump --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "objdump (binutils) is not installed";
  const auto [text, ran] = disassembly(KILN_CLI_PATH);
  ASSERT_TRUE(ran) << "objdump failed on " << KILN_CLI_PATH;
  ASSERT_GT(text.size(), 1000000u) << "too little disassembly to judge";
  EXPECT_NE(text.find("ymm"), std::string::npos) << "the baseline has AVX2: some loops should use it";
  const size_t zmm = text.find("zmm");
  EXPECT_EQ(zmm, std::string::npos) << "512-bit code in the kiln binary: "
                                    << text.substr(text.rfind('\n', zmm) + 1, text.find('\n', zmm) - text.rfind('\n', zmm));
}

}  // namespace
