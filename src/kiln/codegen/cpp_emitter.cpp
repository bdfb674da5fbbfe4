// C++ emission: loop nests and instruction bodies as plain C++ over floats.
#include "kiln/codegen/cpp_emitter.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

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

std::string unary(const Instruction& in, const std::string& x) {
  const std::string a = literal(in.alpha), b = literal(in.beta);
  if (in.op == "Relu") return "(" + x + " < 0.0f ? 0.0f : " + x + ")";
  if (in.op == "LeakyRelu") return "(" + x + " < 0.0f ? " + a + " * " + x + " : " + x + ")";
  if (in.op == "Clip") return "std::min(std::max(" + x + ", " + a + "), " + b + ")";
  if (in.op == "Sigmoid") return "(1.0f / (1.0f + std::exp(-" + x + ")))";
  if (in.op == "Tanh") return "std::tanh(" + x + ")";
  if (in.op == "Elu") return "(" + x + " < 0.0f ? " + a + " * (std::exp(" + x + ") - 1.0f) : " + x + ")";
  if (in.op == "HardSwish") return "(" + x + " * std::min(std::max(" + x + " / 6.0f + 0.5f, 0.0f), 1.0f))";
  if (in.op == "Exp") return "std::exp(" + x + ")";
  if (in.op == "Log") return "std::log(" + x + ")";
  if (in.op == "Sqrt") return "std::sqrt(" + x + ")";
  if (in.op == "Abs") return "std::fabs(" + x + ")";
  if (in.op == "Neg") return "(-" + x + ")";
  return "std::log1p(std::exp(" + x + "))";  // Softplus
}

std::string binary(const std::string& op, const std::string& a, const std::string& b) {
  if (op == "Add") return "(" + a + " + " + b + ")";
  if (op == "Sub") return "(" + a + " - " + b + ")";
  if (op == "Mul") return "(" + a + " * " + b + ")";
  if (op == "Div") return "(" + a + " / " + b + ")";
  if (op == "Max") return "std::max(" + a + ", " + b + ")";
  if (op == "Min") return "std::min(" + a + ", " + b + ")";
  return "std::pow(" + a + ", " + b + ")";
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

void emit_body(std::ostringstream& out, const LoopKernel& k, const std::string& pad) {
  for (size_t v = 0; v < k.body.size(); ++v) {
    const Instruction& in = k.body[v];
    std::string value;
    if (in.kind == Instruction::Kind::kLoad) value = "in" + std::to_string(in.input) + "[" + offset(k, static_cast<size_t>(in.input)) + "]";
    if (in.kind == Instruction::Kind::kUnary) value = unary(in, "v" + std::to_string(in.lhs));
    if (in.kind == Instruction::Kind::kBinary) value = binary(in.op, "v" + std::to_string(in.lhs), "v" + std::to_string(in.rhs));
    out << pad << "const float v" << v << " = " << value << ";\n";
  }
  // The output is dense: its offset is the row-major position of the loop indices.
  std::string position = "i0";
  for (size_t d = 1; d < k.extents.size(); ++d) position = "(" + position + ") * " + std::to_string(k.extents[d]) + " + i" + std::to_string(d);
  out << pad << "output[" << position << "] = v" << k.body.size() - 1 << ";\n";
}

void emit_kernel(std::ostringstream& out, const LoopKernel& k, int width) {
  size_t inputs = 0;
  for (const Instruction& in : k.body)
    if (in.kind == Instruction::Kind::kLoad) inputs = std::max(inputs, static_cast<size_t>(in.input) + 1);
  out << "extern \"C\" void " << k.name << "(const float* const* inputs, float* output) {\n";
  // No __restrict: the executor may run a chain in place (output over input 0).
  for (size_t i = 0; i < inputs; ++i) out << "  const float* in" << i << " = inputs[" << i << "];\n";
  const size_t loops = k.extents.size();
  if (loops > 1 && k.element_count() >= kMinParallelElements)
    out << "#pragma omp parallel for collapse(" << loops - 1 << ")\n";
  for (size_t d = 0; d < loops; ++d) {
    const std::string pad(2 * (d + 1), ' ');
    if (d + 1 == loops) {
      if (loops == 1 && k.element_count() >= kMinParallelElements)
        out << "#pragma omp parallel for simd simdlen(" << width << ")\n";
      else
        out << "#pragma omp simd simdlen(" << width << ")\n";
    }
    out << pad << "for (long i" << d << " = 0; i" << d << " < " << k.extents[d] << "; ++i" << d << ")" << (d + 1 == loops ? " {\n" : "\n");
  }
  emit_body(out, k, std::string(2 * (loops + 1), ' '));
  out << std::string(2 * loops, ' ') << "}\n}\n\n";
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
  out << "// Generated by Kiln: element-wise kernels specialised to one plan's shapes.\n"
      << "#include <algorithm>\n#include <cmath>\n\n";
  for (const LoopKernel& k : kernels) emit_kernel(out, k, width);
  return out.str();
}

}  // namespace kiln::codegen
