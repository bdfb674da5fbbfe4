// ExecutionPlan: a graph specialised to concrete input shapes, lowered to a linear schedule of
// kernels over one planned arena. Built once per input-shape signature; a new shape is a re-plan,
// not a rebuild of the compiled graph.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/memory/memory_planner.h"
#include "kiln/ops/op_registry.h"
#include "kiln/partition/partitioner.h"
#include "kiln/status.h"

namespace kiln::runtime {

// Where a value's tensor lives during a run.
struct ValueSlot {
  enum class Kind {
    kInput,     // the caller's tensor, bound without a copy
    kConstant,  // an initializer, bound without a copy
    kArena,     // planned offset in the arena
    kOutput,    // owning tensor handed to the caller
    kDynamic,   // shape known only at run time (or string data): allocated when produced
  };
  Kind kind = Kind::kArena;
  const ir::Value* value = nullptr;
  DType dtype = DType::kUndefined;
  std::vector<int64_t> shape;  // concrete unless kDynamic
  int64_t offset = 0;          // kArena only
  size_t io_index = 0;         // kInput / kOutput: position among graph inputs / outputs
};

struct Step {
  const ir::Node* node = nullptr;
  const ops::OpDef* def = nullptr;  // for run-time shape rules of dynamic outputs
  ops::Kernel kernel;
  std::string provider;
  std::vector<int> inputs;   // slot index, -1 for an omitted input
  std::vector<int> outputs;  // slot index, -1 for an omitted output
  bool dynamic_outputs = false;
  // The kernel assigns its outputs: control flow, and any op that gives sequences or optionals.
  bool self_allocating = false;
  // A Concat whose inputs their producers wrote into its output already (concat_in_place.h): not run.
  bool elided = false;
  // Enclosing values the node's subgraphs read, by name, with their slots.
  std::vector<std::pair<std::string, int>> captured;
};

// Shared from itself so that a body's timed steps can keep their plan (StepTiming::plan).
struct ExecutionPlan : std::enable_shared_from_this<ExecutionPlan> {
  std::unique_ptr<ir::Graph> graph;  // the specialised copy the steps point into
  std::vector<std::vector<int64_t>> input_shapes;  // empty for sequence and optional inputs
  std::vector<ValueSlot> slots;
  std::vector<Step> steps;
  std::vector<int> output_slots;  // one per graph output
  memory::MemoryPlan memory;
  int64_t dynamic_values = 0;
  std::set<const ir::Node*> concats_in_place;  // Concats elided: their inputs share their output's buffer
  providers::PlanEvidence evidence;  // what building its kernels left: implementations, features, packed constants, code
  // Nodes re-placed while their kernels were built: the partition's provider could not build one
  // (UnsupportedTarget) and another the policy allows could.
  std::vector<partition::PartitionMap::LateDecline> late_declines;
};

// For each graph output, the graph input it is an update of, or -1: the output's producer may
// write it over that input (OpDef::in_place_input), nothing else reads the input, and both have
// one dtype and shape. A stream carrying the output into that input hands the input's buffer to
// the producer as the output's (a key/value cache written in place).
std::vector<int> inputs_updated_in_place(const ExecutionPlan& plan);

// What a graph's declared input dims are to the shapes a plan is built for.
enum class DeclaredInputs {
  kContract,  // a model's inputs: a shape that contradicts them is refused
  kHints,     // a body's inputs (a Loop's carried values, captured values): the shapes its node
              // hands over at run time are the facts, declared dims only hints (as in ONNX Runtime)
};

// Specialises `compiled` to `input_shapes` (one per graph input, in order; InvalidArgument when a
// shape contradicts the graph's declared input dims and `declared` makes them a contract),
// re-infers every type, and plans kernels and memory. `partition` must have been computed on
// `compiled` (assignments in node order). The kernels are built from `context` (constants
// packed ahead, the tuner, whether kernels may be generated; a body runner over `providers` when
// it has none); UnsupportedTarget when a kernel cannot take a constant that exists only packed.
Result<std::unique_ptr<ExecutionPlan>> build_plan(const ir::Graph& compiled, const partition::PartitionMap& partition,
                                                  const partition::ProviderList& providers,
                                                  const ops::OpRegistry& registry,
                                                  const std::vector<std::vector<int64_t>>& input_shapes,
                                                  providers::PlanContext context = {},
                                                  DeclaredInputs declared = DeclaredInputs::kContract);

}  // namespace kiln::runtime
