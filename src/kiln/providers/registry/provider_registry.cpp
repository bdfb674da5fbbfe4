// The table of providers this build knows (provider_registry.h).
#include "kiln/providers/registry/provider_registry.h"

#include <functional>
#include <map>

#include "kiln/providers/cpu/cpu_provider.h"
#include "kiln/providers/cpu_ref/cpu_ref_provider.h"

namespace kiln::providers {

namespace {

using Factory = std::function<Result<std::shared_ptr<const Provider>>(const ProviderConfig&)>;

const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> table = {
      {"cpu", [](const ProviderConfig& config) { return CpuProvider::create(config); }},
      {"cpu_ref",
       [](const ProviderConfig&) -> Result<std::shared_ptr<const Provider>> {
         return std::shared_ptr<const Provider>(std::make_shared<CpuRefProvider>(ops::OpRegistry::global()));
       }},
  };
  return table;
}

}  // namespace

std::vector<std::string> available_providers() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : factories()) names.push_back(name);
  return names;
}

Result<std::shared_ptr<const Provider>> make_provider(const std::string& name, const ProviderConfig& config) {
  auto it = factories().find(name);
  if (it == factories().end()) {
    std::string known;
    for (const auto& n : available_providers()) known += (known.empty() ? "" : ", ") + n;
    return Status(StatusCode::kUnsupportedTarget, "unknown provider '" + name + "' (available: " + known + ")");
  }
  return it->second(config);
}

}  // namespace kiln::providers
