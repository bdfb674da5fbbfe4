// The pass manager.
#include "kiln/passes/pass_manager.h"

#include <algorithm>
#include <chrono>

#include "kiln/ir/verifier.h"

namespace kiln::passes {

namespace {

// The passes of `pipeline` not disabled; InvalidArgument when a disabled name is not in it.
Result<std::vector<const PassInfo*>> enabled_passes(const std::vector<PassInfo>& pipeline,
                                                    const std::vector<std::string>& disabled) {
  auto in_pipeline = [&](const std::string& name) {
    return std::any_of(pipeline.begin(), pipeline.end(), [&](const PassInfo& p) { return p.name == name; });
  };
  for (const std::string& name : disabled) {
    if (in_pipeline(name)) continue;
    std::string valid;
    for (const PassInfo& p : pipeline) valid += (valid.empty() ? "" : ", ") + p.name;
    return invalid_argument("unknown pass '" + name + "'; valid passes: " + valid);
  }
  std::vector<const PassInfo*> enabled;
  for (const PassInfo& p : pipeline)
    if (std::find(disabled.begin(), disabled.end(), p.name) == disabled.end()) enabled.push_back(&p);
  return enabled;
}

Result<PassRun> run_pass(const PassInfo& pass, int round, ir::Graph& graph, const PassContext& ctx) {
  PassRun run{pass.name, "", round};
  run.nodes_before = ir::count_nodes(graph);
  const auto start = std::chrono::steady_clock::now();
  Result<bool> changed = pass.run(graph, ctx);
  run.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!changed.is_ok()) return changed.status().with_context("pass " + pass.name);
  run.changed = *changed;
  run.nodes_after = ir::count_nodes(graph);
  Status valid = ir::verify(graph);
  if (!valid.is_ok()) return internal_error("pass " + pass.name + " left an invalid graph: " + valid.message());
  return run;
}

}  // namespace

Result<std::vector<PassRun>> run_pipeline(ir::Graph& graph, const PassContext& ctx,
                                          const std::vector<PassInfo>& pipeline, const PipelineOptions& options) {
  KILN_ASSIGN_OR_RETURN(std::vector<const PassInfo*> passes, enabled_passes(pipeline, options.disabled_passes));
  KILN_RETURN_IF_ERROR(ir::verify(graph).with_context("graph before passes"));
  std::vector<PassRun> log;
  bool changed = true;
  for (int round = 1; changed && round <= options.max_rounds; ++round) {
    changed = false;
    for (const PassInfo* pass : passes) {
      KILN_ASSIGN_OR_RETURN(PassRun run, run_pass(*pass, round, graph, ctx));
      changed = changed || run.changed;
      log.push_back(std::move(run));
    }
  }
  return log;
}

Result<std::vector<PassRun>> run_table_stage(ir::Graph& graph, const PassContext& ctx, PassStage stage,
                                             const PipelineOptions& options) {
  KILN_RETURN_IF_ERROR(enabled_passes(pass_table(), options.disabled_passes).status());
  std::vector<PassInfo> pipeline;
  for (const PassInfo& p : pass_table())
    if (p.stages & stage) pipeline.push_back(p);
  PipelineOptions of_stage = options;
  of_stage.disabled_passes.clear();
  for (const std::string& name : options.disabled_passes)
    if (std::any_of(pipeline.begin(), pipeline.end(), [&](const PassInfo& p) { return p.name == name; }))
      of_stage.disabled_passes.push_back(name);
  return run_pipeline(graph, ctx, pipeline, of_stage);
}

}  // namespace kiln::passes
