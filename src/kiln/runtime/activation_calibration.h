// Static int8 calibration at load: the model compiled with every product in float32 (on the same
// graph the int8 compile lowers to, so that value names match) runs on each calibration input set,
// and the values the int8 products read are observed as each step writes them; a method of
// ops/activation_calibration.h turns each one's statistics into a fixed uint8 quantization, which
// the int8 compile then marks on the products (compiler::PrecisionOptions::calibrated_inputs).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "kiln/ops/activation_calibration.h"
#include "kiln/runtime/engine.h"
#include "kiln/session.h"

namespace kiln::runtime {

// The quantization of each of `product_inputs` (value names of `float32`'s graph: its inputs or
// values its steps write) over `sets`, by `method`; a value never observed (a control-flow body's)
// or never finite is left out. The sets are checked against the graph first (check_input_set).
Result<std::map<std::string, ops::Uint8Quantization>> calibrate_inputs(Engine& float32, const std::set<std::string>& product_inputs,
                                                                       const std::vector<InputSet>& sets, ops::CalibrationMethod method);

}  // namespace kiln::runtime
