// The one-token path of the cpu provider's kiln.BlockQuantizedMatMul on machines with AVX-512's
// byte permutes and 8-bit dot products (F, BW, VL, VBMI, VNNI: Ice Lake and later, Zen 4 and later):
// each weight row read once per call, 4 blocks of 32 per step in 512-bit registers. The weights
// keep their GGUF layout (they are the mapped file); the activations are quantized once per call
// into the order the weights' quants unpack to. Elsewhere block_quantized_matmul_kernels.cpp's
// AVX2 rows run.
#pragma once

#include <cstdint>

#include "kiln/ops/block_quantized_matmul.h"
#include "kiln/target/target.h"

namespace kiln::providers::cpu {

// y [m_rows, N] = x [m_rows, K] times W^T, W's rows of blocks at `w`.
using RowProduct = void (*)(const ops::BlockQuantizedWeight& weight, const float* x, int64_t m_rows, const uint8_t* w, float* y);

// Whether `target` has the features the AVX-512 rows need.
bool has_avx512_row_products(const target::Target* target);

// The AVX-512 rows of `type` (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K), or null for the
// other types. Call only where has_avx512_row_products holds.
RowProduct avx512_row_product(uint32_t type);

}  // namespace kiln::providers::cpu
