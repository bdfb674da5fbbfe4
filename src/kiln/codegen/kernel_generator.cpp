// Kernel generator: module emission, cache keys, compile-or-reuse, loading.
#include "kiln/codegen/kernel_generator.h"

#include <chrono>

#include "kiln/codegen/cpp_emitter.h"
#include "kiln/io/file.h"
#include "kiln/io/temporary_folder.h"

namespace kiln::codegen {

std::shared_ptr<const GeneratedKernel> ModuleBuilder::add(LoopKernel kernel) {
  kernel.name = "kiln_kernel_" + std::to_string(kernels_.size());
  kernels_.push_back(std::move(kernel));
  slots_.push_back(std::make_shared<GeneratedKernel>());
  return slots_.back();
}

Status ModuleBuilder::build() {
  if (kernels_.empty()) return Status::ok();
  const std::string source = emit_module(kernels_, generator_->vector_width_);
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<SharedObject> object, generator_->object_for(source));
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

Result<std::shared_ptr<KernelGenerator>> KernelGenerator::create(std::vector<std::string> target_features, ObjectCache cache) {
  KILN_ASSIGN_OR_RETURN(HostCompiler compiler, HostCompiler::find());
  return std::shared_ptr<KernelGenerator>(new KernelGenerator(std::move(compiler), std::move(cache), std::move(target_features)));
}

KernelGenerator::KernelGenerator(HostCompiler compiler, ObjectCache cache, std::vector<std::string> features)
    : compiler_(std::move(compiler)), cache_(std::move(cache)), features_(std::move(features)),
      flags_(HostCompiler::flags_for(features_)), vector_width_(vector_width(features_)) {
  stats_.compiler = compiler_.identity();
  stats_.cache_folder = cache_.folder();
}

CodegenStats KernelGenerator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

std::string KernelGenerator::key_of(const std::string& source) const {
  // Each part length-prefixed, so no two different lists of parts give the same bytes.
  std::string material;
  auto add = [&](const std::string& part) { material += std::to_string(part.size()) + ":" + part; };
  for (const std::string& part : {source, compiler_.identity(), compiler_.path(), std::string(KILN_VERSION)}) add(part);
  for (const std::string& f : flags_) add("flag " + f);
  for (const std::string& f : features_) add("feature " + f);
  return io::sha256_hex(material).value();
}

Result<std::shared_ptr<SharedObject>> KernelGenerator::object_for(const std::string& source) {
  const std::string key = key_of(source);
  bool corrupted = false;
  const std::optional<std::string> cached = cache_.find(key, &corrupted);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.corrupted_entries += corrupted ? 1 : 0;
    (cached ? stats_.cache_hits : stats_.cache_misses) += 1;
  }
  if (cached) return SharedObject::load(*cached);
  return compile_and_load(source, key);
}

Result<std::shared_ptr<SharedObject>> KernelGenerator::compile_and_load(const std::string& source, const std::string& key) {
  // The object is compiled outside the cache and moved in whole; it stays loaded once its
  // temporary folder is gone.
  io::TemporaryFolder output("kiln-obj");
  if (output.path().empty()) return backend_failure("no temporary folder for the compiled kernels");
  const std::string object = output.path() + "/" + key + ".so";
  const auto start = std::chrono::steady_clock::now();
  KILN_RETURN_IF_ERROR(compiler_.compile(source, flags_, object));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.compile_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  }
  const Result<std::string> inserted = cache_.insert(key, object);
  if (!inserted.is_ok()) {
    std::lock_guard<std::mutex> lock(mutex_);
    stats_.cache_writable = false;
  }
  return SharedObject::load(inserted.is_ok() ? *inserted : object);
}

}  // namespace kiln::codegen
