// Shape specialisation: pinning input dims and guarding runs against other shapes.
#include "kiln/runtime/shape_specialization.h"

namespace kiln::runtime {

SpecializedShapes pin_input_shapes(ir::Graph& graph, const std::vector<std::vector<int64_t>>& shapes) {
  SpecializedShapes fixed;
  for (size_t i = 0; i < graph.inputs.size() && i < shapes.size(); ++i) {
    ir::Value* in = graph.inputs[i];
    if (!in->type.is_tensor() || !in->type.shape) continue;
    in->type.shape = ir::Shape::from_static(shapes[i]);
    fixed[in->name] = shapes[i];
  }
  return fixed;
}

Status check_specialized_shapes(const SpecializedShapes& fixed, const std::map<std::string, Value>& inputs) {
  for (const auto& [name, expected] : fixed) {
    auto it = inputs.find(name);
    if (it == inputs.end() || !it->second.is_tensor()) continue;
    const std::vector<int64_t>& shape = it->second.tensor().shape();
    if (shape.size() != expected.size()) continue;
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] != expected[d])
        return shape_guard_failure("input '" + name + "' dim " + std::to_string(d) + " is " + std::to_string(shape[d]) +
                                   " but the session was specialised to shape " + shape_to_string(expected) +
                                   " (SessionOptions::specialize, --specialize)");
  }
  return Status::ok();
}

}  // namespace kiln::runtime
