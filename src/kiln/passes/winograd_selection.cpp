// winograd_selection: 3x3 stride-1 kiln.FusedConv nodes get algorithm = "winograd".
#include "kiln/ops/fused_product_inputs.h"
#include "kiln/passes/winograd_selection.h"

#include "kiln/ops/activation.h"

namespace kiln::passes {
namespace {

constexpr int64_t kChannelBlock = 16;  // oneDNN's AVX-512 blocked layout (nChw16c)

bool all_equal(const std::vector<int64_t>& values, int64_t expected) {
  for (int64_t v : values)
    if (v != expected) return false;
  return true;
}

}  // namespace

bool winograd_eligible(const ir::Node& conv) {
  if (conv.domain != "kiln" || conv.op_type != "FusedConv" || conv.attr_string("algorithm", "direct") != "direct") return false;
  const ir::Value* w = conv.input(1);
  if (!w || !w->initializer || w->initializer->dtype() != DType::kFloat) return false;
  const std::vector<int64_t>& dims = w->initializer->shape();
  if (dims.size() != 4 || dims[2] != 3 || dims[3] != 3) return false;
  if (dims[0] % kChannelBlock != 0 || dims[1] % kChannelBlock != 0) return false;
  if (conv.attr_int("group", 1) != 1 || conv.input(ops::kFusedResidualInput)) return false;
  if (!all_equal(conv.attr_ints("strides", {1, 1}), 1) || !all_equal(conv.attr_ints("dilations", {1, 1}), 1)) return false;
  const std::optional<ops::Activation> activation = ops::fused_activation(conv);
  return !activation || activation->is(ops::Elementwise::kRelu);
}

Result<bool> select_winograd(ir::Graph& graph, const PassContext& ctx) {
  if (!ctx.preferences.prefers(ops::GraphForm::kWinograd)) return false;
  bool changed = false;
  for (const auto& node : graph.nodes()) {
    if (!ctx.owns(*node) || !winograd_eligible(*node)) continue;
    node->attributes["algorithm"] = ir::Attribute::of_string("winograd");
    changed = true;
  }
  return changed;
}

}  // namespace kiln::passes
