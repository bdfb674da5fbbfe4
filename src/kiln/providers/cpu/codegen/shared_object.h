// A loaded shared object of generated kernels (dlopen), kept loaded while any kernel it holds may
// run, and its symbols looked up by name.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "kiln/status.h"

namespace kiln::codegen {

class SharedObject {
 public:
  // Loads `path`. BackendFailure with the loader's message when it cannot.
  static Result<std::shared_ptr<SharedObject>> load(const std::string& path);
  // Loads an object held in memory (an artifact's), through an anonymous in-memory file.
  static Result<std::shared_ptr<SharedObject>> load_bytes(std::string_view bytes, const std::string& name);
  ~SharedObject();
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;

  // The address of `symbol`. BackendFailure naming it when the object does not define it.
  Result<void*> symbol(const std::string& name) const;

 private:
  SharedObject(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  void* handle_;
  std::string path_;
};

}  // namespace kiln::codegen
