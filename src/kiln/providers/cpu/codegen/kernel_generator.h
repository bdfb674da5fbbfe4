// Generated kernels for one session: each plan's loop kernels are collected into one module,
// emitted as C++, and bound to the kernels that call them once the module's object is loaded:
// an object embedded in the session's artifact when one matches the module's source key (the
// SHA-256 of source, flags, target features and Kiln version), else one from the object cache
// (keyed by the source key and the compiler's identity), else one the host compiler builds now.
// Counts and times are kept for the report.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kiln/providers/cpu/codegen/host_compiler.h"
#include "kiln/providers/cpu/codegen/loop_ir.h"
#include "kiln/io/object_cache.h"
#include "kiln/providers/cpu/codegen/shared_object.h"
#include "kiln/status.h"

namespace kiln::codegen {

using KernelFunction = void (*)(const float* const* inputs, float* output);

// A kernel's entry point, set when its module is built (null until then).
struct GeneratedKernel {
  KernelFunction function = nullptr;
  std::shared_ptr<SharedObject> object;  // keeps the code loaded
};

struct CodegenStats {
  std::string compiler;      // the compiler's identity
  std::string cache_folder;
  bool cache_writable = true;  // false once an insert failed: objects then live in temporary files
  int64_t modules = 0, kernels = 0;
  int64_t cache_hits = 0, cache_misses = 0, corrupted_entries = 0;
  int64_t embedded_hits = 0;  // modules whose object came from the artifact
  double compile_ms = 0;     // in the host compiler, misses only
  int64_t source_bytes = 0;
};

class KernelGenerator;

// The kernels of one plan, compiled together.
class ModuleBuilder {
 public:
  explicit ModuleBuilder(std::shared_ptr<KernelGenerator> generator) : generator_(std::move(generator)) {}
  // Adds `kernel` (renamed to be unique in the module); its entry point once build() succeeds.
  std::shared_ptr<const GeneratedKernel> add(LoopKernel kernel);
  // Emits, finds or compiles, and loads the module, binding every added kernel.
  Status build();
  size_t size() const { return kernels_.size(); }

  // After build(): the module's source key and its object's bytes (what an artifact embeds), and
  // the CPU features the object needs.
  const std::string& source_key() const { return source_key_; }
  const std::string& object_bytes() const { return object_bytes_; }
  std::vector<std::string> required_features() const;

 private:
  std::shared_ptr<KernelGenerator> generator_;
  std::vector<LoopKernel> kernels_;
  std::vector<std::shared_ptr<GeneratedKernel>> slots_;
  std::string source_key_, object_bytes_;
};

class KernelGenerator {
 public:
  // A generator for code using `target_features` (GCC's names). UnsupportedTarget when no host
  // compiler runs.
  static Result<std::shared_ptr<KernelGenerator>> create(std::vector<std::string> target_features,
                                                         io::ObjectCache cache = io::ObjectCache::from_environment());
  // A generator for an artifact's embedded objects (source key -> object bytes, which stay valid
  // while the generator lives), using the host compiler only when there is one.
  static std::shared_ptr<KernelGenerator> for_embedded(std::vector<std::string> target_features,
                                                       std::map<std::string, std::string_view> embedded,
                                                       io::ObjectCache cache = io::ObjectCache::from_environment());

  CodegenStats stats() const;
  // The source key of `source` (see the file comment).
  std::string source_key(const std::string& source) const;
  // The loaded object for `source` with its bytes: embedded, cached, or compiled now.
  // UnsupportedTarget when it must be compiled and there is no compiler.
  Result<std::pair<std::shared_ptr<SharedObject>, std::string>> object_for(const std::string& source);

 private:
  KernelGenerator(std::optional<HostCompiler> compiler, io::ObjectCache cache, std::vector<std::string> features,
                  std::map<std::string, std::string_view> embedded);
  std::string cache_key(const std::string& source_key) const;
  Result<std::pair<std::shared_ptr<SharedObject>, std::string>> load_file(const std::string& path);
  Result<std::pair<std::shared_ptr<SharedObject>, std::string>> compile_and_load(const std::string& source,
                                                                                 const std::string& key);

  std::optional<HostCompiler> compiler_;
  std::map<std::string, std::string_view> embedded_;
  io::ObjectCache cache_;
  std::vector<std::string> features_, flags_;
  int vector_width_;
  mutable std::mutex mutex_;
  CodegenStats stats_;

  friend class ModuleBuilder;
};

}  // namespace kiln::codegen
