// The GGUF row of the format table (gguf_import.h).
#include "kiln/frontend/gguf/gguf_import.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>

#include "kiln/frontend/gguf/decoder_graph.h"
#include "kiln/frontend/gguf/gguf_file.h"
#include "kiln/frontend/gguf/gguf_writer.h"
#include "kiln/frontend/gguf/llm_hyperparameters.h"
#include "kiln/frontend/gguf/vocabulary.h"
#include "kiln/io/file.h"

namespace kiln::frontend::gguf {
namespace {

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

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
      {"gguf.rope_freq_base", number_text(hp.rope_freq_base)},
      {"gguf.rms_epsilon", number_text(hp.rms_epsilon)},
      {"gguf.vocab_size", std::to_string(hp.vocab_size)},
  };
}

std::string bytes_text(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f MB", static_cast<double>(bytes) / 1e6);
  return text;
}

// The rest of what `kiln inspect` shows of a package: its name, tokenizer, special tokens, chat
// template, and the tensors by type with their bytes.
void describe_package(const GgufFile& file, std::map<std::string, std::string>& out) {
  auto text_of = [&](const char* key) -> std::optional<std::string> {
    const MetadataValue* v = file.find(key);
    if (!v) return std::nullopt;
    if (v->type == ValueType::kString) return v->string_value;
    if (v->is_integer()) return std::to_string(v->as_int());
    if (v->type == ValueType::kBool) return v->unsigned_value ? "true" : "false";
    return std::nullopt;
  };
  if (auto name = text_of("general.name")) out["gguf.name"] = *name;
  if (auto kind = text_of("tokenizer.ggml.model")) out["gguf.tokenizer"] = *kind;
  if (auto pre = text_of("tokenizer.ggml.pre")) out["gguf.tokenizer_pre"] = *pre;
  if (const MetadataValue* tokens = file.find("tokenizer.ggml.tokens")) out["gguf.tokenizer_tokens"] = std::to_string(tokens->elements.size());
  for (const char* special : {"bos", "eos", "unknown", "padding", "eot"})
    if (auto id = text_of(("tokenizer.ggml." + std::string(special) + "_token_id").c_str())) out["gguf." + std::string(special) + "_token"] = *id;
  for (const char* flag : {"add_bos_token", "add_eos_token"})
    if (auto value = text_of(("tokenizer.ggml." + std::string(flag)).c_str())) out["gguf." + std::string(flag)] = *value;
  const MetadataValue* chat = file.find("tokenizer.chat_template");
  out["gguf.chat_template"] = chat ? "present (" + std::to_string(chat->string_value.size()) + " bytes)" : "absent";
  std::map<std::string, std::pair<int64_t, uint64_t>> by_type;  // type -> tensors, bytes
  uint64_t total = 0;
  for (const TensorInfo& t : file.tensors) {
    auto& [count, bytes] = by_type[std::string(t.type.name)];
    ++count;
    bytes += t.bytes;
    total += t.bytes;
  }
  std::string types;
  for (const auto& [type, figures] : by_type)
    types += (types.empty() ? "" : "; ") + type + " " + std::to_string(figures.first) + " tensors " + bytes_text(figures.second);
  out["gguf.tensor_types"] = types;
  out["gguf.tensor_bytes"] = std::to_string(total);
}

// The package in `image`, whose block-quantized constants view its bytes.
Result<ir::Model> import_image(const io::FileImage& image, const std::string& what) {
  KILN_ASSIGN_OR_RETURN(const std::string sha256, io::sha256_hex(image.bytes));
  KILN_ASSIGN_OR_RETURN(const GgufFile file, parse_gguf(image.bytes, what));
  KILN_ASSIGN_OR_RETURN(const LlmHyperparameters hp, read_hyperparameters(file));
  ir::Model model;
  KILN_ASSIGN_OR_RETURN(model.graph, build_decoder_graph(file, image.owner, hp, std::min(hp.context_length, kMaxRotaryPositions)));
  // Kept where weights view it: a float package's are copies, and its mapping (every page of which
  // the hash read) goes with the image.
  if (image.mapped && ir::parameter_stats(*model.graph, image.bytes).mapped_bytes > 0) {
    model.mapping = image.owner;
    model.mapped_file = image.bytes;
  }
  model.opset_imports = {{"", 17}, {"kiln", 1}};
  model.producer_name = "gguf";
  model.producer_version = std::to_string(file.version);
  model.metadata = describe(hp);
  describe_package(file, model.metadata);
  KILN_ASSIGN_OR_RETURN(model.metadata["gguf.tokenizer_sha256"], tokenizer_sha256(file));
  // What a compiled artifact keeps of the package besides the graph: its metadata (hyperparameters
  // and tokenizer, which kiln::Generator reads back), and a valid first call to warm up with.
  model.assets[kPackageMetadataAsset] = write_metadata_gguf(file.metadata);
  model.example_inputs = decoder_example_inputs(hp);
  model.sha256 = sha256;
  model.file_bytes = static_cast<int64_t>(image.bytes.size());
  return model;
}

}  // namespace

Result<ir::Model> import_gguf_file(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(const io::FileImage image, io::map_file_image(path));
  KILN_ASSIGN_OR_RETURN(ir::Model model, import_image(image, path));
  model.source_path = path;
  return model;
}

Result<ir::Model> import_gguf_bytes(const std::string& bytes, const std::string&) {
  // The constants view a copy of the caller's bytes, which they keep alive.
  auto copy = std::make_shared<const std::string>(bytes);
  return import_image({std::shared_ptr<const char>(copy, copy->data()), *copy}, "GGUF bytes");
}

}  // namespace kiln::frontend::gguf
