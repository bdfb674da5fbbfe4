// The GGUF row of the format table (gguf_import.h).
#include "kiln/frontend/gguf/gguf_import.h"

#include <algorithm>

#include "kiln/frontend/gguf/decoder_graph.h"
#include "kiln/frontend/gguf/gguf_file.h"
#include "kiln/frontend/gguf/llm_hyperparameters.h"
#include "kiln/io/file.h"

namespace kiln::frontend::gguf {
namespace {

// The model's metadata: the hyperparameters as text, for inspect and the report.
std::map<std::string, std::string> describe(const LlmHyperparameters& hp) {
  return {
      {"gguf.architecture", std::string(hp.architecture.name)},
      {"gguf.context_length", std::to_string(hp.context_length)},
      {"gguf.embedding_length", std::to_string(hp.embedding)},
      {"gguf.block_count", std::to_string(hp.blocks)},
      {"gguf.feed_forward_length", std::to_string(hp.feed_forward)},
      {"gguf.head_count", std::to_string(hp.heads)},
      {"gguf.head_count_kv", std::to_string(hp.kv_heads)},
      {"gguf.head_size", std::to_string(hp.head_size)},
      {"gguf.rope_dimension_count", std::to_string(hp.rope_dimensions)},
      {"gguf.rope_freq_base", std::to_string(hp.rope_freq_base)},
      {"gguf.rms_epsilon", std::to_string(hp.rms_epsilon)},
      {"gguf.vocab_size", std::to_string(hp.vocab_size)},
  };
}

Result<ir::Model> import_from(std::string_view bytes, const std::string& what, const std::string& sha256) {
  KILN_ASSIGN_OR_RETURN(const GgufFile file, parse_gguf(bytes, what));
  KILN_ASSIGN_OR_RETURN(const LlmHyperparameters hp, read_hyperparameters(file));
  ir::Model model;
  KILN_ASSIGN_OR_RETURN(model.graph, build_decoder_graph(file, hp, std::min(hp.context_length, kMaxRotaryPositions)));
  model.opset_imports = {{"", 17}, {"kiln", 1}};
  model.producer_name = "gguf";
  model.producer_version = std::to_string(file.version);
  model.metadata = describe(hp);
  if (const MetadataValue* name = file.find("general.name"); name && name->type == ValueType::kString)
    model.metadata["gguf.name"] = name->string_value;
  model.sha256 = sha256;
  model.file_bytes = static_cast<int64_t>(bytes.size());
  return model;
}

}  // namespace

Result<ir::Model> import_gguf_file(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(const io::FileImage image, io::read_file_image(path));
  KILN_ASSIGN_OR_RETURN(const std::string sha256, io::sha256_hex(image.bytes));
  KILN_ASSIGN_OR_RETURN(ir::Model model, import_from(image.bytes, path, sha256));
  model.source_path = path;
  return model;
}

Result<ir::Model> import_gguf_bytes(const std::string& bytes, const std::string&) {
  KILN_ASSIGN_OR_RETURN(const std::string sha256, io::sha256_hex(bytes));
  return import_from(bytes, "GGUF bytes", sha256);
}

}  // namespace kiln::frontend::gguf
