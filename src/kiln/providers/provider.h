// Execution provider interface: a named set of kernels that answers, per node, whether it can run
// it (with a reason when it declines) and hands out the kernel. Capability first, as in ggml's
// supports_op: partition decisions are data, made before any kernel is built.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ops/op_registry.h"
#include "kiln/providers/kernel_build.h"
#include "kiln/status.h"

namespace kiln::providers {

struct Capability {
  bool supported = false;
  std::string reason;  // why it declined (empty when supported)

  static Capability yes() { return {true, ""}; }
  static Capability no(std::string why) { return {false, std::move(why)}; }
};

class Provider {
 public:
  virtual ~Provider() = default;
  virtual std::string name() const = 0;
  // Whether this provider can run `node` (op, opset, dtypes and shapes as analysed, attributes).
  virtual Capability supports(const ir::Node& node) const = 0;
  // The kernel for a node this provider supports; what building it leaves is recorded in `build`.
  virtual Result<ops::Kernel> kernel_for(const ir::Node& node, KernelBuild& build) const = 0;
};

// Providers known to this build, by name ("cpu_ref"); UnsupportedTarget for unknown names.
Result<std::shared_ptr<const Provider>> make_provider(const std::string& name);
std::vector<std::string> available_providers();

}  // namespace kiln::providers
