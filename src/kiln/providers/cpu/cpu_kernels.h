// The cpu provider's kernel table: for each ai.onnx op it accelerates, a capability check (with
// the reason when it declines) and a builder that prepares the kernel for the plan's concrete
// shapes (primitive creation, one-time weight reorders). Each family file adds its entries.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ops/op_registry.h"
#include "kiln/providers/kernel_build.h"
#include "kiln/providers/provider.h"
#include "kiln/status.h"

namespace kiln::providers::cpu {

struct CpuKernel {
  std::function<Capability(const ir::Node&)> supports;
  std::function<Result<ops::Kernel>(const ir::Node&, KernelBuild&)> build;
  // The inputs the kernel hands a library as data: when one has a dim of 0 at a plan's shapes (and
  // some output is not empty), the reference's loop runs the node instead (cpu_provider.cpp). Input
  // 0 for most ops; other inputs may be empty by convention (Resize's roi and scales left out).
  std::vector<size_t> data_inputs = {0};
};

// An entry whose builder needs nothing but the node.
CpuKernel node_only(std::function<Capability(const ir::Node&)> supports,
                    std::function<Result<ops::Kernel>(const ir::Node&)> build);

using CpuKernelTable = std::map<std::string, CpuKernel>;

void add_conv_kernels(CpuKernelTable& table);
void add_matmul_kernels(CpuKernelTable& table);
void add_pool_kernels(CpuKernelTable& table);
// Whether the pooling kernel for `node` (a kiln.InLayout of MaxPool or GlobalMaxPool in a
// channels-last or blocked layout) takes the max in its input's stored type as it is: a value kept
// bfloat16 or uint8 between reduced products passes through it (CpuProvider::
// passes_reduced_activations). Not channels-first (oneDNN's reference code there), the Indices
// output, a fused activation, or Kiln's own loop (dilated windows), which pools float32.
bool max_pools_stored_type(const ir::Node& node);
void add_transpose_kernels(CpuKernelTable& table);
void add_eltwise_kernels(CpuKernelTable& table);
void add_normalization_kernels(CpuKernelTable& table);
void add_copy_kernels(CpuKernelTable& table);
void add_slice_concat_kernels(CpuKernelTable& table);
void add_attention_kernels(CpuKernelTable& table);
void add_gather_kernels(CpuKernelTable& table);
void add_expand_kernels(CpuKernelTable& table);
void add_resize_kernels(CpuKernelTable& table);
void add_conv_transpose_kernels(CpuKernelTable& table);
void add_relayout_kernels(CpuKernelTable& table);
void add_reduce_kernels(CpuKernelTable& table);
void add_compare_select_kernels(CpuKernelTable& table);
void add_cast_kernels(CpuKernelTable& table);
void add_pad_kernels(CpuKernelTable& table);
void add_fill_kernels(CpuKernelTable& table);
void add_control_flow_kernels(CpuKernelTable& table);
void add_recurrent_kernels(CpuKernelTable& table);
void add_quantization_kernels(CpuKernelTable& table);
void add_integer_conv_kernels(CpuKernelTable& table);
void add_integer_matmul_kernels(CpuKernelTable& table);
void add_indexed_kernels(CpuKernelTable& table);
void add_topk_kernels(CpuKernelTable& table);
void add_cumsum_kernels(CpuKernelTable& table);
void add_block_quantized_matmul_kernels(CpuKernelTable& table);
void add_trilu_kernels(CpuKernelTable& table);
void add_detection_kernels(CpuKernelTable& table);
void add_selection_kernels(CpuKernelTable& table);
void add_einsum_kernels(CpuKernelTable& table);
void add_reverse_sequence_kernels(CpuKernelTable& table);
void add_signal_kernels(CpuKernelTable& table);
void add_deform_conv_kernels(CpuKernelTable& table);
void add_det_kernels(CpuKernelTable& table);
void add_reference_loop_kernels(CpuKernelTable& table);
// Last: extends other families' entries with the reference's loop for their rare forms.
void add_reference_loop_forms(CpuKernelTable& table);
// After add_eltwise_kernels: Add, Sub, Mul, Div, Max and Min extend its entries.
void add_arithmetic_kernels(CpuKernelTable& table);

// The reference's kernel for `node` (the cpu_ref provider's), for what the cpu provider runs as the
// reference does (reference_loop_kernels.cpp, shape arithmetic, reductions with nothing to fold).
Result<ops::Kernel> reference_kernel(const ir::Node& node);

// An ops::TaskRunner on OpenMP threads (dynamic schedule), for the kernels the reference shares.
void run_on_threads(int64_t count, const std::function<void(int64_t)>& task);

// `preferred` where it supports a node, `otherwise` where it does not.
CpuKernel first_of(CpuKernel preferred, CpuKernel otherwise);

// `library`, whose kernels are generated from loop IR instead when the build collects generated
// kernels (jit mode) and the node has a lowering (generated_kernels.cpp).
CpuKernel generated_or(CpuKernel library);

// Checks shared by every entry: float32 tensors of known rank for the given inputs and all outputs.
Capability float_tensors(const ir::Node& node, const std::vector<size_t>& inputs);
// float_tensors for a product (Conv, MatMul and their fused forms), whose activation input (0) and
// output may also be bfloat16 when it computes in bf16, uint8 in int8 (with the node's quantization
// of it): a value kept in that type between two such products (CpuProvider::keeps_reduced_activations).
Capability product_tensors(const ir::Node& node, const std::vector<size_t>& inputs);
// float_tensors for input 0 and the outputs, with input 0 of rank min_rank to max_rank.
Capability float_tensor_of_rank(const ir::Node& node, size_t min_rank, size_t max_rank);
// Node input i is a tensor of a fixed-size dtype (not string): what the data movement kernels
// copy byte for byte.
Capability fixed_size_tensor(const ir::Node& node, size_t input);
// Node input i is a tensor of a numeric dtype (not bool or string).
Capability numeric_tensor(const ir::Node& node, size_t input);
// Whether `v` is a uint8 or int8 tensor (the quantized kernels' operands).
bool is_8bit_tensor(const ir::Value* v);

}  // namespace kiln::providers::cpu
