// Tests of kiln.RotaryEmbedding (ONNX's RotaryEmbedding-23): both pair styles, a partial rotary
// dimension, the 3-d and 4-d layouts, caches indexed by position ids or given per position, and
// the refusals.
#include "ops/family_test_util.h"

namespace kiln::ops::testing {
namespace {

// The rotation of one head `x` of size `head` at angle table row (cos, sin), the first `rotary`
// values rotated in pairs, written out from the definition.
std::vector<double> rotated_head(const std::vector<double>& x, const std::vector<double>& cos, const std::vector<double>& sin,
                                 int64_t rotary, bool interleaved) {
  std::vector<double> y = x;
  const int64_t half = rotary / 2;
  for (int64_t i = 0; i < half; ++i) {
    const int64_t a = interleaved ? 2 * i : i, b = interleaved ? 2 * i + 1 : i + half;
    y[a] = x[a] * cos[i] - x[b] * sin[i];
    y[b] = x[a] * sin[i] + x[b] * cos[i];
  }
  return y;
}

struct RotaryCase {
  bool interleaved;
  int64_t rotary;  // 0: the whole head
};

class RotaryEmbedding : public ::testing::TestWithParam<RotaryCase> {};

TEST_P(RotaryEmbedding, RotatesEachHeadAtItsPosition) {
  const RotaryCase c = GetParam();
  const int64_t batch = 1, seq = 2, heads = 2, head = 4, rotary = c.rotary ? c.rotary : head, half = rotary / 2;
  std::vector<float> xs(static_cast<size_t>(batch * seq * heads * head));
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = 0.25f * static_cast<float>(i) - 1.5f;
  const std::vector<int64_t> positions = {3, 1};
  const int64_t max_positions = 4;
  std::vector<float> cos(static_cast<size_t>(max_positions * half)), sin(cos.size());
  for (int64_t p = 0; p < max_positions; ++p)
    for (int64_t i = 0; i < half; ++i) {
      cos[static_cast<size_t>(p * half + i)] = std::cos(0.3f * static_cast<float>(p * (i + 1)));
      sin[static_cast<size_t>(p * half + i)] = std::sin(0.3f * static_cast<float>(p * (i + 1)));
    }
  // X as [batch, seq, heads * head] (3-d) and the same values as [batch, heads, seq, head] (4-d).
  const Tensor x3 = floats({batch, seq, heads * head}, xs);
  std::vector<float> xs4(xs.size());
  for (int64_t s = 0; s < seq; ++s)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t d = 0; d < head; ++d) xs4[static_cast<size_t>((h * seq + s) * head + d)] = xs[static_cast<size_t>((s * heads + h) * head + d)];
  const Tensor x4 = floats({batch, heads, seq, head}, xs4);
  const Tensor cos_cache = floats({max_positions, half}, cos), sin_cache = floats({max_positions, half}, sin);
  const Tensor ids = int64s({batch, seq}, positions);
  const Attrs attrs = {{"interleaved", ir::Attribute::of_int(c.interleaved)}, {"rotary_embedding_dim", ir::Attribute::of_int(c.rotary)}};
  Attrs attrs3 = attrs;
  attrs3["num_heads"] = ir::Attribute::of_int(heads);
  auto out3 = run_kiln("RotaryEmbedding", {&x3, &cos_cache, &sin_cache, &ids}, attrs3);
  auto out4 = run_kiln("RotaryEmbedding", {&x4, &cos_cache, &sin_cache, &ids}, attrs);
  ASSERT_TRUE(out3.is_ok()) << out3.status().to_string();
  ASSERT_TRUE(out4.is_ok()) << out4.status().to_string();
  std::vector<double> want3(xs.size()), want4(xs.size());
  for (int64_t s = 0; s < seq; ++s)
    for (int64_t h = 0; h < heads; ++h) {
      const int64_t p = positions[static_cast<size_t>(s)];
      std::vector<double> x(head), cs(half), sn(half);
      for (int64_t d = 0; d < head; ++d) x[d] = xs[static_cast<size_t>((s * heads + h) * head + d)];
      for (int64_t i = 0; i < half; ++i) cs[i] = cos[static_cast<size_t>(p * half + i)], sn[i] = sin[static_cast<size_t>(p * half + i)];
      const std::vector<double> y = rotated_head(x, cs, sn, rotary, c.interleaved);
      for (int64_t d = 0; d < head; ++d) {
        want3[static_cast<size_t>((s * heads + h) * head + d)] = y[static_cast<size_t>(d)];
        want4[static_cast<size_t>((h * seq + s) * head + d)] = y[static_cast<size_t>(d)];
      }
    }
  expect_near(out3.value()[0], want3, {batch, seq, heads * head});
  expect_near(out4.value()[0], want4, {batch, heads, seq, head});

  // Without position ids the caches hold one row per (batch, seq) position: the rows gathered.
  std::vector<float> cos_rows, sin_rows;
  for (int64_t p : positions)
    for (int64_t i = 0; i < half; ++i) {
      cos_rows.push_back(cos[static_cast<size_t>(p * half + i)]);
      sin_rows.push_back(sin[static_cast<size_t>(p * half + i)]);
    }
  const Tensor cos_given = floats({batch, seq, half}, cos_rows), sin_given = floats({batch, seq, half}, sin_rows);
  auto given = run_kiln("RotaryEmbedding", {&x4, &cos_given, &sin_given, nullptr}, attrs);
  ASSERT_TRUE(given.is_ok()) << given.status().to_string();
  expect_near(given.value()[0], want4, {batch, heads, seq, head});
}

INSTANTIATE_TEST_SUITE_P(Styles, RotaryEmbedding,
                         ::testing::Values(RotaryCase{true, 0}, RotaryCase{false, 0}, RotaryCase{true, 2}, RotaryCase{false, 2}),
                         [](const auto& info) {
                           return std::string(info.param.interleaved ? "AdjacentPairs" : "Halves") +
                                  (info.param.rotary ? "Partial" : "Whole");
                         });

TEST(RotaryEmbeddingRefusals, NameWhatIsWrong) {
  const Tensor x = floats({1, 2, 4}, std::vector<float>(8, 1.0f));
  const Tensor cache = floats({2, 2}, {1, 1, 1, 1});
  const Tensor ids = int64s({1, 2}, {0, 5});
  auto past_cache = run_kiln("RotaryEmbedding", {&x, &cache, &cache, &ids}, {{"num_heads", ir::Attribute::of_int(1)}});
  ASSERT_FALSE(past_cache.is_ok());
  EXPECT_NE(past_cache.status().message().find("position 5"), std::string::npos) << past_cache.status().message();
  const Tensor ok_ids = int64s({1, 2}, {0, 1});
  auto no_heads = run_kiln("RotaryEmbedding", {&x, &cache, &cache, &ok_ids});
  ASSERT_FALSE(no_heads.is_ok());
  EXPECT_NE(no_heads.status().message().find("num_heads"), std::string::npos) << no_heads.status().message();
  auto odd = run_kiln("RotaryEmbedding", {&x, &cache, &cache, &ok_ids},
                      {{"num_heads", ir::Attribute::of_int(1)}, {"rotary_embedding_dim", ir::Attribute::of_int(3)}});
  ASSERT_FALSE(odd.is_ok());
  EXPECT_NE(odd.status().message().find("rotary_embedding_dim"), std::string::npos) << odd.status().message();
}

}  // namespace
}  // namespace kiln::ops::testing
