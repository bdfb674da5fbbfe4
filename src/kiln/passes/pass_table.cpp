// The pass table. Dead code goes first so that a node nothing reads is never evaluated by folding;
// the pass manager repeats a stage's list until a round changes nothing.
#include "kiln/passes/pass_table.h"

#include "kiln/passes/activation_layout.h"
#include "kiln/passes/attention_fusion.h"
#include "kiln/passes/attention_transpose_folding.h"
#include "kiln/passes/batchnorm_folding.h"
#include "kiln/passes/branch_inlining.h"
#include "kiln/passes/channel_shuffle_fusion.h"
#include "kiln/passes/common_subexpression_elimination.h"
#include "kiln/passes/concat_split.h"
#include "kiln/passes/constant_folding.h"
#include "kiln/passes/dead_code_elimination.h"
#include "kiln/passes/elementwise_chain_fusion.h"
#include "kiln/passes/gelu_fusion.h"
#include "kiln/passes/half_in_float.h"
#include "kiln/passes/identity_elimination.h"
#include "kiln/passes/layer_norm_fusion.h"
#include "kiln/passes/normalization_activation_fusion.h"
#include "kiln/passes/legacy_forms.h"
#include "kiln/passes/pad_folding.h"
#include "kiln/passes/product_fusion.h"
#include "kiln/passes/product_slicing.h"
#include "kiln/passes/shape_folding.h"
#include "kiln/passes/subnormal_flushing.h"
#include "kiln/passes/unit_transpose_elimination.h"
#include "kiln/passes/winograd_selection.h"

namespace kiln::passes {

const std::vector<PassInfo>& pass_table() {
  static const std::vector<PassInfo> table = {
      {"dead_code_elimination", "remove nodes and values nothing reads", eliminate_dead_code, kGraphStage | kLoweringStage},
      {"identity_elimination", "bypass Identity, inference-mode Dropout and Casts or reshapes that change nothing", eliminate_identities},
      {"legacy_forms", "rewrite opset 1-8 broadcast, variadic and BatchNormalization forms as their current versions",
       modernise_legacy_forms},
      {"half_in_float", "compute float16 ops in float32 for providers without float16 kernels (cast at the edges)",
       compute_half_in_float},
      {"shape_folding", "replace Shape and Size of statically shaped values by constants", fold_shapes},
      {"constant_folding", "evaluate nodes whose inputs are all constants", fold_constants},
      {"branch_inlining", "replace an If whose condition is a constant by the nodes of the branch it takes",
       inline_constant_branches},
      {"common_subexpression_elimination", "merge identical nodes and identical constants",
       eliminate_common_subexpressions},
      {"unit_transpose_elimination", "replace a Transpose that moves only size-1 dims by a Reshape (no copy)",
       eliminate_unit_transposes},
      {"channel_shuffle_fusion", "replace a Reshape -> Transpose -> Reshape channel shuffle by one kiln.ChannelShuffle",
       fuse_channel_shuffles},
      {"pad_folding", "fold a Pad of zeros around a Conv's spatial dims into the Conv's pads", fold_pads},
      {"batchnorm_folding", "fold inference BatchNormalization into the Conv before it", fold_batchnorms},
      {"layer_norm_fusion", "replace LayerNormalization written with reductions by one LayerNormalization", fuse_layer_norm},
      {"gelu_fusion", "replace GELU written out in Erf or Tanh form by one kiln.Gelu", fuse_gelu},
      {"attention_fusion", "replace MatMul, scale, mask, Softmax, MatMul by one kiln.Attention", fuse_attention},
      {"attention_transpose_folding", "read and write the Transposes around kiln.Attention in place (operand permutations)",
       fold_attention_transposes},
      {"concat_split", "turn a Conv reading a channel Concat into a sum of Convs, one per input",
       split_concat_convolutions},
      {"product_fusion", "fold bias, residual Add and activation into the Conv or MatMul before them", fuse_products},
      {"product_slicing", "cut a product whose output only Slices of the last axis read into one product per Slice",
       slice_products},
      {"subnormal_flushing", "set float32 constants below FLT_MIN (subnormal, slow on x86) to signed zeros",
       flush_subnormal_constants},
      {"activation_layout", "run convolution regions on blocked or channels-last tensors (providers that prefer them)",
       choose_activation_layouts, kLoweringStage},
      {"normalization_activation_fusion", "fold the Relu after a region's BatchNormalization into it (one pass over the tensor)",
       fuse_normalization_activations, kLoweringStage},
      {"elementwise_chain_fusion", "merge runs of element-wise ops into one kiln.ElementwiseChain", fuse_elementwise_chains,
       kLoweringStage},
      {"winograd_selection", "compute 3x3 stride-1 convolutions by Winograd's method (targets that have it)",
       select_winograd, kLoweringStage},
  };
  return table;
}

}  // namespace kiln::passes
