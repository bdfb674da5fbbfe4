// What every oneDNN-backed kernel of the cpu provider shares: the CPU engine, memory descriptors
// for Kiln's row-major tensors, weights prepared once when the kernel is built, and oneDNN errors
// turned into BackendFailure statuses naming the node.
#pragma once

#include <dnnl.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ops/activation_layout.h"
#include "kiln/ops/op_registry.h"
#include "kiln/providers/kernel_build.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::providers::cpu {

// The process's CPU engine (oneDNN's OpenMP runtime: threads follow omp_set_num_threads).
const dnnl::engine& cpu_engine();

// f32 descriptor of a dense row-major tensor of these dims.
dnnl::memory::desc row_major_desc(const std::vector<int64_t>& dims);
// The same with explicit strides (a transposed view, a broadcast operand).
dnnl::memory::desc strided_desc(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides);

// Descriptor of an activation tensor stored in `layout` (Kiln's stored dims, activation_layout.h),
// described to oneDNN over its channels-first dims: channels-last strides, or the blocked format
// tags nCw/nChw/nCdhw 8c/16c. UnsupportedTarget for a layout oneDNN has no tag for.
Result<dnnl::memory::desc> activation_desc(const std::vector<int64_t>& stored, ops::ActivationLayout layout);

// A oneDNN memory over a Kiln tensor's storage (no copy).
dnnl::memory wrap(const dnnl::memory::desc& desc, const Tensor& t);

// A primitive's argument map kept from run to run. Making a dnnl::memory allocates (its object,
// its storage, the handle's count) and an argument map allocates its nodes: for the small
// convolutions of a mobile network that was a tenth of a run. Each argument's memory is made once
// and, on later runs, re-pointed only when its tensor's storage moved (the arena usually gives a
// value the same address on every run). A kernel's runs come one at a time (a session runs its
// plan on one thread at a time), as its stream and scratchpad already require.
class PrimitiveArgs {
 public:
  // Argument `arg` reads or writes `data` as `desc` describes it (one kernel gives an argument
  // the same descriptor on every run: it is read only the first time).
  void set(int arg, const dnnl::memory::desc& desc, const void* data);
  void set(int arg, const dnnl::memory::desc& desc, const Tensor& t) { set(arg, desc, t.raw_data()); }
  // Argument `arg` is this memory (prepared weights, a scratchpad).
  void set(int arg, const dnnl::memory& memory) { args_[arg] = memory; }
  const std::unordered_map<int, dnnl::memory>& map() const { return args_; }

 private:
  std::unordered_map<int, dnnl::memory> args_;
};

// `source` copied into a new memory of layout `wanted`: weights given at run time reordered into
// the layout a primitive prefers.
dnnl::memory reorder_to(dnnl::memory source, const dnnl::memory::desc& wanted);

// The name of a oneDNN blocked or Winograd-domain weights layout (every field of the descriptor,
// so equal names mean equal layouts); nullopt for other formats (RNN-packed), which are not
// stored packed.
std::optional<std::string> layout_name(const dnnl::memory::desc& desc);

// A primitive's weights (node input `input`) in the layout the primitive `pd` wants. Constant
// weights are bound as they are when that is their own layout, or as `build` holds them packed in
// that layout (an artifact's, without a copy),
// else reordered once, when the kernel is built, into a buffer of their own (huge-page backed when
// large: ir/buffer.h) and recorded in `build`: from their plain bytes, or from another packed
// layout when they exist only packed; or in place when `build.context` allows it (plan_context.h); weights given at run time are bound as they are
// when the layouts agree, else reordered on each run. For constant weights the primitive's
// implementation, whose instruction set decides the layout, is recorded in `build`.
class PrimitiveWeights {
 public:
  PrimitiveWeights() = default;
  // `given` describes how the input's storage is read. `quantization`, for int8 weights: the
  // float32 constant is quantized (ops::quantize_symmetric_int8 along `channel_axis` of its storage)
  // before it is packed.
  struct Quantization {
    int64_t channel_axis = 0;
    std::vector<float> scales;
  };
  PrimitiveWeights(const ir::Node& node, size_t input, const dnnl::memory::desc& given,
                   const dnnl::primitive_desc_base& pd, KernelBuild& build, const std::optional<Quantization>& quantization = {});
  dnnl::memory for_run(const ops::KernelContext& ctx) const;

 private:
  // Binds `storage` (bytes in the wanted layout) as the weights of every run.
  void bind(std::shared_ptr<const void> storage);
  // Reorders `source` into a new buffer of the wanted layout, and binds it.
  void pack(const dnnl::memory& source);

  size_t input_ = 0;
  dnnl::memory::desc given_, wanted_;
  std::shared_ptr<const void> storage_;  // the packed constant weights, if any
  dnnl::memory packed_;
};

// Scratch memory for a kernel's temporaries during its call: one buffer per thread and slot, grown
// to the largest request and kept, so that kernels (and the variants of a session) do not each hold
// their own. A session runs its kernels one at a time on the calling thread; the contents do not
// survive the call. Two slots, for a temporary made from another (a quantized input, then its
// copy in another layout). 64-byte aligned; throws std::bad_alloc when it cannot grow (guard()
// reports it).
enum class ScratchSlot { kFirst, kSecond };
float* run_scratch_floats(size_t count, ScratchSlot slot = ScratchSlot::kFirst);

// The constant value of node input i (an initializer), or nullptr.
const Tensor* constant_input(const ir::Node& node, size_t i);

// oneDNN's right padding of a convolution axis for an output of `out` positions: the smallest
// non-negative value that gives the same output size (ONNX pads past the last window are not read).
int64_t right_padding(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation, int64_t left);

// Concrete dims of node input/output i (the plan specialises shapes before kernels are built).
std::vector<int64_t> input_dims(const ir::Node& node, size_t i);
std::vector<int64_t> output_dims(const ir::Node& node, size_t i);

// The node a kernel is made for and the plan's build it is made in: the implementation of each
// primitive the kernel creates (checked, primitive_kernel) is recorded there under the node's name.
struct KernelSite {
  const ir::Node& node;
  KernelBuild& build;
};

// What checked() throws for a reference implementation.
struct ReferenceImplementation : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Records `primitive`'s implementation at `site`; throws ReferenceImplementation for one of
// oneDNN's reference implementations of a computing primitive (not a reorder or concatenation),
// which the cpu provider never plans.
void check_implementation(const KernelSite& site, const dnnl::primitive& primitive);
template <class Primitive>
Primitive checked(const KernelSite& site, Primitive primitive) {
  check_implementation(site, primitive);
  return primitive;
}

// Runs fn, turning oneDNN and allocation exceptions into BackendFailure naming the node, and a
// reference implementation into UnsupportedTarget naming the node and the implementation.
Status guard(const ir::Node& node, const std::function<Status()>& fn);

// Points a primitive's arguments at the kernel's inputs and outputs of this run.
using ArgBinder = std::function<void(ops::KernelContext&, PrimitiveArgs&)>;

// A kernel that runs one prepared primitive (check_implementation'd at `site`) on the arguments
// `bind` gives (on this kernel's own stream, waiting for completion).
ops::Kernel primitive_kernel(const KernelSite& site, dnnl::primitive primitive, ArgBinder bind);

}  // namespace kiln::providers::cpu
