// Streams (stream.h): a carried state gives exactly the results of runs chained by hand (a plain
// recurrent cell and ONNX's LSTM); outputs go into bound buffers in place; a carried state
// alternates two buffers and never writes the caller's initial state; an output the caller keeps
// is never overwritten; shapes can change; reset, terminate, concurrent streams; every misuse is
// an InvalidArgument naming the input or output; a carried cache updated by kiln.TensorScatter is
// written in place while the stream alone holds it, from the first call when bound to zeros.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <cstring>
#include <set>
#include <thread>

#include "kiln/session.h"
#include "support/model_builder.h"

namespace kiln {
namespace {

using testing::ModelBuilder;
constexpr int kFloat = onnx::TensorProto::FLOAT;

std::vector<float> weights(size_t n, int seed) {
  std::vector<float> w(n);
  for (size_t i = 0; i < n; ++i) w[i] = 0.07f * static_cast<float>(static_cast<int>((i * 7 + seed) % 19) - 9);
  return w;
}

// x: float[N, 16], h: float[N, 8] -> h_out = Tanh(x Wx + h Wh), y = h_out Wy: float[N, 4].
std::string cell_model(const testing::ScratchDir& dir) {
  ModelBuilder b;
  b.input("x", kFloat, {std::string("N"), int64_t{16}});
  b.input("h", kFloat, {std::string("N"), int64_t{8}});
  b.output("y", kFloat, {std::string("N"), int64_t{4}});
  b.output("h_out", kFloat, {std::string("N"), int64_t{8}});
  b.float_initializer("wx", {16, 8}, weights(16 * 8, 1));
  b.float_initializer("wh", {8, 8}, weights(8 * 8, 2));
  b.float_initializer("wy", {8, 4}, weights(8 * 4, 3));
  b.node("MatMul", {"x", "wx"}, {"xw"}, "input_proj");
  b.node("MatMul", {"h", "wh"}, {"hw"}, "state_proj");
  b.node("Add", {"xw", "hw"}, {"pre"}, "sum");
  b.node("Tanh", {"pre"}, {"h_out"}, "tanh");
  b.node("MatMul", {"h_out", "wy"}, {"y"}, "readout");
  return b.save(dir.file("cell.onnx"));
}

// ONNX LSTM over one step: x: float[1, N, 8], h, c: float[1, N, 6] -> Y_h, Y_c (the next state).
std::string lstm_model(const testing::ScratchDir& dir) {
  ModelBuilder b;
  b.input("x", kFloat, {int64_t{1}, std::string("N"), int64_t{8}});
  b.input("h", kFloat, {int64_t{1}, std::string("N"), int64_t{6}});
  b.input("c", kFloat, {int64_t{1}, std::string("N"), int64_t{6}});
  b.output("h_out", kFloat, {int64_t{1}, std::string("N"), int64_t{6}});
  b.output("c_out", kFloat, {int64_t{1}, std::string("N"), int64_t{6}});
  b.float_initializer("w", {1, 24, 8}, weights(24 * 8, 4));
  b.float_initializer("r", {1, 24, 6}, weights(24 * 6, 5));
  b.float_initializer("bias", {1, 48}, weights(48, 6));
  onnx::NodeProto& lstm = b.node("LSTM", {"x", "w", "r", "bias", "", "h", "c"}, {"", "h_out", "c_out"}, "lstm");
  b.int_attribute(lstm, "hidden_size", 6);
  return b.save(dir.file("lstm.onnx"));
}

// A key/value-style cache: cache float[1, 2, 6, 4] gets x float[1, 2, 1, 4] written at position
// at[0] (kiln.TensorScatter along axis 2) -> cache_out, and y = the cache's sum.
std::string cache_model(const testing::ScratchDir& dir) {
  ModelBuilder b;
  onnx::OperatorSetIdProto* kiln_ops = b.proto().add_opset_import();
  kiln_ops->set_domain("kiln");
  kiln_ops->set_version(1);
  b.input("cache", kFloat, {int64_t{1}, int64_t{2}, int64_t{6}, int64_t{4}});
  b.input("x", kFloat, {int64_t{1}, int64_t{2}, int64_t{1}, int64_t{4}});
  b.input("at", onnx::TensorProto::INT64, {int64_t{1}});
  b.output("cache_out", kFloat, {int64_t{1}, int64_t{2}, int64_t{6}, int64_t{4}});
  b.output("y", kFloat, {});
  b.int_attribute(b.node("TensorScatter", {"cache", "x", "at"}, {"cache_out"}, "update", "kiln"), "axis", 2);
  b.int_attribute(b.node("ReduceSum", {"cache_out"}, {"y"}, "sum"), "keepdims", 0);
  return b.save(dir.file("cache.onnx"));
}

bool same(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()) == 0;
}

std::unique_ptr<Session> load(const std::string& path, SessionOptions options = {}) {
  auto session = Session::load(path, options);
  EXPECT_TRUE(session.is_ok()) << session.status().to_string();
  return session.is_ok() ? std::move(session).value() : nullptr;
}

std::vector<Tensor> chunks(int64_t count, int64_t batch) {
  std::vector<Tensor> xs;
  for (int64_t k = 0; k < count; ++k) xs.push_back(random_tensor(DType::kFloat, {batch, 16}, static_cast<uint64_t>(100 + k)));
  return xs;
}

// y of each call of the cell, the state chained by hand through Session::run.
std::vector<Tensor> chained_by_hand(Session& session, const std::vector<Tensor>& xs, Tensor h) {
  std::vector<Tensor> ys;
  for (const Tensor& x : xs) {
    auto out = session.run({{"x", x}, {"h", h}});
    EXPECT_TRUE(out.is_ok()) << out.status().to_string();
    if (!out.is_ok()) return ys;
    ys.push_back(out.value().at("y"));
    h = out.value().at("h_out");
  }
  return ys;
}

TEST(Stream, CarriedStateGivesTheResultsOfRunsChainedByHand) {
  testing::ScratchDir dir("stream");
  auto session = load(cell_model(dir));
  ASSERT_TRUE(session);
  const std::vector<Tensor> xs = chunks(30, 2);
  const Tensor h0 = random_tensor(DType::kFloat, {2, 8}, 5);
  const std::vector<Tensor> expected = chained_by_hand(*session, xs, h0);
  auto stream = session->open_stream();
  ASSERT_TRUE(stream.is_ok()) << stream.status().to_string();
  Stream& s = *stream.value();
  ASSERT_TRUE(s.bind_input("h", h0).is_ok());
  ASSERT_TRUE(s.carry("h_out", "h").is_ok());
  for (size_t k = 0; k < xs.size(); ++k) {
    ASSERT_TRUE(s.bind_input("x", xs[k]).is_ok());
    const Status ran = s.run();
    ASSERT_TRUE(ran.is_ok()) << ran.to_string();
    EXPECT_TRUE(same(s.output("y").value(), expected[k])) << "call " << k;
  }
  EXPECT_EQ(s.calls(), 30);
  const nlohmann::json report = nlohmann::json::parse(session->report_json());
  EXPECT_EQ(report["execution"]["streams"], 1);
  EXPECT_EQ(report["execution"]["stream_plans_built"], 1);
  EXPECT_EQ(report["run"]["runs"], 60);  // 30 by hand, 30 streamed
}

TEST(Stream, LstmStateIsCarriedAndResetStartsOver) {
  testing::ScratchDir dir("stream");
  auto session = load(lstm_model(dir));
  ASSERT_TRUE(session);
  const Tensor zeros = Tensor::allocate(DType::kFloat, {1, 1, 6});
  std::vector<Tensor> xs;
  for (int k = 0; k < 12; ++k) xs.push_back(random_tensor(DType::kFloat, {1, 1, 8}, static_cast<uint64_t>(k)));
  std::vector<Tensor> expected;
  Tensor h = zeros, c = zeros;
  for (const Tensor& x : xs) {
    auto out = session->run({{"x", x}, {"h", h}, {"c", c}});
    ASSERT_TRUE(out.is_ok()) << out.status().to_string();
    h = out.value().at("h_out");
    c = out.value().at("c_out");
    expected.push_back(h);
  }
  auto s = std::move(session->open_stream()).value();
  ASSERT_TRUE(s->bind_input("h", zeros).is_ok());
  ASSERT_TRUE(s->bind_input("c", zeros).is_ok());
  ASSERT_TRUE(s->carry("h_out", "h").is_ok());
  ASSERT_TRUE(s->carry("c_out", "c").is_ok());
  for (int round = 0; round < 2; ++round) {  // the second after reset()
    for (size_t k = 0; k < xs.size(); ++k) {
      ASSERT_TRUE(s->bind_input("x", xs[k]).is_ok());
      ASSERT_TRUE(s->run().is_ok());
      EXPECT_TRUE(same(s->output("h_out").value(), expected[k])) << "round " << round << ", call " << k;
    }
    s->reset();
  }
  EXPECT_TRUE(same(zeros, Tensor::allocate(DType::kFloat, {1, 1, 6}))) << "the initial state was written";
}

TEST(Stream, BoundBuffersAreReadAndWrittenInPlace) {
  testing::ScratchDir dir("stream");
  auto session = load(cell_model(dir));
  ASSERT_TRUE(session);
  std::vector<float> x(16), y(4), h(8, 0.25f);
  auto s = std::move(session->open_stream()).value();
  ASSERT_TRUE(s->bind_input("x", Tensor::view(DType::kFloat, {1, 16}, x.data())).is_ok());
  ASSERT_TRUE(s->bind_input("h", Tensor::view(DType::kFloat, {1, 8}, h.data())).is_ok());
  ASSERT_TRUE(s->bind_output("y", Tensor::view(DType::kFloat, {1, 4}, y.data())).is_ok());
  for (int k = 0; k < 5; ++k) {
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.1f * static_cast<float>(k) - 0.03f * static_cast<float>(i);  // refilled in place
    ASSERT_TRUE(s->run().is_ok());
    const Tensor xt = Tensor::view(DType::kFloat, {1, 16}, x.data()), ht = Tensor::view(DType::kFloat, {1, 8}, h.data());
    auto out = session->run({{"x", xt}, {"h", ht}});
    ASSERT_TRUE(out.is_ok());
    EXPECT_TRUE(same(Tensor::view(DType::kFloat, {1, 4}, y.data()), out.value().at("y"))) << "call " << k;
    EXPECT_EQ(s->output("y").value().raw_data(), y.data());
  }
}

TEST(Stream, CarriedStateAlternatesTwoBuffersAndKeptOutputsAreNotOverwritten) {
  testing::ScratchDir dir("stream");
  auto session = load(cell_model(dir));
  ASSERT_TRUE(session);
  auto s = std::move(session->open_stream()).value();
  ASSERT_TRUE(s->bind_input("x", random_tensor(DType::kFloat, {1, 16}, 1)).is_ok());
  ASSERT_TRUE(s->bind_input("h", Tensor::allocate(DType::kFloat, {1, 8})).is_ok());
  ASSERT_TRUE(s->carry("h_out", "h").is_ok());
  std::set<const void*> state_buffers, output_buffers;
  for (int k = 0; k < 20; ++k) {
    ASSERT_TRUE(s->run().is_ok());
    state_buffers.insert(s->output("h_out").value().raw_data());
    output_buffers.insert(s->output("y").value().raw_data());
  }
  EXPECT_EQ(state_buffers.size(), 2u);
  EXPECT_EQ(output_buffers.size(), 1u);
  const Tensor kept = s->output("y").value();
  const Tensor kept_copy = kept.clone();
  ASSERT_TRUE(s->run().is_ok());
  EXPECT_NE(s->output("y").value().raw_data(), kept.raw_data());
  EXPECT_TRUE(same(kept, kept_copy)) << "a kept output was overwritten";
}

TEST(Stream, ACarriedCacheIsUpdatedInPlaceWhileTheStreamAloneHoldsIt) {
  testing::ScratchDir dir("stream");
  auto session = load(cache_model(dir));
  ASSERT_TRUE(session);
  auto s = std::move(session->open_stream()).value();
  Tensor initial = Tensor::allocate(DType::kFloat, {1, 2, 6, 4});
  std::fill(initial.data<float>(), initial.data<float>() + initial.element_count(), 0.5f);
  const Tensor initial_copy = initial.clone();
  ASSERT_TRUE(s->bind_input("cache", initial).is_ok());
  ASSERT_TRUE(s->carry("cache_out", "cache").is_ok());
  Tensor x = Tensor::allocate(DType::kFloat, {1, 2, 1, 4}), at = Tensor::allocate(DType::kInt64, {1});
  ASSERT_TRUE(s->bind_input("x", x).is_ok());
  ASSERT_TRUE(s->bind_input("at", at).is_ok());
  std::set<const void*> buffers;
  for (int64_t k = 0; k < 6; ++k) {
    std::fill(x.data<float>(), x.data<float>() + 8, static_cast<float>(k + 1));
    at.data<int64_t>()[0] = k;
    ASSERT_TRUE(s->run().is_ok());
    buffers.insert(s->output("cache_out").value().raw_data());  // not kept: the stream alone holds it
    // Positions 0..k hold 1..k+1 in both heads, the rest the initial 0.5.
    double want = 0;
    for (int64_t p = 0; p < 6; ++p) want += 8 * (p <= k ? static_cast<double>(p + 1) : 0.5);
    EXPECT_EQ(s->output("y").value().data<float>()[0], static_cast<float>(want)) << "call " << k;
  }
  EXPECT_EQ(buffers.size(), 1u) << "the cache moved between calls instead of being updated in place";
  EXPECT_TRUE(same(initial, initial_copy)) << "the bound initial state was written";
  // A cache the caller keeps is not written over: the next call writes a buffer of its own.
  const Tensor kept = s->output("cache_out").value();
  const Tensor kept_copy = kept.clone();
  at.data<int64_t>()[0] = 0;
  ASSERT_TRUE(s->run().is_ok());
  EXPECT_NE(s->output("cache_out").value().raw_data(), kept.raw_data());
  EXPECT_TRUE(same(kept, kept_copy)) << "a kept cache was overwritten";
  // A write past the cache's end is an error naming the op's input.
  at.data<int64_t>()[0] = 6;
  const Status outside = s->run();
  EXPECT_EQ(outside.code(), StatusCode::kInvalidArgument) << outside.to_string();
  EXPECT_NE(outside.message().find("write index 6"), std::string::npos) << outside.message();
}

// Zeros bound by bind_zeros are the stream's own: the carried cache is written over them from the
// first call (one buffer throughout), and reset() starts from zeros again.
TEST(Stream, ACacheBoundToZerosIsWrittenInPlaceFromTheFirstCall) {
  testing::ScratchDir dir("stream");
  auto session = load(cache_model(dir));
  ASSERT_TRUE(session);
  auto s = std::move(session->open_stream()).value();
  ASSERT_TRUE(s->bind_zeros("cache", {1, 2, 6, 4}).is_ok());
  ASSERT_TRUE(s->carry("cache_out", "cache").is_ok());
  Tensor x = Tensor::allocate(DType::kFloat, {1, 2, 1, 4}), at = Tensor::allocate(DType::kInt64, {1});
  ASSERT_TRUE(s->bind_input("x", x).is_ok());
  ASSERT_TRUE(s->bind_input("at", at).is_ok());
  auto run_to = [&](int64_t calls) {
    std::set<const void*> buffers;
    for (int64_t k = 0; k < calls; ++k) {
      std::fill(x.data<float>(), x.data<float>() + 8, static_cast<float>(k + 1));
      at.data<int64_t>()[0] = k;
      EXPECT_TRUE(s->run().is_ok());
      buffers.insert(s->output("cache_out").value().raw_data());
      double want = 0;  // positions 0..k hold 1..k+1 in both heads, the rest zeros
      for (int64_t p = 0; p <= k; ++p) want += 8.0 * static_cast<double>(p + 1);
      EXPECT_EQ(s->output("y").value().data<float>()[0], static_cast<float>(want)) << "call " << k;
    }
    return buffers;
  };
  EXPECT_EQ(run_to(4).size(), 1u) << "the first call copied the zeros instead of writing over them";
  s->reset();
  run_to(2);  // from zeros again: positions 2 and 3 of the first run are gone
  EXPECT_EQ(s->bind_zeros("cache", {-1}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s->bind_zeros("no_such_input", {1}).code(), StatusCode::kInvalidArgument);
}

TEST(Stream, NewShapesArePlannedAndChecked) {
  testing::ScratchDir dir("stream");
  auto session = load(cell_model(dir));
  ASSERT_TRUE(session);
  auto s = std::move(session->open_stream()).value();
  ASSERT_TRUE(s->carry("h_out", "h").is_ok());
  for (int64_t batch : {1, 3, 1}) {
    const std::vector<Tensor> xs = chunks(4, batch);
    const Tensor h0 = Tensor::allocate(DType::kFloat, {batch, 8});
    const std::vector<Tensor> expected = chained_by_hand(*session, xs, h0);
    ASSERT_TRUE(s->bind_input("h", h0).is_ok());
    for (size_t k = 0; k < xs.size(); ++k) {
      ASSERT_TRUE(s->bind_input("x", xs[k]).is_ok());
      ASSERT_TRUE(s->run().is_ok());
      EXPECT_TRUE(same(s->output("y").value(), expected[k])) << "batch " << batch << ", call " << k;
    }
  }
  const nlohmann::json e = nlohmann::json::parse(session->report_json())["execution"];
  EXPECT_EQ(e["stream_plans_built"], 2) << "batch 1's plan is kept for its second turn";
  // Batches that disagree: the message names the input.
  ASSERT_TRUE(s->bind_input("x", random_tensor(DType::kFloat, {2, 16}, 1)).is_ok());
  const Status mixed = s->run();
  EXPECT_EQ(mixed.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(mixed.message().find("'"), std::string::npos) << mixed.message();
}

void expect_invalid(const Status& status, const std::string& named) {
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.to_string();
  EXPECT_NE(status.message().find("'" + named + "'"), std::string::npos) << status.message();
}

TEST(Stream, MisuseIsAnInvalidArgumentNamingTheInputOrOutput) {
  testing::ScratchDir dir("stream");
  auto session = load(cell_model(dir));
  ASSERT_TRUE(session);
  auto s = std::move(session->open_stream()).value();
  expect_invalid(s->bind_input("nope", random_tensor(DType::kFloat, {1, 16}, 1)), "nope");
  expect_invalid(s->bind_input("x", random_tensor(DType::kInt64, {1, 16}, 1)), "x");
  expect_invalid(s->bind_output("y", random_tensor(DType::kInt32, {1, 4}, 1)), "y");
  expect_invalid(s->carry("y", "nope"), "nope");
  expect_invalid(s->output("h_out").status(), "h_out");  // before any call
  ASSERT_TRUE(s->bind_input("x", random_tensor(DType::kFloat, {1, 16}, 1)).is_ok());
  expect_invalid(s->run(), "h");  // neither bound nor carried
  ASSERT_TRUE(s->bind_input("h", random_tensor(DType::kFloat, {1, 8, 1}, 1)).is_ok());
  expect_invalid(s->run(), "h");  // wrong rank
  ASSERT_TRUE(s->bind_input("h", random_tensor(DType::kFloat, {1, 8}, 1)).is_ok());
  ASSERT_TRUE(s->bind_output("y", Tensor::allocate(DType::kFloat, {2, 4})).is_ok());
  expect_invalid(s->run(), "y");  // a buffer of another shape
  std::vector<float> shared(64);
  ASSERT_TRUE(s->bind_output("y", Tensor::view(DType::kFloat, {1, 4}, shared.data())).is_ok());
  ASSERT_TRUE(s->bind_input("h", Tensor::view(DType::kFloat, {1, 8}, shared.data() + 2)).is_ok());
  expect_invalid(s->run(), "y");  // overlapping memory
  ASSERT_TRUE(s->bind_output("y", Tensor()).is_ok());  // unbound
  ASSERT_TRUE(s->bind_input("h", random_tensor(DType::kFloat, {1, 8}, 1)).is_ok());
  ASSERT_TRUE(s->run().is_ok());
  ASSERT_TRUE(s->carry("h_out", "h").is_ok());
  expect_invalid(s->bind_output("h_out", Tensor::allocate(DType::kFloat, {1, 8})), "h_out");
  expect_invalid(s->carry("y", "h"), "h");  // h is carried into already
  ASSERT_TRUE(s->run().is_ok());
}

TEST(Stream, TerminateCancelsACallAndTheStreamRunsOn) {
  testing::ScratchDir dir("stream");
  auto session = load(cell_model(dir));
  ASSERT_TRUE(session);
  auto s = std::move(session->open_stream()).value();
  ASSERT_TRUE(s->bind_input("x", random_tensor(DType::kFloat, {1, 16}, 1)).is_ok());
  ASSERT_TRUE(s->bind_input("h", random_tensor(DType::kFloat, {1, 8}, 2)).is_ok());
  ASSERT_TRUE(s->carry("h_out", "h").is_ok());
  RunOptions options;
  options.tag = "utterance-3";
  options.terminate = true;
  const Status cancelled = s->run(options);
  EXPECT_EQ(cancelled.code(), StatusCode::kCancelled);
  EXPECT_NE(cancelled.message().find("utterance-3"), std::string::npos) << cancelled.message();
  EXPECT_EQ(s->calls(), 0);
  options.terminate = false;
  ASSERT_TRUE(s->run(options).is_ok());  // the state was not advanced by the cancelled call
  auto out = session->run({{"x", random_tensor(DType::kFloat, {1, 16}, 1)}, {"h", random_tensor(DType::kFloat, {1, 8}, 2)}});
  ASSERT_TRUE(out.is_ok());
  EXPECT_TRUE(same(s->output("y").value(), out.value().at("y")));
}

TEST(Stream, StreamsRunAlongsideEachOtherAndTheSessionsRuns) {
  testing::ScratchDir dir("stream");
  auto session = load(cell_model(dir));
  ASSERT_TRUE(session);
  const std::vector<Tensor> xs = chunks(50, 1);
  const std::vector<Tensor> expected = chained_by_hand(*session, xs, Tensor::allocate(DType::kFloat, {1, 8}));
  constexpr int kStreams = 3;
  std::vector<int> mismatches(kStreams + 1, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kStreams; ++t)
    threads.emplace_back([&, t] {
      auto s = std::move(session->open_stream()).value();
      if (!s->bind_input("h", Tensor::allocate(DType::kFloat, {1, 8})).is_ok() || !s->carry("h_out", "h").is_ok()) {
        ++mismatches[t];
        return;
      }
      for (size_t k = 0; k < xs.size(); ++k)
        if (!s->bind_input("x", xs[k]).is_ok() || !s->run().is_ok() || !same(s->output("y").value(), expected[k])) ++mismatches[t];
    });
  threads.emplace_back([&] {
    for (int r = 0; r < 3; ++r) {
      const std::vector<Tensor> ys = chained_by_hand(*session, xs, Tensor::allocate(DType::kFloat, {1, 8}));
      if (ys.size() != xs.size() || !same(ys.back(), expected.back())) ++mismatches[kStreams];
    }
  });
  for (std::thread& th : threads) th.join();
  for (int t = 0; t <= kStreams; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

TEST(Stream, SequenceModelsAreRefused) {
  testing::ScratchDir dir("stream");
  ModelBuilder b;
  b.input("x", kFloat, {int64_t{2}});
  b.node("SequenceConstruct", {"x", "x"}, {"pair"});
  onnx::ValueInfoProto* out = b.graph().add_output();
  out->set_name("pair");
  out->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(kFloat);
  auto session = load(b.save(dir.file("sequence.onnx")));
  ASSERT_TRUE(session);
  expect_invalid(session->open_stream().status(), "pair");
}

}  // namespace
}  // namespace kiln
