// The execution modes' names (kiln/session.h): how options, reports and the command line spell them.
#include "kiln/session.h"

namespace kiln {

const char* execution_mode_name(ExecutionMode mode) {
  switch (mode) {
    case ExecutionMode::kGraph: return "graph";
    case ExecutionMode::kEager: return "eager";
    case ExecutionMode::kJit: return "jit";
    case ExecutionMode::kAot: return "aot";
  }
  return "?";
}

Result<ExecutionMode> parse_execution_mode(const std::string& name) {
  for (ExecutionMode mode : {ExecutionMode::kGraph, ExecutionMode::kEager, ExecutionMode::kJit, ExecutionMode::kAot})
    if (name == execution_mode_name(mode)) return mode;
  return invalid_argument("unknown execution mode '" + name + "' (known: graph, eager, jit, aot)");
}

}  // namespace kiln
