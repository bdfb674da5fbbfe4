// VariantCache: LRU of compiled plans by input-shape signature (see variant_cache.h).
#include "kiln/runtime/variant_cache.h"

namespace kiln::runtime {

std::shared_ptr<const ExecutionPlan> VariantCache::find(const ShapeSignature& signature) {
  const auto it = entries_.find(signature);
  if (it == entries_.end()) {
    ++stats_.misses;
    return nullptr;
  }
  ++stats_.hits;
  order_.splice(order_.begin(), order_, it->second.position);
  return it->second.plan;
}

std::vector<std::shared_ptr<const ExecutionPlan>> VariantCache::plans() const {
  std::vector<std::shared_ptr<const ExecutionPlan>> kept;
  for (const auto& [signature, entry] : entries_) kept.push_back(entry.plan);
  return kept;
}

void VariantCache::add(const ShapeSignature& signature, std::shared_ptr<const ExecutionPlan> plan) {
  ++stats_.built;
  const auto existing = entries_.find(signature);
  if (existing != entries_.end()) {
    order_.erase(existing->second.position);
    entries_.erase(existing);
  }
  order_.push_front(signature);
  entries_[signature] = {std::move(plan), order_.begin()};
  while (order_.size() > capacity_) {
    entries_.erase(order_.back());
    order_.pop_back();
    ++stats_.evictions;
  }
}

}  // namespace kiln::runtime
