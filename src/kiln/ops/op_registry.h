// The operator registry: every op Kiln knows is declared once, with its shape/type rule and its
// reference kernel. Analysis, constant folding, the cpu_ref provider and the CLI all read this table.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "kiln/value.h"

namespace kiln::ops {

// What a shape rule sees: input types, input values when known (constants, folded shapes, or the
// real tensors at run time), the node's attributes and opset. It sets every output's type.
class InferenceContext {
 public:
  InferenceContext(const ir::Node& node, std::vector<const ir::TensorType*> input_types,
                   std::vector<const Tensor*> input_values)
      : node_(node), input_types_(std::move(input_types)), input_values_(std::move(input_values)),
        output_types_(node.outputs.size()), output_values_(node.outputs.size()) {}

  const ir::Node& node() const { return node_; }
  int opset() const { return node_.opset_version; }
  size_t input_count() const { return input_types_.size(); }
  size_t output_count() const { return output_types_.size(); }
  // False when input i is omitted (empty name) or past the end.
  bool has_input(size_t i) const { return i < input_types_.size() && input_types_[i] != nullptr; }
  const ir::TensorType& input_type(size_t i) const { return *input_types_[i]; }
  // The input's value when known at this point, else nullptr.
  const Tensor* input_value(size_t i) const { return i < input_values_.size() ? input_values_[i] : nullptr; }

  void set_output_type(size_t i, ir::TensorType type) { if (i < output_types_.size()) output_types_[i] = std::move(type); }
  // A rule may also give an output's value when it is known without running the kernel (Shape does).
  void set_output_value(size_t i, Tensor value) { if (i < output_values_.size()) output_values_[i] = std::move(value); }
  const std::vector<ir::TensorType>& output_types() const { return output_types_; }
  std::vector<std::optional<Tensor>>& output_values() { return output_values_; }

  // InvalidModel naming this node: `return ctx.error("axis 5 out of range for rank 4");`
  Status error(const std::string& message) const { return invalid_model(node_.describe() + ": " + message); }

 private:
  const ir::Node& node_;
  std::vector<const ir::TensorType*> input_types_;
  std::vector<const Tensor*> input_values_;
  std::vector<ir::TensorType> output_types_;
  std::vector<std::optional<Tensor>> output_values_;
};

// Values visible by name to the subgraphs of a node (If/Loop/Scan bodies read enclosing values).
using ValueScope = std::map<std::string, const Value*>;

// Runs a body of a control-flow node on `inputs` (bound by position), reading enclosing values
// from `scope`; returns the body's outputs. The reference runs bodies node by node (run_subgraph);
// a provider may run them through plans of the policy's providers.
using SubgraphRunner =
    std::function<Result<std::vector<Value>>(const ir::Graph& body, const std::vector<Value>& inputs, const ValueScope& scope)>;

// What a kernel sees: input tensors (nullptr for omitted optional inputs) and output tensors already
// allocated with the shapes the rule inferred for these inputs. Kernels never allocate outputs,
// except those of ops declared with OpDef::kernel_allocates_outputs, which assign their outputs
// (set_output). Ops that accept sequences and optionals (OpDef::accepts_containers) read them
// with input_value(); input() is nullptr for a non-tensor input.
class KernelContext {
 public:
  // Tensor-only context (constant folding, op tests).
  KernelContext(const ir::Node& node, std::vector<const Tensor*> inputs, std::vector<Tensor*> outputs,
                const ValueScope* scope = nullptr)
      : node_(node), inputs_(std::move(inputs)), outputs_(std::move(outputs)), scope_(scope) {}
  // Context over values (the executor, subgraphs): tensors are the values' tensors.
  KernelContext(const ir::Node& node, std::vector<const Value*> inputs, std::vector<Value*> outputs,
                const ValueScope* scope = nullptr);

