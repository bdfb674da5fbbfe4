// cpu kernel for Einsum of float32 operands, planned once for the plan's shapes (the equation
// parsed by ops/einsum_equation.h, as the reference does). Operands are multiplied left to right,
// each intermediate keeping the labels still needed. In a product of two, each label is a batch
// label (both operands and the result), a kept label of one operand, a contracted label (both
// operands, not the result) or a summed label (one operand, not the result): each operand is
// copied into [batch, kept, contracted] order (summing its own summed labels on the way), each
// batch is one oneDNN sgemm (batches over OpenMP threads), and the [batch, left, right] product is
// permuted into the result's order. One operand is that copy alone (transposes, sums). Repeated labels in one operand (diagonals) and ellipsis dims broadcast from
// 1 are declined (the reference runs them).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "kiln/ops/einsum_equation.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"

namespace kiln::providers::cpu {
namespace {

// dst = src with its dims reordered to the labels `order`, summing over src's labels not in it.
// src_labels names src's dims (no label twice); sizes gives each label's size.
class LabelCopy {
 public:
  LabelCopy(const std::vector<int>& src_labels, const std::vector<int>& order, const std::map<int, int64_t>& sizes) {
    std::vector<int64_t> strides(src_labels.size(), 1);
    for (int64_t d = static_cast<int64_t>(src_labels.size()) - 2; d >= 0; --d)
      strides[static_cast<size_t>(d)] = strides[static_cast<size_t>(d) + 1] * sizes.at(src_labels[static_cast<size_t>(d) + 1]);
    for (int label : order) {
      const auto at = std::find(src_labels.begin(), src_labels.end(), label);
      kept_.push_back({sizes.at(label), at == src_labels.end() ? 0 : strides[static_cast<size_t>(at - src_labels.begin())]});
    }
    for (size_t d = 0; d < src_labels.size(); ++d)
      if (std::find(order.begin(), order.end(), src_labels[d]) == order.end()) summed_.push_back({sizes.at(src_labels[d]), strides[d]});
    identity_ = summed_.empty() && order == src_labels;
  }

  int64_t size() const {
    int64_t n = 1;
    for (const Axis& a : kept_) n *= a.size;
    return n;
  }

  // Copies src into dst (size() floats), or returns src itself when the order is src's own.
  const float* run(const float* src, std::vector<float>& dst) const {
    if (identity_) return src;
    dst.resize(static_cast<size_t>(size()));
    int64_t sum_count = 1;
    for (const Axis& a : summed_) sum_count *= a.size;
    const int64_t n = size();
#pragma omp parallel for schedule(static) if (n * sum_count >= (1 << 15))
    for (int64_t i = 0; i < n; ++i) {
      const float* base = src + offset_of(kept_, i);
      float total = 0;
      for (int64_t s = 0; s < sum_count; ++s) total += base[offset_of(summed_, s)];
      dst[static_cast<size_t>(i)] = total;
    }
    return dst.data();
  }

 private:
  struct Axis {
    int64_t size, stride;  // stride in src
  };

  // src offset of the i-th row-major position over `axes`.
  static int64_t offset_of(const std::vector<Axis>& axes, int64_t i) {
    int64_t offset = 0;
    for (auto a = axes.rbegin(); a != axes.rend(); ++a) {
      offset += (i % a->size) * a->stride;
      i /= a->size;
    }
    return offset;
  }

  std::vector<Axis> kept_, summed_;
  bool identity_ = false;
};

// Repeated labels within an operand, and ellipsis dims whose sizes differ from the label's.
Capability einsum_supports(const ir::Node& node) {
  Capability c = float_tensors(node, {0});
  if (!c.supported) return c;
  for (size_t i = 1; i < node.inputs.size(); ++i)
    if (!(c = float_tensors(node, {i})).supported) return c;
  std::vector<std::vector<int64_t>> shapes;
  for (const ir::Value* v : node.inputs) {
    if (!v->type.has_static_shape()) return Capability::no("Einsum of an operand whose shape is not known");
    shapes.push_back(v->type.shape->static_dims());
  }
  Result<ops::EinsumEquation> e = ops::parse_einsum(node.attr_string("equation"), shapes);
  if (!e.is_ok()) return Capability::no(e.status().message());
  for (size_t i = 0; i < shapes.size(); ++i) {
    const std::vector<int>& labels = e->inputs[i];
    for (size_t d = 0; d < labels.size(); ++d) {
      if (std::count(labels.begin(), labels.end(), labels[d]) > 1) return Capability::no("Einsum with a repeated label (a diagonal)");
      if (shapes[i][d] != e->sizes.at(labels[d])) return Capability::no("Einsum broadcasting an ellipsis dim of size 1");
    }
  }
  return Capability::yes();
}

// One product of two operands with labels a and b, giving the labels `result` (in that order).
class PairProduct {
 public:
  PairProduct(const std::vector<int>& a, const std::vector<int>& b, const std::vector<int>& result, const std::map<int, int64_t>& sizes) {
    auto has = [](const std::vector<int>& labels, int l) { return std::find(labels.begin(), labels.end(), l) != labels.end(); };
    std::vector<int> batch, left, right, contracted;
    for (int l : result) (has(a, l) && has(b, l) ? batch : has(a, l) ? left : right).push_back(l);
    for (int l : a)
      if (has(b, l) && !has(result, l)) contracted.push_back(l);
    auto concat = [](std::initializer_list<const std::vector<int>*> parts) {
      std::vector<int> all;
      for (const std::vector<int>* p : parts) all.insert(all.end(), p->begin(), p->end());
      return all;
    };
    auto product = [&](const std::vector<int>& labels) {
      int64_t n = 1;
      for (int l : labels) n *= sizes.at(l);
      return n;
    };
    a_copy_ = std::make_shared<LabelCopy>(a, concat({&batch, &left, &contracted}), sizes);
    b_copy_ = std::make_shared<LabelCopy>(b, concat({&batch, &right, &contracted}), sizes);
    const std::vector<int> product_order = concat({&batch, &left, &right});
    out_copy_ = std::make_shared<LabelCopy>(product_order, result, sizes);
    batches_ = product(batch), m_ = product(left), n_ = product(right), k_ = product(contracted);
    direct_ = product_order == result;
  }

