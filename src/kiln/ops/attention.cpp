// kiln.Attention (domain "kiln"): scaled dot-product attention, the node the attention_fusion pass
// makes of MatMul -> scale -> mask -> Softmax -> MatMul.
//   scores = scale * (Q x Kt)              Q [..., S, D], Kt [..., D, T]
//   scores = mask ? mask_fill : scores     optional bool `mask` (input 3), broadcast to scores
//   scores = scores + bias                 optional additive `bias` (input 4), broadcast to scores
//   Y = softmax(scores, last axis) x V     V [..., T, Dv];  Y [..., S, Dv]
// Optional `kv_length` (input 5, int64 [] or [B], B the scores' first dim; ONNX Attention-24's
// nonpad_kv_seqlen): only keys 0..kv_length-1 take part, the rest of Kt and V is never read (a
// key/value cache preallocated for the context, valid up to the tokens seen); a row with no key
// gives zeros.
// Attributes: scale (default 1), mask_fill (default -3.4028234663852886e38, what exporters use),
// and the operand layouts of attention.h (q_perm, kt_perm, v_perm, y_perm).
// The reference kernel runs these steps one by one with the MatMul reference.
#include "kiln/ops/attention.h"

#include <cmath>
#include <limits>
#include <numeric>

#include "kiln/ops/channels_last.h"
#include "kiln/ops/data_movement.h"
#include "kiln/ops/matmul.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {

Result<std::vector<int64_t>> attention_perm(const ir::Node& node, const char* attr, size_t rank) {
  std::vector<int64_t> identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  return permutation_attr(node, attr, rank, identity);
}

std::vector<int64_t> inverse_permutation(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inverse;
}

namespace {

constexpr size_t kMaskInput = 3, kBiasInput = 4, kKvLengthInput = 5;

// The shape of operand i: its input's shape, transposed by the operand's permutation.
Result<std::optional<ir::Shape>> operand_shape(const InferenceContext& ctx, size_t i) {
  const std::optional<ir::Shape>& given = ctx.input_type(i).shape;
  if (!given) return std::optional<ir::Shape>();
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> perm, attention_perm(ctx.node(), kAttentionOperandPerms[i], given->rank()));
  return std::optional<ir::Shape>(ir::Shape(permuted(given->dims(), perm)));
}

Status attention_infer(InferenceContext& ctx) {
  if (ctx.input_type(0).dtype != DType::kFloat || ctx.input_type(1).dtype != DType::kFloat ||
      ctx.input_type(2).dtype != DType::kFloat)
    return ctx.error("Q, Kt and V must be float32");
  if (ctx.has_input(kMaskInput) && ctx.input_type(kMaskInput).dtype != DType::kBool) return ctx.error("mask must be bool");
  if (ctx.has_input(kKvLengthInput)) {
    const ir::TensorType& length = ctx.input_type(kKvLengthInput);
    if (length.dtype != DType::kInt64) return ctx.error("kv_length must be int64");
    if (length.shape && length.shape->rank() > 1) return ctx.error("kv_length must be a scalar or [batch]");
  }
  KILN_ASSIGN_OR_RETURN(std::optional<ir::Shape> q, operand_shape(ctx, 0));
  KILN_ASSIGN_OR_RETURN(std::optional<ir::Shape> kt, operand_shape(ctx, 1));
  KILN_ASSIGN_OR_RETURN(std::optional<ir::Shape> v, operand_shape(ctx, 2));
  for (const std::optional<ir::Shape>* operand : {&q, &kt, &v})
    if (*operand && (*operand)->rank() < 2) return ctx.error("Q, Kt and V must have rank >= 2");
  // Y is the product of the scores and V: their batch dims must broadcast, V's rows match the keys.
  KILN_ASSIGN_OR_RETURN(std::optional<ir::Shape> scores, matmul_output_shape(ctx, q, kt));
  KILN_ASSIGN_OR_RETURN(std::optional<ir::Shape> y, matmul_output_shape(ctx, scores, v));
  std::optional<ir::Shape> out;
  if (y) {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> perm, attention_perm(ctx.node(), kAttentionOutputPerm, y->rank()));
    out = ir::Shape(permuted(y->dims(), perm));
  }
  ctx.set_output_type(0, ir::TensorType{DType::kFloat, out});
  return Status::ok();
}

// Operand i in its logical layout.
Result<Tensor> operand(const KernelContext& ctx, size_t i) {
  const Tensor& given = *ctx.input(i);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> perm, attention_perm(ctx.node(), kAttentionOperandPerms[i], given.shape().size()));
  return std::is_sorted(perm.begin(), perm.end()) ? given : permute_tensor(given, perm);
}

// Offsets of `t`'s elements for each position of a tensor of `shape` (numpy broadcasting).
Result<std::vector<int64_t>> broadcast_offsets(const KernelContext& ctx, const Tensor& t, const std::vector<int64_t>& shape) {
  const size_t rank = t.shape().size();
  if (rank > shape.size()) return ctx.error("mask or bias of rank " + std::to_string(rank) + " exceeds the scores'");
  for (size_t i = 0; i < rank; ++i) {
    const int64_t d = t.shape()[i], s = shape[shape.size() - rank + i];
    if (d != 1 && d != s) return ctx.error("mask or bias " + shape_to_string(t.shape()) + " does not broadcast to " + shape_to_string(shape));
  }
  return strided_offsets(shape, broadcast_strides(t.shape(), shape), 0);
}

