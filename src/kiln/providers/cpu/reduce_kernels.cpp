// cpu kernels for the Reduce* ops and ArgMax/ArgMin over float32. A reduction's output is the
// input's shape with the reduced dims set to 1 (keepdims only changes how it is named, not its
// bytes); the input is viewed as [outer, count, inner] (ops/reduction_axes.h), after a oneDNN
// reorder that puts the reduced dims innermost when a kept dim lies between them. oneDNN's
// reduction primitive folds innermost sums, means and products (ReduceLogSum: a sum with a log
// post-op); the rest (a channel reduction of NCHW, the L1/L2/sum-of-squares norms, Max and Min,
// which must let a NaN through as the reference does, and LogSumExp, which oneDNN has no safe form
// of) fold in Kiln's loops (middle_reduction.h), ArgMax/ArgMin in arg_extreme.h's. In jit mode,
// innermost sums, means, products and norms are generated instead (generated_kernels.cpp). A
// reduction with nothing to fold (an empty tensor, or no dim above 1 reduced) runs the reference
// kernel: those are copies or element-wise edge cases. Axes the graph computes are read on each run,
// the kernel built for them.
#include <map>
#include <optional>

#include "kiln/ops/channels_last.h"
#include "kiln/ops/op_helpers.h"
#include "kiln/ops/reduction_axes.h"
#include "kiln/providers/cpu/arg_extreme.h"
#include "kiln/providers/cpu/cpu_kernels.h"
#include "kiln/providers/cpu/middle_reduction.h"
#include "kiln/providers/cpu/onednn_support.h"
#include "kiln/providers/cpu/run_time_shapes.h"

