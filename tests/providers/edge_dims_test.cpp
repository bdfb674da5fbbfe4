// The edge-dims sweep: every standard case of the differential harness again with each dimension
// set to 0 and to 1 in turn, on the cpu provider at the test target (the machine's ISA, and capped
// at AVX2 by the avx2. rerun). A legal shape must run and match the reference, or be declined; it
// must never crash the process (a SIGFPE inside a library's primitive creation ends the test run).
// Variants the reference itself refuses (a kernel of 0, inputs that no longer broadcast) are not
// legal shapes and are skipped.
#include <gtest/gtest.h>

#include <iostream>
#include <set>

#include "kiln/providers/cpu/cpu_provider.h"
#include "support/differential.h"
#include "support/op_cases.h"
#include "support/test_target.h"

namespace kiln::testing {
namespace {

// The case with dimension `dim` of input `input` set to `size`.
OpCase with_dim(const OpCase& c, size_t input, size_t dim, int64_t size) {
  OpCase variant = c;
  variant.inputs[input].shape[dim] = size;
  return variant;
}

// The case with every dimension of every input that equals `from` set to `to` (the same size in
// several inputs is usually the same axis: a product's inner dimension, a convolution's channels).
OpCase with_size_replaced(const OpCase& c, int64_t from, int64_t to) {
  OpCase variant = c;
  for (TensorSpec& spec : variant.inputs)
    if (spec.values.empty())
      for (int64_t& d : spec.shape)
        if (d == from) d = to;
  return variant;
}

// The variants of `c`: each dimension of each input without fixed contents at 0 and at 1, alone,
// and each distinct size at 0 and at 1 in every input at once.
std::vector<OpCase> edge_variants(const OpCase& c) {
  std::vector<OpCase> variants;
  std::set<int64_t> sizes;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const TensorSpec& spec = c.inputs[i];
    if (spec.omitted() || !spec.values.empty()) continue;  // fixed contents (indices, axes) keep their shape
    for (size_t d = 0; d < spec.shape.size(); ++d) {
      sizes.insert(spec.shape[d]);
      for (int64_t size : {0, 1})
        if (spec.shape[d] != size) variants.push_back(with_dim(c, i, d, size));
    }
  }
  for (int64_t from : sizes)
    for (int64_t size : {0, 1})
      if (from != size) variants.push_back(with_size_replaced(c, from, size));
  return variants;
}

TEST(DifferentialEdgeDims, EveryCpuKernelTakesEmptyAndUnitDims) {
  const auto cpu = providers::CpuProvider::create({test_target()});
  ASSERT_TRUE(cpu.is_ok()) << cpu.status().to_string();
  int legal = 0, matched = 0, empty_legal = 0;
  for (const OpCase& c : standard_op_cases())
    for (const OpCase& variant : edge_variants(c)) {
      const DifferentialResult r = check_against_reference(*cpu.value(), variant, 7);
      if (r.verdict == Verdict::kInvalidCase) continue;
      ++legal;
      matched += r.verdict == Verdict::kMatch;
      bool has_empty = false;
      for (const TensorSpec& spec : variant.inputs)
        for (int64_t d : spec.shape) has_empty |= d == 0;
      empty_legal += has_empty;
      EXPECT_NE(r.verdict, Verdict::kMismatch) << variant.label() << ": " << r.detail;
    }
  std::cout << "[edge dims] " << legal << " legal variants, " << matched << " matched, " << empty_legal << " with an empty input\n";
  // The sweep must reach the kernels: most variants are legal, and a good share of them empty.
  EXPECT_GE(legal, 1000);
  EXPECT_GE(empty_legal, 300);
}

}  // namespace
}  // namespace kiln::testing
