// The list of op families: one registration function per family file in src/kiln/ops/.
// Adding an op touches only its family file; adding a family adds one line here and in op_families.cpp.
#pragma once

namespace kiln::ops {

class OpRegistry;

void register_elementwise_unary_ops(OpRegistry& r);  // elementwise_unary.cpp
void register_elementwise_binary_ops(OpRegistry& r); // elementwise_binary.cpp
void register_cast_ops(OpRegistry& r);               // cast.cpp
void register_softmax_ops(OpRegistry& r);            // softmax.cpp
void register_reduce_ops(OpRegistry& r);             // reduce.cpp
void register_normalization_ops(OpRegistry& r);      // normalization.cpp
void register_matmul_ops(OpRegistry& r);             // matmul.cpp
void register_conv_ops(OpRegistry& r);               // conv.cpp
void register_pool_ops(OpRegistry& r);               // pool.cpp
void register_resize_ops(OpRegistry& r);             // resize.cpp
void register_shape_ops(OpRegistry& r);              // shape_ops.cpp
void register_data_movement_ops(OpRegistry& r);      // data_movement.cpp
void register_generator_ops(OpRegistry& r);          // generators.cpp
void register_control_flow_ops(OpRegistry& r);       // control_flow.cpp
void register_sequence_ops(OpRegistry& r);           // sequence.cpp
void register_loss_ops(OpRegistry& r);               // losses.cpp
void register_tensor_ops(OpRegistry& r);             // tensor_ops.cpp
void register_quantization_ops(OpRegistry& r);       // quantization.cpp
void register_string_ops(OpRegistry& r);             // strings.cpp
void register_training_ops(OpRegistry& r);           // training.cpp
void register_einsum_ops(OpRegistry& r);             // einsum.cpp
void register_detection_ops(OpRegistry& r);          // detection.cpp
void register_sampling_ops(OpRegistry& r);            // sampling.cpp
void register_recurrent_ops(OpRegistry& r);          // recurrent.cpp
void register_signal_ops(OpRegistry& r);             // signal.cpp
void register_random_ops(OpRegistry& r);             // random.cpp
void register_fused_ops(OpRegistry& r);              // fused_products.cpp (domain kiln)
void register_layout_ops(OpRegistry& r);             // layout_ops.cpp (domain kiln)
void register_gelu_ops(OpRegistry& r);               // gelu.cpp (domain kiln)
void register_attention_ops(OpRegistry& r);          // attention.cpp (domain kiln)
void register_elementwise_chain_ops(OpRegistry& r);  // elementwise_chain.cpp (domain kiln)
void register_channel_shuffle_ops(OpRegistry& r);    // channel_shuffle.cpp (domain kiln)
void register_rms_normalization_ops(OpRegistry& r);  // rms_normalization.cpp (domain kiln)
void register_rotary_embedding_ops(OpRegistry& r);   // rotary_embedding.cpp (domain kiln)
void register_block_quantized_matmul_ops(OpRegistry& r);  // block_quantized_matmul.cpp (domain kiln)
void register_block_quantized_gather_ops(OpRegistry& r);  // block_quantized_gather.cpp (domain kiln)
void register_tensor_scatter_ops(OpRegistry& r);     // tensor_scatter.cpp (domain kiln)

void register_all_op_families(OpRegistry& r);

}  // namespace kiln::ops
