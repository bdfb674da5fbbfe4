// How a kernel shared by the reference and a provider runs its independent tasks: in order (the
// reference) or on the provider's threads. NonMaxSuppression's (batch, class) selections and
// GridSample's (image, channel) planes are such tasks.
#pragma once

#include <cstdint>
#include <functional>

namespace kiln::ops {

// Calls task(i) once for every i in [0, count), in any order, possibly concurrently.
using TaskRunner = std::function<void(int64_t count, const std::function<void(int64_t)>& task)>;

// Runs the tasks one after the other.
inline void run_in_order(int64_t count, const std::function<void(int64_t)>& task) {
  for (int64_t i = 0; i < count; ++i) task(i);
}

}  // namespace kiln::ops
