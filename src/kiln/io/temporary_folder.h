// A private folder under the system's temporary directory (mkdtemp), removed with its contents
// when it goes out of scope: scratch space for a child process's files. A shared object loaded
// from it stays mapped after the folder is gone.
#pragma once

#include <string>

namespace kiln::io {

class TemporaryFolder {
 public:
  // `prefix` starts the folder's name ("kiln-cc"); path() is empty when it could not be made.
  explicit TemporaryFolder(const std::string& prefix);
  ~TemporaryFolder();
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace kiln::io
