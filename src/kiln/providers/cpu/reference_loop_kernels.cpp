// cpu kernels that are the reference's own kernel, for ops where that loop is already what a cpu
// kernel would be: nothing to vectorise or spread over threads that it does not already, or work
// too small or too sequential to gain from either. Each entry says which. (Shape arithmetic and
// control flow reuse the reference the same way: shape_arithmetic.cpp, control_flow_kernels.cpp.)
#include "kiln/ops/strings.h"
#include "kiln/providers/cpu/cpu_kernels.h"

namespace kiln::providers::cpu {
namespace {

// The reference's kernel, recorded in the report as `kiln:reference-loop` so that the forms it
// runs are visible next to the tuned kernels' implementations.
CpuKernel reference_loop() {
  return {[](const ir::Node&) { return Capability::yes(); },
          [](const ir::Node& node, KernelBuild& build) -> Result<ops::Kernel> {
            build.evidence.record_implementation(node.name, "kiln:reference-loop");
            return reference_kernel(node);
          }};
}

}  // namespace

Result<ops::Kernel> reference_kernel(const ir::Node& node) {
  KILN_ASSIGN_OR_RETURN(const ops::OpDef* def, ops::resolve_op(ops::OpRegistry::global(), node));
  return def->reference;
}

void add_reference_loop_kernels(CpuKernelTable& table) {
  // No arithmetic: the attribute's tensor, or the input's dims.
  for (const char* op : {"Constant", "Shape", "Size"}) table[op] = reference_loop();
  // Generators from a few scalars, a few thousand values at most (and folded at compile time when
  // their inputs are constants, as exporters write them).
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow", "MelWeightMatrix"}) table[op] = reference_loop();
  // Loops the reference already runs on OpenMP threads: Hardmax's rows (softmax.cpp), LpPool's
  // (image, channel) planes (pool.cpp).
  for (const char* op : {"Hardmax", "LpPool", "GlobalLpPool"}) table[op] = reference_loop();
  // One pass of data movement each: MaxUnpool scatters every input element once, Col2Im adds every
  // column element once, CenterCropPad copies the kept window once (memory-bound, one pass).
  for (const char* op : {"MaxUnpool", "Col2Im", "CenterCropPad"}) table[op] = reference_loop();
  // Sequential by nature: Unique sorts and deduplicates in first-occurrence order; the random ops
  // draw from one seeded stream (ops/random_stream.h), so a seed gives the reference's values.
  table["Unique"] = reference_loop();
  for (const char* op : {"Bernoulli", "Dropout", "Multinomial", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike"})
    table[op] = reference_loop();
  // Sequences and optionals are lists of tensors, not tensors: these ops build, index and take apart
  // the lists (their elements are shared, not copied, where the reference can).
  for (const char* op : {"ConcatFromSequence", "SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase", "SequenceInsert",
                         "SequenceLength", "SplitToSequence", "Optional", "OptionalGetElement", "OptionalHasElement"})
    table[op] = reference_loop();
  // Strings, one at a time: StringNormalizer's case and stop words, TfIdfVectorizer's n-gram counts,
  // StringConcat, StringSplit, RegexFullMatch (RE2's matcher; its pattern compiled once, when the
  // kernel is built, where the reference compiles it on every run).
  for (const char* op : {"StringNormalizer", "TfIdfVectorizer", "StringConcat", "StringSplit"}) table[op] = reference_loop();
  table["RegexFullMatch"] = {[](const ir::Node&) { return Capability::yes(); },
                             [](const ir::Node& node, KernelBuild& build) -> Result<ops::Kernel> {
                               build.evidence.record_implementation(node.name, "kiln:reference-loop, pattern compiled once");
                               return ops::regex_full_match_kernel_for(node);
                             }};
  // One pass over rows on OpenMP threads, memory-bound: RMSNormalization's row statistics and
  // scaling, RotaryEmbedding's pair rotations (rms_normalization.cpp, rotary_embedding.cpp).
  for (const char* op : {"kiln.RMSNormalization", "kiln.RotaryEmbedding"}) table[op] = reference_loop();
  // A few rows per call (a decoder's tokens), each dequantized once: kiln.BlockQuantizedGather.
  table["kiln.BlockQuantizedGather"] = reference_loop();
  // A key/value cache update: the new rows copied in (in place, the stream's cache), or the whole
  // cache copied once when the output has a buffer of its own (tensor_scatter.cpp).
  table["kiln.TensorScatter"] = reference_loop();
  // Losses: one reduction to a value per sample (or one scalar) after a softmax or a gather.
  for (const char* op : {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"}) table[op] = reference_loop();
  // Optimizer updates (ai.onnx.preview.training): one element-wise pass over each tensor and its
  // state, in double as the reference computes them.
  for (const char* op : {"ai.onnx.preview.training.Adagrad", "ai.onnx.preview.training.Adam", "ai.onnx.preview.training.Momentum"})
    table[op] = reference_loop();
}

void add_reference_loop_forms(CpuKernelTable& table) {
  // Rare forms the tuned kernels decline run the reference's loop rather than refuse the model:
  // the fallback a user would otherwise have to allow runs the same loop. Per op, those forms:
  //   Identity: sequences and optionals; MaxPool: its Indices output, 8-bit images; Cast and
  //   CastLike: strings; BatchNormalization: training mode (batch statistics); Resize:
  //   tf_crop_and_resize; ConvInteger, QLinearConv, MatMulInteger, QLinearMatMul: weights the
  //   graph computes (the tuned kernels pack constant weights once); Einsum, the reductions,
  //   MatMul, Gemm (and their fused form), Softmax, LogSoftmax, ArgMax and ArgMin: float64 and the
  //   other dtypes oneDNN lacks; STFT: a frame length the graph computes. (A float64 convolution
  //   stays refused: the reference's loop would be a cliff no model in view needs.)
  //   QuantizeLinear and DequantizeLinear: 16-bit float data or results.
  for (const char* op : {"Identity", "MaxPool", "Cast", "CastLike", "BatchNormalization", "Resize", "ConvInteger", "QLinearConv",
                         "MatMulInteger", "QLinearMatMul", "Einsum", "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
                         "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp", "STFT", "MatMul", "Gemm",
                         "Softmax", "LogSoftmax", "ArgMax", "ArgMin", "kiln.FusedMatMul", "QuantizeLinear", "DequantizeLinear"})
    table[op] = first_of(table.at(op), reference_loop());
}

}  // namespace kiln::providers::cpu
