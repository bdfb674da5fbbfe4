// VariantCache: a session's compiled plans, one per input-shape signature (the guard a plan was
// built for: exact input shapes), at most `capacity` of them, the least recently used evicted.
// Varying shapes therefore never grow a session's memory without bound. Counts hits, misses,
// builds and evictions for the report.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <vector>

#include "kiln/runtime/execution_plan.h"

namespace kiln::runtime {

using ShapeSignature = std::vector<std::vector<int64_t>>;

struct VariantStats {
  int64_t hits = 0, misses = 0, built = 0, evictions = 0;
};

class VariantCache {
 public:
  explicit VariantCache(size_t capacity = 8) : capacity_(capacity < 1 ? 1 : capacity) {}

  // The plan for `signature` (a hit, now the most recently used); nullptr for a miss.
  std::shared_ptr<const ExecutionPlan> find(const ShapeSignature& signature);
  // Adds the plan just built for `signature`, evicting the least recently used past capacity.
  // Plans in use by a run stay alive until it ends (shared ownership).
  void add(const ShapeSignature& signature, std::shared_ptr<const ExecutionPlan> plan);

  // The plans kept now.
  std::vector<std::shared_ptr<const ExecutionPlan>> plans() const;

  const VariantStats& stats() const { return stats_; }
  size_t size() const { return order_.size(); }
  size_t capacity() const { return capacity_; }

 private:
  using Order = std::list<ShapeSignature>;  // most recently used first
  struct Entry {
    std::shared_ptr<const ExecutionPlan> plan;
    Order::iterator position;
  };
  size_t capacity_;
  Order order_;
  std::map<ShapeSignature, Entry> entries_;
  VariantStats stats_;
};

}  // namespace kiln::runtime
