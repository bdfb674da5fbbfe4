// kiln::Stream (stream.h): a session's model called over and over with bound buffers and carried
// state. A call reads the bound (or carried) inputs in place and writes each output into its
// bound buffer or one of the stream's; the inputs are checked, and a plan of the stream's own is
// built (or taken from the few it keeps), only when the bindings or the carried shapes change, so
// a steady call costs the kernels, one lock to record itself, and little else. A carried output
// that updates its input (inputs_updated_in_place: a key/value cache) is written over the input's
// buffer when the stream alone holds it, so that the update costs its new rows only.
#include "kiln/stream.h"

#include <chrono>
#include <optional>

#include "kiln/ir/buffer.h"
#include "kiln/ir/elapsed.h"
#include "kiln/runtime/input_binding.h"
#include "kiln/runtime/engine.h"
#include "kiln/runtime/variant_cache.h"

namespace kiln {

namespace {

// Whether `a` and `b` share any byte.
bool overlap(const Tensor& a, const Tensor& b) {
  const auto* a0 = static_cast<const std::byte*>(a.raw_data());
  const auto* b0 = static_cast<const std::byte*>(b.raw_data());
  return a.byte_size() > 0 && b.byte_size() > 0 && a0 < b0 + b.byte_size() && b0 < a0 + a.byte_size();
}

}  // namespace

struct Stream::Impl {
  // Plans kept for the input shapes seen last (a decoder's prompt batches and its single tokens).
  static constexpr size_t kPlansKept = 4;

  explicit Impl(runtime::Engine& e)
      : engine(e),
        bound(e.inputs().size()),
        zeros(e.inputs().size()),
        next_inputs(e.inputs().size()),
        carried_from(e.inputs().size(), -1),
        bound_outputs(e.outputs().size()),
        carried_into(e.outputs().size(), -1),
        buffers(e.outputs().size()),
        targets(e.outputs().size()),
        last(e.outputs().size()) {}

  // The stream's buffers for one output. A call writes into a buffer that nothing outside holds (not
  // the one a carried input is reading, not one whose tensor the caller kept), so a kept output is
  // never overwritten; a carried state alternates between two buffers.
  class OutputBuffers {
   public:
    // A tensor of `dtype` and `shape` over a free buffer, made when none is free; undefined when
    // the allocation fails.
    Tensor take(DType dtype, const std::vector<int64_t>& shape) {
      int64_t count = 1;
      for (int64_t d : shape) count *= d;
      const size_t bytes = std::max<size_t>(1, static_cast<size_t>(count) * dtype_size(dtype));
      for (const Buffer& b : buffers_)
        if (b.data.use_count() == 1 && b.bytes >= bytes) return Tensor::shared_view(dtype, shape, b.data);
      // Huge pages: a stream's buffers are read and written every call (a language model's key/value
      // cache: its first call touches 256 MB, ~95 ms instead of ~165 on base pages, Zen 4 KVM).
      std::shared_ptr<void> data = allocate_buffer(bytes, Paging::kHugePages);
      if (!data) return Tensor();
      // Beyond kKept, the oldest is let go (whoever holds it keeps it alive).
      if (buffers_.size() >= kKept) buffers_.erase(buffers_.begin());
      buffers_.push_back({data, bytes});
      return Tensor::shared_view(dtype, shape, std::move(data));
    }

    // Whether `t` (a carried input's tensor, which holds one reference) views one of these buffers
    // that nothing else holds: the call may then write over it.
    bool only_holder(const Tensor& t) const {
      for (const Buffer& b : buffers_)
        if (b.data.get() == t.raw_data()) return b.data.use_count() == 2;
      return false;
    }

   private:
    static constexpr size_t kKept = 4;
    struct Buffer {
      std::shared_ptr<void> data;
      size_t bytes = 0;
    };
    std::vector<Buffer> buffers_;
  };

