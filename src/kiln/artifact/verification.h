// Verifying a .kiln artifact without loading it (`kiln verify`, kiln.verify in Python): its
// structure and every section hash, its signature (against a trusted key when given), and that
// this machine, capped at an instruction-set level, has the CPU features its kernels need.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/status.h"

namespace kiln::artifact {

struct ArtifactVerification {
  // Filled as far as the checks got, in this order.
  uint32_t format_version = 0;
  size_t file_bytes = 0;
  std::string manifest_sha256;  // hex
  struct Section {
    std::string name;
    uint64_t bytes = 0;
    size_t hashed_chunks = 0;  // SHA-256 chunk hashes that matched
  };
  std::vector<Section> sections;
  std::string signature;                   // "unsigned" or "signed by <public key, hex>"
  std::vector<std::string> required_features;  // CPU features the kernels need, all present here
  std::string compiled_for, target_level;  // the compiling target's level and this machine's (capped)
  nlohmann::json precision;                // the manifest's precision section (the report's, docs/REPORT.md)
  // The first check that failed ("structure", "signature" or "target"; "" when all passed) and why.
  std::string failed_check;
  Status failure;
};

// Verifies the artifact at `path` (read whole). A file that cannot be read fails "structure".
ArtifactVerification verify_artifact(const std::string& path, const std::optional<std::string>& trusted_key,
                                     bool require_signature, const std::string& isa);

}  // namespace kiln::artifact
