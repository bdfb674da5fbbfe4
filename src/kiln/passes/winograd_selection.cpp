// winograd_selection: 3x3 stride-1 kiln.FusedConv nodes get algorithm = "winograd".
#include "kiln/passes/winograd_selection.h"

#include "kiln/ops/activation.h"

namespace kiln::passes {
namespace {

constexpr int64_t kChannelBlock = 16;  // oneDNN's AVX-512 blocked layout (nChw16c)
constexpr size_t kResidualInput = 3;

// Winograd pays for its input and output transforms only with enough channels per tile: at least
// 64 in and out, and at least 128 in unless the output has 28x28 positions or more (measured with
// oneDNN 2.6 on AVX-512: SqueezeNet's 16..64-channel 3x3 convs and 13x13 maps run slower by
// Winograd, ResNet's 64..512-channel ones about 1.5x faster).
bool enough_work(const ir::Node& conv, int64_t in_channels, int64_t out_channels) {
  if (in_channels < 64 || out_channels < 64) return false;
  if (in_channels >= 128) return true;
  const ir::Value* y = conv.outputs.empty() ? nullptr : conv.outputs[0];
  if (!y || !y->type.shape || y->type.shape->rank() != 4) return false;
  const bool nhwc = conv.attr_string("layout", "NCHW") == "NHWC";
  const ir::Dim h = (*y->type.shape)[nhwc ? 1 : 2], w = (*y->type.shape)[nhwc ? 2 : 3];
  return h.is_static() && w.is_static() && h.value() * w.value() >= 28 * 28;
}

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
  if (dims[0] % kChannelBlock != 0 || dims[1] % kChannelBlock != 0 || !enough_work(conv, dims[1], dims[0])) return false;
  if (conv.attr_int("group", 1) != 1 || conv.input(kResidualInput)) return false;
  if (!all_equal(conv.attr_ints("strides", {1, 1}), 1) || !all_equal(conv.attr_ints("dilations", {1, 1}), 1)) return false;
  const std::optional<ops::Activation> activation = ops::fused_activation(conv);
  return !activation || activation->op == "Relu";
}

Result<bool> select_winograd(ir::Graph& graph, const PassContext& ctx) {
  if (!ctx.winograd) return false;
  bool changed = false;
  for (const auto& node : graph.nodes()) {
    if (!winograd_eligible(*node)) continue;
    node->attributes["algorithm"] = ir::Attribute::of_string("winograd");
    changed = true;
  }
  return changed;
}

}  // namespace kiln::passes