  runtime::Engine& engine;
  std::vector<Tensor> bound;         // per model input: the caller's tensor (a carried one's initial state)
  struct Zeros {
    std::vector<int64_t> shape;
    std::shared_ptr<void> buffer;  // what the input reads from, null while none could be had
  };
  std::vector<std::optional<Zeros>> zeros;  // per model input bound by bind_zeros
  std::vector<Value> next_inputs;    // per model input: what the next call reads
  std::vector<int> carried_from;     // per model input: the output carried into it, or -1
  std::vector<Tensor> bound_outputs; // per model output: the caller's buffer, or undefined
  std::vector<int> carried_into;     // per model output: the input it is carried into, or -1
  std::vector<OutputBuffers> buffers;
  std::vector<Tensor> targets;       // per model output: where this call writes it
  std::vector<Tensor> last;          // per model output: the last call's value
  runtime::Executor executor;
  runtime::VariantCache plans{kPlansKept};
  std::shared_ptr<const runtime::ExecutionPlan> plan;
  runtime::ShapeSignature planned;   // the input shapes `plan` is for
  std::vector<bool> in_place;        // per model output: `plan` writes it into a buffer of its own
  std::vector<int> updates;          // per model output: the input `plan` may write it over, or -1
  bool bindings_changed = true;
  std::vector<runtime::StepTiming> timings;
  int64_t calls = 0;

  // Whether input j reads the buffer of its bind_zeros that nothing else holds (the buffer's
  // owner and the input's tensor): the call may then write over it.
  bool only_holder_of_zeros(size_t j) const {
    if (!zeros[j]) return false;
    const std::shared_ptr<void>& buffer = zeros[j]->buffer;
    return buffer && next_inputs[j].tensor().raw_data() == buffer.get() && buffer.use_count() == 2;
  }

  // Input j's next value: zeros of its bind_zeros shape, in a new buffer.
  Status fresh_zeros(size_t j) {
    const TensorInfo& info = engine.inputs()[j];
    Zeros& z = *zeros[j];
    int64_t count = 1;
    for (int64_t d : z.shape) count *= d;
    const MemoryBudgetScope budget_scope(engine.memory());
    z.buffer = nullptr;  // the old one goes (and is credited) first
    next_inputs[j] = Value();
    z.buffer = allocate_zeroed_buffer(static_cast<size_t>(count) * dtype_size(info.dtype));
    if (!z.buffer) return allocation_failure("cannot allocate zeros of shape " + shape_to_string(z.shape) + " for input '" + info.name + "'");
    next_inputs[j] = Tensor::shared_view(info.dtype, z.shape, z.buffer);
    return Status::ok();
  }

  Result<size_t> input_index(const std::string& name) const { return index_of(engine.inputs(), name, "input"); }
  Result<size_t> output_index(const std::string& name) const { return index_of(engine.outputs(), name, "output"); }

  static Result<size_t> index_of(const std::vector<TensorInfo>& infos, const std::string& name, const char* what) {
    std::string known;
    for (size_t i = 0; i < infos.size(); ++i) {
      if (infos[i].name == name) return i;
      known += (known.empty() ? "'" : ", '") + infos[i].name + "'";
    }
    return invalid_argument("'" + name + "' is not an " + what + " of the model; its " + what + "s: " + known);
  }

  // Checks the inputs of the next call (as Session::run does) and builds the stream's plan for
  // their shapes when it has none for them.
  Status prepare(const runtime::ShapeSignature& shapes) {
    std::map<std::string, Value> named;
    for (size_t j = 0; j < next_inputs.size(); ++j) named[engine.inputs()[j].name] = next_inputs[j];
    KILN_RETURN_IF_ERROR(runtime::bind_inputs(engine.graph(), named).status());
    for (size_t i = 0; i < bound_outputs.size(); ++i)
      for (size_t j = 0; j < bound.size(); ++j)
        if (bound_outputs[i].defined() && bound[j].defined() && overlap(bound_outputs[i], bound[j]))
          return invalid_argument("the buffer bound to output '" + engine.outputs()[i].name +
                                  "' shares memory with the tensor bound to input '" + engine.inputs()[j].name +
                                  "' (carry the output into the input instead)");
    KILN_RETURN_IF_ERROR(engine.check_stream_inputs(named));
    if (!plan || shapes != planned) {
      plan = plans.find(shapes);
      if (!plan) {
        KILN_ASSIGN_OR_RETURN(plan, engine.stream_plan(shapes));
        plans.add(shapes, plan);
      }
      planned = shapes;
      updates = runtime::inputs_updated_in_place(*plan);
      in_place.assign(engine.outputs().size(), false);
      for (size_t i = 0; i < plan->output_slots.size(); ++i) {
        const runtime::ValueSlot& slot = plan->slots[static_cast<size_t>(plan->output_slots[i])];
        in_place[i] = slot.kind == runtime::ValueSlot::Kind::kOutput && slot.io_index == i &&
                      slot.value->type.has_static_shape() && slot.dtype != DType::kString;
      }
    }
    bindings_changed = false;
    return Status::ok();
  }

