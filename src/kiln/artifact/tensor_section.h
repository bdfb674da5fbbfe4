// Named tensors in one artifact section, each 64-byte aligned, with a JSON index the manifest
// holds ({name, dtype, shape, offset, bytes} per tensor, in the given order): the weights and the
// warm-up fixtures are stored this way. A string tensor's bytes are each element's length (8
// bytes, little-endian) then the elements' UTF-8 bytes; it is copied out when read.
#pragma once

#include <memory>
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

Result<TensorSection> encode_tensors(const std::vector<std::pair<std::string, const Tensor*>>& tensors);

// The tensor index entry `entry` describes ({name, dtype, shape, offset, bytes}): a view into
// `bytes` (no copy), which lie in the memory `owner` keeps alive (an artifact read into memory) and may be
// read-only; a string tensor is decoded into an owned copy. IntegrityFailure naming `what` ("weights") and the entry when it is malformed,
// misaligned or does not fit. With `offset` and `bytes` absent it reads {name, dtype, shape} and
// views `bytes` whole (which must hold at least the tensor; a string tensor's encoding exactly).
Result<Tensor> decode_tensor(std::string_view bytes, const std::shared_ptr<const char>& owner, const nlohmann::json& entry,
                             const std::string& what);
// decode_tensor of each entry of `index`.
Result<NamedTensors> decode_tensors(std::string_view bytes, const std::shared_ptr<const char>& owner,
                                    const nlohmann::json& index, const std::string& what);

}  // namespace kiln::artifact
