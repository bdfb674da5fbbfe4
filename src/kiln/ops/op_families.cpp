// Builds the registry from every op family.
#include "kiln/ops/op_families.h"

namespace kiln::ops {

void register_all_op_families(OpRegistry& r) {
  register_elementwise_unary_ops(r);
  register_elementwise_binary_ops(r);
  register_cast_ops(r);
  register_softmax_ops(r);
  register_reduce_ops(r);
  register_normalization_ops(r);
  register_matmul_ops(r);
  register_conv_ops(r);
  register_pool_ops(r);
  register_resize_ops(r);
  register_shape_ops(r);
  register_data_movement_ops(r);
  register_generator_ops(r);
  register_control_flow_ops(r);
  register_sequence_ops(r);
  register_loss_ops(r);
  register_tensor_ops(r);
  register_quantization_ops(r);
  register_string_ops(r);
  register_training_ops(r);
  register_einsum_ops(r);
  register_detection_ops(r);
  register_sampling_ops(r);
  register_recurrent_ops(r);
  register_signal_ops(r);
  register_random_ops(r);
  register_fused_ops(r);
  register_layout_ops(r);
  register_gelu_ops(r);
  register_attention_ops(r);
  register_elementwise_chain_ops(r);
  register_channel_shuffle_ops(r);
  register_rms_normalization_ops(r);
  register_rotary_embedding_ops(r);
  register_block_quantized_matmul_ops(r);
  register_block_quantized_gather_ops(r);
  register_tensor_scatter_ops(r);
}

}  // namespace kiln::ops
