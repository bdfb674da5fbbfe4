// The pass manager: runs a pipeline of passes over a graph, round after round until a round changes
// nothing, verifies the graph after every pass, and logs each invocation for the report.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/passes/pass_context.h"
#include "kiln/passes/pass_table.h"
#include "kiln/status.h"

namespace kiln::passes {

// One pass invocation, as the report shows it.
struct PassRun {
  std::string pass;          // PassInfo::name
  std::string provider;      // the provider a lowering run was for ("" before partition)
  int round = 0;             // 1-based
  double wall_ms = 0;
  int64_t nodes_before = 0;  // nodes in the graph, subgraphs included
  int64_t nodes_after = 0;
  bool changed = false;
};

struct PipelineOptions {
  std::vector<std::string> disabled_passes;  // names from the pipeline; others are InvalidArgument
  int max_rounds = 8;                        // stops after this many rounds even if still changing
};

// Runs `pipeline` (in order, skipping disabled passes) over `graph` until a round changes nothing or
// max_rounds is reached, and returns one PassRun per invocation. Errors: InvalidArgument for an
// unknown disabled pass name (listing the valid ones); the graph's own verify() error when it is
// invalid before any pass runs; a pass's error with the pass named; Internal naming the pass when
// the graph fails verify() after it.
Result<std::vector<PassRun>> run_pipeline(ir::Graph& graph, const PassContext& ctx,
                                          const std::vector<PassInfo>& pipeline, const PipelineOptions& options);

// run_pipeline with the passes of pass_table() that run at `stage` (kGraphStage: the default
// pipeline, before partition; kLoweringStage: lowering for one provider, ctx.owned set). Disabled
// names are checked against the whole table, so one list serves both stages.
Result<std::vector<PassRun>> run_table_stage(ir::Graph& graph, const PassContext& ctx, PassStage stage,
                                             const PipelineOptions& options);

}  // namespace kiln::passes
