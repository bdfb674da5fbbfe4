// Bad attributes and indices across op families: each is refused with a classified error
// (InvalidModel for a malformed node, InvalidArgument for bad run-time values) that names the node
// and the attribute or input at fault, never a crash or an out-of-bounds read. Loop bodies and
// sequence indices are covered in control_flow_test.cpp and sequence_test.cpp.
#include <gtest/gtest.h>

#include "ops/rule_harness.h"

namespace kiln::ops {
namespace {

using namespace testing;

struct BadInput {
  std::string label;
  std::string op;
  std::vector<Tensor> inputs;
  Attrs attrs;
  std::string names;  // what the message must mention (attribute, input or concept)
  int opset = 17;
};

Tensor x2x3() { return iota_f32({2, 3}); }
Tensor image() { return iota_f32({1, 1, 4, 4}); }
Tensor kernel() { return iota_f32({1, 1, 2, 2}); }

std::vector<BadInput> cases() {
  return {
      {"softmax axis beyond rank", "Softmax", {x2x3()}, {{"axis", int_attr(-5)}}, "axis"},
      {"concat axis beyond rank", "Concat", {x2x3(), x2x3()}, {{"axis", int_attr(2)}}, "axis"},
      {"gather axis beyond rank", "Gather", {x2x3(), i64({0})}, {{"axis", int_attr(-3)}}, "axis"},
      {"conv zero stride", "Conv", {image(), kernel()}, {{"strides", ints({0, 1})}}, "stride"},
      {"max pool zero stride", "MaxPool", {image()}, {{"kernel_shape", ints({2, 2})}, {"strides", ints({1, 0})}}, "stride"},
      {"conv pads of wrong length", "Conv", {image(), kernel()}, {{"pads", ints({1, 1, 1})}}, "pads"},
      {"average pool negative pads", "AveragePool", {image()}, {{"kernel_shape", ints({2, 2})}, {"pads", ints({0, -1, 0, 0})}}, "pads"},
      {"gather index out of bounds", "Gather", {x2x3(), i64({2})}, {}, "index"},
      {"gather elements index out of bounds", "GatherElements", {x2x3(), i64({2, 1}, {0, 3})}, {{"axis", int_attr(1)}}, "index"},
      {"gather nd index out of bounds", "GatherND", {x2x3(), i64({1, 2}, {1, 5})}, {}, "index"},
      {"scatter elements index out of bounds", "ScatterElements", {x2x3(), i64({1, 1}, {-4}), f32({1, 1}, {9})}, {}, "index"},
      {"scatter nd index out of bounds", "ScatterND", {x2x3(), i64({1, 2}, {2, 0}), f32({1}, {9})}, {}, "index"},
      {"one hot with depth zero", "OneHot", {i64({1}), i64({}, {0}), f32({2}, {0, 1})}, {}, "depth"},
      {"reshape with two -1", "Reshape", {x2x3(), i64({-1, -1})}, {}, "-1"},
      {"reshape to a different size", "Reshape", {x2x3(), i64({4, 2})}, {}, "shape"},
      {"split sizes not summing to the axis", "Split", {x2x3(), i64({1, 1})}, {{"axis", int_attr(1)}}, "split"},
      {"transpose perm not a permutation", "Transpose", {x2x3()}, {{"perm", ints({1, 1})}}, "perm"},
      {"tile with negative repeats", "Tile", {x2x3(), i64({1, -2})}, {}, "repeats"},
  };
}

TEST(BadInput, EachIsAClassifiedErrorNamingNodeAndField) {
  for (const BadInput& c : cases()) {
    std::vector<const Tensor*> inputs;
    for (const Tensor& t : c.inputs) inputs.push_back(&t);
    Result<std::vector<Tensor>> r = evaluate_op(c.op, inputs, c.attrs, c.opset);
    ASSERT_FALSE(r.is_ok()) << c.label << ": accepted";
    const StatusCode code = r.status().code();
    EXPECT_TRUE(code == StatusCode::kInvalidModel || code == StatusCode::kInvalidArgument)
        << c.label << ": " << r.status().to_string();
    EXPECT_NE(r.status().message().find(c.op + " 'test_" + c.op + "'"), std::string::npos) << c.label << ": " << r.status().message();
    EXPECT_NE(r.status().message().find(c.names), std::string::npos) << c.label << ": " << r.status().message();
  }
}

// OneHot's spec gives indices outside [-depth, depth - 1] an all-off row: not an error.
TEST(BadInput, OneHotIndexOutsideDepthGivesOffValues) {
  Tensor indices = i64({2}, {1, 7}), depth = i64({}, {3}), values = f32({2}, {0, 1});
  Tensor y = eval("OneHot", {&indices, &depth, &values})[0];
  EXPECT_EQ(elements<float>(y), (std::vector<float>{0, 1, 0, 0, 0, 0}));
}

}  // namespace
}  // namespace kiln::ops
