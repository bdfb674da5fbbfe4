// Temporary folders: mkdtemp and recursive removal.
#include "kiln/io/temporary_folder.h"

#include <stdlib.h>

#include <filesystem>

namespace kiln::io {

TemporaryFolder::TemporaryFolder(const std::string& prefix) {
  std::error_code ec;
  // mkdtemp replaces the trailing six X's with a unique suffix.
  std::string pattern = (std::filesystem::temp_directory_path(ec) / (prefix + "-XXXXXX")).string();
  if (!ec && mkdtemp(pattern.data())) path_ = pattern;
}

TemporaryFolder::~TemporaryFolder() {
  std::error_code ignored;
  if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
}

}  // namespace kiln::io
