// Per-op time accumulation.
#include "kiln/runtime/op_profile.h"

#include <algorithm>

namespace kiln::runtime {

void accumulate_op_times(const std::vector<StepTiming>& timings, std::vector<report::OpTime>& totals) {
  for (const StepTiming& t : timings) {
    auto it = std::find_if(totals.begin(), totals.end(),
                           [&](const report::OpTime& o) { return o.op_type == t.node->op_type; });
    if (it == totals.end()) {
      totals.push_back({t.node->op_type, 0, 0});
      it = totals.end() - 1;
    }
    it->calls += t.calls;
    it->ms += t.self_ms();
  }
  std::sort(totals.begin(), totals.end(), [](const report::OpTime& a, const report::OpTime& b) { return a.ms > b.ms; });
}

}  // namespace kiln::runtime
