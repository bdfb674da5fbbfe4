// Kernels for nodes whose shapes a plan does not know: those after an If whose branch, chosen by
// an input's value, gives another rank; lengths that depend on data (Range, NonZero); outputs
// shaped by values the graph computes (a reduction's axes). On a run the kernel is built for that
// run's input shapes and small integer inputs' values (from a copy of the node typed with them,
// those values as constants, by the provider's own kernel_for), kept for the next runs with the
// same shapes and values (a few per node), and run. A node the provider cannot run at those
// shapes fails that run with the provider's reason (UnsupportedTarget), never a wrong result.
#pragma once

#include <functional>

#include "kiln/ir/graph.h"
#include "kiln/ops/op_registry.h"
#include "kiln/providers/kernel_build.h"
#include "kiln/status.h"

namespace kiln::providers::cpu {

using KernelBuilder = std::function<Result<ops::Kernel>(const ir::Node& node, KernelBuild& build)>;

// A kernel for `node` (which lives as long as the kernel) building its real kernels with `build`.
ops::Kernel run_time_shaped_kernel(const ir::Node& node, KernelBuilder build);

}  // namespace kiln::providers::cpu
