// The accuracy check of a reduced-precision session (see precision_accuracy.h).
#include "kiln/runtime/precision_accuracy.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>
#include <sstream>

#include "kiln/io/file.h"

namespace kiln::runtime {
namespace {

// The indexes of the k largest of `row` (n values), largest first.
std::vector<int64_t> top_k(const std::vector<double>& row, int64_t k) {
  std::vector<int64_t> order(row.size());
  std::iota(order.begin(), order.end(), 0);
  k = std::min<int64_t>(k, static_cast<int64_t>(row.size()));
  std::partial_sort(order.begin(), order.begin() + k, order.end(), [&](int64_t a, int64_t b) { return row[a] > row[b]; });
  order.resize(static_cast<size_t>(k));
  return order;
}

// Class scores: a float output of shape [N, C] with C >= 2 (a batch of logits or probabilities).
bool looks_like_class_scores(const Tensor& t) {
  return (t.dtype() == DType::kFloat || t.dtype() == DType::kDouble) && t.shape().size() == 2 && t.shape()[1] >= 2;
}

struct Agreement {
  int64_t rows = 0, top1 = 0, top5 = 0;
};

void count_agreement(const Tensor& reference, const Tensor& reduced, Agreement& agreement) {
  const int64_t rows = reference.shape()[0], classes = reference.shape()[1];
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> ref(static_cast<size_t>(classes)), red(static_cast<size_t>(classes));
    for (int64_t c = 0; c < classes; ++c) {
      ref[c] = element_as_double(reference, r * classes + c);
      red[c] = element_as_double(reduced, r * classes + c);
    }
    const int64_t best = top_k(ref, 1)[0];
    const std::vector<int64_t> reduced_five = top_k(red, 5);
    ++agreement.rows;
    agreement.top1 += reduced_five[0] == best;
    agreement.top5 += std::find(reduced_five.begin(), reduced_five.end(), best) != reduced_five.end();
  }
}

}  // namespace

Result<AccuracyBudget> parse_accuracy_budget(std::string_view text) {
  AccuracyBudget budget;
  std::stringstream entries{std::string(text)};
  std::string entry;
  while (std::getline(entries, entry, ',')) {
    const size_t eq = entry.find('=');
    const std::string key = entry.substr(0, eq), value_text = eq == std::string::npos ? "" : entry.substr(eq + 1);
    double value = 0;
    const auto [end, error] = std::from_chars(value_text.data(), value_text.data() + value_text.size(), value);
    if (value_text.empty() || error != std::errc() || end != value_text.data() + value_text.size() || !std::isfinite(value))
      return invalid_argument("accuracy budget entry '" + entry + "' must look like MEASURE=NUMBER (abs, rel, cos, top1, top5)");
    const auto in = [&](double low, double high) -> Status {
      if (value < low || value > high)
        return invalid_argument("accuracy budget entry '" + entry + "': " + key + " must be within [" + std::to_string(low) + ", " +
                                std::to_string(high) + "]");
      return Status::ok();
    };
    if (key == "abs") {
      KILN_RETURN_IF_ERROR(in(0, HUGE_VAL));
      budget.max_abs_error = value;
    } else if (key == "rel") {
      KILN_RETURN_IF_ERROR(in(0, HUGE_VAL));
      budget.max_relative_error = value;
    } else if (key == "cos") {
      KILN_RETURN_IF_ERROR(in(-1, 1));
      budget.min_cosine = value;
    } else if (key == "top1") {
      KILN_RETURN_IF_ERROR(in(0, 1));
      budget.min_top1 = value;
    } else if (key == "top5") {
      KILN_RETURN_IF_ERROR(in(0, 1));
      budget.min_top5 = value;
    } else {
      return invalid_argument("accuracy budget entry '" + entry + "': unknown measure '" + key + "' (abs, rel, cos, top1, top5)");
    }
  }
  return budget;
}

