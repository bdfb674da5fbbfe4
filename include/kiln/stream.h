// kiln::Stream: one model called over and over (voice activity, wake words, speech, token by
// token), with its buffers bound once. Inputs are read in place from the caller's tensors, outputs
// are written into buffers bound to them, and a state output is handed to the next call's state
// input without a copy (carry). Made by Session::open_stream().
//
// A stream has its own working memory and kernels (built on its first call, and again when its
// input shapes change), so it runs alongside the session's other runs and streams; weights are
// shared. Each call is a request in the session's report.
// Thread-safety: one call at a time per stream (different streams may run at once). The session
// must outlive its streams.
// Ownership: a bound tensor that views the caller's memory (Tensor::view) must stay alive, and
// unchanged while run() runs, until it is bound again. A bound input is never written, also when
// it is the initial state of a carried input.
//
//   auto stream = session->open_stream().value();
//   stream->bind_input("x", Tensor::view(DType::kFloat, {1, 512}, chunk));  // refilled per call
//   stream->bind_input("h", zeros);                 // initial state
//   stream->carry("h_out", "h");                    // h_out of one call is h of the next
//   stream->bind_output("prob", Tensor::view(DType::kFloat, {1, 1}, &prob));
//   for (...) { fill(chunk); stream->run(); use(prob); }
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln {

namespace runtime {
class Engine;
}  // namespace runtime

struct RunOptions;
class Session;

class Stream {
 public:
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // Binds input `name` to `tensor` for every call until it is bound again: read in place. For a
  // carried input, `tensor` is its initial state, read by the first call and after reset(). An
  // undefined tensor unbinds it. InvalidArgument naming the input for an unknown name, a dtype
  // other than the model's (here), a rank or a concrete dim that disagrees with it (at the next call).
  Status bind_input(const std::string& name, Tensor tensor);
  // Binds input `name` to zeros of `shape` in a buffer of the stream's own (charged to the
  // session's memory budget; fresh pages, resident only where written). Its initial state costs no
  // copy: an output that updates it in place (a key/value cache) writes over it from the first
  // call. reset() starts it from zeros again. InvalidArgument as bind_input's; AllocationFailure
  // when the buffer cannot be had.
  Status bind_zeros(const std::string& name, const std::vector<int64_t>& shape);
  // Binds output `name` to `buffer`: every call writes the output into it (in place where the plan
  // gives the output memory of its own, else by a copy). The output must have the buffer's dtype
  // and shape at that call (InvalidArgument naming it otherwise). An undefined tensor unbinds it.
  // Unbound outputs go to buffers of the stream (output()). A carried output cannot be bound.
  Status bind_output(const std::string& name, Tensor buffer);
  // After each call, output `output` becomes the next call's input `input`, without a copy (the
  // stream alternates two buffers when the shape stays the same). An output that updates its input
  // (kiln.TensorScatter over it: a key/value cache) is written over the input's buffer instead,
  // while the stream alone holds that buffer (never an initial state the caller bound, but one of
  // bind_zeros; not after the caller kept the output). InvalidArgument for unknown names, different dtypes, an input carried into
  // already, or a bound output.
  Status carry(const std::string& output, const std::string& input);
  // The next call reads every carried input's initial state again (a new utterance, a new text).
  void reset();

  // One call of the model. Every input must be bound or carried (InvalidArgument naming the one
  // that is not); the errors of Session::run otherwise, and Cancelled when options.terminate is set.
  Status run();
  Status run(const RunOptions& options);

  // Output `name` of the last call: its bound buffer, or the stream's, whose contents the next call
  // may overwrite once the caller has dropped every copy of the returned tensor (a buffer still
  // referenced is never written again). NotFound for an unknown name, InvalidArgument before the
  // first call.
  Result<Tensor> output(const std::string& name) const;
  // Calls run so far.
  int64_t calls() const;

 private:
  friend class Session;
  struct Impl;
  explicit Stream(std::unique_ptr<Impl> impl);
  // A stream over a session's engine (Session::open_stream).
  static Result<std::unique_ptr<Stream>> open(runtime::Engine& engine);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln
