// Evaluates one node eagerly with the reference kernel: infer output shapes from the concrete
// inputs, allocate owning outputs, run. Used by constant folding, value propagation during
// analysis, the eager execution path and op tests.
#pragma once

#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/ops/op_registry.h"
#include "kiln/status.h"

namespace kiln::ops {

// Output shapes from the rule given concrete inputs (inputs[i] may be nullptr for omitted inputs).
// Fails with the rule's error, or InvalidArgument when an output shape is still not concrete.
Result<std::vector<ir::TensorType>> infer_concrete_outputs(const OpDef& def, const ir::Node& node,
                                                           const std::vector<const Tensor*>& inputs);

// Runs `node` on `inputs` (tensors, sequences, optionals); one value per node output (an undefined
// tensor for omitted outputs). `scope` holds the enclosing values the node's subgraphs read.
Result<std::vector<Value>> evaluate_node_values(const OpDef& def, const ir::Node& node,
                                                const std::vector<const Value*>& inputs,
                                                const ValueScope* scope = nullptr);

// evaluate_node_values for tensors only; InvalidArgument when an output is not a tensor.
Result<std::vector<Tensor>> evaluate_node(const OpDef& def, const ir::Node& node,
                                          const std::vector<const Tensor*>& inputs,
                                          const ValueScope* scope = nullptr);

// Convenience for tests: builds a one-node graph for `op_type` (ai.onnx) at `opset` with the given
// attributes and `output_count` outputs, and evaluates it.
Result<std::vector<Tensor>> evaluate_op(const std::string& op_type, const std::vector<const Tensor*>& inputs,
                                        const std::map<std::string, ir::Attribute>& attributes = {},
                                        int opset = 17, size_t output_count = 1);

}  // namespace kiln::ops
