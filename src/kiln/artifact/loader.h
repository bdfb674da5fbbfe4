// Reading a compiled model back from a .kiln artifact: the container checked (container.h), the
// signature checked against the caller's policy (signing.h), the weights taken from their section
// as the manifest indexes them, and the plan decoded into the optimised graph, ready to partition
// and plan without running the passes again.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/compiler/compiled_model.h"
#include "kiln/io/file.h"
#include "kiln/ir/graph.h"
#include "kiln/providers/plan_evidence.h"
#include "kiln/status.h"

namespace kiln::artifact {

// True when `bytes` start with the .kiln magic.
bool looks_like_artifact(std::string_view bytes);
// True when the file at `path` starts with the .kiln magic (false when it cannot be read).
bool is_artifact_file(const std::string& path);

// What a load demands of an artifact: a signature (by a given key, or any), and that the CPU
// features its kernels need are among the target's.
struct LoadPolicy {
  std::optional<std::string> trusted_public_key;  // raw 32 bytes
  bool signature_required = false;
  std::vector<std::string> cpu_features;  // the target's (target/target.h)
  std::string isa;                        // the target's --isa cap, for messages ("" for none)
};

// UnsupportedTarget naming the features the manifest requires that `policy` lacks.
Status check_target(const nlohmann::json& manifest, const LoadPolicy& policy);

struct LoadedArtifact {
  ir::Model model;  // its sha256 is the source model's (the manifest's source_sha256)
  std::map<std::string, std::string> assets;  // name -> bytes
  // Warm-up fixtures: inputs, and the outputs the model gave for them when it was compiled.
  std::map<std::string, Tensor> warmup_inputs, warmup_outputs;
  // Weights in the compiled kernels' layouts and the generated kernels' object (views into the
  // file, which it keeps alive); the weights stored only packed have initializers that view the
  // packed bytes.
  compiler::Precompiled precompiled;
  int default_threads = 0;  // the threads it was compiled for (0: the runtime's default)
};

// The model, assets and fixtures of the artifact read into `file`; weights and fixtures are views
// into its bytes (no copy), which they keep alive. IntegrityFailure naming the section or field at
// fault; UnsupportedTarget for format versions this build does not read and for CPU features the
// target lacks.
Result<LoadedArtifact> load_artifact(const io::FileImage& file, const LoadPolicy& policy);

}  // namespace kiln::artifact
