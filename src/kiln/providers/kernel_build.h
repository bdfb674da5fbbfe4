// KernelBuild: what a provider is handed to build one kernel of a plan: the plan's context, which
// the kernel reads (plan_context.h), and the plan's evidence, which it writes (plan_evidence.h).
// The two meet only in the packing protocol below: a kernel looks for its constant packed ahead
// (context) or earlier in this plan (evidence), and packing in place writes the session's ledger.
#pragma once

#include <string>

#include "kiln/ir/graph.h"
#include "kiln/providers/plan_context.h"
#include "kiln/providers/plan_evidence.h"
#include "kiln/status.h"

namespace kiln::providers {

struct KernelBuild {
  PlanContext& context;
  PlanEvidence& evidence;

  // `value` (whose plain bytes are at `source`) packed into `layout`, earlier in this plan or
  // ahead; nullptr when it is not.
  const PackedConstant* find_packed(const std::string& value, const std::string& layout, const void* source) const;
  // `value` packed with its descriptor (in place, or an artifact's a kernel read), to reorder
  // from; or nullptr.
  const PackedConstant* packed_with_descriptor(const std::string& value) const;
  // `packed` (its data the initializer's own storage) replaced the plain bytes of its value, read
  // by `node`: recorded in the session's ledger, and packed-only from now on.
  void record_packed_in_place(const std::string& node, const PackedConstant& packed);
};

// UnsupportedTarget naming the first node of `graph` that reads a constant the plan holds only
// packed without having taken it packed (another provider, or a kernel that wants another layout).
Status check_packed_only_readers(const ir::Graph& graph, const PlanEvidence& evidence);

}  // namespace kiln::providers
