// kiln.Attention's operand layouts, shared by its shape rule, its kernels and the pass that sets
// them: each of Q, Kt and V may be given as the tensor it is a transpose of, and the output may be
// written transposed, so that the Transposes around an attention cost no copies.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/status.h"

namespace kiln::ops {

// Input i (0 Q, 1 Kt, 2 V) is the operand's source: the operand is Transpose(input, perm) with perm
// the attribute kAttentionOperandPerms[i]. The output is Transpose(Y, kAttentionOutputPerm).
// Absent attributes are the identity.
inline constexpr std::array<const char*, 3> kAttentionOperandPerms = {"q_perm", "kt_perm", "v_perm"};
inline constexpr const char* kAttentionOutputPerm = "y_perm";

// The attribute as a permutation of `rank` axes (identity when absent); InvalidModel naming the
// node when it is not one.
Result<std::vector<int64_t>> attention_perm(const ir::Node& node, const char* attr, size_t rank);

// The output dims from the logical Y's, and back: inverse of each other.
std::vector<int64_t> inverse_permutation(const std::vector<int64_t>& perm);

}  // namespace kiln::ops
