// The recurrent layers RNN, GRU and LSTM, written once for the reference kernel and the cpu
// provider's loop: the attributes and input shapes (checked before any element is read), the
// activation functions ONNX names, and each cell's gate math for one hidden unit of one step. The
// products W x and R h are the caller's (plain loops in the reference, GEMMs on cpu); everything
// after them is here, templated on the arithmetic type (double in the reference, float on cpu).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ops/elementwise_functions.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ops {

enum class RecurrentCell { kRnn, kGru, kLstm };

// Gate rows per direction in W and R: RNN 1; GRU 3 (z, r, h); LSTM 4 (i, o, f, c).
inline int gates_of(RecurrentCell cell) { return cell == RecurrentCell::kRnn ? 1 : cell == RecurrentCell::kGru ? 3 : 4; }

// One of ONNX's recurrent activations (f, g, h) with its alpha and beta: a function of the
// element-wise table (elementwise_functions.h) that a recurrent cell may use.
struct RecurrentActivation {
  const ElementwiseFunction* function = &elementwise_function(Elementwise::kTanh);
  double alpha = 0, beta = 0;

  template <class S>
  S operator()(S x) const {
    return (*function)(x, S(0), static_cast<S>(alpha), static_cast<S>(beta));
  }
};
// A node's attributes, checked.
struct RecurrentAttrs {
  RecurrentCell cell = RecurrentCell::kLstm;
  int64_t hidden = 0;
  int directions = 1;
  bool reverse_only = false;  // direction "reverse"
  bool batch_first = false;   // layout 1
  double clip = 0;            // 0: none
  bool linear_before_reset = false, input_forget = false;
  // f (and g, h) of each direction, in that order.
  std::vector<RecurrentActivation> activations;

  size_t per_direction() const { return activations.size() / static_cast<size_t>(directions); }
  const RecurrentActivation& f(int d) const { return activations[static_cast<size_t>(d) * per_direction()]; }
  const RecurrentActivation& g(int d) const { return activations[static_cast<size_t>(d) * per_direction() + (per_direction() > 1 ? 1 : 0)]; }
  const RecurrentActivation& h(int d) const { return activations[static_cast<size_t>(d) * per_direction() + (per_direction() > 2 ? 2 : 0)]; }
};

Result<RecurrentAttrs> recurrent_attrs(const ir::Node& node, RecurrentCell cell);

// The run's sizes, read from X.
struct RecurrentSizes {
  int64_t seq = 0, batch = 0, input = 0;
};

// Checks every input's shape against the attributes and X (W [dirs, gH, in], R [dirs, gH, H],
// B [dirs, 2gH], sequence_lens [batch] with values in [0, seq], initial states [dirs, batch, H]
// or [batch, dirs, H] with layout 1, P [dirs, 3H]); InvalidArgument naming the input otherwise.
// `inputs` are the node's (nullptr where omitted).
Result<RecurrentSizes> check_recurrent_inputs(const ir::Node& node, const RecurrentAttrs& a, const std::vector<const Tensor*>& inputs);

// Offset of state [d, b] (H values) in an initial or final state tensor of either layout.
inline int64_t state_offset(const RecurrentAttrs& a, int64_t batch, int d, int64_t b) {
  return (a.batch_first ? b * a.directions + d : d * batch + b) * a.hidden;
}
// Offset of Y [t, d, b] (H values) in either layout.
inline int64_t y_offset(const RecurrentAttrs& a, int64_t seq, int64_t batch, int64_t t, int d, int64_t b) {
  return (a.batch_first ? (b * seq + t) * a.directions + d : (t * a.directions + d) * batch + b) * a.hidden;
}

template <class S>
S clipped(S v, double clip) {
  return clip > 0 ? std::clamp(v, static_cast<S>(-clip), static_cast<S>(clip)) : v;
}

// The next hidden value of an RNN: f(Wx + Wb + Rh + Rb).
template <class S>
S rnn_unit(const RecurrentAttrs& a, int d, S pre) {
  return a.f(d)(clipped(pre, a.clip));
}

// GRU's update and reset gates from their pre-activations.
template <class S>
S gru_gate(const RecurrentAttrs& a, int d, S pre) {
  return a.f(d)(clipped(pre, a.clip));
}
// The next hidden value of a GRU: (1 - z) g(Wh x + Wbh + recurrent) + z h, where recurrent is
// r (Rh h + Rbh) with linear_before_reset and Rh (r h) + Rbh without.
template <class S>
S gru_unit(const RecurrentAttrs& a, int d, S z, S input_part, S recurrent, S h) {
  return (S(1) - z) * a.g(d)(clipped(input_part + recurrent, a.clip)) + z * h;
}

// One LSTM unit: pre[j] = W x + Wb + R h + Rb of gate j (i, o, f, c); peepholes p (i, o, f) may be
// zero. Updates c and returns the next hidden value.
template <class S>
S lstm_unit(const RecurrentAttrs& a, int d, const S pre[4], S pi, S po, S pf, S& c) {
  const S input = a.f(d)(clipped(pre[0] + pi * c, a.clip));
  const S forget = a.input_forget ? S(1) - input : a.f(d)(clipped(pre[2] + pf * c, a.clip));
  const S cell = a.g(d)(clipped(pre[3], a.clip));
  c = forget * c + input * cell;
  const S output = a.f(d)(clipped(pre[1] + po * c, a.clip));
  return output * a.h(d)(c);
}

}  // namespace kiln::ops
