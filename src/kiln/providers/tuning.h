// Kernels chosen by measurement (tactics). When a provider has several ways to run a node on its
// target (the cpu provider: a marked convolution direct or by Winograd), and the session tunes
// (SessionOptions::tune), the Tuner times each candidate on the node's concrete shapes and the
// fastest wins; without tuning, or once the budget is spent, the provider's heuristic picks.
// Timings are kept in a cache beside the kernel cache ($KILN_CACHE_DIR/tactics), keyed by the
// SHA-256 of (target, op, problem, library versions, Kiln version), bounded in bytes and checked
// like the object cache: a corrupt entry (its digest fails) or a foreign one (its recorded key
// text differs) is counted, ignored and measured again. Every choice is evidence: the report's
// `tuning` section and an artifact's manifest list each with its candidates' times.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/io/object_cache.h"
#include "kiln/status.h"

namespace kiln::providers {

struct TacticCandidate {
  std::string name;  // "direct", "winograd"
  // Runs the candidate on the node's shapes and returns its time in ms (best of a few runs).
  std::function<Result<double>()> time_ms;
};

// One choice, as evidence.
struct TacticChoice {
  std::string node;
  std::string problem;  // what was tuned: op, shapes, attributes, threads
  std::map<std::string, double> candidate_ms;  // empty when the heuristic chose
  std::string chosen;
  std::string source;  // "measured", "cache", "heuristic" (tuning off), "budget" (budget spent)
};

struct TuningStats {
  bool enabled = false;
  double budget_ms = 0, spent_ms = 0;
  int64_t measured = 0, cache_hits = 0, cache_corrupted = 0, cache_foreign = 0;
  std::vector<TacticChoice> choices;  // the latest plan's
};

class Tuner {
 public:
  // A tuner that measures: `target_key` names the target and libraries ("avx512_core
  // avx2,avx512f,... oneDNN 2.6.3 threads 2"), `cache` keeps the timings.
  Tuner(std::string target_key, io::ObjectCache cache, double budget_ms);
  // A tuner that measures nothing: every choice is the provider's heuristic, recorded as such.
  Tuner();
  // The measuring tuner a session makes: timings cached in timing_cache().
  static std::shared_ptr<Tuner> from_environment(std::string target_key, double budget_ms);
  // The timing cache: $KILN_CACHE_DIR/tactics, entries KEY.json, bounded at 1/64 of the kernel
  // cache's bound (kiln cache stats|clear show and empty it too).
  static io::ObjectCache timing_cache();

  // The name of the candidate to run for `node`: the cached winner for `problem`, else the fastest
  // measured now while the budget lasts, else `heuristic` (one of the candidates' names). A
  // candidate that fails to run is left out; with no candidate left, the heuristic.
  std::string choose(const std::string& node, const std::string& problem, const std::vector<TacticCandidate>& candidates,
                     const std::string& heuristic);
  // Starts the evidence of a new plan (the counters add up over the session).
  void start_plan();
  TuningStats stats() const;

 private:
  std::string key_text(const std::string& problem) const;
  // The cache's entry under `key` when its digest holds and it records `text` as its key (a
  // corrupt or foreign one is counted and ignored). The caller holds mutex_.
  std::optional<nlohmann::json> cached(const std::string& key, const std::string& text);

  std::string target_key_;
  io::ObjectCache cache_;
  bool enabled_ = false;
  mutable std::mutex mutex_;
  TuningStats stats_;
};

}  // namespace kiln::providers
