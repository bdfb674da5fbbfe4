// The host C++ compiler that turns generated source into a shared object: found at run time
// ($KILN_CXX, else c++, g++ or clang++ on PATH), identified by its own `--version` line (part of
// every cache key), and run with flags chosen for the target CPU features.
#pragma once

#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::codegen {

class HostCompiler {
 public:
  // The compiler to use. UnsupportedTarget naming what was searched when there is none (or
  // $KILN_CXX names a program that does not run).
  static Result<HostCompiler> find();

  const std::string& path() const { return path_; }
  // The first line of `--version`, e.g. "g++ (Debian 12.2.0-14) 12.2.0".
  const std::string& identity() const { return identity_; }
  // Flags for a shared object using `features` (GCC's names: -mavx2, -mavx512f, ...).
  static std::vector<std::string> flags_for(const std::vector<std::string>& features);
  // The features among `features` that flags_for lets the compiler use: what its objects need.
  static std::vector<std::string> used_features(const std::vector<std::string>& features);

  // Compiles `source` with `flags` into the shared object `output` (the same source and flags
  // give the same bytes). BackendFailure carrying the compiler's messages when it fails.
  Status compile(const std::string& source, const std::vector<std::string>& flags, const std::string& output) const;

 private:
  HostCompiler(std::string path, std::string identity) : path_(std::move(path)), identity_(std::move(identity)) {}
  std::string path_, identity_;
};

}  // namespace kiln::codegen
