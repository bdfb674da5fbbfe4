// Kernels built on the run for shapes the plan did not know (see run_time_shapes.h).
#include "kiln/providers/cpu/run_time_shapes.h"

#include <map>
#include <memory>
#include <mutex>

#include "kiln/ops/evaluate.h"
#include "kiln/ops/op_helpers.h"

namespace kiln::providers::cpu {
namespace {

constexpr size_t kKernelsPerNode = 8;
constexpr int64_t kValuesPerInput = 16;

class RunTimeShapes {
 public:
  RunTimeShapes(const ir::Node& node, KernelBuilder build) : node_(node), build_(std::move(build)) {}

  Status run(ops::KernelContext& ctx) {
    std::vector<const Tensor*> inputs;
    std::vector<std::vector<int64_t>> shapes;  // each input's shape, then each value input's values
    for (size_t i = 0; i < node_.inputs.size(); ++i) {
      const Tensor* t = node_.inputs[i] ? ctx.input(i) : nullptr;
      inputs.push_back(t);
      shapes.push_back(t ? t->shape() : std::vector<int64_t>{});
    }
    for (size_t i = 0; i < inputs.size(); ++i)
      if (is_value_input(i, inputs[i])) {
        Result<std::vector<int64_t>> values = ops::read_int64s(*inputs[i], node_.inputs[i]->name);
        if (!values.is_ok()) return values.status();
        shapes.push_back(std::move(values).value());
      }
    const ops::Kernel* kernel = nullptr;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      auto it = kernels_.find(shapes);
      if (it == kernels_.end()) {
        KILN_ASSIGN_OR_RETURN(Specialized made, specialize(inputs));
        if (kernels_.size() >= kKernelsPerNode) kernels_.erase(kernels_.begin());
        it = kernels_.emplace(shapes, std::move(made)).first;
      }
      kernel = &it->second.kernel;
    }
    return (*kernel)(ctx);
  }

 private:
  // A small integer input computed by the graph (axes, pads, sizes): the kernel is built with its
  // values as a constant, as for a model that gives them as an initializer.
  bool is_value_input(size_t i, const Tensor* t) const {
    const ir::Value* v = node_.inputs[i];
    return t && v && !v->is_constant() && (t->dtype() == DType::kInt64 || t->dtype() == DType::kInt32) && t->rank() <= 1 &&
           t->element_count() <= kValuesPerInput;
  }

  struct Specialized {
    std::unique_ptr<ir::Graph> graph;  // holds the typed copy of the node the kernel was built for
    ops::Kernel kernel;
  };

  // A copy of the node whose inputs have the run's types (constants stay constants) and whose
  // outputs have what the op's rule gives for them, and its kernel.
  Result<Specialized> specialize(const std::vector<const Tensor*>& inputs) const {
    Specialized s;
    s.graph = std::make_unique<ir::Graph>("run_time_shapes");
    std::map<const ir::Value*, ir::Value*> copies;
    std::vector<ir::Value*> ins, outs;
    for (size_t i = 0; i < node_.inputs.size(); ++i) {
      const ir::Value* v = node_.inputs[i];
      if (!v) {
        ins.push_back(nullptr);
        continue;
      }
      if (!copies.count(v))
        copies[v] = v->is_constant()              ? s.graph->add_constant(v->name, *v->initializer)
                    : is_value_input(i, inputs[i]) ? s.graph->add_constant(v->name, inputs[i]->clone())
                                                  : s.graph->add_value(v->name, ir::TensorType{inputs[i]->dtype(), ir::Shape::from_static(inputs[i]->shape())});
      ins.push_back(copies[v]);
    }
    KILN_ASSIGN_OR_RETURN(const ops::OpDef* def, ops::resolve_op(ops::OpRegistry::global(), node_));
    KILN_ASSIGN_OR_RETURN(const std::vector<ir::TensorType> types, ops::infer_concrete_outputs(*def, node_, inputs));
    for (size_t k = 0; k < node_.outputs.size(); ++k)
      outs.push_back(node_.outputs[k] ? s.graph->add_value(node_.outputs[k]->name, types[k]) : nullptr);
    ir::Node* copy = s.graph->add_node(node_.op_type, ins, outs, node_.name, node_.domain, node_.opset_version);
    copy->attributes = node_.attributes;
    copy->origins = node_.origins;
    // A bare context: nothing packed ahead, no tuner; the evidence of a kernel made mid-run has
    // no plan to go to.
    PlanContext context;
    PlanEvidence evidence;
    KernelBuild build{context, evidence};
    KILN_ASSIGN_OR_RETURN(s.kernel, build_(*copy, build));
    return s;
  }

  const ir::Node& node_;
  KernelBuilder build_;
  std::mutex mutex_;
  std::map<std::vector<std::vector<int64_t>>, Specialized> kernels_;
};

}  // namespace

ops::Kernel run_time_shaped_kernel(const ir::Node& node, KernelBuilder build) {
  auto shapes = std::make_shared<RunTimeShapes>(node, std::move(build));
  return [shapes](ops::KernelContext& ctx) { return shapes->run(ctx); };
}

}  // namespace kiln::providers::cpu
