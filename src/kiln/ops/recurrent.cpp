// Recurrent layers: RNN, GRU and LSTM (opsets 7 and 14): forward, reverse and bidirectional,
// layouts 0 ([seq, batch, ...]) and 1 ([batch, seq, ...]), per-batch sequence lengths, initial
// states, LSTM peepholes and input_forget, clip, and the activation functions ONNX names. The
// attributes, shape checks and gate math are recurrent_cell.h's (shared with the cpu provider);
// the reference computes the products with plain loops, in double.
#include "kiln/ops/recurrent_cell.h"

#include <map>
#include <optional>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {

namespace {

using Cell = RecurrentCell;

Result<RecurrentActivation> activation(const std::string& name, std::optional<float> alpha, std::optional<float> beta) {
  const ElementwiseFunction* f = find_elementwise(name);
  if (!f || !f->allows(kRecurrentActivation)) return invalid_model("unknown recurrent activation '" + name + "'");
  // Parameters left out take the defaults of the ONNX op of that name.
  return RecurrentActivation{f, alpha.value_or(f->default_alpha), beta.value_or(f->default_beta)};
}

// The activations of each direction: f (and g, h) from the attribute, or the op's defaults.
Result<std::vector<RecurrentActivation>> activations(const ir::Node& node, Cell cell, int directions) {
  using E = Elementwise;
  const std::vector<E> defaults = cell == Cell::kRnn   ? std::vector<E>{E::kTanh}
                                  : cell == Cell::kGru ? std::vector<E>{E::kSigmoid, E::kTanh}
                                                       : std::vector<E>{E::kSigmoid, E::kTanh, E::kTanh};
  std::vector<std::string> names;
  if (const ir::Attribute* a = node.attr("activations")) names = a->strings;
  if (names.empty())
    for (int d = 0; d < directions; ++d)
      for (E f : defaults) names.emplace_back(elementwise_function(f).name);
  if (names.size() != defaults.size() * static_cast<size_t>(directions))
    return invalid_model(node.describe() + ": expected " + std::to_string(defaults.size() * directions) + " activations");
  const std::vector<float> alphas = node.attr_floats("activation_alpha"), betas = node.attr_floats("activation_beta");
  std::vector<RecurrentActivation> out;
  for (size_t i = 0; i < names.size(); ++i) {
    const std::optional<float> alpha = i < alphas.size() ? std::optional<float>(alphas[i]) : std::nullopt;
    const std::optional<float> beta = i < betas.size() ? std::optional<float>(betas[i]) : std::nullopt;
    KILN_ASSIGN_OR_RETURN(RecurrentActivation f, activation(names[i], alpha, beta));
    out.push_back(f);
  }
  return out;
}

}  // namespace

Result<RecurrentAttrs> recurrent_attrs(const ir::Node& node, RecurrentCell cell) {
  RecurrentAttrs a;
  a.cell = cell;
  a.hidden = node.attr_int("hidden_size", 0);
  if (a.hidden <= 0) return invalid_model(node.describe() + ": hidden_size must be positive");
  const std::string direction = node.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return invalid_model(node.describe() + ": direction must be forward, reverse or bidirectional");
  a.directions = direction == "bidirectional" ? 2 : 1;
  a.reverse_only = direction == "reverse";
  const int64_t layout = node.attr_int("layout", 0);
  if (layout != 0 && layout != 1) return invalid_model(node.describe() + ": layout must be 0 or 1");
  a.batch_first = layout == 1;
  a.clip = node.attr_float("clip", 0);
  if (a.clip < 0) return invalid_model(node.describe() + ": clip must not be negative");
  a.linear_before_reset = node.attr_int("linear_before_reset", 0) != 0;
  a.input_forget = node.attr_int("input_forget", 0) != 0;
  KILN_ASSIGN_OR_RETURN(a.activations, activations(node, cell, a.directions));
  return a;
}

