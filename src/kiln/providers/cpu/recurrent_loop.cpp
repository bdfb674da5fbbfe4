// cpu kernel for RNN, GRU and LSTM as Kiln's own loop over time steps, in float: for each
// direction, W x + Wb for every step at once as one GEMM, then per step R h + Rb as one GEMM over
// the batch (GRU without linear_before_reset: the update and reset gates first, then Rh (r h) as a
// second GEMM) and the gate math of ops/recurrent_cell.h (the reference's formulas, written over a
// row of gates at a time so that sigmoid and tanh run in vector code, vector_math.h) over the batch
// rows on OpenMP threads, the directions of a bidirectional layer on a thread each. The GEMMs are oneDNN's sgemm (vector code on every x86-64 level). Runs
// every attribute and input the reference does: both layouts, per-batch sequence lengths (a row
// past its length keeps its state and writes zeros to Y), initial states, peepholes, clip,
// input_forget and every activation. The LSTM entry prefers oneDNN's LSTM primitive where it has
// a vector kernel (recurrent_kernels.cpp).
#include "kiln/providers/cpu/recurrent_loop.h"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "kiln/ops/op_helpers.h"
#include "kiln/ops/recurrent_cell.h"
#include "kiln/providers/cpu/onednn_support.h"
#include "kiln/providers/cpu/scoped_threads.h"
#include "kiln/providers/cpu/vector_math.h"

namespace kiln::providers::cpu {
namespace {

using ops::RecurrentAttrs;
using ops::RecurrentCell;

// C[m, n] = A[m, k] B[n, k]^T (+ C when accumulate), row-major.
Status gemm_abt(const ops::KernelContext& ctx, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  if (m == 0 || n == 0) return Status::ok();
  if (k == 0) {
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, 0.0f);
    return Status::ok();
  }
  if (dnnl_sgemm('N', 'T', m, n, k, 1.0f, a, lda, b, ldb, accumulate ? 1.0f : 0.0f, c, ldc) != dnnl_success)
    return ctx.error("oneDNN sgemm failed");
  return Status::ok();
}

// x[i] = f(clip(x[i])) for i < n: sigmoid and tanh (every default) in vector code, the rest per element.
void activate(const ops::RecurrentActivation& f, float* x, int64_t n, double clip) {
  if (clip > 0) {
    const float bound = static_cast<float>(clip);
    for (int64_t i = 0; i < n; ++i) x[i] = std::clamp(x[i], -bound, bound);
  }
  if (f.function->function == ops::Elementwise::kSigmoid) return sigmoid_in_place(x, n);
  if (f.function->function == ops::Elementwise::kTanh) return tanh_in_place(x, n);
  for (int64_t i = 0; i < n; ++i) x[i] = f(x[i]);
}

struct Loop {
  const ops::KernelContext& ctx;
  const RecurrentAttrs& a;
  ops::RecurrentSizes s;
  const float *x, *w, *r, *bias, *h0, *c0, *p;
  std::vector<int64_t> lengths;

