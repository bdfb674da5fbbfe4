// FallbackPolicy: which providers nodes are placed on by preference, and which ones a node may
// fall back to when no preferred provider takes it. Fail-closed by default: nothing falls back.
#pragma once

#include <string>
#include <vector>

namespace kiln::partition {

struct FallbackPolicy {
  std::vector<std::string> preferred = {"cpu"};
  std::vector<std::string> allowed_fallback;  // empty: fail closed

  bool allows_fallback_to(const std::string& provider) const;
  std::string describe() const;  // "prefer [cpu]; fallback to [cpu_ref]" / "...; fail closed"
};

}  // namespace kiln::partition
