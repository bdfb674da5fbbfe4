// The prompt path of kiln.BlockQuantizedMatMul on cpu: many activation rows times block-quantized
// weights in 8-bit integers. The activations are quantized once to 8-bit blocks of 32; the weights
// are unpacked a tile of rows at a time into bytes of quants with a float scale per 16 values and a
// minimum (w = scale q + minimum), interleaved 8 rows by 4 bytes, which every activation row then
// multiplies: 8-bit dot products (VNNI's where the Target has it, AVX2's otherwise) of 4 broadcast
// activation bytes against 8 weight rows at once, for 4 activation rows by 8 to 24 weight rows in
// registers, the minimums' share as one float product of block sums (oneDNN's sgemm).
#pragma once

#include <cstdint>

#include "kiln/ops/block_quantized_matmul.h"
#include "kiln/status.h"
#include "kiln/target/target.h"

namespace kiln::providers::cpu {

// Whether `type` has the 8-bit prompt path: Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K.
bool has_tile_product(uint32_t type);

// The dot products the path uses on `target` (null: the x86-64-v3 baseline): "avx512vnni",
// "avxvnni" or "avx2".
const char* tile_product_instructions(const target::Target* target);

// y [m_rows, N] = x [m_rows, K] times W^T (W's rows of blocks at `w`), for a type with the path,
// with the dot products `instructions` names (tile_product_instructions).
Status tile_product(const ops::BlockQuantizedWeight& weight, const float* x, int64_t m_rows, const uint8_t* w, float* y,
                    const char* instructions);

}  // namespace kiln::providers::cpu
