// Shared objects: dlopen, dlsym, dlclose.
#include "kiln/codegen/shared_object.h"

#include <dlfcn.h>

namespace kiln::codegen {

Result<std::shared_ptr<SharedObject>> SharedObject::load(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    return backend_failure("cannot load generated kernels " + path + ": " + (why ? why : "unknown error"));
  }
  return std::shared_ptr<SharedObject>(new SharedObject(handle, path));
}

SharedObject::~SharedObject() { dlclose(handle_); }

Result<void*> SharedObject::symbol(const std::string& name) const {
  dlerror();
  void* address = dlsym(handle_, name.c_str());
  if (!address) return backend_failure(path_ + " defines no kernel " + name);
  return address;
}

}  // namespace kiln::codegen
