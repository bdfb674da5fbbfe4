// Builds a .kiln artifact from a compiled model: the manifest (lineage, options, toolchain, the
// pass log without times, partition map, memory plan, target CPU features), the optimised graph as
// a FlatBuffers plan, its weights, each 64-byte aligned in one section, and the auxiliary assets
// (tokenizer, labels, ...), one section each. Nothing in it depends on where or when it was built,
// so the same model, options and assets give the same bytes.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "kiln/ir/graph.h"
#include "kiln/status.h"

namespace kiln::artifact {

// Section name of the asset `name`.
std::string asset_section_name(const std::string& name);

// `report` is the session's evidence report as JSON (docs/REPORT.md); only its deterministic
// parts are kept. `assets` maps asset names (letters, digits, '.', '_', '-') to their bytes.
// Returns the file's bytes; InvalidArgument for a bad asset name.
Result<std::string> build_artifact(const ir::Model& model, const nlohmann::json& report,
                                   const std::map<std::string, std::string>& assets = {});

}  // namespace kiln::artifact
