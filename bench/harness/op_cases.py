"""The cases of the per-op speed harness (bench/ops.sh, harness/ops.py): for every op type the cpu
provider has a kernel for (`kiln ops`), one or more single-node models (or small fused patterns:
Conv+Relu, Conv+Add+Relu, MatMul+bias+GELU, attention, the LayerNorm written out, ...), each at two
sizes: `representative` (timed) and `tiny` (`ops.py --smoke`, the `make test` check that every op
still runs). Ops that cannot be timed meaningfully are in EXCLUDED, each with the reason; an op of
`kiln ops` that is neither a case's op (or in its `covers`) nor excluded, or is both, is an error
(`coverage_problems`).

Representative shapes. Where an op appears in bench/op_shapes.json (harness/record_op_shapes.py: the
zoo, the parity models and the bench's exports), the case takes the heaviest recorded signature it
can time (record_op_shapes.timing_eligible: every shape known, no float16, at most 2^22 elements in
its largest input): its input shapes and dtypes, small constant inputs (axes, pads, sizes: as
initializers), weights (as seeded random initializers) and attributes, at the model's opset. Ops no
recorded model uses, or whose recorded signatures cannot be rebuilt (a shape computed at run time
that is not derivable from the output), take a hand-chosen shape typical of CNN and transformer
use, named in the case's `source`:
  CNN activations      1x64x56x56 float32 (a ResNet stage-1 map; 1x256x56x56 for its 1x1 convs)
  transformer tensors  1x128x768 float32 (BERT-base, 128 tokens; 1x128x3072 for the FFN's
                       hidden layer; 1x12x128x64 for attention heads)
  sequences (RNNs)     64 steps x batch 1 x 128 features, hidden 128 (silero's LSTM width)
  indices / shapes     int64; logic: bool; quantized ops: uint8 with float32 scales
Tiny sizes are a few elements per dim (16 channels, so blocked layouts still apply).

Inputs a runner cannot read from .npy (peers/npy.js reads float32, int64, int32 and bool: uint8,
int8, uint32, float16 ...) are fed as int32/int64/float32 and cast inside the model (a Cast node in
front, in both runtimes alike); the case's `summary` marks them, e.g. `u8<i32`.

Every model's data comes from a generator seeded by the case name and size, so cases are the same
bytes from run to run.
"""
import json
import os
import sys
import zlib
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper, shape_inference

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import record_op_shapes  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
OP_SHAPES_JSON = os.path.join(ROOT, "bench", "op_shapes.json")

# Ops of `kiln ops` the harness does not time, with the reason. ops.py's coverage check fails on an
# op listed here that also has a case.
EXCLUDED = {
    "Constant": "no input: its tensor becomes an initializer when the model loads, so nothing runs per inference",
    "Dropout": "inference-mode Dropout is an identity both runtimes remove before running (nothing to time); "
               "training mode draws a random mask (a random generator)",
    "Bernoulli": "random generator: Kiln's and ONNX Runtime's streams differ, and models draw at most a few values",
    "Multinomial": "random generator (as Bernoulli)",
    "RandomNormal": "random generator with no input: folded or drawn once; nothing representative to time",
    "RandomNormalLike": "random generator (as Bernoulli)",
    "RandomUniform": "random generator with no input: folded or drawn once; nothing representative to time",
    "RandomUniformLike": "random generator (as Bernoulli)",
    "StringNormalizer": "string tensors: the runners' .npy readers (peers/npy.js) take no strings, and no model in view uses them",
    "StringConcat": "string tensors (as StringNormalizer)",
    "StringSplit": "string tensors (as StringNormalizer)",
    "RegexFullMatch": "string tensors (as StringNormalizer)",
    "ai.onnx.preview.training.Adagrad": "training optimizer: ONNX Runtime's inference build has no kernel for it",
    "ai.onnx.preview.training.Adam": "training optimizer (as Adagrad)",
    "ai.onnx.preview.training.Momentum": "training optimizer (as Adagrad)",
}

# Dtypes peers/npy.js (ONNX Runtime's side) reads, and what the others are fed as (then cast).
FEEDABLE = {"float32", "int64", "int32", "bool"}
FEED_AS = {"uint8": "int32", "int8": "int32", "int16": "int32", "uint16": "int32", "uint32": "int64",
           "uint64": "int64", "float16": "float32", "float64": "float32"}
SHORT = {"float32": "f32", "float16": "f16", "float64": "f64", "int64": "i64", "int32": "i32", "int16": "i16",
         "int8": "i8", "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "b"}


def onnx_type(dtype):
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype)) if hasattr(helper, "np_dtype_to_tensor_dtype") \
        else onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]


def tensor_info(name, dtype, shape):
    return helper.make_tensor_value_info(name, onnx_type(dtype), list(shape))


def ir_version(opset):
    return 10 if opset >= 21 else 9 if opset >= 19 else 8


class Reject(Exception):
    """A recorded signature this case cannot rebuild (the next one, or the hand-chosen shape, is used)."""


