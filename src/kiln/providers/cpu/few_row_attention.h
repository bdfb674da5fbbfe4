// The two products of a kv_length attention (attention_kernels.cpp) for a few query rows, as a
// decoder's one-token step has (the grouped heads of one key/value head): scores = scale Q K^T and
// Y = P V, each reading the cache's keys and values once from memory in blocks that stay in the
// first-level cache while every row uses them. oneDNN's sgemm packs its operands first, which for
// these shapes reads the cache about twice. AVX2 and FMA (the x86-64-v3 baseline).
#pragma once

#include <cstdint>

namespace kiln::providers::cpu {

// Whether the products below take `rows` query rows of depth `depth` and values of width `width`.
bool has_few_row_attention(int64_t rows, int64_t depth, int64_t width);

// scores [rows, keys] (row-major, `keys` apart) = scale q [rows, depth] times k [keys, depth]^T;
// q's rows are ldq apart, k's ldk.
void few_row_scores(const float* q, int64_t ldq, const float* k, int64_t ldk, int64_t rows, int64_t keys, int64_t depth, float scale,
                    float* scores);

// y [rows, width] (rows ldy apart) = p [rows, keys] (row-major) times v [keys, width] (rows ldv apart).
void few_row_values(const float* p, int64_t rows, int64_t keys, const float* v, int64_t ldv, int64_t width, float* y, int64_t ldy);

}  // namespace kiln::providers::cpu
