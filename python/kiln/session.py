"""InferenceSession: onnxruntime's session API over Kiln's (kiln::Session), plus Kiln's warm-up,
report and artifact writing. docs/PYTHON.md lists every difference from onnxruntime."""

import json
import os
import time
import warnings

from . import _kiln
from .errors import InvalidArgument
from .options import SessionOptions
from .stream import IOBinding, Stream

# onnxruntime's provider names Kiln answers to, and Kiln's own (the build's provider registry).
_PROVIDER_ALIASES = {"CPUExecutionProvider": "cpu", **{name: name for name in _kiln.available_providers()}}


def get_available_providers():
    """The provider names a session accepts: onnxruntime's CPU provider (Kiln's fast `cpu`
    provider) and Kiln's own names."""
    return list(_PROVIDER_ALIASES)


def get_device():
    return "CPU"


class NodeArg:
    """A model input or output: `name`, `type` ("tensor(float)", "seq(tensor(int64))",
    "optional(tensor(float))") and `shape` (ints, symbolic dims as their names, None for a dim
    without one; None for sequences, optionals and tensors of unknown rank)."""

    def __init__(self, info):
        self.name = info["name"]
        tensor = "tensor(%s)" % info["dtype"]
        self.type = {"tensor": tensor, "sequence": "seq(%s)" % tensor, "optional": "optional(%s)" % tensor}[info["kind"]]
        self.shape = info["shape"]

    def __repr__(self):
        return "NodeArg(name=%r, type=%r, shape=%r)" % (self.name, self.type, self.shape)


class ModelMetadata:
    """What the model file says about itself (onnxruntime's ModelMetadata)."""

    def __init__(self, meta):
        self.producer_name = meta["producer_name"]
        self.producer_version = meta["producer_version"]
        self.graph_name = meta["graph_name"]
        self.domain = meta["domain"]
        self.description = meta["doc_string"]
        self.graph_description = ""  # Kiln's importer does not keep the graph's doc_string
        self.version = meta["model_version"]
        self.custom_metadata_map = dict(meta["custom"])


def _kiln_providers(providers, provider_options):
    """Kiln provider names for onnxruntime's `providers` argument (names or (name, options)
    pairs). Providers Kiln lacks are skipped with a warning, as onnxruntime does."""
    if not providers:
        return ["cpu"]
    chosen = []
    for entry in providers:
        name = entry[0] if isinstance(entry, (tuple, list)) else entry
        kiln_name = _PROVIDER_ALIASES.get(name)
        if kiln_name is None:
            warnings.warn("Specified provider '%s' is not in available provider names. Available providers: '%s'"
                          % (name, ", ".join(get_available_providers())))
        elif kiln_name not in chosen:
            chosen.append(kiln_name)
    return chosen or ["cpu"]