class Graph:
    """Builds one case's model: graph inputs (with their .npy feeds), initializers, nodes, outputs."""

    def __init__(self, case_name, size, opset):
        self.tiny = size == "tiny"
        self.rng = np.random.default_rng(zlib.crc32(f"{case_name}/{size}".encode()))
        self.opset = opset
        self.nodes, self.inputs, self.inits, self.outputs = [], [], [], []
        self.feeds = {}
        self.known = {}  # value name -> (shape, dtype, how it is fed) for the summary
        self.output_hints = {}
        self._count = 0

    # -- data -----------------------------------------------------------------------------------
    def size(self, tiny, representative):
        return tiny if self.tiny else representative

    def uniform(self, shape, lo=-1.0, hi=1.0, dtype="float32"):
        return self.rng.uniform(lo, hi, size=shape).astype(dtype)

    def ints(self, shape, lo, hi, dtype="int64"):
        return self.rng.integers(lo, hi, size=shape).astype(dtype)

    def bools(self, shape, p=0.5):
        return self.rng.random(size=shape) < p

    # -- graph ----------------------------------------------------------------------------------
    def _name(self, prefix):
        self._count += 1
        return f"{prefix}{self._count}"

    def input(self, array, name=None):
        """A graph input fed from .npy; dtypes npy.js cannot read are fed wider and cast in the model."""
        array = np.asarray(array)
        name = name or self._name("x")
        dtype = array.dtype.name
        if dtype in FEEDABLE:
            self.inputs.append(helper.make_tensor_value_info(name, onnx_type(dtype), list(array.shape)))
            self.feeds[name] = array
            self.known[name] = (list(array.shape), dtype, "")
            return name
        fed = FEED_AS[dtype]
        feed_name = f"{name}_{fed}"
        self.inputs.append(helper.make_tensor_value_info(feed_name, onnx_type(fed), list(array.shape)))
        self.feeds[feed_name] = array.astype(fed)
        self.nodes.append(helper.make_node("Cast", [feed_name], [name], name=f"{name}_feed_cast", to=onnx_type(dtype)))
        self.known[name] = (list(array.shape), dtype, fed)
        return name

    def init(self, array, name=None):
        array = np.asarray(array)
        name = name or self._name("w")
        self.inits.append(numpy_helper.from_array(array, name))
        self.known[name] = (list(array.shape), array.dtype.name, "")
        return name

    def node(self, op, inputs, outputs=1, name=None, domain="", **attrs):
        """Adds a node; `outputs` is a count or a list of names. Returns the output name (one) or names."""
        names = [self._name("v") for _ in range(outputs)] if isinstance(outputs, int) else list(outputs)
        self.nodes.append(helper.make_node(op, list(inputs), names, name=name or self._name("n"), domain=domain or None,
                                           **attrs))
        return names[0] if len(names) == 1 else names

    def target(self, op, inputs, outputs=1, domain="", **attrs):
        """The case's own node (named `target`: the report's implementation of it is the case's)."""
        out = self.node(op, inputs, outputs, name="target", domain=domain, **attrs)
        self.target_inputs = list(inputs)
        return out

    def output(self, *names, dtype=None, shape=None):
        for n in names:
            self.outputs.append(n)
            if dtype is not None:
                self.output_hints[n] = (dtype, shape)

    def summary(self):
        names = getattr(self, "target_inputs", None) or [i.name for i in self.inputs]
        parts = []
        for n in names:
            if n not in self.known:
                continue
            shape, dtype, fed = self.known[n]
            text = "x".join(map(str, shape)) if shape else "s"
            if dtype != "float32":
                text += f" {SHORT.get(dtype, dtype)}" + (f"<{SHORT[fed]}" if fed else "")
            parts.append(text)
        text = ", ".join(parts)
        return text if len(text) <= 48 else text[:45] + "..."

    def model(self, extra_opsets=()):
        outputs = [helper.make_tensor_value_info(n, TensorProto.UNDEFINED, None) for n in self.outputs]
        opsets = [helper.make_opsetid("", self.opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
        graph = helper.make_graph(self.nodes, "case", self.inputs, outputs, self.inits)
        model = helper.make_model(graph, opset_imports=opsets, producer_name="kiln-bench-ops")
        model.ir_version = ir_version(self.opset)
        try:
            inferred = shape_inference.infer_shapes(model, strict_mode=False)
            types = {v.name: v.type for v in list(inferred.graph.value_info) + list(inferred.graph.output)
                     if v.type.tensor_type.elem_type or v.type.HasField("sequence_type")}
        except Exception:  # noqa: BLE001 (ops newer than the onnx package: the hints give the types)
            types = {}
        del model.graph.output[:]
        for n in self.outputs:
            t = types.get(n)
            if n in self.output_hints:
                dtype, shape = self.output_hints[n]
                if t is None or not t.tensor_type.HasField("shape"):
                    model.graph.output.append(helper.make_tensor_value_info(n, onnx_type(dtype), shape))
                    continue
            if t is None or not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
                raise ValueError(f"output {n}: no inferred shape; give output(..., dtype=, shape=)")
            value = onnx.ValueInfoProto(name=n)
            value.type.CopyFrom(t)
            model.graph.output.append(value)
        return model


@dataclass
class Built:
    model: onnx.ModelProto
    feeds: dict
    summary: str
    source: str


@dataclass
class Case:
    name: str
    op: str
    build: object  # build(g: Graph) -> None, or a source string describing where the shape came from
    covers: tuple = ()
    opset: int = 17
    source: str = ""
    extra_opsets: tuple = ()
    tolerance: float = None  # the smoke's bound on |cpu - reference| / max(1, max |reference|); None: ops.TOLERANCE

    @property
    def ops(self):
        return (self.op, *self.covers)

    def make(self, size):
        g = Graph(self.name, size, self.opset)
        note = self.build(g)
        return Built(g.model(self.extra_opsets), g.feeds, g.summary(), note or self.source)


# -- recorded signatures --------------------------------------------------------------------------

_OP_SHAPES = None


def op_shapes():
    global _OP_SHAPES
    if _OP_SHAPES is None:
        try:
            with open(OP_SHAPES_JSON) as f:
                _OP_SHAPES = json.load(f).get("ops", {})
        except OSError:
            _OP_SHAPES = {}
    return _OP_SHAPES


def _default_fill(g, shape, dtype):
    if dtype == "bool":
        return g.bools(shape)
    if dtype.startswith("float"):
        return g.uniform(shape, dtype=dtype)
    raise Reject(f"no fill for a run-time {dtype} input")


def from_signature(g, op, sig, fills, derive, domain=""):
    """Rebuilds a recorded node: constants as initializers, weights as random initializers, the rest
    graph inputs; fills[i](g, shape, dtype, sig) draws input i, derive[i](sig) computes a run-time
    shape input from the recorded output shapes."""
    g.opset = max(int(sig.get("opset") or 17), 7)
    names = []
    for i, inp in enumerate(sig["inputs"]):
        if inp is None:
            names.append("")
            continue
        shape, dtype = inp["shape"], inp["dtype"]
        if "const" in inp:
            names.append(g.init(np.array(inp["const"], dtype=dtype).reshape(shape)))
        elif i in derive:
            names.append(g.init(np.asarray(derive[i](sig), dtype=dtype)))
        else:
            array = fills[i](g, shape, dtype, sig) if i in fills else _default_fill(g, shape, dtype)
            names.append(g.init(array) if inp.get("initializer") else g.input(array))
    while names and names[-1] == "":
        names.pop()
    attrs = {k: v for k, v in sig["attributes"].items() if not (isinstance(v, str) and v.startswith("<"))
             and not (isinstance(v, list) and any(isinstance(x, str) and x.startswith("<") for x in v))}
    outs = g.target(op, names, len(sig["outputs"]), domain=domain, **attrs)
    g.output(*(outs if isinstance(outs, list) else [outs]))


SMALL_RECORDED = 1 << 14  # elements: below this a recorded case times per-call overhead more than the kernel


def signature_elements(sig):
    sizes = [int(np.prod(s, dtype=np.int64)) for s in [i["shape"] for i in sig["inputs"] if i] + sig["outputs"] if s is not None]
    return max(sizes, default=0)


def recorded(op, hand, name=None, fills=None, derive=None, accept=None, covers=(), opset=17, hand_source=""):
    """A case whose representative size is the heaviest timing-eligible signature of bench/op_shapes.json
    (hand-built when none fits); tiny is always hand-built. Returns the case, and when the recorded
    signature is small (under SMALL_RECORDED elements in its largest input or output) a second case,
    `<op>.hand`, at the hand-chosen shape, so the kernel's throughput is timed as well as the call."""
    fills, derive = fills or {}, derive or {}
    entry = op_shapes().get(op, {})
    sigs = [s for s in entry.get("signatures", []) if record_op_shapes.timing_eligible(s) and (accept is None or accept(s))]
    sigs.sort(key=lambda s: -(s["count"] * record_op_shapes.elements(s)))

    def build(g):
        if not g.tiny:
            for sig in sigs:
                trial = Graph(name or op, "representative", opset)
                try:
                    from_signature(trial, op, sig, fills, derive)
                except Reject:
                    continue
                g.__dict__.update(trial.__dict__)
                models = sig["models"]
                return (f"op_shapes.json: {sig['count']} node(s) in {', '.join(models[:3])}"
                        + (f" +{len(models) - 3}" if len(models) > 3 else ""))
        hand(g)
        return hand_source or "hand-chosen"

    case = Case(name or op, op, build, covers=tuple(covers), opset=opset)
    if sigs and signature_elements(sigs[0]) < SMALL_RECORDED:
        def hand_build(g):
            hand(g)
            return hand_source or "hand-chosen"
        return [case, Case(f"{name or op}.hand", op, hand_build, opset=opset)]
    return [case]


# -- building blocks ------------------------------------------------------------------------------

CNN, TINY_CNN = (1, 64, 56, 56), (1, 16, 5, 6)
SEQ, TINY_SEQ = (1, 128, 768), (1, 4, 16)
FFN, TINY_FFN = (1, 128, 3072), (1, 4, 32)
HEADS, TINY_HEADS = (1, 12, 128, 64), (1, 2, 4, 8)


def cnn(g):
    return g.size(TINY_CNN, CNN)


def seq(g):
    return g.size(TINY_SEQ, SEQ)


def unary(op, lo=-1.0, hi=1.0, shape=None, dtype="float32", opset=17, out_dtype=None, source="hand: CNN activation 1x64x56x56", **attrs):
    def hand(g):
        s = shape(g) if shape else cnn(g)
        x = g.input(g.ints(s, lo, hi, dtype) if dtype.startswith(("int", "uint")) else
                    (g.bools(s) if dtype == "bool" else g.uniform(s, lo, hi, dtype)))
        g.output(g.target(op, [x], **attrs), **({"dtype": out_dtype or dtype, "shape": list(s)} if opset > 17 else {}))
    return hand, source


def binary(op, a_dtype="float32", b_shape=None, lo=-1.0, hi=1.0, b_lo=None, b_hi=None, opset=17, out_dtype=None, **attrs):
    def hand(g):
        s = cnn(g)
        bs = b_shape(g) if b_shape else s

        def draw(shape, lo_, hi_):
            if a_dtype == "bool":
                return g.bools(shape)
            if a_dtype.startswith(("int", "uint")):
                return g.ints(shape, lo_, hi_, a_dtype)
            return g.uniform(shape, lo_, hi_, a_dtype)
        a = g.input(draw(s, lo, hi))
        b = g.input(draw(bs, lo if b_lo is None else b_lo, hi if b_hi is None else b_hi))
        g.output(g.target(op, [a, b], **attrs), **({"dtype": out_dtype or a_dtype, "shape": list(s)} if opset > 17 else {}))
    return hand


def positive(g, shape, dtype, sig):
    return g.uniform(shape, 0.5, 2.0, dtype)


def index_fill(axis_attr="axis", data=0, default_axis=0):
    """Indices in range for the data input's axis (negative ones included, as exporters write)."""
    def fill(g, shape, dtype, sig):
        axis = sig["attributes"].get(axis_attr, default_axis)
        n = sig["inputs"][data]["shape"][axis]
        return g.ints(shape, 0, n, dtype)
    return fill


def output_shape(sig):
    shape = sig["outputs"][0]
    if shape is None:
        raise Reject("output shape unknown")
    return np.array(shape, dtype=np.int64)


def pads_from_output(sig):
    shape, out = sig["inputs"][0]["shape"], sig["outputs"][0]
    if out is None:
        raise Reject("output shape unknown")
    return np.array([0] * len(shape) + [o - i for i, o in zip(shape, out)], dtype=np.int64)


def no_run_time_ints(*indices):
    """accept(): the signature's listed inputs are constants (axes, starts, ...), not run-time values."""
    return lambda sig: all(sig["inputs"][i] is None or "const" in sig["inputs"][i]
                           for i in indices if i < len(sig["inputs"]))


# -- the cases ------------------------------------------------------------------------------------

def _cases():
    cases = []

    def add(name, op, build, opset=17, source="", covers=(), extra_opsets=(), tolerance=None):
        cases.append(Case(name, op, build, covers=tuple(covers), opset=opset, source=source, extra_opsets=extra_opsets,
                          tolerance=tolerance))

    def add_unary(op, lo=-1.0, hi=1.0, **kw):
        opset = kw.get("opset", 17)
        hand, source = unary(op, lo, hi, **kw)
        add(op, op, hand, opset=opset, source=source)

    def add_recorded(op, hand, **kw):
        cases.extend(recorded(op, hand, **kw))

    # Element-wise unary, float32, on a CNN activation.
    for op, lo, hi in [("Abs", -1, 1), ("Acos", -0.99, 0.99), ("Acosh", 1.01, 5), ("Asin", -0.99, 0.99),
                       ("Asinh", -3, 3), ("Atan", -3, 3), ("Atanh", -0.99, 0.99), ("Ceil", -5, 5), ("Cos", -3, 3),
                       ("Cosh", -3, 3), ("Floor", -5, 5), ("Neg", -1, 1), ("Reciprocal", 0.5, 2), ("Round", -5, 5),
                       ("Sign", -1, 1), ("Sin", -3, 3), ("Sinh", -3, 3), ("Softplus", -3, 3), ("Softsign", -3, 3),
                       ("Tan", -1.2, 1.2)]:
        add_unary(op, lo, hi)
    add_unary("Celu", -3, 3, opset=17, alpha=1.0)
    add_unary("Elu", -3, 3, alpha=1.0)
    add_unary("Selu", -3, 3)
    add_unary("Shrink", -1, 1, lambd=0.5, bias=0.0)
    add_unary("ThresholdedRelu", -2, 2, alpha=1.0)
    add_unary("Mish", -3, 3, opset=18)
    add_unary("Gelu", -3, 3, opset=20, shape=lambda g: g.size(TINY_FFN, FFN),
              source="hand: transformer FFN hidden 1x128x3072", approximate="none")
    add_unary("IsNaN", -1, 1, out_dtype="bool")
    add_unary("IsInf", -1, 1, out_dtype="bool")
    add_unary("BitwiseNot", -1000, 1000, dtype="int32", opset=18)
    # Recorded unary ops (op_shapes.json), with the CNN activation as the fallback and tiny form.
    for op, lo, hi, fills, attrs in [("Relu", -1, 1, {}, {}), ("Sigmoid", -3, 3, {}, {}), ("Tanh", -3, 3, {}, {}),
                                     ("Exp", -3, 3, {}, {}), ("Log", 0.5, 2, {0: positive}, {}),
                                     ("Sqrt", 0.5, 2, {0: positive}, {}), ("Erf", -3, 3, {}, {}),
                                     ("HardSwish", -4, 4, {}, {}), ("HardSigmoid", -4, 4, {}, {"alpha": 1 / 6}),
                                     ("LeakyRelu", -1, 1, {}, {"alpha": 0.2})]:
        hand, source = unary(op, lo, hi, **attrs)
        add_recorded(op, hand, fills=fills, hand_source=source)
    add_recorded("Not", unary("Not", dtype="bool")[0], hand_source="hand: bool 1x64x56x56")

    # Element-wise binary.
    add_recorded("Add", binary("Add", b_shape=lambda g: (1, g.size(16, 64), 1, 1)), hand_source="hand: CNN bias add")
    add("Add.residual", "Add", binary("Add"), source="hand: ResNet residual add 1x64x56x56 + 1x64x56x56")
    add_recorded("Sub", binary("Sub"), hand_source="hand: CNN 1x64x56x56")
    add_recorded("Mul", binary("Mul", b_shape=lambda g: (1, g.size(16, 64), 1, 1)), hand_source="hand: CNN channel scale")
    add_recorded("Div", binary("Div", b_lo=0.5, b_hi=2), fills={1: positive}, hand_source="hand: CNN 1x64x56x56")
    add_recorded("Pow", binary("Pow", lo=0.5, hi=2, b_shape=lambda g: ()), fills={0: positive},
                 hand_source="hand: CNN 1x64x56x56 ^ scalar")
    add_recorded("Max", binary("Max"), hand_source="hand: CNN 1x64x56x56")
    add("Min", "Min", binary("Min"), source="hand: CNN 1x64x56x56")
    add("Sum", "Sum", lambda g: g.output(g.target("Sum", [g.input(g.uniform(cnn(g))) for _ in range(3)])),
        source="hand: 3 x CNN 1x64x56x56")
    add("Mean", "Mean", lambda g: g.output(g.target("Mean", [g.input(g.uniform(cnn(g))) for _ in range(3)])),
        source="hand: 3 x CNN 1x64x56x56")
    add("Mod", "Mod", binary("Mod", a_dtype="int64", lo=-1000, hi=1000, b_lo=1, b_hi=50), source="hand: int64 1x64x56x56")
    add("Mod.fmod", "Mod", binary("Mod", lo=-10, hi=10, b_lo=0.5, b_hi=3, fmod=1), source="hand: float32 fmod 1x64x56x56")
    add("BitShift", "BitShift", binary("BitShift", a_dtype="uint32", lo=0, hi=1 << 20, b_lo=0, b_hi=8, direction="LEFT"),
        source="hand: uint32 1x64x56x56 (fed as int64, cast)")
    for op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor"):
        add(op, op, binary(op, a_dtype="int32", lo=-1 << 20, hi=1 << 20, opset=18), opset=18, source="hand: int32 1x64x56x56")
    for op in ("And", "Or", "Xor"):
        add(op, op, binary(op, a_dtype="bool"), source="hand: bool 1x64x56x56")
    for op in ("Less", "Greater", "LessOrEqual"):
        add(op, op, binary(op), source="hand: CNN 1x64x56x56")
    add_recorded("Equal", binary("Equal", a_dtype="int64", lo=0, hi=4), hand_source="hand: int64 1x64x56x56")
    add_recorded("GreaterOrEqual", binary("GreaterOrEqual"), hand_source="hand: CNN 1x64x56x56")

    def where_hand(g):
        s = cnn(g)
        g.output(g.target("Where", [g.input(g.bools(s)), g.input(g.uniform(s)), g.input(g.uniform(s))]))
    add_recorded("Where", where_hand, hand_source="hand: CNN 1x64x56x56")

    def prelu_hand(g):
        s = cnn(g)
        g.output(g.target("PRelu", [g.input(g.uniform(s)), g.init(g.uniform((s[1], 1, 1), 0, 0.5))]))
    add_recorded("PRelu", prelu_hand, hand_source="hand: CNN, per-channel slope")

    def clip_hand(g):
        g.output(g.target("Clip", [g.input(g.uniform(cnn(g), -8, 8)), g.init(np.float32(0)), g.init(np.float32(6))]))
    add_recorded("Clip", clip_hand, hand_source="hand: ReLU6 on CNN 1x64x56x56")

    def cast_hand(g):
        g.output(g.target("Cast", [g.input(g.ints(cnn(g), -100, 100, "int32"))], to=TensorProto.FLOAT))
    add_recorded("Cast", cast_hand, hand_source="hand: int32 -> float32 1x64x56x56")
    add("CastLike", "CastLike", lambda g: g.output(g.target("CastLike", [g.input(g.uniform(cnn(g), -100, 100)),
                                                                          g.init(np.zeros((1,), np.int32))])),
        source="hand: float32 -> int32 1x64x56x56")

    # Reductions over the last axis of a transformer tensor (the recorded ReduceMean and ReduceMax as
    # the models have them).
    for op, lo, hi in [("ReduceSum", -1, 1), ("ReduceMean", -1, 1), ("ReduceMax", -1, 1), ("ReduceMin", -1, 1),
                       ("ReduceProd", 0.99, 1.01), ("ReduceL1", -1, 1), ("ReduceL2", -1, 1),
                       ("ReduceLogSum", 0.5, 2), ("ReduceLogSumExp", -3, 3), ("ReduceSumSquare", -1, 1)]:
        def hand(g, op=op, lo=lo, hi=hi):
            x = g.input(g.uniform(seq(g), lo, hi))
            if op == "ReduceSum":
                g.output(g.target(op, [x, g.init(np.array([-1], np.int64))], keepdims=1))
            else:
                g.output(g.target(op, [x], axes=[-1], keepdims=1))
        if op in ("ReduceMean", "ReduceMax"):
            add_recorded(op, hand, hand_source="hand: last axis of 1x128x768")
        else:
            add(op, op, hand, source="hand: last axis of transformer 1x128x768")
    for op in ("ArgMax", "ArgMin"):
        add(op, op, lambda g, op=op: g.output(g.target(op, [g.input(g.uniform(seq(g)))], axis=-1, keepdims=1)),
            source="hand: last axis of 1x128x768")
    add("Hardmax", "Hardmax", lambda g: g.output(g.target("Hardmax", [g.input(g.uniform(seq(g)))], axis=-1)),
        source="hand: last axis of 1x128x768")
    add("LogSoftmax", "LogSoftmax", lambda g: g.output(g.target("LogSoftmax", [g.input(g.uniform(seq(g), -3, 3))], axis=-1)),
        source="hand: last axis of 1x128x768")
    scores = lambda g: g.size(TINY_HEADS, (1, 12, 128, 128))  # noqa: E731
    add_recorded("Softmax", lambda g: g.output(g.target("Softmax", [g.input(g.uniform(scores(g), -3, 3))], axis=-1)),
                 hand_source="hand: attention scores 1x12x128x128")
    add("CumSum", "CumSum", lambda g: g.output(g.target("CumSum", [g.input(g.uniform(seq(g))), g.init(np.array(1, np.int64))])),
        source="hand: along the tokens of 1x128x768")
    add("TopK", "TopK", lambda g: g.output(*g.target("TopK", [g.input(g.uniform(seq(g))), g.init(np.array([g.size(3, 8)], np.int64))],
                                                     2, axis=-1)),
        source="hand: top 8 of the last axis of 1x128x768")

    # Normalizations.
    def bn_hand(g):
        s = cnn(g)
        c = s[1]
        g.output(g.target("BatchNormalization", [g.input(g.uniform(s)), g.init(g.uniform((c,), 0.5, 1.5)), g.init(g.uniform((c,))),
                                                 g.init(g.uniform((c,))), g.init(g.uniform((c,), 0.5, 2))], epsilon=1e-5))
    add_recorded("BatchNormalization", bn_hand, fills={4: positive}, hand_source="hand: CNN 1x64x56x56")

    def channel_norm(op, opset=17, **attrs):
        def hand(g):
            s = cnn(g)
            c = s[1]
            out = g.target(op, [g.input(g.uniform(s)), g.init(g.uniform((c,), 0.5, 1.5)), g.init(g.uniform((c,)))], **attrs)
            g.output(out, dtype="float32", shape=list(s))
        return hand
    add("InstanceNormalization", "InstanceNormalization", channel_norm("InstanceNormalization", epsilon=1e-5),
        source="hand: CNN 1x64x56x56 (style transfer)")
    add("GroupNormalization", "GroupNormalization", channel_norm("GroupNormalization", num_groups=8, epsilon=1e-5),
        opset=21, source="hand: CNN 1x64x56x56, 8 groups (diffusion U-Nets use 32 of 320+ channels)")

    def ln_hand(g):
        s = seq(g)
        g.output(g.target("LayerNormalization", [g.input(g.uniform(s)), g.init(g.uniform((s[-1],), 0.5, 1.5)),
                                                 g.init(g.uniform((s[-1],)))], axis=-1, epsilon=1e-5))
    add_recorded("LayerNormalization", ln_hand, hand_source="hand: transformer 1x128x768")

    def ln_written_out(g):
        # ReduceMean -> Sub -> Pow -> ReduceMean -> Add eps -> Sqrt -> Div -> Mul gamma -> Add beta
        # (what exporters emitted before opset 17): Kiln's layer_norm_fusion makes it one node.
        s = seq(g)
        x = g.input(g.uniform(s))
        m = g.node("ReduceMean", [x], axes=[-1], keepdims=1)
        d = g.node("Sub", [x, m])
        sq = g.node("Pow", [d, g.init(np.float32(2))])
        v = g.node("ReduceMean", [sq], axes=[-1], keepdims=1)
        sd = g.node("Sqrt", [g.node("Add", [v, g.init(np.float32(1e-5))])])
        y = g.node("Div", [d, sd])
        y = g.node("Mul", [y, g.init(g.uniform((s[-1],), 0.5, 1.5))])
        g.output(g.node("Add", [y, g.init(g.uniform((s[-1],)))], name="target"))
    add("LayerNormalization.written_out", "LayerNormalization", ln_written_out,
        source="hand: transformer 1x128x768, ReduceMean/Sub/Pow/Sqrt/Div form")
    add("LpNormalization", "LpNormalization", lambda g: g.output(g.target("LpNormalization", [g.input(g.uniform(seq(g)))], axis=-1, p=2)),
        source="hand: last axis of 1x128x768 (embedding normalisation)")
    add("LRN", "LRN", lambda g: g.output(g.target("LRN", [g.input(g.uniform(cnn(g)))], size=5, alpha=1e-4, beta=0.75, bias=1.0)),
        source="hand: CNN 1x64x56x56 (GoogLeNet/AlexNet LRN, size 5)")
    add("MeanVarianceNormalization", "MeanVarianceNormalization",
        lambda g: g.output(g.target("MeanVarianceNormalization", [g.input(g.uniform(cnn(g)))])), source="hand: CNN 1x64x56x56")

    # Pooling.
    def pool_hand(op, **attrs):
        return lambda g: g.output(g.target(op, [g.input(g.uniform(cnn(g)))], **attrs))
    add_recorded("MaxPool", pool_hand("MaxPool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
                 hand_source="hand: ResNet stem pool 3x3/2 on 1x64x56x56")
    add_recorded("AveragePool", pool_hand("AveragePool", kernel_shape=[2, 2], strides=[2, 2]),
                 hand_source="hand: 2x2/2 on 1x64x56x56")
    add_recorded("GlobalAveragePool", pool_hand("GlobalAveragePool"), hand_source="hand: 1x64x56x56")
    # 1-D pools (audio models): outside the 4-D convolution regions, so they run the pool kernels
    # themselves where the 4-D ones run in a convolution's layout (kiln.InLayout).
    audio = lambda g: g.size((1, 16, 10), (1, 128, 256))  # noqa: E731
    add("MaxPool.1d", "MaxPool", lambda g: g.output(g.target("MaxPool", [g.input(g.uniform(audio(g)))], kernel_shape=[3], strides=[2],
                                                             pads=[1, 1])),
        source="hand: 1-D 3/2 over 1x128x256 (audio)")
    add("AveragePool.1d", "AveragePool", lambda g: g.output(g.target("AveragePool", [g.input(g.uniform(audio(g)))], kernel_shape=[2],
                                                                     strides=[2])),
        source="hand: 1-D 2/2 over 1x128x256 (audio)")
    add("GlobalAveragePool.1d", "GlobalAveragePool", lambda g: g.output(g.target("GlobalAveragePool", [g.input(g.uniform(audio(g)))])),
        source="hand: 1-D over 1x128x256 (audio embedding)")
    add("GlobalMaxPool.1d", "GlobalMaxPool", lambda g: g.output(g.target("GlobalMaxPool", [g.input(g.uniform(audio(g)))])),
        source="hand: 1-D over 1x128x256")
    late = lambda g: g.size(TINY_CNN, (1, 512, 14, 14))  # noqa: E731
    add("GlobalMaxPool", "GlobalMaxPool", lambda g: g.output(g.target("GlobalMaxPool", [g.input(g.uniform(late(g)))])),
        source="hand: late CNN map 1x512x14x14")
    add("LpPool", "LpPool", pool_hand("LpPool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], p=2),
        source="hand: 3x3/2 on 1x64x56x56")
    add("GlobalLpPool", "GlobalLpPool", lambda g: g.output(g.target("GlobalLpPool", [g.input(g.uniform(late(g)))], p=2)),
        source="hand: late CNN map 1x512x14x14")

    def max_unpool(g):
        n, c, h, w = g.size((1, 16, 3, 4), (1, 64, 28, 28))
        x = g.uniform((n, c, h, w))
        # The argmax index of each 2x2 window of a (2h, 2w) map, as MaxPool's Indices output has them.
        dy, dx = g.ints((n, c, h, w), 0, 2), g.ints((n, c, h, w), 0, 2)
        rows = (np.arange(h)[:, None] * 2 + dy) * (2 * w) + np.arange(w)[None, :] * 2 + dx
        planes = (np.arange(n)[:, None, None, None] * c + np.arange(c)[None, :, None, None]) * (4 * h * w)
        g.output(g.target("MaxUnpool", [g.input(x), g.input((rows + planes).astype(np.int64))], kernel_shape=[2, 2], strides=[2, 2]))
    add("MaxUnpool", "MaxUnpool", max_unpool, source="hand: 1x64x28x28 -> 1x64x56x56 (SegNet decoder)")

    # Convolutions.
    def conv_hand(x_shape, cout, k, stride=1, group=1, bias=True, dilation=1):
        def hand(g):
            n, cin, h, w = x_shape(g)
            co = cout(g)
            pad = (k // 2) * dilation
            ins = [g.input(g.uniform((n, cin, h, w))), g.init(g.uniform((co, cin // group, k, k), -0.2, 0.2))]
            if bias:
                ins.append(g.init(g.uniform((co,), -0.1, 0.1)))
            g.output(g.target("Conv", ins, kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4, group=group,
                              dilations=[dilation, dilation]))
        return hand
    add_recorded("Conv", conv_hand(lambda g: g.size((1, 16, 6, 6), (1, 128, 14, 14)), lambda g: g.size(16, 32), 3, bias=False),
                 hand_source="hand: DenseNet growth conv 128->32 3x3 at 14x14")
    add("Conv.3x3", "Conv", conv_hand(lambda g: g.size((1, 16, 6, 6), CNN), lambda g: g.size(16, 64), 3),
        covers=("kiln.Relayout",), source="hand: ResNet stage-1 3x3 64->64 at 56x56")
    add("Conv.1x1", "Conv", conv_hand(lambda g: g.size((1, 32, 6, 6), (1, 256, 56, 56)), lambda g: g.size(16, 64), 1),
        source="hand: ResNet bottleneck 1x1 256->64 at 56x56")
    add("Conv.depthwise", "Conv", _depthwise, source="hand: MobileNetV2 depthwise 3x3 144 at 56x56")
    add("Conv.stem", "Conv", conv_hand(lambda g: g.size((1, 3, 16, 16), (1, 3, 224, 224)), lambda g: g.size(16, 64), 7, stride=2),
        source="hand: ResNet stem 7x7/2 3->64 at 224x224")
    add("Conv.1d", "Conv", _conv1d, source="hand: 1-D conv 128->128 k3 over 256 steps (audio models)")

    def conv_relu(g):
        n, c, h, w = g.size((1, 16, 6, 6), CNN)
        y = g.node("Conv", [g.input(g.uniform((n, c, h, w))), g.init(g.uniform((c, c, 3, 3), -0.2, 0.2)), g.init(g.uniform((c,)))],
                   name="target", kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        g.target_inputs = [i for i in g.nodes[-1].input]
        g.output(g.node("Relu", [y]))
    add("Conv+Relu", "kiln.FusedConv", conv_relu, source="hand: 3x3 64->64 at 56x56 + ReLU")

    def conv_add_relu(g):
        n, c, h, w = g.size((1, 16, 6, 6), CNN)
        x = g.input(g.uniform((n, c, h, w)))
        y = g.node("Conv", [x, g.init(g.uniform((c, c, 3, 3), -0.2, 0.2)), g.init(g.uniform((c,)))], name="target",
                   kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        g.target_inputs = list(g.nodes[-1].input)
        g.output(g.node("Relu", [g.node("Add", [y, g.input(g.uniform((n, c, h, w)))])]))
    add("Conv+Add+Relu", "kiln.FusedConv", conv_add_relu,
        source="hand: ResNet basic block tail, 3x3 64->64 at 56x56 + residual + ReLU")

    def conv_pool(g):
        n, c, h, w = g.size((1, 16, 6, 6), CNN)
        y = g.node("Conv", [g.input(g.uniform((n, c, h, w))), g.init(g.uniform((c, c, 3, 3), -0.2, 0.2))], kernel_shape=[3, 3],
                   pads=[1, 1, 1, 1])
        y = g.node("BatchNormalization", [y, g.init(g.uniform((c,), 0.5, 1.5)), g.init(g.uniform((c,))), g.init(g.uniform((c,))),
                                          g.init(g.uniform((c,), 0.5, 2))])
        y = g.node("Relu", [y])
        g.output(g.node("MaxPool", [y], name="target", kernel_shape=[2, 2], strides=[2, 2]))
    add("Conv+BN+Relu+MaxPool", "kiln.InLayout", conv_pool,
        source="hand: 3x3 64->64 at 56x56, BatchNorm, ReLU, 2x2 pool (pool in the conv's layout)")

    def conv_transpose_hand(g):
        n, c, h, w = g.size((1, 16, 4, 5), (1, 64, 28, 28))
        co = g.size(8, 32)
        g.output(g.target("ConvTranspose", [g.input(g.uniform((n, c, h, w))), g.init(g.uniform((c, co, 4, 4), -0.2, 0.2)),
                                            g.init(g.uniform((co,)))], kernel_shape=[4, 4], strides=[2, 2], pads=[1, 1, 1, 1]))
    add_recorded("ConvTranspose", conv_transpose_hand, hand_source="hand: decoder upsampling 4x4/2 64->32 28->56")
    add("ConvTranspose.k4s2", "ConvTranspose", conv_transpose_hand, source="hand: decoder upsampling 4x4/2 64->32 28->56")

    def deform_conv(g):
        n, c, h, w = g.size((1, 8, 5, 6), (1, 64, 28, 28))
        out = g.target("DeformConv", [g.input(g.uniform((n, c, h, w))), g.init(g.uniform((c, c, 3, 3), -0.2, 0.2)),
                                      g.input(g.uniform((n, 18, h, w), -1, 1)), g.init(g.uniform((c,)))],
                       kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        g.output(out, dtype="float32", shape=[n, c, h, w])
    add("DeformConv", "DeformConv", deform_conv, opset=19, source="hand: DCNv1 3x3 64->64 at 28x28")

    # Quantized ops (uint8 activations and weights, float32 scales, as ONNX Runtime's quantizer writes them).
    def conv_integer(g):
        n, c, h, w = g.size((1, 16, 5, 6), CNN)
        out = g.target("ConvInteger", [g.input(g.ints((n, c, h, w), 0, 256, "uint8")), g.init(g.ints((c, c, 3, 3), 0, 256, "uint8")),
                                       g.init(np.uint8(128)), g.init(np.uint8(121))], kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        g.output(out)
    add("ConvInteger", "ConvInteger", conv_integer, source="hand: uint8 3x3 64->64 at 56x56 (imgly's are 1x64x512x512: over the size cap)")

    def qlinear_conv(g):
        n, c, h, w = g.size((1, 16, 5, 6), CNN)
        out = g.target("QLinearConv", [g.input(g.ints((n, c, h, w), 0, 256, "uint8")), g.init(np.float32(0.02)), g.init(np.uint8(128)),
                                       g.init(g.ints((c, c, 3, 3), 0, 256, "uint8")), g.init(np.float32(0.005)), g.init(np.uint8(128)),
                                       g.init(np.float32(0.05)), g.init(np.uint8(128)), g.init(g.ints((c,), -1000, 1000, "int32"))],
                       kernel_shape=[3, 3], pads=[1, 1, 1, 1])
        g.output(out)
    add("QLinearConv", "QLinearConv", qlinear_conv, source="hand: uint8 3x3 64->64 at 56x56")

    def matmul_integer(g):
        s = seq(g)
        k, n_ = s[-1], g.size(16, 768)
        g.output(g.target("MatMulInteger", [g.input(g.ints(s, 0, 256, "uint8")), g.init(g.ints((k, n_), 0, 256, "uint8")),
                                            g.init(np.uint8(128)), g.init(np.uint8(128))]))
    add("MatMulInteger", "MatMulInteger", matmul_integer, source="hand: uint8 1x128x768 x 768x768")

    def qlinear_matmul(g):
        s = seq(g)
        k, n_ = s[-1], g.size(16, 768)
        g.output(g.target("QLinearMatMul", [g.input(g.ints(s, 0, 256, "uint8")), g.init(np.float32(0.02)), g.init(np.uint8(128)),
                                            g.init(g.ints((k, n_), 0, 256, "uint8")), g.init(np.float32(0.005)), g.init(np.uint8(128)),
                                            g.init(np.float32(0.05)), g.init(np.uint8(128))]))
    add("QLinearMatMul", "QLinearMatMul", qlinear_matmul, source="hand: uint8 1x128x768 x 768x768")
    add("QuantizeLinear", "QuantizeLinear",
        lambda g: g.output(g.target("QuantizeLinear", [g.input(g.uniform(cnn(g), -2, 2)), g.init(np.float32(0.02)),
                                                       g.init(np.uint8(128))])),
        source="hand: float32 -> uint8 1x64x56x56")
    add("DequantizeLinear", "DequantizeLinear",
        lambda g: g.output(g.target("DequantizeLinear", [g.input(g.ints(cnn(g), 0, 256, "uint8")), g.init(np.float32(0.02)),
                                                         g.init(np.uint8(128))])),
        source="hand: uint8 -> float32 1x64x56x56")
    add_recorded("DynamicQuantizeLinear", lambda g: g.output(*g.target("DynamicQuantizeLinear", [g.input(g.uniform(cnn(g)))], 3)),
                 hand_source="hand: CNN 1x64x56x56")

    # Products.
    def matmul_hand(g):
        s = seq(g)
        g.output(g.target("MatMul", [g.input(g.uniform(s)), g.init(g.uniform((s[-1], g.size(8, 768)), -0.1, 0.1))]))
    add_recorded("MatMul", matmul_hand, hand_source="hand: 1x128x768 x 768x768")
    add("MatMul.ffn", "MatMul", lambda g: g.output(g.target("MatMul", [g.input(g.uniform(seq(g))),
                                                                        g.init(g.uniform((seq(g)[-1], g.size(32, 3072)), -0.1, 0.1))])),
        source="hand: BERT FFN up-projection 1x128x768 x 768x3072")
    add("MatMul.batched", "MatMul", lambda g: g.output(g.target("MatMul", [g.input(g.uniform(g.size(TINY_HEADS, HEADS))),
                                                                            g.input(g.uniform(g.size((1, 2, 8, 4), (1, 12, 64, 128))))])),
        source="hand: attention Q x K^T 1x12x128x64 x 1x12x64x128")

    def matmul_bias_gelu(g):
        s = seq(g)
        n_ = g.size(32, 3072)
        y = g.node("MatMul", [g.input(g.uniform(s)), g.init(g.uniform((s[-1], n_), -0.1, 0.1))], name="target")
        g.target_inputs = list(g.nodes[-1].input)
        y = g.node("Add", [y, g.init(g.uniform((n_,), -0.1, 0.1))])
        g.output(_erf_gelu(g, y))
    add("MatMul+Add+Gelu", "kiln.FusedMatMul", matmul_bias_gelu,
        source="hand: BERT FFN 1x128x768 x 768x3072 + bias + GELU (erf form)")

    def gelu_pattern(g):
        g.output(_erf_gelu(g, g.input(g.uniform(g.size(TINY_FFN, FFN), -3, 3)), target=True))
    add("Gelu.erf_form", "kiln.Gelu", gelu_pattern,
        source="hand: x*(erf(x/sqrt2)+1)*0.5 on 1x128x3072")

    def gemm_hand(g):
        m, k, n_ = g.size((2, 16, 8), (1, 2048, 1000))
        g.output(g.target("Gemm", [g.input(g.uniform((m, k))), g.init(g.uniform((n_, k), -0.1, 0.1)), g.init(g.uniform((n_,)))],
                          transB=1))
    add_recorded("Gemm", gemm_hand, hand_source="hand: ResNet-50 classifier 1x2048 x 2048x1000")
    add("Gemm.tokens", "Gemm", lambda g: g.output(g.target("Gemm", [g.input(g.uniform(g.size((4, 16), (128, 768)))),
                                                                   g.init(g.uniform(g.size((16, 16), (768, 768)), -0.1, 0.1)),
                                                                   g.init(g.uniform((g.size(16, 768),)))], transB=1)),
        source="hand: linear layer over 128 tokens, 128x768 x 768x768")
    add("Gemm.transA", "Gemm", lambda g: g.output(g.target("Gemm", [g.input(g.uniform(g.size((16, 4), (768, 128)))),
                                                                   g.init(g.uniform(g.size((16, 16), (768, 768)), -0.1, 0.1)),
                                                                   g.init(g.uniform((g.size(16, 768),)))], transA=1, alpha=0.5)),
        source="hand: A^T (768x128) x 768x768, alpha 0.5 (not a plain product: no MatMul rewrite)")
    add("Einsum", "Einsum", lambda g: g.output(g.target("Einsum", [g.input(g.uniform(g.size(TINY_HEADS, HEADS))),
                                                                   g.input(g.uniform(g.size(TINY_HEADS, HEADS)))],
                                                        equation="bhid,bhjd->bhij")),
        source="hand: attention scores bhid,bhjd->bhij over 1x12x128x64")

    def attention(g):
        q, k, v = (g.input(g.uniform(g.size(TINY_HEADS, HEADS))) for _ in range(3))
        kt = g.node("Transpose", [k], perm=[0, 1, 3, 2])
        s = g.node("MatMul", [q, kt], name="target")
        g.target_inputs = [q, k]
        s = g.node("Div", [s, g.init(np.float32(8.0))])
        p = g.node("Softmax", [s], axis=-1)
        g.output(g.node("MatMul", [p, v]))
    add("Attention", "kiln.Attention", attention,
        source="hand: scaled dot-product attention, 12 heads x 128 tokens x 64")

    # Language models (GGUF decoders, frontend/gguf/decoder_graph): Llama-3.2-1B's shapes.
    kiln_ops = (("kiln", 1),)

    def rms_norm(g):
        s = g.size((1, 4, 64), (1, 128, 2048))
        g.output(g.target("RMSNormalization", [g.input(g.uniform(s)), g.init(g.uniform((s[-1],), 0.5, 1.5))], domain="kiln",
                          epsilon=1e-5), dtype="float32", shape=list(s))
    add("RMSNormalization", "kiln.RMSNormalization", rms_norm, extra_opsets=kiln_ops,
        source="hand: Llama-3.2-1B's hidden states, 128 tokens x 2048")

    def rotary(g):
        tokens, heads, head = g.size((4, 2, 16), (128, 32, 64))
        angles = np.arange(4096, dtype=np.float32)[:, None] * (10000.0 ** (-np.arange(head // 2, dtype=np.float32) / (head // 2)))[None, :]
        x = g.input(g.uniform((1, tokens, heads * head)))
        g.output(g.target("RotaryEmbedding", [x, g.init(np.cos(angles).astype(np.float32)), g.init(np.sin(angles).astype(np.float32)),
                                              g.init(np.arange(tokens, dtype=np.int64)[None, :])],
                          domain="kiln", num_heads=heads, interleaved=1), dtype="float32", shape=[1, tokens, heads * head])
    add("RotaryEmbedding", "kiln.RotaryEmbedding", rotary, extra_opsets=kiln_ops,
        source="hand: Llama-3.2-1B's queries, 128 tokens x 32 heads x 64, adjacent pairs")

    def tensor_scatter(g):
        kv, cache, head = g.size((2, 16, 8), (8, 4096, 64))
        tokens = g.size(4, 128)
        past = g.input(g.uniform((1, kv, cache, head)))
        update = g.input(g.uniform((1, kv, tokens, head)))
        g.output(g.target("TensorScatter", [past, update, g.input(np.array([g.size(5, 1000)], np.int64))], domain="kiln"),
                 dtype="float32", shape=[1, kv, cache, head])
    add("TensorScatter", "kiln.TensorScatter", tensor_scatter, extra_opsets=kiln_ops,
        source="hand: 128 prompt tokens' keys into Llama-3.2-1B's cache of one layer, 8 heads x 4096 x 64, at 1000")

    def q4_0_rows(rows, k, seed):
        """rows x k values as ggml's Q4_0 blocks (uint8 [rows, k / 32 * 18]): random nibbles, scale 0.01."""
        blocks = np.random.default_rng(seed).integers(0, 256, size=(rows, k // 32, 18), dtype=np.uint8)
        blocks[:, :, 0:2] = np.full((rows, k // 32), 0.01, np.float16).view(np.uint8).reshape(rows, k // 32, 2)
        return blocks.reshape(rows, k // 32 * 18)

    def block_quantized_matmul(g):
        n, k = g.size((64, 256), (2048, 2048))
        g.output(g.target("BlockQuantizedMatMul", [g.input(g.uniform((1, k))), g.init(q4_0_rows(n, k, 3))],
                          domain="kiln", block_type=2), dtype="float32", shape=[1, n])
    # The cpu kernel rounds activations to 8 bits per block of 32 (as llama.cpp does): half a step of
    # max |x| / 127 per value, so ~4e-3 of the reference's magnitude rather than float rounding.
    add("BlockQuantizedMatMul", "kiln.BlockQuantizedMatMul", block_quantized_matmul, extra_opsets=kiln_ops,
        source="hand: one decoded token through Llama-3.2-1B's Q4_0 attn_q, 2048x2048", tolerance=1e-2)

    def block_quantized_gather(g):
        vocab, k = g.size((64, 256), (128256, 2048))
        tokens = g.size(4, 128)
        g.output(g.target("BlockQuantizedGather", [g.init(q4_0_rows(vocab, k, 4)), g.input(g.ints((tokens,), 0, vocab))],
                          domain="kiln", block_type=2), dtype="float32", shape=[tokens, k])
    add("BlockQuantizedGather", "kiln.BlockQuantizedGather", block_quantized_gather, extra_opsets=kiln_ops,
        source="hand: 128 tokens' embeddings from Llama-3.2-1B's Q4_0 table, 128256x2048")

    def det(g):
        g.output(g.target("Det", [g.input(g.uniform(g.size((4, 3, 3), (4096, 3, 3))))]))
    add("Det", "Det", det, source="hand: 4096 3x3 matrices (geometry heads)")

    # Data movement.
    add_recorded("Transpose", lambda g: g.output(g.target("Transpose", [g.input(g.uniform(g.size((1, 4, 2, 8), (1, 128, 12, 64))))],
                                                          perm=[0, 2, 1, 3])),
                 hand_source="hand: heads split 1x128x12x64 -> 1x12x128x64")
    add("Transpose.nchw_nhwc", "Transpose", lambda g: g.output(g.target("Transpose", [g.input(g.uniform(cnn(g)))], perm=[0, 2, 3, 1])),
        source="hand: NCHW -> NHWC of 1x64x56x56")
    add_recorded("Reshape", lambda g: g.output(g.target("Reshape", [g.input(g.uniform(seq(g))),
                                                                   g.init(np.array([seq(g)[0], seq(g)[1], -1, g.size(4, 64)], np.int64))])),
                 derive={1: output_shape}, hand_source="hand: 1x128x768 -> 1x128x12x64")
    add_recorded("Flatten", lambda g: g.output(g.target("Flatten", [g.input(g.uniform(cnn(g)))], axis=1)),
                 hand_source="hand: 1x64x56x56 -> 1x200704")
    add_recorded("Squeeze", lambda g: g.output(g.target("Squeeze", [g.input(g.uniform((1,) + seq(g)[1:] + (1,))),
                                                                   g.init(np.array([-1], np.int64))])),
                 accept=no_run_time_ints(1), hand_source="hand: 1x128x768x1 -> 1x128x768")
    add_recorded("Unsqueeze", lambda g: g.output(g.target("Unsqueeze", [g.input(g.uniform(seq(g))), g.init(np.array([1], np.int64))])),
                 accept=no_run_time_ints(1), hand_source="hand: 1x128x768 -> 1x1x128x768")
    add_recorded("Identity", lambda g: g.output(g.target("Identity", [g.input(g.uniform(seq(g)))])), hand_source="hand: 1x128x768")

    def concat_hand(g):
        n, c, h, w = g.size((1, 16, 5, 6), (1, 128, 28, 28))
        g.output(g.target("Concat", [g.input(g.uniform((n, c, h, w))), g.input(g.uniform((n, c // 4, h, w)))], axis=1))
    add_recorded("Concat", concat_hand, accept=lambda s: s["inputs"][0]["dtype"] == "float32",
                 hand_source="hand: DenseNet concat 1x128x28x28 + 1x32x28x28")

    def split_hand(g):
        s = g.size((1, 16, 5, 6), (1, 232, 14, 14))
        g.output(*g.target("Split", [g.input(g.uniform(s)), g.init(np.array([s[1] // 2, s[1] // 2], np.int64))], 2, axis=1))
    add_recorded("Split", split_hand, accept=lambda s: s["inputs"][0]["dtype"] == "float32" and no_run_time_ints(1)(s),
                 hand_source="hand: ShuffleNet split 1x232x14x14 into halves")

    def slice_hand(g):
        s = g.size((1, 8, 12), (1, 197, 2304))
        g.output(g.target("Slice", [g.input(g.uniform(s)), g.init(np.array([s[-1] // 3], np.int64)),
                                    g.init(np.array([2 * s[-1] // 3], np.int64)), g.init(np.array([-1], np.int64))]))
    add_recorded("Slice", slice_hand, accept=lambda s: s["inputs"][0]["dtype"] == "float32" and no_run_time_ints(1, 2, 3, 4)(s),
                 hand_source="hand: K out of a fused QKV 1x197x2304")

    def gather_hand(g):
        vocab, dim = g.size((32, 16), (30522, 768))
        g.output(g.target("Gather", [g.init(g.uniform((vocab, dim))), g.input(g.ints(seq(g)[:2], 0, vocab))], axis=0))
    add_recorded("Gather", gather_hand, fills={1: index_fill()}, accept=lambda s: s["inputs"][0]["dtype"] == "float32",
                 hand_source="hand: BERT token embedding 30522x768, 1x128 ids")

    def gather_elements(g):
        s = seq(g)
        g.output(g.target("GatherElements", [g.input(g.uniform(s)), g.input(g.ints(s[:2] + (g.size(4, 64),), 0, s[-1]))], axis=-1))
    add("GatherElements", "GatherElements", gather_elements, source="hand: 64 picks per token of 1x128x768")

    def gather_nd(g):
        s = seq(g)
        k = g.size(2, 32)
        g.output(g.target("GatherND", [g.input(g.uniform(s)), g.input(g.ints((1, k, 1), 0, s[1]))], batch_dims=1))
    add("GatherND", "GatherND", gather_nd, source="hand: 32 token rows out of 1x128x768")

    def scatter_elements(op, opset=17):
        def hand(g):
            s = seq(g)
            k = g.size(4, 64)
            idx = np.stack([g.rng.permutation(s[-1])[:k] for _ in range(s[0] * s[1])]).reshape(s[:2] + (k,)).astype(np.int64)
            g.output(g.target(op, [g.input(g.uniform(s)), g.input(idx), g.input(g.uniform(s[:2] + (k,)))], axis=-1))
        return hand
    add("ScatterElements", "ScatterElements", scatter_elements("ScatterElements"), source="hand: 64 writes per token of 1x128x768")
    add("Scatter", "Scatter", scatter_elements("Scatter"), opset=10, source="hand: as ScatterElements (opset 10)")

    def scatter_nd(g):
        s = seq(g)
        k = g.size(2, 32)
        rows = np.stack([np.zeros(k, np.int64), g.rng.permutation(s[1])[:k]], axis=-1)[None]
        g.output(g.target("ScatterND", [g.input(g.uniform(s)), g.input(rows.astype(np.int64)), g.input(g.uniform((1, k, s[-1])))]))
    add("ScatterND", "ScatterND", scatter_nd, source="hand: 32 token rows into 1x128x768 (KV-cache update)")
    add_recorded("Expand", lambda g: g.output(g.target("Expand", [g.input(g.uniform((1, 1, seq(g)[-1]))),
                                                                 g.init(np.array(seq(g), np.int64))])),
                 derive={1: output_shape}, hand_source="hand: 1x1x768 -> 1x128x768")
    add("Tile", "Tile", lambda g: g.output(g.target("Tile", [g.input(g.uniform(g.size((1, 16, 3, 4), (1, 64, 28, 28)))),
                                                             g.init(np.array([1, 1, 2, 2], np.int64))])),
        source="hand: 1x64x28x28 tiled 2x2")
    add_recorded("Pad", lambda g: g.output(g.target("Pad", [g.input(g.uniform(cnn(g))),
                                                           g.init(np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))])),
                 derive={1: pads_from_output}, accept=lambda s: s["inputs"][0]["dtype"] == "float32",
                 hand_source="hand: 1-pixel zero pad of 1x64x56x56")
    add("DepthToSpace", "DepthToSpace",
        lambda g: g.output(g.target("DepthToSpace", [g.input(g.uniform(g.size((1, 16, 3, 4), (1, 256, 28, 28))))], blocksize=2,
                                    mode="DCR")),
        source="hand: 1x256x28x28 -> 1x64x56x56 (super-resolution)")
    add("SpaceToDepth", "SpaceToDepth", lambda g: g.output(g.target("SpaceToDepth", [g.input(g.uniform(g.size((1, 16, 4, 6), CNN)))],
                                                                    blocksize=2)),
        source="hand: 1x64x56x56 -> 1x256x28x28 (YOLO focus)")

    def resize_hand(g):
        n, c, h, w = g.size((1, 16, 4, 5), (1, 64, 28, 28))
        g.output(g.target("Resize", [g.input(g.uniform((n, c, h, w))), "", "", g.init(np.array([n, c, 2 * h, 2 * w], np.int64))],
                          mode="linear", coordinate_transformation_mode="half_pixel"))
    add_recorded("Resize", resize_hand, derive={3: output_shape}, accept=lambda s: len(s["inputs"]) == 4 and s["inputs"][3] is not None,
                 hand_source="hand: bilinear 2x of 1x64x28x28")
    add("Resize.nearest", "Resize", lambda g: g.output(g.target("Resize", [g.input(g.uniform(g.size((1, 16, 4, 5), (1, 64, 28, 28)))), "",
                                                                          g.init(np.array([1, 1, 2, 2], np.float32))], mode="nearest")),
        source="hand: nearest 2x of 1x64x28x28 (FPN/YOLO upsampling)")
    add("Upsample", "Upsample", lambda g: g.output(g.target("Upsample", [g.input(g.uniform(g.size((1, 16, 4, 5), (1, 64, 28, 28)))),
                                                                        g.init(np.array([1, 1, 2, 2], np.float32))], mode="nearest")),
        opset=9, source="hand: nearest 2x of 1x64x28x28 (opset 9)")
    add_recorded("Trilu", lambda g: g.output(g.target("Trilu", [g.input(g.bools(g.size((4, 4), (128, 128)))),
                                                               g.init(np.array(0, np.int64))], upper=0)),
                 hand_source="hand: causal mask 128x128")

    def reverse_sequence(g):
        t, b, f = g.size((5, 2, 4), (64, 4, 256))
        g.output(g.target("ReverseSequence", [g.input(g.uniform((t, b, f))), g.input(g.ints((b,), 1, t + 1))], batch_axis=1, time_axis=0))
    add("ReverseSequence", "ReverseSequence", reverse_sequence, source="hand: 64 steps x batch 4 x 256 (bidirectional RNN input)")
    add("Compress", "Compress", lambda g: g.output(g.target("Compress", [g.input(g.uniform(seq(g))), g.input(g.bools((seq(g)[1],)))],
                                                            axis=1),
                                                   dtype="float32", shape=[1, "n", seq(g)[2]]),
        source="hand: keep half the tokens of 1x128x768")
    add("NonZero", "NonZero",
        lambda g: g.output(g.target("NonZero", [g.input(np.where(g.bools(cnn(g)), g.uniform(cnn(g)), 0).astype(np.float32))])),
        source="hand: half-zero 1x64x56x56")
    add("Unique", "Unique",
        lambda g: g.output(*g.target("Unique", [g.input(g.ints((g.size(16, 16384),), 0, g.size(8, 4096)))], 4, sorted=1)),
        source="hand: 16384 int64 ids from 4096")
    add("OneHot", "OneHot", lambda g: g.output(g.target("OneHot", [g.input(g.ints(g.size((1, 4), (1, 128)), 0, g.size(10, 1000))),
                                                                   g.init(np.array(g.size(10, 1000), np.int64)),
                                                                   g.init(np.array([0, 1], np.float32))], axis=-1)),
        source="hand: 128 ids -> 1x128x1000")
    add("EyeLike", "EyeLike", lambda g: g.output(g.target("EyeLike", [g.input(g.uniform(g.size((4, 6), (512, 512))))])),
        source="hand: 512x512")
    add("Range", "Range", lambda g: g.output(g.target("Range", [g.input(np.array(0, np.float32)),
                                                                g.input(np.array(g.size(10, 65536), np.float32)),
                                                                g.input(np.array(1, np.float32))]), dtype="float32", shape=["n"]),
        source="hand: 0..65536 float32 (position ids)")
    add_recorded("ConstantOfShape", lambda g: g.output(g.target("ConstantOfShape", [g.input(np.array(cnn(g), np.int64))],
                                                                value=numpy_helper.from_array(np.array([0], np.float32))),
                                                       dtype="float32", shape=["a", "b", "c", "d"]),
                 accept=lambda s: False, hand_source="hand: run-time shape 1x64x56x56 (recorded ones are constants, folded)")
    for op in ("HannWindow", "HammingWindow", "BlackmanWindow"):
        add(op, op, lambda g, op=op: g.output(g.target(op, [g.input(np.array(g.size(16, 1024), np.int64))], periodic=1),
                                              dtype="float32", shape=["n"]),
            source="hand: 1024-point window (a run-time size)")
    add("MelWeightMatrix", "MelWeightMatrix",
        lambda g: g.output(g.target("MelWeightMatrix", [g.input(np.array(g.size(8, 80), np.int64)),
                                                        g.input(np.array(g.size(16, 512), np.int64)),
                                                        g.input(np.array(16000, np.int64)), g.input(np.array(0.0, np.float32)),
                                                        g.input(np.array(8000.0, np.float32))]), dtype="float32", shape=["a", "b"]),
        source="hand: 80 mel bins of a 512-point DFT at 16 kHz")
    add("DFT", "DFT", lambda g: g.output(g.target("DFT", [g.input(g.uniform(g.size((3, 16, 1), (97, 512, 1))))], axis=1, onesided=1)),
        source="hand: 97 frames x 512 real samples (a 1 s spectrogram)")
    add("STFT", "STFT", lambda g: g.output(g.target("STFT", [g.input(g.uniform(g.size((1, 64, 1), (1, 16000, 1)))),
                                                             g.init(np.array(g.size(8, 160), np.int64)),
                                                             g.init(np.hanning(g.size(16, 512)).astype(np.float32))], onesided=1),
                                           dtype="float32", shape=["a", "b", "c", "d"]),
        source="hand: 1 s of 16 kHz audio, 512-point frames every 160")
    add("CenterCropPad", "CenterCropPad", lambda g: g.output(g.target("CenterCropPad", [g.input(g.uniform(cnn(g))),
                                                                                       g.init(np.array(g.size((4, 4), (48, 48)), np.int64))],
                                                                      axes=[2, 3]), dtype="float32", shape=["a", "b", "c", "d"]),
        opset=18, source="hand: crop 1x64x56x56 to 48x48")

    def col2im(g):
        c, k, h, w = g.size((2, 3, 4, 5), (64, 3, 56, 56))
        g.output(g.target("Col2Im", [g.input(g.uniform((1, c * k * k, h * w))), g.init(np.array([h, w], np.int64)),
                                     g.init(np.array([k, k], np.int64))], pads=[1, 1, 1, 1]), dtype="float32", shape=[1, c, h, w])
    add("Col2Im", "Col2Im", col2im, opset=18, source="hand: 3x3 columns of a 64x56x56 map")

    # Detection and sampling.
    def nms(g):
        n = g.size(16, 1000)
        xy = g.uniform((1, n, 2), 0, 0.9)
        wh = g.uniform((1, n, 2), 0.02, 0.1)
        g.output(g.target("NonMaxSuppression", [g.input(np.concatenate([xy, xy + wh], -1)), g.input(g.uniform((1, 1, n), 0, 1)),
                                                g.init(np.array([100], np.int64)), g.init(np.array([0.5], np.float32)),
                                                g.init(np.array([0.3], np.float32))]))
    add("NonMaxSuppression", "NonMaxSuppression", nms, source="hand: 1000 boxes, one class, IoU 0.5 (detector head)")

    def roi_align(g):
        n, c, h, w = g.size((1, 8, 8, 8), (1, 256, 56, 56))
        r = g.size(4, 128)
        xy = g.uniform((r, 2), 0, 4 * w * 0.7)
        rois = np.concatenate([xy, xy + g.uniform((r, 2), 8, 4 * w * 0.3)], -1).astype(np.float32)
        g.output(g.target("RoiAlign", [g.input(g.uniform((n, c, h, w))), g.input(rois), g.input(np.zeros((r,), np.int64))],
                          output_height=7, output_width=7, sampling_ratio=2, spatial_scale=0.25))
    add("RoiAlign", "RoiAlign", roi_align, opset=16, source="hand: Mask R-CNN box head, 128 RoIs of a 1x256x56x56 map")
    add("GridSample", "GridSample", lambda g: g.output(g.target("GridSample", [g.input(g.uniform(cnn(g))),
                                                                              g.input(g.uniform((1,) + cnn(g)[2:] + (2,)))],
                                                                align_corners=0)),
        opset=16, source="hand: bilinear warp of 1x64x56x56")
    add("AffineGrid", "AffineGrid", lambda g: g.output(g.target("AffineGrid", [g.input(g.uniform((1, 2, 3))),
                                                                              g.init(np.array(cnn(g), np.int64))], align_corners=0),
                                                       dtype="float32", shape=[1, cnn(g)[2], cnn(g)[3], 2]),
        opset=20, source="hand: sampling grid of a 56x56 map")

    # Recurrent (64 steps, batch 1, 128 features, hidden 128, as silero's LSTM).
    def recurrent(op, gates):
        def hand(g):
            t, i, hdim = g.size((3, 4, 8), (64, 128, 128))
            x = g.input(g.uniform((t, 1, i)))
            w = g.init(g.uniform((1, gates * hdim, i), -0.2, 0.2))
            r = g.init(g.uniform((1, gates * hdim, hdim), -0.2, 0.2))
            b = g.init(g.uniform((1, 2 * gates * hdim), -0.1, 0.1))
            outs = g.target(op, [x, w, r, b], 2, hidden_size=hdim)
            g.output(*outs)
        return hand
    add("LSTM", "LSTM", recurrent("LSTM", 4), source="hand: 64 steps x 128 -> hidden 128 (silero's is inside an If)")
    add("GRU", "GRU", recurrent("GRU", 3), source="hand: 64 steps x 128 -> hidden 128")
    add("RNN", "RNN", recurrent("RNN", 1), source="hand: 64 steps x 128 -> hidden 128")

    # Losses.
    def loss(op):
        def hand(g):
            n, c = g.size((4, 10), (32, 1000))
            x = g.input(g.uniform((n, c), -3, 0) if op == "NegativeLogLikelihoodLoss" else g.uniform((n, c), -3, 3))
            g.output(g.target(op, [x, g.input(g.ints((n,), 0, c))], reduction="mean"), dtype="float32", shape=[])
        return hand
    add("NegativeLogLikelihoodLoss", "NegativeLogLikelihoodLoss", loss("NegativeLogLikelihoodLoss"), source="hand: 32 x 1000 classes")
    add("SoftmaxCrossEntropyLoss", "SoftmaxCrossEntropyLoss", loss("SoftmaxCrossEntropyLoss"), source="hand: 32 x 1000 classes")

    def tfidf(g):
        g.output(g.target("TfIdfVectorizer", [g.input(g.ints(g.size((1, 8), (1, 256)), 0, 100))], mode="TF", min_gram_length=1,
                          max_gram_length=2, max_skip_count=0, ngram_counts=[0, 4], ngram_indexes=list(range(6)),
                          pool_int64s=[2, 3, 5, 7, 2, 3, 5, 7]), dtype="float32", shape=[1, 6])
    add("TfIdfVectorizer", "TfIdfVectorizer", tfidf, source="hand: 256 int64 tokens, 4 unigrams and 2 bigrams")

    # Shapes (with --specialize both runtimes may fold these to constants: they time the rest).
    add_recorded("Shape", lambda g: g.output(g.target("Shape", [g.input(g.uniform(seq(g)))])), hand_source="hand: 1x128x768")
    add("Size", "Size", lambda g: g.output(g.target("Size", [g.input(g.uniform(seq(g)))])), source="hand: 1x128x768")

    # Patterns Kiln fuses into its own ops.
    def channel_shuffle(g):
        n, c, h, w = g.size((1, 8, 3, 4), (1, 116, 28, 28))
        x = g.input(g.uniform((n, c, h, w)))
        y = g.node("Reshape", [x, g.init(np.array([n, 2, c // 2, h, w], np.int64))])
        y = g.node("Transpose", [y], name="target", perm=[0, 2, 1, 3, 4])
        g.target_inputs = [x]
        g.output(g.node("Reshape", [y, g.init(np.array([n, c, h, w], np.int64))]))
    add("ChannelShuffle", "kiln.ChannelShuffle", channel_shuffle,
        source="hand: ShuffleNetV2 shuffle of 1x116x28x28 (fp_pose)")

    def chain(g):
        s = cnn(g)
        x = g.input(g.uniform(s))
        y = g.node("Mul", [x, g.init(g.uniform((s[1], 1, 1), 0.5, 1.5))], name="target")
        g.target_inputs = [x]
        y = g.node("Add", [y, g.init(g.uniform((s[1], 1, 1)))])
        g.output(g.node("Mul", [y, g.node("Sigmoid", [y])]))
    add("ElementwiseChain", "kiln.ElementwiseChain", chain,
        source="hand: scale, shift, SiLU on 1x64x56x56 (one pass instead of four)")

    # Control flow, sequences, optionals (the work inside is small: these time the machinery).
    def if_case(g):
        s = seq(g)
        x = g.input(g.uniform(s))
        then_b = helper.make_graph([helper.make_node("Relu", [x], ["t"])], "then", [], [tensor_info("t", "float32", s)])
        else_b = helper.make_graph([helper.make_node("Neg", [x], ["e"])], "else", [], [tensor_info("e", "float32", s)])
        g.output(g.target("If", [g.input(np.array(True))], then_branch=then_b, else_branch=else_b), dtype="float32", shape=list(s))
    add("If", "If", if_case, source="hand: branch on a run-time bool, Relu/Neg of 1x128x768 (silero's If)")

    def loop_case(g):
        s = seq(g)
        x = g.input(g.uniform(s))
        body = helper.make_graph(
            [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
             helper.make_node("Mul", ["v_in", "half"], ["h"]), helper.make_node("Add", ["h", x], ["v_out"])], "body",
            [tensor_info("i", "int64", []), tensor_info("cond_in", "bool", []), tensor_info("v_in", "float32", s)],
            [tensor_info("cond_out", "bool", []), tensor_info("v_out", "float32", s)],
            [numpy_helper.from_array(np.float32(0.5), "half")])
        g.output(g.target("Loop", [g.input(np.array(g.size(2, 8), np.int64)), g.input(np.array(True)), x], body=body),
                 dtype="float32", shape=list(s))
    add("Loop", "Loop", loop_case, source="hand: 8 iterations of v = v/2 + x on 1x128x768")

    def scan_case(g):
        t, d = g.size((4, 8), (128, 768))
        body = helper.make_graph(
            [helper.make_node("Add", ["s_in", "x_t"], ["s_out"]), helper.make_node("Identity", ["s_out"], ["y_t"])], "body",
            [tensor_info("s_in", "float32", [1, d]), tensor_info("x_t", "float32", [1, d])],
            [tensor_info("s_out", "float32", [1, d]), tensor_info("y_t", "float32", [1, d])])
        outs = g.target("Scan", [g.input(np.zeros((1, d), np.float32)), g.input(g.uniform((t, 1, d)))], 2, body=body, num_scan_inputs=1)
        g.output(outs[0], dtype="float32", shape=[1, d])
        g.output(outs[1], dtype="float32", shape=[t, 1, d])
    add("Scan", "Scan", scan_case, opset=16, source="hand: running sum over 128 steps of 1x768")

    def sequence_ops(g):
        s = seq(g)
        a, b, c = (g.input(g.uniform(s)) for _ in range(3))
        s1 = g.node("SequenceConstruct", [a, b, c], name="target")
        g.target_inputs = [a, b, c]
        s2 = g.node("SequenceErase", [s1, g.init(np.array(1, np.int64))])
        s3 = g.node("SequenceInsert", [s2, a])
        at = g.node("SequenceAt", [s3, g.init(np.array(-1, np.int64))])
        n = g.node("SequenceLength", [s3])
        e = g.node("SequenceInsert", [g.node("SequenceEmpty", [], dtype=TensorProto.FLOAT), b])
        parts = g.node("SplitToSequence", [c, g.init(np.array(g.size(2, 32), np.int64))], axis=1)
        g.output(at, dtype="float32", shape=list(s))
        g.output(n, dtype="int64", shape=[])
        g.output(g.node("ConcatFromSequence", [s3], axis=0), dtype="float32", shape=[3 * s[0]] + list(s[1:]))
        g.output(g.node("ConcatFromSequence", [e], axis=0), dtype="float32", shape=list(s))
        g.output(g.node("ConcatFromSequence", [parts], axis=1), dtype="float32", shape=list(s))
    add("Sequence", "SequenceConstruct", sequence_ops,
        covers=("SequenceErase", "SequenceInsert", "SequenceAt", "SequenceLength", "SequenceEmpty", "SplitToSequence",
                "ConcatFromSequence"),
        source="hand: lists of three 1x128x768 tensors")

    def sequence_map(g):
        s = seq(g)
        parts = g.node("SplitToSequence", [g.input(g.uniform(s)), g.init(np.array(g.size(2, 16), np.int64))], axis=1)
        body = helper.make_graph([helper.make_node("Relu", ["p"], ["q"])], "body",
                                 [helper.make_tensor_value_info("p", TensorProto.FLOAT, [s[0], None, s[2]])],
                                 [helper.make_tensor_value_info("q", TensorProto.FLOAT, [s[0], None, s[2]])])
        mapped = g.node("SequenceMap", [parts], name="target", body=body)
        g.target_inputs = [g.inputs[0].name]
        g.output(g.node("ConcatFromSequence", [mapped], axis=1), dtype="float32", shape=list(s))
    add("SequenceMap", "SequenceMap", sequence_map, covers=("SplitToSequence", "ConcatFromSequence"),
        source="hand: Relu over 8 chunks of 1x128x768")

    def optional_ops(g):
        s = seq(g)
        x = g.input(g.uniform(s))
        o = g.node("Optional", [x], name="target")
        g.target_inputs = [x]
        g.output(g.node("OptionalHasElement", [o]), dtype="bool", shape=[])
        g.output(g.node("Relu", [g.node("OptionalGetElement", [o])]), dtype="float32", shape=list(s))
    add("Optional", "Optional", optional_ops, opset=18, covers=("OptionalHasElement", "OptionalGetElement"),
        source="hand: wrap and unwrap 1x128x768")
    return cases


def _erf_gelu(g, x, target=False):
    """x * (erf(x / sqrt 2) + 1) * 0.5, as PyTorch exports nn.GELU()."""
    d = g.node("Div", [x, g.init(np.float32(np.sqrt(2)))], name="target" if target else None)
    if target:
        g.target_inputs = [x]
    e = g.node("Erf", [d])
    a = g.node("Add", [e, g.init(np.float32(1))])
    m = g.node("Mul", [x, a])
    return g.node("Mul", [m, g.init(np.float32(0.5))])


def _depthwise(g):
    n, c, h, w = g.size((1, 16, 6, 6), (1, 144, 56, 56))
    g.output(g.target("Conv", [g.input(g.uniform((n, c, h, w))), g.init(g.uniform((c, 1, 3, 3), -0.2, 0.2)),
                               g.init(g.uniform((c,), -0.1, 0.1))], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=c))


def _conv1d(g):
    n, c, t = g.size((1, 16, 10), (1, 128, 256))
    g.output(g.target("Conv", [g.input(g.uniform((n, c, t))), g.init(g.uniform((c, c, 3), -0.2, 0.2)), g.init(g.uniform((c,)))],
                      kernel_shape=[3], pads=[1, 1]))


_CASES = None


def all_cases():
    """Every case, in table order (names unique)."""
    global _CASES
    if _CASES is None:
        _CASES = _cases()
        names = [c.name for c in _CASES]
        duplicates = sorted({n for n in names if names.count(n) > 1})
        if duplicates:
            raise ValueError(f"duplicate case names: {duplicates}")
    return _CASES


def coverage_problems(kiln_ops, cases=None):
    """What breaks the rule 'every op of `kiln ops` is a case's op (or covered by one) or excluded,
    never both, and nothing is excluded or timed that `kiln ops` lacks'."""
    cases = all_cases() if cases is None else cases
    covered = {op for c in cases for op in c.ops}
    listed = set(kiln_ops)
    problems = []
    for op in sorted(listed):
        if op in covered and op in EXCLUDED:
            problems.append(f"{op}: both a case and excluded ({EXCLUDED[op]})")
        elif op not in covered and op not in EXCLUDED:
            problems.append(f"{op}: neither a case nor excluded (add a case to harness/op_cases.py, or an exclusion with the reason)")
    for op in sorted(set(EXCLUDED) - listed):
        problems.append(f"{op}: excluded but not in `kiln ops` (take it off EXCLUDED)")
    for op in sorted(covered - listed):
        problems.append(f"{op}: a case times it but `kiln ops` does not list it")
    return problems
