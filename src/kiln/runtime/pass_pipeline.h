// Runs the optimisation pass pipeline (src/kiln/passes) on a compiled graph and returns its log
// in the report's terms.
#pragma once

#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ops/op_registry.h"
#include "kiln/report/report.h"
#include "kiln/status.h"

namespace kiln::runtime {

Result<std::vector<report::PassLogEntry>> run_pass_pipeline(ir::Graph& graph, const ops::OpRegistry& registry,
                                                            const std::vector<std::string>& disabled_passes);

}  // namespace kiln::runtime
