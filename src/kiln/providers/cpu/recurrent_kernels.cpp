// cpu kernels for the recurrent layers. LSTM: oneDNN's LSTM primitive, its weights packed once
// when the plan is built.
// ONNX orders the gates i, o, f, c and stores W [dirs, 4H, I], R [dirs, 4H, H] and B [dirs, 8H]
// (input and recurrence biases); oneDNN wants gates i, f, c, o in [layer, dir, in, gate, out] and
// one bias. A bidirectional run's output [T, N, 2H] is regrouped into ONNX's Y [T, 2, N, H]. What
// oneDNN's LSTM does not model (other activations, clip, input_forget, peepholes, per-batch
// sequence lengths, batch-first layout), and every LSTM where oneDNN has only its reference
// primitive (below AVX-512 in oneDNN 2.6), runs Kiln's recurrent loop (recurrent_loop.h), as GRU
// and RNN always do. Weights computed by the graph (an Unsqueeze inside an If branch) are packed on
// each run instead.
#include <algorithm>
#include <cstring>
#include <optional>

#include "kiln/ops/recurrent_cell.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/onednn_support.h"
#include "kiln/providers/cpu/recurrent_loop.h"

namespace kiln::providers::cpu {
namespace {

using dnnl::memory;

// oneDNN's gate index of ONNX's gate k (i, o, f, c).
constexpr int kOnednnGate[4] = {0, 3, 1, 2};

// Float32 throughout; ranks may be known only once a body is planned for its shapes (the kernel is
// built from the plan's dims).
Capability lstm_supports(const ir::Node& node) {
  for (size_t i : {0, 1, 2, 3, 5, 6})
    if (const ir::Value* v = node.input(i); v && (!v->type.is_tensor() || v->type.dtype != DType::kFloat))
      return Capability::no("LSTM input '" + v->name + "' is not float32");
  if (node.input(4)) return Capability::no("LSTM with per-batch sequence lengths");
  if (node.input(7)) return Capability::no("LSTM with peepholes");
  if (node.attr_int("layout", 0) != 0) return Capability::no("LSTM with the batch-first layout");
  if (node.has_attr("clip")) return Capability::no("LSTM with clip");
  if (node.attr_int("input_forget", 0) != 0) return Capability::no("LSTM with input_forget");
  Result<ops::RecurrentAttrs> attrs = ops::recurrent_attrs(node, ops::RecurrentCell::kLstm);
  if (!attrs.is_ok()) return Capability::no(attrs.status().message());
  for (size_t i = 0; i < attrs.value().activations.size(); ++i) {
    const ops::ElementwiseFunction& f = *attrs.value().activations[i].function;
    if (f.function != (i % 3 == 0 ? ops::Elementwise::kSigmoid : ops::Elementwise::kTanh))
      return Capability::no("LSTM with activation " + std::string(f.name));
  }
  return Capability::yes();
}

// ONNX [dirs, 4H, in] gate rows as oneDNN's [1, dirs, in, 4, H].
std::vector<float> gates_last(const Tensor& w, int64_t dirs, int64_t hidden) {
  const int64_t in = w.shape()[2];
  const float* src = w.data<float>();
  std::vector<float> out(static_cast<size_t>(dirs * in * 4 * hidden));
  for (int64_t d = 0; d < dirs; ++d)
    for (int64_t g = 0; g < 4; ++g)
      for (int64_t h = 0; h < hidden; ++h)
        for (int64_t i = 0; i < in; ++i)
          out[static_cast<size_t>(((d * in + i) * 4 + kOnednnGate[g]) * hidden + h)] = src[((d * 4 + g) * hidden + h) * in + i];
  return out;
}

Result<ops::Kernel> build_lstm(const ir::Node& node, KernelBuild& build) {
  const std::vector<int64_t> x = input_dims(node, 0), w = input_dims(node, 1);
  const int64_t steps = x[0], batch = x[1], in = x[2], dirs = w[0], hidden = w[1] / 4;
  const std::string direction = node.attr_string("direction", "forward");
  const auto dir = direction == "forward" ? dnnl::rnn_direction::unidirectional_left2right
                   : direction == "reverse" ? dnnl::rnn_direction::unidirectional_right2left
                                            : dnnl::rnn_direction::bidirectional_concat;
  const memory::desc src_layer = row_major_desc({steps, batch, in}), state = row_major_desc({1, dirs, batch, hidden});
  const memory::desc dst_layer = row_major_desc({steps, batch, dirs * hidden});
  const memory::desc bias = row_major_desc({1, dirs, 4, hidden});
  const memory::desc any_layer({1, dirs, in, 4, hidden}, memory::data_type::f32, memory::format_tag::any);
  const memory::desc any_iter({1, dirs, hidden, 4, hidden}, memory::data_type::f32, memory::format_tag::any);
  const dnnl::lstm_forward::desc desc(dnnl::prop_kind::forward_inference, dir, src_layer, state, state, any_layer, any_iter, bias,
                                      dst_layer, state, state);
  const dnnl::lstm_forward::primitive_desc pd(desc, cpu_engine());
  const memory::desc layer_wanted = pd.weights_layer_desc(), iter_wanted = pd.weights_iter_desc();
  auto packed = [dirs, hidden](const Tensor& t, const memory::desc& wanted) {
    std::vector<float> plain = gates_last(t, dirs, hidden);
    const memory::desc user = row_major_desc({1, dirs, t.shape()[2], 4, hidden});
    return reorder_to(memory(user, cpu_engine(), plain.data()), wanted);
  };
  // One bias per gate (input plus recurrence), in memory oneDNN owns.
  auto summed_biases = [dirs, hidden, bias](const Tensor* b) {
    memory biases(bias, cpu_engine());
    auto* out = static_cast<float*>(biases.get_data_handle());
    std::fill_n(out, dirs * 4 * hidden, 0.0f);
    if (b)
      for (int64_t d = 0; d < dirs; ++d)
        for (int64_t g = 0; g < 4; ++g)
          for (int64_t h = 0; h < hidden; ++h)
            out[(d * 4 + kOnednnGate[g]) * hidden + h] =
                b->data<float>()[(d * 8 + g) * hidden + h] + b->data<float>()[(d * 8 + 4 + g) * hidden + h];
    return biases;
  };
  // Constant weights are packed once, here; others on each run.
  const bool constant = constant_input(node, 1) && constant_input(node, 2) && (!node.input(3) || constant_input(node, 3));
  std::optional<memory> layer, iter, biases;
  if (constant) {
    layer = packed(*constant_input(node, 1), layer_wanted);
    iter = packed(*constant_input(node, 2), iter_wanted);
    biases = summed_biases(node.input(3) ? constant_input(node, 3) : nullptr);
  }
  const int64_t layer_out = steps * batch * dirs * hidden, state_size = dirs * batch * hidden;
  // Scratch: zero initial states, the bidirectional output before regrouping, omitted outputs.
  const auto scratch_floats = static_cast<size_t>(4 * state_size + layer_out);
  ops::Kernel run = primitive_kernel({node, build}, dnnl::lstm_forward(pd), [=](ops::KernelContext& ctx, PrimitiveArgs& args) {
    float* zeros = run_scratch_floats(scratch_floats);
    std::memset(zeros, 0, static_cast<size_t>(2 * state_size) * sizeof(float));
    float* layer_scratch = zeros + 2 * state_size;
    float* states_scratch = layer_scratch + layer_out;
    auto in_state = [&](size_t i, float* zero) { return ctx.input(i) ? const_cast<float*>(ctx.input(i)->data<float>()) : zero; };
    auto out_state = [&](size_t i, float* spare) { return ctx.output(i) ? ctx.output(i)->data<float>() : spare; };
    float* y = dirs == 1 && ctx.output(0) ? ctx.output(0)->data<float>() : layer_scratch;
    args.set(DNNL_ARG_SRC_LAYER, src_layer, *ctx.input(0));
    args.set(DNNL_ARG_SRC_ITER, state, in_state(5, zeros));
    args.set(DNNL_ARG_SRC_ITER_C, state, in_state(6, zeros + state_size));
    args.set(DNNL_ARG_WEIGHTS_LAYER, layer ? *layer : packed(*ctx.input(1), layer_wanted));
    args.set(DNNL_ARG_WEIGHTS_ITER, iter ? *iter : packed(*ctx.input(2), iter_wanted));
    args.set(DNNL_ARG_BIAS, biases ? *biases : summed_biases(ctx.input(3)));
    args.set(DNNL_ARG_DST_LAYER, dst_layer, y);
    args.set(DNNL_ARG_DST_ITER, state, out_state(1, states_scratch));
    args.set(DNNL_ARG_DST_ITER_C, state, out_state(2, states_scratch + state_size));
  });
  return ops::Kernel([=](ops::KernelContext& ctx) -> Status {
    KILN_RETURN_IF_ERROR(run(ctx));
    if (dirs == 1 || !ctx.output(0)) return Status::ok();
    // Y [T, 2, N, H] from oneDNN's [T, N, 2H], still in the scratch of this call.
    const float* from = run_scratch_floats(scratch_floats) + 2 * state_size;
    float* to = ctx.output(0)->data<float>();
    for (int64_t t = 0; t < steps; ++t)
      for (int64_t d = 0; d < dirs; ++d)
        for (int64_t n = 0; n < batch; ++n)
          std::memcpy(to + ((t * dirs + d) * batch + n) * hidden, from + ((t * batch + n) * dirs + d) * hidden,
                      static_cast<size_t>(hidden) * sizeof(float));
    return Status::ok();
  });
}

// oneDNN's LSTM where it runs the node with a vector kernel; the loop otherwise.
Result<ops::Kernel> build_lstm_or_loop(const ir::Node& node, KernelBuild& build) {
  if (!lstm_supports(node).supported) return build_recurrent_loop(node);
  Result<ops::Kernel> primitive = internal_error("unset");
  const Status built = guard(node, [&] {
    primitive = build_lstm(node, build);
    return Status::ok();
  });
  if (built.code() == StatusCode::kUnsupportedTarget) return build_recurrent_loop(node);
  KILN_RETURN_IF_ERROR(built);
  return primitive;
}

}  // namespace

void add_recurrent_kernels(CpuKernelTable& table) {
  table["LSTM"] = CpuKernel{recurrent_loop_supports, build_lstm_or_loop};
  for (const char* op : {"GRU", "RNN"}) table[op] = node_only(recurrent_loop_supports, build_recurrent_loop);
}

}  // namespace kiln::providers::cpu