class InferenceSession:
    """A loaded, compiled model, run with `run`.

    `path_or_bytes`: an .onnx file, a .kiln artifact, or a serialized ONNX model (bytes).
    `sess_options`: SessionOptions. `providers`: ["CPUExecutionProvider"] (the default), Kiln's
    "cpu" or "cpu_ref", or (name, options) pairs."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        self._options = sess_options if sess_options is not None else SessionOptions()
        self._providers = _kiln_providers(providers, provider_options)
        native = self._options._native_options(self._providers)
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            self._model_path = None
            self._session = _kiln.Session.load_bytes(bytes(path_or_bytes), native)
        else:
            self._model_path = os.fspath(path_or_bytes)
            self._session = _kiln.Session.load(self._model_path, native)
        self._inputs = [NodeArg(i) for i in self._session.inputs()]
        self._outputs = [NodeArg(o) for o in self._session.outputs()]
        self._profile = None
        if self._options.enable_profiling:
            self._profile = {"start": time.time(), "events": [], "elapsed_ms": 0.0}
        if self._options.optimized_model_filepath:
            self._write_optimized(self._options.optimized_model_filepath)

    # ---- onnxruntime's API ----

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_overridable_initializers(self):
        return []  # Kiln's weights are constants of the compiled plan

    def get_modelmeta(self):
        return ModelMetadata(self._session.metadata())

    def get_providers(self):
        return ["CPUExecutionProvider" if p == "cpu" else p for p in self._providers]

    def get_provider_options(self):
        return {name: {} for name in self.get_providers()}

    def get_session_options(self):
        return self._options

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model on `input_feed` ({input name: numpy array}; a list of arrays for a
        sequence input, None for an empty optional) and returns the outputs named in
        `output_names` (all when None), in that order, as numpy arrays over Kiln's buffers."""
        if not isinstance(input_feed, dict):
            raise InvalidArgument("input_feed must be a dict of input name -> array, got %s" % type(input_feed).__name__)
        outputs = self._session.run(input_feed, list(output_names) if output_names else None, run_options)
        if self._profile is not None:
            self._record_profile()
        return outputs

    def end_profiling(self):
        """Writes the kernels of every run since profiling began as a Chrome trace
        (chrome://tracing, Perfetto) and returns the file's name; "" when profiling is off."""
        if self._profile is None:
            return ""
        stamp = time.strftime("%Y-%m-%d_%H-%M-%S", time.localtime(self._profile["start"]))
        path = "%s_%s.json" % (self._options.profile_file_prefix, stamp)
        with open(path, "w") as f:
            json.dump({"traceEvents": self._profile["events"], "displayTimeUnit": "ms"}, f)
        self._profile = None
        return path

    def io_binding(self):
        """onnxruntime's IOBinding (kiln.stream.IOBinding): inputs and outputs bound once."""
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        """Runs on the inputs and into the outputs bound to `iobinding`."""
        iobinding._run(run_options)

    # ---- Kiln's own ----

    def stream(self, carry=None, initial=None):
        """A Stream (kiln.Stream): this model called over and over, with `carry` ({output: input})
        handing each call's state outputs to the next call's inputs without a copy, from `initial`
        ({input: array}) after each reset(). It has its own working memory; the session serves
        other runs and streams meanwhile."""
        return Stream(self._session.open_stream(), carry, initial)

    def warm_up(self, input_feed=None, runs=1):
        """Runs the model `runs` times before it serves requests (given inputs, an artifact's
        recorded fixtures, or generated ones) and makes the session ready; an artifact's recorded
        outputs must come back (IntegrityFailure otherwise)."""
        self._session.warm_up(input_feed or {}, runs)

    @property
    def state(self):
        """"loaded", or "ready" after warm_up()."""
        return self._session.state()

    def report(self):
        """The evidence report as a dict (schema: docs/REPORT.md)."""
        return json.loads(self._session.report_json())

    def write_artifact(self, path, assets=None, warmup_inputs=None):
        """Writes the compiled model as a .kiln artifact (docs/ARTIFACT.md)."""
        self._session.write_artifact(os.fspath(path), dict(assets or {}), dict(warmup_inputs or {}))

    def asset(self, name):
        """The bytes of an asset stored in the .kiln artifact this session loaded."""
        return self._session.asset(name)

    def _write_optimized(self, path):
        if not str(path).endswith(".kiln"):
            warnings.warn("optimized_model_filepath %r: Kiln writes its optimised model as a .kiln artifact, not ONNX" % path)
        self.write_artifact(path)

    def _record_profile(self):
        run_start = (time.time() - self._profile["start"]) * 1e6
        for e in self._session.last_run_kernels():
            self._profile["events"].append({
                "name": e["node"] or e["op_type"], "cat": e["provider"], "ph": "X", "pid": 1, "tid": 1 + e["depth"],
                "ts": run_start + e["start_ms"] * 1000.0, "dur": e["duration_ms"] * 1000.0,
                "args": {"op_type": e["op_type"], "implementation": e["implementation"], "onnx_nodes": e["source_nodes"],
                         "calls": e["calls"], "parent": e["parent"]}})
