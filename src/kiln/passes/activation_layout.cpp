// activation_layout: convolution regions to one activation layout each, reorders only at their edges.
#include "kiln/passes/activation_layout.h"

#include <algorithm>
#include <map>
#include <set>

#include "kiln/ops/activation.h"
#include "kiln/ops/activation_layout.h"
#include "kiln/ops/channels_last.h"
#include "kiln/passes/rewrite_helpers.h"

namespace kiln::passes {
namespace {

using ops::ActivationLayout;

const std::set<std::string> kPools = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"};
const std::set<std::string> kElementwiseBinary = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
// A convolution of a region in a blocked layout may read an outside input this narrow (an image)
// channels-first: oneDNN has direct kernels from plain inputs to blocked outputs for it.
constexpr int64_t kMaxChannelsFirstInput = 4;
// A part of a region in a blocked layout holds at least this many convolutions, which pay for the
// reorders at its edges.
constexpr int kMinBlockedConvs = 2;

// The rank of a float activation a region may hold: 4 (2-D convolutions), 3 or 5 (1-D and 3-D
// ones, channels-last only); 0 for anything else. Dims may be symbolic: a dynamic batch converts too.
size_t activation_rank(const ir::Value* v) {
  if (!v || !v->type.is_tensor() || v->type.dtype != DType::kFloat || !v->type.shape) return 0;
  const size_t rank = v->type.shape->rank();
  return rank >= 3 && rank <= 5 ? rank : 0;
}

// Rank of a node's first output (every activation of a region has its region's rank).
size_t rank_of(const ir::Node& node) { return activation_rank(node.outputs[0]); }

bool is_scalar_constant(const ir::Value* v) { return v && v->initializer && v->initializer->element_count() == 1; }

bool is_conv(const ir::Node& n) { return is_onnx_op(n, "Conv") || (n.domain == "kiln" && n.op_type == "FusedConv"); }

// Whether input i of a region node is an activation (the others, weights and bias, stay as they are).
bool is_activation_input(const ir::Node& node, size_t i) {
  if (is_conv(node)) return i == 0 || i == 3;
  if (kPools.count(node.op_type) || node.op_type == "BatchNormalization") return i == 0;
  return activation_rank(node.inputs[i]) == rank_of(node);
}

// Convolutions on 3-d and 4-d float tensors and pools on 4-d ones start (or extend) a region.
// Dilated pools (no blocked kernel pools them) stay channels-first.
bool starts_region(const ir::Node& n) {
  const size_t rank = activation_rank(n.input(0));
  if (n.has_subgraph() || rank == 0 || activation_rank(n.outputs[0]) != rank) return false;
  if (is_onnx_op(n, "Conv")) return true;
  if (n.domain == "kiln" && n.op_type == "FusedConv") return n.attr_string("layout", "NCHW") == "NCHW";
  if (!n.domain.empty() || !kPools.count(n.op_type) || rank != 4) return false;
  const std::vector<int64_t> dilations = n.attr_ints("dilations");
  if (std::any_of(dilations.begin(), dilations.end(), [](int64_t d) { return d != 1; })) return false;
  return n.outputs.size() == 1 || !n.outputs[1];  // MaxPool's Indices are channels-first
}

int64_t channels(const ir::Value* v) {
  const ir::Dim& c = v->type.shape->dims()[1];
  return c.is_static() ? c.value() : -1;
}

// A PRelu whose slope is constant and per channel ([C, 1, ...] as numpy broadcasts it onto
// [N, C, ...]) or one value: the slope re-laid for the stored layout (channel_slope) lets it run in
// any layout (fp_liveness: 33 Conv -> PRelu pairs, each PRelu a region edge before).
bool is_channel_prelu(const ir::Node& n) {
  if (!is_onnx_op(n, "PRelu") || n.opset_version < 7 || n.inputs.size() != 2) return false;
  const ir::Value* x = n.input(0);
  const ir::Value* slope = n.input(1);
  if (!slope || !slope->initializer || slope->type.dtype != DType::kFloat || activation_rank(x) == 0) return false;
  if (slope->initializer->element_count() == 1 && slope->initializer->rank() <= 1) return true;
  const std::vector<int64_t>& s = slope->initializer->shape();
  if (s.size() + 1 != x->type.shape->rank() || s[0] != channels(x) || s[0] <= 0) return false;
  return std::all_of(s.begin() + 1, s.end(), [](int64_t d) { return d == 1; });
}

// A channel shuffle (channel_shuffle_fusion) of a channels-first activation: it permutes the
// channel axis, wherever the layout puts it, but channels-last only (a blocked layout would mix
// channels across blocks).
bool is_channel_shuffle(const ir::Node& n) {
  return n.domain == "kiln" && n.op_type == "ChannelShuffle" && n.attr_string("layout", "NCHW") == "NCHW" && n.outputs.size() == 1 &&
         rank_of(n) != 0;
}

// A Split whose every output is an activation of the region's rank with a known size on the split
// axis (a blocked layout splits channel blocks: the sizes are re-counted in blocks).
bool is_activation_split(const ir::Node& n) {
  if (!is_onnx_op(n, "Split") || n.opset_version < 2 || n.outputs.empty() || rank_of(n) == 0) return false;
  const auto rank = static_cast<int64_t>(rank_of(n));
  const int64_t axis = n.attr_int("axis", 0);
  if (axis < -rank || axis >= rank) return false;
  for (const ir::Value* out : n.outputs)
    if (!out || activation_rank(out) != rank_of(n) || !(*out->type.shape)[static_cast<size_t>((axis + rank) % rank)].is_static())
      return false;
  return true;
}

// Layout-agnostic ops join a region when one of their inputs is already in it.
bool may_join_region(const ir::Node& n) {
  if (is_channel_shuffle(n) || is_activation_split(n)) return true;
  if (!n.domain.empty() || n.outputs.size() != 1 || rank_of(n) == 0 || n.has_subgraph()) return false;
  if (ops::activation_of(n)) return true;
  if (kElementwiseBinary.count(n.op_type) && n.inputs.size() == 2) {
    for (const ir::Value* in : n.inputs)
      if (!(is_scalar_constant(in) || (in && in->type == n.outputs[0]->type))) return false;
    return n.opset_version >= 7;  // no legacy broadcast attribute
  }
  if (n.op_type == "BatchNormalization")  // inference form only: one output, no training mode
    return n.opset_version >= 9 && n.attr_int("training_mode", 0) == 0 && activation_rank(n.input(0)) == 4;
  return n.op_type == "Concat" || is_channel_prelu(n);
}

// Regions as disjoint sets of nodes (union-find over node indices).
class Regions {
 public:
  size_t add() {
    parent_.push_back(parent_.size());
    return parent_.size() - 1;
  }
  size_t root(size_t i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  void join(size_t a, size_t b) { parent_[root(a)] = root(b); }

 private:
  std::vector<size_t> parent_;
};

class Converter {
 public:
  Converter(ir::Graph& graph, const PassContext& ctx) : graph_(graph), ctx_(ctx) {}

