// Graph, Node, Value and Model: Kiln's intermediate representation, the common language of all
// pipeline stages. A Graph owns its nodes and values; nodes refer to values by pointer. Nodes are
// kept in a valid execution (topological) order by whoever edits the graph; topological_sort()
// restores it after edits that insert nodes out of order.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/ir/attribute.h"
#include "kiln/ir/shape.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ir {

class Graph;
struct Node;

struct Value {
  std::string name;
  TensorType type;
  Node* producer = nullptr;           // null for graph inputs, initializers and outer-scope values
  std::optional<Tensor> initializer;  // set for constants (ONNX initializers, folded values)

  bool is_constant() const { return initializer.has_value(); }
};

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;       // "" is ai.onnx
  int opset_version = 0;    // version of `domain` imported by the model
  std::vector<Value*> inputs;   // nullptr marks an omitted optional input
  std::vector<Value*> outputs;  // nullptr marks an omitted optional output
  std::map<std::string, Attribute> attributes;
  // Names of the source-model nodes a rewritten node stands for (a fused node lists every node it
  // replaced); empty for a node of the source model, which stands for itself.
  std::vector<std::string> origins;

  bool has_attr(const std::string& key) const { return attributes.count(key) != 0; }
  // Whether this is operator `op` of domain `op_domain` ("" for ai.onnx).
  bool is(const char* op_domain, const char* op) const { return domain == op_domain && op_type == op; }
  const Attribute* attr(const std::string& key) const;
  int64_t attr_int(const std::string& key, int64_t fallback) const;
  float attr_float(const std::string& key, float fallback) const;
  std::string attr_string(const std::string& key, const std::string& fallback = "") const;
  std::vector<int64_t> attr_ints(const std::string& key, const std::vector<int64_t>& fallback = {}) const;
  std::vector<float> attr_floats(const std::string& key, const std::vector<float>& fallback = {}) const;
  const Tensor* attr_tensor(const std::string& key) const;

  // True when an attribute holds a subgraph (If/Loop/Scan bodies).
  bool has_subgraph() const;
  // Input i, or nullptr when absent or omitted.
  Value* input(size_t i) const { return i < inputs.size() ? inputs[i] : nullptr; }
  // "Conv 'resnet/conv1'": how messages name a node.
  std::string describe() const;
  // `origins`, or this node's own name when it has none.
  std::vector<std::string> source_nodes() const;
};

class Graph {
 public:
  explicit Graph(std::string name = "main", const Graph* parent = nullptr) : name_(std::move(name)), parent_(parent) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  // The enclosing graph of a subgraph (If/Loop bodies), whose values it may read.
  const Graph* parent() const { return parent_; }
  void set_parent(const Graph* parent) { parent_ = parent; }

  // Creates a value; `name` must be unique in this graph (see unique_name()).
  Value* add_value(const std::string& name, TensorType type = {});
  Value* add_constant(const std::string& name, Tensor tensor);
  // Looks up a value in this graph only.
  Value* find_value(const std::string& name) const;
  // Looks up a value here, then in enclosing graphs.
  Value* find_value_in_scope(const std::string& name) const;
  std::string unique_name(const std::string& prefix) const;
  // Renames a value of this graph (keeps the name index right).
  void rename_value(Value* value, const std::string& name);

  // Appends a node and marks it as the producer of its outputs.
  Node* add_node(const std::string& op_type, std::vector<Value*> inputs, std::vector<Value*> outputs,
                 const std::string& name = "", const std::string& domain = "", int opset_version = 0);
  // Removes a node (its output values stay and lose their producer).
  void remove_node(const Node* node);
  // Drops values that are not used by any node, graph input or output, or subgraph.
  void remove_unused_values();
  // Redirects every use of `from` (node inputs, including nodes of nested subgraphs reading it from
  // scope, and graph outputs) to `to`.
  void replace_all_uses(Value* from, Value* to);
  // Orders nodes so every producer precedes its consumers, including nodes whose subgraphs read
  // the value from this scope at any depth; InvalidModel if there is a cycle.
  Status topological_sort();

  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  const std::vector<std::unique_ptr<Value>>& values() const { return values_; }
  std::vector<Value*> inputs;   // real inputs (not initializers)
  std::vector<Value*> outputs;

  // Nodes that read `value` as an input (this graph only).
  std::vector<Node*> consumers(const Value* value) const;
  bool is_graph_output(const Value* value) const;
  bool is_graph_input(const Value* value) const;
  // Names of values read by nodes of this graph or its subgraphs but defined outside this graph.
  std::vector<std::string> outer_scope_reads() const;

  // Deep copy (nodes, values, initializers share tensor storage, subgraphs deep-copied).
  std::unique_ptr<Graph> clone(const Graph* parent = nullptr) const;

 private:
  std::string name_;
  const Graph* parent_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  std::map<std::string, Value*> values_by_name_;
};

// Calls `fn` on every subgraph held by the node's attributes.
void for_each_subgraph(const Node& node, const std::function<void(Graph&)>& fn);
// Names of outer-scope values the node's subgraphs read (recursively), sorted.
std::vector<std::string> names_captured_by(const Node& node);

// Nodes of a graph, those inside subgraphs included.
int64_t count_nodes(const Graph& graph);

// Parameter (initializer) count and bytes of a graph, subgraphs included; `mapped_bytes`: of
// those, the bytes of the constants that lie in `mapped` (a model file's mapped bytes).
struct ParameterStats {
  int64_t count = 0;
  int64_t elements = 0;
  int64_t bytes = 0;
  int64_t mapped_bytes = 0;
};
ParameterStats parameter_stats(const Graph& graph, std::string_view mapped = {});

// A whole model: the main graph plus what the file says about itself.
struct Model {
  std::unique_ptr<Graph> graph;
  std::map<std::string, int64_t> opset_imports;  // domain ("" = ai.onnx) -> version
  int64_t ir_version = 0;
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string doc_string;
  std::map<std::string, std::string> metadata;
  std::string source_path;
  std::string sha256;  // hex SHA-256 of the model file
  int64_t file_bytes = 0;
  // The model file mapped (io::map_file_image) when constants view it in place, the weights being
  // the file's own bytes (a GGUF package's block-quantized tensors); kept mapped while the model
  // lives. Both empty when no constant views a mapping (the file read into memory, or a package of
  // float weights, which are copies).
  std::shared_ptr<const char> mapping;
  std::string_view mapped_file;
  // Files the format carries besides the graph, stored in an artifact beside the user's assets (a
  // GGUF package's metadata, hyperparameters and tokenizer, as `tokenizer.gguf`).
  std::map<std::string, std::string> assets;
  // Inputs the format knows to be valid (a decoder's first token at position 0), the warm-up
  // fixtures when none are given; empty: seeded random ones.
  std::map<std::string, Tensor> example_inputs;
};

}  // namespace kiln::ir
