// The batch sweep: every parity model (bench/models/export.py --variant test) and every zoo model
// (tests/zoo/cases.txt, fetched by `make zoo`) whose inputs have a free batch dimension runs at
// batches 1, 2 and 3, in graph mode and through a .kiln artifact, at the test target (the
// machine's ISA, and capped at AVX2 by the avx2. rerun). Row k of a batch is the reference input
// rolled by k elements, so that rows differ; each row of a batched output must equal what the
// same session gives for that row alone at batch 1 (the plan the parity and zoo tests check
// against PyTorch and ONNX Runtime). Plans that work at batch 1 and fail or mix rows at batch 2 or
// 3 (blocked layouts, Winograd's reorders, a Concat of blocked outputs) are caught here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "kiln/session.h"
#include "kiln/tensor_io.h"
#include "support/model_builder.h"
#include "support/test_target.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// One model and its reference inputs (any batch; row 0 is used).
struct BatchCase {
  std::string name;
  fs::path model;
  std::map<std::string, Tensor> inputs;
  double tolerance = 1e-4;  // max|batched - alone| <= tolerance * max(1, max|alone|)
};

// The tensor's rows [begin, end) along `axis`.
Tensor rows_of(const Tensor& t, size_t axis, int64_t begin, int64_t end) {
  std::vector<int64_t> shape = t.shape();
  const int64_t outer = std::accumulate(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(axis), int64_t{1}, std::multiplies<>());
  const int64_t inner = std::accumulate(shape.begin() + static_cast<std::ptrdiff_t>(axis) + 1, shape.end(), int64_t{1}, std::multiplies<>()) *
                        static_cast<int64_t>(dtype_size(t.dtype()));
  const int64_t rows = shape[axis];
  shape[axis] = end - begin;
  Tensor out = Tensor::allocate(t.dtype(), shape);
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(static_cast<char*>(out.raw_data()) + o * (end - begin) * inner,
                static_cast<const char*>(t.raw_data()) + (o * rows + begin) * inner, static_cast<size_t>((end - begin) * inner));
  return out;
}

// The parts joined along `axis`.
Tensor joined(const std::vector<Tensor>& parts, size_t axis) {
  std::vector<int64_t> shape = parts.front().shape();
  shape[axis] = 0;
  for (const Tensor& p : parts) shape[axis] += p.shape()[axis];
  Tensor out = Tensor::allocate(parts.front().dtype(), shape);
  const int64_t outer = std::accumulate(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(axis), int64_t{1}, std::multiplies<>());
  char* at = static_cast<char*>(out.raw_data());
  for (int64_t o = 0; o < outer; ++o)
    for (const Tensor& p : parts) {
      const size_t bytes = p.byte_size() / static_cast<size_t>(outer);
      std::memcpy(at, static_cast<const char*>(p.raw_data()) + o * static_cast<int64_t>(bytes), bytes);
      at += bytes;
    }
  return out;
}

// The tensor's elements moved `shift` places along its flattened order (same dtype, shape, values).
Tensor rolled(const Tensor& t, int64_t shift) {
  Tensor out = Tensor::allocate(t.dtype(), t.shape());
  const int64_t n = t.element_count(), size = static_cast<int64_t>(dtype_size(t.dtype()));
  if (n == 0) return out;
  shift %= n;
  const char* in = static_cast<const char*>(t.raw_data());
  char* o = static_cast<char*>(out.raw_data());
  std::memcpy(o + shift * size, in, static_cast<size_t>((n - shift) * size));
  std::memcpy(o, in + (n - shift) * size, static_cast<size_t>(shift * size));
  return out;
}

// The batch axis of each input that has one: the axis of the first input's symbolic dim 0's symbol
// (an anonymous symbolic dim 0 counts as batch for its input alone). Empty: no free batch.
std::map<std::string, size_t> batch_axes(const Session& session) {
  std::map<std::string, size_t> axes;
  std::string symbol;
  bool found = false;
  for (const TensorInfo& in : session.inputs())
    if (in.kind == Value::Kind::kTensor && in.rank_known && !in.shape.empty() && in.shape[0] < 0) {
      symbol = in.dim_names[0];
      found = true;
      break;
    }
  if (!found) return axes;
  for (const TensorInfo& in : session.inputs()) {
    if (in.kind != Value::Kind::kTensor || !in.rank_known) continue;
    for (size_t a = 0; a < in.shape.size(); ++a)
      if (in.shape[a] < 0 && (symbol.empty() ? a == 0 : in.dim_names[a] == symbol)) {
        axes[in.name] = a;
        break;
      }
  }
  return axes;
}

std::string max_error_text(double error, double scale) {
  std::ostringstream s;
  s.precision(3);
  s << std::scientific << "max abs error " << error << ", scale " << scale;
  return s.str();
}

