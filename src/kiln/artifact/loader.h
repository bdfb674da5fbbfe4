// Reading a compiled model back from a .kiln artifact: the container checked (container.h), the
// signature checked against the caller's policy (signing.h), the weights taken from their section
// as the manifest indexes them, and the plan decoded into the optimised graph, ready to partition
// and plan without running the passes again.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kiln/ir/graph.h"
#include "kiln/status.h"

namespace kiln::artifact {

// True when `bytes` start with the .kiln magic.
bool looks_like_artifact(std::string_view bytes);
// True when the file at `path` starts with the .kiln magic (false when it cannot be read).
bool is_artifact_file(const std::string& path);

struct SignaturePolicy {
  std::optional<std::string> trusted_public_key;  // raw 32 bytes
  bool required = false;
};

// The model of `file`; its sha256 is the source model's (the manifest's source_sha256).
// IntegrityFailure naming the section or field at fault; UnsupportedTarget for newer formats.
Result<ir::Model> load_artifact(std::string_view file, const SignaturePolicy& policy = {});

}  // namespace kiln::artifact
