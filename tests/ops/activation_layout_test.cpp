// Tests of activation layouts: names, stored shapes (and the errors naming what does not fit), and
// element placement in the blocked layouts, checked element by element against [N, C/b, H, W, b].
#include "kiln/ops/activation_layout.h"

#include <gtest/gtest.h>

namespace kiln::ops {
namespace {

TEST(ActivationLayout, NamesRoundTrip) {
  for (const char* name : {"NCHW", "NHWC", "NCHW8c", "NCHW16c"}) {
    const std::optional<ActivationLayout> layout = ActivationLayout::parse(name);
    ASSERT_TRUE(layout) << name;
    EXPECT_EQ(layout->name(), name);
  }
  EXPECT_FALSE(ActivationLayout::parse("NCHW4c"));
  EXPECT_FALSE(ActivationLayout::parse("nchw"));
}

TEST(ActivationLayout, StoredShapesKeepSymbolicDims) {
  const ir::Shape x({ir::Dim::symbol("batch"), ir::Dim(32), ir::Dim(7), ir::Dim::symbol("w")});
  const Result<ir::Shape> blocked = stored_shape(x, ActivationLayout::blocked(16));
  ASSERT_TRUE(blocked.is_ok());
  EXPECT_EQ(blocked->to_string(), "[batch,2,7,w,16]");
  const Result<ir::Shape> back = channels_first_shape(*blocked, ActivationLayout::blocked(16));
  ASSERT_TRUE(back.is_ok());
  EXPECT_EQ(*back, x);
  EXPECT_EQ(stored_shape(x, ActivationLayout::channels_last())->to_string(), "[batch,7,w,32]");
}

TEST(ActivationLayout, ChannelsTheBlockDoesNotDivideAreRefused) {
  const ir::Shape x({ir::Dim(1), ir::Dim(24), ir::Dim(5), ir::Dim(5)});
  const Result<ir::Shape> bad = stored_shape(x, ActivationLayout::blocked(16));
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidModel);
  EXPECT_NE(bad.status().message().find("divisible by 16"), std::string::npos) << bad.status().message();
  const ir::Shape unknown({ir::Dim(1), ir::Dim::symbol("c"), ir::Dim(5), ir::Dim(5)});
  EXPECT_FALSE(stored_shape(unknown, ActivationLayout::blocked(8)).is_ok());
  const ir::Shape wrong_block({ir::Dim(1), ir::Dim(3), ir::Dim(5), ir::Dim(5), ir::Dim(16)});
  EXPECT_FALSE(channels_first_shape(wrong_block, ActivationLayout::blocked(8)).is_ok());
}

TEST(ActivationLayout, BlockedTensorsPlaceChannelsInInnermostBlocks) {
  const int64_t n = 2, c = 16, h = 3, w = 2, b = 8;
  std::vector<float> values(static_cast<size_t>(n * c * h * w));
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  const Tensor x = Tensor::from_vector<float>(DType::kFloat, {n, c, h, w}, values);
  const Tensor s = to_stored(x, ActivationLayout::blocked(b));
  ASSERT_EQ(s.shape(), (std::vector<int64_t>{n, c / b, h, w, b}));
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < c; ++ic)
      for (int64_t ih = 0; ih < h; ++ih)
        for (int64_t iw = 0; iw < w; ++iw) {
          const int64_t plain = ((in * c + ic) * h + ih) * w + iw;
          const int64_t blocked = (((in * (c / b) + ic / b) * h + ih) * w + iw) * b + ic % b;
          ASSERT_EQ(s.data<float>()[blocked], x.data<float>()[plain]);
        }
  const Tensor back = to_channels_first(s, ActivationLayout::blocked(b));
  ASSERT_EQ(back.shape(), x.shape());
  for (int64_t i = 0; i < x.element_count(); ++i) ASSERT_EQ(back.data<float>()[i], x.data<float>()[i]);
}

TEST(ActivationLayout, UnknownLayoutAttributesNameTheNode) {
  ir::Node node;
  node.name = "conv7";
  node.op_type = "FusedConv";
  node.attributes["layout"] = ir::Attribute::of_string("NCDHW");
  const Result<ActivationLayout> layout = layout_attribute(node, "layout");
  ASSERT_FALSE(layout.is_ok());
  EXPECT_NE(layout.status().message().find("conv7"), std::string::npos) << layout.status().message();
  EXPECT_NE(layout.status().message().find("NCDHW"), std::string::npos);
}

}  // namespace
}  // namespace kiln::ops
