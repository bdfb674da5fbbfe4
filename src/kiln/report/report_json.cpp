// Report -> JSON (schema: docs/REPORT.md). Bump kSchemaVersion on any incompatible change.
#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "kiln/report/report.h"

namespace kiln::report {

namespace {

constexpr int kSchemaVersion = 1;

using nlohmann::json;

json tensors_json(const std::vector<TensorInfo>& tensors) {
  json out = json::array();
  for (const auto& t : tensors) out.push_back({{"name", t.name}, {"type", type_text(t)}});
  return out;
}

json model_json(const ModelInfo& m) {
  return {{"path", m.path},
          {"sha256", m.sha256},
          {"file_bytes", m.file_bytes},
          {"ir_version", m.ir_version},
          {"producer", m.producer},
          {"opset_imports", m.opset_imports},
          {"metadata", m.metadata},
          {"inputs", tensors_json(m.inputs)},
          {"outputs", tensors_json(m.outputs)},
          {"nodes", m.nodes},
          {"op_histogram", m.op_histogram},
          {"parameters", m.parameters},
          {"parameter_bytes", m.parameter_bytes}};
}

json analysis_json(const analysis::InferenceEvidence& a) {
  json disagreements = json::array();
  for (const auto& d : a.declaration_disagreements)
    disagreements.push_back({{"value", d.value}, {"where", d.where}, {"declared", d.declared}, {"used", d.used}});
  return {{"nodes", a.nodes},
          {"values_static", a.values_with_static_shape},
          {"values_symbolic", a.values_with_symbolic_shape},
          {"values_unknown_rank", a.values_without_shape},
          {"values_propagated", a.values_propagated},
          {"symbols", a.symbols},
          {"unresolved", a.unresolved},
          {"declared_shape_disagreements", disagreements}};
}

json passes_json(const std::vector<passes::PassRun>& passes) {
  json out = json::array();
  for (const auto& p : passes)
    out.push_back({{"name", p.pass},
                   {"provider", p.provider},
                   {"round", p.round},
                   {"ms", p.wall_ms},
                   {"nodes_before", p.nodes_before},
                   {"nodes_after", p.nodes_after},
                   {"changed", p.changed}});
  return out;
}

json assignment_json(const partition::Assignment& a) {
  json node = {{"node", a.node_name}, {"op", a.op_type}, {"provider", a.provider}, {"fallback", a.fallback}};
  node["deferred"] = a.deferred.empty() ? json(nullptr) : json(a.deferred);
  return node;
}

json partition_json(const partition::PartitionMap& p) {
  json nodes = json::array();
  json declined = json::array();
  for (const auto& a : p.assignments) {
    nodes.push_back(assignment_json(a));
    for (const auto& d : a.declined)
      declined.push_back({{"node", a.node_name}, {"op", a.op_type}, {"provider", d.provider}, {"reason", d.reason}});
  }
  json body_nodes = json::array();
  for (const auto& a : p.body_assignments)
    body_nodes.push_back(assignment_json(a));
  json parts = json::array();
  for (const auto& part : p.partitions)
    parts.push_back({{"provider", part.provider}, {"first_node", part.first_node}, {"nodes", part.node_count}});
  json late = json::array();
  for (const auto& d : p.late_declines)
    late.push_back({{"node", d.node}, {"op", d.op_type}, {"provider", d.provider}, {"reason", d.reason}, {"placed_on", d.placed_on}});
  return {{"policy", p.policy},          {"nodes", nodes},          {"body_nodes", body_nodes}, {"late_declines", late},
          {"declined", declined},        {"partitions", parts},
          {"fallback_nodes", p.fallback_nodes}, {"fallback_share", p.fallback_share()},
          {"flops", p.total_flops}, {"fallback_flops", p.fallback_flops}, {"fallback_flops_share", p.fallback_flops_share()},
          {"layout_boundaries", p.layout_boundaries},
          {"boundary_edges", p.boundary_edges}};
}

json parity_json(const std::vector<ParityResult>& checks) {
  json out = json::array();
  for (const auto& p : checks) {
    json entry = {{"output", p.name}, {"comparable", p.comparable}, {"elements", p.elements}};
    if (p.comparable) {
      entry["max_abs_error"] = p.max_abs_error;
      entry["reference_scale"] = p.reference_scale;
      entry["relative_error"] = p.relative_error();
    } else {
      entry["mismatch"] = p.mismatch;
    }
    out.push_back(entry);
  }
  return out;
}

json run_json(const RunSection& r) {
  json ops = json::array();
  for (const auto& o : r.op_times) ops.push_back({{"op", o.op_type}, {"calls", o.calls}, {"ms", o.ms}});
  const std::vector<double> steady = r.steady();
  return {{"runs", r.runs},
          {"first_run_ms", r.first_run_ms},
          {"steady_median_ms", median(steady)},
          {"steady_min_ms", steady.empty() ? 0.0 : *std::min_element(steady.begin(), steady.end())},
          {"latencies_ms", r.latencies_ms},
          {"dropped_latencies", r.dropped_latencies},
          {"op_times", ops}};
}

json guards_json(const GuardSection& g) {
  json recent = json::array();
  for (const auto& f : g.recent)
    recent.push_back({{"input", f.input}, {"dim", f.dim}, {"symbol", f.symbol}, {"value", f.value}, {"range", f.range}, {"action", f.action}});
  const double overhead = g.real_elements > 0 ? static_cast<double>(g.padded_elements) / static_cast<double>(g.real_elements) - 1 : 0;
  return {{"profile", g.profile},   {"policy", g.policy},          {"checks", g.checks},
          {"check_us", g.check_us}, {"failures", g.failures},      {"recent_failures", recent},
          {"padded_runs", g.padded_runs}, {"padding_overhead", overhead}};
}

json tuning_json(const TuningSection& t) {
  json choices = json::array();
  for (const TuningSection::Choice& c : t.choices)
    choices.push_back({{"node", c.node}, {"problem", c.problem}, {"candidate_ms", c.candidate_ms}, {"chosen", c.chosen}, {"source", c.source}});
  return {{"enabled", t.enabled},       {"budget_ms", t.budget_ms},       {"spent_ms", t.spent_ms},
          {"measured", t.measured},     {"cache_hits", t.cache_hits},     {"cache_corrupted", t.cache_corrupted},
          {"cache_foreign", t.cache_foreign}, {"choices", choices}};
}

json execution_json(const ExecutionSection& e) {
  json recent = json::array();
  for (const auto& v : e.recent)
    recent.push_back({{"input_shapes", v.input_shapes}, {"compile_ms", v.compile_ms}, {"arena_bytes", v.arena_bytes}});
  json generated = nullptr;
  if (e.generated)
    generated = {{"compiler", e.generated->compiler},
                 {"cache_folder", e.generated->cache_folder},
                 {"cache_writable", e.generated->cache_writable},
                 {"modules", e.generated->modules},
                 {"kernels", e.generated->kernels},
                 {"object_cache_hits", e.generated->object_cache_hits},
                 {"object_cache_misses", e.generated->object_cache_misses},
                 {"corrupted_entries", e.generated->corrupted_entries},
                 {"artifact_objects", e.generated->artifact_objects},
                 {"compile_ms", e.generated->compile_ms},
                 {"source_bytes", e.generated->source_bytes}};
  return {{"mode", e.mode},
          {"max_variants", e.max_variants},
          {"max_concurrent_runs", e.max_concurrent_runs},
          {"lanes", e.lanes},
          {"lane_plans_built", e.lane_plans_built},
          {"streams", e.streams},
          {"stream_plans_built", e.stream_plans_built},
          {"variants_built", e.variants_built},
          {"live_variants", e.live_variants},
          {"cache_hits", e.cache_hits},
          {"cache_misses", e.cache_misses},
          {"evictions", e.evictions},
          {"compile_ms", e.compile_ms},
          {"packed_weight_bytes", e.packed_weight_bytes},
          {"packed_in_place_bytes", e.packed_in_place_bytes},
          {"profile_max_arena_bytes", e.profile_max_arena_bytes},
          {"deferred_load_plan", e.deferred_load_plan.empty() ? json() : json(e.deferred_load_plan)},
          {"recent_variants", recent},
          {"generated", generated}};
}

json precision_json(const PrecisionSection& p) {
  json products = json::array();
  for (const auto& product : p.products) {
    json entry = {{"node", product.node}, {"op", product.op_type}, {"precision", product.precision}, {"sources", product.sources}};
    if (!product.reason.empty()) entry["reason"] = product.reason;
    if (product.weight_levels > 0) entry["weight_levels"] = product.weight_levels;
    if (!product.input.empty()) entry["input"] = product.input;
    if (product.input_scale > 0) entry["input_quantization"] = {{"scale", product.input_scale}, {"zero_point", product.input_zero_point}};
    if (!product.residual.empty()) entry["residual"] = product.residual;
    if (product.residual_scale > 0)
      entry["residual_quantization"] = {{"scale", product.residual_scale}, {"zero_point", product.residual_zero_point}};
    products.push_back(std::move(entry));
  }
  json accuracy = json::array();
  for (const OutputAccuracy& a : p.accuracy) {
    json entry = {{"output", a.output},
                  {"max_abs_error", a.max_abs_error},
                  {"max_relative_error", a.max_relative_error},
                  {"cosine", a.cosine}};
    if (a.top1 >= 0) entry["top1_agreement"] = a.top1;
    if (a.top5 >= 0) entry["top5_agreement"] = a.top5;
    accuracy.push_back(std::move(entry));
  }
  json doc = {{"requested", p.requested}, {"keep_fp32", p.keep_fp32}, {"reduced_products", p.reduced}, {"products", products}};
  if (!p.bf16_values.empty()) doc["bf16_values"] = p.bf16_values;
  if (!p.uint8_values.empty()) doc["uint8_values"] = p.uint8_values;
  if (!p.auto_trials.empty()) doc["auto_trials"] = p.auto_trials;
  if (!p.fallback.empty()) doc["fallback"] = p.fallback;
  if (!p.calibration.method.empty())
    doc["calibration"] = {{"method", p.calibration.method},
                          {"count", p.calibration.count},
                          {"sha256", p.calibration.sha256},
                          {"calibrated_products", p.calibration.calibrated_products}};
  if (!p.accuracy.empty())
    doc["accuracy"] = {{"validation_inputs", p.validation_inputs},
                       {"validation_count", p.validation_count},
                       {"validation_sha256", p.validation_sha256},
                       {"outputs", accuracy}};
  return doc;
}

}  // namespace

PrecisionSection precision_from_json(const json& section) {
  PrecisionSection p;
  p.requested = section.value("requested", "fp32");
  p.keep_fp32 = section.value("keep_fp32", std::vector<std::string>{});
  p.reduced = section.value("reduced_products", int64_t{0});
  for (const json& product : section.value("products", json::array())) {
    const json quantization = product.value("input_quantization", json::object());
    const json residual = product.value("residual_quantization", json::object());
    p.products.push_back({product.value("node", ""), product.value("op", ""), product.value("precision", ""), product.value("reason", ""),
                          product.value("sources", std::vector<std::string>{}), product.value("weight_levels", 0), product.value("input", ""),
                          quantization.value("scale", 0.0f), quantization.value("zero_point", int32_t{0}), product.value("residual", ""),
                          residual.value("scale", 0.0f), residual.value("zero_point", int32_t{0})});
  }
  const json calibration = section.value("calibration", json::object());
  p.calibration = {calibration.value("method", ""), calibration.value("count", int64_t{0}), calibration.value("sha256", ""),
                   calibration.value("calibrated_products", int64_t{0})};
  p.bf16_values = section.value("bf16_values", std::vector<std::string>{});
  p.uint8_values = section.value("uint8_values", std::vector<std::string>{});
  p.auto_trials = section.value("auto_trials", std::vector<std::string>{});
  p.fallback = section.value("fallback", std::vector<std::string>{});
  const json accuracy = section.value("accuracy", json::object());
  p.validation_inputs = accuracy.value("validation_inputs", "");
  p.validation_count = accuracy.value("validation_count", int64_t{0});
  p.validation_sha256 = accuracy.value("validation_sha256", "");
  for (const json& o : accuracy.value("outputs", json::array()))
    p.accuracy.push_back({o.value("output", ""), o.value("max_abs_error", 0.0), o.value("max_relative_error", 0.0), o.value("cosine", 1.0),
                          o.value("top1_agreement", -1.0), o.value("top5_agreement", -1.0)});
  return p;
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

nlohmann::json to_json_value(const Report& report) {
  json kernels = json::array();
  for (const auto& k : report.kernels)
    kernels.push_back({{"op", k.op_type}, {"provider", k.provider}, {"count", k.count}});
  const MemorySection& m = report.memory;
  json doc = {
      {"schema_version", kSchemaVersion},
      {"kiln_version", report.kiln_version},
      {"options", report.options},
      {"model", model_json(report.model)},
      {"stages_ms",
       {{"import", report.stages.import_ms},
        {"analysis", report.stages.analysis_ms},
        {"passes", report.stages.passes_ms},
        {"partition", report.stages.partition_ms},
        {"plan", report.stages.plan_ms},
        {"tuning", report.stages.tuning_ms},
        {"load", report.stages.load_ms}}},
      {"analysis", analysis_json(report.analysis)},
      {"passes", passes_json(report.passes)},
      {"nodes_after_passes", report.nodes_after_passes},
      {"partition", partition_json(report.partition)},
      {"precision", precision_json(report.precision)},
      {"kernels", kernels},
      {"memory",
       {{"input_shapes", m.input_shapes},
        {"arena_bytes", m.arena_bytes},
        {"naive_bytes", m.naive_bytes},
        {"buffers", m.buffers},
        {"reused_buffers", m.reused_buffers},
        {"concats_in_place", m.concats_in_place},
        {"dynamic_values", m.dynamic_values},
        {"kernel_reorders", m.kernel_reorders},
        {"output_bytes", m.output_bytes},
        {"limit_bytes", m.limit_bytes},
        {"planned_bytes", m.planned_bytes},
        {"in_use_bytes", m.in_use_bytes},
        {"peak_bytes", m.peak_bytes},
        {"mapped_bytes", m.mapped_bytes}}},
      {"tuning", tuning_json(report.tuning)},
      {"target",
       {{"isa", report.target.isa},
        {"level", report.target.level},
        {"cpu_features", report.target.cpu_features},
        {"vector_bits", report.target.vector_bits},
        {"cores", report.target.cores},
        {"cache_bytes", report.target.cache_bytes},
        {"cpu",
         {{"vendor", report.target.cpu_vendor},
          {"family", report.target.cpu_family},
          {"model", report.target.cpu_model},
          {"stepping", report.target.cpu_stepping},
          {"brand", report.target.cpu_brand},
          {"microarchitecture", report.target.cpu_microarchitecture}}},
        {"activation_layouts", report.target.activation_layouts},
        {"winograd", report.target.winograd},
        {"required_features", report.target.required_features},
        {"implementations", report.target.implementations},
        {"node_implementations", report.target.node_implementations}}},
      {"warmup",
       {{"state", report.warmup.state},
        {"fixtures", report.warmup.fixtures},
        {"runs", report.warmup.runs},
        {"checked", report.warmup.checked},
        {"max_relative_error", report.warmup.max_relative_error},
        {"ms", report.warmup.ms}}},
      {"execution", execution_json(report.execution)},
      {"guards", guards_json(report.guards)},
      {"run", run_json(report.run)},
      {"parity", parity_json(report.parity)},
  };
  if (const std::optional<GenerationSection>& g = report.generation)
    doc["generation"] = {{"context", g->context},
                         {"kv_cache_bytes", g->kv_cache_bytes},
                         {"load_ms", g->load_ms},
                         {"prompt_tokens", g->prompt_tokens},
                         {"generated_tokens", g->generated_tokens},
                         {"time_to_first_token_ms", g->time_to_first_token_ms},
                         {"prompt_tokens_per_s", g->prompt_tokens_per_second},
                         {"generation_tokens_per_s", g->generation_tokens_per_second},
                         {"peak_resident_bytes", g->peak_resident_bytes}};
  return doc;
}

std::string to_json(const Report& report, int indent) {
  // Names come from the model, which may hold bytes that are not UTF-8: they are replaced (U+FFFD)
  // rather than thrown about.
  return to_json_value(report).dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json reproducible_sections(const Report& report) {
  json doc = to_json_value(report);
  for (json& run : doc["passes"]) run.erase("ms");
  json& model = doc["model"];
  model["name"] = std::filesystem::path(model["path"].get<std::string>()).filename().string();
  model.erase("path");
  json kept = json::object();
  for (const char* section :
       {"model", "options", "analysis", "passes", "nodes_after_passes", "partition", "precision", "kernels", "memory", "tuning"})
    kept[section] = std::move(doc[section]);
  return kept;
}

}  // namespace kiln::report