  // One direction: writes Y (when wanted) and the final states into y, y_h, y_c.
  Status run(int d, float* y, float* y_h, float* y_c) const {
    const int64_t gates = ops::gates_of(a.cell), hidden = a.hidden, gh = gates * hidden, batch = s.batch, seq = s.seq;
    const bool backward = a.reverse_only || d == 1;
    const float* wd = w + d * gh * s.input;
    const float* rd = r + d * gh * hidden;
    const float* wb = bias ? bias + d * 2 * gh : nullptr;
    const float* rb = bias ? wb + gh : nullptr;
    // W x + Wb for every (t, b) row of X in memory order.
    std::vector<float> wx(static_cast<size_t>(seq * batch * gh));
    KILN_RETURN_IF_ERROR(gemm_abt(ctx, seq * batch, gh, s.input, x, s.input, wd, s.input, wx.data(), gh, false));
    if (wb)
      for (int64_t row = 0; row < seq * batch; ++row)
        for (int64_t j = 0; j < gh; ++j) wx[static_cast<size_t>(row * gh + j)] += wb[j];
    std::vector<float> h(static_cast<size_t>(batch * hidden), 0.0f), c(h.size(), 0.0f), next(h.size());
    for (int64_t b = 0; b < batch; ++b) {
      if (h0) std::memcpy(&h[static_cast<size_t>(b * hidden)], h0 + ops::state_offset(a, batch, d, b), static_cast<size_t>(hidden) * sizeof(float));
      if (c0) std::memcpy(&c[static_cast<size_t>(b * hidden)], c0 + ops::state_offset(a, batch, d, b), static_cast<size_t>(hidden) * sizeof(float));
    }
    const bool gru_reset_first = a.cell == RecurrentCell::kGru && !a.linear_before_reset;
    // R h + Rb per row: all gates, or only z and r first for GRU without linear_before_reset.
    const int64_t rh_gates = gru_reset_first ? 2 * hidden : gh;
    // rh: R h per row; pre: each row's gate pre-activations, then the gates themselves.
    std::vector<float> rh(static_cast<size_t>(batch * gh)), pre(rh.size()), reset_h(gru_reset_first ? h.size() : 0);
    const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
    const float* pd = p ? p + d * 3 * hidden : nullptr;
    // A step's work is a product of batch x gates x H: below about a million multiply-adds, waking
    // threads for it (and its gate rows) costs more than the step.
    std::optional<ScopedThreads> serial;
    if (batch * gh * hidden < (int64_t{1} << 20)) serial.emplace(1);
    for (int64_t step = 0; step < longest; ++step) {
      KILN_RETURN_IF_ERROR(gemm_abt(ctx, batch, rh_gates, hidden, h.data(), hidden, rd, hidden, rh.data(), gh, false));
      // The row of X each batch row reads at this step (-1: past its length).
      auto time_of = [&](int64_t b) {
        const int64_t len = lengths[static_cast<size_t>(b)];
        return step >= len ? int64_t{-1} : backward ? len - 1 - step : step;
      };
      auto wx_row = [&](int64_t b) {
        const int64_t t = time_of(b);
        return wx.data() + (a.batch_first ? b * seq + t : t * batch + b) * gh;
      };
      // pre[j] = W x + Wb + R h + Rb of gates j in [first, first + count) of row b.
      auto sum_gates = [&](int64_t b, int64_t first, int64_t count) {
        const float* in = wx_row(b) + first;
        const float* rec = &rh[static_cast<size_t>(b * gh + first)];
        float* out = &pre[static_cast<size_t>(b * gh + first)];
        for (int64_t j = 0; j < count; ++j) out[j] = in[j] + rec[j];
        if (rb)
          for (int64_t j = 0; j < count; ++j) out[j] += rb[first + j];
        return out;
      };
      if (gru_reset_first) {
        for (int64_t b = 0; b < batch; ++b) {
          float* zr = &pre[static_cast<size_t>(b * gh)];
          if (time_of(b) < 0) {
            std::fill_n(&reset_h[static_cast<size_t>(b * hidden)], hidden, 0.0f);
            continue;
          }
          sum_gates(b, 0, 2 * hidden);
          activate(a.f(d), zr, 2 * hidden, a.clip);
          for (int64_t k = 0; k < hidden; ++k)
            reset_h[static_cast<size_t>(b * hidden + k)] = zr[hidden + k] * h[static_cast<size_t>(b * hidden + k)];
        }
        KILN_RETURN_IF_ERROR(gemm_abt(ctx, batch, hidden, hidden, reset_h.data(), hidden, rd + 2 * hidden * hidden, hidden,
                                      rh.data() + 2 * hidden, gh, false));
      }
#pragma omp parallel for schedule(static) if (batch > 1 && batch * gh >= 4096)
      for (int64_t b = 0; b < batch; ++b) {
        float* hb = &next[static_cast<size_t>(b * hidden)];
        const float* h_prev = &h[static_cast<size_t>(b * hidden)];
        if (time_of(b) < 0) {  // past its length: the state stays
          std::memcpy(hb, h_prev, static_cast<size_t>(hidden) * sizeof(float));
          continue;
        }
        float* g = &pre[static_cast<size_t>(b * gh)];
        if (a.cell == RecurrentCell::kRnn) {
          sum_gates(b, 0, hidden);
          activate(a.f(d), g, hidden, a.clip);
          std::memcpy(hb, g, static_cast<size_t>(hidden) * sizeof(float));
        } else if (a.cell == RecurrentCell::kGru) {
          // z and r; then the candidate n = g(Wx + Wb + recurrent), recurrent being r (Rh h + Rbh) with
          // linear_before_reset and Rh (r h) + Rbh (from the second product) without.
          if (!gru_reset_first) {
            sum_gates(b, 0, 2 * hidden);
            activate(a.f(d), g, 2 * hidden, a.clip);
          }
          const float* in = wx_row(b) + 2 * hidden;
          const float* rec = &rh[static_cast<size_t>(b * gh + 2 * hidden)];
          const float* bias_n = rb ? rb + 2 * hidden : nullptr;
          float* n = g + 2 * hidden;
          for (int64_t k = 0; k < hidden; ++k) {
            const float recurrent = rec[k] + (bias_n ? bias_n[k] : 0.0f);
            n[k] = in[k] + (a.linear_before_reset ? g[hidden + k] * recurrent : recurrent);
          }
          activate(a.g(d), n, hidden, a.clip);
          for (int64_t k = 0; k < hidden; ++k) hb[k] = (1.0f - g[k]) * n[k] + g[k] * h_prev[k];
        } else {
          // Gates i, o, f, c; peepholes p (i, o, f) read the cell state before (i, f) or after (o) the update.
          sum_gates(b, 0, gh);
          float *gi = g, *go = g + hidden, *gf = g + 2 * hidden, *gc = g + 3 * hidden;
          float* cb = &c[static_cast<size_t>(b * hidden)];
          if (pd)
            for (int64_t k = 0; k < hidden; ++k) {
              gi[k] += pd[k] * cb[k];
              gf[k] += pd[2 * hidden + k] * cb[k];
            }
          activate(a.f(d), gi, hidden, a.clip);
          if (a.input_forget)
            for (int64_t k = 0; k < hidden; ++k) gf[k] = 1.0f - gi[k];
          else
            activate(a.f(d), gf, hidden, a.clip);
          activate(a.g(d), gc, hidden, a.clip);
          for (int64_t k = 0; k < hidden; ++k) cb[k] = gf[k] * cb[k] + gi[k] * gc[k];
          if (pd)
            for (int64_t k = 0; k < hidden; ++k) go[k] += pd[hidden + k] * cb[k];
          activate(a.f(d), go, hidden, a.clip);
          std::memcpy(gc, cb, static_cast<size_t>(hidden) * sizeof(float));  // h(c), in the cell gate's place
          activate(a.h(d), gc, hidden, 0.0);  // h(c) is not clipped
          for (int64_t k = 0; k < hidden; ++k) hb[k] = go[k] * gc[k];
        }
        if (y) std::memcpy(y + ops::y_offset(a, seq, batch, time_of(b), d, b), hb, static_cast<size_t>(hidden) * sizeof(float));
      }
      h.swap(next);
    }
    for (int64_t b = 0; b < batch; ++b) {
      if (y_h) std::memcpy(y_h + ops::state_offset(a, batch, d, b), &h[static_cast<size_t>(b * hidden)], static_cast<size_t>(hidden) * sizeof(float));
      if (y_c) std::memcpy(y_c + ops::state_offset(a, batch, d, b), &c[static_cast<size_t>(b * hidden)], static_cast<size_t>(hidden) * sizeof(float));
    }
    return Status::ok();
  }
};

}  // namespace