Result<RecurrentSizes> check_recurrent_inputs(const ir::Node& node, const RecurrentAttrs& a, const std::vector<const Tensor*>& in) {
  auto input = [&](size_t i) { return i < in.size() ? in[i] : nullptr; };
  const Tensor* x = input(0);
  if (!x || x->rank() != 3) return invalid_argument(node.describe() + ": X must have rank 3");
  RecurrentSizes s{x->shape()[a.batch_first ? 1 : 0], x->shape()[a.batch_first ? 0 : 1], x->shape()[2]};
  const int64_t dirs = a.directions, gh = gates_of(a.cell) * a.hidden, h = a.hidden;
  auto expect = [&](size_t i, const char* name, const std::vector<int64_t>& shape) -> Status {
    const Tensor* t = input(i);
    if (t && t->shape() != shape)
      return invalid_argument(node.describe() + ": " + name + " must have shape " + shape_to_string(shape) + ", got " +
                              shape_to_string(t->shape()));
    return Status::ok();
  };
  if (!input(1) || !input(2)) return invalid_argument(node.describe() + ": W and R are required");
  KILN_RETURN_IF_ERROR(expect(1, "W", {dirs, gh, s.input}));
  KILN_RETURN_IF_ERROR(expect(2, "R", {dirs, gh, h}));
  KILN_RETURN_IF_ERROR(expect(3, "B", {dirs, 2 * gh}));
  KILN_RETURN_IF_ERROR(expect(4, "sequence_lens", {s.batch}));
  const std::vector<int64_t> state = a.batch_first ? std::vector<int64_t>{s.batch, dirs, h} : std::vector<int64_t>{dirs, s.batch, h};
  KILN_RETURN_IF_ERROR(expect(5, "initial_h", state));
  if (a.cell == RecurrentCell::kLstm) {
    KILN_RETURN_IF_ERROR(expect(6, "initial_c", state));
    KILN_RETURN_IF_ERROR(expect(7, "P", {dirs, 3 * h}));
  }
  if (const Tensor* lens = input(4)) {
    KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> values, read_int64s(*lens, "sequence_lens"));
    for (int64_t v : values)
      if (v < 0 || v > s.seq)
        return invalid_argument(node.describe() + ": sequence length " + std::to_string(v) + " is outside [0, " + std::to_string(s.seq) + "]");
  }
  return s;
}

