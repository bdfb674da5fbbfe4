// Report -> the few lines the CLI prints after compile and run.
#include <cstdio>
#include <sstream>

#include "kiln/report/report.h"

namespace kiln::report {

namespace {

std::string mib(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
  return buf;
}

std::string ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f ms", v);
  return buf;
}

}  // namespace

std::string precision_line(const PrecisionSection& p) {
  std::ostringstream s;
  s << (p.auto_trials.empty() ? "" : "auto chose ") << p.requested << ": " << p.reduced << " of " << p.products.size() << " products";
  if (!p.keep_fp32.empty()) {
    s << " (kept in fp32:";
    for (const std::string& k : p.keep_fp32) s << " " << k;
    s << ")";
  }
  if (!p.bf16_values.empty())
    s << "; " << p.bf16_values.size() << " value" << (p.bf16_values.size() == 1 ? "" : "s") << " kept bf16 between products";
  if (!p.uint8_values.empty())
    s << "; " << p.uint8_values.size() << " value" << (p.uint8_values.size() == 1 ? "" : "s") << " kept uint8 between int8 products";
  if (!p.calibration.method.empty())
    s << "; " << p.calibration.calibrated_products << " int8 inputs calibrated (" << p.calibration.method << ") on " << p.calibration.count
      << " input set" << (p.calibration.count == 1 ? "" : "s") << ", sha256 " << p.calibration.sha256.substr(0, 16) << "...";
  if (!p.fallback.empty()) s << "; " << p.fallback.back();
  if (!p.accuracy.empty()) {
    s << "; vs fp32 on " << p.validation_count << " " << p.validation_inputs << " input set" << (p.validation_count == 1 ? "" : "s") << ":";
    for (size_t i = 0; i < p.accuracy.size(); ++i) {
      const OutputAccuracy& a = p.accuracy[i];
      s << (i ? ";" : "") << " '" << a.output << "' max abs " << a.max_abs_error << ", rel " << a.max_relative_error << ", cosine "
        << a.cosine;
      if (a.top1 >= 0) s << ", top-1 " << a.top1 << ", top-5 " << a.top5;
    }
  }
  return s.str();
}

std::string to_summary(const Report& r) {
  std::ostringstream s;
  s << "model      " << r.model.path << " (sha256 " << r.model.sha256.substr(0, 16) << "..., " << r.model.nodes
    << " nodes, " << r.model.parameters << " parameters)\n";
  s << "analysis   " << r.analysis.values_with_static_shape << " static, " << r.analysis.values_with_symbolic_shape
    << " symbolic, " << r.analysis.values_without_shape << " unknown-rank values; " << r.analysis.values_propagated
    << " values propagated; " << r.analysis.declaration_disagreements.size()
    << " declared shapes contradicted by inference\n";
  int64_t changed = 0;
  for (const auto& p : r.passes) changed += p.changed ? 1 : 0;
  s << "passes     " << r.passes.size() << " pass runs (" << changed << " changed the graph): " << r.model.nodes
    << " -> " << r.nodes_after_passes << " nodes\n";
  s << "partition  " << r.partition.policy << "; ";
  for (size_t i = 0; i < r.partition.partitions.size() && i < 4; ++i)
    s << (i ? ", " : "") << r.partition.partitions[i].provider << " x" << r.partition.partitions[i].node_count;
  s << "; fallback " << r.partition.fallback_nodes << " nodes (" << r.partition.fallback_share() * 100 << "%), "
    << r.partition.fallback_flops_share() * 100 << "% of FLOPs; " << r.partition.layout_boundaries << " layout reorders + "
    << r.memory.kernel_reorders << " in kernels\n";
  s << "precision  " << precision_line(r.precision) << "\n";
  s << "kernels    " << r.kernels.size() << " distinct (op, provider) kernels\n";
  s << "target     " << r.target.level << (r.target.isa.empty() ? "" : " (--isa)") << ", " << r.target.vector_bits
    << "-bit; layouts";
  for (const std::string& layout : r.target.activation_layouts) s << " " << layout;
  if (r.target.activation_layouts.empty()) s << " NCHW";
  s << (r.target.winograd ? "; Winograd" : "") << "; " << r.tuning.choices.size() << " tuned choice(s), "
    << (r.tuning.enabled ? std::to_string(r.tuning.measured) + " measured in " + ms(r.stages.tuning_ms) : std::string("heuristic"))
    << "\n";
  s << "cpu        " << (r.target.cpu_brand.empty() ? r.target.cpu_vendor : r.target.cpu_brand) << " (" << r.target.cpu_vendor
    << " family " << r.target.cpu_family << " model " << r.target.cpu_model
    << (r.target.cpu_microarchitecture.empty() ? "" : ": " + r.target.cpu_microarchitecture) << ")\n";
  s << "memory     arena " << mib(r.memory.arena_bytes) << " planned peak vs " << mib(r.memory.naive_bytes)
    << " without reuse; " << r.memory.buffers << " buffers, " << r.memory.reused_buffers << " reuse memory, "
    << r.memory.concats_in_place << " concats in place, "
    << r.memory.dynamic_values << " dynamic\n";
  s << "budget     planned " << mib(r.memory.planned_bytes) << ", in use " << mib(r.memory.in_use_bytes) << ", peak "
    << mib(r.memory.peak_bytes) << " of "
    << (r.memory.limit_bytes > 0 ? mib(r.memory.limit_bytes) + " (--memory-limit)" : std::string("no limit"))
    << (r.memory.mapped_bytes > 0 ? "; weights mapped from the file " + mib(r.memory.mapped_bytes) : std::string()) << "\n";
  s << "times      import " << ms(r.stages.import_ms) << ", analysis " << ms(r.stages.analysis_ms) << ", passes "
    << ms(r.stages.passes_ms) << ", partition " << ms(r.stages.partition_ms) << ", plan " << ms(r.stages.plan_ms)
    << ", load total " << ms(r.stages.load_ms);
  if (r.warmup.runs > 0)
    s << "\nwarm-up    " << r.warmup.runs << " run(s) on " << r.warmup.fixtures << " fixtures in " << ms(r.warmup.ms)
      << (r.warmup.checked ? ", outputs match the recorded ones" : "") << "; " << r.warmup.state;
  if (r.run.runs > 0) {
    const std::vector<double> steady = r.run.steady();
    s << "\nrun        " << r.run.runs << " runs: first " << ms(r.run.first_run_ms);
    if (!steady.empty()) s << ", steady median " << ms(median(steady));
  }
  return s.str();
}

}  // namespace kiln::report
