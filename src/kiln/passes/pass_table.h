// The table of every graph-rewrite pass: its name (used by --disable-pass and the report), a
// one-line summary and its entry point. The table's order is the default pipeline.
#pragma once

#include <string>
#include <vector>

#include "kiln/passes/pass_context.h"

namespace kiln::passes {

struct PassInfo {
  std::string name;     // snake_case, stable: CLI flags and reports use it
  std::string summary;  // one line, for `kiln passes`-style listings and docs
  PassFunction run;
};

// Every pass, in default pipeline order.
const std::vector<PassInfo>& pass_table();

}  // namespace kiln::passes
