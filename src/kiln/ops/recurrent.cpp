// Recurrent layers: RNN, GRU and LSTM (opsets 7 and 14): forward, reverse and bidirectional,
// layouts 0 ([seq, batch, ...]) and 1 ([batch, seq, ...]), per-batch sequence lengths, initial
// states, LSTM peepholes and input_forget, clip, and the activation functions ONNX names.
// One cell loop serves all three; computed in double.
#include <cmath>
#include <functional>

#include "kiln/ops/data_movement.h"
#include "kiln/ops/op_families.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/op_registry.h"

namespace kiln::ops {

namespace {

enum class Cell { kRnn, kGru, kLstm };

int gates_of(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }

using Activation = std::function<double(double)>;

Result<Activation> activation(const std::string& name, double alpha, double beta) {
  if (name == "Sigmoid") return Activation([](double x) { return 1 / (1 + std::exp(-x)); });
  if (name == "Tanh") return Activation([](double x) { return std::tanh(x); });
  if (name == "Relu") return Activation([](double x) { return std::max(0.0, x); });
  if (name == "Affine") return Activation([=](double x) { return alpha * x + beta; });
  if (name == "LeakyRelu") return Activation([=](double x) { return x >= 0 ? x : alpha * x; });
  if (name == "ThresholdedRelu") return Activation([=](double x) { return x > alpha ? x : 0; });
  if (name == "ScaledTanh") return Activation([=](double x) { return alpha * std::tanh(beta * x); });
  if (name == "HardSigmoid") return Activation([=](double x) { return std::clamp(alpha * x + beta, 0.0, 1.0); });
  if (name == "Elu") return Activation([=](double x) { return x >= 0 ? x : alpha * (std::exp(x) - 1); });
  if (name == "Softsign") return Activation([](double x) { return x / (1 + std::fabs(x)); });
  if (name == "Softplus") return Activation([](double x) { return std::log1p(std::exp(x)); });
  return invalid_model("unknown recurrent activation '" + name + "'");
}

// The activations of each direction: f (and g, h) from the attribute, or the op's defaults.
Result<std::vector<Activation>> activations(const ir::Node& node, Cell cell, int directions) {
  const std::vector<std::string> defaults = cell == Cell::kRnn    ? std::vector<std::string>{"Tanh"}
                                            : cell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                 : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  std::vector<std::string> names;
  if (const ir::Attribute* a = node.attr("activations")) names = a->strings;
  if (names.empty())
    for (int d = 0; d < directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  if (names.size() != defaults.size() * static_cast<size_t>(directions))
    return invalid_model(node.describe() + ": expected " + std::to_string(defaults.size() * directions) + " activations");
  const std::vector<float> alphas = node.attr_floats("activation_alpha"), betas = node.attr_floats("activation_beta");
  std::vector<Activation> out;
  for (size_t i = 0; i < names.size(); ++i) {
    // Defaults for the parameterised activations follow the ONNX operator docs.
    const double alpha = i < alphas.size() ? alphas[i] : names[i] == "HardSigmoid" ? 0.2 : names[i] == "LeakyRelu" ? 0.01 : 1.0;
    const double beta = i < betas.size() ? betas[i] : names[i] == "HardSigmoid" ? 0.5 : names[i] == "ScaledTanh" ? 1.0 : 0.0;
    KILN_ASSIGN_OR_RETURN(Activation f, activation(names[i], alpha, beta));
    out.push_back(std::move(f));
  }
  return out;
}

int directions_of(const ir::Node& node) { return node.attr_string("direction", "forward") == "bidirectional" ? 2 : 1; }

Status recurrent_infer(InferenceContext& ctx, Cell cell) {
  const ir::TensorType& x = ctx.input_type(0);
  const int64_t hidden = ctx.node().attr_int("hidden_size", 0);
  if (hidden <= 0) return ctx.error("hidden_size must be positive");
  const std::string direction = ctx.node().attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return ctx.error("direction must be forward, reverse or bidirectional");
  const bool batch_first = ctx.node().attr_int("layout", 0) == 1;
  const ir::Dim dirs(directions_of(ctx.node())), h(hidden);
  ir::Dim seq = ir::Dim::unknown(), batch = ir::Dim::unknown();
  if (x.shape && x.shape->rank() == 3) {
    seq = (*x.shape)[batch_first ? 1 : 0];
    batch = (*x.shape)[batch_first ? 0 : 1];
  } else if (x.shape) {
    return ctx.error("X must have rank 3");
  }
  ctx.set_output_type(0, ir::TensorType{x.dtype, batch_first ? ir::Shape({batch, seq, dirs, h}) : ir::Shape({seq, dirs, batch, h})});
  const ir::TensorType state{x.dtype, batch_first ? ir::Shape({batch, dirs, h}) : ir::Shape({dirs, batch, h})};
  const size_t state_outputs = cell == Cell::kLstm ? 2 : 1;
  for (size_t i = 1; i < ctx.output_count() && i <= state_outputs; ++i) ctx.set_output_type(i, state);
  return Status::ok();
}

struct Inputs {
  const Tensor *x, *w, *r, *b, *lens, *h0, *c0, *p;
};

Status recurrent_kernel(KernelContext& ctx, Cell cell) {
  const ir::Node& node = ctx.node();
  const Inputs in{ctx.input(0), ctx.input(1), ctx.input(2), ctx.input(3), ctx.input(4), ctx.input(5),
                  cell == Cell::kLstm ? ctx.input(6) : nullptr, cell == Cell::kLstm ? ctx.input(7) : nullptr};
  const bool batch_first = node.attr_int("layout", 0) == 1;
  const int64_t seq = in.x->shape()[batch_first ? 1 : 0], batch = in.x->shape()[batch_first ? 0 : 1];
  const int64_t input_size = in.x->shape()[2], hidden = node.attr_int("hidden_size", 0);
  const int directions = directions_of(node);
  const int g = gates_of(cell);
  const bool reverse_only = node.attr_string("direction", "forward") == "reverse";
  const double clip = node.attr_float("clip", 0);
  const bool linear_before_reset = node.attr_int("linear_before_reset", 0) != 0;
  const bool input_forget = node.attr_int("input_forget", 0) != 0;
  KILN_ASSIGN_OR_RETURN(std::vector<Activation> acts, activations(node, cell, directions));
  const size_t per_dir = acts.size() / static_cast<size_t>(directions);
  auto X = [&](int64_t t, int64_t b, int64_t i) {
    return element_as_double(*in.x, (batch_first ? (b * seq + t) : (t * batch + b)) * input_size + i);
  };
  auto at = [](const Tensor* t, int64_t i) { return t ? element_as_double(*t, i) : 0.0; };
  auto clipped = [&](double v) { return clip > 0 ? std::clamp(v, -clip, clip) : v; };
  std::vector<double> y(static_cast<size_t>(seq * directions * batch * hidden), 0.0);
  std::vector<double> y_h(static_cast<size_t>(directions * batch * hidden)), y_c(y_h.size());
  for (int d = 0; d < directions; ++d) {
    const bool backward = reverse_only || d == 1;
    const Activation& f = acts[d * per_dir];
    const Activation& gfn = per_dir > 1 ? acts[d * per_dir + 1] : acts[d * per_dir];
    const Activation& hfn = per_dir > 2 ? acts[d * per_dir + 2] : gfn;
    const int64_t w_base = d * g * hidden * input_size, r_base = d * g * hidden * hidden, b_base = d * 2 * g * hidden;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = in.lens ? static_cast<int64_t>(element_as_double(*in.lens, b)) : seq;
      std::vector<double> h(static_cast<size_t>(hidden)), c(static_cast<size_t>(hidden));
      for (int64_t k = 0; k < hidden; ++k) {
        h[k] = at(in.h0, (d * batch + b) * hidden + k);
        c[k] = at(in.c0, (d * batch + b) * hidden + k);
      }
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = backward ? len - 1 - step : step;
        // gate[j][k] = W x + Wb (+ R h + Rb, except GRU's h gate with linear_before_reset handled below)
        std::vector<std::vector<double>> wx(g, std::vector<double>(hidden)), rh(g, std::vector<double>(hidden));
        for (int j = 0; j < g; ++j)
          for (int64_t k = 0; k < hidden; ++k) {
            double a = at(in.b, b_base + j * hidden + k), r = at(in.b, b_base + (g + j) * hidden + k);
            for (int64_t i = 0; i < input_size; ++i) a += element_as_double(*in.w, w_base + (j * hidden + k) * input_size + i) * X(t, b, i);
            for (int64_t i = 0; i < hidden; ++i) r += element_as_double(*in.r, r_base + (j * hidden + k) * hidden + i) * h[i];
            wx[j][k] = a;
            rh[j][k] = r;
          }
        std::vector<double> next(static_cast<size_t>(hidden));
        if (cell == Cell::kRnn) {
          for (int64_t k = 0; k < hidden; ++k) next[k] = f(clipped(wx[0][k] + rh[0][k]));
        } else if (cell == Cell::kGru) {  // gates z, r, h
          std::vector<double> z(static_cast<size_t>(hidden)), rg(static_cast<size_t>(hidden));
          for (int64_t k = 0; k < hidden; ++k) {
            z[k] = f(clipped(wx[0][k] + rh[0][k]));
            rg[k] = f(clipped(wx[1][k] + rh[1][k]));
          }
          for (int64_t k = 0; k < hidden; ++k) {
            double recurrent = rg[k] * rh[2][k];  // linear_before_reset: r * (R h + Rb)
            if (!linear_before_reset) {           // otherwise: R (r * h) + Rb
              recurrent = at(in.b, b_base + 5 * hidden + k);
              for (int64_t i = 0; i < hidden; ++i)
                recurrent += element_as_double(*in.r, r_base + (2 * hidden + k) * hidden + i) * rg[i] * h[i];
            }
            next[k] = (1 - z[k]) * gfn(clipped(wx[2][k] + recurrent)) + z[k] * h[k];
          }
        } else {  // LSTM gates i, o, f, c
          for (int64_t k = 0; k < hidden; ++k) {
            const double pi = at(in.p, d * 3 * hidden + k), po = at(in.p, d * 3 * hidden + hidden + k),
                         pf = at(in.p, d * 3 * hidden + 2 * hidden + k);
            const double ig = f(clipped(wx[0][k] + rh[0][k] + pi * c[k]));
            const double fg = input_forget ? 1 - ig : f(clipped(wx[2][k] + rh[2][k] + pf * c[k]));
            const double cg = gfn(clipped(wx[3][k] + rh[3][k]));
            c[k] = fg * c[k] + ig * cg;
            const double og = f(clipped(wx[1][k] + rh[1][k] + po * c[k]));
            next[k] = og * hfn(c[k]);
          }
        }
        h = next;
        for (int64_t k = 0; k < hidden; ++k) y[static_cast<size_t>(((t * directions + d) * batch + b) * hidden + k)] = h[k];
      }
      for (int64_t k = 0; k < hidden; ++k) {
        y_h[static_cast<size_t>((d * batch + b) * hidden + k)] = h[k];
        y_c[static_cast<size_t>((d * batch + b) * hidden + k)] = c[k];
      }
    }
  }
  // Layout 1 stores Y as [batch, seq, dirs, hidden] and states as [batch, dirs, hidden].
  auto write = [&](size_t out, const std::vector<double>& v, bool is_y) {
    Tensor* t = ctx.output(out);
    if (!t) return;
    const int64_t outer = is_y ? seq * directions : directions;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t k = 0; k < hidden; ++k) {
          const int64_t src = (o * batch + b) * hidden + k;
          store_double(*t, batch_first ? (b * outer + o) * hidden + k : src, v[static_cast<size_t>(src)]);
        }
  };
  write(0, y, true);
  write(1, y_h, false);
  write(2, y_c, false);
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