  Status call(const RunOptions& options) {
    KILN_ASSIGN_OR_RETURN(const ops::RunLimits limits, engine.begin_run(options));
    const MemoryBudgetScope budget_scope(engine.memory());
    bool shapes_changed = bindings_changed || !plan;
    for (size_t j = 0; j < next_inputs.size(); ++j) {
      if (!next_inputs[j].is_tensor() || !next_inputs[j].tensor().defined())
        return invalid_argument("input '" + engine.inputs()[j].name + "' is neither bound nor carried into" +
                                (carried_from[j] >= 0 ? " with an initial state bound" : "") +
                                " (Stream::bind_input, Stream::carry)");
      shapes_changed = shapes_changed || next_inputs[j].tensor().shape() != planned[j];
    }
    if (shapes_changed) {
      runtime::ShapeSignature shapes;
      for (const Value& v : next_inputs) shapes.push_back(v.tensor().shape());
      KILN_RETURN_IF_ERROR(prepare(shapes));
    }
    for (size_t i = 0; i < targets.size(); ++i) {
      last[i] = targets[i] = Tensor();  // the stream's own references would keep its buffers busy
      const int carried = carried_into[i];
      if (bound_outputs[i].defined()) {
        targets[i] = bound_outputs[i];
      } else if (carried >= 0 && updates[i] == carried && in_place[i] &&
                 (buffers[i].only_holder(next_inputs[static_cast<size_t>(carried)].tensor()) ||
                  only_holder_of_zeros(static_cast<size_t>(carried)))) {
        targets[i] = next_inputs[static_cast<size_t>(carried)].tensor();  // the update writes over its input
      } else if (in_place[i]) {
        const runtime::ValueSlot& slot = plan->slots[static_cast<size_t>(plan->output_slots[i])];
        targets[i] = buffers[i].take(slot.dtype, slot.shape);
        if (!targets[i].defined())
          return allocation_failure("cannot allocate output '" + engine.outputs()[i].name + "' of shape " +
                                    shape_to_string(slot.shape));
      } else {
        targets[i] = Tensor();
      }
    }
    timings.clear();
    const auto start = std::chrono::steady_clock::now();
    Result<std::vector<Value>> results = executor.run(*plan, next_inputs, &timings, {}, &limits, &targets);
    const double ms = ms_since(start);
    if (!results.is_ok()) {
      const std::string context = "stream call " + std::to_string(calls + 1) + (options.tag.empty() ? "" : " '" + options.tag + "'");
      return annotate_allocation_failure(results.status(), *engine.memory()).with_context(context);
    }
    for (size_t i = 0; i < last.size(); ++i) {
      last[i] = std::move(results.value()[i].tensor());
      if (carried_into[i] >= 0) next_inputs[static_cast<size_t>(carried_into[i])] = last[i];
    }
    ++calls;
    engine.record_run(true, ms, timings, plan);
    return Status::ok();
  }
};

Result<std::unique_ptr<Stream>> Stream::open(runtime::Engine& engine) {
  for (const auto* infos : {&engine.inputs(), &engine.outputs()})
    for (const TensorInfo& info : *infos)
      if (info.kind != Value::Kind::kTensor)
        return invalid_argument("'" + info.name + "' is a sequence or optional; a stream binds tensors only (use run_values)");
  return catching_bad_alloc("opening a stream", [&]() -> Result<std::unique_ptr<Stream>> {
    auto stream = std::unique_ptr<Stream>(new Stream(std::make_unique<Stream::Impl>(engine)));
    engine.count_stream();
    return stream;
  });
}

Stream::Stream(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Stream::~Stream() = default;

Status Stream::bind_input(const std::string& name, Tensor tensor) {
  KILN_ASSIGN_OR_RETURN(const size_t j, impl_->input_index(name));
  const TensorInfo& info = impl_->engine.inputs()[j];
  if (tensor.defined() && tensor.dtype() != info.dtype)
    return invalid_argument("input '" + name + "' is " + dtype_name(info.dtype) + ", the tensor to bind " + dtype_name(tensor.dtype()));
  return catching_bad_alloc("binding an input", [&] {
    Tensor bound = tensor;  // the copy that may fail, before anything changes
    impl_->zeros[j].reset();
    impl_->bound[j] = std::move(bound);
    impl_->next_inputs[j] = std::move(tensor);
    impl_->bindings_changed = true;  // checked in full (rank, dims) by the next call
    return Status::ok();
  });
}

Status Stream::bind_zeros(const std::string& name, const std::vector<int64_t>& shape) {
  KILN_ASSIGN_OR_RETURN(const size_t j, impl_->input_index(name));
  const TensorInfo& info = impl_->engine.inputs()[j];
  if (info.dtype == DType::kString) return invalid_argument("input '" + name + "' is a string tensor: it has no zeros");
  for (int64_t d : shape)
    if (d < 0) return invalid_argument("input '" + name + "': zeros of shape " + shape_to_string(shape) + ", a negative dim");
  return catching_bad_alloc("binding zeros to an input", [&] {
    impl_->bound[j] = Tensor();
    impl_->zeros[j] = Impl::Zeros{shape, nullptr};
    impl_->bindings_changed = true;  // checked in full (rank, dims) by the next call
    return impl_->fresh_zeros(j);
  });
}

Status Stream::bind_output(const std::string& name, Tensor buffer) {
  KILN_ASSIGN_OR_RETURN(const size_t i, impl_->output_index(name));
  const TensorInfo& info = impl_->engine.outputs()[i];
  if (impl_->carried_into[i] >= 0)
    return invalid_argument("output '" + name + "' is carried into input '" +
                            impl_->engine.inputs()[static_cast<size_t>(impl_->carried_into[i])].name +
                            "': the stream keeps its buffers (read it with output())");
  if (buffer.defined() && (buffer.dtype() != info.dtype || buffer.dtype() == DType::kString))
    return invalid_argument("output '" + name + "' is " + dtype_name(info.dtype) + ", the buffer to bind " +
                            dtype_name(buffer.dtype()) + (buffer.dtype() == DType::kString ? " (string outputs cannot be bound)" : ""));
  impl_->bound_outputs[i] = std::move(buffer);
  impl_->bindings_changed = true;
  return Status::ok();
}

Status Stream::carry(const std::string& output, const std::string& input) {
  KILN_ASSIGN_OR_RETURN(const size_t i, impl_->output_index(output));
  KILN_ASSIGN_OR_RETURN(const size_t j, impl_->input_index(input));
  const TensorInfo& out = impl_->engine.outputs()[i];
  const TensorInfo& in = impl_->engine.inputs()[j];
  if (out.dtype != in.dtype)
    return invalid_argument("cannot carry output '" + output + "' (" + dtype_name(out.dtype) + ") into input '" + input +
                            "' (" + dtype_name(in.dtype) + ")");
  if (impl_->carried_from[j] >= 0 && impl_->carried_from[j] != static_cast<int>(i))
    return invalid_argument("input '" + input + "' is carried into from output '" +
                            impl_->engine.outputs()[static_cast<size_t>(impl_->carried_from[j])].name + "' already");
  if (impl_->carried_into[i] >= 0 && impl_->carried_into[i] != static_cast<int>(j))
    return invalid_argument("output '" + output + "' is carried into input '" +
                            impl_->engine.inputs()[static_cast<size_t>(impl_->carried_into[i])].name + "' already");
  if (impl_->bound_outputs[i].defined())
    return invalid_argument("output '" + output + "' is bound to a buffer; unbind it (bind_output with an undefined tensor) to carry it");
  impl_->carried_into[i] = static_cast<int>(j);
  impl_->carried_from[j] = static_cast<int>(i);
  return Status::ok();
}

void Stream::reset() {
  for (size_t j = 0; j < impl_->next_inputs.size(); ++j) {
    if (impl_->carried_from[j] < 0) continue;
    if (!impl_->zeros[j]) {
      impl_->next_inputs[j] = impl_->bound[j];
      continue;
    }
    // New zeros; where the memory budget refuses them the input is left unbound, which the next
    // call names.
    (void)catching_bad_alloc("resetting a stream", [&] { return impl_->fresh_zeros(j); });
  }
}

namespace {
const RunOptions& default_options() {
  static const RunOptions options;
  return options;
}
}  // namespace

Status Stream::run() { return run(default_options()); }
Status Stream::run(const RunOptions& options) {
  return catching_bad_alloc("running a stream", [&] { return impl_->call(options); });
}

Result<Tensor> Stream::output(const std::string& name) const {
  KILN_ASSIGN_OR_RETURN(const size_t i, impl_->output_index(name));
  if (!impl_->last[i].defined())
    return invalid_argument("output '" + name + "': " + (impl_->calls == 0 ? "the stream has not run yet" : "the last call failed"));
  return impl_->last[i];
}

int64_t Stream::calls() const { return impl_->calls; }

}  // namespace kiln
