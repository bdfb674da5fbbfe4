// Named tensors in one artifact section, each 64-byte aligned, with a JSON index the manifest
// holds ({name, dtype, shape, offset, bytes} per tensor, in the given order): the weights and the
// warm-up fixtures are stored this way.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::artifact {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

struct TensorSection {
  std::string bytes;
  nlohmann::json index;  // array
};

// UnsupportedOperator for string tensors, which this format version cannot store.
Result<TensorSection> encode_tensors(const std::vector<std::pair<std::string, const Tensor*>>& tensors);

// The tensors `index` lists, copied out of `bytes`. IntegrityFailure naming `what` ("weights")
// and the entry when an entry is malformed or does not fit.
Result<NamedTensors> decode_tensors(std::string_view bytes, const nlohmann::json& index, const std::string& what);

}  // namespace kiln::artifact
