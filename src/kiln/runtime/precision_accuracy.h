// The accuracy check of a reduced-precision session: the float32 model and the reduced one run on
// the same validation inputs and every output is compared (max absolute and relative error, cosine
// similarity, and for class scores top-1/top-5 agreement), against an optional accuracy budget.
// Session load runs it (session_load.cpp) and the report's precision section records it; a budget
// the measurement breaks fails the load with a NumericalIssue naming the output and the measure.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/report/report.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::runtime {

// Limits on the measures, each optional: "rel=1e-2,abs=0.5,cos=0.999,top1=0.99,top5=1".
struct AccuracyBudget {
  std::optional<double> max_abs_error, max_relative_error, min_cosine, min_top1, min_top5;

  bool empty() const { return !max_abs_error && !max_relative_error && !min_cosine && !min_top1 && !min_top5; }
};

// InvalidArgument naming the entry for an unknown measure, a value that is not a number, or one
// outside its range (errors >= 0; cosine in [-1, 1]; agreements in [0, 1]).
Result<AccuracyBudget> parse_accuracy_budget(std::string_view text);

// One set of validation inputs' outputs, by output name.
using Outputs = std::map<std::string, Tensor>;

// Each output of `reference` (the float32 model's, one Outputs per validation input) compared with
// `reduced`'s: the worst over the inputs of each measure (top-k: the share over all rows).
// InvalidArgument when an output is missing from `reduced` or has another shape.
Result<std::vector<report::OutputAccuracy>> compare_outputs(const std::vector<Outputs>& reference, const std::vector<Outputs>& reduced);

// The first breach of `budget` by `accuracy` ("output 'logits': top1 0.97 below 0.99"), if any.
std::optional<std::string> budget_breach(const AccuracyBudget& budget, const std::vector<report::OutputAccuracy>& accuracy);

// How much of `budget` `accuracy` uses: the largest over outputs and measures of the error over its
// limit (abs, rel), of 1 - measure over 1 - limit (cos, top1, top5); at most 1 when the budget
// holds, infinite when a zero limit is exceeded. The accuracy fallback ranks products by it.
double budget_usage(const AccuracyBudget& budget, const std::vector<report::OutputAccuracy>& accuracy);

// A measure as the budget's messages write it (the shortest of 6 significant digits: 0.0123, 1e-05).
std::string measure_text(double value);

// SHA-256 over the inputs (names, dtypes, shapes and bytes, in order): which inputs were measured.
Result<std::string> validation_sha256(const std::vector<std::map<std::string, Tensor>>& inputs);

}  // namespace kiln::runtime