  Result<bool> run() {
    find_regions();
    if (members_.empty()) return false;
    std::map<size_t, ActivationLayout> region_layouts;  // by region root
    for (size_t i = 0; i < members_.size(); ++i)
      if (!region_layouts.count(regions_.root(i))) region_layouts[regions_.root(i)] = layout_for_region(regions_.root(i));
    std::vector<ActivationLayout> layouts;  // by member
    for (size_t i = 0; i < members_.size(); ++i) layouts.push_back(region_layouts[regions_.root(i)]);
    for (const auto& [root, layout] : region_layouts)
      if (!layout.is_blocked()) block_parts(root, layout, layouts);
    std::vector<const ir::Node*> converted;
    for (size_t i = 0; i < members_.size(); ++i) {
      const ActivationLayout layout = layouts[i];
      if (layout == ActivationLayout::channels_first()) continue;  // no preferred layout fits
      convert(*members_[i], layout);
      converted.push_back(members_[i]);
    }
    if (converted.empty()) return false;
    for (const ir::Node* node : converted) graph_.remove_node(node);
    graph_.remove_unused_values();
    KILN_RETURN_IF_ERROR(graph_.topological_sort());
    return true;
  }

 private:
  // Walks the nodes in order: region starters and the agnostic ops reading a member's output join,
  // each joined to the regions of the members whose outputs it reads.
  void find_regions() {
    std::vector<ir::Node*> order;
    for (const auto& n : graph_.nodes()) order.push_back(n.get());
    for (ir::Node* node : order) {
      std::vector<size_t> producers;
      for (const ir::Value* in : node->inputs) {
        auto it = in && in->producer ? index_.find(in->producer) : index_.end();
        if (it != index_.end()) producers.push_back(it->second);
      }
      if (!ctx_.owns(*node) || (!starts_region(*node) && !(may_join_region(*node) && !producers.empty()))) continue;
      const size_t i = regions_.add();
      index_[node] = i;
      members_.push_back(node);
      for (size_t p : producers) regions_.join(i, p);
    }
  }

