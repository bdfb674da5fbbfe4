// Execution provider interface: a named set of kernels, made for one Target, that answers, per
// node, whether it can run it (with a reason when it declines) and hands out the kernel.
// Capability first, as in ggml's supports_op: partition decisions are data, made before any kernel
// is built. A provider also describes the graph it runs fastest (GraphPreferences), so that the
// session asks it rather than branching on its name.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ops/activation_layout.h"
#include "kiln/ops/graph_preferences.h"
#include "kiln/ops/numeric_precision.h"
#include "kiln/ops/op_registry.h"
#include "kiln/providers/kernel_build.h"
#include "kiln/status.h"
#include "kiln/target/target.h"

namespace kiln::providers {

struct Capability {
  bool supported = false;
  std::string reason;  // why it declined (empty when supported)
  // Declined only for what analysis does not know yet (a value of unknown rank, after an If whose
  // branches differ): the provider has the op and decides when a plan's shapes are known. The
  // partitioner places the node there (Assignment::deferred); the plan asks again.
  bool deferred = false;

  static Capability yes() { return {true, ""}; }
  static Capability no(std::string why) { return {false, std::move(why)}; }
  static Capability when_shapes_known(std::string why) { return {false, std::move(why), true}; }
};

// What a session makes a provider for.
struct ProviderConfig {
  target::Target target;
  // Generate kernels from loop IR where the provider can (jit, or SessionOptions::generate_kernels):
  // a provider that generates sets up its code generator (UnsupportedTarget when no host compiler
  // runs). Only the policy's providers are asked to.
  bool generate_kernels = false;
  // An artifact's generated kernels by source key (views into the artifact's bytes, read into memory): loaded from memory
  // instead of compiled.
  std::map<std::string, std::string_view> embedded_code = {};
};

// What a provider that generates kernels at run time did over a session (the report's
// execution.generated section): its compiler, its object cache, the modules and kernels it made.
struct GeneratedCodeEvidence {
  std::string compiler;  // the compiler's identity
  std::string cache_folder;
  bool cache_writable = true;  // false once an insert failed
  int64_t modules = 0, kernels = 0;
  int64_t cache_hits = 0, cache_misses = 0, corrupted_entries = 0;
  int64_t embedded_hits = 0;  // modules whose object came from the artifact
  double compile_ms = 0;     // in the compiler, misses only
  int64_t source_bytes = 0;
};

class Provider {
 public:
  virtual ~Provider() = default;
  virtual std::string name() const = 0;
  // How the graph passes should shape the nodes it runs on its target (ops/graph_preferences.h),
  // for a compile whose products take the first of `precision` they can (its layouts may differ).
  virtual ops::GraphPreferences graph_preferences(const std::vector<ops::Precision>& precision = {ops::Precision::kFp32}) const {
    return {};
  }
  // The op types it has kernels for ("<domain>.<op>" outside ai.onnx), sorted: `kiln ops` lists
  // them, and the per-op speed harness (bench/ops.sh) checks it times every one.
  virtual std::vector<std::string> op_types() const = 0;
  // Whether it computes products (ops::reducible_product) in `precision` on its target, or, given
  // `product`, that product; the reason, naming what the target lacks, when not. float32 always.
  virtual Capability computes_in(ops::Precision precision, const ir::Node* product = nullptr) const {
    if (precision == ops::Precision::kFp32) return Capability::yes();
    return Capability::no(name() + " computes in fp32 only");
  }
  // Whether its kernel for `product`, computing in `precision`, reads its activation input and
  // writes its output in that precision's element type as the graph's values say (ops::
  // kOutputDtypeAttribute; a plain Conv or MatMul in its fused form, ops::as_fused_product): a value
  // between two such products then stays in that type, converted neither after the one nor before
  // the other. No by default: products convert at their edges.
  virtual bool keeps_reduced_activations(ops::Precision precision, const ir::Node& product) const { return false; }
  // Whether a product it declines in `precision` (computes_in) only for the conversions at its edges
  // it computes so where there are none: its activation input and its output both values kept in
  // that precision's type between products (a memory-bound product, whose reduced arithmetic saves
  // less than converting costs). The precision stage then reduces it only where both are kept. No
  // by default.
  virtual bool computes_where_kept(ops::Precision precision, const ir::Node& product) const { return false; }
  // Whether its kernel for `node`, not a product, reads and writes a value kept in `precision`'s
  // type (bfloat16, uint8) as it is, and its result there is the conversion of its float32 result
  // (a max pool: the max of rounded values is the rounded max). A value it reads may then stay in
  // that type, and its output with it, in the same quantization. No by default.
  virtual bool passes_reduced_activations(ops::Precision precision, const ir::Node& node) const { return false; }
  // The largest magnitude of its int8 products' weights (ops::symmetric_int8_scales): 127, or less
  // where its int8 arithmetic on this target would overflow with 8-bit weights.
  virtual int int8_weight_levels() const { return 127; }
  // Whether this provider can run `node` (op, opset, dtypes and shapes as analysed, attributes).
  virtual Capability supports(const ir::Node& node) const = 0;
  // The kernel for a node this provider supports, built from `build.context`; what building it
  // leaves is recorded in `build.evidence`.
  virtual Result<ops::Kernel> kernel_for(const ir::Node& node, KernelBuild& build) const = 0;
  // Before a plan's kernels are made: the provider's own state for the plan, kept in `context` (the
  // cpu provider: the module its generated kernels join, unless context.generated_kernels_allowed() is off).
  virtual void begin_plan(PlanContext& context) const {}
  // Once every kernel of the plan is made: what they need built (the cpu provider compiles, or
  // finds in the cache or the artifact, its module of generated kernels, into the plan's evidence).
  virtual Status finish_plan(KernelBuild& build) const { return Status::ok(); }
  // Evidence of the kernels it generated over the session, if it generates any.
  virtual std::optional<GeneratedCodeEvidence> generated_code() const { return std::nullopt; }
};

}  // namespace kiln::providers
