// Kernel generator: module emission, cache keys, compile-or-reuse, loading.
#include "kiln/providers/cpu/codegen/kernel_generator.h"

#include <chrono>

#include "kiln/providers/cpu/codegen/cpp_emitter.h"
#include "kiln/io/file.h"
#include "kiln/io/temporary_folder.h"

namespace kiln::codegen {

std::shared_ptr<const GeneratedKernel> ModuleBuilder::add(LoopKernel kernel) {
  kernel.name = "kiln_kernel_" + std::to_string(kernels_.size());
  kernels_.push_back(std::move(kernel));
  slots_.push_back(std::make_shared<GeneratedKernel>());
  return slots_.back();
}

std::vector<std::string> ModuleBuilder::required_features() const { return HostCompiler::used_features(generator_->features_); }

Status ModuleBuilder::build() {
  if (kernels_.empty()) return Status::ok();
  const std::string source = emit_module(kernels_, generator_->vector_width_);
  source_key_ = generator_->source_key(source);
  KILN_ASSIGN_OR_RETURN(auto loaded, generator_->object_for(source));
  const std::shared_ptr<SharedObject> object = loaded.first;
  object_bytes_ = std::move(loaded.second);
  for (size_t i = 0; i < kernels_.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(void* address, object->symbol(kernels_[i].name));
    slots_[i]->function = reinterpret_cast<KernelFunction>(address);
    slots_[i]->object = object;
  }
  std::lock_guard<std::mutex> lock(generator_->mutex_);
  generator_->stats_.modules += 1;
  generator_->stats_.kernels += static_cast<int64_t>(kernels_.size());
  generator_->stats_.source_bytes += static_cast<int64_t>(source.size());
  return Status::ok();
}

Result<std::shared_ptr<KernelGenerator>> KernelGenerator::create(std::vector<std::string> target_features, io::ObjectCache cache) {
  KILN_ASSIGN_OR_RETURN(HostCompiler compiler, HostCompiler::find());
  return std::shared_ptr<KernelGenerator>(new KernelGenerator(std::move(compiler), std::move(cache), std::move(target_features), {}));
}

std::shared_ptr<KernelGenerator> KernelGenerator::for_embedded(std::vector<std::string> target_features,
                                                               std::map<std::string, std::string_view> embedded, io::ObjectCache cache) {
  Result<HostCompiler> compiler = HostCompiler::find();
  return std::shared_ptr<KernelGenerator>(new KernelGenerator(
      compiler.is_ok() ? std::optional(compiler.value()) : std::nullopt, std::move(cache), std::move(target_features), std::move(embedded)));
}

KernelGenerator::KernelGenerator(std::optional<HostCompiler> compiler, io::ObjectCache cache, std::vector<std::string> features,
                                 std::map<std::string, std::string_view> embedded)
    : compiler_(std::move(compiler)), embedded_(std::move(embedded)), cache_(std::move(cache)), features_(std::move(features)),
      flags_(HostCompiler::flags_for(features_)), vector_width_(vector_width(features_)) {
  stats_.compiler = compiler_ ? compiler_->identity() : "";
  stats_.cache_folder = cache_.folder();
}

CodegenStats KernelGenerator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

namespace {

// SHA-256 of `parts`, each length-prefixed so that no two different lists give the same bytes.
std::string digest_of(const std::vector<std::string>& parts) {
  std::string material;
  for (const std::string& part : parts) material += std::to_string(part.size()) + ":" + part;
  return io::sha256_hex(material).value();
}

}  // namespace

std::string KernelGenerator::source_key(const std::string& source) const {
  std::vector<std::string> parts = {source, std::string(KILN_VERSION)};
  for (const std::string& f : flags_) parts.push_back("flag " + f);
  for (const std::string& f : features_) parts.push_back("feature " + f);
  return digest_of(parts);
}

std::string KernelGenerator::cache_key(const std::string& source_key) const {
  return digest_of({source_key, compiler_ ? compiler_->identity() : "", compiler_ ? compiler_->path() : ""});
}

Result<std::pair<std::shared_ptr<SharedObject>, std::string>> KernelGenerator::load_file(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::string bytes, io::read_file(path));
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<SharedObject> object, SharedObject::load(path));
  return std::make_pair(std::move(object), std::move(bytes));
}

Result<std::pair<std::shared_ptr<SharedObject>, std::string>> KernelGenerator::object_for(const std::string& source) {
  const std::string key = source_key(source);
  if (auto it = embedded_.find(key); it != embedded_.end()) {
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<SharedObject> object, SharedObject::load_bytes(it->second, "kiln-artifact-kernels"));
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.embedded_hits += 1;
    return std::make_pair(std::move(object), std::string(it->second));
  }
  if (!compiler_)
    return unsupported_target("generated kernels for these shapes are not in the artifact, and no C++ compiler runs here to build them");
  const std::string cached_key = cache_key(key);
  bool corrupted = false;
  const std::optional<std::string> cached = cache_.find(cached_key, &corrupted);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.corrupted_entries += corrupted ? 1 : 0;
    (cached ? stats_.cache_hits : stats_.cache_misses) += 1;
  }
  if (cached) return load_file(*cached);
  return compile_and_load(source, cached_key);
}

Result<std::pair<std::shared_ptr<SharedObject>, std::string>> KernelGenerator::compile_and_load(const std::string& source,
                                                                                                const std::string& key) {
  // The object is compiled outside the cache and moved in whole; it stays loaded once its
  // temporary folder is gone.
  io::TemporaryFolder output("kiln-obj");
  if (output.path().empty()) return backend_failure("no temporary folder for the compiled kernels");
  const std::string object = output.path() + "/" + key + ".so";
  const auto start = std::chrono::steady_clock::now();
  KILN_RETURN_IF_ERROR(compiler_->compile(source, flags_, object));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.compile_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  const Result<std::string> inserted = cache_.insert(key, object);
  if (!inserted.is_ok()) {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.cache_writable = false;
  }
  return load_file(inserted.is_ok() ? *inserted : object);
}

}  // namespace kiln::codegen
