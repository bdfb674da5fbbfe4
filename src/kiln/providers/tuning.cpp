// The tuner: candidates timed within a budget, winners cached on disk (see tuning.h).
#include "kiln/providers/tuning.h"

#include <chrono>
#include <limits>

#include <nlohmann/json.hpp>

#include "kiln/io/file.h"

namespace kiln::providers {

Tuner::Tuner(std::string target_key, io::ObjectCache cache, double budget_ms)
    : target_key_(std::move(target_key)), cache_(std::move(cache)), enabled_(true) {
  stats_.enabled = true;
  stats_.budget_ms = budget_ms;
}

Tuner::Tuner() : cache_("", 0) {}

io::ObjectCache Tuner::timing_cache() {
  const io::ObjectCache kernels = io::ObjectCache::from_environment();
  // Timings are small: a bound of 1/64 of the kernel cache's holds tens of thousands.
  return io::ObjectCache(kernels.folder() + "/tactics", std::max<int64_t>(kernels.max_bytes() / 64, 1 << 20), ".json");
}

std::shared_ptr<Tuner> Tuner::from_environment(std::string target_key, double budget_ms) {
  return std::make_shared<Tuner>(std::move(target_key), timing_cache(), budget_ms);
}

std::string Tuner::key_text(const std::string& problem) const {
  return "kiln " KILN_VERSION "; target " + target_key_ + "; " + problem;
}

void Tuner::start_plan() {
  const std::lock_guard<std::mutex> lock(mutex_);
  stats_.choices.clear();
}

TuningStats Tuner::stats() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

std::optional<nlohmann::json> Tuner::cached(const std::string& key, const std::string& text) {
  bool corrupted = false;
  const std::optional<std::string> path = cache_.find(key, &corrupted);
  stats_.cache_corrupted += corrupted;
  if (!path) return std::nullopt;
  const Result<std::string> bytes = io::read_file(*path);
  nlohmann::json entry = nlohmann::json::parse(bytes.is_ok() ? *bytes : "", nullptr, false);
  const bool ours = entry.is_object() && entry.value("key", "") == text && entry.contains("chosen") &&
                    entry["chosen"].is_string() && entry.contains("candidate_ms") && entry["candidate_ms"].is_object();
  if (ours) return entry;
  stats_.cache_foreign += 1;
  return std::nullopt;
}

std::string Tuner::choose(const std::string& node, const std::string& problem, const std::vector<TacticCandidate>& candidates,
                          const std::string& heuristic) {
  const std::lock_guard<std::mutex> lock(mutex_);
  TacticChoice choice{node, problem, {}, heuristic, "heuristic"};
  if (enabled_ && candidates.size() > 1) {
    const std::string text = key_text(problem);
    const std::string key = io::sha256_hex(text).value();
    const std::optional<nlohmann::json> entry = cached(key, text);
    bool known = false;
    if (entry) {
      for (const TacticCandidate& c : candidates) known = known || c.name == (*entry)["chosen"];
    }
    if (entry && known) {
      choice.chosen = (*entry)["chosen"];
      for (const auto& [name, ms] : (*entry)["candidate_ms"].items())
        if (ms.is_number()) choice.candidate_ms[name] = ms;
      choice.source = "cache";
      stats_.cache_hits += 1;
    } else if (stats_.spent_ms >= stats_.budget_ms) {
      choice.source = "budget";
    } else {
      const auto start = std::chrono::steady_clock::now();
      double best = std::numeric_limits<double>::infinity();
      for (const TacticCandidate& c : candidates) {
        const Result<double> ms = c.time_ms();
        if (!ms.is_ok()) continue;
        choice.candidate_ms[c.name] = *ms;
        if (*ms < best) {
          best = *ms;
          choice.chosen = c.name;
        }
      }
      stats_.spent_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      if (!choice.candidate_ms.empty()) {
        choice.source = "measured";
        stats_.measured += 1;
        const nlohmann::json stored = {{"key", text}, {"candidate_ms", choice.candidate_ms}, {"chosen", choice.chosen}};
        (void)cache_.insert_bytes(key, stored.dump());  // an unwritable cache only costs a later measurement
      } else {
        choice.chosen = heuristic;
      }
    }
  }
  stats_.choices.push_back(choice);
  return choice.chosen;
}

}  // namespace kiln::providers
