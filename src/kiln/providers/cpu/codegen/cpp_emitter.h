// C++ emission of loop kernels: one translation unit per module, each kernel an extern "C"
// function `void NAME(const float* const* inputs, float* output)` with its extents and strides as
// literal constants, the outer loops split over OpenMP threads when the kernel is large enough, and
// the innermost loop vectorised (`omp simd`) at the target's vector width.
#pragma once

#include <string>
#include <vector>

#include "kiln/providers/cpu/codegen/loop_ir.h"

namespace kiln::codegen {

// Floats per vector register for target CPU features (GCC's names): 16 with avx512f, 8 with avx2
// or avx, else 4.
int vector_width(const std::vector<std::string>& features);

// The source of a module holding `kernels`, vectorised for `vector_width` floats.
std::string emit_module(const std::vector<LoopKernel>& kernels, int vector_width);

}  // namespace kiln::codegen
