// Builds a .kiln artifact from a compiled model: the manifest (lineage, toolchain, how it runs,
// the CPU features its kernels need, and the compile's evidence), the optimised graph as
// a FlatBuffers plan, its weights, each 64-byte aligned, plain in one section and in the kernels'
// layouts in another (packed_weights.h), and the auxiliary assets
// (tokenizer, labels, ...), one section each, and the warm-up fixtures (inputs, and the outputs
// the compiled model gave for them). Nothing in it depends on where or when it was built, so the
// same model, options, assets and fixtures give the same bytes.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "kiln/compiler/compiled_model.h"
#include "kiln/ir/graph.h"
#include "kiln/providers/plan_evidence.h"
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
  // The compiled plan's input shapes (one per graph input), and its evidence: its packed
  // constants are stored (packed_weights.h), and the object of its generated kernels, if any
  // (section "code", manifest `generated_code`).
  std::vector<std::vector<int64_t>> input_shapes;
  const providers::PlanEvidence* kernels = nullptr;
};

// What the manifest states besides the compiled model: the Kiln that built it, the --isa cap and
// the thread count it was compiled under (the manifest's `target.isa` and `execution.threads`,
// fields the artifact owns and the loader reads), and the compile's evidence
// (report::reproducible_sections), kept at the manifest's top level for people and tools
// (`kiln inspect`, `kiln diff`) and never read back.
struct CompileRecord {
  std::string kiln_version;
  std::string isa;  // "" for none
  int threads = 0;  // 0: the runtime's default
  nlohmann::json evidence = nlohmann::json::object();
};

// The artifact of `compiled` planned as `extras.kernels` (its input shapes, packed constants,
// generated kernels and the CPU features they need). Returns the file's bytes; InvalidArgument for
// a bad asset name.
Result<std::string> build_artifact(const compiler::CompiledModel& compiled, const CompileRecord& record, const ArtifactExtras& extras);

}  // namespace kiln::artifact