  // y (room for the result) = the product of pa and pb.
  Status run(const ops::KernelContext& ctx, const float* pa, const float* pb, float* y) const {
    std::vector<float> a_scratch, b_scratch, c_scratch;
    pa = a_copy_->run(pa, a_scratch);
    pb = b_copy_->run(pb, b_scratch);
    if (!direct_) c_scratch.resize(static_cast<size_t>(batches_ * m_ * n_));
    float* c = direct_ ? y : c_scratch.data();
    std::atomic<bool> failed{false};
    const int64_t m = m_, n = n_, k = k_;
#pragma omp parallel for schedule(static) if (batches_ > 1)
    for (int64_t i = 0; i < batches_; ++i) {
      float* ci = c + i * m * n;
      if (k == 0) {
        std::fill_n(ci, m * n, 0.0f);
      } else if (m > 0 && n > 0 &&
                 dnnl_sgemm('N', 'T', m, n, k, 1.0f, pa + i * m * k, k, pb + i * n * k, k, 0.0f, ci, n) != dnnl_success) {
        failed = true;
      }
    }
    if (failed) return ctx.error("oneDNN sgemm failed");
    if (!direct_) {
      std::vector<float> permuted;
      const float* result = out_copy_->run(c, permuted);
      std::memcpy(y, result, static_cast<size_t>(out_copy_->size()) * sizeof(float));
    }
    return Status::ok();
  }

  int64_t result_size() const { return out_copy_->size(); }

 private:
  std::shared_ptr<LabelCopy> a_copy_, b_copy_, out_copy_;
  int64_t batches_ = 0, m_ = 0, n_ = 0, k_ = 0;
  bool direct_ = false;
};

// Operands multiplied left to right: each intermediate keeps the labels the output or a later
// operand still needs.
Result<ops::Kernel> build_einsum(const ir::Node& node) {
  std::vector<std::vector<int64_t>> shapes;
  for (const ir::Value* v : node.inputs) shapes.push_back(v->type.shape->static_dims());
  KILN_ASSIGN_OR_RETURN(const ops::EinsumEquation e, ops::parse_einsum(node.attr_string("equation"), shapes));
  if (e.inputs.size() == 1) {
    const LabelCopy copy(e.inputs[0], e.output, e.sizes);
    return ops::Kernel([copy](ops::KernelContext& ctx) -> Status {
      std::vector<float> scratch;
      const float* result = copy.run(ctx.input(0)->data<float>(), scratch);
      if (result != ctx.output(0)->data<float>()) std::memcpy(ctx.output(0)->data<float>(), result, ctx.output(0)->byte_size());
      return Status::ok();
    });
  }
  std::vector<PairProduct> steps;
  std::vector<int> current = e.inputs[0];
  for (size_t j = 1; j < e.inputs.size(); ++j) {
    std::vector<int> result = e.output;
    if (j + 1 < e.inputs.size()) {
      result.clear();
      for (const std::vector<int>* labels : std::initializer_list<const std::vector<int>*>{&current, &e.inputs[j]})
        for (int l : *labels) {
          bool needed = std::find(e.output.begin(), e.output.end(), l) != e.output.end();
          for (size_t later = j + 1; later < e.inputs.size() && !needed; ++later)
            needed = std::find(e.inputs[later].begin(), e.inputs[later].end(), l) != e.inputs[later].end();
          if (needed && std::find(result.begin(), result.end(), l) == result.end()) result.push_back(l);
        }
    }
    steps.emplace_back(current, e.inputs[j], result, e.sizes);
    current = result;
  }
  return ops::Kernel([steps](ops::KernelContext& ctx) -> Status {
    std::vector<float> held, next;
    const float* left = ctx.input(0)->data<float>();
    for (size_t j = 0; j < steps.size(); ++j) {
      const bool last = j + 1 == steps.size();
      if (!last) next.resize(static_cast<size_t>(steps[j].result_size()));
      float* into = last ? ctx.output(0)->data<float>() : next.data();
      KILN_RETURN_IF_ERROR(steps[j].run(ctx, left, ctx.input(j + 1)->data<float>(), into));
      if (!last) {
        held.swap(next);
        left = held.data();
      }
    }
    return Status::ok();
  });
}

}  // namespace

void add_einsum_kernels(CpuKernelTable& table) { table["Einsum"] = node_only(einsum_supports, build_einsum); }

}  // namespace kiln::providers::cpu