Result<std::vector<report::OutputAccuracy>> compare_outputs(const std::vector<Outputs>& reference, const std::vector<Outputs>& reduced) {
  if (reference.size() != reduced.size()) return internal_error("accuracy check: runs of the two models differ in number");
  std::vector<report::OutputAccuracy> accuracy;
  if (reference.empty()) return accuracy;
  for (const auto& [name, unused] : reference.front()) {
    report::OutputAccuracy a;
    a.output = name;
    Agreement agreement;
    bool scores = true;
    for (size_t run = 0; run < reference.size(); ++run) {
      const auto ref = reference[run].find(name);
      const auto red = reduced[run].find(name);
      if (ref == reference[run].end() || red == reduced[run].end())
        return invalid_argument("accuracy check: output '" + name + "' missing from a run");
      const Tensor& x = ref->second;
      const Tensor& y = red->second;
      if (x.shape() != y.shape() || x.dtype() != y.dtype())
        return invalid_argument("accuracy check: output '" + name + "' has shape " + shape_to_string(y.shape()) + " in the reduced model, " +
                                shape_to_string(x.shape()) + " in the float32 one");
      double largest = 0, max_abs = 0, dot = 0, xx = 0, yy = 0;
      for (int64_t i = 0; i < x.element_count(); ++i) {
        const double u = element_as_double(x, i), v = element_as_double(y, i);
        largest = std::max(largest, std::fabs(u));
        // NaN where the reference has none counts as an infinite error.
        const double d = std::isnan(v) != std::isnan(u) ? HUGE_VAL : std::isnan(u) ? 0 : std::fabs(u - v);
        max_abs = std::max(max_abs, d);
        if (!std::isnan(u) && !std::isnan(v)) {
          dot += u * v;
          xx += u * u;
          yy += v * v;
        }
      }
      a.max_abs_error = std::max(a.max_abs_error, max_abs);
      a.max_relative_error = std::max(a.max_relative_error, largest > 0 ? max_abs / largest : max_abs);
      const double cosine = xx > 0 && yy > 0 ? dot / std::sqrt(xx * yy) : (xx == yy ? 1.0 : 0.0);
      a.cosine = std::min(a.cosine, cosine);
      scores = scores && looks_like_class_scores(x);
      if (scores) count_agreement(x, y, agreement);
    }
    if (scores && agreement.rows > 0) {
      a.top1 = double(agreement.top1) / double(agreement.rows);
      a.top5 = double(agreement.top5) / double(agreement.rows);
    }
    accuracy.push_back(a);
  }
  return accuracy;
}

std::string measure_text(double value) {
  std::ostringstream s;
  s << value;
  return s.str();
}

std::optional<std::string> budget_breach(const AccuracyBudget& budget, const std::vector<report::OutputAccuracy>& accuracy) {
  const auto text = measure_text;
  for (const report::OutputAccuracy& a : accuracy) {
    const std::string where = "output '" + a.output + "': ";
    if (budget.max_abs_error && !(a.max_abs_error <= *budget.max_abs_error))
      return where + "max absolute error " + text(a.max_abs_error) + " above abs=" + text(*budget.max_abs_error);
    if (budget.max_relative_error && !(a.max_relative_error <= *budget.max_relative_error))
      return where + "max relative error " + text(a.max_relative_error) + " above rel=" + text(*budget.max_relative_error);
    if (budget.min_cosine && !(a.cosine >= *budget.min_cosine))
      return where + "cosine " + text(a.cosine) + " below cos=" + text(*budget.min_cosine);
    if (budget.min_top1 && a.top1 >= 0 && !(a.top1 >= *budget.min_top1))
      return where + "top-1 agreement " + text(a.top1) + " below top1=" + text(*budget.min_top1);
    if (budget.min_top5 && a.top5 >= 0 && !(a.top5 >= *budget.min_top5))
      return where + "top-5 agreement " + text(a.top5) + " below top5=" + text(*budget.min_top5);
  }
  return std::nullopt;
}

double budget_usage(const AccuracyBudget& budget, const std::vector<report::OutputAccuracy>& accuracy) {
  // error / limit; a NaN error (never expected: compare_outputs counts NaN as infinite) uses it all.
  const auto share = [](double error, double limit) {
    if (std::isnan(error)) return HUGE_VAL;
    if (limit > 0) return error / limit;
    return error > 0 ? HUGE_VAL : 0.0;
  };
  double used = 0;
  for (const report::OutputAccuracy& a : accuracy) {
    if (budget.max_abs_error) used = std::max(used, share(a.max_abs_error, *budget.max_abs_error));
    if (budget.max_relative_error) used = std::max(used, share(a.max_relative_error, *budget.max_relative_error));
    if (budget.min_cosine) used = std::max(used, share(1 - a.cosine, 1 - *budget.min_cosine));
    if (budget.min_top1 && a.top1 >= 0) used = std::max(used, share(1 - a.top1, 1 - *budget.min_top1));
    if (budget.min_top5 && a.top5 >= 0) used = std::max(used, share(1 - a.top5, 1 - *budget.min_top5));
  }
  return used;
}

Result<std::string> validation_sha256(const std::vector<std::map<std::string, Tensor>>& inputs) {
  std::string bytes;
  for (const auto& set : inputs)
    for (const auto& [name, tensor] : set) {
      bytes += name + ":" + dtype_name(tensor.dtype()) + ":" + shape_to_string(tensor.shape()) + ":";
      bytes.append(static_cast<const char*>(tensor.raw_data()), tensor.byte_size());
    }
  return io::sha256_hex(bytes);
}

}  // namespace kiln::runtime
