"""SessionOptions, RunOptions and their enums, as onnxruntime spells them, plus Kiln's own options.

The onnxruntime attributes Kiln acts on are mapped onto kiln::SessionOptions by `_native_options`;
the others are accepted and kept so that scripts written for onnxruntime run unchanged, and
docs/PYTHON.md lists what each does here.
"""

import enum

from . import _kiln


class GraphOptimizationLevel(enum.IntEnum):
    """onnxruntime's levels. Kiln's pass pipeline is all or nothing: ORT_DISABLE_ALL turns it off,
    any other level runs every pass (`SessionOptions.disabled_passes` skips single ones)."""

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """onnxruntime's inter-operator modes; Kiln runs nodes in order (both mean the same)."""

    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class SessionOptions:
    """How a session is built: onnxruntime's attributes, and Kiln's own below them."""

    def __init__(self):
        # onnxruntime's attributes.
        self.intra_op_num_threads = 0  # kernel threads; 0: all cores
        self.inter_op_num_threads = 0  # kept; Kiln runs nodes one after another
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.enable_profiling = False
        self.profile_file_prefix = "kiln_profile"
        self.optimized_model_filepath = ""  # written as a .kiln artifact (docs/PYTHON.md)
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.use_deterministic_compute = True  # Kiln's kernels are deterministic for a plan
        # Kiln's own.
        self.mode = "graph"  # graph, eager, jit or aot (an artifact)
        self.allow_fallback = []  # providers a node may fall back to, e.g. ["cpu_ref"]; [] fails closed
        self.disabled_passes = []
        self.input_shapes = {}  # input name -> shape to plan for at load
        self.shape_profile = {}  # symbol -> (min, opt, max)
        self.out_of_profile = "reject"  # reject, specialize or pad
        self.specialize = False
        self.isa = ""  # cap the instruction set: avx2, avx512_core, ...
        self.generate_kernels = False
        self.tune = False
        self.max_variants = 8
        self.max_concurrent_runs = 4  # runs of one session in flight at once (threads calling run)
        self.max_loop_iterations = 100_000_000  # iterations one Loop may run in a run; 0: unbounded
        self.memory_limit = 0  # bytes the session's buffers may hold at once; 0: none
        self.precision = "fp32"  # products in fp32, bf16, int8, a preference like int8+bf16, or auto
        self.keep_fp32 = []  # node names or op types left in fp32 under a reduced precision
        self.accuracy_budget = ""  # e.g. "rel=1e-2,top1=0.99": a reduced precision that breaks it fails the load
        self.on_budget = "fail"  # or "fallback": the most sensitive products stay fp32 until the budget holds
        self.validation_inputs = []  # [{input name: array}, ...]: what the accuracy check runs (default: generated)
        self.calibration_inputs = []  # [{input name: array}, ...]: static int8, activation ranges from these
        self.calibration_method = "minmax"  # or "percentile" (99.99%), "entropy" (KL divergence)
        self.public_key = b""  # raw Ed25519 key an artifact must be signed with
        self.require_signature = False
        self._free_dimensions = {}
        self._config = {}

    def add_free_dimension_override_by_name(self, dim_name, dim_value):
        """Fixes the symbolic dim `dim_name` to `dim_value`: a shape profile of that one size (a run
        with another size is a ShapeGuardFailure naming the input and dim)."""
        self._free_dimensions[str(dim_name)] = int(dim_value)

    def add_session_config_entry(self, key, value):
        """Keeps a configuration entry. Kiln reads the keys of docs/PYTHON.md ("kiln.mode", ...);
        onnxruntime's own keys are kept without effect."""
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key):
        return self._config[key]

    def has_session_config_entry(self, key):
        return key in self._config

    def register_custom_ops_library(self, path):
        from .errors import UnsupportedOperator
        raise UnsupportedOperator("custom operator libraries (%s): Kiln runs no code from outside" % path)

    def _config_value(self, key, default):
        return self._config.get(key, default)

    def _native_options(self, providers):
        """The options dict kiln._kiln.Session.load reads (python/src/session_options.cpp)."""
        profile = {k: tuple(v) for k, v in self.shape_profile.items()}
        profile.update({name: (v, v, v) for name, v in self._free_dimensions.items()})
        split = lambda text: [p for p in text.split(",") if p]
        return {
            "mode": self._config_value("kiln.mode", self.mode),
            "threads": int(self.intra_op_num_threads),
            "providers": providers,
            "allow_fallback": split(self._config_value("kiln.allow_fallback", ",".join(self.allow_fallback))),
            "optimize": self.graph_optimization_level != GraphOptimizationLevel.ORT_DISABLE_ALL,
            "disabled_passes": list(self.disabled_passes),
            "input_shapes": {k: [int(d) for d in v] for k, v in self.input_shapes.items()},
            "shape_profile": profile,
            "out_of_profile": self.out_of_profile,
            "specialize": bool(self.specialize),
            "isa": self._config_value("kiln.isa", self.isa),
            "generate_kernels": bool(self.generate_kernels),
            "tune": bool(self.tune),
            "max_variants": int(self.max_variants),
            "max_concurrent_runs": int(self.max_concurrent_runs),
            "max_loop_iterations": int(self.max_loop_iterations),
            "memory_limit": int(self.memory_limit),
            "precision": self._config_value("kiln.precision", self.precision),
            "keep_fp32": list(self.keep_fp32),
            "accuracy_budget": self.accuracy_budget,
            "on_budget": self.on_budget,
            "validation_inputs": [dict(s) for s in self.validation_inputs],
            "calibration_inputs": [dict(s) for s in self.calibration_inputs],
            "calibration_method": self.calibration_method,
            "public_key": bytes(self.public_key),
            "require_signature": bool(self.require_signature),
        }


class RunOptions(_kiln.RunOptions):
    """Per-run options: `logid` (onnxruntime's name; also `tag`) names the run in its errors,
    `threads` sets its kernel threads (0: the session's), `terminate`, set from any thread while
    runs use these options, ends them at their next kernel boundary (or Loop/Scan iteration) with
    kiln.Cancelled, and `timeout_ms` (Kiln's own; 0: none) ends a run that takes longer the same way."""

    def __init__(self):
        super().__init__()
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.only_execute_path_to_fetches = False
        self._config = {}

    @property
    def logid(self):
        return self.tag

    @logid.setter
    def logid(self, value):
        self.tag = str(value)

    def add_run_config_entry(self, key, value):
        self._config[str(key)] = str(value)

    def get_run_config_entry(self, key):
        return self._config[key]