Capability recurrent_loop_supports(const ir::Node& node) {
  for (const ir::Value* v : node.inputs)
    if (v && v != node.input(4) && (!v->type.is_tensor() || v->type.dtype != DType::kFloat))
      return Capability::no(node.op_type + " input '" + v->name + "' is not float32");
  if (const ir::Value* lens = node.input(4); lens && (!lens->type.is_tensor() || lens->type.dtype != DType::kInt32))
    return Capability::no(node.op_type + " sequence_lens that are not int32");
  return Capability::yes();
}

Result<ops::Kernel> build_recurrent_loop(const ir::Node& node) {
  const RecurrentCell cell = node.op_type == "LSTM" ? RecurrentCell::kLstm : node.op_type == "GRU" ? RecurrentCell::kGru : RecurrentCell::kRnn;
  KILN_ASSIGN_OR_RETURN(const RecurrentAttrs a, ops::recurrent_attrs(node, cell));
  const size_t input_count = cell == RecurrentCell::kLstm ? 8 : 6;
  return ops::Kernel([a, input_count](ops::KernelContext& ctx) -> Status {
    std::vector<const Tensor*> in;
    for (size_t i = 0; i < input_count; ++i) in.push_back(ctx.input(i));
    KILN_ASSIGN_OR_RETURN(const ops::RecurrentSizes s, ops::check_recurrent_inputs(ctx.node(), a, in));
    auto data = [&](size_t i) { return i < in.size() && in[i] ? in[i]->data<float>() : nullptr; };
    Loop loop{ctx, a, s, data(0), data(1), data(2), data(3), data(5), data(6), data(7), {}};
    if (in[4]) {
      KILN_ASSIGN_OR_RETURN(loop.lengths, ops::read_int64s(*in[4], "sequence_lens"));
    } else {
      loop.lengths.assign(static_cast<size_t>(s.batch), s.seq);
    }
    if (s.batch == 0 || s.seq == 0) {
      for (size_t i = 0; i < 3; ++i)
        if (ctx.output(i)) std::memset(ctx.output(i)->raw_data(), 0, ctx.output(i)->byte_size());
      return Status::ok();
    }
    float* y = ctx.output(0) ? ctx.output(0)->data<float>() : nullptr;
    if (y) std::fill_n(y, ctx.output(0)->element_count(), 0.0f);
    float* y_h = ctx.output(1) ? ctx.output(1)->data<float>() : nullptr;
    float* y_c = ctx.output(2) ? ctx.output(2)->data<float>() : nullptr;
    // The two directions of a bidirectional layer are independent: one thread each when there are two.
    std::vector<Status> done(static_cast<size_t>(a.directions), Status::ok());
#pragma omp parallel for num_threads(a.directions) schedule(static) if (a.directions > 1 && omp_get_max_threads() > 1)
    for (int d = 0; d < a.directions; ++d) done[static_cast<size_t>(d)] = loop.run(d, y, y_h, y_c);
    for (const Status& status : done) KILN_RETURN_IF_ERROR(status);
    return Status::ok();
  });
}

}  // namespace kiln::providers::cpu
