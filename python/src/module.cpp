// kiln._kiln: the extension module under the `kiln` Python package (python/kiln/). It binds
// kiln::Session as it is (load from a path or bytes, describe, run, warm up, report, write an
// artifact); the onnxruntime-like API and Kiln's own conveniences are written in Python over it.
// Runs release the GIL; inputs are read in place and outputs returned without copies (arrays.h).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kiln/providers/registry/provider_registry.h"

#include "arrays.h"
#include "artifact_functions.h"
#include "generator_binding.h"
#include "session_options.h"
#include "status_error.h"
#include "stream_binding.h"

namespace kiln::python {
namespace {

namespace py = pybind11;
using namespace pybind11::literals;

// A dim as onnxruntime's NodeArg.shape gives it: the size, the symbol's name, or None.
py::object dim_object(const TensorInfo& info, size_t axis) {
  if (info.shape[axis] >= 0) return py::int_(info.shape[axis]);
  if (axis < info.dim_names.size() && !info.dim_names[axis].empty()) return py::str(info.dim_names[axis]);
  return py::none();
}

py::dict info_dict(const TensorInfo& info) {
  const char* kinds[] = {"tensor", "sequence", "optional"};
  py::object shape = py::none();
  if (info.kind == Value::Kind::kTensor && info.rank_known) {
    py::list dims;
    for (size_t axis = 0; axis < info.shape.size(); ++axis) dims.append(dim_object(info, axis));
    shape = dims;
  }
  return py::dict("name"_a = info.name, "kind"_a = kinds[static_cast<int>(info.kind)], "dtype"_a = dtype_name(info.dtype),
                  "shape"_a = shape);
}

class NativeSession {
 public:
  explicit NativeSession(std::unique_ptr<Session> session) : session_(std::move(session)) {
    for (const TensorInfo& info : session_->inputs()) inputs_[info.name] = &info;
    for (const TensorInfo& info : session_->outputs()) {
      outputs_[info.name] = &info;
      tensors_only_ = tensors_only_ && info.kind == Value::Kind::kTensor;
    }
    for (const TensorInfo& info : session_->inputs()) tensors_only_ = tensors_only_ && info.kind == Value::Kind::kTensor;
  }

  static NativeSession load(const std::string& path, const py::dict& options) {
    const SessionOptions o = session_options_from_dict(options);
    Result<std::unique_ptr<Session>> session = [&] {
      py::gil_scoped_release release;
      return Session::load(path, o);
    }();
    return NativeSession(value_or_throw(std::move(session)));
  }

  static NativeSession load_bytes(const py::bytes& model, const py::dict& options) {
    const SessionOptions o = session_options_from_dict(options);
    const std::string bytes = model;
    Result<std::unique_ptr<Session>> session = [&] {
      py::gil_scoped_release release;
      return Session::load_bytes(bytes, o);
    }();
    return NativeSession(value_or_throw(std::move(session)));
  }

  py::list inputs() const { return infos(session_->inputs()); }
  py::list outputs() const { return infos(session_->outputs()); }

  py::dict metadata() const {
    const ModelMetadata& m = session_->metadata();
    return py::dict("producer_name"_a = m.producer_name, "producer_version"_a = m.producer_version, "domain"_a = m.domain,
                    "doc_string"_a = m.doc_string, "graph_name"_a = m.graph_name, "model_version"_a = m.model_version,
                    "custom"_a = m.custom);
  }

  // Runs on `feeds` ({input name: array, list or None}); returns the outputs named in
  // `output_names` (all, in the model's order, when None or empty), in that order.
  py::list run(const py::dict& feeds, const std::optional<std::vector<std::string>>& output_names, const RunOptions* run_options) {
    std::vector<std::string> wanted;
    if (output_names && !output_names->empty()) {
      wanted = *output_names;
      for (const std::string& name : wanted)
        if (!outputs_.count(name))
          throw StatusError(invalid_argument("'" + name + "' is not an output of the model; its outputs: " + names(session_->outputs())));
    } else {
      for (const TensorInfo& info : session_->outputs()) wanted.push_back(info.name);
    }
    std::vector<py::object> keep_alive;  // arrays read in place, alive until the run is over
    std::map<std::string, Value> values;
    for (const auto& [key, object] : feeds) {
      const std::string name = key.cast<std::string>();
      auto info = inputs_.find(name);
      if (info == inputs_.end())
        throw StatusError(invalid_argument("'" + name + "' is not an input of the model; its inputs: " + names(session_->inputs())));
      values[name] = value_from_python(*info->second, object, keep_alive);
    }
    std::map<std::string, Value> results = execute(values, run_options);
    py::list out;
    for (const std::string& name : wanted) out.append(python_from_value(name, results.at(name)));
    return out;
  }

  void warm_up(const py::dict& feeds, int runs) {
    std::vector<py::object> keep_alive;
    std::map<std::string, Tensor> inputs;
    for (const auto& [key, object] : feeds) {
      const std::string name = key.cast<std::string>();
      inputs[name] = tensor_from_array(name, object, keep_alive);
    }
    py::gil_scoped_release release;
    check(session_->warm_up(inputs, runs));
  }

  std::string state() const { return session_->state() == SessionState::kReady ? "ready" : "loaded"; }
  std::string report_json() const { return session_->report_json(2); }

