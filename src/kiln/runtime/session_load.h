// The load behind Session::load, one stage after another (Load::run in session_load.cpp):
//
//   record the options; choose the target (and the tuner)
//   read the model (model_source: imported through the format table, or an artifact read back)
//   choose the execution mode; the artifact's default thread count
//   pin the input shapes (specialize)
//   make the providers (compiler::make_providers)
//   compile (compiler::compile: analysis, passes, placement, lowering)
//   start the engine over the compiled model (engine.h: its load-time plan)
//   a reduced precision: check its accuracy against float32 (precision_accuracy.h), and under
//   on_budget "fallback" keep the products most sensitive to it in float32 until the budget holds
#pragma once

#include <map>
#include <memory>
#include <string>

#include "kiln/ir/memory_budget.h"
#include "kiln/runtime/engine.h"
#include "kiln/session.h"
#include "kiln/status.h"

namespace kiln::runtime {

// What a session keeps of its load.
struct LoadedModel {
  std::unique_ptr<Engine> engine;
  ModelMetadata metadata;                     // as imported, before any pass
  std::map<std::string, std::string> assets;  // an artifact's, by name
};

// SessionOptions::on_budget's choices.
inline constexpr const char* kOnBudgetFail = "fail";
inline constexpr const char* kOnBudgetFallback = "fallback";

// The accuracy budget of precision "auto" when none is given.
inline constexpr const char* kAutoAccuracyBudget = "cos=0.995";

// The model at `path`, or in `bytes` when given, loaded under `options` (checked already) with
// `memory` (current on the calling thread) as its budget.
Result<LoadedModel> load_model(const std::string& path, const std::string* bytes, const SessionOptions& options,
                               std::shared_ptr<MemoryBudget> memory);

}  // namespace kiln::runtime
