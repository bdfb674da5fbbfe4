// Executor: runs an ExecutionPlan's steps in order over its arena. Inputs and constants are bound
// without copies; intermediates are views into the arena; outputs are owning tensors handed to the
// caller. Not thread-safe: one run at a time per Executor (a session has one per lane: run_lanes.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "kiln/ops/run_limits.h"
#include "kiln/runtime/execution_plan.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "kiln/value.h"

namespace kiln::runtime {

// One step of a timed run. The steps of the bodies a step runs (If, Loop and Scan through
// BodyPlans, on the step's thread) are recorded beside it, a level deeper, one entry per body step
// and enclosing step, summed over the calls (a Loop's iterations); the enclosing step's `body_ms`
// is their share of its time, so self times (ms - body_ms) add up to the run without counting twice.
struct StepTiming {
  const ir::Node* node = nullptr;
  const std::string* provider = nullptr;  // the plan's step provider
  double start_ms = 0;  // from the start of the run (a body's step: its first call)
  double ms = 0;        // wall time over all calls, bodies included
  double body_ms = 0;   // of `ms`, the time of the steps of the bodies it ran
  int64_t calls = 1;
  int depth = 0;                     // 0: a step of the run's plan; n: of a body n levels down
  const ir::Node* parent = nullptr;  // depth > 0: the step whose body this step is in
  // depth > 0: the body's plan, which `node` and `provider` point into (a body's plans may be
  // evicted while the timings are kept).
  std::shared_ptr<const ExecutionPlan> plan;

  double self_ms() const { return ms - body_ms; }
};

// Called after each step with the run's values, by slot (a step's outputs are at step.outputs).
using StepObserver = std::function<void(const Step& step, const std::vector<Value>& values)>;

class Executor {
 public:
  // `inputs` holds one value per graph input, in order, with the shapes the plan was built for.
  // When `timings` is non-null it receives one entry per step, and the steps of the bodies they run
  // (StepTiming); a run without `timings` inside a timed step (a body's plan, run by that step's
  // kernel on its thread) records its steps into the enclosing run's. `observer`, when set, sees each
  // step's outputs before a later step may reuse their memory. `limits`, when given, become the
  // current run limits (ops/run_limits.h) for the run; the current ones (this run's, or those of
  // the run whose Loop or Scan body this is) are checked before each step: a terminated run or a
  // passed deadline ends with a Cancelled status naming the step.
  // `output_targets`, when given, holds one tensor per graph output (undefined: none): the output
  // is written into it, in place where the plan gives the output a buffer of its own (an output
  // slot of static shape), else copied into it, and the returned value is that tensor.
  // InvalidArgument naming the output when a target's dtype or shape is not the output's.
  Result<std::vector<Value>> run(const ExecutionPlan& plan, const std::vector<Value>& inputs,
                                 std::vector<StepTiming>* timings = nullptr, const StepObserver& observer = {},
                                 const ops::RunLimits* limits = nullptr,
                                 std::vector<Tensor>* output_targets = nullptr);
  int64_t arena_capacity() const { return arena_bytes_; }
  // Grows the arena to at least `bytes` now (a run grows it to its plan's need otherwise).
  Status reserve_arena(int64_t bytes);

 private:

  std::shared_ptr<void> arena_;
  int64_t arena_bytes_ = 0;
};

}  // namespace kiln::runtime
