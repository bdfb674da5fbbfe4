// Einsum: any equation (explicit "ij,jk->ik" or implicit "ij,jk"), repeated labels (diagonals),
// ellipsis broadcasting. The equation is parsed once for every kernel (einsum_equation.h). The
// reference kernel loops over every combination of label values, summing products into the
// output: plain and exact (in double), not fast.
#include <map>
#include <string>
#include <vector>

#include "kiln/ops/einsum_equation.h"

#include "kiln/ops/data_movement.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {

namespace {

int letter_label(char c) { return c >= 'a' && c <= 'z' ? c - 'a' : c >= 'A' && c <= 'Z' ? 26 + (c - 'A') : -1; }

// Labels of one term for an operand of `rank` dims, whose ellipsis (if any) covers the rest.
Result<std::vector<int>> term_labels(const std::string& term, int64_t rank, int64_t max_ellipsis, const std::string& eq) {
  std::vector<int> labels;
  const size_t dots = term.find("...");
  const std::string before = term.substr(0, dots), after = dots == std::string::npos ? "" : term.substr(dots + 3);
  const auto named = static_cast<int64_t>(before.size() + after.size());
  const int64_t ellipsis = dots == std::string::npos ? 0 : rank - named;
  if (ellipsis < 0 || (dots == std::string::npos && named != rank))
    return invalid_model("einsum equation '" + eq + "': term '" + term + "' does not match an input of rank " + std::to_string(rank));
  auto add_letters = [&](const std::string& letters) -> Status {
    for (char c : letters) {
      if (letter_label(c) < 0) return invalid_model("einsum equation '" + eq + "' has invalid label '" + std::string(1, c) + "'");
      labels.push_back(letter_label(c));
    }
    return Status::ok();
  };
  KILN_RETURN_IF_ERROR(add_letters(before));
  for (int64_t k = 0; k < ellipsis; ++k) labels.push_back(kEinsumEllipsis + static_cast<int>(max_ellipsis - ellipsis + k));
  KILN_RETURN_IF_ERROR(add_letters(after));
  return labels;
}

}  // namespace

Result<EinsumEquation> parse_einsum(const std::string& raw, const std::vector<std::vector<int64_t>>& shapes) {
  std::string eq;
  for (char c : raw)
    if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != shapes.size())
    return invalid_model("einsum equation '" + raw + "' has " + std::to_string(terms.size()) + " terms for " +
                         std::to_string(shapes.size()) + " inputs");
  int64_t max_ellipsis = 0;
  for (size_t i = 0; i < terms.size(); ++i) {
    const size_t dots = terms[i].find("...");
    if (dots != std::string::npos)
      max_ellipsis = std::max<int64_t>(max_ellipsis, static_cast<int64_t>(shapes[i].size() + 3 - terms[i].size()));
  }
  EinsumEquation e;
  std::map<int, int> occurrences;
  for (size_t i = 0; i < terms.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(std::vector<int> labels, term_labels(terms[i], static_cast<int64_t>(shapes[i].size()), max_ellipsis, raw));
    for (size_t d = 0; d < labels.size(); ++d) {
      const int64_t size = shapes[i][d];
      auto [it, fresh] = e.sizes.emplace(labels[d], size);
      if (!fresh && it->second != size) {
        if (labels[d] >= kEinsumEllipsis && (it->second == 1 || size == 1)) it->second = std::max(it->second, size);
        else return invalid_model("einsum equation '" + raw + "': label sizes disagree (" + std::to_string(it->second) + " vs " + std::to_string(size) + ")");
      }
      ++occurrences[labels[d]];
    }
    e.inputs.push_back(std::move(labels));
  }
  if (arrow != std::string::npos) {
    const std::string rhs = eq.substr(arrow + 2);
    const bool has_ellipsis = rhs.find("...") != std::string::npos;
    const auto rank = static_cast<int64_t>(rhs.size()) + (has_ellipsis ? max_ellipsis - 3 : 0);
    KILN_ASSIGN_OR_RETURN(e.output, term_labels(rhs, rank, max_ellipsis, raw));
    for (int l : e.output)
      if (!e.sizes.count(l)) return invalid_model("einsum equation '" + raw + "': output label not in any input");
  } else {
    for (int k = 0; k < max_ellipsis; ++k) e.output.push_back(kEinsumEllipsis + k);
    for (const auto& [label, count] : occurrences)
      if (label < kEinsumEllipsis && count == 1) e.output.push_back(label);
  }
  return e;
}

namespace {

std::vector<std::vector<int64_t>> input_shapes_of(const KernelContext& ctx) {
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < ctx.input_count(); ++i) shapes.push_back(ctx.input(i)->shape());
  return shapes;
}

Status einsum_infer(InferenceContext& ctx) {
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    if (!ctx.input_type(i).has_static_shape()) {
      ctx.set_output_type(0, ir::TensorType{ctx.input_type(0).dtype});
      return Status::ok();
    }
    shapes.push_back(ctx.input_type(i).shape->static_dims());
  }
  auto e = parse_einsum(ctx.node().attr_string("equation"), shapes);
  if (!e.is_ok()) return ctx.error(e.status().message());
  std::vector<int64_t> out;
  for (int l : e->output) out.push_back(e->sizes.at(l));
  ctx.set_output_type(0, ir::make_type(ctx.input_type(0).dtype, out));
  return Status::ok();
}

Status einsum_kernel(KernelContext& ctx) {
  auto parsed = parse_einsum(ctx.node().attr_string("equation"), input_shapes_of(ctx));
  if (!parsed.is_ok()) return ctx.error(parsed.status().message());
  const EinsumEquation& e = parsed.value();
  std::vector<int> all;  // output labels first, then the summed ones
  for (int l : e.output) all.push_back(l);
  for (const auto& [label, size] : e.sizes)
    if (std::find(all.begin(), all.end(), label) == all.end()) all.push_back(label);
  std::vector<int64_t> extents;
  for (int l : all) extents.push_back(e.sizes.at(l));
  std::map<int, size_t> position;
  for (size_t k = 0; k < all.size(); ++k) position[all[k]] = k;
  Tensor& out = *ctx.output(0);
  std::vector<double> acc(static_cast<size_t>(out.element_count()), 0.0);
  std::vector<std::vector<int64_t>> strides;
  for (size_t i = 0; i < ctx.input_count(); ++i) strides.push_back(contiguous_strides(ctx.input(i)->shape()));
  const std::vector<int64_t> out_strides = contiguous_strides(out.shape());
  for_each_index(extents, [&](const std::vector<int64_t>& index, int64_t) {
    double product = 1;
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      int64_t offset = 0;
      const auto& shape = ctx.input(i)->shape();
      for (size_t d = 0; d < e.inputs[i].size(); ++d)
        offset += (shape[d] == 1 ? 0 : index[position.at(e.inputs[i][d])]) * strides[i][d];
      product *= element_as_double(*ctx.input(i), offset);
    }
    int64_t o = 0;
    for (size_t d = 0; d < e.output.size(); ++d) o += index[d] * out_strides[d];
    acc[static_cast<size_t>(o)] += product;
  });
  for (size_t i = 0; i < acc.size(); ++i) store_double(out, static_cast<int64_t>(i), acc[i]);
  return Status::ok();
}

}  // namespace

void register_einsum_ops(OpRegistry& r) { r.add({"", "Einsum", 12, einsum_infer, einsum_kernel}); }

}  // namespace kiln::ops
