// Model inputs and outputs on the command line: --input specs (NAME=file.npy | file.pb |
// random[:SEED]) turned into tensors, and outputs written as DIR/<name>.npy. Shared by `kiln run`
// and `kiln bench`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kiln/session.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::cli {

// One tensor per --input spec; random inputs take the model's dims, symbolic ones from
// options.input_shapes (--shape) or 1.
Result<std::map<std::string, Tensor>> make_inputs(const Session& session, const SessionOptions& options,
                                                  const std::vector<std::string>& specs);

// Adds a random input (seed 0) for every model input `inputs` lacks.
Status add_missing_random_inputs(const Session& session, const SessionOptions& options,
                                 std::map<std::string, Tensor>& inputs);

// Writes each output as DIR/<name>.npy, the name made file-safe ("a/b:0" -> "a_b_0").
Status write_outputs(const std::string& dir, const std::map<std::string, Tensor>& outputs);

}  // namespace kiln::cli
