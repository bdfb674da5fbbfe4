// oneDNN support for the cpu provider: engine, descriptors, one-time reorders, error translation.
#include "kiln/providers/cpu/onednn_support.h"

#include <cstring>
#include <new>
#include <sstream>

#include "kiln/ir/buffer.h"
#include "kiln/ops/numeric_precision.h"
#include "kiln/providers/cpu/onednn_target.h"
#include "kiln/providers/cpu/product_precision.h"

namespace kiln::providers::cpu {

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::memory::desc row_major_desc(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(dims[i], 1);
  return strided_desc(dims, strides);
}

dnnl::memory::desc strided_desc(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides) {
  return dnnl::memory::desc(dnnl::memory::dims(dims.begin(), dims.end()), dnnl::memory::data_type::f32,
                            dnnl::memory::dims(strides.begin(), strides.end()));
}

namespace {

// A plain tensor's channels-last strides over channels-first dims: C innermost, then the spatial dims.
dnnl::memory::desc channels_last_desc(const std::vector<int64_t>& logical) {
  const size_t rank = logical.size();
  std::vector<int64_t> strides(rank);
  int64_t stride = 1;
  strides[1] = stride;
  stride *= logical[1];
  for (size_t d = rank; d-- > 2;) {
    strides[d] = stride;
    stride *= logical[d];
  }
  strides[0] = stride;
  return strided_desc(logical, strides);
}

std::optional<dnnl::memory::format_tag> blocked_tag(size_t rank, int64_t block) {
  using tag = dnnl::memory::format_tag;
  if (block != 8 && block != 16) return std::nullopt;
  switch (rank) {
    case 3: return block == 8 ? tag::nCw8c : tag::nCw16c;
    case 4: return block == 8 ? tag::nChw8c : tag::nChw16c;
    case 5: return block == 8 ? tag::nCdhw8c : tag::nCdhw16c;
    default: return std::nullopt;
  }
}

}  // namespace

Result<dnnl::memory::desc> activation_desc(const std::vector<int64_t>& stored, ops::ActivationLayout layout) {
  const std::vector<int64_t> logical = ops::channels_first_dims(stored, layout);
  switch (layout.kind) {
    case ops::ActivationLayout::Kind::kChannelsFirst: return row_major_desc(logical);
    case ops::ActivationLayout::Kind::kChannelsLast: return channels_last_desc(logical);
    case ops::ActivationLayout::Kind::kBlocked: break;
  }
  const std::optional<dnnl::memory::format_tag> tag = blocked_tag(logical.size(), layout.block);
  if (!tag) return unsupported_target(layout.name() + " tensors of rank " + std::to_string(logical.size()) + " (cpu has ranks 3 to 5)");
  return dnnl::memory::desc(dnnl::memory::dims(logical.begin(), logical.end()), dnnl::memory::data_type::f32, *tag);
}

dnnl::memory wrap(const dnnl::memory::desc& desc, const Tensor& t) {
  return dnnl::memory(desc, cpu_engine(), const_cast<void*>(t.raw_data()));
}

void PrimitiveArgs::set(int arg, const dnnl::memory::desc& desc, const void* data) {
  auto it = args_.find(arg);
  if (it == args_.end()) {
    args_.emplace(arg, dnnl::memory(desc, cpu_engine(), const_cast<void*>(data)));
    return;
  }
  if (it->second.get_data_handle() != data) it->second.set_data_handle(const_cast<void*>(data));
}

namespace {

void reorder_into(dnnl::memory source, dnnl::memory target) {
  dnnl::stream stream(cpu_engine());
  dnnl::reorder(source, target).execute(stream, source, target);
  stream.wait();
}

// `source` when oneDNN reorders it into `wanted` directly, else its copy in the plain layout
// `plain`: every layout reorders to and from the plain one, but not every pair of packed layouts
// into each other (Winograd-domain weights are made only from plain oihw or hwio weights, so a
// batch-2 plan choosing Winograd could not repack what a batch-1 plan had packed for the direct
// method: "could not create a primitive descriptor for a reorder primitive").
dnnl::memory reorderable_into(const dnnl::memory& source, const dnnl::memory::desc& plain, const dnnl::memory::desc& wanted) {
  try {
    (void)dnnl::reorder::primitive_desc(cpu_engine(), source.get_desc(), cpu_engine(), wanted);
    return source;
  } catch (const dnnl::error&) {
    dnnl::memory copy(plain, cpu_engine());
    reorder_into(source, copy);
    return copy;
  }
}

}  // namespace

int64_t right_padding(int64_t in, int64_t out, int64_t kernel, int64_t stride, int64_t dilation, int64_t left) {
  const int64_t extent = (kernel - 1) * dilation + 1;
  const int64_t pad = (out - 1) * stride + extent - in - left;
  return pad < 0 && pad + stride - 1 >= 0 ? 0 : pad;
}

dnnl::memory reorder_to(dnnl::memory source, const dnnl::memory::desc& wanted) {
  dnnl::memory target(wanted, cpu_engine());
  reorder_into(source, target);
  return target;
}

std::optional<std::string> layout_name(const dnnl::memory::desc& desc) {
  const dnnl_memory_desc_t& d = desc.data;
  if (d.format_kind != dnnl_blocked && d.format_kind != dnnl_format_kind_wino) return std::nullopt;
  std::ostringstream name;
  const auto dims = [&](const char* what, const dnnl_dim_t* values, int n) {
    name << what;
    for (int i = 0; i < n; ++i) name << (i ? "," : "") << values[i];
  };
  name << "dt" << d.data_type;
  dims(" dims ", d.dims, d.ndims);
  dims(" padded ", d.padded_dims, d.ndims);
  dims(" offsets ", d.padded_offsets, d.ndims);
  name << " offset0 " << d.offset0;
  if (d.format_kind == dnnl_blocked) {
    const dnnl_blocking_desc_t& b = d.format_desc.blocking;
    dims(" strides ", b.strides, d.ndims);
    dims(" blocks ", b.inner_blks, b.inner_nblks);
    dims(" of ", b.inner_idxs, b.inner_nblks);
  } else {  // Winograd-domain weights
    const dnnl_wino_desc_t& w = d.format_desc.wino_desc;
    name << " wino " << w.wino_format << " r " << w.r << " alpha " << w.alpha << " ic " << w.ic << " oc " << w.oc << " blocks "
         << w.ic_block << "," << w.oc_block << "," << w.ic2_block << "," << w.oc2_block << " scale " << w.adj_scale << " size "
         << w.size;
  }
  name << " extra " << d.extra.flags << "," << d.extra.compensation_mask << "," << d.extra.scale_adjust << ","
       << d.extra.asymm_compensation_mask;
  return name.str();
}

PrimitiveWeights::PrimitiveWeights(const ir::Node& node, size_t input, const dnnl::memory::desc& given,
                                   const dnnl::primitive_desc_base& pd, KernelBuild& build, const std::optional<Quantization>& quantization)
    : input_(input), given_(given), wanted_(pd.weights_desc()) {
  const Tensor* constant = constant_input(node, input);
  if (!constant) return;
  build.evidence.require_features(implementation_features(pd.impl_info_str()));
  const std::string& value = node.input(input)->name;
  const std::optional<std::string> layout = layout_name(wanted_);
  const PackedConstant* found = layout ? build.find_packed(value, *layout, constant->raw_data()) : nullptr;
  if (found && found->bytes == wanted_.get_size()) {
    bind(found->data);
    // An artifact's packed constant comes without oneDNN's description of its layout: the kernel
    // that reads it gives one, so that a later plan (another batch) can reorder from it.
    PackedConstant described = *found;
    if (!described.descriptor.has_value()) described.descriptor = wanted_;
    build.evidence.record_packed_reader(node.name, described);
    return;
  }
  if (build.evidence.packed_only(value)) {
    // No plain copy: reorder from a packed one, else check_packed_only_readers names this node.
    const PackedConstant* source = build.packed_with_descriptor(value);
    if (!source) return;
    const auto& source_desc = std::any_cast<const dnnl::memory::desc&>(source->descriptor);
    pack(reorderable_into(dnnl::memory(source_desc, cpu_engine(), const_cast<void*>(source->data.get())), given_, wanted_));
  } else if (wanted_ == given_) {
    // The kernel reads the weights as they are stored (oneDNN's AVX2 gemm): bound, not copied.
    auto keep = std::make_shared<const Tensor>(*constant);
    bind(std::shared_ptr<const void>(keep, keep->raw_data()));
    return;
  } else {
    if (quantization) {
      // oneDNN's reorders take per-channel scales only into layouts without compensation: the
      // constant is quantized here, then packed.
      std::vector<int8_t> quantized = ops::quantize_symmetric_int8(*constant, quantization->channel_axis, quantization->scales);
      pack(dnnl::memory(with_data_type(given, dnnl::memory::data_type::s8), cpu_engine(), quantized.data()));
    } else {
      pack(wrap(given, *constant));
    }
    if (layout && build.context.may_pack_in_place(value) && wanted_.get_size() == constant->byte_size()) {
      std::memcpy(const_cast<void*>(constant->raw_data()), storage_.get(), constant->byte_size());
      auto keep = std::make_shared<const Tensor>(*constant);  // the initializer's storage now holds the packed bytes
      bind(std::shared_ptr<const void>(keep, keep->raw_data()));
      build.record_packed_in_place(node.name, {value, *layout, storage_, wanted_.get_size(), constant->raw_data(), wanted_});
      return;
    }
  }
  if (layout) build.evidence.record_packed_reader(node.name, {value, *layout, storage_, wanted_.get_size(), constant->raw_data(), {}});
}

void PrimitiveWeights::bind(std::shared_ptr<const void> storage) {
  storage_ = std::move(storage);
  packed_ = dnnl::memory(wanted_, cpu_engine(), const_cast<void*>(storage_.get()));
}

void PrimitiveWeights::pack(const dnnl::memory& source) {
  std::shared_ptr<void> storage = allocate_buffer(wanted_.get_size());
  if (!storage) throw std::bad_alloc();
  bind(storage);
  reorder_into(source, packed_);
}

dnnl::memory PrimitiveWeights::for_run(const ops::KernelContext& ctx) const {
  if (storage_) return packed_;
  const dnnl::memory given = wrap(given_, *ctx.input(input_));
  return given_ == wanted_ ? given : reorder_to(given, wanted_);
}

float* run_scratch_floats(size_t count, ScratchSlot slot) {
  struct Buffer {
    std::shared_ptr<void> data;
    size_t capacity = 0;
  };
  thread_local Buffer buffers[2];
  Buffer& b = buffers[slot == ScratchSlot::kFirst ? 0 : 1];
  if (count > b.capacity) {
    b.data = allocate_buffer(count * sizeof(float));
    if (!b.data) {
      b.capacity = 0;
      throw std::bad_alloc();
    }
    b.capacity = count;
  }
  return static_cast<float*>(b.data.get());
}

const Tensor* constant_input(const ir::Node& node, size_t i) {
  const ir::Value* v = node.input(i);
  return v && v->initializer ? &*v->initializer : nullptr;
}

std::vector<int64_t> input_dims(const ir::Node& node, size_t i) { return node.inputs[i]->type.shape->static_dims(); }
std::vector<int64_t> output_dims(const ir::Node& node, size_t i) { return node.outputs[i]->type.shape->static_dims(); }

void check_implementation(const KernelSite& site, const dnnl::primitive& primitive) {
  const std::string impl = implementation_of(primitive);
  // Data movement (reorders, concatenations) has no vector kernel to prefer over its reference one.
  const dnnl::primitive::kind kind = primitive.get_kind();
  const bool moves_data = kind == dnnl::primitive::kind::reorder || kind == dnnl::primitive::kind::concat;
  if (!moves_data && is_reference_implementation(impl))
    throw ReferenceImplementation("oneDNN offers only its reference implementation '" + impl +
                                  "' here (scalar code, far slower than a vector kernel); the cpu provider does not plan it");
  site.build.evidence.record_implementation(site.node.name, impl);
}

Status guard(const ir::Node& node, const std::function<Status()>& fn) {
  try {
    return fn();
  } catch (const ReferenceImplementation& e) {
    return unsupported_target(node.describe() + ": " + e.what());
  } catch (const dnnl::error& e) {
    return Status(StatusCode::kBackendFailure, node.describe() + ": oneDNN: " + e.what());
  } catch (const std::bad_alloc&) {
    return allocation_failure(node.describe() + ": out of memory in a oneDNN kernel");
  }
}

ops::Kernel primitive_kernel(const KernelSite& site, dnnl::primitive primitive, ArgBinder bind) {
  check_implementation(site, primitive);
  auto stream = std::make_shared<dnnl::stream>(cpu_engine());
  auto args = std::make_shared<PrimitiveArgs>();
  return [primitive, bind = std::move(bind), stream, args](ops::KernelContext& ctx) {
    return guard(ctx.node(), [&] {
      bind(ctx, *args);
      primitive.execute(*stream, args->map());
      stream->wait();
      return Status::ok();
    });
  };
}

}  // namespace kiln::providers::cpu
