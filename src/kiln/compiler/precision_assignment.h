// Precision assignment: the compile stage that chooses, node by node, the arithmetic of each product
// (ops::reducible_product: a convolution or matrix product with constant float32 weights) when the
// compile asks for a reduced precision. A product placed on a provider that computes in that
// precision on its target (Provider::computes_in) gets the attribute `precision` (its kernel reads
// it); one the options keep in float32 (by node name, source node name or op type), or placed on a
// provider without it, stays float32, with the reason. Element-wise ops, normalizations and softmax
// always compute in float32. A value between two bf16 products stays bfloat16, one between two
// static int8 products uint8 (PrecisionEvidence::bf16_values, uint8_values): the graph's value
// changes type, so neither product converts it. An artifact's
// graph comes with its nodes marked and its values typed; this stage does not run on it.
#pragma once

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ops/activation_calibration.h"
#include "kiln/ops/numeric_precision.h"
#include "kiln/partition/partitioner.h"
#include "kiln/status.h"

namespace kiln::compiler {

// What a compile asks for.
struct PrecisionOptions {
  // In order of preference: each product takes the first its provider computes it in ("int8+bf16":
  // int8 matrix products, bf16 convolutions); fp32 when none.
  std::vector<ops::Precision> preference = {ops::Precision::kFp32};
  // Products left in float32: node names or op types ("Conv", "MatMul", "Gemm") of the source
  // model; a fused product is kept when any node it stands for is.
  std::vector<std::string> keep_fp32;
  // keep_fp32 resolved against the source model by resolve_keep_fp32: the names of the source
  // nodes it names or whose op type it names.
  std::vector<std::string> kept_source_nodes;
  // Source nodes the accuracy fallback keeps in float32 (runtime/session_load.cpp: the products
  // most sensitive to the reduced precision, as measured).
  std::vector<std::string> fallback_source_nodes;
  // Static int8: the calibrated quantization of products' inputs, by the input value's name
  // (runtime/activation_calibration.h measures them on the same graph); an int8 product whose input
  // has none quantizes it per run (dynamic).
  std::map<std::string, ops::Uint8Quantization> calibrated_inputs;
};

// One product's precision, and why it is float32 when a reduced one was asked for.
struct NodePrecision {
  std::string node;
  std::string op_type;
  std::vector<std::string> sources;  // the source model's nodes it stands for (Node::source_nodes)
  ops::Precision precision = ops::Precision::kFp32;
  std::string reason;     // empty when reduced
  int weight_levels = 0;  // int8: the weights' largest magnitude (127, or 63: Provider::int8_weight_levels)
  std::string input;      // int8: the value its input is, and how it is quantized:
  std::optional<ops::Uint8Quantization> calibrated;  // calibrated (static), else per run (dynamic)
  // The residual summed into its output (kiln.FusedConv, kiln.FusedMatMul), if any (static int8
  // calibrates it too), and its quantization where it is a value kept uint8 (summed as stored).
  std::string residual;
  std::optional<ops::Uint8Quantization> residual_quantization;
};

struct PrecisionEvidence {
  std::vector<ops::Precision> requested = {ops::Precision::kFp32};
  std::vector<std::string> keep_fp32;  // as asked
  std::vector<NodePrecision> products;  // every product of the graph, in graph order
  int64_t reduced = 0;                  // products computing in a reduced precision
  // Values kept bfloat16 between bf16 products (ops::kOutputDtypeAttribute), in graph order: each
  // written by a bf16 product and read only by bf16 products, as their activation input, on a
  // provider that keeps such activations (Provider::keeps_reduced_activations). The conversions
  // are then only where a bf16 region meets float32 ops.
  std::vector<std::string> bf16_values;
  // Values kept uint8 between int8 products, likewise: each with a calibrated quantization, which
  // its writer applies to its output and its readers read it in, so neither quantizes nor
  // dequantizes it on its own.
  std::vector<std::string> uint8_values;
};

// Fills options.kept_source_nodes from keep_fp32 and the source model's graph (before any pass);
// InvalidArgument for an entry that names neither a node nor an op type of it.
Status resolve_keep_fp32(const ir::Graph& source, PrecisionOptions& options);

// Checks a compile's request against the policy's first provider (`providers.front()`):
// UnsupportedTarget with its reason when it does not compute in one of the precisions on its target.
Status check_precision_request(const partition::ProviderList& providers, const PrecisionOptions& options);

// Marks the products of `graph` (a model's, a variant's or a body's) as `options` and the providers
// they are placed on allow.
PrecisionEvidence assign_precision(ir::Graph& graph, const partition::PartitionMap& placed, const partition::ProviderList& providers,
                                   const PrecisionOptions& options);

// The products of `graph` as marked (an artifact's graph): the evidence without a request.
PrecisionEvidence recorded_precision(const ir::Graph& graph);

// The products of control-flow bodies, which are compiled when a run first reaches them
// (compiler::later_compilers): each body's evidence as it is compiled, for the report and the
// accuracy fallback. Shared by the body compiler and the engine; thread-safe.
class BodyPrecision {
 public:
  void record(const std::vector<NodePrecision>& products);
  // Every body product recorded so far, by node name.
  std::vector<NodePrecision> products() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, NodePrecision> products_;
};

}  // namespace kiln::compiler
