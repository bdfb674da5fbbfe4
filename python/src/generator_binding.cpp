// kiln._kiln.Generator (generator_binding.h). Loading, generation and logits release the GIL; the
// per-token callback takes it back for the Python function.
#include "generator_binding.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "kiln/generator.h"

#include "arrays.h"
#include "session_options.h"
#include "status_error.h"

namespace kiln::python {
namespace {

namespace py = pybind11;
using namespace pybind11::literals;

class NativeGenerator {
 public:
  static NativeGenerator load(const std::string& path, const py::dict& session_options, int64_t context, int64_t batch) {
    GeneratorOptions options;
    options.session = session_options_from_dict(session_options);
    options.context = context;
    options.batch = batch;
    Result<std::unique_ptr<Generator>> g = [&] {
      py::gil_scoped_release release;
      return Generator::load(path, options);
    }();
    return NativeGenerator(value_or_throw(std::move(g)));
  }

  std::vector<int32_t> tokenize(const std::string& text, bool add_special) const { return value_or_throw(g_->tokenize(text, add_special)); }
  py::bytes detokenize(const std::vector<int32_t>& tokens) const { return py::bytes(value_or_throw(g_->detokenize(tokens))); }

  // Calls on_token(id, text bytes) for each token (returning False stops); returns the stats and,
  // when asked, the logits of every position.
  py::tuple generate(const std::vector<int32_t>& prompt, int64_t max_tokens, const SamplingOptions& sampling, const py::function& on_token,
                     bool want_logits) {
    Tensor logits;
    Result<GenerationStats> stats = [&] {
      py::gil_scoped_release release;
      return g_->generate(prompt, max_tokens, sampling,
                          [&](int32_t id, const std::string& text) {
                            py::gil_scoped_acquire acquire;
                            const py::object keep_going = on_token(id, py::bytes(text));
                            return keep_going.is_none() || keep_going.cast<bool>();
                          },
                          want_logits ? &logits : nullptr);
    }();
    const GenerationStats s = value_or_throw(std::move(stats));
    const py::dict figures("prompt_tokens"_a = s.prompt_tokens, "generated_tokens"_a = s.generated_tokens,
                           "time_to_first_token_ms"_a = s.time_to_first_token_ms, "prompt_tokens_per_second"_a = s.prompt_tokens_per_second,
                           "generation_tokens_per_second"_a = s.generation_tokens_per_second,
                           "peak_resident_bytes"_a = s.peak_resident_bytes);
    return py::make_tuple(figures, want_logits ? array_from_tensor("logits", logits) : py::none());
  }

  py::object logits(const std::vector<int32_t>& tokens) {
    Result<Tensor> out = [&] {
      py::gil_scoped_release release;
      return g_->logits(tokens);
    }();
    return array_from_tensor("logits", value_or_throw(std::move(out)));
  }

  int64_t vocab_size() const { return g_->vocab_size(); }
  int64_t context() const { return g_->context(); }
  std::string report_json() const { return g_->report_json(); }

 private:
  explicit NativeGenerator(std::unique_ptr<Generator> g) : g_(std::move(g)) {}
  std::shared_ptr<Generator> g_;
};

}  // namespace

void add_generator_class(py::module_& m) {
  py::class_<SamplingOptions>(m, "SamplingOptions")
      .def(py::init<>())
      .def_readwrite("temperature", &SamplingOptions::temperature)
      .def_readwrite("top_k", &SamplingOptions::top_k)
      .def_readwrite("top_p", &SamplingOptions::top_p)
      .def_readwrite("seed", &SamplingOptions::seed)
      .def_readwrite("stop_at_end_of_generation", &SamplingOptions::stop_at_end_of_generation);
  py::class_<NativeGenerator>(m, "Generator")
      .def_static("load", &NativeGenerator::load, "path"_a, "options"_a, "context"_a, "batch"_a)
      .def("tokenize", &NativeGenerator::tokenize, "text"_a, "add_special"_a = true)
      .def("detokenize", &NativeGenerator::detokenize, "tokens"_a)
      .def("generate", &NativeGenerator::generate, "prompt"_a, "max_tokens"_a, "sampling"_a, "on_token"_a, "want_logits"_a)
      .def("logits", &NativeGenerator::logits, "tokens"_a)
      .def_property_readonly("vocab_size", &NativeGenerator::vocab_size)
      .def_property_readonly("context", &NativeGenerator::context)
      .def("report_json", &NativeGenerator::report_json);
}

}  // namespace kiln::python
