// The GGUF tensor type table (see gguf_types.h); block layouts as ../shared/llm/README.md gives them.
#include "kiln/frontend/gguf/gguf_types.h"

#include <array>
#include <utility>

namespace kiln::frontend::gguf {
namespace {

constexpr std::array<TensorTypeInfo, 20> kTypes = {{
    {0, "F32", 1, 4},
    {1, "F16", 1, 2},
    {2, "Q4_0", 32, 18},
    {3, "Q4_1", 32, 20},
    {6, "Q5_0", 32, 22},
    {7, "Q5_1", 32, 24},
    {8, "Q8_0", 32, 34},
    {9, "Q8_1", 32, 36},
    {10, "Q2_K", 256, 84},
    {11, "Q3_K", 256, 110},
    {12, "Q4_K", 256, 144},
    {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210},
    {15, "Q8_K", 256, 292},
    {24, "I8", 1, 1},
    {25, "I16", 1, 2},
    {26, "I32", 1, 4},
    {27, "I64", 1, 8},
    {28, "F64", 1, 8},
    {30, "BF16", 1, 2},
}};

// Ids ggml defines whose layouts the table does not hold.
constexpr std::array<std::pair<uint32_t, std::string_view>, 14> kOtherNames = {{
    {4, "Q4_2"}, {5, "Q4_3"}, {16, "IQ2_XXS"}, {17, "IQ2_XS"}, {18, "IQ3_XXS"}, {19, "IQ1_S"}, {20, "IQ4_NL"}, {21, "IQ3_S"},
    {22, "IQ2_S"}, {23, "IQ4_XS"}, {29, "IQ1_M"}, {34, "TQ1_0"}, {35, "TQ2_0"}, {39, "MXFP4"},
}};

}  // namespace

std::optional<TensorTypeInfo> tensor_type(uint32_t id) {
  for (const TensorTypeInfo& t : kTypes)
    if (t.id == id) return t;
  return std::nullopt;
}

std::string tensor_type_name(uint32_t id) {
  for (const TensorTypeInfo& t : kTypes)
    if (t.id == id) return std::string(t.name);
  for (const auto& [other, name] : kOtherNames)
    if (other == id) return std::string(name);
  return "type " + std::to_string(id);
}

}  // namespace kiln::frontend::gguf
