// Attribute: one named node attribute (ONNX AttributeProto kinds), including nested subgraphs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/ir/shape.h"
#include "kiln/tensor.h"

namespace kiln::ir {

class Graph;

struct Attribute {
  enum class Kind { kInt, kFloat, kString, kTensor, kGraph, kInts, kFloats, kStrings, kTensors, kGraphs, kType };

  Kind kind = Kind::kInt;
  int64_t i = 0;
  float f = 0.0f;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
  std::shared_ptr<const TensorType> type;  // kType (ONNX TYPE_PROTO, e.g. Optional's 'type')

  static Attribute of_int(int64_t v) { Attribute a; a.kind = Kind::kInt; a.i = v; return a; }
  static Attribute of_float(float v) { Attribute a; a.kind = Kind::kFloat; a.f = v; return a; }
  static Attribute of_string(std::string v) { Attribute a; a.kind = Kind::kString; a.s = std::move(v); return a; }
  static Attribute of_ints(std::vector<int64_t> v) { Attribute a; a.kind = Kind::kInts; a.ints = std::move(v); return a; }
  static Attribute of_floats(std::vector<float> v) { Attribute a; a.kind = Kind::kFloats; a.floats = std::move(v); return a; }
  static Attribute of_strings(std::vector<std::string> v) { Attribute a; a.kind = Kind::kStrings; a.strings = std::move(v); return a; }
  static Attribute of_tensor(Tensor v) { Attribute a; a.kind = Kind::kTensor; a.t = std::move(v); return a; }
  static Attribute of_graph(std::shared_ptr<Graph> v) { Attribute a; a.kind = Kind::kGraph; a.g = std::move(v); return a; }
  static Attribute of_type(TensorType v) {
    Attribute a;
    a.kind = Kind::kType;
    a.type = std::make_shared<const TensorType>(std::move(v));
    return a;
  }
};

const char* attribute_kind_name(Attribute::Kind kind);

}  // namespace kiln::ir
