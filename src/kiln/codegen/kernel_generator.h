// Generated kernels for one session (jit mode): each plan's loop kernels are collected into one
// module, emitted as C++, compiled by the host compiler unless the object cache already holds the
// object for the same key, loaded, and bound to the kernels that call them. The key is the SHA-256
// of (source, compiler identity, flags, target features, Kiln version). Counts and times are kept
// for the report.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/codegen/host_compiler.h"
#include "kiln/codegen/loop_ir.h"
#include "kiln/codegen/object_cache.h"
#include "kiln/codegen/shared_object.h"
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
  // Emits, compiles (or finds in the cache) and loads the module, binding every added kernel.
  Status build();
  size_t size() const { return kernels_.size(); }

 private:
  std::shared_ptr<KernelGenerator> generator_;
  std::vector<LoopKernel> kernels_;
  std::vector<std::shared_ptr<GeneratedKernel>> slots_;
};

class KernelGenerator {
 public:
  // A generator for code using `target_features` (GCC's names). UnsupportedTarget when no host
  // compiler runs.
  static Result<std::shared_ptr<KernelGenerator>> create(std::vector<std::string> target_features,
                                                         ObjectCache cache = ObjectCache::from_environment());

  CodegenStats stats() const;
  // The loaded object for `source`: from the cache, else compiled now.
  Result<std::shared_ptr<SharedObject>> object_for(const std::string& source);

 private:
  KernelGenerator(HostCompiler compiler, ObjectCache cache, std::vector<std::string> features);
  std::string key_of(const std::string& source) const;
  Result<std::shared_ptr<SharedObject>> compile_and_load(const std::string& source, const std::string& key);

  HostCompiler compiler_;
  ObjectCache cache_;
  std::vector<std::string> features_, flags_;
  int vector_width_;
  mutable std::mutex mutex_;
  CodegenStats stats_;

  friend class ModuleBuilder;
};

}  // namespace kiln::codegen
