// Shared objects: dlopen, dlsym, dlclose.
#include "kiln/providers/cpu/codegen/shared_object.h"

#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

namespace kiln::codegen {

Result<std::shared_ptr<SharedObject>> SharedObject::load(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    return backend_failure("cannot load generated kernels " + path + ": " + (why ? why : "unknown error"));
  }
  return std::shared_ptr<SharedObject>(new SharedObject(handle, path));
}

Result<std::shared_ptr<SharedObject>> SharedObject::load_bytes(std::string_view bytes, const std::string& name) {
  const int fd = memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) return backend_failure("cannot make an in-memory file for " + name);
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = write(fd, bytes.data() + written, bytes.size() - written);
    if (n <= 0) {
      close(fd);
      return backend_failure("cannot write " + name + " to an in-memory file");
    }
    written += static_cast<size_t>(n);
  }
  Result<std::shared_ptr<SharedObject>> loaded = load("/proc/self/fd/" + std::to_string(fd));
  close(fd);  // the loader keeps its own mapping
  if (!loaded.is_ok()) return loaded.status().with_context(name);
  return loaded;
}

SharedObject::~SharedObject() { dlclose(handle_); }

Result<void*> SharedObject::symbol(const std::string& name) const {
  dlerror();
  void* address = dlsym(handle_, name.c_str());
  if (!address) return backend_failure(path_ + " defines no kernel " + name);
  return address;
}

}  // namespace kiln::codegen