  // The kernels of the last run, its control-flow bodies' included (KernelEvent's fields).
  py::list last_run_kernels() const {
    py::list events;
    for (const KernelEvent& e : session_->last_run_kernels())
      events.append(py::dict("op_type"_a = e.op_type, "node"_a = e.node, "provider"_a = e.provider,
                             "implementation"_a = e.implementation, "start_ms"_a = e.start_ms,
                             "duration_ms"_a = e.duration_ms, "self_ms"_a = e.self_ms, "calls"_a = e.calls,
                             "depth"_a = e.depth, "parent"_a = e.parent, "source_nodes"_a = e.source_nodes));
    return events;
  }

  void write_artifact(const std::string& path, const std::map<std::string, std::string>& assets, const py::dict& warmup) {
    std::vector<py::object> keep_alive;
    ArtifactOptions options;
    options.asset_paths = assets;
    for (const auto& [key, object] : warmup) {
      const std::string name = key.cast<std::string>();
      options.warmup_inputs[name] = tensor_from_array(name, object, keep_alive).clone();
    }
    py::gil_scoped_release release;
    check(session_->write_artifact(path, options));
  }

  py::bytes asset(const std::string& name) const { return py::bytes(value_or_throw(session_->asset(name))); }

  NativeStream open_stream() { return NativeStream(value_or_throw(session_->open_stream()), *session_); }

 private:
  static py::list infos(const std::vector<TensorInfo>& list) {
    py::list out;
    for (const TensorInfo& info : list) out.append(info_dict(info));
    return out;
  }
  static std::string names(const std::vector<TensorInfo>& list) {
    std::string text;
    for (const TensorInfo& info : list) text += (text.empty() ? "'" : ", '") + info.name + "'";
    return text;
  }

  // The run itself, without the GIL: run() for tensors, run_values() where sequences or optionals are.
  std::map<std::string, Value> execute(const std::map<std::string, Value>& values, const RunOptions* run_options) {
    static const RunOptions defaults;
    const RunOptions& options = run_options ? *run_options : defaults;
    py::gil_scoped_release release;
    if (!tensors_only_) return value_or_throw(session_->run_values(values, options));
    std::map<std::string, Tensor> tensors;
    for (const auto& [name, value] : values) tensors[name] = value.tensor();
    std::map<std::string, Tensor> results = value_or_throw(session_->run(tensors, options));
    return {results.begin(), results.end()};
  }

  std::unique_ptr<Session> session_;
  std::map<std::string, const TensorInfo*> inputs_, outputs_;
  bool tensors_only_ = true;
};

// The address Kiln reads an input array from (tests prove that inputs are not copied).
uintptr_t input_address(py::handle array) {
  std::vector<py::object> keep_alive;
  return reinterpret_cast<uintptr_t>(tensor_from_array("x", array, keep_alive).raw_data());
}

}  // namespace
}  // namespace kiln::python

PYBIND11_MODULE(_kiln, m) {
  namespace py = pybind11;
  using namespace pybind11::literals;
  using kiln::python::NativeSession;
  m.doc() = "Kiln's C++ session, bound for the kiln package (use kiln.InferenceSession)";
  m.attr("__version__") = KILN_VERSION;
  kiln::python::register_status_errors();
  // kiln::RunOptions; kiln.RunOptions (options.py) adds onnxruntime's names. `terminate` may be set
  // from another thread while a run uses the options (the run releases the GIL).
  py::class_<kiln::RunOptions>(m, "RunOptions")
      .def(py::init<>())
      .def_readwrite("tag", &kiln::RunOptions::tag)
      .def_readwrite("threads", &kiln::RunOptions::threads)
      .def_readwrite("timeout_ms", &kiln::RunOptions::timeout_ms)
      .def_property(
          "terminate", [](const kiln::RunOptions& o) { return o.terminate.load(); },
          [](kiln::RunOptions& o, bool value) { o.terminate.store(value); });
  py::class_<NativeSession>(m, "Session")
      .def_static("load", &NativeSession::load, "path"_a, "options"_a)
      .def_static("load_bytes", &NativeSession::load_bytes, "model"_a, "options"_a)
      .def("inputs", &NativeSession::inputs)
      .def("outputs", &NativeSession::outputs)
      .def("metadata", &NativeSession::metadata)
      .def("run", &NativeSession::run, "feeds"_a, "output_names"_a = py::none(), "run_options"_a = nullptr)
      .def("warm_up", &NativeSession::warm_up, "feeds"_a, "runs"_a = 1)
      .def("state", &NativeSession::state)
      .def("report_json", &NativeSession::report_json)
      .def("last_run_kernels", &NativeSession::last_run_kernels)
      .def("write_artifact", &NativeSession::write_artifact, "path"_a, "assets"_a, "warmup"_a)
      .def("asset", &NativeSession::asset, "name"_a)
      // The stream uses the session: it keeps it alive.
      .def("open_stream", &NativeSession::open_stream, py::keep_alive<0, 1>());
  m.def("input_address", &kiln::python::input_address, "array"_a);
  m.def("available_providers", &kiln::providers::available_providers, "The providers this build has, from its registry");
  kiln::python::add_artifact_functions(m);
  kiln::python::add_stream_class(m);
  kiln::python::add_generator_class(m);
}
