// PlanEvidence: what building one plan's kernels leaves besides the kernels, kept with the plan
// for the report and the artifact to read.
//  - The implementation each kernel runs (the report names it, node by node), and the CPU
//    features needed by kernels whose packed weights' layout (or generated code) depends on the
//    instruction set: an artifact's target requirement.
//  - Constants packed into a kernel's layout, with the nodes that read them, so that an artifact
//    can store them packed; and the constants the plan holds only packed (no plain copy).
//  - The code a provider generated and compiled for the plan.
// What the build reads (prepacked constants, the tuner, a provider's state) is its PlanContext
// (plan_context.h). Layout names are the provider's: equal names mean byte-identical layouts.
#pragma once

#include <any>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::providers {

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

// Code a provider generated and compiled for a plan: its key (what it was built from) and its
// object's bytes, which an artifact stores so that a load needs no compiler.
struct CodeObject {
  std::string key;
  std::shared_ptr<const void> owner;  // keeps `bytes` alive (the provider's module)
  std::string_view bytes;
};

// (value, layout) of a packed constant.
using PackedKey = std::pair<std::string, std::string>;

class PlanEvidence {
 public:
  // The kernel of `node` runs implementation `name` ("brg:avx512_core", "jit:avx2"); a node whose
  // kernel runs several primitives records each.
  void record_implementation(const std::string& node, const std::string& name);
  // A kernel's packed weights (or generated code) need `features` of the machine that runs them.
  void require_features(const std::vector<std::string>& features);
  // A kernel reorders `count` activations on each run (a Winograd convolution into and out of its
  // blocked layout).
  void record_activation_reorders(int64_t count) { activation_reorders_ += count; }
  // `node` reads `packed` (found ahead, or packed by its kernel just now).
  void record_packed_reader(const std::string& node, const PackedConstant& packed);
  // `value` exists only packed in this plan: an artifact stored it so, or a kernel packed it in place.
  void record_packed_only(const std::string& value) { packed_only_.insert(value); }
  // The plan's generated code, once built; none when it generated nothing.
  void record_code_object(CodeObject object) { code_ = std::move(object); }

  int64_t activation_reorders() const { return activation_reorders_; }
  // Implementation name -> kernels using it.
  const std::map<std::string, int64_t>& implementations() const { return implementations_; }
  // Node -> the implementations its kernel runs ("brg:avx512_core", or "jit:uni+jit:avx2").
  const std::map<std::string, std::string>& node_implementations() const { return node_implementations_; }
  // Union of the required features, sorted.
  const std::set<std::string>& required_features() const { return required_features_; }
  // The packed constants this plan's kernels read, by (value, layout), and who reads each.
  const std::map<PackedKey, PackedConstant>& packed() const { return used_; }
  const std::map<PackedKey, std::set<std::string>>& packed_readers() const { return readers_; }
  bool packed_only(const std::string& value) const { return packed_only_.count(value) > 0; }
  const std::optional<CodeObject>& code_object() const { return code_; }

 private:
  std::map<std::string, int64_t> implementations_;
  std::map<std::string, std::string> node_implementations_;
  int64_t activation_reorders_ = 0;
  std::set<std::string> required_features_;
  std::map<PackedKey, PackedConstant> used_;
  std::map<PackedKey, std::set<std::string>> readers_;
  std::set<std::string> packed_only_;
  std::optional<CodeObject> code_;
};

}  // namespace kiln::providers
