// The precision assignment stage (see precision_assignment.h).
#include "kiln/compiler/precision_assignment.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>

#include "kiln/ops/fused_product_inputs.h"

namespace kiln::compiler {
namespace {

// Whether a node stands for a kept source node (by its own name when it has no origins).
bool kept(const ir::Node& node, const std::set<std::string>& kept_sources) {
  for (const std::string& source : node.source_nodes())
    if (kept_sources.count(source)) return true;
  return false;
}

bool finite_weights(const ir::Node& product) {
  const Tensor& w = *product.input(1)->initializer;
  const float* v = w.data<float>();
  return std::all_of(v, v + w.element_count(), [](float x) { return std::isfinite(x); });
}

// The value a fused product sums into its output; empty without one.
std::string residual_name(const ir::Node& product) {
  const ir::Value* residual = product.input(ops::kFusedResidualInput);
  return residual ? residual->name : "";
}

// The values an assignment kept in `dtype` between products (as keep_reduced_between_products
// leaves them), in graph order: those products write in it (output_dtype), and those that nodes
// reading one pass on in it (a max pool's output).
std::vector<ir::Value*> kept_values_in(const ir::Graph& graph, DType dtype) {
  std::set<const ir::Value*> kept;
  std::vector<ir::Value*> values;
  for (const auto& node : graph.nodes()) {
    ir::Value* out = node->outputs.empty() ? nullptr : node->outputs[0];
    if (!out) continue;
    const bool written = node->attr_string(ops::kOutputDtypeAttribute) == dtype_name(dtype);
    const bool passed = !node->has_attr(ops::kOutputDtypeAttribute) && kept.count(node->input(0)) && out->type.dtype == dtype;
    if (!written && !passed) continue;
    kept.insert(out);
    values.push_back(out);
  }
  return values;
}

// Undoes an earlier assignment's reduced values (a graph assigned again): float32 throughout.
void clear_reduced_values(ir::Graph& graph) {
  for (const DType dtype : {DType::kBFloat16, DType::kUInt8})
    for (ir::Value* value : kept_values_in(graph, dtype)) value->type.dtype = DType::kFloat;
  for (const auto& node : graph.nodes())
    for (const char* attribute : {ops::kOutputDtypeAttribute, ops::kOutputScaleAttribute, ops::kOutputZeroPointAttribute,
                                  ops::kResidualScaleAttribute, ops::kResidualZeroPointAttribute})
      node->attributes.erase(attribute);
}

// The element type a value between two products of `precision` is kept in.
DType kept_dtype(ops::Precision precision) { return precision == ops::Precision::kInt8 ? DType::kUInt8 : DType::kBFloat16; }

// Whether `node`'s provider passes a value kept in `precision`'s type through it (Provider::
// passes_reduced_activations: a max pool).
bool passes_through(const ir::Node& node, ops::Precision precision,
                    const std::map<const ir::Node*, const providers::Provider*>& provider_of) {
  const auto provider = provider_of.find(&node);
  return provider != provider_of.end() && provider->second->passes_reduced_activations(precision, node);
}

// The calibrated quantizations with one per group of values joined by nodes that pass int8's uint8
// through: a max pool's input and output are one value in two resolutions (the max of quantized
// values is the quantized max), so both take one quantization: the group's own where its
// calibrated members agree (a pool's input is no product's input, and uncalibrated), else one over
// the union of their ranges. Its products read their input in it whether or not the group ends up kept.
std::map<std::string, ops::Uint8Quantization> shared_through_passes(const ir::Graph& graph,
                                                                    const std::map<const ir::Node*, const providers::Provider*>& provider_of,
                                                                    std::map<std::string, ops::Uint8Quantization> calibrated) {
  std::map<std::string, std::string> parent;  // union-find over value names
  const std::function<std::string(const std::string&)> root = [&](const std::string& name) -> std::string {
    const auto up = parent.find(name);
    return up == parent.end() || up->second == name ? name : up->second = root(up->second);
  };
  for (const auto& node : graph.nodes())
    if (node->input(0) && !node->outputs.empty() && node->outputs[0] && passes_through(*node, ops::Precision::kInt8, provider_of))
      parent[root(node->outputs[0]->name)] = root(node->input(0)->name);
  std::map<std::string, std::vector<std::string>> groups;
  for (const auto& [name, up] : parent) {
    groups[root(name)].push_back(name);
    groups[root(name)].push_back(up);
  }
  for (auto& [group_root, members] : groups) {
    std::sort(members.begin(), members.end());
    members.erase(std::unique(members.begin(), members.end()), members.end());
    std::optional<ops::Uint8Quantization> shared;
    float low = 0, high = 0;
    bool agree = true;
    for (const std::string& member : members) {
      const auto q = calibrated.find(member);
      if (q == calibrated.end()) continue;
      agree = agree && (!shared || (shared->scale == q->second.scale && shared->zero_point == q->second.zero_point));
      if (!shared) shared = q->second;
      low = std::min(low, -static_cast<float>(q->second.zero_point) * q->second.scale);
      high = std::max(high, static_cast<float>(255 - q->second.zero_point) * q->second.scale);
    }
    if (!shared) continue;
    const ops::Uint8Quantization q = agree ? *shared : ops::uint8_quantization(low, high);
    for (const std::string& member : members) calibrated[member] = q;
  }
  return calibrated;
}

// Keeps in its precision's type (bfloat16, uint8) each value a bf16 or int8 product writes and only
// products of that precision read, each as its activation input (0), where the providers of both
// keep such activations, or nodes pass it through (a max pool: Provider::passes_reduced_activations)
// into values kept alike, or as their residual (summed in its own quantization: residual_scale
// and residual_zero_point): not a graph output, not read from a control-flow body, not written by
// a product that sums a float32 residual into its output (the sum is in the output's type); for
// int8, a value with a calibrated quantization (its readers' input_scale and input_zero_point, one
// through the passing nodes: shared_through_passes), which the writer applies to its output
// (output_scale, output_zero_point). The writer says the type, each reader the type of its own
// output ("float" unless it too writes a kept value: nodes come in order). A plain Conv or MatMul
// among them takes its fused form, whose output type the attribute sets. Returns the values kept,
// by precision.
std::map<ops::Precision, std::vector<std::string>> keep_reduced_between_products(
    ir::Graph& graph, const std::map<const ir::Node*, const providers::Provider*>& provider_of,
    const std::map<std::string, ops::Uint8Quantization>& calibrated) {
  const auto keeps = [&](const ir::Node& node, ops::Precision precision) {
    const auto provider = provider_of.find(&node);
    return ops::node_precision(node) == precision && provider != provider_of.end() &&
           provider->second->keeps_reduced_activations(precision, node);
  };
  std::map<const ir::Value*, std::vector<std::pair<ir::Node*, size_t>>> readers;
  std::set<std::string> captured;
  for (const auto& node : graph.nodes()) {
    for (size_t i = 0; i < node->inputs.size(); ++i)
      if (node->inputs[i]) readers[node->inputs[i]].emplace_back(node.get(), i);
    for (const std::string& name : ir::names_captured_by(*node)) captured.insert(name);
  }
  // Adds `value`, and the values passing nodes carry it into, to `region`, and the products reading
  // any of them (as their activation or their residual) to `products`; false when some reader would
  // need one in float32.
  using Reader = std::pair<ir::Node*, size_t>;
  const std::function<bool(ir::Value*, ops::Precision, std::vector<ir::Value*>&, std::vector<Reader>&)> collect =
      [&](ir::Value* value, ops::Precision precision, std::vector<ir::Value*>& region, std::vector<Reader>& products) {
        const auto& read_by = readers[value];
        if (read_by.empty() || graph.is_graph_output(value) || captured.count(value->name)) return false;
        region.push_back(value);
        for (const auto& [reader, input] : read_by) {
          if ((input == 0 || input == ops::kFusedResidualInput) && keeps(*reader, precision)) {
            products.emplace_back(reader, input);
          } else if (input != 0 || !passes_through(*reader, precision, provider_of) || reader->outputs.empty() ||
                     !reader->outputs[0] || !collect(reader->outputs[0], precision, region, products)) {
            return false;
          }
        }
        return true;
      };
  std::map<ops::Precision, std::vector<std::string>> kept_values;
  for (const auto& owned : graph.nodes()) {
    ir::Node& writer = *owned;
    const ops::Precision precision = ops::node_precision(writer);
    ir::Value* value = writer.outputs.empty() ? nullptr : writer.outputs[0];
    if (!value || precision == ops::Precision::kFp32 || !keeps(writer, precision)) continue;
    // A residual sums into the output in the output's type: one of a float32 residual stays float32.
    const ir::Value* residual = writer.input(ops::kFusedResidualInput);
    if (residual && residual->type.dtype != kept_dtype(precision)) continue;
    const auto quantization = calibrated.find(value->name);
    if (precision == ops::Precision::kInt8 && quantization == calibrated.end()) continue;
    std::vector<ir::Value*> region;
    std::vector<Reader> products;
    if (!collect(value, precision, region, products)) continue;
    for (ir::Value* kept : region) {
      kept->type.dtype = kept_dtype(precision);
      kept_values[precision].push_back(kept->name);
    }
    ops::as_fused_product(writer);
    writer.attributes[ops::kOutputDtypeAttribute] = ir::Attribute::of_string(dtype_name(value->type.dtype));
    if (precision == ops::Precision::kInt8) {
      writer.attributes[ops::kOutputScaleAttribute] = ir::Attribute::of_float(quantization->second.scale);
      writer.attributes[ops::kOutputZeroPointAttribute] = ir::Attribute::of_int(quantization->second.zero_point);
    }
    for (const auto& [reader, input] : products) {
      ops::as_fused_product(*reader);
      if (!reader->has_attr(ops::kOutputDtypeAttribute))
        reader->attributes[ops::kOutputDtypeAttribute] = ir::Attribute::of_string(dtype_name(DType::kFloat));
      if (input == ops::kFusedResidualInput && precision == ops::Precision::kInt8) {
        reader->attributes[ops::kResidualScaleAttribute] = ir::Attribute::of_float(quantization->second.scale);
        reader->attributes[ops::kResidualZeroPointAttribute] = ir::Attribute::of_int(quantization->second.zero_point);
      }
    }
  }
  return kept_values;
}

// The names of the values an artifact's graph keeps in `dtype` between products.
std::vector<std::string> recorded_values(const ir::Graph& graph, DType dtype) {
  std::vector<std::string> names;
  for (const ir::Value* value : kept_values_in(graph, dtype)) names.push_back(value->name);
  return names;
}

}  // namespace

Status resolve_keep_fp32(const ir::Graph& source, PrecisionOptions& options) {
  options.kept_source_nodes.clear();
  for (const std::string& entry : options.keep_fp32) {
    bool found = false;
    // The graph's nodes and those of its control-flow bodies, which compile as graphs of their own.
    std::function<void(const ir::Graph&)> visit = [&](const ir::Graph& graph) {
      for (const auto& node : graph.nodes()) {
        if (node->name == entry || node->op_type == entry) {
          options.kept_source_nodes.push_back(node->name);
          found = true;
        }
        ir::for_each_subgraph(*node, visit);
      }
    };
    visit(source);
    if (!found) return invalid_argument("keep_fp32 names '" + entry + "', which is neither a node nor an op type of the model");
  }
  return Status::ok();
}

Status check_precision_request(const partition::ProviderList& providers, const PrecisionOptions& options) {
  for (const ops::Precision p : options.preference) {
    const providers::Capability first = providers.front()->computes_in(p);
    if (!first.supported) return unsupported_target(std::string("precision ") + ops::precision_name(p) + ": " + first.reason);
  }
  return Status::ok();
}

PrecisionEvidence assign_precision(ir::Graph& graph, const partition::PartitionMap& placed, const partition::ProviderList& providers,
                                   const PrecisionOptions& options) {
  PrecisionEvidence evidence;
  evidence.requested = options.preference;
  const bool reduced = std::any_of(options.preference.begin(), options.preference.end(),
                                   [](ops::Precision p) { return p != ops::Precision::kFp32; });
  evidence.keep_fp32 = options.keep_fp32;
  std::map<const ir::Node*, const providers::Provider*> provider_of;
  for (const partition::Assignment& a : placed.assignments)
    for (const auto& provider : providers)
      if (provider->name() == a.provider) provider_of[a.node] = provider.get();
  const std::set<std::string> keep(options.kept_source_nodes.begin(), options.kept_source_nodes.end());
  const std::set<std::string> fall_back(options.fallback_source_nodes.begin(), options.fallback_source_nodes.end());
  const std::map<std::string, ops::Uint8Quantization> calibrated = shared_through_passes(graph, provider_of, options.calibrated_inputs);
  clear_reduced_values(graph);
  std::vector<ir::Node*> recorded;  // the node of each of evidence.products
  // Marks `node` (recorded as `record`) to compute in `p`.
  const auto mark = [&](ir::Node& node, ops::Precision p, const providers::Provider& provider, NodePrecision& record) {
    node.attributes[ops::kPrecisionAttribute] = ir::Attribute::of_string(ops::precision_name(p));
    if (p == ops::Precision::kInt8) {
      record.weight_levels = provider.int8_weight_levels();
      node.attributes[ops::kWeightScalesAttribute] = ir::Attribute::of_floats(
          ops::symmetric_int8_scales(*node.input(1)->initializer, ops::weight_channel_axis(node), record.weight_levels));
      const auto input = calibrated.find(record.input);
      if (input != calibrated.end()) {
        node.attributes[ops::kInputScaleAttribute] = ir::Attribute::of_float(input->second.scale);
        node.attributes[ops::kInputZeroPointAttribute] = ir::Attribute::of_int(input->second.zero_point);
        record.calibrated = input->second;
      }
    }
    record.precision = p;
    ++evidence.reduced;
  };
  const auto unmark = [](ir::Node& node) {
    for (const char* attribute : {ops::kPrecisionAttribute, ops::kWeightScalesAttribute, ops::kInputScaleAttribute, ops::kInputZeroPointAttribute})
      node.attributes.erase(attribute);
  };
  // Products reduced only where neither edge converts (Provider::computes_where_kept): index into
  // evidence.products, and the reason they would otherwise stay float32.
  std::vector<std::pair<size_t, std::string>> where_kept;
  for (const auto& owned : graph.nodes()) {
    ir::Node* node = owned.get();
    if (!ops::reducible_product(*node)) continue;
    unmark(*node);
    NodePrecision record{node->name, node->op_type, node->source_nodes(), ops::Precision::kFp32, "", 0, node->input(0)->name, {},
                         residual_name(*node), {}};
    const auto provider = provider_of.find(node);
    if (!reduced) {
      record.reason = "fp32 asked";
    } else if (kept(*node, keep)) {
      record.reason = "kept in fp32 (keep_fp32)";
    } else if (kept(*node, fall_back)) {
      record.reason = "kept in fp32 by the accuracy fallback (among the products most sensitive to the reduced precision)";
    } else if (provider == provider_of.end()) {
      record.reason = "not placed";
    } else {
      std::optional<ops::Precision> if_kept;  // the first precision it takes where its edges stay in it
      for (const ops::Precision p : options.preference) {
        if (p == ops::Precision::kFp32) break;
        const bool int8_weights = p != ops::Precision::kInt8 || finite_weights(*node);
        const providers::Capability c = int8_weights ? provider->second->computes_in(p, node)
                                                     : providers::Capability::no("int8 cannot hold its weights: some are infinite or NaN");
        if (!c.supported) {
          record.reason += (record.reason.empty() ? "" : "; ") + c.reason;
          if (!if_kept && int8_weights && provider->second->computes_where_kept(p, *node)) if_kept = p;
          continue;
        }
        mark(*node, p, *provider->second, record);
        record.reason.clear();
        break;
      }
      if (record.precision == ops::Precision::kFp32 && if_kept) {
        where_kept.emplace_back(evidence.products.size(), record.reason);
        mark(*node, *if_kept, *provider->second, record);
        record.reason.clear();
      }
    }
    evidence.products.push_back(std::move(record));
    recorded.push_back(node);
  }
  // Values kept between products; a product reduced only where its edges are kept goes back to
  // float32 where one is not, which may leave its neighbours' values unkept in turn: again until none does.
  std::map<ops::Precision, std::vector<std::string>> kept;
  for (bool again = true; again;) {
    clear_reduced_values(graph);
    kept = keep_reduced_between_products(graph, provider_of, calibrated);
    std::set<std::string> kept_names;
    for (const auto& [precision, names] : kept) kept_names.insert(names.begin(), names.end());
    again = false;
    for (const auto& [index, reason] : where_kept) {
      NodePrecision& record = evidence.products[index];
      ir::Node& node = *recorded[index];
      if (record.precision == ops::Precision::kFp32 || (kept_names.count(node.input(0)->name) && kept_names.count(node.outputs[0]->name)))
        continue;
      unmark(node);
      record = NodePrecision{record.node, record.op_type, record.sources, ops::Precision::kFp32, reason, 0, record.input, {}, record.residual, {}};
      --evidence.reduced;
      again = true;
    }
  }
  evidence.bf16_values = std::move(kept[ops::Precision::kBf16]);
  evidence.uint8_values = std::move(kept[ops::Precision::kInt8]);
  for (size_t i = 0; i < recorded.size(); ++i) {
    evidence.products[i].op_type = recorded[i]->op_type;  // some took their fused form
    evidence.products[i].residual_quantization = ops::residual_quantization(*recorded[i]);
  }
  return evidence;
}

PrecisionEvidence recorded_precision(const ir::Graph& graph) {
  PrecisionEvidence evidence;
  evidence.requested.clear();
  for (const auto& node : graph.nodes()) {
    if (!ops::reducible_product(*node)) continue;
    NodePrecision record{node->name, node->op_type, node->source_nodes(), ops::node_precision(*node), "", 0, node->input(0)->name, {},
                         residual_name(*node), ops::residual_quantization(*node)};
    record.calibrated = ops::input_quantization(*node);
    if (record.precision != ops::Precision::kFp32) {
      if (std::find(evidence.requested.begin(), evidence.requested.end(), record.precision) == evidence.requested.end())
        evidence.requested.push_back(record.precision);
      ++evidence.reduced;
    } else {
      record.reason = "recorded fp32";
    }
    evidence.products.push_back(std::move(record));
  }
  if (evidence.requested.empty()) evidence.requested = {ops::Precision::kFp32};
  evidence.bf16_values = recorded_values(graph, DType::kBFloat16);
  evidence.uint8_values = recorded_values(graph, DType::kUInt8);
  return evidence;
}

void BodyPrecision::record(const std::vector<NodePrecision>& products) {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (const NodePrecision& p : products) products_.insert_or_assign(p.node, p);
}

std::vector<NodePrecision> BodyPrecision::products() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::vector<NodePrecision> all;
  for (const auto& [name, p] : products_) all.push_back(p);
  return all;
}

}  // namespace kiln::compiler
