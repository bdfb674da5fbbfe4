// C++ emission: loop nests and instruction bodies as plain C++ over floats.
#include "kiln/providers/cpu/codegen/cpp_emitter.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string_view>
#include <utility>

#include "kiln/ops/elementwise_functions.h"

namespace kiln::codegen {
namespace {

// Below this many elements a kernel runs on the calling thread (thread start-up would dominate).
constexpr int64_t kMinParallelElements = int64_t{1} << 15;

// A float literal that reads back to exactly `v` (C99 hex float).
std::string literal(float v) {
  char buffer[48];
  std::snprintf(buffer, sizeof buffer, "%af", static_cast<double>(v));
  return buffer;
}

// The table's generated form of `function` (elementwise_functions.h) with its placeholders filled.
std::string elementwise(ops::Elementwise function, const std::string& x, const std::string& b, float alpha, float beta) {
  std::string code(ops::elementwise_function(function).generated);
  const std::pair<std::string, std::string> fills[] = {{"{x}", x}, {"{b}", b}, {"{alpha}", literal(alpha)}, {"{beta}", literal(beta)}};
  for (const auto& [placeholder, value] : fills)
    for (size_t at = code.find(placeholder); at != std::string::npos; at = code.find(placeholder, at + value.size()))
      code.replace(at, placeholder.size(), value);
  return code;
}

// The offset of input `i` at the current loop indices: sum of index * stride, zero strides left out.
std::string offset(const LoopKernel& k, size_t i) {
  std::string expr;
  for (size_t d = 0; d < k.extents.size(); ++d) {
    const int64_t s = k.strides[i][d];
    if (s == 0) continue;
    if (!expr.empty()) expr += " + ";
    expr += "i" + std::to_string(d) + (s == 1 ? "" : " * " + std::to_string(s));
  }
  return expr.empty() ? "0" : expr;
}

std::string value_of(const LoopKernel& k, const Instruction& in) {
  const auto v = [](int i) { return "v" + std::to_string(i); };
  switch (in.kind) {
    case Instruction::Kind::kLoad: return "in" + std::to_string(in.input) + "[" + offset(k, static_cast<size_t>(in.input)) + "]";
    case Instruction::Kind::kConstant: return literal(in.value);
    case Instruction::Kind::kUnary: return elementwise(in.function, v(in.lhs), "", in.alpha, in.beta);
    case Instruction::Kind::kBinary: return elementwise(in.function, v(in.lhs), v(in.rhs), 0.0f, 0.0f);
    case Instruction::Kind::kReduce: break;
  }
  return v(in.lhs);
}

// The instructions `target` needs, in body order; reductions it reads are per-row scalars
// computed by earlier passes, so what they read is not needed again.
std::vector<size_t> needed_for(const LoopKernel& k, int target) {
  std::vector<bool> need(k.body.size(), false);
  std::vector<int> pending = {target};
  while (!pending.empty()) {
    const int i = pending.back();
    pending.pop_back();
    if (i < 0 || need[static_cast<size_t>(i)]) continue;
    need[static_cast<size_t>(i)] = true;
    const Instruction& in = k.body[static_cast<size_t>(i)];
    if (in.kind == Instruction::Kind::kReduce && i != target) continue;
    pending.push_back(in.lhs);
    pending.push_back(in.rhs);
  }
  std::vector<size_t> order;
  for (size_t i = 0; i < need.size(); ++i)
    if (need[i] && !(k.body[i].kind == Instruction::Kind::kReduce)) order.push_back(i);
  return order;
}

// The output's offset: the row-major position of the indices of the first `loops` loops (the
// output is dense; a per-row result has one element per position of the outer loops).
std::string output_position(const LoopKernel& k, size_t loops) {
  if (loops == 0) return "0";
  std::string position = "i0";
  for (size_t d = 1; d < loops; ++d) position = "(" + position + ") * " + std::to_string(k.extents[d]) + " + i" + std::to_string(d);
  return position;
}

// How a reduction's accumulator starts, OpenMP's identifier for it, and its update.
struct Fold {
  std::string init, omp, step;
};

Fold fold(Instruction::Fold kind, const std::string& acc, const std::string& operand) {
  switch (kind) {
    case Instruction::Fold::kSum: return {"0.0f", "+", acc + " += " + operand + ";"};
    case Instruction::Fold::kProd: return {"1.0f", "*", acc + " *= " + operand + ";"};
    case Instruction::Fold::kMax: break;
  }
  return {"-INFINITY", "max", acc + " = std::max(" + acc + ", " + operand + ");"};
}

// One pass of the innermost loop: the values `target` needs, then `tail` (an accumulation or
// the store).
void emit_inner_pass(std::ostringstream& out, const LoopKernel& k, int target, const std::string& pragma, const std::string& tail,
                     size_t depth) {
  const size_t d = k.extents.size() - 1;
  const std::string pad(2 * depth, ' '), body_pad(2 * (depth + 1), ' ');
  out << pragma << "\n" << pad << "for (long i" << d << " = 0; i" << d << " < " << k.extents[d] << "; ++i" << d << ") {\n";
  for (size_t i : needed_for(k, target)) out << body_pad << "const float v" << i << " = " << value_of(k, k.body[i]) << ";\n";
  out << body_pad << tail << "\n" << pad << "}\n";
}

void emit_kernel(std::ostringstream& out, const LoopKernel& k, int width) {
  size_t inputs = 0;
  for (const Instruction& in : k.body)
    if (in.kind == Instruction::Kind::kLoad) inputs = std::max(inputs, static_cast<size_t>(in.input) + 1);
  out << "extern \"C\" void " << k.name << "(const float* const* inputs, float* output) {\n";
  // No __restrict: the executor may run a chain in place (output over input 0).
  for (size_t i = 0; i < inputs; ++i) out << "  const float* in" << i << " = inputs[" << i << "];\n";
  const size_t outer = k.extents.size() - 1;
  const bool parallel = k.element_count() >= kMinParallelElements;
  const std::string simd = "#pragma omp simd simdlen(" + std::to_string(width) + ")";
  const int last = static_cast<int>(k.body.size()) - 1;
  const bool per_row = k.stores_per_row();
  const std::string store =
      "output[" + output_position(k, per_row ? outer : k.extents.size()) + "] = v" + std::to_string(last) + ";";
  if (outer == 0 && !k.has_reductions()) {  // one flat loop
    emit_inner_pass(out, k, last, parallel ? "#pragma omp parallel for simd simdlen(" + std::to_string(width) + ")" : simd, store, 1);
    out << "}\n\n";
    return;
  }
  if (parallel && outer > 0) out << "#pragma omp parallel for collapse(" << outer << ")\n";
  for (size_t d = 0; d < outer; ++d)
    out << std::string(2 * (d + 1), ' ') << "for (long i" << d << " = 0; i" << d << " < " << k.extents[d] << "; ++i" << d << ")"
        << (d + 1 == outer ? " {\n" : "\n");
  const size_t depth = outer + 1;
  const std::string pad(2 * depth, ' ');
  // One pass per reduction, each folding its operand over the row into a per-row scalar.
  for (size_t r = 0; r < k.body.size(); ++r) {
    const Instruction& in = k.body[r];
    if (in.kind != Instruction::Kind::kReduce) continue;
    const std::string acc = "v" + std::to_string(r);
    const Fold f = fold(in.fold, acc, "v" + std::to_string(in.lhs));
    out << pad << "float " << acc << " = " << f.init << ";\n";
    emit_inner_pass(out, k, in.lhs, simd + " reduction(" + f.omp + ":" + acc + ")", f.step, depth);
  }
  if (per_row) {  // the result from the row's scalars, once
    for (size_t i : needed_for(k, last))
      if (k.per_row(static_cast<int>(i))) out << pad << "const float v" << i << " = " << value_of(k, k.body[i]) << ";\n";
    out << pad << store << "\n";
  } else {
    emit_inner_pass(out, k, last, simd, store, depth);
  }
  if (outer > 0) out << std::string(2 * outer, ' ') << "}\n";
  out << "}\n\n";
}

}  // namespace

int vector_width(const std::vector<std::string>& features) {
  auto has = [&](const char* f) { return std::find(features.begin(), features.end(), f) != features.end(); };
  if (has("avx512f")) return 16;
  if (has("avx2") || has("avx")) return 8;
  return 4;
}

std::string emit_module(const std::vector<LoopKernel>& kernels, int width) {
  std::ostringstream out;
  out << "// Generated by Kiln: element-wise, normalization and reduction kernels specialised to one plan's shapes.\n"
      << "#include <algorithm>\n#include <cmath>\n\n";
  for (const LoopKernel& k : kernels) emit_kernel(out, k, width);
  return out.str();
}

}  // namespace kiln::codegen
