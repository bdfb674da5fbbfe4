// Builds a .kiln artifact from a compiled model: the manifest (lineage, options, toolchain, the
// pass log without times, partition map, memory plan, target CPU features), the optimised graph as
// a FlatBuffers plan, its weights, each 64-byte aligned, plain in one section and in the kernels'
// layouts in another (packed_weights.h), and the auxiliary assets
// (tokenizer, labels, ...), one section each, and the warm-up fixtures (inputs, and the outputs
// the compiled model gave for them). Nothing in it depends on where or when it was built, so the
// same model, options, assets and fixtures give the same bytes.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "kiln/ir/graph.h"
#include "kiln/providers/kernel_build.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::artifact {

// Section name of the asset `name`.
std::string asset_section_name(const std::string& name);
// Section name of the warm-up fixtures' `part`: "inputs" or "outputs".
std::string warmup_section_name(const std::string& part);

struct ArtifactExtras {
  std::map<std::string, std::string> assets;  // name (letters, digits, '.', '_', '-') -> bytes
  std::map<std::string, Tensor> warmup_inputs, warmup_outputs;
  // The compiled plan's kernel build: its packed constants are stored (packed_weights.h), and
  // the object of its generated kernels, if any (section "code", manifest `generated_code`).
  const providers::KernelBuild* kernels = nullptr;
};

// `report` is the session's evidence report as JSON (docs/REPORT.md); only its deterministic
// parts are kept. Returns the file's bytes; InvalidArgument for a bad asset name.
Result<std::string> build_artifact(const ir::Model& model, const nlohmann::json& report, const ArtifactExtras& extras);

}  // namespace kiln::artifact