namespace kiln::providers::cpu {
namespace {

using dnnl::memory;

constexpr int64_t kLibraryRowLength = 1024;

// How each op folds in Kiln's loops, and the oneDNN algorithm for the ops oneDNN folds fast.
struct Reduction {
  MiddleFold fold = MiddleFold::kSum;
  MiddleFinish finish = MiddleFinish::kNone;
  std::optional<dnnl::algorithm> library;
};

const std::map<std::string, Reduction>& reductions() {
  using alg = dnnl::algorithm;
  static const std::map<std::string, Reduction> table = {
      {"ReduceSum", {MiddleFold::kSum, MiddleFinish::kNone, alg::reduction_sum}},
      {"ReduceMean", {MiddleFold::kSum, MiddleFinish::kMean, alg::reduction_mean}},
      {"ReduceMax", {MiddleFold::kMax, MiddleFinish::kNone, std::nullopt}},  // NaN let through, as the reference does
      {"ReduceMin", {MiddleFold::kMin, MiddleFinish::kNone, std::nullopt}},
      {"ReduceProd", {MiddleFold::kProduct, MiddleFinish::kNone, alg::reduction_mul}},
      {"ReduceL1", {MiddleFold::kAbsoluteSum, MiddleFinish::kNone, std::nullopt}},
      {"ReduceL2", {MiddleFold::kSquareSum, MiddleFinish::kSquareRoot, std::nullopt}},
      {"ReduceSumSquare", {MiddleFold::kSquareSum, MiddleFinish::kNone, std::nullopt}},
      {"ReduceLogSum", {MiddleFold::kSum, MiddleFinish::kLog, alg::reduction_sum}},  // with a log post-op
      {"ReduceLogSumExp", {MiddleFold::kLogSumExp, MiddleFinish::kNone, std::nullopt}},
  };
  return table;
}

Capability reduce_supports(const ir::Node& node) {
  Capability c = float_tensors(node, {0});
  if (!c.supported) return c;
  if (node.inputs[0]->type.shape->rank() == 0) return Capability::no(node.op_type + " of a scalar");
  return Capability::yes();
}

// The order that puts the kept dims first and the reduced ones last, each in their own order.
std::vector<int64_t> reduced_last(const std::vector<bool>& reduced) {
  std::vector<int64_t> order;
  for (bool last : {false, true})
    for (size_t d = 0; d < reduced.size(); ++d)
      if (reduced[d] == last) order.push_back(static_cast<int64_t>(d));
  return order;
}

// The input as [outer, count, inner] (dense, possibly after a relayout through the calling
// thread's run scratch), folded by oneDNN when the reduction is innermost and oneDNN folds it
// fast, else by Kiln's loops.
struct ReduceState {
  MiddleReduction view;
  std::optional<dnnl::reorder> relayout;  // to [kept dims, reduced dims]
  memory::desc given, relaid;
  std::optional<dnnl::reduction> library;  // [outer, count] -> [outer, 1]
  memory::desc rows, sums;
  dnnl::stream stream{cpu_engine()};
  PrimitiveArgs relayout_args, library_args;  // of the last run
};

Status run_reduce(ReduceState& s, ops::KernelContext& ctx) {
  const float* data = ctx.input(0)->data<float>();
  if (s.relayout) {
    float* scratch = run_scratch_floats(s.relaid.get_size() / sizeof(float));
    s.relayout_args.set(DNNL_ARG_FROM, s.given, *ctx.input(0));
    s.relayout_args.set(DNNL_ARG_TO, s.relaid, scratch);
    s.relayout->execute(s.stream, s.relayout_args.map());
    s.stream.wait();
    data = scratch;
  }
  if (!s.library) {
    reduce_middle(s.view, data, ctx.output(0)->data<float>());
    return Status::ok();
  }
  s.library_args.set(DNNL_ARG_SRC, s.rows, data);
  s.library_args.set(DNNL_ARG_DST, s.sums, *ctx.output(0));
  s.library->execute(s.stream, s.library_args.map());
  s.stream.wait();
  return Status::ok();
}

// Plans the relayout that puts the reduced dims innermost.
void plan_relayout(ReduceState& s, const std::vector<int64_t>& x, const std::vector<bool>& reduced, const Reduction& r) {
  const std::vector<int64_t> order = reduced_last(reduced);
  const std::vector<int64_t> dims = ops::permuted(x, order);
  s.given = strided_desc(dims, ops::permuted(ops::contiguous_strides(x), order));
  s.relaid = row_major_desc(dims);
  s.relayout = dnnl::reorder(dnnl::reorder::primitive_desc(cpu_engine(), s.given, cpu_engine(), s.relaid));
  int64_t count = 1;
  for (size_t d = 0; d < x.size(); ++d)
    if (reduced[d]) count *= x[d];
  s.view = {r.fold, r.finish, shape_element_count(x) / count, count, 1};
}

void plan_library_fold(ReduceState& s, const KernelSite& site, const Reduction& r) {
  s.rows = row_major_desc({s.view.outer, s.view.count});
  s.sums = row_major_desc({s.view.outer, 1});
  dnnl::primitive_attr attr;
  if (site.node.op_type == "ReduceLogSum") {
    dnnl::post_ops log;
    log.append_eltwise(1.0f, dnnl::algorithm::eltwise_log, 0.0f, 0.0f);
    attr.set_post_ops(log);
  }
  const dnnl::reduction::desc desc(*r.library, s.rows, s.sums, 0.0f, 0.0f);
  s.library = checked(site, dnnl::reduction(dnnl::reduction::primitive_desc(desc, attr, cpu_engine())));
}

Result<ops::Kernel> build_reduce(const ir::Node& node, KernelBuild& build) {
  // Axes the graph computes: the kernel is built on each run for its axes (run_time_shapes.h).
  if (ops::reduction_axes_from_input(node) && node.input(1) && !constant_input(node, 1))
    return run_time_shaped_kernel(node, [](const ir::Node& typed, KernelBuild& run_build) { return build_reduce(typed, run_build); });
  const std::vector<int64_t> x = input_dims(node, 0);
  KILN_ASSIGN_OR_RETURN(ops::ReductionAxes spec,
                        ops::reduction_axes(node, node.input(1) != nullptr, constant_input(node, 1)));
  if (spec.noop || shape_element_count(x) == 0) return reference_kernel(node);
  Result<std::vector<bool>> reduced = ops::reduced_dims(*spec.axes, static_cast<int64_t>(x.size()));
  if (!reduced.is_ok()) return reduced.status().with_context(node.describe());
  const std::optional<ops::ReductionView> view = ops::reduction_view(x, reduced.value());
  if (view && view->count == 1) return reference_kernel(node);
  const Reduction r = reductions().at(node.op_type);
  auto state = std::make_shared<ReduceState>();
  if (view) state->view = {r.fold, r.finish, view->outer, view->count, view->inner};
  else plan_relayout(*state, x, reduced.value(), r);
  // oneDNN 2.6's reduction is slow on many short rows (a global average over 7x7 maps of 1024
  // channels: 150 us, against 5 in Kiln's loop): it folds only rows of kLibraryRowLength or more.
  if (state->view.inner == 1 && r.library && state->view.count >= kLibraryRowLength) plan_library_fold(*state, {node, build}, r);
  return ops::Kernel([state](ops::KernelContext& ctx) {
    return guard(ctx.node(), [&] { return run_reduce(*state, ctx); });
  });
}

Capability arg_supports(const ir::Node& node) {
  const ir::Value* x = node.input(0);
  if (!x || !x->type.is_tensor() || x->type.dtype != DType::kFloat)
    return Capability::no(node.op_type + " of a tensor that is not float32");
  if (!x->type.shape || x->type.shape->rank() == 0) return Capability::no(node.op_type + " of a scalar or of unknown rank");
  return Capability::yes();
}

Result<ops::Kernel> build_arg(const ir::Node& node) {
  const std::vector<int64_t> x = input_dims(node, 0);
  if (shape_element_count(x) == 0) return reference_kernel(node);
  Result<int64_t> axis = ops::normalize_axis(node.attr_int("axis", 0), static_cast<int64_t>(x.size()));
  if (!axis.is_ok()) return axis.status().with_context(node.describe());
  std::vector<bool> along(x.size(), false);
  along[static_cast<size_t>(axis.value())] = true;
  const ops::ReductionView view = *ops::reduction_view(x, along);  // one dim is always one run
  const ArgExtreme a{node.op_type == "ArgMax", node.attr_int("select_last_index", 0) != 0, view.outer, view.count, view.inner};
  return ops::Kernel([a](ops::KernelContext& ctx) {
    arg_extreme(a, ctx.input(0)->data<float>(), ctx.output(0)->data<int64_t>());
    return Status::ok();
  });
}

}  // namespace

void add_reduce_kernels(CpuKernelTable& table) {
  for (const auto& entry : reductions()) table[entry.first] = generated_or(CpuKernel{reduce_supports, build_reduce});
  for (const char* op : {"ArgMax", "ArgMin"}) table[op] = node_only(arg_supports, build_arg);
}

}  // namespace kiln::providers::cpu