  const ir::Node& node() const { return node_; }
  int opset() const { return node_.opset_version; }
  size_t input_count() const { return inputs_.size(); }
  size_t output_count() const { return outputs_.size(); }
  const Tensor* input(size_t i) const { return i < inputs_.size() ? inputs_[i] : nullptr; }
  // nullptr when the output is omitted by the model.
  Tensor* output(size_t i) const { return i < outputs_.size() ? outputs_[i] : nullptr; }
  // The input as a value (nullptr when omitted, or when this context holds only tensors).
  const Value* input_value(size_t i) const { return i < input_values_.size() ? input_values_[i] : nullptr; }
  // Assigns output i (for kernels that allocate their outputs); a sequence or optional needs a
  // value context. Omitted outputs are skipped.
  Status set_output(size_t i, Value value) const;

  // Enclosing values the node's subgraphs may read, by name (empty for nodes without subgraphs).
  const ValueScope& scope() const {
    static const ValueScope kEmpty;
    return scope_ ? *scope_ : kEmpty;
  }
  // Runs one of the node's bodies with the runner set for this run, else the reference's.
  Result<std::vector<Value>> run_body(const ir::Graph& body, const std::vector<Value>& inputs) const;
  void set_body_runner(const SubgraphRunner* runner) { body_runner_ = runner; }

  Status error(const std::string& message) const { return invalid_argument(node_.describe() + ": " + message); }

 private:
  const ir::Node& node_;
  std::vector<const Tensor*> inputs_;
  std::vector<Tensor*> outputs_;
  std::vector<const Value*> input_values_;
  std::vector<Value*> output_values_;
  const ValueScope* scope_;
  const SubgraphRunner* body_runner_ = nullptr;
};

using ShapeRule = std::function<Status(InferenceContext&)>;
using Kernel = std::function<Status(KernelContext&)>;

// y[i] = f(x[i]) for i in [begin, end): an element-wise unary op's function, made for one node
// (its attributes read once) and one input dtype.
using ElementRange = std::function<void(const Tensor& x, Tensor& y, int64_t begin, int64_t end)>;
// The ElementRange of `node` for input dtype `dtype`; nullopt when the op does not take it.
using ElementFunction = std::function<std::optional<ElementRange>(const ir::Node& node, DType dtype)>;

struct OpDef {
  std::string domain;      // "" for ai.onnx
  std::string op_type;
  int since_version = 1;   // first opset version this definition covers (until the next one's)
  ShapeRule infer;         // required
  Kernel reference;        // required: plain, exact cpu_ref kernel
  // Output shapes known only by running the op (control flow, sequences): the rule gives what it
  // can, and the kernel assigns each output itself.
  bool kernel_allocates_outputs = false;
  // Takes or gives sequences and optionals; other ops refuse them at analysis.
  bool accepts_containers = false;
  // Output 0 may share this input's buffer when nothing reads the input afterwards (the memory
  // planner then gives both one buffer); every provider's kernel must allow that alias. -1: never.
  int in_place_input = -1;
  // Element-wise unary ops: their function, written once. The reference kernel runs it over the
  // whole tensor; a provider may run it in chunks on its own threads. Empty for other ops.
  ElementFunction element_function = {};
};

class OpRegistry {
 public:
  // The registry with every op Kiln implements (built once, thread-safe to read).
  static const OpRegistry& global();

  void add(OpDef def);
  // The definition for `op_type` in `domain` at `opset_version`: the one with the largest
  // since_version <= opset_version; nullptr when none.
  const OpDef* find(const std::string& domain, const std::string& op_type, int opset_version) const;
  // True when any version of the op is registered.
  bool knows(const std::string& domain, const std::string& op_type) const;
  // Domains with at least one op ("" = ai.onnx).
  std::vector<std::string> domains() const;
  // (domain, op_type) -> since versions, sorted; for docs and `kiln ops`.
  std::map<std::pair<std::string, std::string>, std::vector<int>> listing() const;

 private:
  std::map<std::pair<std::string, std::string>, std::vector<OpDef>> defs_;
};

// Random ops (RandomNormal, Bernoulli, ...): never folded, propagated or merged.
bool is_nondeterministic(const ir::Node& node);

// The newest opset version of `domain` whose semantics Kiln implements (17 for ai.onnx).
int newest_supported_opset(const std::string& domain);

// A node's op, resolved (refusing opsets newer than newest_supported_opset()): UnsupportedOperator naming op, domain, opset and node when unknown.
Result<const OpDef*> resolve_op(const OpRegistry& registry, const ir::Node& node);

}  // namespace kiln::ops
