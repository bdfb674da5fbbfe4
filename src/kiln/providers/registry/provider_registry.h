// The table of providers this build knows, by name: the one place that names each provider, above
// them all (providers/ itself is the interface they implement).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kiln/providers/provider.h"

namespace kiln::providers {

// The provider named `name` ("cpu_ref") made for `config`; UnsupportedTarget for unknown names.
Result<std::shared_ptr<const Provider>> make_provider(const std::string& name, const ProviderConfig& config);
std::vector<std::string> available_providers();

}  // namespace kiln::providers
