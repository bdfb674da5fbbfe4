// Reading a session's model: imported from its format, or read back from a .kiln artifact.
#include "kiln/runtime/model_source.h"

#include "kiln/frontend/model_formats.h"
#include "kiln/io/file.h"

namespace kiln::runtime {

Result<SourceModel> read_model(const std::string& path, const std::string* bytes, const artifact::LoadPolicy& policy) {
  SourceModel source;
  if (bytes && artifact::looks_like_artifact(*bytes))
    return invalid_argument("a .kiln artifact loads from its path (Session::load), not from bytes");
  if (bytes) {
    KILN_ASSIGN_OR_RETURN(source.model, frontend::import_model_bytes(*bytes, "."));
    return source;
  }
  if (!artifact::is_artifact_file(path)) {
    KILN_ASSIGN_OR_RETURN(source.model, frontend::import_model_file(path));
    return source;
  }
  KILN_ASSIGN_OR_RETURN(const io::FileImage file, io::read_file_image(path));
  Result<artifact::LoadedArtifact> loaded = artifact::load_artifact(file, policy);
  if (!loaded.is_ok()) return loaded.status().with_context(path);
  source.from_artifact = true;
  source.model = std::move(loaded.value().model);
  source.model.source_path = path;
  source.model.file_bytes = static_cast<int64_t>(file.bytes.size());
  source.precompiled = std::move(loaded.value().precompiled);
  source.assets = std::move(loaded.value().assets);
  source.warmup_inputs = std::move(loaded.value().warmup_inputs);
  source.warmup_outputs = std::move(loaded.value().warmup_outputs);
  source.default_threads = loaded.value().default_threads;
  return source;
}

}  // namespace kiln::runtime
