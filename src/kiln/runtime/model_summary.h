// Summaries of an imported model for the public API: TensorInfo of values, ModelInfo of a model.
// Used by inspect_model() and by the Session's report.
#pragma once

#include "kiln/ir/graph.h"
#include "kiln/model_info.h"
#include "kiln/session.h"

namespace kiln::runtime {

TensorInfo tensor_info(const ir::Value& value);
ModelInfo summarize_model(const ir::Model& model, bool with_ir_text);

}  // namespace kiln::runtime