  bool is_member_output(const ir::Value* v) const { return v->producer && index_.count(v->producer); }

  // A convolution reading a narrow outside input keeps it channels-first in a blocked region.
  bool reads_channels_first(const ir::Node& node, ActivationLayout layout) const {
    const ir::Value* x = node.input(0);
    return layout.is_blocked() && is_conv(node) && !is_member_output(x) && channels(x) > 0 &&
           channels(x) <= kMaxChannelsFirstInput && channels(x) % layout.block != 0;
  }

  bool block_fits(const ir::Node& node, ActivationLayout layout) const {
    if (is_channel_shuffle(node)) return false;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const ir::Value* in = node.inputs[i];
      if (!in || !is_activation_input(node, i) || (i == 0 && reads_channels_first(node, layout))) continue;
      if (channels(in) <= 0 || channels(in) % layout.block != 0) return false;
    }
    for (const ir::Value* out : node.outputs)
      if (channels(out) <= 0 || channels(out) % layout.block != 0) return false;
    return true;
  }

  // The first preferred layout every member of the region fits (channels-last fits any), else
  // channels-first: the region is left as it is. A region of 1-D or 3-D convolutions (3-d or 5-d
  // tensors) takes channels-last only (for 3-D, oneDNN's plain ncdhw convolution is an im2col gemm,
  // ndhwc its brgconv / jit kernels: R3D-18 240 ms -> 59 ms): oneDNN 2.6 has vector kernels for nwc at every ISA level (AVX-512's
  // brgconv, AVX2's jit), but for nCw8c/nCw16c only some shapes at some levels, the others running
  // its reference code (silero's 1-D convolutions: nwc 3-6 us where ncw's im2col gemm takes 12-22
  // and nCw16c at AVX2 takes milliseconds).
  ActivationLayout layout_for_region(size_t root) {
    const size_t rank = rank_of(*members_[root]);
    for (const ActivationLayout& layout : ctx_.preferences.activation_layouts) {
      if (!layout.is_blocked()) return layout;
      if (rank != 4) continue;
      bool fits = true;
      for (size_t i = 0; i < members_.size() && fits; ++i)
        if (regions_.root(i) == root) fits = block_fits(*members_[i], layout);
      if (fits) return layout;
    }
    return ActivationLayout::channels_first();
  }

  // A region a blocked layout does not fit as a whole (some channel counts are not multiples of
  // its block) may still hold connected parts it fits: each part with at least kMinBlockedConvs
  // convolutions takes the first blocked layout preferred over the region's, reordered at the
  // part's edges like any region's (mlsd's decoder, 64- to 256-channel convolutions that run by
  // Winograd on NCHW16c, next to its encoder's 24- and 144-channel blocks).
  void block_parts(size_t root, ActivationLayout region_layout, std::vector<ActivationLayout>& layouts) {
    if (rank_of(*members_[root]) != 4) return;
    for (const ActivationLayout& layout : ctx_.preferences.activation_layouts) {
      if (layout == region_layout) return;  // only layouts preferred over the region's
      if (!layout.is_blocked()) continue;
      std::vector<bool> fits(members_.size(), false);
      for (size_t i = 0; i < members_.size(); ++i) fits[i] = regions_.root(i) == root && block_fits(*members_[i], layout);
      Regions parts;
      for (size_t i = 0; i < members_.size(); ++i) parts.add();
      for (size_t i = 0; i < members_.size(); ++i) {
        if (!fits[i]) continue;
        for (const ir::Value* in : members_[i]->inputs) {
          auto it = in && in->producer ? index_.find(in->producer) : index_.end();
          if (it != index_.end() && fits[it->second]) parts.join(i, it->second);
        }
      }
      std::map<size_t, int> convs;
      for (size_t i = 0; i < members_.size(); ++i)
        if (fits[i] && is_conv(*members_[i])) ++convs[parts.root(i)];
      bool any = false;
      for (size_t i = 0; i < members_.size(); ++i)
        if (fits[i] && convs[parts.root(i)] >= kMinBlockedConvs) {
          layouts[i] = layout;
          any = true;
        }
      if (any) return;
    }
  }

