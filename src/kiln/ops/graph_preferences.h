// GraphPreferences: how a provider wants the graph passes to shape the nodes it runs, as data. The
// vocabulary is a set of forms, each the work of one pass of the pass table that gives nodes that
// form only for a provider that prefers it, plus the activation layouts (best first) that the
// blocked-layout form chooses from. A provider lists what it prefers on its target
// (Provider::graph_preferences); the compiler hands that to the passes (PassContext); each pass
// asks for its own form. A new preference is one form here, one pass that asks for it, and the
// providers that list it: no field of any one provider's shape.
#pragma once

#include <set>
#include <vector>

#include "kiln/ops/activation_layout.h"

namespace kiln::ops {

enum class GraphForm {
  // float16 ops computed in float32 between casts (half_in_float): the provider has no float16 kernels.
  kHalfInFloat,
  // Convolution regions on blocked or channels-last tensors (activation_layout, with the Relu
  // after a region's BatchNormalization folded in: normalization_activation_fusion).
  kActivationLayouts,
  // Runs of element-wise ops as one kiln.ElementwiseChain (elementwise_chain_fusion).
  kElementwiseChains,
  // 3x3 stride-1 convolutions by Winograd's method (winograd_selection).
  kWinograd,
};

struct GraphPreferences {
  std::set<GraphForm> forms;
  // kActivationLayouts: the layouts its convolution regions run fastest in, best first.
  std::vector<ActivationLayout> activation_layouts;

  bool prefers(GraphForm form) const { return forms.count(form) > 0; }
  bool empty() const { return forms.empty(); }
};

}  // namespace kiln::ops
