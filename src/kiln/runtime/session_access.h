// What the tool's commands (src/kiln/cli) read of a Session beyond its public API: the evidence
// report as a value, so that a command picks sections from it without printing the report to JSON
// and parsing it back. Not part of the installed headers.
#pragma once

#include "kiln/report/report.h"
#include "kiln/session.h"

namespace kiln {

struct SessionAccess {
  // The report as Session::report_json() would print it now.
  static report::Report report(const Session& session);
};

}  // namespace kiln