  // The form of channels-first value `v` stored in `layout`: a member's output, else one
  // reorder made once per value and layout; from the member's stored output directly when `v` is
  // a member's output in another layout (a blocked part next to a channels-last one: one reorder
  // between them, not two through channels-first).
  ir::Value* stored_form(ir::Value* v, ActivationLayout layout) {
    const auto key = std::make_pair(v, layout.name());
    auto it = stored_.find(key);
    if (it != stored_.end()) return it->second;
    ir::Value* s = graph_.add_value(graph_.unique_name(v->name + "_" + layout.name()),
                                    ir::TensorType{v->type.dtype, ops::stored_shape(*v->type.shape, layout).value()});
    auto member = member_outputs_.find(v);
    if (member != member_outputs_.end())
      add_reorder(member->second.first, s, member->second.second, layout, v->name + "_to_" + layout.name());
    else
      add_reorder(v, s, ActivationLayout::channels_first(), layout, v->name + "_to_" + layout.name());
    stored_[key] = s;
    return s;
  }

  // from -> to: a Transpose between channels-first and channels-last, a kiln.Relayout otherwise.
  void add_reorder(ir::Value* in, ir::Value* out, ActivationLayout from, ActivationLayout to, const std::string& name) {
    if (!from.is_blocked() && !to.is_blocked() && (from == ActivationLayout::channels_first() || to == ActivationLayout::channels_first())) {
      const bool to_last = to.kind == ActivationLayout::Kind::kChannelsLast;
      graph_.add_node("Transpose", {in}, {out}, graph_.unique_name(name), "", 13)->attributes["perm"] =
          ir::Attribute::of_ints(to_last ? ops::to_channels_last(in->type.shape->rank())
                                         : ops::to_channels_first(in->type.shape->rank()));
      return;
    }
    ir::Node* relayout = graph_.add_node("Relayout", {in}, {out}, graph_.unique_name(name), "kiln", 1);
    relayout->attributes["from"] = ir::Attribute::of_string(from.name());
    relayout->attributes["to"] = ir::Attribute::of_string(to.name());
  }

  // Replaces `node` by its form in `layout` writing new values; each original output is then
  // produced by a reorder back (removed later if nothing reads it).
  void convert(ir::Node& node, ActivationLayout layout) {
    const bool plain_input = reads_channels_first(node, layout);
    std::vector<ir::Value*> inputs;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      ir::Value* in = node.inputs[i];
      const bool converts = in && is_activation_input(node, i) && !(i == 0 && plain_input);
      inputs.push_back(converts ? stored_form(in, layout) : in);
    }
    std::vector<ir::Value*> stored_outputs;
    for (ir::Value* y : node.outputs)
      stored_outputs.push_back(graph_.add_value(graph_.unique_name(y->name + "_" + layout.name()),
                                                ir::TensorType{y->type.dtype, ops::stored_shape(*y->type.shape, layout).value()}));
    ir::Node* twin = graph_.add_node(node.op_type, inputs, stored_outputs, node.name, node.domain, node.opset_version);
    twin->attributes = node.attributes;
    twin->origins = node.source_nodes();
    set_layout(node, *twin, layout, plain_input);
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      ir::Value* y = node.outputs[i];
      stored_[std::make_pair(y, layout.name())] = stored_outputs[i];
      member_outputs_[y] = {stored_outputs[i], layout};
      // The original output keeps its name and readers; node is removed after the walk.
      node.outputs[i] = graph_.add_value(graph_.unique_name(y->name + "_replaced"), y->type);
      node.outputs[i]->producer = &node;
      add_reorder(stored_outputs[i], y, layout, ActivationLayout::channels_first(), y->name + "_to_nchw");
    }
  }

