// Where a session's model comes from: a model file, or bytes, in one of the formats Kiln imports
// (frontend/model_formats.h), or a compiled model read back from a .kiln artifact
// (artifact/loader.h), which brings its optimised IR and, besides, its packed weights, generated
// kernels, warm-up fixtures, assets and default thread count.
#pragma once

#include <map>
#include <string>

#include "kiln/artifact/loader.h"
#include "kiln/compiler/compiled_model.h"
#include "kiln/ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::runtime {

struct SourceModel {
  ir::Model model;
  bool from_artifact = false;  // then the graph is optimised already
  compiler::Precompiled precompiled;
  std::map<std::string, std::string> assets;
  std::map<std::string, Tensor> warmup_inputs, warmup_outputs;
  int default_threads = 0;
};

// The model at `path`, or in `bytes` when given. An artifact loads only from its path, its
// signature and CPU features checked under `policy`; a failure names the path.
Result<SourceModel> read_model(const std::string& path, const std::string* bytes, const artifact::LoadPolicy& policy);

}  // namespace kiln::runtime
