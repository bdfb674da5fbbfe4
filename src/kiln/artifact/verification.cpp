// verify_artifact: structure, hashes, signature, this machine's features (verification.h).
#include "kiln/artifact/verification.h"

#include "kiln/artifact/container.h"
#include "kiln/artifact/loader.h"
#include "kiln/artifact/signing.h"
#include "kiln/io/file.h"
#include "kiln/target/target.h"

namespace kiln::artifact {

namespace {

ArtifactVerification failed(ArtifactVerification v, const char* check, Status status, const std::string& path) {
  v.failed_check = check;
  v.failure = status.with_context(path);
  return v;
}

}  // namespace

ArtifactVerification verify_artifact(const std::string& path, const std::optional<std::string>& trusted_key,
                                     bool require_signature, const std::string& isa) {
  ArtifactVerification v;
  Result<std::string> file = io::read_file(path);
  if (!file.is_ok()) {
    v.failed_check = "structure";
    v.failure = file.status();
    return v;
  }
  v.file_bytes = file.value().size();
  Result<Decoded> decoded = decode(file.value());
  if (!decoded.is_ok()) return failed(std::move(v), "structure", decoded.status(), path);
  const Decoded& d = decoded.value();
  v.format_version = d.format_version;
  v.manifest_sha256 = d.manifest_sha256;
  for (const nlohmann::json& s : d.manifest["sections"])
    v.sections.push_back({s["name"].get<std::string>(), s["size"].get<uint64_t>(), s["sha256"].size()});
  Result<std::string> signature = check_signature(d, trusted_key, require_signature);
  if (!signature.is_ok()) return failed(std::move(v), "signature", signature.status(), path);
  v.signature = signature.value();
  Result<target::Target> target = target::make_target(isa);
  if (!target.is_ok()) return failed(std::move(v), "target", target.status(), path);
  const Status fits = check_target(d.manifest, {std::nullopt, false, target.value().features, isa});
  if (!fits.is_ok()) return failed(std::move(v), "target", fits, path);
  for (const nlohmann::json& f : d.manifest["target"]["required_features"]) v.required_features.push_back(f.get<std::string>());
  v.compiled_for = d.manifest["target"].value("level", "");
  v.target_level = target.value().level;
  v.precision = d.manifest.value("precision", nlohmann::json::object());
  return v;
}

}  // namespace kiln::artifact
