// The loop IR that fused element-wise regions lower to before C++ is emitted for them: one loop
// nest over a dense row-major output whose extents and every input's strides are concrete numbers
// (the plan's shapes), and a straight-line body computing one output element from loads of the
// inputs. Broadcast inputs have stride 0 along the dims they repeat over; adjacent dims that every
// buffer walks contiguously (or broadcasts alike) are merged, so most nests are one or two loops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kiln/ir/graph.h"
#include "kiln/status.h"

namespace kiln::codegen {

// One SSA instruction; its result is named by its index in the body.
struct Instruction {
  enum class Kind { kLoad, kUnary, kBinary };
  Kind kind = Kind::kLoad;
  std::string op;        // kUnary: an activation or unary math op; kBinary: Add, Sub, Mul, Div, Max, Min, Pow
  int input = -1;        // kLoad: the kernel input read at the current element
  int lhs = -1, rhs = -1;  // operands: earlier instructions (kUnary uses lhs)
  float alpha = 0, beta = 0;  // activation parameters
};

struct LoopKernel {
  std::string name;                              // the C symbol the kernel is emitted as
  std::vector<int64_t> extents;                  // loop dims, outermost first (the output's, merged)
  std::vector<std::vector<int64_t>> strides;     // per input, per loop dim, in elements (0: broadcast)
  std::vector<Instruction> body;                 // the last instruction's value is stored to the output

  int64_t element_count() const;
  // A readable listing, one line per loop and instruction (tests, --dump).
  std::string to_string() const;
};

// The loop nest of `output` dims over inputs of `input_dims` (each broadcasting to `output`
// without growing it): extents, strides, merged dims. The body is left empty.
LoopKernel loop_nest(const std::string& name, const std::vector<std::vector<int64_t>>& input_dims,
                     const std::vector<int64_t>& output);

// A kiln.ElementwiseChain node at the plan's concrete shapes as a loop kernel named `name`: load
// X, then each step in order. UnsupportedOperator naming the step when it has no lowering.
Result<LoopKernel> lower_elementwise_chain(const ir::Node& chain, const std::string& name,
                                           const std::vector<std::vector<int64_t>>& input_dims,
                                           const std::vector<int64_t>& output);

}  // namespace kiln::codegen
