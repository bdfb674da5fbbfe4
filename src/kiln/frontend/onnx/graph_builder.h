// GraphProto -> ir::Graph: values and their declared types, initializers, Constant nodes folded
// into initializers, nodes with attributes, and nested subgraphs (If/Loop/Scan bodies).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "kiln/ir/graph.h"
#include "kiln/tensor.h"
#include "kiln/status.h"

namespace kiln::frontend {

struct ImportContext {
  std::map<std::string, int64_t> opset_imports;  // canonical domain -> version
  std::string base_dir;                          // folder external data is resolved against
  // Initializers of the main graph already converted (the importer takes them out of the
  // protobuf early, to hold each model's weights once), by name.
  std::map<std::string, Tensor> main_initializers;
};

// Converts `proto` (whose ops were already checked) into a topologically sorted graph whose parent
// is `parent`. Names a subgraph reads from enclosing graphs become local values with neither
// producer nor initializer. Non-tensor graph inputs/outputs and sparse tensors are
// UnsupportedOperator; malformed data is InvalidModel. Does not run ir::verify().
Result<std::unique_ptr<ir::Graph>> convert_graph(const onnx::GraphProto& proto, const ImportContext& ctx,
                                                 const ir::Graph* parent);

}  // namespace kiln::frontend