namespace {

Status recurrent_infer(InferenceContext& ctx, Cell cell) {
  const ir::TensorType& x = ctx.input_type(0);
  Result<RecurrentAttrs> attrs = recurrent_attrs(ctx.node(), cell);
  if (!attrs.is_ok()) return attrs.status();
  const RecurrentAttrs& a = attrs.value();
  const ir::Dim dirs(a.directions), h(a.hidden);
  ir::Dim seq = ir::Dim::unknown(), batch = ir::Dim::unknown();
  if (x.shape && x.shape->rank() == 3) {
    seq = (*x.shape)[a.batch_first ? 1 : 0];
    batch = (*x.shape)[a.batch_first ? 0 : 1];
  } else if (x.shape) {
    return ctx.error("X must have rank 3");
  }
  ctx.set_output_type(0, ir::TensorType{x.dtype, a.batch_first ? ir::Shape({batch, seq, dirs, h}) : ir::Shape({seq, dirs, batch, h})});
  const ir::TensorType state{x.dtype, a.batch_first ? ir::Shape({batch, dirs, h}) : ir::Shape({dirs, batch, h})};
  const size_t state_outputs = cell == Cell::kLstm ? 2 : 1;
  for (size_t i = 1; i < ctx.output_count() && i <= state_outputs; ++i) ctx.set_output_type(i, state);
  return Status::ok();
}

Status recurrent_kernel(KernelContext& ctx, Cell cell) {
  const ir::Node& node = ctx.node();
  KILN_ASSIGN_OR_RETURN(const RecurrentAttrs a, recurrent_attrs(node, cell));
  std::vector<const Tensor*> inputs;
  for (size_t i = 0; i < (cell == Cell::kLstm ? 8u : 6u); ++i) inputs.push_back(ctx.input(i));
  KILN_ASSIGN_OR_RETURN(const RecurrentSizes s, check_recurrent_inputs(node, a, inputs));
  const Tensor *x = inputs[0], *w = inputs[1], *r = inputs[2], *bias = inputs[3], *lens = inputs[4], *h0 = inputs[5];
  const Tensor* c0 = cell == Cell::kLstm ? inputs[6] : nullptr;
  const Tensor* p = cell == Cell::kLstm ? inputs[7] : nullptr;
  const int64_t seq = s.seq, batch = s.batch, input_size = s.input, hidden = a.hidden;
  const int directions = a.directions;
  const int g = gates_of(cell);
  auto X = [&](int64_t t, int64_t b, int64_t i) {
    return element_as_double(*x, (a.batch_first ? (b * seq + t) : (t * batch + b)) * input_size + i);
  };
  auto at = [](const Tensor* t, int64_t i) { return t ? element_as_double(*t, i) : 0.0; };
  std::vector<double> y(static_cast<size_t>(seq * directions * batch * hidden), 0.0);
  std::vector<double> y_h(static_cast<size_t>(directions * batch * hidden)), y_c(y_h.size());
  std::vector<double> wx(static_cast<size_t>(g * hidden)), rh(wx.size()), next(static_cast<size_t>(hidden));
  for (int d = 0; d < directions; ++d) {
    const bool backward = a.reverse_only || d == 1;
    const int64_t w_base = d * g * hidden * input_size, r_base = d * g * hidden * hidden, b_base = d * 2 * g * hidden;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = lens ? static_cast<int64_t>(element_as_double(*lens, b)) : seq;
      std::vector<double> h(static_cast<size_t>(hidden)), c(static_cast<size_t>(hidden));
      for (int64_t k = 0; k < hidden; ++k) {
        h[k] = at(h0, state_offset(a, batch, d, b) + k);
        c[k] = at(c0, state_offset(a, batch, d, b) + k);
      }
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = backward ? len - 1 - step : step;
        // wx[j H + k] = W x + Wb, rh[j H + k] = R h + Rb of gate j
        for (int64_t jk = 0; jk < g * hidden; ++jk) {
          double sum_x = at(bias, b_base + jk), sum_h = at(bias, b_base + g * hidden + jk);
          for (int64_t i = 0; i < input_size; ++i) sum_x += element_as_double(*w, w_base + jk * input_size + i) * X(t, b, i);
          for (int64_t i = 0; i < hidden; ++i) sum_h += element_as_double(*r, r_base + jk * hidden + i) * h[i];
          wx[jk] = sum_x;
          rh[jk] = sum_h;
        }
        if (cell == Cell::kRnn) {
          for (int64_t k = 0; k < hidden; ++k) next[k] = rnn_unit(a, d, wx[k] + rh[k]);
        } else if (cell == Cell::kGru) {  // gates z, r, h
          std::vector<double> z(static_cast<size_t>(hidden)), reset(static_cast<size_t>(hidden));
          for (int64_t k = 0; k < hidden; ++k) {
            z[k] = gru_gate(a, d, wx[k] + rh[k]);
            reset[k] = gru_gate(a, d, wx[hidden + k] + rh[hidden + k]);
          }
          for (int64_t k = 0; k < hidden; ++k) {
            double recurrent = reset[k] * rh[2 * hidden + k];  // linear_before_reset: r (Rh h + Rbh)
            if (!a.linear_before_reset) {                    // otherwise: Rh (r h) + Rbh
              recurrent = at(bias, b_base + 5 * hidden + k);
              for (int64_t i = 0; i < hidden; ++i)
                recurrent += element_as_double(*r, r_base + (2 * hidden + k) * hidden + i) * reset[i] * h[i];
            }
            next[k] = gru_unit(a, d, z[k], wx[2 * hidden + k], recurrent, h[k]);
          }
        } else {  // LSTM gates i, o, f, c
          for (int64_t k = 0; k < hidden; ++k) {
            const double pre[4] = {wx[k] + rh[k], wx[hidden + k] + rh[hidden + k], wx[2 * hidden + k] + rh[2 * hidden + k],
                                   wx[3 * hidden + k] + rh[3 * hidden + k]};
            next[k] = lstm_unit(a, d, pre, at(p, d * 3 * hidden + k), at(p, d * 3 * hidden + hidden + k),
                                at(p, d * 3 * hidden + 2 * hidden + k), c[k]);
          }
        }
        h = next;
        for (int64_t k = 0; k < hidden; ++k) y[static_cast<size_t>(y_offset(a, seq, batch, t, d, b) + k)] = h[k];
      }
      for (int64_t k = 0; k < hidden; ++k) {
        y_h[static_cast<size_t>(state_offset(a, batch, d, b) + k)] = h[k];
        y_c[static_cast<size_t>(state_offset(a, batch, d, b) + k)] = c[k];
      }
    }
  }
  for (const auto& [i, v] : {std::pair<size_t, const std::vector<double>*>{0, &y}, {1, &y_h}, {2, &y_c}})
    if (Tensor* t = ctx.output(i))
      for (size_t e = 0; e < v->size(); ++e) store_double(*t, static_cast<int64_t>(e), (*v)[e]);
  return Status::ok();
}

}  // namespace

void register_recurrent_ops(OpRegistry& r) {
  const std::pair<const char*, Cell> ops[] = {{"RNN", Cell::kRnn}, {"GRU", Cell::kGru}, {"LSTM", Cell::kLstm}};
  for (const auto& [name, cell] : ops)
    for (int v : {7, 14}) {
      const Cell c = cell;
      r.add({"", name, v, with_required_inputs(3, [c](InferenceContext& ctx) { return recurrent_infer(ctx, c); }),
             [c](KernelContext& ctx) { return recurrent_kernel(ctx, c); }});
    }
}

}  // namespace kiln::ops