// Whether `got` equals `want` within the tolerance (floats) or exactly (other dtypes); "" or why not.
std::string difference(const Tensor& got, const Tensor& want, double tolerance) {
  if (got.dtype() != want.dtype() || got.shape() != want.shape())
    return "got " + std::string(dtype_name(got.dtype())) + shape_to_string(got.shape()) + ", alone " + dtype_name(want.dtype()) +
           shape_to_string(want.shape());
  const bool floating = want.dtype() == DType::kFloat || want.dtype() == DType::kDouble || want.dtype() == DType::kFloat16 ||
                        want.dtype() == DType::kBFloat16;
  double error = 0, scale = 0;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    const double g = element_as_double(got, i), w = element_as_double(want, i);
    if (std::isnan(g) && std::isnan(w)) continue;
    error = std::max(error, std::isfinite(g - w) ? std::fabs(g - w) : (g == w ? 0.0 : INFINITY));
    scale = std::max(scale, std::isfinite(w) ? std::fabs(w) : 0.0);
  }
  const double allowed = floating ? tolerance * std::max(1.0, scale) : 0.0;
  return error <= allowed ? "" : max_error_text(error, scale);
}

// Runs `session` at batches 1, 2, 3 and compares each row with `alone` (row k's outputs at batch 1).
void check_batches(Session& session, const std::map<std::string, size_t>& axes, const std::vector<std::map<std::string, Tensor>>& rows,
                   const std::vector<std::map<std::string, Tensor>>& alone, const BatchCase& c, const std::string& how) {
  for (int64_t batch = 1; batch <= 3; ++batch) {
    std::map<std::string, Tensor> inputs;
    for (const auto& [name, tensor] : rows[0]) {
      const auto axis = axes.find(name);
      if (axis == axes.end()) {
        inputs[name] = tensor;
        continue;
      }
      std::vector<Tensor> parts;
      for (int64_t k = 0; k < batch; ++k) parts.push_back(rows[static_cast<size_t>(k)].at(name));
      inputs[name] = joined(parts, axis->second);
    }
    auto outputs = session.run(inputs);
    ASSERT_TRUE(outputs.is_ok()) << c.name << " " << how << " at batch " << batch << ": " << outputs.status().to_string();
    int compared = 0;
    for (const auto& [name, got] : outputs.value()) {
      const Tensor& want0 = alone[0].at(name);
      // The axis along which the output grows with the batch: rows of the batch, in order.
      std::optional<size_t> axis;
      for (size_t a = 0; a < want0.shape().size() && !axis; ++a) {
        std::vector<int64_t> expected = want0.shape();
        expected[a] *= batch;
        if (got.shape() == expected && (batch > 1 || a == 0)) axis = a;
      }
      if (!axis) {
        ADD_FAILURE() << c.name << " " << how << " at batch " << batch << ": output '" << name << "' is " << shape_to_string(got.shape())
                      << ", not " << batch << " rows of " << shape_to_string(want0.shape());
        continue;
      }
      const int64_t rows_per_item = want0.shape()[*axis];
      for (int64_t k = 0; k < batch; ++k) {
        const std::string why = difference(rows_of(got, *axis, k * rows_per_item, (k + 1) * rows_per_item),
                                           alone[static_cast<size_t>(k)].at(name), c.tolerance);
        EXPECT_TRUE(why.empty()) << c.name << " " << how << " at batch " << batch << ": output '" << name << "' row " << k
                                 << " differs from that row alone: " << why;
      }
      ++compared;
    }
    EXPECT_GT(compared, 0) << c.name;
  }
}

// The case at batches 1, 2 and 3 in graph mode and through an artifact. False when the model has
// no free batch dimension.
bool sweep_batches(const BatchCase& c) {
  SessionOptions options;
  options.isa = testing::test_isa();
  // The load-time plan (and the artifact's) at the reference inputs' shapes: a symbolic dim other
  // than the batch (a signal's length) would be 1 otherwise, too short for the model's windows.
  for (const auto& [name, tensor] : c.inputs) options.input_shapes[name] = tensor.shape();
  auto session = Session::load(c.model.string(), options);
  EXPECT_TRUE(session.is_ok()) << c.name << ": " << session.status().to_string();
  if (!session.is_ok()) return true;
  const std::map<std::string, size_t> axes = batch_axes(*session.value());
  if (axes.empty()) return false;
  // Row k: the reference's first row, rolled by 7k elements.
  std::vector<std::map<std::string, Tensor>> rows(3);
  for (const auto& [name, tensor] : c.inputs) {
    const auto axis = axes.find(name);
    for (int64_t k = 0; k < 3; ++k)
      rows[static_cast<size_t>(k)][name] = axis == axes.end() ? tensor : rolled(rows_of(tensor, axis->second, 0, 1), 7 * k);
  }
  std::vector<std::map<std::string, Tensor>> alone;
  for (const auto& row : rows) {
    auto out = session.value()->run(row);
    EXPECT_TRUE(out.is_ok()) << c.name << " at batch 1: " << out.status().to_string();
    if (!out.is_ok()) return true;
    alone.push_back(std::move(out).value());
  }
  check_batches(*session.value(), axes, rows, alone, c, "graph");

  testing::ScratchDir scratch("batch_sweep");
  const std::string artifact = scratch.file(c.name + ".kiln");
  const Status written = session.value()->write_artifact(artifact);
  EXPECT_TRUE(written.is_ok()) << c.name << ": " << written.to_string();
  if (!written.is_ok()) return true;
  auto from_artifact = Session::load(artifact, options);
  EXPECT_TRUE(from_artifact.is_ok()) << c.name << ": " << from_artifact.status().to_string();
  if (from_artifact.is_ok()) check_batches(*from_artifact.value(), axes, rows, alone, c, "artifact");
  return true;
}