  // A per-channel PRelu slope ([C, 1, ...]) as the stored layout broadcasts it: [C] on the last
  // axis for channels-last, [C/b, 1, 1, b] for blocked (channel c = block c/b, lane c%b); one
  // value stays as it is.
  ir::Value* channel_slope(ir::Value* slope, ActivationLayout layout) {
    const Tensor& values = *slope->initializer;
    if (values.element_count() == 1) return slope;
    const int64_t c = values.element_count();
    std::vector<int64_t> shape{c};
    if (layout.is_blocked()) shape = {c / layout.block, 1, 1, layout.block};
    ir::Value* out = graph_.add_value(graph_.unique_name(slope->name + "_" + layout.name()), ir::make_type(DType::kFloat, shape));
    out->initializer = Tensor::allocate(DType::kFloat, shape);
    std::copy_n(values.data<float>(), c, out->initializer->data<float>());
    return out;
  }

  void set_layout(const ir::Node& node, ir::Node& twin, ActivationLayout layout, bool plain_input) {
    if (is_conv(node)) {
      twin.op_type = "FusedConv";
      twin.domain = "kiln";
      twin.opset_version = 1;
      twin.attributes["layout"] = ir::Attribute::of_string(layout.name());
      if (plain_input) twin.attributes["input_layout"] = ir::Attribute::of_string("NCHW");
    } else if ((kPools.count(node.op_type) || node.op_type == "BatchNormalization") && node.domain.empty()) {
      twin.op_type = "InLayout";
      twin.domain = "kiln";
      twin.opset_version = 1;
      twin.attributes["op"] = ir::Attribute::of_string(node.op_type);
      twin.attributes["op_version"] = ir::Attribute::of_int(node.opset_version);
      twin.attributes["layout"] = ir::Attribute::of_string(layout.name());
    } else if (is_channel_shuffle(node)) {
      twin.attributes["layout"] = ir::Attribute::of_string("NHWC");
    } else if (is_channel_prelu(node)) {
      twin.inputs[1] = channel_slope(node.inputs[1], layout);
    } else if (node.op_type == "Concat" || node.op_type == "Split") {
      const auto rank = static_cast<int64_t>(rank_of(node));
      const auto axis = static_cast<size_t>((node.attr_int("axis", node.op_type == "Concat" ? 1 : 0) + rank) % rank);
      // Blocked tensors keep the channels-first axis order (channel blocks stay on axis 1).
      const int64_t stored_axis = layout.is_blocked() ? static_cast<int64_t>(axis) : ops::to_channels_first(rank_of(node))[axis];
      twin.attributes["axis"] = ir::Attribute::of_int(stored_axis);
      if (node.op_type == "Split") split_sizes_in_stored_dims(node, twin, axis);
    }
  }

  // A Split's sizes as its stored outputs have them along the axis (channel blocks, for a blocked
  // channel split): always explicit, as the `split` input (opset 13 on) or attribute.
  void split_sizes_in_stored_dims(const ir::Node& node, ir::Node& twin, size_t axis) {
    std::vector<int64_t> sizes;
    for (size_t i = 0; i < twin.outputs.size(); ++i) {
      const ir::Dim& stored = (*twin.outputs[i]->type.shape)[static_cast<size_t>(twin.attr_int("axis", 0))];
      sizes.push_back(stored.is_static() ? stored.value() : (*node.outputs[i]->type.shape)[axis].value());
    }
    twin.attributes.erase("num_outputs");
    if (twin.opset_version < 13) {
      twin.attributes["split"] = ir::Attribute::of_ints(sizes);
      return;
    }
    const auto count = static_cast<int64_t>(sizes.size());
    ir::Value* split = graph_.add_constant(graph_.unique_name(node.name + "_stored_split"),
                                           Tensor::from_vector<int64_t>(DType::kInt64, {count}, sizes));
    twin.inputs.resize(2);
    twin.inputs[1] = split;
  }

  ir::Graph& graph_;
  const PassContext& ctx_;
  Regions regions_;
  std::vector<ir::Node*> members_;             // region nodes in graph order
  std::map<const ir::Node*, size_t> index_;  // member -> its index in members_
  std::map<std::pair<const ir::Value*, std::string>, ir::Value*> stored_;  // (value, layout name) -> stored form
  std::map<const ir::Value*, std::pair<ir::Value*, ActivationLayout>> member_outputs_;  // output -> its stored form
};

}  // namespace

Result<bool> choose_activation_layouts(ir::Graph& graph, const PassContext& ctx) {
  if (!ctx.preferences.prefers(ops::GraphForm::kActivationLayouts)) return false;
  return Converter(graph, ctx).run();
}

}  // namespace kiln::passes