// The number of keys each batch of the scores (their first dim) attends to: kv_length's, checked
// against the keys there are; every key without it. One entry when it is the same for all.
Result<std::vector<int64_t>> key_lengths(const KernelContext& ctx, const std::vector<int64_t>& scores_shape) {
  const int64_t keys = scores_shape.back();
  const Tensor* given = ctx.input(kKvLengthInput);
  if (!given) return std::vector<int64_t>{keys};
  const int64_t batch = scores_shape.size() > 2 ? scores_shape[0] : 1;
  if (given->rank() > 1 || (given->rank() == 1 && given->shape()[0] != batch && given->shape()[0] != 1))
    return ctx.error("kv_length must be a scalar or [" + std::to_string(batch) + "], got " + shape_to_string(given->shape()));
  std::vector<int64_t> lengths(given->data<int64_t>(), given->data<int64_t>() + given->element_count());
  for (int64_t length : lengths)
    if (length < 0 || length > keys)
      return ctx.error("kv_length " + std::to_string(length) + " is outside 0.." + std::to_string(keys) + " (the keys there are)");
  return lengths;
}

// V [..., T, Dv] broadcast to the scores' batch dims, its rows at or beyond each batch's key length
// zeros: the keys outside kv_length are never read, whatever they hold.
Tensor values_within(const Tensor& v, const std::vector<int64_t>& scores_shape, const std::vector<int64_t>& lengths) {
  std::vector<int64_t> shape(scores_shape.begin(), scores_shape.end() - 2);
  const int64_t t = v.shape()[v.rank() - 2], dv = v.shape().back();
  shape.push_back(t);
  shape.push_back(dv);
  const std::vector<int64_t> from = strided_offsets(shape, broadcast_strides(v.shape(), shape), 0);
  Tensor out = Tensor::allocate(DType::kFloat, shape);
  const int64_t count = out.element_count(), per_batch = count / (scores_shape.size() > 2 ? scores_shape[0] : 1);
  for (int64_t i = 0; i < count; ++i) {
    const int64_t valid = lengths.size() > 1 ? lengths[static_cast<size_t>(i / per_batch)] : lengths[0];
    out.data<float>()[i] = (i / dv) % t < valid ? v.data<float>()[from[static_cast<size_t>(i)]] : 0.0f;
  }
  return out;
}

Status attention_kernel(KernelContext& ctx) {
  const ir::Node& node = ctx.node();
  KILN_ASSIGN_OR_RETURN(const Tensor q, operand(ctx, 0));
  KILN_ASSIGN_OR_RETURN(const Tensor kt, operand(ctx, 1));
  KILN_ASSIGN_OR_RETURN(const Tensor v, operand(ctx, 2));
  Tensor& out = *ctx.output(0);
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> out_perm, attention_perm(node, kAttentionOutputPerm, out.shape().size()));
  const std::vector<int64_t> y_shape = permuted(out.shape(), inverse_permutation(out_perm));
  std::vector<int64_t> scores_shape = y_shape;
  scores_shape.back() = kt.shape().back();
  Tensor scores = Tensor::allocate(DType::kFloat, scores_shape);
  KILN_RETURN_IF_ERROR(matmul_reference(node, q, kt, scores));
  const double scale = node.attr_float("scale", 1.0f), fill = node.attr_float("mask_fill", std::numeric_limits<float>::lowest());
  std::vector<int64_t> mask_at, bias_at;
  if (const Tensor* mask = ctx.input(kMaskInput)) {
    KILN_ASSIGN_OR_RETURN(mask_at, broadcast_offsets(ctx, *mask, scores_shape));
  }
  if (const Tensor* bias = ctx.input(kBiasInput)) {
    KILN_ASSIGN_OR_RETURN(bias_at, broadcast_offsets(ctx, *bias, scores_shape));
  }
  float* s = scores.data<float>();
  const int64_t t = scores_shape.back(), rows = scores.element_count() / std::max<int64_t>(t, 1);
  KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> lengths, key_lengths(ctx, scores_shape));
  for (int64_t r = 0; r < rows; ++r) {
    float* row = s + r * t;
    const int64_t valid = lengths[static_cast<size_t>(r * (lengths.size() > 1 ? static_cast<int64_t>(lengths.size()) : 0) / rows)];
    double top = -std::numeric_limits<double>::infinity();
    std::vector<double> x(static_cast<size_t>(valid));
    for (int64_t j = 0; j < valid; ++j) {
      const int64_t i = r * t + j;
      double value = static_cast<float>(scale * row[j]);
      if (!mask_at.empty() && ctx.input(kMaskInput)->data<bool>()[mask_at[static_cast<size_t>(i)]]) value = fill;
      if (!bias_at.empty()) value += element_as_double(*ctx.input(kBiasInput), bias_at[static_cast<size_t>(i)]);
      x[static_cast<size_t>(j)] = value;
      top = std::max(top, value);
    }
    double sum = 0;
    for (double& e : x) sum += (e = std::exp(e - top));
    for (int64_t j = 0; j < t; ++j) row[j] = j < valid ? static_cast<float>(x[static_cast<size_t>(j)] / sum) : 0.0f;
  }
  const Tensor values = ctx.input(kKvLengthInput) ? values_within(v, scores_shape, lengths) : v;
  if (std::is_sorted(out_perm.begin(), out_perm.end())) return matmul_reference(node, scores, values, out);
  Tensor y = Tensor::allocate(DType::kFloat, y_shape);
  KILN_RETURN_IF_ERROR(matmul_reference(node, scores, values, y));
  gather_by_offsets(y, out, permuted_offsets(y_shape, out_perm));
  return Status::ok();
}

}  // namespace

void register_attention_ops(OpRegistry& r) {
  r.add({"kiln", "Attention", 1, with_required_inputs(3, attention_infer), attention_kernel});
}

}  // namespace kiln::ops
