// An Einsum equation parsed against its operands' shapes, for the reference kernel and the cpu
// provider's: the labels of each operand dim and of the output (implicit outputs follow numpy:
// the ellipsis dims, then the labels used once, alphabetically), and each label's size.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::ops {

// Labels are letters (0..51) or ellipsis dims (kEinsumEllipsis + k, aligned from the right).
constexpr int kEinsumEllipsis = 100;

struct EinsumEquation {
  std::vector<std::vector<int>> inputs;  // labels per operand dim
  std::vector<int> output;
  std::map<int, int64_t> sizes;          // label -> size (an ellipsis dim broadcast from 1 takes the larger)
};

// InvalidModel naming the equation when it does not match the shapes.
Result<EinsumEquation> parse_einsum(const std::string& equation, const std::vector<std::vector<int64_t>>& shapes);

}  // namespace kiln::ops
