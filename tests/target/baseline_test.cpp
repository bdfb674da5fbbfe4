// Kiln's own code is built for the x86-64-v3 baseline (CMakeLists.txt), so one binary runs on every
// supported machine, AVX2-only ones included: the kiln binary must hold no 512-bit (zmm)
// instructions outside the kernels written for AVX-512 and reached only when the Target has it
// (functions of a namespace named avx512), whatever machine built it. Other wider code comes from
// oneDNN and generated kernels, chosen at run time from the Target.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

// objdump's disassembly of `path`, and whether objdump ran.
std::pair<std::string, bool> disassembly(const std::string& path) {
  std::string text;
  FILE* pipe = popen(("objdump -d -C --no-show-raw-insn " + path + " 2>/dev/null").c_str(), "r");
  if (!pipe) return {text, false};
  std::array<char, 1 << 16> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) text.append(buf.data(), n);
  return {text, pclose(pipe) == 0};
}

TEST(Baseline, TheKilnBinaryHoldsAvx512InstructionsOnlyInItsAvx512Kernels) {
#ifdef KILN_BUILT_NATIVE
  GTEST_SKIP() << "built with KILN_NATIVE=ON, for this machine only";
#endif
  if (std::system("objdump --version > /dev/null 2>&1") != 0) GTEST_SKIP() << "objdump (binutils) is not installed";
  const auto [text, ran] = disassembly(KILN_CLI_PATH);
  ASSERT_TRUE(ran) << "objdump failed on " << KILN_CLI_PATH;
  ASSERT_GT(text.size(), 1000000u) << "too little disassembly to judge";
  EXPECT_NE(text.find("ymm"), std::string::npos) << "the baseline has AVX2: some loops should use it";
  // objdump heads each function with "<demangled name>:"; a zmm line belongs to the last one.
  int outside = 0, inside = 0;
  std::string function;
  for (size_t start = 0, end; start < text.size(); start = end + 1) {
    end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == ':' && line.find('<') != std::string::npos) {
      function = line;
    } else if (line.find("zmm") != std::string::npos) {
      if (function.find("::avx512::") != std::string::npos) {
        ++inside;
      } else if (++outside <= 3) {
        ADD_FAILURE() << "512-bit code outside the AVX-512 kernels, in " << function << "\n" << line;
      }
    }
  }
  EXPECT_EQ(outside, 0);
  EXPECT_GT(inside, 0) << "the AVX-512 one-token rows (block_quantized_rows_avx512.cpp) hold no 512-bit code";
}

}  // namespace
