// What the string ops (strings.cpp) share with the cpu provider: RegexFullMatch's kernel with its
// pattern compiled once, when the kernel is built (the reference compiles it on each evaluation).
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/ops/op_registry.h"
#include "kiln/status.h"

namespace kiln::ops {

// RegexFullMatch's kernel for `node`, its `pattern` compiled now (RE2 matches from any thread);
// InvalidModel with RE2's reason when the pattern is not valid.
Result<Kernel> regex_full_match_kernel_for(const ir::Node& node);

}  // namespace kiln::ops
