// Builds a .kiln artifact from a compiled model: the manifest (lineage, options, toolchain, the
// pass log without times, partition map, memory plan) and the optimised graph's weights, each
// 64-byte aligned in one section. Nothing in it depends on where or when it was built, so the same
// model and options give the same bytes.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "kiln/ir/graph.h"
#include "kiln/status.h"

namespace kiln::artifact {

// `report` is the session's evidence report as JSON (docs/REPORT.md); only its deterministic
// parts are kept. Returns the file's bytes.
Result<std::string> build_artifact(const ir::Model& model, const nlohmann::json& report);

}  // namespace kiln::artifact
