// KernelBuild: what building one plan's kernels reads and leaves besides the kernels.
//  - Providers record the implementation each kernel runs (the report names it, node by node), and
//    the CPU features needed by kernels whose packed weights' layout depends on the instruction
//    set: an artifact's target requirement.
//  - Constants packed into a kernel's layout are recorded with the nodes that read them, so that
//    an artifact can store them packed; an artifact's load hands them back, and kernels bind them
//    without packing. Some an artifact stores only packed (no plain copy): every node reading
//    such a constant must take it in its stored layout (check_packed_only_readers).
//  - A session's first plan may pack a constant in place: its packed bytes overwrite the plain
//    ones (same size), so the model's weights are held once. That needs the packing node to be
//    the constant's only reader (in_place_candidates) and nothing to read the plain bytes later:
//    the constant is packed-only from then on, and a kernel that wants another layout reorders
//    from the packed one (PackedConstant::descriptor).
//  - A provider may keep state of its own for the plan (ProviderPlanState): in jit mode the cpu
//    provider collects its generated kernels in one module per plan, built (compiled or found in
//    the object cache, and loaded) once every kernel is made.
// Layout names are the provider's: equal names mean byte-identical layouts.
#pragma once

#include <any>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ops/op_registry.h"
#include "kiln/status.h"

namespace kiln::providers {

class Tuner;

// Code a provider generated and compiled for a plan: its key (what it was built from) and its
// object's bytes, which an artifact stores so that a load needs no compiler.
struct CodeObject {
  std::string key;
  std::string_view bytes;  // valid while the build lives (it holds the provider's module)
};

// A constant's bytes in a kernel's layout.
struct PackedConstant {
  std::string value;   // the initializer's name
  std::string layout;  // the provider's name for the layout
  std::shared_ptr<const void> data;
  size_t bytes = 0;
  // The plain bytes it was packed from (plans of one session share their initializers' storage,
  // so a plan may reuse another's packing of the very same bytes); null for an artifact's, which
  // its graph's names identify.
  const void* source = nullptr;
  // The provider's own description of `layout`, from which it reorders into another layout: for
  // a constant packed in place, and an artifact's once a kernel has read it. Empty otherwise.
  std::any descriptor;
};

// Constants packed in place, by value.
using InPlaceLedger = std::map<std::string, PackedConstant>;

// What a provider keeps while one plan's kernels are built: made in its begin_plan, read by its
// kernels and its finish_plan (the cpu provider's: the module its generated kernels join). Only
// that provider knows its type.
class ProviderPlanState {
 public:
  virtual ~ProviderPlanState() = default;
};

class KernelBuild {
 public:
  KernelBuild() = default;
  // `prepacked`: constants packed ahead (an artifact's, or the session's other plans'); those
  // named in `packed_only` have no plain copy (their initializers hold packed bytes).
  KernelBuild(std::vector<PackedConstant> prepacked, std::set<std::string> packed_only);

  // The kernel of `node` runs implementation `name` ("brg:avx512_core", "jit:avx2"); a node whose
  // kernel runs several primitives records each.
  void record_implementation(const std::string& node, const std::string& name);
  // A kernel's packed weights (or generated code) need `features` of the machine that runs them.
  void require_features(const std::vector<std::string>& features);
  // A kernel reorders `count` activations on each run (a Winograd convolution into and out of its
  // blocked layout).
  void record_activation_reorders(int64_t count) { activation_reorders_ += count; }
  int64_t activation_reorders() const { return activation_reorders_; }

  // `value` (whose plain bytes are at `source`) packed into `layout`, ahead or earlier in this
  // build; nullptr when it is not.
  const PackedConstant* find_packed(const std::string& value, const std::string& layout, const void* source) const;
  // Whether `value` exists only packed (see the class comment).
  bool packed_only(const std::string& value) const { return packed_only_.count(value) > 0; }
  // `value` packed with its descriptor (in place, or an artifact's a kernel read), to reorder from; or nullptr.
  const PackedConstant* packed_with_descriptor(const std::string& value) const;

