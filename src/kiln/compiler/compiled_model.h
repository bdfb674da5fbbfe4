// CompiledModel: the value compile() (compile.h) produces and the runtime's engine runs. It holds
// the optimised IR, where each node runs, the providers that run them and the target they were
// made for, what an artifact brought besides the IR (weights in kernel layouts, generated kernels'
// objects), and each stage's evidence. A .kiln artifact is this value written down (artifact/).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/analysis/type_inference.h"
#include "kiln/compiler/precision_assignment.h"
#include "kiln/ir/graph.h"
#include "kiln/partition/fallback_policy.h"
#include "kiln/partition/partitioner.h"
#include "kiln/passes/pass_manager.h"
#include "kiln/providers/plan_evidence.h"
#include "kiln/target/target.h"

namespace kiln::compiler {

// How to compile: the same for the whole graph, a jit variant and a control-flow body.
struct CompileOptions {
  partition::FallbackPolicy policy;  // where nodes may run
  passes::PipelineOptions pipeline;  // the passes turned off
  // Run the graph passes and the providers' lowering (false in eager mode and with optimize off:
  // then only what lets providers place the graph at all runs).
  bool rewrite = true;
  // The graph comes optimised (an artifact's): its types are inferred and it is placed, no more.
  bool optimised = false;
  // Place the graph now (false in jit mode: each variant is placed for its own shapes).
  bool place = true;
  // The arithmetic of products (precision_assignment.h); a graph comes optimised with its own.
  PrecisionOptions precision;
};

// What an artifact brought besides the IR (artifact/loader.h): its weights in kernel layouts and
// its generated kernels' objects, views into the file's bytes, which `file` keeps alive.
struct Precompiled {
  // An artifact's compile's precision choices, for the control-flow bodies compiled at load:
  // its preference (empty: none recorded, the graph's marks decide) and the source nodes it kept fp32.
  std::vector<ops::Precision> precision_preference;
  std::vector<std::string> kept_fp32_sources, fallback_fp32_sources;
  std::vector<providers::PackedConstant> packed;
  std::set<std::string> packed_only;  // weights stored only packed
  std::map<std::string, std::string_view> generated_code;  // source key -> object
  std::shared_ptr<const char> file;
};

// What a compile found and did, stage by stage; the report's compile sections are made from it.
struct CompileEvidence {
  analysis::InferenceEvidence analysis;
  std::vector<passes::PassRun> passes;  // the graph stage's runs, then the lowering's
  int64_t nodes_after_passes = 0;
  partition::PartitionMap partition;    // the last placement (empty until placed)
  PrecisionEvidence precision;          // each product's precision (once placed)
  double analysis_ms = 0, passes_ms = 0, partition_ms = 0;
};

struct CompiledModel {
  ir::Model model;                    // the optimised IR
  CompileOptions options;
  target::Target target;
  partition::ProviderList providers;  // the policy's, in order, then every other this build has
  partition::PartitionMap partition;  // where each node runs; empty when not placed (jit)
  Precompiled precompiled;
  CompileEvidence evidence;
};

}  // namespace kiln::compiler
