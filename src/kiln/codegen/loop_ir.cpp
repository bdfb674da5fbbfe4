// Loop IR: building the loop nest (strides, dim merging) and lowering element-wise chains.
#include "kiln/codegen/loop_ir.h"

#include <set>
#include <sstream>

#include "kiln/ops/elementwise_chain.h"

namespace kiln::codegen {
namespace {

const std::set<std::string> kUnary = {"Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "Elu", "HardSwish",
                                      "Exp",  "Log",       "Sqrt", "Abs",     "Neg",  "Softplus"};
const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Pow"};

// Row-major strides of `dims` aligned to the right of an output of `rank` dims; 0 where the
// input has size 1 (or no dim) and so repeats.
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& dims, const std::vector<int64_t>& output) {
  std::vector<int64_t> strides(output.size(), 0);
  int64_t stride = 1;
  const size_t offset = output.size() - dims.size();
  for (size_t d = dims.size(); d-- > 0;) {
    strides[offset + d] = dims[d] == 1 && output[offset + d] != 1 ? 0 : stride;
    stride *= dims[d];
  }
  return strides;
}

}  // namespace

int64_t LoopKernel::element_count() const {
  int64_t n = 1;
  for (int64_t e : extents) n *= e;
  return n;
}

std::string LoopKernel::to_string() const {
  std::ostringstream out;
  out << "kernel " << name << "\n";
  for (size_t d = 0; d < extents.size(); ++d) {
    out << std::string(2 * (d + 1), ' ') << "for i" << d << " in 0.." << extents[d] << "  strides";
    for (const auto& s : strides) out << " " << s[d];
    out << "\n";
  }
  const std::string pad(2 * (extents.size() + 1), ' ');
  for (size_t i = 0; i < body.size(); ++i) {
    const Instruction& in = body[i];
    out << pad << "v" << i << " = ";
    if (in.kind == Instruction::Kind::kLoad) out << "load in" << in.input;
    if (in.kind == Instruction::Kind::kUnary) out << in.op << "(v" << in.lhs << ")";
    if (in.kind == Instruction::Kind::kBinary) out << in.op << "(v" << in.lhs << ", v" << in.rhs << ")";
    out << "\n";
  }
  out << pad << "store v" << (body.empty() ? 0 : body.size() - 1) << "\n";
  return out.str();
}

LoopKernel loop_nest(const std::string& name, const std::vector<std::vector<int64_t>>& input_dims,
                     const std::vector<int64_t>& output) {
  LoopKernel k;
  k.name = name;
  std::vector<std::vector<int64_t>> strides;
  for (const auto& dims : input_dims) strides.push_back(broadcast_strides(dims, output));
  // Merge dim d into the loop before it when every input steps from one into the other as a
  // dense walk would (stride_prev == stride_d * extent_d, broadcasts staying broadcasts).
  for (size_t d = 0; d < output.size(); ++d) {
    if (output[d] == 1 && output.size() > 1) continue;  // a size-1 dim is no loop
    bool merges = !k.extents.empty();
    for (size_t i = 0; i < strides.size() && merges; ++i) {
      const int64_t prev = k.strides[i].back(), cur = strides[i][d];
      merges = (prev == 0 && cur == 0) || (cur != 0 && prev == cur * output[d]);
    }
    if (merges) {
      k.extents.back() *= output[d];
      for (size_t i = 0; i < strides.size(); ++i) k.strides[i].back() = strides[i][d];
      continue;
    }
    k.extents.push_back(output[d]);
    k.strides.resize(strides.size());
    for (size_t i = 0; i < strides.size(); ++i) k.strides[i].push_back(strides[i][d]);
  }
  if (k.extents.empty()) {  // a scalar, or all dims of size 1
    k.extents.push_back(1);
    k.strides.assign(strides.size(), std::vector<int64_t>{0});
  }
  return k;
}

Result<LoopKernel> lower_elementwise_chain(const ir::Node& chain, const std::string& name,
                                           const std::vector<std::vector<int64_t>>& input_dims,
                                           const std::vector<int64_t>& output) {
  LoopKernel k = loop_nest(name, input_dims, output);
  k.body.push_back({Instruction::Kind::kLoad, "", 0});
  for (const ops::ChainStep& step : ops::chain_steps(chain)) {
    const int previous = static_cast<int>(k.body.size()) - 1;
    if (!step.is_binary()) {
      if (!kUnary.count(step.op)) return unsupported_operator(chain.describe() + ": chain step " + step.op + " has no generated form");
      Instruction in{Instruction::Kind::kUnary, step.op};
      in.lhs = previous;
      in.alpha = step.alpha;
      in.beta = step.beta;
      k.body.push_back(in);
      continue;
    }
    if (!kBinary.count(step.op)) return unsupported_operator(chain.describe() + ": chain step " + step.op + " has no generated form");
    if (step.operand <= 0 || static_cast<size_t>(step.operand) >= input_dims.size())
      return invalid_model(chain.describe() + ": step " + step.op + " names input " + std::to_string(step.operand));
    k.body.push_back({Instruction::Kind::kLoad, "", step.operand});
    const int operand = static_cast<int>(k.body.size()) - 1;
    Instruction in{Instruction::Kind::kBinary, step.op};
    in.lhs = step.operand_first ? operand : previous;
    in.rhs = step.operand_first ? previous : operand;
    k.body.push_back(in);
  }
  return k;
}

}  // namespace kiln::codegen