  // Lets kernels pack `candidates` in place (see the class comment), recording each in `ledger`,
  // which the session keeps whether or not the plan is then built.
  void allow_packing_in_place(std::set<std::string> candidates, std::shared_ptr<InPlaceLedger> ledger);
  bool may_pack_in_place(const std::string& value) const { return ledger_ && in_place_candidates_.count(value) > 0; }
  // `packed` (its data the initializer's own storage) replaced the plain bytes of its value.
  void record_packed_in_place(const std::string& node, const PackedConstant& packed);
  // `node` reads `packed` (found by find_packed, or packed by its kernel just now).
  void record_packed_reader(const std::string& node, const PackedConstant& packed);
  // UnsupportedTarget naming the first node of `graph` that reads a packed-only constant without
  // having taken it packed (another provider, or a kernel that wants another layout here).
  Status check_packed_only_readers(const ir::Graph& graph) const;

  // How the plan runs the bodies of its control-flow nodes: through plans of the policy's
  // providers (runtime/body_plans.h), set by the plan builder; empty in a bare build.
  void set_body_runner(ops::SubgraphRunner runner) { body_runner_ = std::move(runner); }
  const ops::SubgraphRunner& body_runner() const { return body_runner_; }

  // The tuner that chooses among a kernel's candidates (tuning.h); null: providers' heuristics.
  void set_tuner(std::shared_ptr<Tuner> tuner) { tuner_ = std::move(tuner); }
  Tuner* tuner() const { return tuner_.get(); }

  // Whether a provider may generate kernels for this plan (off: an artifact's plan for shapes its
  // embedded objects do not cover, with no compiler to build them, uses the library kernels).
  void forbid_generated_kernels() { generated_allowed_ = false; }
  bool generated_kernels_allowed() const { return generated_allowed_; }
  // Provider `provider`'s state for this plan (see ProviderPlanState); null when it keeps none.
  void set_provider_state(const std::string& provider, std::shared_ptr<ProviderPlanState> state);
  ProviderPlanState* provider_state(const std::string& provider) const;
  // The plan's generated code, once built (finish_plan); none when it generated nothing.
  void record_code_object(CodeObject object) { code_ = std::move(object); }
  const std::optional<CodeObject>& code_object() const { return code_; }

  // Implementation name -> kernels using it.
  const std::map<std::string, int64_t>& implementations() const { return implementations_; }
  // Node -> the implementations its kernel runs ("brg:avx512_core", or "jit:uni+jit:avx2").
  const std::map<std::string, std::string>& node_implementations() const { return node_implementations_; }
  // Union of the required features, sorted.
  const std::set<std::string>& required_features() const { return required_features_; }
  // The packed constants this build's kernels read, by (value, layout), and who reads each.
  const std::map<std::pair<std::string, std::string>, PackedConstant>& packed() const { return used_; }
  const std::map<std::pair<std::string, std::string>, std::set<std::string>>& packed_readers() const { return readers_; }

 private:
  std::map<std::string, int64_t> implementations_;
  std::map<std::string, std::string> node_implementations_;
  int64_t activation_reorders_ = 0;
  std::set<std::string> required_features_;
  std::map<std::pair<std::string, std::string>, PackedConstant> prepacked_, used_;
  std::map<std::pair<std::string, std::string>, std::set<std::string>> readers_;
  std::set<std::string> packed_only_;
  std::set<std::string> in_place_candidates_;
  std::shared_ptr<InPlaceLedger> ledger_;
  std::map<std::string, std::shared_ptr<ProviderPlanState>> provider_states_;
  std::optional<CodeObject> code_;
  ops::SubgraphRunner body_runner_;
  std::shared_ptr<Tuner> tuner_;
  bool generated_allowed_ = true;
};

// Constants of `graph` read by exactly one input of one node (not graph outputs, not read by a
// subgraph): those a kernel may pack in place.
std::set<std::string> sole_reader_constants(const ir::Graph& graph);

}  // namespace kiln::providers