// ---- the parity models ----

BatchCase parity_case(const std::string& model) {
  const fs::path dir = fs::path(KILN_BINARY_DIR) / "models" / model;
  BatchCase c{model, dir / "model.onnx", {}};
  std::ifstream meta_file(dir / "meta.json");
  EXPECT_TRUE(meta_file.good()) << "no " << (dir / "meta.json") << ": export the parity models with `make models`";
  if (!meta_file.good()) return c;
  const nlohmann::json meta = nlohmann::json::parse(meta_file);
  for (const auto& in : meta.at("inputs")) {
    const std::string name = in.at("name");
    auto tensor = read_tensor_file((dir / ("input_" + name + ".npy")).string());
    EXPECT_TRUE(tensor.is_ok()) << tensor.status().to_string();
    if (tensor.is_ok()) c.inputs[name] = std::move(tensor).value();
  }
  return c;
}

TEST(ModelBatches, ParityModelsAtBatchesOneToThree) {
  for (const char* model : {"resnet50", "mobilenet_v2", "squeezenet1_1", "vit_b_16", "bert_encoder", "gpt2_decoder", "ocr_det"}) {
    const BatchCase c = parity_case(model);
    if (c.inputs.empty()) continue;
    EXPECT_TRUE(sweep_batches(c)) << model << " has no free batch dimension (bench/models/export.py exports every one with it)";
  }
}

// ---- the zoo ----

fs::path zoo_dir() {
  const char* dir = std::getenv("KILN_ZOO_DIR");
  if (dir && *dir) return dir;
  const char* home = std::getenv("HOME");
  return fs::path(home ? home : "/root") / ".cache" / "kiln" / "zoo";
}

// tests/zoo/tolerances.txt: CASE TOL REASON...
std::map<std::string, double> zoo_tolerances() {
  std::map<std::string, double> tolerances;
  std::ifstream file(fs::path(KILN_SOURCE_DIR) / "tests" / "zoo" / "tolerances.txt");
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string name;
    double tolerance = 0;
    if (fields >> name >> tolerance) tolerances[name] = tolerance;
  }
  return tolerances;
}

TEST(ModelBatches, ZooModelsWithAFreeBatchAtBatchesOneToThree) {
  const fs::path zoo = zoo_dir();
  if (!fs::exists(zoo / "models")) GTEST_SKIP() << "the zoo is not fetched (" << zoo << "): `make zoo`";
  const std::map<std::string, double> tolerances = zoo_tolerances();
  std::ifstream cases(fs::path(KILN_SOURCE_DIR) / "tests" / "zoo" / "cases.txt");
  std::string line;
  std::vector<std::string> swept, fixed;
  while (std::getline(cases, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    BatchCase c;
    std::string model, spec;
    fields >> c.name >> model;
    c.model = zoo / model;
    if (!fs::exists(c.model)) GTEST_SKIP() << "the zoo is incomplete: no " << c.model << " (`make zoo`)";
    while (fields >> spec) {
      const size_t eq = spec.rfind('=');
      auto tensor = read_tensor_file((zoo / spec.substr(eq + 1)).string());
      ASSERT_TRUE(tensor.is_ok()) << c.name << ": " << tensor.status().to_string();
      c.inputs[spec.substr(0, eq)] = std::move(tensor).value();
    }
    // Kiln against itself at another batch: the zoo's tolerance against ONNX Runtime at most.
    const auto tolerance = tolerances.find(c.name);
    c.tolerance = tolerance == tolerances.end() ? 1e-4 : std::min(1e-3, tolerance->second);
    (sweep_batches(c) ? swept : fixed).push_back(c.name);
  }
  std::cout << "[batch sweep] zoo models with a free batch: " << swept.size() << ", with fixed shapes: " << fixed.size() << "\n";
  EXPECT_FALSE(swept.empty());
}

}  // namespace
}  // namespace kiln
