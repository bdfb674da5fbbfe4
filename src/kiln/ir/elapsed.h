// Milliseconds since a steady-clock instant: how the compiler, the runtime and the CLI time stages and runs.
#pragma once

#include <chrono>

namespace kiln {

inline double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace kiln
