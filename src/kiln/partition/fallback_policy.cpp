// FallbackPolicy helpers.
#include "kiln/partition/fallback_policy.h"

#include <algorithm>

namespace kiln::partition {

namespace {
std::string list(const std::vector<std::string>& names) {
  std::string s = "[";
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", " : "") + names[i];
  return s + "]";
}
}  // namespace

bool FallbackPolicy::allows_fallback_to(const std::string& provider) const {
  return std::find(allowed_fallback.begin(), allowed_fallback.end(), provider) != allowed_fallback.end();
}

std::string FallbackPolicy::describe() const {
  return "prefer " + list(preferred) + "; " +
         (allowed_fallback.empty() ? std::string("fail closed") : "fallback to " + list(allowed_fallback));
}

}  // namespace kiln::partition
