// The loop IR that fused regions lower to before C++ is emitted for them: one loop nest over a
// dense row-major output whose extents and every input's strides are concrete numbers (the plan's
// shapes), and a straight-line body computing one output element from loads of the inputs.
// Broadcast inputs have stride 0 along the dims they repeat over; adjacent dims that every buffer
// walks contiguously (or broadcasts alike) are merged, so most nests are one or two loops.
// Row reductions (normalizations, Reduce* ops): a kReduce instruction folds a value over the
// innermost loop, once per position of the outer loops; later instructions read it as a per-row
// scalar. A body with reductions runs as one pass over the row per reduction, then one that
// stores; a body whose result is itself a per-row scalar (a Reduce* op) stores one value per row.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ops/elementwise_functions.h"
#include "kiln/status.h"

namespace kiln::codegen {

// One SSA instruction; its result is named by its index in the body.
struct Instruction {
  enum class Kind { kLoad, kConstant, kUnary, kBinary, kReduce };
  Kind kind = Kind::kLoad;
  // A row reduction's fold.
  enum class Fold { kSum, kProd, kMax };
  // kUnary: a unary function of the element-wise table; kBinary: a binary one (Add, Sub, Mul,
  // Div, Max, Min, Pow).
  ops::Elementwise function = ops::Elementwise::kAdd;
  Fold fold = Fold::kSum;     // kReduce
  int input = -1;             // kLoad: the kernel input read at the current element
  int lhs = -1, rhs = -1;     // operands: earlier instructions (kUnary and kReduce use lhs)
  float alpha = 0, beta = 0;  // activation parameters
  float value = 0;            // kConstant

  static Instruction load(int input);
  static Instruction constant(float value);
  static Instruction unary(ops::Elementwise function, int x, float alpha = 0, float beta = 0);
  static Instruction binary(ops::Elementwise function, int lhs, int rhs);
  static Instruction reduce(Fold fold, int x);
};

struct LoopKernel {
  std::string name;                              // the C symbol the kernel is emitted as
  std::vector<int64_t> extents;                  // loop dims, outermost first (the output's, merged)
  std::vector<std::vector<int64_t>> strides;     // per input, per loop dim, in elements (0: broadcast)
  std::vector<Instruction> body;                 // the last instruction's value is stored to the output

  int64_t element_count() const;
  bool has_reductions() const;
  // Whether instruction i has one value per row: it reads only reductions and constants.
  bool per_row(int i) const;
  // Whether the result is a per-row scalar, stored once per row: the output has one element per
  // position of the outer loops.
  bool stores_per_row() const { return !body.empty() && per_row(static_cast<int>(body.size()) - 1); }
  // Appends `instruction`; its index.
  int add(Instruction instruction);
  // A readable listing, one line per loop and instruction (tests, debugging).
  std::string to_string() const;
};

// The loop nest of `output` dims over inputs of `input_dims` (each broadcasting to `output`
// without growing it): extents, strides, merged dims. The body is left empty.
LoopKernel loop_nest(const std::string& name, const std::vector<std::vector<int64_t>>& input_dims,
                     const std::vector<int64_t>& output);

// A nest of `rows` x `row_length` for row reductions: input i is a whole [rows, row_length]
// tensor when `shared_row[i]` is false, one row read by every row (scale, bias) when it is true.
LoopKernel row_nest(const std::string& name, int64_t rows, int64_t row_length, const std::vector<bool>& shared_row);

}  // namespace kiln::codegen
