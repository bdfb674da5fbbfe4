// Tests of RandomStream: seeded draws equal NumPy's legacy generator (numpy.random.seed(s)), the
// reference the ONNX test data was made with.
#include "kiln/ops/random_stream.h"

#include <gtest/gtest.h>

namespace kiln::ops {
namespace {

TEST(RandomStream, UniformEqualsNumpyRandomSample) {
  RandomStream stream(0u);  // numpy.random.seed(0); numpy.random.uniform(0, 1, 3)
  EXPECT_DOUBLE_EQ(stream.uniform(), 0.5488135039273248);
  EXPECT_DOUBLE_EQ(stream.uniform(), 0.7151893663724195);
  EXPECT_DOUBLE_EQ(stream.uniform(), 0.6027633760716439);
}

TEST(RandomStream, NormalEqualsNumpyLegacyGauss) {
  RandomStream stream(0u);  // numpy.random.seed(0); numpy.random.normal(size=3)
  EXPECT_DOUBLE_EQ(stream.normal(), 1.764052345967664);
  EXPECT_DOUBLE_EQ(stream.normal(), 0.4001572083672233);
  EXPECT_DOUBLE_EQ(stream.normal(), 0.9787379841057392);
}

TEST(RandomStream, SeedAttributeOfEitherKindSelectsTheSameStream) {
  ir::Node with_int, with_float;
  with_int.attributes["seed"] = ir::Attribute::of_int(42);
  with_float.attributes["seed"] = ir::Attribute::of_float(42.0f);
  RandomStream a(with_int), b(with_float), numpy(42u);
  const double first = numpy.uniform();
  EXPECT_DOUBLE_EQ(a.uniform(), first);
  EXPECT_DOUBLE_EQ(b.uniform(), first);
  EXPECT_DOUBLE_EQ(first, 0.3745401188473625);  // numpy.random.seed(42); numpy.random.uniform()
}

TEST(RandomStream, UnseededStreamsDiffer) {
  ir::Node unseeded;
  RandomStream a(unseeded), b(unseeded);
  EXPECT_NE(a.uniform(), b.uniform());
}

}  // namespace
}  // namespace kiln::ops
