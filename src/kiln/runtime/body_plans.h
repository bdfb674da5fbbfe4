// BodyPlans: how a plan runs the bodies of its control-flow nodes (If branches, Loop and Scan
// bodies) when a fast provider holds the node: each body is compiled like a graph of its own
// (the enclosing constants it reads are its constants, sharing their storage; other values it
// reads from enclosing scopes become extra inputs), compiled as the session compiles its graph (a
// BodyCompiler: graph passes, placement under the session's fallback policy, lowering for the
// providers that hold its nodes) and planned per input-shape signature (the shapes its node hands
// it: the body's declared input dims are hints, DeclaredInputs::kHints), so its convolutions and
// products run on the same providers, in the same layouts, packed once, as the main graph's. Plans are kept per body and shapes (a bounded number); each has its own
// executor, so nested bodies run while their enclosing one does. Run inside a timed step, a body's
// steps are recorded into that run's timings (StepTiming).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kiln/compiler/compile.h"
#include "kiln/ir/graph.h"
#include "kiln/ops/op_registry.h"
#include "kiln/partition/partitioner.h"
#include "kiln/runtime/execution_plan.h"
#include "kiln/runtime/executor.h"

namespace kiln::runtime {

// Compiles a body as a graph of its own and places its nodes (compiler::later_compilers); none:
// placement under the policy only, the body left as it is.
using BodyCompiler = compiler::GraphCompiler;

class BodyPlans {
 public:
  BodyPlans(partition::FallbackPolicy policy, partition::ProviderList providers, const ops::OpRegistry& registry,
            BodyCompiler compiler = {})
      : policy_(std::move(policy)), providers_(std::move(providers)), registry_(registry), compiler_(std::move(compiler)) {}

  // Runs `body` on `inputs` (by position), reading the values it captures from `scope`.
  Result<std::vector<Value>> run(const ir::Graph& body, const std::vector<Value>& inputs, const ops::ValueScope& scope);

  // A runner for PlanContext::set_body_runner sharing ownership of `plans`.
  static ops::SubgraphRunner runner(std::shared_ptr<BodyPlans> plans);

 private:
  // A body as a graph of its own: its inputs, then the enclosing values it reads, by name.
  struct Compiled {
    std::unique_ptr<ir::Graph> graph;
    std::vector<std::string> captured;
    partition::PartitionMap placed;
  };
  struct Planned {
    std::shared_ptr<ExecutionPlan> plan;  // shared: a timed run's steps keep it (StepTiming::plan)
    Executor executor;
  };
  static constexpr size_t kMaxPlansPerBody = 16;

  Result<Compiled*> compiled(const ir::Graph& body, const ops::ValueScope& scope);

  partition::FallbackPolicy policy_;
  partition::ProviderList providers_;
  const ops::OpRegistry& registry_;
  BodyCompiler compiler_;
  std::mutex mutex_;
  std::map<const ir::Graph*, Compiled> bodies_;
  std::map<std::pair<const ir::Graph*, std::vector<std::vector<int64_t>>>, std::shared_ptr<Planned>> plans_;
};

}  // namespace kiln::runtime
