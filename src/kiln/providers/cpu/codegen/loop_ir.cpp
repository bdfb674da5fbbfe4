// Loop IR: instructions, the loop nests (strides, dim merging) and the listing.
#include "kiln/providers/cpu/codegen/loop_ir.h"

#include <sstream>


namespace kiln::codegen {
namespace {

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

Instruction Instruction::load(int input) {
  Instruction i;
  i.input = input;
  return i;
}

Instruction Instruction::constant(float value) {
  Instruction i;
  i.kind = Kind::kConstant;
  i.value = value;
  return i;
}

Instruction Instruction::unary(ops::Elementwise function, int x, float alpha, float beta) {
  Instruction i;
  i.kind = Kind::kUnary;
  i.function = function;
  i.lhs = x;
  i.alpha = alpha;
  i.beta = beta;
  return i;
}

Instruction Instruction::binary(ops::Elementwise function, int lhs, int rhs) {
  Instruction i;
  i.kind = Kind::kBinary;
  i.function = function;
  i.lhs = lhs;
  i.rhs = rhs;
  return i;
}

Instruction Instruction::reduce(Fold fold, int x) {
  Instruction i;
  i.kind = Kind::kReduce;
  i.fold = fold;
  i.lhs = x;
  return i;
}

bool LoopKernel::has_reductions() const {
  for (const Instruction& in : body)
    if (in.kind == Instruction::Kind::kReduce) return true;
  return false;
}

bool LoopKernel::per_row(int i) const {
  const Instruction& in = body[static_cast<size_t>(i)];
  switch (in.kind) {
    case Instruction::Kind::kReduce:
    case Instruction::Kind::kConstant: return true;
    case Instruction::Kind::kLoad: return false;
    case Instruction::Kind::kUnary: return per_row(in.lhs);
    case Instruction::Kind::kBinary: return per_row(in.lhs) && per_row(in.rhs);
  }
  return false;
}

int LoopKernel::add(Instruction instruction) {
  body.push_back(std::move(instruction));
  return static_cast<int>(body.size()) - 1;
}

int64_t LoopKernel::element_count() const {
  int64_t n = 1;
  for (int64_t e : extents) n *= e;
  return n;
}

std::string LoopKernel::to_string() const {
  static constexpr const char* fold_names[] = {"Sum", "Prod", "Max"};  // Instruction::Fold's order
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
    switch (in.kind) {
      case Instruction::Kind::kLoad: out << "load in" << in.input; break;
      case Instruction::Kind::kConstant: out << in.value; break;
      case Instruction::Kind::kUnary: out << ops::elementwise_function(in.function).name << "(v" << in.lhs << ")"; break;
      case Instruction::Kind::kBinary: out << ops::elementwise_function(in.function).name << "(v" << in.lhs << ", v" << in.rhs << ")"; break;
      case Instruction::Kind::kReduce: out << "Reduce" << fold_names[static_cast<size_t>(in.fold)] << " over i" << extents.size() - 1 << " of v" << in.lhs; break;
    }
    out << "\n";
  }
  out << pad << "store v" << (body.empty() ? 0 : body.size() - 1) << (stores_per_row() ? " per row" : "") << "\n";
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

LoopKernel row_nest(const std::string& name, int64_t rows, int64_t row_length, const std::vector<bool>& shared_row) {
  LoopKernel k;
  k.name = name;
  k.extents = {rows, row_length};
  for (bool shared : shared_row) k.strides.push_back({shared ? 0 : row_length, 1});
  return k;
}

}  // namespace kiln::codegen
