// Model inputs and outputs on the command line: --input specs (NAME=file.npy | file.pb |
// random[:SEED]) turned into values as the model declares them, and outputs written under an
// output folder. Shared by `kiln run` and `kiln bench`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kiln/session.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "kiln/value.h"

namespace kiln::cli {

// One value per spec of `flag` (--input, --warmup-input), read as the model declares that input
// (kiln::read_value_file: a .pb holds a TensorProto, SequenceProto or OptionalProto; a .npy a
// tensor; uint16 bits where the model expects bfloat16). Random inputs are tensors of the model's
// dims, symbolic ones from options.input_shapes (--shape) or 1. Errors name the input.
Result<std::map<std::string, Value>> make_input_values(const Session& session, const SessionOptions& options,
                                                       const std::vector<std::string>& specs, const std::string& flag);

// make_input_values for commands that run tensors only (`kiln bench`): InvalidArgument naming an
// input that is a sequence or optional.
Result<std::map<std::string, Tensor>> make_inputs(const Session& session, const SessionOptions& options,
                                                  const std::vector<std::string>& specs);

// Adds a random input (seed 0) for every model input `inputs` lacks.
Status add_missing_random_inputs(const Session& session, const SessionOptions& options,
                                 std::map<std::string, Tensor>& inputs);

// The file an output is written to inside the output folder, its name made file-safe
// ("a/b:0" -> "a_b_0"): <name>.npy for a tensor (bfloat16 as its uint16 bits, as NumPy has no
// bfloat16), <name>.pb for a sequence (SequenceProto) or an optional (OptionalProto).
std::string output_file_name(const std::string& name, const Value& value);

// Writes each output as DIR/output_file_name(name, value) (kiln::write_value_file).
Status write_outputs(const std::string& dir, const std::map<std::string, Value>& outputs);

}  // namespace kiln::cli
