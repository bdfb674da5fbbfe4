// The table of every graph-rewrite pass: its name (used by --disable-pass and the report), a
// one-line summary, its entry point, and the stage it runs at: on the whole graph before
// partition (provider-independent rewrites), or when lowering a partitioned graph for one provider
// (what depends on the provider and its target: layouts, Winograd, element-wise chains). The
// table's order is each stage's pipeline order.
#pragma once

#include <string>
#include <vector>

#include "kiln/passes/pass_context.h"

namespace kiln::passes {

enum PassStage : unsigned { kGraphStage = 1, kLoweringStage = 2 };

struct PassInfo {
  std::string name;     // snake_case, stable: CLI flags and reports use it
  std::string summary;  // one line, for `kiln passes`-style listings and docs
  PassFunction run;
  unsigned stages = kGraphStage;  // PassStage bits
};

// Every pass, in default pipeline order.
const std::vector<PassInfo>& pass_table();

}  // namespace kiln::passes
