// The standard op cases of the differential harness: the operators of the benchmark models over
// several shapes (odd sizes, broadcasting, batches) and dtypes. Providers run all of them.
#pragma once

#include <limits>
#include <map>
#include <random>
#include <vector>

#include "support/differential.h"

namespace kiln::testing {

inline std::vector<OpCase> standard_op_cases() {
  using A = ir::Attribute;
  std::vector<OpCase> cases;
  const std::vector<std::vector<int64_t>> shapes = {{1}, {7}, {3, 5}, {2, 3, 17}, {2, 4, 9, 9}};
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Neg", "Abs", "HardSwish", "Softplus"})
    for (const auto& s : shapes)
      for (DType d : {DType::kFloat, DType::kDouble}) cases.push_back({op, 17, {{d, s}}});
  // The unary ops the cpu provider runs through the registry's element functions, on tensors
  // small and large enough to be spread over threads; values outside a function's domain (Acosh
  // below 1) give NaN on both sides.
  for (const char* op : {"Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Floor", "Ceil",
                         "Round", "Sign", "Reciprocal", "Softsign", "Selu", "Celu", "HardSigmoid", "ThresholdedRelu", "IsNaN", "IsInf",
                         "Shrink"})
    for (const std::vector<int64_t>& s : {std::vector<int64_t>{3, 5}, std::vector<int64_t>{2, 64, 129}})
      cases.push_back({op, op == std::string("Celu") ? 12 : 13, {{DType::kFloat, s}}});
  cases.push_back({"Shrink", 13, {{DType::kInt32, {4, 9}}}, {{"lambd", A::of_float(3)}, {"bias", A::of_float(2)}}});
  cases.push_back({"Sign", 13, {{DType::kInt32, {4, 9}}}});
  cases.push_back({"Erf", 13, {{DType::kFloat, {2, 64, 129}}}});
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    cases.push_back({op, 17, {{DType::kFloat, {2, 3, 4}}, {DType::kFloat, {2, 3, 4}}}});
    cases.push_back({op, 17, {{DType::kFloat, {2, 3, 4}}, {DType::kFloat, {4}}}});
    cases.push_back({op, 17, {{DType::kFloat, {2, 1, 4}}, {DType::kFloat, {3, 1}}}});
    cases.push_back({op, 17, {{DType::kInt64, {5, 6}}, {DType::kInt64, {6}, false, {3, -2, 7, 1, -5, 4}}}});
    cases.push_back({op, 17, {{DType::kFloat, {4}}, {DType::kFloat, {2, 3, 4}}}});
  }
  // ConvTranspose: the OCR head's 2x2 stride-2 upsampling, and pads, dilation, groups, bias, 1-d.
  cases.push_back({"ConvTranspose", 11, {{DType::kFloat, {1, 6, 5, 7}}, {DType::kFloat, {6, 4, 2, 2}, true}, {DType::kFloat, {4}, true}},
                   {{"strides", A::of_ints({2, 2})}}});
  cases.push_back({"ConvTranspose", 11, {{DType::kFloat, {2, 6, 4, 5}}, {DType::kFloat, {6, 2, 3, 3}, true}},
                   {{"group", A::of_int(3)}, {"strides", A::of_ints({2, 1})}, {"pads", A::of_ints({1, 0, 0, 1})},
                    {"dilations", A::of_ints({1, 2})}}});
  cases.push_back({"ConvTranspose", 11, {{DType::kFloat, {1, 3, 9}}, {DType::kFloat, {3, 5, 4}}, {DType::kFloat, {5}}},
                   {{"strides", A::of_ints({3})}, {"pads", A::of_ints({1, 2})}}});
  // ConvTranspose's output size set by output_padding, output_shape and SAME padding (oneDNN's
  // right padding goes negative where the output grows past the last tap).
  cases.push_back({"ConvTranspose", 11, {{DType::kFloat, {1, 4, 5, 6}}, {DType::kFloat, {4, 3, 3, 3}, true}, {DType::kFloat, {3}, true}},
                   {{"strides", A::of_ints({2, 2})}, {"pads", A::of_ints({1, 1, 1, 1})}, {"output_padding", A::of_ints({1, 0})}}});
  cases.push_back({"ConvTranspose", 11, {{DType::kFloat, {2, 3, 4, 4}}, {DType::kFloat, {3, 2, 3, 3}, true}},
                   {{"strides", A::of_ints({3, 2})}, {"output_shape", A::of_ints({12, 10})}}});
  for (const char* auto_pad : {"SAME_UPPER", "SAME_LOWER"})
    cases.push_back({"ConvTranspose", 11, {{DType::kFloat, {1, 2, 5, 5}}, {DType::kFloat, {2, 4, 3, 3}, true}},
                     {{"strides", A::of_ints({2, 2})}, {"auto_pad", A::of_string(auto_pad)}}});
  // Gather (embedding rows, a middle axis, negative indices, other dtypes) and Expand.
  cases.push_back({"Gather", 13, {{DType::kFloat, {5, 7}}, {DType::kInt64, {3}, false, {4, -1, 0}}}});
  cases.push_back({"Gather", 13, {{DType::kFloat, {2, 6, 3}}, {DType::kInt32, {2, 2}, false, {5, 0, -6, 3}}}, {{"axis", A::of_int(1)}}});
  cases.push_back({"Gather", 13, {{DType::kInt64, {4, 3}}, {DType::kInt64, {}, true, {2}}}, {{"axis", A::of_int(-1)}}});
  // Nearest Resize: PyTorch's upsampling (asymmetric, floor) and a downscale to given sizes.
  const TensorSpec no_roi{DType::kUndefined, {}};
  cases.push_back({"Resize", 13, {{DType::kFloat, {1, 3, 5, 7}}, no_roi, {DType::kFloat, {4}, true, {1, 1, 2, 2}}},
                   {{"mode", A::of_string("nearest")}, {"coordinate_transformation_mode", A::of_string("asymmetric")},
                    {"nearest_mode", A::of_string("floor")}}});
  cases.push_back({"Resize", 13, {{DType::kFloat, {2, 3, 9, 8}}, no_roi, no_roi, {DType::kInt64, {4}, true, {2, 3, 4, 13}}},
                   {{"mode", A::of_string("nearest")}}});
  // Linear and cubic Resize: upsampling by scales, downsampling to sizes, corner alignment,
  // exclude_outside, and a map large enough to be spread over threads.
  cases.push_back({"Resize", 13, {{DType::kFloat, {1, 3, 5, 7}}, no_roi, {DType::kFloat, {4}, true, {1, 1, 2, 2}}},
                   {{"mode", A::of_string("linear")}}});
  cases.push_back({"Resize", 13, {{DType::kFloat, {2, 3, 9, 8}}, no_roi, no_roi, {DType::kInt64, {4}, true, {2, 3, 4, 13}}},
                   {{"mode", A::of_string("linear")}, {"coordinate_transformation_mode", A::of_string("align_corners")}}});
  cases.push_back({"Resize", 13, {{DType::kFloat, {1, 2, 6, 6}}, no_roi, {DType::kFloat, {4}, true, {1, 1, 1.5, 0.75}}},
                   {{"mode", A::of_string("cubic")}, {"exclude_outside", A::of_int(1)}, {"cubic_coeff_a", A::of_float(-0.5f)}}});
  cases.push_back({"Resize", 13, {{DType::kFloat, {1, 64, 40, 40}}, no_roi, no_roi, {DType::kInt64, {4}, true, {1, 64, 80, 80}}},
                   {{"mode", A::of_string("linear")}, {"coordinate_transformation_mode", A::of_string("pytorch_half_pixel")}}});
  cases.push_back({"Expand", 13, {{DType::kFloat, {3, 1}}, {DType::kInt64, {3}, true, {2, 3, 4}}}});
  cases.push_back({"Expand", 13, {{DType::kFloat, {1, 1, 5}}, {DType::kInt64, {3}, true, {4, 1, 5}}}});
  cases.push_back({"Expand", 13, {{DType::kInt32, {2, 1, 3}}, {DType::kInt64, {4}, true, {2, 2, 5, 1}}}});
  cases.push_back({"MatMul", 17, {{DType::kFloat, {3, 17}}, {DType::kFloat, {17, 5}}}});
  cases.push_back({"MatMul", 17, {{DType::kFloat, {2, 4, 33, 16}}, {DType::kFloat, {2, 4, 16, 9}}}});
  cases.push_back({"MatMul", 17, {{DType::kFloat, {2, 7, 64}}, {DType::kFloat, {64, 48}}}});
  cases.push_back({"Gemm", 13, {{DType::kFloat, {5, 8}}, {DType::kFloat, {6, 8}}, {DType::kFloat, {6}}},
                   {{"transB", A::of_int(1)}, {"alpha", A::of_float(0.5f)}}});
  cases.push_back({"Conv", 11, {{DType::kFloat, {1, 3, 11, 13}}, {DType::kFloat, {8, 3, 3, 3}}, {DType::kFloat, {8}}},
                   {{"pads", A::of_ints({1, 1, 1, 1})}, {"strides", A::of_ints({2, 1})}}});
  cases.push_back({"Conv", 11, {{DType::kFloat, {2, 6, 9, 9}}, {DType::kFloat, {6, 1, 3, 3}}},
                   {{"group", A::of_int(6)}, {"dilations", A::of_ints({2, 2})}}});
  cases.push_back({"Conv", 11, {{DType::kFloat, {1, 16, 7, 7}}, {DType::kFloat, {32, 16, 1, 1}}}});
  cases.push_back({"MaxPool", 12, {{DType::kFloat, {1, 4, 10, 10}}},
                   {{"kernel_shape", A::of_ints({3, 3})}, {"strides", A::of_ints({2, 2})}, {"pads", A::of_ints({1, 1, 1, 1})}}});
  cases.push_back({"AveragePool", 11, {{DType::kFloat, {1, 4, 10, 10}}},
                   {{"kernel_shape", A::of_ints({2, 2})}, {"strides", A::of_ints({2, 2})}}});
  cases.push_back({"GlobalAveragePool", 1, {{DType::kFloat, {2, 5, 6, 7}}}});
  // Weights as constants (what providers prepack), odd sizes, and the less common geometry.
  const TensorSpec weights_8x3x3x3{DType::kFloat, {8, 3, 3, 3}, true};
  cases.push_back({"Conv", 11, {{DType::kFloat, {2, 3, 15, 17}}, weights_8x3x3x3, {DType::kFloat, {8}, true}},
                   {{"auto_pad", A::of_string("SAME_UPPER")}, {"strides", A::of_ints({2, 2})}}});
  cases.push_back({"Conv", 11, {{DType::kFloat, {1, 12, 9, 11}}, {DType::kFloat, {6, 4, 3, 1}, true}},
                   {{"group", A::of_int(3)}, {"pads", A::of_ints({2, 0, 1, 0})}}});
  cases.push_back({"Conv", 11, {{DType::kFloat, {1, 5, 23}}, {DType::kFloat, {7, 5, 4}, true}}, {{"strides", A::of_ints({3})}}});
  cases.push_back({"Conv", 11, {{DType::kFloat, {1, 3, 5, 6, 7}}, {DType::kFloat, {4, 3, 2, 3, 2}, true}}});
  cases.push_back({"MatMul", 17, {{DType::kFloat, {3, 9, 31}}, {DType::kFloat, {31, 17}, true}}});
  cases.push_back({"MatMul", 17, {{DType::kFloat, {2, 1, 5, 6}}, {DType::kFloat, {3, 6, 4}}}});
  cases.push_back({"Gemm", 13, {{DType::kFloat, {7, 9}}, {DType::kFloat, {11, 9}, true}, {DType::kFloat, {11}, true}},
                   {{"transB", A::of_int(1)}}});
  cases.push_back({"Gemm", 13, {{DType::kFloat, {9, 7}}, {DType::kFloat, {9, 5}}, {DType::kFloat, {7, 1}}}, {{"transA", A::of_int(1)}}});
  cases.push_back({"Gemm", 13, {{DType::kFloat, {4, 6}}, {DType::kFloat, {6, 3}, true}, {DType::kFloat, {4, 3}}},
                   {{"alpha", A::of_float(0.25f)}, {"beta", A::of_float(-2.0f)}}});
  cases.push_back({"Gemm", 13, {{DType::kFloat, {4, 6}}, {DType::kFloat, {3, 6}}}, {{"transB", A::of_int(1)}, {"alpha", A::of_float(3.0f)}}});
  cases.push_back({"MaxPool", 12, {{DType::kFloat, {1, 3, 11, 11}}},
                   {{"kernel_shape", A::of_ints({3, 3})}, {"strides", A::of_ints({2, 2})}, {"ceil_mode", A::of_int(1)}}});
  cases.push_back({"AveragePool", 11, {{DType::kFloat, {1, 3, 9, 9}}},
                   {{"kernel_shape", A::of_ints({3, 3})}, {"pads", A::of_ints({1, 1, 1, 1})}, {"count_include_pad", A::of_int(1)}}});
  cases.push_back({"AveragePool", 11, {{DType::kFloat, {1, 3, 9, 9}}},
                   {{"kernel_shape", A::of_ints({3, 3})}, {"strides", A::of_ints({2, 2})}, {"auto_pad", A::of_string("SAME_LOWER")}}});
  cases.push_back({"GlobalMaxPool", 1, {{DType::kFloat, {2, 3, 5}}}});
  cases.push_back({"Concat", 13, {{DType::kFloat, {1, 3, 5, 4}}, {DType::kFloat, {1, 3, 5, 7}}, {DType::kFloat, {1, 3, 5, 1}}},
                   {{"axis", A::of_int(-1)}}});
  cases.push_back({"Concat", 13, {{DType::kFloat, {2, 16, 3, 3}}, {DType::kFloat, {2, 8, 3, 3}}}, {{"axis", A::of_int(1)}}});
  cases.push_back({"Concat", 13, {{DType::kInt64, {2, 3}}, {DType::kInt64, {2, 1}}, {DType::kInt64, {2, 4}}}, {{"axis", A::of_int(-1)}}});
  // Rows of small pieces (a detector's per-anchor scores and boxes): Kiln's word copies, not the
  // primitive; bytes that are not whole words take memcpy.
  cases.push_back({"Concat", 13, {{DType::kFloat, {1, 700, 2}}, {DType::kFloat, {1, 700, 4}}, {DType::kFloat, {1, 700, 1}}},
                   {{"axis", A::of_int(2)}}});
  cases.push_back({"Concat", 13, {{DType::kUInt8, {40, 3}}, {DType::kUInt8, {40, 2}}}, {{"axis", A::of_int(1)}}});
  cases.push_back({"Slice", 13,
                   {{DType::kFloat, {2, 197, 24}}, {DType::kInt64, {2}, true, {1, -20}}, {DType::kInt64, {2}, true, {150, 1000}},
                    {DType::kInt64, {2}, true, {1, 2}}, {DType::kInt64, {2}, true, {3, 2}}}});
  cases.push_back({"Slice", 13, {{DType::kFloat, {3, 8}}, {DType::kInt64, {1}, true, {1}}, {DType::kInt64, {1}, true, {2}}}});
  // Slices Kiln copies itself: arguments computed by the graph, negative steps, other dtypes.
  cases.push_back({"Slice", 13, {{DType::kFloat, {4, 9, 5}}, {DType::kInt64, {2}, false, {1, -2}}, {DType::kInt64, {2}, false, {4, -9}},
                                 {DType::kInt64, {2}, false, {0, 1}}, {DType::kInt64, {2}, false, {1, -3}}}});
  cases.push_back({"Slice", 13, {{DType::kInt64, {6, 7}}, {DType::kInt64, {1}, true, {5}}, {DType::kInt64, {1}, true, {-100}},
                                 {DType::kInt64, {1}, true, {0}}, {DType::kInt64, {1}, true, {-2}}}});
  cases.push_back({"Slice", 13, {{DType::kFloat, {2, 64, 40, 40}}, {DType::kInt64, {1}, false, {3}}, {DType::kInt64, {1}, false, {60}},
                                 {DType::kInt64, {1}, false, {1}}}});
  // kiln.Attention: scale only; bool mask [B,1,1,T]; additive bias [S,T]; 3-d with V of other width.
  cases.push_back({"kiln.Attention", 1,
                   {{DType::kFloat, {2, 3, 7, 8}}, {DType::kFloat, {2, 3, 8, 7}}, {DType::kFloat, {2, 3, 7, 8}}},
                   {{"scale", A::of_float(0.35f)}}});
  cases.push_back({"kiln.Attention", 1,
                   {{DType::kFloat, {2, 2, 5, 4}}, {DType::kFloat, {2, 2, 4, 6}}, {DType::kFloat, {2, 2, 6, 4}},
                    {DType::kBool, {2, 1, 1, 6}, false, {0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1}}},
                   {{"scale", A::of_float(0.5f)}}});
  cases.push_back({"kiln.Attention", 1,
                   {{DType::kFloat, {6, 9, 4}}, {DType::kFloat, {6, 4, 9}}, {DType::kFloat, {6, 9, 3}}, {DType::kUndefined, {}},
                    {DType::kFloat, {9, 9}}}});
  // kiln.Attention on transposed operands (attention_transpose_folding): BERT's [B,S,H,D] heads with a
  // mask, ViT's sequence-first [S,H,D] heads at batch 1.
  cases.push_back({"kiln.Attention", 1,
                   {{DType::kFloat, {2, 5, 3, 8}}, {DType::kFloat, {2, 5, 3, 8}}, {DType::kFloat, {2, 5, 3, 8}},
                    {DType::kBool, {2, 1, 1, 5}, false, {0, 0, 1, 0, 0, 1, 0, 0, 0, 0}}},
                   {{"scale", A::of_float(0.35f)}, {"q_perm", A::of_ints({0, 2, 1, 3})}, {"kt_perm", A::of_ints({0, 2, 3, 1})},
                    {"v_perm", A::of_ints({0, 2, 1, 3})}, {"y_perm", A::of_ints({0, 2, 1, 3})}}});
  cases.push_back({"kiln.Attention", 1,
                   {{DType::kFloat, {13, 4, 16}}, {DType::kFloat, {13, 4, 16}}, {DType::kFloat, {13, 4, 16}}},
                   {{"scale", A::of_float(0.25f)}, {"q_perm", A::of_ints({1, 0, 2})}, {"kt_perm", A::of_ints({1, 2, 0})},
                    {"v_perm", A::of_ints({1, 0, 2})}, {"y_perm", A::of_ints({1, 0, 2})}}});
  // Reduce*: over the innermost dims (generated in jit mode), over middle or split dims (library),
  // to a scalar, with axes as ReduceSum's constant input, and with nothing to fold.
  const auto axes = [](std::vector<int64_t> a) { return A::of_ints(std::move(a)); };
  cases.push_back({"ReduceMean", 13, {{DType::kFloat, {2, 3, 17}}}, {{"axes", axes({-1})}}});
  cases.push_back({"ReduceSum", 13, {{DType::kFloat, {2, 4, 9, 9}}, {DType::kInt64, {2}, true, {2, 3}}}, {{"keepdims", A::of_int(0)}}});
  cases.push_back({"ReduceSum", 13, {{DType::kFloat, {2, 3, 17}}, {DType::kInt64, {1}, true, {1}}}});
  cases.push_back({"ReduceMax", 13, {{DType::kFloat, {2, 4, 9, 9}}}, {{"axes", axes({1})}}});
  cases.push_back({"ReduceMin", 13, {{DType::kFloat, {3, 5}}}, {{"keepdims", A::of_int(0)}}});
  cases.push_back({"ReduceProd", 13, {{DType::kFloat, {2, 3, 5}}}, {{"axes", axes({2})}}});
  cases.push_back({"ReduceL1", 13, {{DType::kFloat, {2, 3, 17}}}, {{"axes", axes({0, 2})}}});
  cases.push_back({"ReduceL2", 13, {{DType::kFloat, {4, 33}}}, {{"axes", axes({1})}}});
  cases.push_back({"ReduceSumSquare", 13, {{DType::kFloat, {2, 4, 9, 9}}}, {{"axes", axes({2, 3})}}});
  cases.push_back({"ReduceLogSum", 13, {{DType::kFloat, {2, 3, 17}}}, {{"axes", axes({-1})}}});
  cases.push_back({"ReduceLogSumExp", 13, {{DType::kFloat, {2, 3, 17}}}, {{"axes", axes({-1})}}});
  cases.push_back({"ReduceLogSumExp", 13, {{DType::kFloat, {2, 4, 9, 9}}}, {{"axes", axes({1})}}});
  cases.push_back({"ReduceMean", 13, {{DType::kFloat, {2, 1, 5}}}, {{"axes", axes({1})}, {"keepdims", A::of_int(0)}}});
  cases.push_back({"ReduceSum", 13, {{DType::kFloat, {3, 4}}}, {{"noop_with_empty_axes", A::of_int(1)}}});
  // ArgMax/ArgMin: innermost and middle axes, first and last index on ties (small integers tie).
  cases.push_back({"ArgMax", 13, {{DType::kFloat, {2, 3, 17}}}, {{"axis", A::of_int(-1)}}});
  cases.push_back({"ArgMin", 13, {{DType::kFloat, {2, 4, 9, 9}}}, {{"axis", A::of_int(1)}, {"keepdims", A::of_int(0)}}});
  cases.push_back({"ArgMax", 13, {{DType::kFloat, {3, 8}, false, {1, 3, 3, 0, 3, 2, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 2, 2, 1, 2, 2, 0, 0, 1}}},
                   {{"axis", A::of_int(1)}, {"select_last_index", A::of_int(1)}}});
  cases.push_back({"ArgMin", 13, {{DType::kFloat, {4, 3}, false, {1, 0, 2, 0, 0, 1, 2, 1, 1, 0, 2, 0}}}, {{"axis", A::of_int(0)}}});
  // kiln.FusedMatMul: bias, residual, activations.
  cases.push_back({"kiln.FusedMatMul", 1,
                   {{DType::kFloat, {2, 7, 33}}, {DType::kFloat, {33, 20}, true}, {DType::kFloat, {20}, true}},
                   {{"activation", A::of_string("Gelu")}}});
  cases.push_back({"kiln.FusedMatMul", 1,
                   {{DType::kFloat, {9, 16}}, {DType::kFloat, {16, 12}, true}, {DType::kFloat, {12}, true}, {DType::kFloat, {9, 12}}}});
  cases.push_back({"kiln.FusedMatMul", 1,
                   {{DType::kFloat, {2, 3, 5, 8}}, {DType::kFloat, {2, 3, 8, 6}}, {DType::kUndefined, {}}, {DType::kFloat, {2, 3, 5, 6}}},
                   {{"activation", A::of_string("GeluTanh")}}});
  // kiln.FusedConv: residual and activation, channels-first and channels-last.
  const TensorSpec no_bias{DType::kUndefined, {}};
  cases.push_back({"kiln.FusedConv", 1,
                   {{DType::kFloat, {1, 6, 9, 9}}, {DType::kFloat, {8, 6, 3, 3}, true}, {DType::kFloat, {8}, true},
                    {DType::kFloat, {1, 8, 9, 9}}},
                   {{"pads", A::of_ints({1, 1, 1, 1})}, {"activation", A::of_string("Relu")}}});
  cases.push_back({"kiln.FusedConv", 1,
                   {{DType::kFloat, {2, 7, 10, 6}}, {DType::kFloat, {5, 6, 3, 3}, true}, {DType::kFloat, {5}, true}},
                   {{"layout", A::of_string("NHWC")}, {"strides", A::of_ints({2, 1})}, {"activation", A::of_string("Clip")},
                    {"activation_alpha", A::of_float(0.0f)}, {"activation_beta", A::of_float(6.0f)}}});
  cases.push_back({"kiln.FusedConv", 1,
                   {{DType::kFloat, {1, 8, 8, 12}}, {DType::kFloat, {12, 1, 3, 3}, true}, no_bias, {DType::kFloat, {1, 8, 8, 12}}},
                   {{"layout", A::of_string("NHWC")}, {"group", A::of_int(12)}, {"pads", A::of_ints({1, 1, 1, 1})},
                    {"activation", A::of_string("HardSwish")}}});
  cases.push_back({"kiln.FusedConv", 1, {{DType::kFloat, {1, 5, 7, 7}}, {DType::kFloat, {6, 5, 1, 1}, true}, {DType::kFloat, {6}, true}},
                   {{"activation", A::of_string("HardSigmoid")}, {"activation_alpha", A::of_float(0.2f)},
                    {"activation_beta", A::of_float(0.5f)}}});
  // Winograd convolutions (passes/winograd_selection.h), channels-first and channels-last.
  cases.push_back({"kiln.FusedConv", 1,
                   {{DType::kFloat, {1, 16, 12, 11}}, {DType::kFloat, {32, 16, 3, 3}, true}, {DType::kFloat, {32}, true}},
                   {{"pads", A::of_ints({1, 1, 1, 1})}, {"activation", A::of_string("Relu")}, {"algorithm", A::of_string("winograd")}}});
  cases.push_back({"kiln.FusedConv", 1, {{DType::kFloat, {2, 9, 13, 32}}, {DType::kFloat, {16, 32, 3, 3}, true}},
                   {{"layout", A::of_string("NHWC")}, {"algorithm", A::of_string("winograd")}}});
  // Blocked layouts (ops/activation_layout.h), stored [N, C/b, H, W, b]: a residual 1x1 from 16c to 8c, a depthwise
  // with Clip, an image read channels-first into a blocked output, Winograd in its own layout.
  cases.push_back({"kiln.FusedConv", 1,
                   {{DType::kFloat, {2, 2, 7, 7, 16}}, {DType::kFloat, {24, 32, 1, 1}, true}, {DType::kFloat, {24}, true},
                    {DType::kFloat, {2, 3, 7, 7, 8}}},
                   {{"layout", A::of_string("NCHW8c")}, {"input_layout", A::of_string("NCHW16c")}}});
  cases.push_back({"kiln.FusedConv", 1,
                   {{DType::kFloat, {1, 3, 9, 10, 16}}, {DType::kFloat, {48, 1, 3, 3}, true}, {DType::kFloat, {48}, true}},
                   {{"layout", A::of_string("NCHW16c")}, {"group", A::of_int(48)}, {"strides", A::of_ints({2, 2})},
                    {"pads", A::of_ints({1, 1, 1, 1})}, {"activation", A::of_string("Clip")},
                    {"activation_alpha", A::of_float(0.0f)}, {"activation_beta", A::of_float(6.0f)}}});
  cases.push_back({"kiln.FusedConv", 1, {{DType::kFloat, {2, 3, 15, 13}}, {DType::kFloat, {16, 3, 3, 3}, true}, {DType::kFloat, {16}, true}},
                   {{"layout", A::of_string("NCHW8c")}, {"input_layout", A::of_string("NCHW")}, {"strides", A::of_ints({2, 2})},
                    {"pads", A::of_ints({1, 1, 1, 1})}, {"activation", A::of_string("Relu")}}});
  cases.push_back({"kiln.FusedConv", 1, {{DType::kFloat, {1, 2, 11, 12, 16}}, {DType::kFloat, {32, 32, 3, 3}, true}},
                   {{"layout", A::of_string("NCHW16c")}, {"pads", A::of_ints({1, 1, 1, 1})}, {"algorithm", A::of_string("winograd")}}});
  // Dilated, with a residual, in NCHW8c: oneDNN 2.6 has only reference code for it on AVX2, so the
  // kernel runs it channels-last, reordering its input, residual and output.
  cases.push_back({"kiln.FusedConv", 1,
                   {{DType::kFloat, {1, 2, 20, 20, 8}}, {DType::kFloat, {16, 16, 3, 3}, true}, {DType::kFloat, {16}, true},
                    {DType::kFloat, {1, 2, 20, 20, 8}}},
                   {{"layout", A::of_string("NCHW8c")}, {"dilations", A::of_ints({5, 5})}, {"pads", A::of_ints({5, 5, 5, 5})},
                    {"activation", A::of_string("Relu")}}});
  cases.push_back({"kiln.InLayout", 1, {{DType::kFloat, {2, 2, 9, 9, 8}}},
                   {{"op", A::of_string("MaxPool")}, {"op_version", A::of_int(12)}, {"layout", A::of_string("NCHW8c")},
                    {"kernel_shape", A::of_ints({3, 3})}, {"strides", A::of_ints({2, 2})}, {"ceil_mode", A::of_int(1)}}});
  cases.push_back({"kiln.InLayout", 1, {{DType::kFloat, {2, 3, 5, 6, 16}}},
                   {{"op", A::of_string("GlobalAveragePool")}, {"op_version", A::of_int(1)}, {"layout", A::of_string("NCHW16c")}}});
  cases.push_back({"kiln.InLayout", 1, {{DType::kFloat, {1, 6, 7, 5}}},
                   {{"op", A::of_string("AveragePool")}, {"op_version", A::of_int(11)}, {"layout", A::of_string("NHWC")},
                    {"kernel_shape", A::of_ints({2, 2})}}});
  // BatchNormalization inside a region (DenseNet), blocked and channels-last; positive variances.
  // With `relu`, the Relu normalization_activation_fusion folds into it.
  auto bn_in_layout = [&](std::vector<int64_t> stored, int64_t channels, const char* layout, bool relu) {
    std::vector<double> var;
    for (int64_t c = 0; c < channels; ++c) var.push_back(0.5 + 0.1 * static_cast<double>(c));
    std::map<std::string, ir::Attribute> attributes = {
        {"op", A::of_string("BatchNormalization")}, {"op_version", A::of_int(15)}, {"layout", A::of_string(layout)}};
    if (relu) attributes["activation"] = A::of_string("Relu");
    cases.push_back({"kiln.InLayout", 1,
                     {{DType::kFloat, stored}, {DType::kFloat, {channels}, true}, {DType::kFloat, {channels}, true},
                      {DType::kFloat, {channels}, true}, {DType::kFloat, {channels}, true, var}},
                     attributes});
  };
  bn_in_layout({1, 2, 5, 5, 8}, 16, "NCHW8c", false);
  bn_in_layout({2, 3, 4, 4, 16}, 48, "NCHW16c", false);
  bn_in_layout({1, 5, 6, 7}, 7, "NHWC", false);
  bn_in_layout({1, 2, 5, 5, 8}, 16, "NCHW8c", true);
  bn_in_layout({1, 5, 6, 7}, 7, "NHWC", true);
  // kiln.Relayout between every pair the pass inserts, and between two non-plain layouts.
  cases.push_back({"kiln.Relayout", 1, {{DType::kFloat, {2, 24, 5, 7}}}, {{"to", A::of_string("NCHW8c")}}});
  cases.push_back({"kiln.Relayout", 1, {{DType::kFloat, {2, 3, 5, 7, 16}}}, {{"from", A::of_string("NCHW16c")}}});
  cases.push_back({"kiln.Relayout", 1, {{DType::kFloat, {1, 4, 6, 32}}},
                   {{"from", A::of_string("NHWC")}, {"to", A::of_string("NCHW16c")}}});
  // kiln.ElementwiseChain: x * full + row -> Tanh -> max(., 0.25) -> ^2 -> Exp, with broadcast
  // operands (scalar, last dim) and a full one.
  A steps;
  steps.kind = A::Kind::kStrings;
  steps.strings = {"Mul", "Add", "Tanh", "Max", "Pow", "Exp"};
  for (const std::vector<int64_t>& x : std::vector<std::vector<int64_t>>{{2, 3, 17}, {1, 64}})
    cases.push_back({"kiln.ElementwiseChain", 1,
                     {{DType::kFloat, x}, {DType::kFloat, x}, {DType::kFloat, {x.back()}}, {DType::kFloat, {}, true, {0.25}}, {DType::kFloat, {}, true, {2.0}}},
                     {{"steps", steps}, {"operands", A::of_ints({1, 2, -1, 3, 4, -1})}, {"operand_first", A::of_ints({0, 1, 0, 0, 0, 0})}}});
  // Broadcasts oneDNN's binary kernels cannot vectorise (an operand broadcast along dims around a
  // kept one): the cpu kernels broadcast-copy the operand first.
  cases.push_back({"Add", 13, {{DType::kFloat, {2, 3, 4, 5}}, {DType::kFloat, {1, 3, 1, 5}}}});
  A odd_steps;
  odd_steps.kind = A::Kind::kStrings;
  odd_steps.strings = {"Mul", "Relu", "Add"};
  cases.push_back({"kiln.ElementwiseChain", 1,
                   {{DType::kFloat, {2, 3, 4, 5}}, {DType::kFloat, {1, 3, 1, 5}}, {DType::kFloat, {2, 1, 4, 1}}},
                   {{"steps", odd_steps}, {"operands", A::of_ints({1, -1, 2})}, {"operand_first", A::of_ints({0, 0, 0})}}});
  for (int64_t axis : {-1, 1}) {
    cases.push_back({"Softmax", 13, {{DType::kFloat, {2, 3, 19}}}, {{"axis", A::of_int(axis)}}});
    cases.push_back({"ReduceMean", 13, {{DType::kFloat, {2, 3, 19}}}, {{"axes", A::of_ints({axis})}}});
  }
  for (const std::vector<int64_t>& x : std::vector<std::vector<int64_t>>{{2, 5, 7, 9}, {3, 4}, {1, 6, 11}}) {
    const TensorSpec channel{DType::kFloat, {x[1]}, true};
    const TensorSpec variance{DType::kFloat, {x[1]}, true, std::vector<double>(static_cast<size_t>(x[1]), 0.7)};
    cases.push_back({"BatchNormalization", 15, {{DType::kFloat, x}, channel, channel, channel, variance},
                     {{"epsilon", A::of_float(1e-3f)}}});
  }
  cases.push_back({"LayerNormalization", 17, {{DType::kFloat, {2, 5, 32}}, {DType::kFloat, {32}}, {DType::kFloat, {32}}}});
  cases.push_back({"LayerNormalization", 17, {{DType::kFloat, {4, 3, 7}}, {DType::kFloat, {3, 7}, true}},
                   {{"axis", A::of_int(-2)}, {"epsilon", A::of_float(1e-3f)}}});
  cases.push_back({"LogSoftmax", 13, {{DType::kFloat, {3, 37}}}});
  // Short rows (at most 16: shifted, exponentiated by one eltwise primitive, normalised), on one
  // thread and, from 32768 elements, on several; rows of 1; and 17, the primitive again.
  for (const std::vector<int64_t>& x : std::vector<std::vector<int64_t>>{{1, 700, 2}, {4200, 8}, {9, 16}, {7, 1}, {5, 17}}) {
    cases.push_back({"Softmax", 13, {{DType::kFloat, x}}});
    cases.push_back({"LogSoftmax", 13, {{DType::kFloat, x}}});
  }
  cases.push_back({"Softmax", 11, {{DType::kFloat, {2, 3, 5}}}, {{"axis", A::of_int(1)}}});
  cases.push_back({"Transpose", 13, {{DType::kFloat, {2, 3, 4, 5}}}, {{"perm", A::of_ints({0, 2, 1, 3})}}});
  // Other dtypes move as words: 8-byte elements as two 32-bit lanes, 2- and 1-byte ones as bytes.
  cases.push_back({"Transpose", 13, {{DType::kInt64, {3, 1, 4}, false, {5, -6, 7, 1ll << 40, 9, 10, -11, 12, 13, 14, 15, -16}}},
                   {{"perm", A::of_ints({2, 0, 1})}}});
  cases.push_back({"Transpose", 13, {{DType::kDouble, {4, 5}}}});
  cases.push_back({"Transpose", 13, {{DType::kFloat16, {2, 3, 5}}}, {{"perm", A::of_ints({1, 2, 0})}}});
  cases.push_back({"Transpose", 13, {{DType::kBool, {6, 7}}}});
  cases.push_back({"Transpose", 13, {{DType::kInt32, {2, 1, 3, 2, 2, 3}}}, {{"perm", A::of_ints({5, 3, 1, 0, 2, 4})}}});
  // Comparisons, logic, Where, PRelu, Cast, Pad and Split over several dtypes, broadcasts both
  // ways, and tensors large enough to be spread over threads. Small integers make ties.
  const auto small_ints = [](size_t n, int modulo) {
    std::vector<double> v;
    for (size_t i = 0; i < n; ++i) v.push_back(static_cast<double>(static_cast<int>(i * 7 % static_cast<size_t>(modulo)) - modulo / 2));
    return v;
  };
  for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"}) {
    cases.push_back({op, 16, {{DType::kFloat, {2, 3, 4}, false, small_ints(24, 5)}, {DType::kFloat, {4}, false, small_ints(4, 3)}}});
    cases.push_back({op, 16, {{DType::kInt64, {3, 1, 5}, false, small_ints(15, 4)}, {DType::kInt64, {1, 4, 1}, false, small_ints(4, 4)}}});
    cases.push_back({op, 16, {{DType::kFloat16, {6, 7}}, {DType::kFloat16, {}, true, {0.25}}}});
    cases.push_back({op, 16, {{DType::kFloat, {1, 160, 160, 1}, false, small_ints(25600, 9)}, {DType::kFloat, {1, 160, 160, 1}, false, small_ints(25600, 7)}}});
  }
  cases.push_back({"Equal", 13, {{DType::kBool, {2, 5}}, {DType::kBool, {5}}}});
  // Clip whose bounds the graph computes (no constant for oneDNN): both bounds, then a minimum only.
  cases.push_back({"Clip", 13, {{DType::kFloat, {2, 3, 17}}, {DType::kFloat, {}, false, {-0.3}}, {DType::kFloat, {}, false, {0.4}}}});
  cases.push_back({"Clip", 13, {{DType::kFloat, {1, 64, 32, 32}}, {DType::kFloat, {}, false, {0.1}}}});
  // Pow with an exponent tensor (no constant for oneDNN): float, and an integer base.
  cases.push_back({"Pow", 15, {{DType::kFloat, {2, 3, 5}, false, small_ints(30, 7)}, {DType::kFloat, {5}, false, {0, 1, 2, 3, -1}}}});
  cases.push_back({"Pow", 15, {{DType::kInt64, {3, 4}, false, small_ints(12, 5)}, {DType::kInt64, {4}, false, {0, 1, 2, 5}}}});
  // Pow with a constant scalar exponent: the square, sqrt, copy and cube forms, and oneDNN's pow.
  for (double e : {2.0, 0.5, 1.0, 3.0, -1.5})
    cases.push_back({"Pow", 15, {{DType::kFloat, {2, 3, 37}, false, small_ints(222, 9)}, {DType::kFloat, {}, true, {e}}}});
  for (const char* op : {"And", "Or", "Xor"}) cases.push_back({op, 7, {{DType::kBool, {2, 3, 4}}, {DType::kBool, {3, 1}}}});
  cases.push_back({"Not", 1, {{DType::kBool, {7, 9}}}});
  cases.push_back({"Where", 16, {{DType::kBool, {2, 1, 4}}, {DType::kFloat, {3, 1}}, {DType::kFloat, {2, 3, 4}}}});
  cases.push_back({"Where", 16, {{DType::kBool, {64, 1024}}, {DType::kInt64, {64, 1024}}, {DType::kInt64, {}, true, {-1}}}});
  cases.push_back({"PRelu", 16, {{DType::kFloat, {2, 4, 9, 9}}, {DType::kFloat, {4, 1, 1}, true}}});
  cases.push_back({"PRelu", 16, {{DType::kFloat, {1, 64, 56, 56}}, {DType::kFloat, {64, 1, 1}, true}}});
  cases.push_back({"PRelu", 16, {{DType::kFloat, {3, 5}}, {DType::kFloat, {5}}}});
  cases.push_back({"PRelu", 16, {{DType::kInt32, {2, 5}, false, small_ints(10, 9)}, {DType::kInt32, {}, true, {3}}}});
  // 8-bit data over its whole range: random_tensor's integers (0 to 9) would hide saturation and
  // the sign of int8 activations.
  const auto full_range = [](DType dtype, std::vector<int64_t> shape, bool constant = false) {
    std::mt19937 rng(static_cast<unsigned>(shape_element_count(shape)));
    std::vector<double> values(static_cast<size_t>(shape_element_count(shape)));
    for (double& v : values) v = static_cast<double>(static_cast<int>(rng() % 256) - (dtype == DType::kInt8 ? 128 : 0));
    return TensorSpec{dtype, std::move(shape), constant, std::move(values)};
  };
  // Dynamic quantization: the range and rounding of DynamicQuantizeLinear; ConvInteger with uint8
  // and int8 weights, per-tensor and per-channel weight zero points, padding, strides and groups.
  cases.push_back({"DynamicQuantizeLinear", 11, {{DType::kFloat, {2, 3, 17}}}, {}, 3});
  cases.push_back({"DynamicQuantizeLinear", 11, {{DType::kFloat, {1, 64, 32, 32}}}, {}, 3});
  cases.push_back({"ConvInteger", 10,
                   {full_range(DType::kUInt8, {1, 8, 9, 9}), full_range(DType::kUInt8, {16, 8, 3, 3}, true), {DType::kUInt8, {}, false, {120}},
                    {DType::kUInt8, {}, true, {135}}},
                   {{"pads", A::of_ints({1, 1, 1, 1})}}});
  cases.push_back({"ConvInteger", 10,
                   {full_range(DType::kUInt8, {2, 16, 11, 10}), full_range(DType::kUInt8, {16, 8, 3, 3}, true), {DType::kUInt8, {}, false, {3}},
                    {DType::kUInt8, {16}, true, {0, 255, 128, 7, 90, 200, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}},
                   {{"group", A::of_int(2)}, {"strides", A::of_ints({2, 2})}, {"pads", A::of_ints({1, 0, 1, 1})}}});
  cases.push_back({"ConvInteger", 10, {full_range(DType::kUInt8, {1, 3, 7, 7}), full_range(DType::kInt8, {5, 3, 1, 1}, true)}});
  cases.push_back({"ConvInteger", 10,
                   {full_range(DType::kInt8, {1, 4, 6, 6}), full_range(DType::kInt8, {6, 4, 3, 3}, true), {DType::kInt8, {}, false, {-7}},
                    {DType::kInt8, {6}, true, {0, -128, 127, 5, -3, 1}}},
                   {{"dilations", A::of_ints({2, 1})}}});
  // Opset 18-20 element-wise ops: Mish, Gelu's two forms, the bitwise ops with broadcasting.
  cases.push_back({"Mish", 18, {{DType::kFloat, {2, 3, 50}}}});
  cases.push_back({"Gelu", 20, {{DType::kFloat, {4, 77}}}});
  cases.push_back({"Gelu", 20, {{DType::kFloat, {4, 77}}}, {{"approximate", A::of_string("tanh")}}});
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) {
    cases.push_back({op, 18, {{DType::kInt32, {3, 4, 5}, false, small_ints(60, 1000)}, {DType::kInt32, {5}, false, small_ints(5, 77)}}});
    cases.push_back({op, 18, {full_range(DType::kUInt8, {6, 1}), full_range(DType::kUInt8, {1, 7})}});
  }
  cases.push_back({"BitwiseNot", 18, {{DType::kInt64, {2, 9}, false, small_ints(18, 5000)}}});
  cases.push_back({"BitwiseNot", 18, {{DType::kUInt16, {33}}}});
  // Linear quantization over shapes and zero points: per tensor (opset 10 and 13) and per axis,
  // uint8 and int8, float and int32 data, small scales that saturate, an omitted zero point.
  const TensorSpec no_input{DType::kUndefined, {}};
  cases.push_back({"QuantizeLinear", 10, {{DType::kFloat, {2, 3, 40}}, {DType::kFloat, {}, true, {0.02}}, {DType::kUInt8, {}, true, {128}}}});
  cases.push_back({"QuantizeLinear", 13, {{DType::kFloat, {1, 64, 33, 33}}, {DType::kFloat, {}, false, {0.003}}, {DType::kInt8, {}, false, {-3}}}});
  cases.push_back({"QuantizeLinear", 13, {{DType::kFloat, {4, 5, 6}}, {DType::kFloat, {}, true, {0.01}}}});
  cases.push_back({"QuantizeLinear", 13,
                   {{DType::kFloat, {2, 4, 3, 5}}, {DType::kFloat, {4}, true, {0.01, 0.002, 0.1, 1.0}}, {DType::kUInt8, {4}, true, {0, 10, 128, 255}}}});
  cases.push_back({"QuantizeLinear", 13,
                   {{DType::kFloat, {3, 7}}, {DType::kFloat, {7}, true, {0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.07}},
                    {DType::kInt8, {7}, true, {-128, -5, 0, 5, 127, 1, -1}}},
                   {{"axis", A::of_int(-1)}}});
  cases.push_back({"QuantizeLinear", 13, {{DType::kInt32, {2, 50}, false, small_ints(100, 2001)}, {DType::kFloat, {}, true, {3.5}}, {DType::kInt8, {}, true, {2}}}});
  cases.push_back({"DequantizeLinear", 10, {full_range(DType::kUInt8, {2, 3, 40}), {DType::kFloat, {}, true, {0.02}}, {DType::kUInt8, {}, true, {128}}}});
  cases.push_back({"DequantizeLinear", 13, {full_range(DType::kInt8, {1, 64, 33, 33}), {DType::kFloat, {}, false, {0.003}}, {DType::kInt8, {}, false, {-3}}}});
  cases.push_back({"DequantizeLinear", 13,
                   {full_range(DType::kUInt8, {2, 4, 3, 5}), {DType::kFloat, {4}, true, {0.01, 0.002, 0.1, 1.0}}, {DType::kUInt8, {4}, true, {0, 10, 128, 255}}}});
  cases.push_back({"DequantizeLinear", 13, {full_range(DType::kInt8, {3, 7}), {DType::kFloat, {3}, true, {0.5, 0.25, 2.0}}, no_input}, {{"axis", A::of_int(0)}}});
  cases.push_back({"DequantizeLinear", 13, {{DType::kInt32, {2, 50}}, {DType::kFloat, {}, true, {0.125}}}});
  // The narrow quantized types: int4 with a zero point that saturates, uint4 blocks, float8 data.
  cases.push_back({"QuantizeLinear", 21, {{DType::kFloat, {3, 40}}, {DType::kFloat, {}, true, {0.1}}, {DType::kInt4, {}, true, {-3}}}});
  cases.push_back({"DequantizeLinear", 21,
                   {{DType::kUInt4, {4, 6}, true}, {DType::kFloat, {4, 2}, true, {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8}},
                    {DType::kUInt4, {4, 2}, true, {0, 15, 8, 3, 1, 2, 7, 9}}},
                   {{"axis", A::of_int(1)}, {"block_size", A::of_int(3)}}});
  cases.push_back({"QuantizeLinear", 19,
                   {{DType::kFloat, {2, 50}}, {DType::kFloat, {}, true, {0.001}}, {DType::kFloat8E4M3FN, {}, true, {0}}},
                   {{"saturate", A::of_int(0)}}});
  cases.push_back({"DequantizeLinear", 19, {{DType::kFloat8E5M2, {5, 9}}, {DType::kFloat, {}, true, {2.5}}}});
  // Requantizing convolutions: uint8 and int8 activations and outputs, per-tensor and per-channel
  // weight scales and zero points, bias, groups, strides.
  cases.push_back({"QLinearConv", 10,
                   {full_range(DType::kUInt8, {1, 8, 9, 9}), {DType::kFloat, {}, true, {0.02}}, {DType::kUInt8, {}, true, {120}},
                    full_range(DType::kUInt8, {16, 8, 3, 3}, true), {DType::kFloat, {}, true, {0.005}}, {DType::kUInt8, {}, true, {135}},
                    {DType::kFloat, {}, true, {0.05}}, {DType::kUInt8, {}, true, {100}}, {DType::kInt32, {16}, true}},
                   {{"pads", A::of_ints({1, 1, 1, 1})}}});
  std::vector<double> per_channel_scales;
  for (int c = 0; c < 16; ++c) per_channel_scales.push_back(0.001 * (c + 1));
  cases.push_back({"QLinearConv", 10,
                   {full_range(DType::kInt8, {2, 16, 11, 10}), {DType::kFloat, {}, true, {0.03}}, {DType::kInt8, {}, true, {-4}},
                    full_range(DType::kInt8, {16, 8, 3, 3}, true), {DType::kFloat, {16}, true, per_channel_scales},
                    {DType::kInt8, {16}, true, {0, -1, 2, -3, 4, -5, 6, -7, 8, -9, 10, -11, 12, -13, 14, -15}},
                    {DType::kFloat, {}, true, {0.02}}, {DType::kInt8, {}, true, {-10}}},
                   {{"group", A::of_int(2)}, {"strides", A::of_ints({2, 2})}, {"pads", A::of_ints({1, 0, 1, 1})}}});
  // Integer products: rank 1 to 3 A, per-row and per-column zero points and scales, uint8 and int8.
  cases.push_back({"MatMulInteger", 10, {full_range(DType::kUInt8, {4, 33}), full_range(DType::kUInt8, {33, 17}, true), {DType::kUInt8, {}, false, {7}},
                                         {DType::kUInt8, {}, true, {128}}}});
  cases.push_back({"MatMulInteger", 10, {full_range(DType::kInt8, {2, 3, 64}), full_range(DType::kInt8, {64, 40}, true), {DType::kInt8, {3}, false, {-1, 0, 5}},
                                         {DType::kInt8, {40}, true, small_ints(40, 255)}}});
  cases.push_back({"MatMulInteger", 10, {full_range(DType::kUInt8, {64}), full_range(DType::kInt8, {64, 9}, true)}});
  cases.push_back({"MatMulInteger", 10, {full_range(DType::kUInt8, {3, 5, 24}), full_range(DType::kUInt8, {24, 7}), {DType::kUInt8, {}, false, {9}},
                                         {DType::kUInt8, {7}, false, {0, 1, 128, 255, 7, 8, 200}}}});  // B given at run time
  // GroupNormalization: scale and bias per group (18) and per channel (21).
  cases.push_back({"GroupNormalization", 18, {{DType::kFloat, {2, 6, 5, 4}}, {DType::kFloat, {3}, true}, {DType::kFloat, {3}, true}},
                   {{"num_groups", A::of_int(3)}, {"epsilon", A::of_float(1e-3f)}}});
  cases.push_back({"GroupNormalization", 21, {{DType::kFloat, {1, 32, 16, 16}}, {DType::kFloat, {32}}, {DType::kFloat, {32}}},
                   {{"num_groups", A::of_int(8)}}});
  cases.push_back({"InstanceNormalization", 6, {{DType::kFloat, {2, 5, 7, 3}}, {DType::kFloat, {5}, true}, {DType::kFloat, {5}, true}},
                   {{"epsilon", A::of_float(1e-4f)}}});
  // Tile as a broadcast copy: repeats on every axis, on one, none, and a bool and an int64 tensor.
  cases.push_back({"Tile", 13, {{DType::kFloat, {2, 3, 4}}, {DType::kInt64, {3}, true, {2, 1, 3}}}});
  cases.push_back({"Tile", 13, {{DType::kFloat, {1, 64, 33}}, {DType::kInt64, {3}, true, {4, 1, 1}}}});
  cases.push_back({"Tile", 13, {{DType::kInt64, {5}}, {DType::kInt64, {1}, false, {1}}}});
  cases.push_back({"Tile", 13, {{DType::kBool, {2, 2}}, {DType::kInt64, {2}, true, {3, 2}}}});
  // Block rearrangements as 6-d transposes, both DepthToSpace modes, float and int8.
  cases.push_back({"DepthToSpace", 13, {{DType::kFloat, {2, 8, 3, 5}}}, {{"blocksize", A::of_int(2)}}});
  cases.push_back({"DepthToSpace", 13, {{DType::kFloat, {1, 18, 4, 4}}}, {{"blocksize", A::of_int(3)}, {"mode", A::of_string("CRD")}}});
  cases.push_back({"SpaceToDepth", 13, {{DType::kFloat, {2, 3, 6, 4}}}, {{"blocksize", A::of_int(2)}}});
  cases.push_back({"SpaceToDepth", 13, {full_range(DType::kInt8, {1, 2, 9, 3})}, {{"blocksize", A::of_int(3)}}});
  // Dilated windows: Kiln's own pooling loop on cpu.
  cases.push_back({"AveragePool", 19, {{DType::kFloat, {2, 3, 9, 8}}},
                   {{"kernel_shape", A::of_ints({3, 2})}, {"dilations", A::of_ints({2, 3})}, {"pads", A::of_ints({1, 2, 2, 1})},
                    {"count_include_pad", A::of_int(1)}}});
  cases.push_back({"AveragePool", 19, {{DType::kFloat, {1, 4, 7, 7}}},
                   {{"kernel_shape", A::of_ints({3, 3})}, {"dilations", A::of_ints({2, 2})}, {"pads", A::of_ints({2, 2, 2, 2})},
                    {"strides", A::of_ints({2, 1})}}});
  cases.push_back({"MaxPool", 12, {{DType::kFloat, {1, 2, 10, 9}}},
                   {{"kernel_shape", A::of_ints({2, 3})}, {"dilations", A::of_ints({3, 2})}, {"pads", A::of_ints({1, 1, 1, 1})}}});
  cases.push_back({"MatMulInteger", 10, {full_range(DType::kUInt8, {128, 256}), full_range(DType::kUInt8, {256, 96}, true), {DType::kUInt8, {}, false, {130}},
                                         {DType::kUInt8, {96}, true, small_ints(96, 255)}}});
  cases.push_back({"QLinearMatMul", 10,
                   {full_range(DType::kUInt8, {2, 5, 48}), {DType::kFloat, {}, true, {0.02}}, {DType::kUInt8, {}, true, {128}},
                    full_range(DType::kUInt8, {48, 20}, true), {DType::kFloat, {}, true, {0.004}}, {DType::kUInt8, {}, true, {120}},
                    {DType::kFloat, {}, true, {0.1}}, {DType::kUInt8, {}, true, {60}}}});
  std::vector<double> column_scales;
  for (int c = 0; c < 20; ++c) column_scales.push_back(0.0005 * (c + 1));
  cases.push_back({"QLinearMatMul", 10,
                   {full_range(DType::kInt8, {6, 48}), {DType::kFloat, {6}, true, {0.01, 0.02, 0.03, 0.04, 0.05, 0.06}}, {DType::kInt8, {6}, true, {0, 1, -1, 2, -2, 3}},
                    full_range(DType::kInt8, {48, 20}, true), {DType::kFloat, {20}, true, column_scales}, {DType::kInt8, {20}, true, small_ints(20, 200)},
                    {DType::kFloat, {}, true, {0.05}}, {DType::kInt8, {}, true, {-3}}}});
  const auto cast = [&](DType from, DType to, std::vector<int64_t> shape, std::vector<double> values = {}, int opset = 13) {
    cases.push_back({"Cast", opset, {{from, std::move(shape), false, std::move(values)}}, {{"to", A::of_int(static_cast<int64_t>(to))}}});
  };
  cast(DType::kFloat, DType::kInt32, {2, 6}, {-2.7, -0.5, 0.5, 1.5, 2.5, 3e9, -3e9, 7.99, -7.99, 0, 1e-9, 100.25});
  cast(DType::kFloat, DType::kFloat16, {1, 64, 32, 32});
  cast(DType::kFloat16, DType::kFloat, {3, 33});
  cast(DType::kInt64, DType::kFloat, {5, 7});
  cast(DType::kBool, DType::kFloat, {4, 4});
  cast(DType::kFloat, DType::kBool, {2, 4}, {0, -0.0, 1e-30, -2, 0.5, 0, 3, 0});
  cast(DType::kDouble, DType::kFloat, {9});
  cast(DType::kInt64, DType::kInt32, {4}, {1, -1, 4294967297.0, -4294967297.0});
  cast(DType::kUInt8, DType::kInt64, {3, 5});
  // The narrow types: ties, values past the largest float8, 4-bit wrapping.
  const std::vector<double> narrow_probe{1.0625, 1.1875, -2.5, 0.5, -0.5, 448, 464, 500, 1e6, -1e6, 57344, 7.5, -8.5, 16, 0, 3e-3};
  cast(DType::kFloat, DType::kFloat8E4M3FN, {16}, narrow_probe, 19);
  cast(DType::kFloat, DType::kFloat8E5M2FNUZ, {16}, narrow_probe, 19);
  cast(DType::kFloat8E4M3FNUZ, DType::kFloat, {8, 9}, {}, 19);
  cast(DType::kFloat, DType::kInt4, {16}, narrow_probe, 21);
  cast(DType::kInt64, DType::kUInt4, {16}, {-1, 0, 15, 16, 17, 31, -16, 100, 7, 8, 9, 3, 2, 1, -7, -8}, 21);
  cast(DType::kInt4, DType::kFloat, {4, 5}, {}, 21);
  const auto pads = [](std::vector<double> p) { return TensorSpec{DType::kInt64, {static_cast<int64_t>(p.size())}, true, std::move(p)}; };
  cases.push_back({"Pad", 13, {{DType::kFloat, {2, 3, 5, 7}}, pads({0, 0, 1, 2, 0, 0, 2, 1}), {DType::kFloat, {}, true, {1.5}}}});
  cases.push_back({"Pad", 13, {{DType::kFloat, {3, 5}}, pads({1, 2, 1, 2})}, {{"mode", A::of_string("reflect")}}});
  cases.push_back({"Pad", 13, {{DType::kFloat, {2, 16, 40, 40}}, pads({0, 0, 3, 3, 0, 0, 3, 3})}, {{"mode", A::of_string("reflect")}}});
  cases.push_back({"Pad", 13, {{DType::kFloat, {2, 3, 4}}, pads({0, 1, 2, 0, 1, 0})}, {{"mode", A::of_string("edge")}}});
  cases.push_back({"Pad", 13, {{DType::kFloat, {2, 3, 5, 7}}, pads({0, 0, -1, 1, 0, 0, 1, -2})}});
  cases.push_back({"Pad", 13, {{DType::kInt64, {3, 4}}, {DType::kInt64, {4}, false, {1, 0, 0, 2}}, {DType::kInt64, {}, true, {-7}}}});
  cases.push_back({"Pad", 2, {{DType::kFloat, {3, 4}}}, {{"pads", A::of_ints({0, 1, 2, 0})}, {"value", A::of_float(2.5f)}}});
  cases.push_back({"Split", 13, {{DType::kFloat, {2, 6, 5}}, {DType::kInt64, {3}, true, {1, 2, 3}}}, {{"axis", A::of_int(1)}}, 3});
  cases.push_back({"Split", 13, {{DType::kInt64, {4, 6}}}, {{"axis", A::of_int(-1)}}, 2});
  cases.push_back({"Split", 11, {{DType::kFloat, {4, 3}}}, {{"split", A::of_ints({3, 1})}}, 2});
  cases.push_back({"Split", 13, {{DType::kFloat, {1, 116, 28, 28}}}, {{"axis", A::of_int(1)}}, 2});
  cases.push_back({"ConstantOfShape", 20, {{DType::kInt64, {4}, false, {1, 16, 40, 40}}},
                   {{"value", A::of_tensor(Tensor::from_vector<float>(DType::kFloat, {1}, {0.5f}))}}});
  cases.push_back({"ConstantOfShape", 9, {{DType::kInt64, {2}, true, {3, 5}}},
                   {{"value", A::of_tensor(Tensor::from_vector<int32_t>(DType::kInt32, {1}, {-3}))}}});
  cases.push_back({"ConstantOfShape", 9, {{DType::kInt64, {0}, true}}});
  // LSTM on oneDNN: forward with biases and initial states, reverse without, bidirectional with
  // its output regrouped, and weights computed by the graph (packed on each run).
  const TensorSpec none{DType::kUndefined, {}};
  cases.push_back({"LSTM", 14,
                   {{DType::kFloat, {5, 2, 3}}, {DType::kFloat, {1, 16, 3}, true}, {DType::kFloat, {1, 16, 4}, true},
                    {DType::kFloat, {1, 32}, true}, none, {DType::kFloat, {1, 2, 4}}, {DType::kFloat, {1, 2, 4}}},
                   {{"hidden_size", A::of_int(4)}}, 3});
  cases.push_back({"LSTM", 14, {{DType::kFloat, {4, 3, 5}}, {DType::kFloat, {1, 24, 5}, true}, {DType::kFloat, {1, 24, 6}, true}},
                   {{"hidden_size", A::of_int(6)}, {"direction", A::of_string("reverse")}}, 3});
  cases.push_back({"LSTM", 14,
                   {{DType::kFloat, {3, 2, 4}}, {DType::kFloat, {2, 20, 4}, true}, {DType::kFloat, {2, 20, 5}, true},
                    {DType::kFloat, {2, 40}, true}},
                   {{"hidden_size", A::of_int(5)}, {"direction", A::of_string("bidirectional")}}, 3});
  cases.push_back({"LSTM", 14,
                   {{DType::kFloat, {2, 1, 3}}, {DType::kFloat, {1, 8, 3}}, {DType::kFloat, {1, 8, 2}}, {DType::kFloat, {1, 16}}},
                   {{"hidden_size", A::of_int(2)}}, 3});
  // Indexed data movement: GatherElements / ScatterElements with indices smaller than the data on
  // the other dims and negative indices, GatherND with batch dims, scatters with repeated indices
  // (applied in order) and every reduction, on float, int64 and float16.
  auto spread = [](int64_t count, int64_t dim) {  // count indices cycling over [-dim, dim)
    std::vector<double> v;
    for (int64_t i = 0; i < count; ++i) v.push_back(static_cast<double>((i * 7 + 3) % (2 * dim) - dim));
    return v;
  };
  cases.push_back({"GatherElements", 13, {{DType::kFloat, {3, 5, 4}}, {DType::kInt64, {2, 6, 3}, false, spread(36, 5)}},
                   {{"axis", A::of_int(1)}}});
  cases.push_back({"GatherElements", 13, {{DType::kInt64, {4, 3}}, {DType::kInt32, {5, 3}, false, spread(15, 4)}}});
  cases.push_back({"GatherElements", 13, {{DType::kFloat, {8, 64, 33}}, {DType::kInt64, {8, 64, 20}, false, spread(8 * 64 * 20, 33)}},
                   {{"axis", A::of_int(-1)}}});
  cases.push_back({"GatherND", 13, {{DType::kFloat, {4, 5, 6}}, {DType::kInt64, {3, 2}, false, spread(6, 4)}}});
  cases.push_back({"GatherND", 13, {{DType::kFloat, {2, 5, 6, 7}}, {DType::kInt64, {2, 4, 2}, false, spread(16, 5)}},
                   {{"batch_dims", A::of_int(1)}}});
  cases.push_back({"GatherND", 13, {{DType::kInt64, {3, 4}}, {DType::kInt32, {2, 3, 2}, false, spread(12, 3)}}});
  for (const char* reduction : {"none", "add", "mul", "max", "min"}) {
    cases.push_back({"ScatterElements", 18,
                     {{DType::kFloat, {4, 6, 3}}, {DType::kInt64, {4, 5, 2}, false, spread(40, 6)}, {DType::kFloat, {4, 5, 2}}},
                     {{"axis", A::of_int(1)}, {"reduction", A::of_string(reduction)}}});
    cases.push_back({"ScatterND", 18,
                     {{DType::kFloat, {5, 4, 3}}, {DType::kInt64, {6, 1}, false, spread(6, 5)}, {DType::kFloat, {6, 4, 3}}},
                     {{"reduction", A::of_string(reduction)}}});
  }
  cases.push_back({"ScatterElements", 16,
                   {{DType::kInt64, {5, 4}}, {DType::kInt64, {3, 4}, false, spread(12, 5)}, {DType::kInt64, {3, 4}}},
                   {{"reduction", A::of_string("add")}}});
  cases.push_back({"ScatterElements", 13,
                   {{DType::kFloat16, {64, 300}}, {DType::kInt64, {64, 7}, false, spread(64 * 7, 300)}, {DType::kFloat16, {64, 7}}},
                   {{"axis", A::of_int(1)}}});
  cases.push_back({"Scatter", 9, {{DType::kFloat, {3, 3}}, {DType::kInt64, {2, 3}, false, {1, 0, 2, 0, 2, 1}}, {DType::kFloat, {2, 3}}}});
  cases.push_back({"ScatterND", 16,
                   {{DType::kFloat, {4, 5}}, {DType::kInt64, {3, 2}, false, spread(6, 4)}, {DType::kFloat, {3}}},
                   {{"reduction", A::of_string("mul")}}});
  // TopK: the last and a middle axis, smallest first, ties and NaN in fixed values, int64, K = 0 and
  // K = the whole axis, many lines spread over threads. CumSum: every mode, a middle axis given as
  // int32, ints, and one long block whose columns are spread over threads.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  cases.push_back({"TopK", 11, {{DType::kFloat, {3, 17}}, {DType::kInt64, {1}, true, {5}}}, {}, 2});
  cases.push_back({"TopK", 11, {{DType::kFloat, {2, 9, 4}}, {DType::kInt64, {1}, true, {3}}},
                   {{"axis", A::of_int(1)}, {"largest", A::of_int(0)}}, 2});
  cases.push_back({"TopK", 11, {{DType::kFloat, {2, 6}, false, {1, nan, 3, 3, -1, nan, 2, 2, 2, nan, -5, 2}},
                                {DType::kInt64, {1}, true, {4}}}, {}, 2});
  cases.push_back({"TopK", 11, {{DType::kFloat, {2, 6}, false, {1, nan, 3, 3, -1, nan, 2, 2, 2, nan, -5, 2}},
                                {DType::kInt64, {1}, true, {6}}}, {{"largest", A::of_int(0)}}, 2});
  cases.push_back({"TopK", 11, {{DType::kInt64, {4, 7}}, {DType::kInt64, {1}, true, {0}}}, {}, 2});
  cases.push_back({"TopK", 10, {{DType::kFloat, {64, 1000}}, {DType::kInt64, {1}, true, {10}}}, {}, 2});
  cases.push_back({"TopK", 1, {{DType::kDouble, {5, 8}}}, {{"k", A::of_int(8)}}, 2});
  for (int exclusive : {0, 1})
    for (int reverse : {0, 1})
      cases.push_back({"CumSum", 14, {{DType::kFloat, {3, 7, 5}}, {DType::kInt32, {}, true, {1}}},
                       {{"exclusive", A::of_int(exclusive)}, {"reverse", A::of_int(reverse)}}});
  cases.push_back({"CumSum", 14, {{DType::kInt64, {4, 6}}, {DType::kInt64, {}, false, {-1}}}});
  cases.push_back({"CumSum", 11, {{DType::kFloat, {50, 2000}}, {DType::kInt64, {1}, true, {0}}}, {{"reverse", A::of_int(1)}}});
  // Mod (both sign conventions, ints and floats), BitShift, and the variadic Sum, Mean, Max, Min
  // over three broadcast inputs (and one input; ints for Max and Min).
  cases.push_back({"Mod", 13, {{DType::kInt64, {4, 6}, false, spread(24, 9)}, {DType::kInt64, {6}, false, {3, -3, 5, -7, 1, 2}}}});
  cases.push_back({"Mod", 13, {{DType::kInt32, {4, 6}, false, spread(24, 9)}, {DType::kInt32, {6}, false, {3, -3, 5, -7, 1, 2}}},
                   {{"fmod", A::of_int(1)}}});
  cases.push_back({"Mod", 13, {{DType::kFloat, {2, 3, 17}}, {DType::kFloat, {17}}}, {{"fmod", A::of_int(1)}}});
  cases.push_back({"BitShift", 11, {{DType::kUInt32, {3, 5}, false, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
                                    {DType::kUInt32, {5}, false, {0, 1, 3, 31, 32}}}, {{"direction", A::of_string("LEFT")}}});
  cases.push_back({"BitShift", 11, {{DType::kUInt8, {2, 64, 129}}, {DType::kUInt8, {}, false, {3}}}, {{"direction", A::of_string("RIGHT")}}});
  for (const char* op : {"Sum", "Mean", "Max", "Min"}) {
    cases.push_back({op, 13, {{DType::kFloat, {2, 3, 17}}, {DType::kFloat, {17}}, {DType::kFloat, {3, 1}}}});
    cases.push_back({op, 13, {{DType::kFloat, {2, 64, 129}}}});
    cases.push_back({op, 13, {{DType::kDouble, {4, 5}}, {DType::kDouble, {4, 5}}, {DType::kDouble, {4, 5}}, {DType::kDouble, {1}}}});
  }
  cases.push_back({"Max", 13, {{DType::kInt64, {4, 6}}, {DType::kInt64, {6}}, {DType::kInt64, {4, 1}}}});
  cases.push_back({"Min", 13, {{DType::kInt32, {3, 7}}, {DType::kInt32, {3, 7}}}});
  // Trilu (upper and lower, k past either edge, batches, int64), EyeLike (k, other dtype), Range of
  // floats, OneHot (negative indices, a middle axis, float indices, int64 values).
  for (int upper : {0, 1})
    for (double k : {-2.0, 0.0, 1.0, 9.0, -9.0})
      cases.push_back({"Trilu", 14, {{DType::kFloat, {2, 5, 7}}, {DType::kInt64, {}, true, {k}}}, {{"upper", A::of_int(upper)}}});
  cases.push_back({"Trilu", 14, {{DType::kInt64, {6, 4}}}});
  cases.push_back({"Trilu", 14, {{DType::kFloat, {8, 128, 128}}}, {{"upper", A::of_int(0)}}});
  cases.push_back({"EyeLike", 9, {{DType::kFloat, {4, 6}}}, {{"k", A::of_int(2)}}});
  cases.push_back({"EyeLike", 9, {{DType::kFloat, {5, 3}}}, {{"k", A::of_int(-1)}, {"dtype", A::of_int(7)}}});
  cases.push_back({"Range", 11, {{DType::kFloat, {}, true, {-2.5}}, {DType::kFloat, {}, true, {40000}}, {DType::kFloat, {}, true, {1.25}}}});
  cases.push_back({"Range", 11, {{DType::kDouble, {}, true, {3}}, {DType::kDouble, {}, true, {-4}}, {DType::kDouble, {}, true, {-0.5}}}});
  cases.push_back({"OneHot", 11, {{DType::kInt64, {2, 5}, false, {0, 3, -1, 9, -10, 2, 4, 1, 0, 7}}, {DType::kInt64, {}, true, {10}},
                                  {DType::kFloat, {2}, true, {0, 1}}}});
  cases.push_back({"OneHot", 11, {{DType::kFloat, {3, 4}, false, {0, 1, 2, 3, 1.5, -1, 0, 2, 3, 3, 1, 0}}, {DType::kFloat, {1}, true, {4}},
                                  {DType::kInt64, {2}, true, {-7, 5}}}, {{"axis", A::of_int(1)}}});
  // NonMaxSuppression over several batches and classes (selected on threads), corner and centre
  // boxes, with and without a score threshold.
  cases.push_back({"NonMaxSuppression", 11,
                   {{DType::kFloat, {2, 60, 4}}, {DType::kFloat, {2, 7, 60}}, {DType::kInt64, {1}, true, {5}},
                    {DType::kFloat, {1}, true, {0.3}}, {DType::kFloat, {1}, true, {-0.5}}}});
  cases.push_back({"NonMaxSuppression", 11,
                   {{DType::kFloat, {1, 40, 4}}, {DType::kFloat, {1, 3, 40}}, {DType::kInt64, {1}, true, {100}},
                    {DType::kFloat, {1}, true, {0.1}}},
                   {{"center_point_box", A::of_int(1)}}});
  // NonZero (zeros, -0 and NaN among the values; bool; a tensor large enough to be counted in
  // chunks) and Compress (an axis, a condition shorter than it, the flattened input).
  cases.push_back({"NonZero", 13, {{DType::kFloat, {3, 4}, false, {0, 1, -0.0, nan, 2, 0, 0, 3, 0, 0, -1, 0}}}});
  cases.push_back({"NonZero", 13, {{DType::kBool, {2, 3, 5}}}});
  cases.push_back({"NonZero", 13, {{DType::kInt64, {7}, false, {0, 5, 0, 0, -2, 0, 9}}}});
  std::vector<double> sparse(3 * 200 * 101);
  for (size_t i = 0; i < sparse.size(); ++i) sparse[i] = i % 7 == 0 ? 1.5 : 0.0;
  cases.push_back({"NonZero", 13, {{DType::kFloat, {3, 200, 101}, false, sparse}}});
  cases.push_back({"Compress", 11, {{DType::kFloat, {3, 5, 4}}, {DType::kBool, {4}, false, {1, 0, 1, 1}}}, {{"axis", A::of_int(1)}}});
  cases.push_back({"Compress", 11, {{DType::kInt64, {3, 4}}, {DType::kBool, {7}, false, {0, 1, 1, 0, 0, 0, 1}}}});
  cases.push_back({"Compress", 11, {{DType::kFloat, {64, 300}}, {DType::kBool, {300}}}, {{"axis", A::of_int(-1)}}});
  // LpNormalization (L1 and L2, a middle axis, an all-zero line) and LRN (odd and even sizes, a 3-d
  // input, a map large enough for threads).
  cases.push_back({"LpNormalization", 1, {{DType::kFloat, {3, 7, 5}}}, {{"axis", A::of_int(1)}, {"p", A::of_int(1)}}});
  cases.push_back({"LpNormalization", 1, {{DType::kFloat, {2, 4}, false, {0, 0, 0, 0, 3, 4, 0, 0}}}});
  cases.push_back({"LpNormalization", 1, {{DType::kFloat, {64, 512}}}});
  cases.push_back({"LRN", 13, {{DType::kFloat, {2, 7, 5, 6}}}, {{"size", A::of_int(3)}}});
  cases.push_back({"LRN", 13, {{DType::kFloat, {1, 6, 9}}}, {{"size", A::of_int(4)}, {"alpha", A::of_float(0.5f)}, {"bias", A::of_float(2)}}});
  cases.push_back({"LRN", 13, {{DType::kFloat, {1, 64, 27, 27}}}, {{"size", A::of_int(5)}, {"beta", A::of_float(0.6f)}}});
  // GRU, RNN and the LSTMs oneDNN's primitive does not model, on Kiln's recurrent loop: both GRU
  // reset forms, bidirectional with initial states and per-batch lengths, layout 1, peepholes,
  // clip, input_forget, other activations, zero-length rows.
  cases.push_back({"GRU", 14, {{DType::kFloat, {5, 3, 4}}, {DType::kFloat, {1, 18, 4}, true}, {DType::kFloat, {1, 18, 6}, true},
                               {DType::kFloat, {1, 36}, true}}, {{"hidden_size", A::of_int(6)}}, 2});
  cases.push_back({"GRU", 14, {{DType::kFloat, {5, 3, 4}}, {DType::kFloat, {2, 18, 4}, true}, {DType::kFloat, {2, 18, 6}, true},
                               {DType::kFloat, {2, 36}, true}, {DType::kInt32, {3}, false, {5, 2, 0}}, {DType::kFloat, {2, 3, 6}}},
                   {{"hidden_size", A::of_int(6)}, {"direction", A::of_string("bidirectional")}, {"linear_before_reset", A::of_int(1)}}, 2});
  cases.push_back({"GRU", 14, {{DType::kFloat, {2, 7, 3}}, {DType::kFloat, {1, 15, 3}}, {DType::kFloat, {1, 15, 5}}, none, none,
                               {DType::kFloat, {2, 1, 5}}},
                   {{"hidden_size", A::of_int(5)}, {"layout", A::of_int(1)}, {"direction", A::of_string("reverse")}}, 2});
  cases.push_back({"RNN", 14, {{DType::kFloat, {6, 2, 3}}, {DType::kFloat, {1, 4, 3}, true}, {DType::kFloat, {1, 4, 4}, true},
                               {DType::kFloat, {1, 8}, true}},
                   {{"hidden_size", A::of_int(4)}, {"activations", A::of_strings({"Relu"})}}, 2});
  cases.push_back({"RNN", 14, {{DType::kFloat, {4, 3, 5}}, {DType::kFloat, {2, 7, 5}}, {DType::kFloat, {2, 7, 7}}, none,
                               {DType::kInt32, {3}, false, {1, 4, 3}}},
                   {{"hidden_size", A::of_int(7)}, {"direction", A::of_string("bidirectional")}}, 2});
  cases.push_back({"LSTM", 14,
                   {{DType::kFloat, {4, 2, 3}}, {DType::kFloat, {1, 20, 3}, true}, {DType::kFloat, {1, 20, 5}, true},
                    {DType::kFloat, {1, 40}, true}, {DType::kInt32, {2}, false, {4, 2}}, {DType::kFloat, {1, 2, 5}},
                    {DType::kFloat, {1, 2, 5}}, {DType::kFloat, {1, 15}, true}},
                   {{"hidden_size", A::of_int(5)}, {"clip", A::of_float(0.7f)}}, 3});
  cases.push_back({"LSTM", 14, {{DType::kFloat, {2, 5, 3}}, {DType::kFloat, {2, 16, 3}}, {DType::kFloat, {2, 16, 4}}},
                   {{"hidden_size", A::of_int(4)}, {"layout", A::of_int(1)}, {"direction", A::of_string("bidirectional")},
                    {"input_forget", A::of_int(1)},
                    {"activations", A::of_strings({"HardSigmoid", "Softsign", "Elu", "Sigmoid", "Tanh", "Tanh"})}}, 3});
  // Einsum on one batched GEMM: attention's products, a contraction over two labels, a sum of a
  // label of one operand, an outer product, implicit output, ellipsis, one-operand transposes and
  // sums.
  auto einsum = [&](const char* eq, std::vector<std::vector<int64_t>> shapes) {
    std::vector<TensorSpec> in;
    for (auto& s : shapes) in.push_back({DType::kFloat, s});
    cases.push_back({"Einsum", 12, in, {{"equation", A::of_string(eq)}}});
  };
  einsum("bhqd,bhkd->bhqk", {{2, 3, 5, 8}, {2, 3, 7, 8}});
  einsum("bhqk,bhkd->bhqd", {{2, 3, 5, 7}, {2, 3, 7, 8}});
  einsum("ij,jk", {{4, 6}, {6, 3}});
  einsum("abc,cbd->ad", {{3, 4, 5}, {5, 4, 2}});
  einsum("ab,cd->abcd", {{2, 3}, {4, 5}});
  einsum("ijk,kl->jl", {{3, 4, 5}, {5, 6}});
  einsum("...ij,...jk->...ik", {{2, 3, 4, 5}, {2, 3, 5, 2}});
  einsum("nchw->nhwc", {{2, 3, 4, 5}});
  einsum("ij->", {{5, 7}});
  einsum("bij->bj", {{4, 6, 9}});
  einsum("bn,anm,bm->ba", {{2, 3}, {4, 3, 5}, {2, 5}});
  // ReverseSequence with time first and batch first, lengths 0 to the whole axis, int64 data.
  cases.push_back({"ReverseSequence", 10, {{DType::kFloat, {5, 4, 3, 2}}, {DType::kInt64, {4}, false, {5, 0, 1, 3}}}});
  cases.push_back({"ReverseSequence", 10, {{DType::kInt64, {3, 6}}, {DType::kInt64, {3}, false, {6, 2, 4}}},
                   {{"batch_axis", A::of_int(0)}, {"time_axis", A::of_int(1)}}});
  // DFT (a middle axis, complex input, inverse, onesided, zero-padded and cut lengths, opset 20's
  // axis input) and STFT (a window, a complex signal, frame_length without a window) as GEMMs.
  cases.push_back({"DFT", 17, {{DType::kFloat, {2, 16, 3, 1}}}, {{"axis", A::of_int(1)}}});
  cases.push_back({"DFT", 17, {{DType::kFloat, {3, 10, 2}}}, {{"inverse", A::of_int(1)}}});
  cases.push_back({"DFT", 17, {{DType::kFloat, {4, 9, 1}}, {DType::kInt64, {}, true, {12}}}, {{"onesided", A::of_int(1)}}});
  cases.push_back({"DFT", 17, {{DType::kFloat, {2, 12, 5, 2}}, {DType::kInt64, {}, true, {7}}}, {{"axis", A::of_int(1)}}});
  cases.push_back({"DFT", 20, {{DType::kFloat, {6, 4, 2}}, none, {DType::kInt64, {}, true, {0}}}});
  cases.push_back({"DFT", 20, {{DType::kFloat, {8, 400, 1}}}, {{"onesided", A::of_int(1)}}});
  cases.push_back({"STFT", 17, {{DType::kFloat, {2, 1000, 1}}, {DType::kInt64, {}, true, {160}}, {DType::kFloat, {400}}}});
  cases.push_back({"STFT", 17, {{DType::kFloat, {1, 64, 2}}, {DType::kInt64, {}, true, {7}}, none, {DType::kInt64, {}, true, {16}}},
                   {{"onesided", A::of_int(0)}}});
  // GridSample: 2-D every mode, padding and align_corners (linear and nearest on the cpu provider's
  // own path, cubic on the reference's sampling), 3-D.
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    for (const char* padding : {"zeros", "border", "reflection"})
      for (int64_t align_corners : {0, 1})
        cases.push_back({"GridSample", 16, {{DType::kFloat, {2, 3, 6, 7}}, {DType::kFloat, {2, 4, 5, 2}}},
                         {{"mode", A::of_string(mode)}, {"padding_mode", A::of_string(padding)},
                          {"align_corners", A::of_int(align_corners)}}});
  cases.push_back({"GridSample", 20, {{DType::kFloat, {1, 4, 3, 4, 5}}, {DType::kFloat, {1, 2, 3, 4, 3}}},
                   {{"align_corners", A::of_int(1)}}});
  // RoiAlign: avg and max, several rois over two images, sampling ratio given and adaptive.
  for (const char* mode : {"avg", "max"})
    cases.push_back({"RoiAlign", 16,
                     {{DType::kFloat, {2, 3, 10, 12}}, {DType::kFloat, {4, 4}, false, {0, 0, 5, 5, 1.5, 2, 9, 7.5, 3, 1, 11, 9, 0, 0, 12, 10}},
                      {DType::kInt64, {4}, false, {0, 1, 1, 0}}},
                     {{"mode", A::of_string(mode)}, {"output_height", A::of_int(3)}, {"output_width", A::of_int(4)},
                      {"sampling_ratio", A::of_int(std::string(mode) == "avg" ? 2 : 0)}, {"spatial_scale", A::of_float(0.9f)}}});
  // Add, Sub, Mul and Div of dtypes other than float32: Kiln's broadcast loop on cpu.
  cases.push_back({"Add", 14, {{DType::kDouble, {3, 4}}, {DType::kDouble, {4}}}});
  cases.push_back({"Sub", 14, {{DType::kFloat16, {2, 6}}, {DType::kFloat16, {2, 1}}}});
  cases.push_back({"Mul", 14, {{DType::kInt32, {2, 3, 5}, false, small_ints(30, 41)}, {DType::kInt32, {5}, false, small_ints(5, 9)}}});
  cases.push_back({"Div", 14, {{DType::kInt32, {2, 5}, false, small_ints(10, 19)}, {DType::kInt32, {5}, false, {3, -2, 7, 1, -5}}}});
  cases.push_back({"Div", 14, {{DType::kDouble, {4, 3}}, {DType::kDouble, {}, true, {0.3}}}});
  // float64 on cpu: the element functions' loop (Relu, Exp), the reference's loop (MatMul, Softmax, ArgMax).
  cases.push_back({"Relu", 14, {{DType::kDouble, {3, 50}}}});
  cases.push_back({"Exp", 13, {{DType::kDouble, {2, 7}}}});
  cases.push_back({"MatMul", 13, {{DType::kDouble, {4, 6}}, {DType::kDouble, {6, 3}}}});
  cases.push_back({"Softmax", 13, {{DType::kDouble, {3, 9}}}});
  cases.push_back({"ArgMax", 13, {{DType::kDouble, {3, 9}}}, {{"axis", A::of_int(1)}}});
  // DeformConv: groups and offset groups with mask and bias; strides and dilations without.
  cases.push_back({"DeformConv", 19,
                   {{DType::kFloat, {2, 4, 7, 6}}, {DType::kFloat, {6, 2, 3, 3}}, {DType::kFloat, {2, 36, 7, 6}}, {DType::kFloat, {6}},
                    {DType::kFloat, {2, 18, 7, 6}}},
                   {{"group", A::of_int(2)}, {"offset_group", A::of_int(2)}, {"pads", A::of_ints({1, 1, 1, 1})}}});
  cases.push_back({"DeformConv", 19, {{DType::kFloat, {1, 3, 9, 9}}, {DType::kFloat, {5, 3, 2, 2}}, {DType::kFloat, {1, 8, 4, 4}}},
                   {{"strides", A::of_ints({2, 2})}, {"dilations", A::of_ints({2, 2})}}});
  // Det of a batch of matrices and of one; AffineGrid in 2-D and 3-D; MeanVarianceNormalization
  // over its default axes and over one.
  cases.push_back({"Det", 11, {{DType::kFloat, {3, 4, 5, 5}}}});
  cases.push_back({"Det", 11, {{DType::kFloat, {2, 2}}}});
  cases.push_back({"AffineGrid", 20, {{DType::kFloat, {2, 2, 3}}, {DType::kInt64, {4}, true, {2, 3, 5, 7}}}});
  cases.push_back({"AffineGrid", 20, {{DType::kFloat, {1, 3, 4}}, {DType::kInt64, {5}, true, {1, 1, 3, 4, 5}}},
                   {{"align_corners", A::of_int(1)}}});
  cases.push_back({"MeanVarianceNormalization", 13, {{DType::kFloat, {2, 3, 5, 4}}}});
  cases.push_back({"MeanVarianceNormalization", 13, {{DType::kFloat, {3, 6, 8}}}, {{"axes", A::of_ints({1})}}});
  return cases;
}

}  // namespace kiln::testing
