// Collapsing the dims of an element-wise op's broadcast (see broadcast_view.h).
#include "kiln/providers/cpu/broadcast_view.h"

#include <cstddef>

namespace kiln::providers::cpu {

BroadcastView collapse_broadcast(const std::vector<int64_t>& output, const std::vector<std::vector<int64_t>>& operands) {
  const size_t rank = output.size();
  std::vector<std::vector<int64_t>> padded;
  for (const std::vector<int64_t>& dims : operands) {
    std::vector<int64_t> p(rank - dims.size(), 1);
    p.insert(p.end(), dims.begin(), dims.end());
    padded.push_back(std::move(p));
  }
  // Per dim, which operands broadcast along it; dims of size 1 join any run.
  auto broadcast_by = [&](size_t d) {
    std::vector<bool> pattern;
    for (const std::vector<int64_t>& p : padded) pattern.push_back(p[d] == 1);
    return pattern;
  };
  BroadcastView view;
  view.operands.resize(operands.size());
  std::vector<bool> run_pattern;
  for (size_t d = 0; d < rank; ++d) {
    if (output[d] == 1) continue;
    const std::vector<bool> pattern = broadcast_by(d);
    if (!view.output.empty() && pattern == run_pattern) {
      view.output.back() *= output[d];
      for (size_t i = 0; i < padded.size(); ++i) view.operands[i].back() *= padded[i][d];
      continue;
    }
    run_pattern = pattern;
    view.output.push_back(output[d]);
    for (size_t i = 0; i < padded.size(); ++i) view.operands[i].push_back(padded[i][d]);
  }
  if (view.output.empty()) {  // a single element
    view.output = {1};
    for (std::vector<int64_t>& o : view.operands) o = {1};
  }
  return view;
}

}  // namespace kiln::providers::cpu
