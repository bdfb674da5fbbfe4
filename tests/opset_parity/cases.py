"""The opset-parity cases: one tiny ONNX model per operator version of opsets 18-21, with fixed inputs.

Each entry of CASES is a Case: a name, the opset it imports, a function building the ModelProto and
a function making its inputs (name -> numpy array, from a generator seeded by the case's name, so
they never change), plus the tolerance its float outputs are held to:

    max|kiln - ort| <= tol * max(1, max|ort|)     (tol = 1e-4 unless the case says otherwise)

Integer and bool outputs must be equal (int_tol = 0 unless the case says otherwise).

Debian's onnx 1.12 writes models of any opset, but its checker and shape inference do not know
opsets 18+: neither is called here, and every graph input and output is given its type and shape.
Parameters (scales, sizes, axes, zero points...) are initializers; data tensors are graph inputs.

numpy and onnx are imported lazily, so `run_case.py --list` (read by CMake) needs neither.
"""
import zlib

DEFAULT_TOL = 1e-4


class Case:
    def __init__(self, name, opset, build, inputs, tol=DEFAULT_TOL, int_tol=0, note=""):
        self.name = name
        self.opset = opset
        self.build = build          # () -> onnx.ModelProto
        self._inputs = inputs       # (numpy.random.Generator) -> {name: array}
        self.tol = tol
        self.int_tol = int_tol
        self.note = note

    def make_inputs(self):
        import numpy as np
        rng = np.random.default_rng(zlib.crc32(self.name.encode()))
        return self._inputs(rng)


CASES = []


def case(name, opset, build, inputs, **kw):
    assert all(c.name != name for c in CASES), name
    CASES.append(Case(name, opset, build, inputs, **kw))


def find(name):
    for c in CASES:
        if c.name == name:
            return c
    return None


# ---------------------------------------------------------------------------------------------
# Building blocks
# ---------------------------------------------------------------------------------------------

def _onnx_type(dtype):
    import numpy as np
    from onnx import TensorProto, mapping
    if np.dtype(dtype).kind == "U":
        return TensorProto.STRING
    return mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(dtype)]


def _initializer(name, value):
    """A numpy value, or a TensorProto made by narrow_tensor, as the initializer `name`."""
    import numpy as np
    from onnx import TensorProto, numpy_helper
    if isinstance(value, TensorProto):
        value.name = name
        return value
    return numpy_helper.from_array(np.asarray(value), name)


# ONNX codes of the narrow types Debian's onnx 1.12 predates (TensorProto.DataType of onnx 1.17).
FLOAT8 = {"float8e4m3fn": 17, "float8e4m3fnuz": 18, "float8e5m2": 19, "float8e5m2fnuz": 20}
INT4 = {"uint4": 21, "int4": 22}


def narrow_tensor(type_name, values):
    """A TensorProto of a float8 type from its raw codes (uint8), or of a 4-bit type from its values,
    packed two per byte (the first in the low nibble) as ONNX stores them."""
    import numpy as np
    from onnx import TensorProto
    values = np.asarray(values)
    t = TensorProto()
    t.dims.extend(values.shape)
    if type_name in FLOAT8:
        t.data_type = FLOAT8[type_name]
        t.raw_data = values.astype(np.uint8).tobytes()
    else:
        t.data_type = INT4[type_name]
        nibbles = (values.astype(np.int64).ravel() & 0x0F).astype(np.uint8)
        if nibbles.size % 2:
            nibbles = np.append(nibbles, np.uint8(0))
        t.raw_data = (nibbles[0::2] | (nibbles[1::2] << 4)).astype(np.uint8).tobytes()
    return t


def model(nodes, inputs, outputs, opset, initializers=None):
    """inputs / outputs: [(name, numpy dtype, shape)]; initializers: {name: array}."""
    import numpy as np
    from onnx import helper, numpy_helper
    graph = helper.make_graph(
        nodes, "opset_parity",
        [helper.make_tensor_value_info(n, _onnx_type(t), list(s)) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, _onnx_type(t), list(s)) for n, t, s in outputs],
        initializer=[_initializer(n, a) for n, a in (initializers or {}).items()])
    return helper.make_model(graph, producer_name="kiln-opset-parity",
                             opset_imports=[helper.make_opsetid("", opset)],
                             ir_version=10 if opset >= 21 else 9)


def single(op, opset, inputs, outputs, initializers=None, node_inputs=None, **attrs):
    """A model of one node. node_inputs: the node's input names in order ('' for an omitted one);
    default: the graph inputs, then the initializers, in the order given."""
    from onnx import helper
    inits = initializers or {}
    names = node_inputs if node_inputs is not None else [n for n, _, _ in inputs] + list(inits)
    node = helper.make_node(op, names, [n for n, _, _ in outputs], **attrs)
    return model([node], inputs, outputs, opset, inits)


def f32(x):
    import numpy as np
    return np.asarray(x, dtype=np.float32)


def i64(x):
    import numpy as np
    return np.asarray(x, dtype=np.int64)


def uniform(rng, shape, lo=-1.0, hi=1.0):
    import numpy as np
    return rng.uniform(lo, hi, size=shape).astype(np.float32)


def ints(rng, shape, dtype):
    import numpy as np
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)


# ---------------------------------------------------------------------------------------------
# Gelu-20, Mish-18
# ---------------------------------------------------------------------------------------------

def _activation_inputs(rng, lo, hi):
    x = uniform(rng, (2, 3, 16), lo, hi)
    x.flat[:8] = [0.0, -0.0, 1e-6, -1e-6, hi, -20.0, -100.0, -1000.0]  # around zero, the negative tail
    return {"x": x}


for _approx in ("none", "tanh"):
    case("gelu_20_" + _approx, 20,
         lambda a=_approx: single("Gelu", 20, [("x", "float32", (2, 3, 16))], [("y", "float32", (2, 3, 16))],
                                  approximate=a),
         lambda rng: _activation_inputs(rng, -5, 5))

case("mish_18", 18,
     lambda: single("Mish", 18, [("x", "float32", (2, 3, 16))], [("y", "float32", (2, 3, 16))]),
     lambda rng: _activation_inputs(rng, -8, 8))
# Where exp(x) overflows float32 (x > 88.7): softplus must not become inf / inf = NaN.
case("mish_18_tails", 18,
     lambda: single("Mish", 18, [("x", "float32", (15,))], [("y", "float32", (15,))]),
     lambda rng: {"x": f32([15, 30, 50, 88, 89, 100, 1000, -15, -30, -50, -88, -89, -100, -1000, -1e4])})


# ---------------------------------------------------------------------------------------------
# BitwiseAnd / BitwiseOr / BitwiseXor / BitwiseNot-18
# ---------------------------------------------------------------------------------------------

_BITWISE_BINARY = {"and": "BitwiseAnd", "or": "BitwiseOr", "xor": "BitwiseXor"}
# (dtype, a shape, b shape, output shape): int32 broadcasts b over a's last axis, uint8 over the
# middle one with a rank-2 b.
_BITWISE_SHAPES = {"int32": ((2, 3, 4), (4,), (2, 3, 4)), "uint8": ((2, 1, 4), (3, 1), (2, 3, 4))}

for _key, _op in _BITWISE_BINARY.items():
    for _t, (_sa, _sb, _so) in _BITWISE_SHAPES.items():
        case("bitwise_%s_18_%s" % (_key, _t), 18,
             lambda op=_op, t=_t, sa=_sa, sb=_sb, so=_so: single(
                 op, 18, [("a", t, sa), ("b", t, sb)], [("y", t, so)]),
             lambda rng, t=_t, sa=_sa, sb=_sb: {"a": ints(rng, sa, t), "b": ints(rng, sb, t)})

for _t in ("int32", "uint8", "int64"):
    case("bitwise_not_18_" + _t, 18,
         lambda t=_t: single("BitwiseNot", 18, [("x", t, (3, 7))], [("y", t, (3, 7))]),
         lambda rng, t=_t: {"x": ints(rng, (3, 7), t)})


# ---------------------------------------------------------------------------------------------
# Resize-18, Resize-19
# ---------------------------------------------------------------------------------------------

def resize(opset, x_shape, y_shape, scales=None, sizes=None, **attrs):
    """Resize with X a graph input and roi omitted; scales (float) or sizes (int64) an initializer."""
    inits = {}
    names = ["x", "", "", ""]
    if scales is not None:
        inits["scales"] = f32(scales)
        names[2] = "scales"
    if sizes is not None:
        inits["sizes"] = i64(sizes)
        names[3] = "sizes"
    while names[-1] == "":
        names.pop()
    return single("Resize", opset, [("x", "float32", x_shape)], [("y", "float32", y_shape)], inits, names, **attrs)


def _x(shape):
    return lambda rng: {"x": uniform(rng, shape)}


# (a) linear with scales, as Resize-13 does it (half_pixel).
case("resize_18_linear_scales", 18,
     lambda: resize(18, (1, 2, 4, 5), (1, 2, 6, 10), scales=[1, 1, 1.5, 2], mode="linear"),
     _x((1, 2, 4, 5)))
# (b) axes: sizes for the two spatial axes only (upscale H, downscale W).
case("resize_18_axes_sizes", 18,
     lambda: resize(18, (1, 2, 4, 5), (1, 2, 7, 3), sizes=[7, 3], axes=[2, 3], mode="linear"),
     _x((1, 2, 4, 5)))
# (c) keep_aspect_ratio_policy: 5x7 to fit 8x9. not_larger: scale min(8/5, 9/7) = 9/7 -> 6x9;
# not_smaller: scale 8/5 -> 8x11 (round(7 * 1.6) = 11). Both axes use the one scale.
case("resize_18_keep_aspect_not_larger", 18,
     lambda: resize(18, (1, 2, 5, 7), (1, 2, 6, 9), sizes=[8, 9], axes=[2, 3], mode="linear",
                    keep_aspect_ratio_policy="not_larger"),
     _x((1, 2, 5, 7)))
case("resize_18_keep_aspect_not_smaller", 18,
     lambda: resize(18, (1, 2, 5, 7), (1, 2, 8, 11), sizes=[8, 9], axes=[2, 3], mode="linear",
                    keep_aspect_ratio_policy="not_smaller"),
     _x((1, 2, 5, 7)))
# (d) nearest, round_prefer_floor: asymmetric with H scale 2 puts every other sample on a .5 tie.
case("resize_18_nearest_round_prefer_floor", 18,
     lambda: resize(18, (1, 2, 4, 6), (1, 2, 8, 15), scales=[1, 1, 2, 2.5], mode="nearest",
                    nearest_mode="round_prefer_floor", coordinate_transformation_mode="asymmetric"),
     _x((1, 2, 4, 6)))
# (e) antialias: linear downscale by 0.5, cubic downscale by 0.5 x 0.75. The filter is stretched by
# 1/scale (linear: 4 taps 1/8, 3/8, 3/8, 1/8 at 0.5); taps outside the input take the edge value
# (exclude_outside 0), as ONNX's reference does, rather than being dropped and renormalised.
case("resize_18_antialias_linear", 18,
     lambda: resize(18, (1, 2, 8, 8), (1, 2, 4, 4), scales=[1, 1, 0.5, 0.5], mode="linear", antialias=1),
     _x((1, 2, 8, 8)))
case("resize_18_antialias_cubic", 18,
     lambda: resize(18, (1, 2, 8, 12), (1, 2, 4, 9), scales=[1, 1, 0.5, 0.75], mode="cubic", antialias=1),
     _x((1, 2, 8, 12)))
# Resize-19 half_pixel_symmetric: W scales whose output is not a whole number (5 * 1.7 = 8.5,
# 9 * 0.6 = 5.4), so the adjustment output_int / (scale * input) differs from 1.
case("resize_19_half_pixel_symmetric_up", 19,
     lambda: resize(19, (1, 2, 4, 5), (1, 2, 6, 8), scales=[1, 1, 1.5, 1.7], mode="linear",
                    coordinate_transformation_mode="half_pixel_symmetric"),
     _x((1, 2, 4, 5)))
case("resize_19_half_pixel_symmetric_down", 19,
     lambda: resize(19, (1, 2, 8, 9), (1, 2, 4, 5), scales=[1, 1, 0.5, 0.6], mode="linear",
                    coordinate_transformation_mode="half_pixel_symmetric"),
     _x((1, 2, 8, 9)))


# ---------------------------------------------------------------------------------------------
# AveragePool-19
# ---------------------------------------------------------------------------------------------

# Dilation 2 makes the 3x3 kernel span 5x5: (7 + 2 - 5) / 1 + 1 = 5.
for _cip in (0, 1):
    case("averagepool_19_dilations_cip%d" % _cip, 19,
         lambda cip=_cip: single("AveragePool", 19, [("x", "float32", (1, 2, 7, 7))],
                                 [("y", "float32", (1, 2, 5, 5))], kernel_shape=[3, 3], dilations=[2, 2],
                                 pads=[1, 1, 1, 1], strides=[1, 1], count_include_pad=cip),
         _x((1, 2, 7, 7)))
case("averagepool_19_plain", 19,
     lambda: single("AveragePool", 19, [("x", "float32", (1, 2, 7, 7))], [("y", "float32", (1, 2, 4, 4))],
                    kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
     _x((1, 2, 7, 7)))


# ---------------------------------------------------------------------------------------------
# ScatterElements-18, ScatterND-18 with reduction max / min
# ---------------------------------------------------------------------------------------------

case("scatter_elements_18_max", 18,
     lambda: single("ScatterElements", 18,
                    [("data", "float32", (4, 5)), ("indices", "int64", (3, 5)), ("updates", "float32", (3, 5))],
                    [("y", "float32", (4, 5))], axis=0, reduction="max"),
     lambda rng: {"data": uniform(rng, (4, 5)), "indices": rng.integers(0, 4, (3, 5)).astype("int64"),
                  "updates": uniform(rng, (3, 5))})
case("scatter_elements_18_min", 18,
     lambda: single("ScatterElements", 18,
                    [("data", "float32", (3, 6)), ("indices", "int64", (3, 4)), ("updates", "float32", (3, 4))],
                    [("y", "float32", (3, 6))], axis=1, reduction="min"),
     lambda rng: {"data": uniform(rng, (3, 6)), "indices": rng.integers(-6, 6, (3, 4)).astype("int64"),
                  "updates": uniform(rng, (3, 4))})
# ScatterND: distinct indices (slices of data [4, 3, 2] along axis 0; elements of [3, 4]).
case("scatternd_18_max", 18,
     lambda: single("ScatterND", 18,
                    [("data", "float32", (4, 3, 2)), ("indices", "int64", (3, 1)), ("updates", "float32", (3, 3, 2))],
                    [("y", "float32", (4, 3, 2))], reduction="max"),
     lambda rng: {"data": uniform(rng, (4, 3, 2)), "indices": i64([[2], [0], [3]]),
                  "updates": uniform(rng, (3, 3, 2))})
case("scatternd_18_min", 18,
     lambda: single("ScatterND", 18,
                    [("data", "float32", (3, 4)), ("indices", "int64", (4, 2)), ("updates", "float32", (4,))],
                    [("y", "float32", (3, 4))], reduction="min"),
     lambda rng: {"data": uniform(rng, (3, 4)), "indices": i64([[0, 1], [2, 3], [1, 0], [2, 0]]),
                  "updates": uniform(rng, (4,))})


# ---------------------------------------------------------------------------------------------
# QuantizeLinear / DequantizeLinear-19 and -21, QLinearMatMul-21
# ---------------------------------------------------------------------------------------------

def quantize(opset, x_shape, scale, zp, y_dtype, **attrs):
    import numpy as np
    inits = {"y_scale": f32(scale), "y_zero_point": np.asarray(zp, dtype=y_dtype)}
    return single("QuantizeLinear", opset, [("x", "float32", x_shape)], [("y", y_dtype, x_shape)], inits, **attrs)


def dequantize(opset, x_shape, x_dtype, scale, zp, **attrs):
    import numpy as np
    inits = {"x_scale": f32(scale), "x_zero_point": np.asarray(zp, dtype=x_dtype)}
    return single("DequantizeLinear", opset, [("x", x_dtype, x_shape)], [("y", "float32", x_shape)], inits, **attrs)


def _q_x(shape, span, ties=()):
    def make(rng):
        x = uniform(rng, shape, -span, span)
        x.flat[:len(ties)] = ties
        return {"x": x}
    return make


# Per tensor: scale 1/16, so x = k/32 (odd k) is an exact tie; saturation at both ends.
_TIES_16 = [1 / 32, 3 / 32, -1 / 32, -3 / 32, 5 / 32, 100.0, -100.0]
case("quantize_19_uint8_tensor", 19,
     lambda: quantize(19, (2, 3, 8), 0.0625, 128, "uint8"),
     _q_x((2, 3, 8), 9.0, _TIES_16))
case("quantize_19_int8_axis", 19,
     lambda: quantize(19, (2, 4, 6), [0.0625, 0.03, 0.125, 0.011], [0, 3, -5, 10], "int8", axis=1),
     _q_x((2, 4, 6), 3.0, [1 / 32, 3 / 32, 5 / 32, -7 / 32]))
case("dequantize_19_uint8_tensor", 19,
     lambda: dequantize(19, (2, 3, 8), "uint8", 0.037, 121),
     lambda rng: {"x": ints(rng, (2, 3, 8), "uint8")})
case("dequantize_19_int8_axis", 19,
     lambda: dequantize(19, (2, 3, 4), "int8", [0.5, 0.02, 0.013, 1.7], [1, -2, 0, 7], axis=-1),
     lambda rng: {"x": ints(rng, (2, 3, 4), "int8")})
case("quantize_21_int8_axis", 21,
     lambda: quantize(21, (3, 4, 5), [0.0625, 0.019, 0.25], [-3, 0, 12], "int8", axis=0),
     _q_x((3, 4, 5), 3.0, [1 / 32, 3 / 32, -5 / 32]))
case("dequantize_21_uint8_axis", 21,
     lambda: dequantize(21, (3, 4, 5), "uint8", [0.1, 0.02, 0.5, 0.0625], [128, 0, 255, 17], axis=1),
     lambda rng: {"x": ints(rng, (3, 4, 5), "uint8")})
# Blocked over axis 1, block_size 2: x [2, 6, 3] -> scale [2, 3, 3]; and a ragged last block
# (x [2, 5] -> scale [2, 3]).
def _block_params(seed, lo, hi):
    """Per-block scales and zero points for a [2, 3, 3] scale (x [2, 6, 3], axis 1, block_size 2)."""
    import numpy as np
    k = np.arange(18).reshape(2, 3, 3)
    return f32(0.01 * (1 + (k + seed) % 5)), (k * 5 + seed) % (hi - lo + 1) + lo


# Blocked over axis 1, block_size 2: x [2, 6, 3] -> scale [2, 3, 3]; and a ragged last block
# (x [2, 5] -> scale [2, 3]).
case("quantize_21_int8_block", 21,
     lambda: quantize(21, (2, 6, 3), *_block_params(1, -10, 10), "int8", axis=1, block_size=2),
     _q_x((2, 6, 3), 2.0))
case("quantize_21_uint8_block_ragged", 21,
     lambda: quantize(21, (2, 5), [[0.01, 0.02, 0.04], [0.0625, 0.125, 0.03]], [[0, 100, 200], [128, 7, 255]],
                      "uint8", axis=1, block_size=2),
     _q_x((2, 5), 4.0))
case("dequantize_21_int8_block", 21,
     lambda: dequantize(21, (2, 6, 3), "int8", *_block_params(2, -4, 4), axis=1, block_size=2),
     lambda rng: {"x": ints(rng, (2, 6, 3), "int8")})
case("quantize_21_int16_tensor", 21,
     lambda: quantize(21, (2, 3, 8), 0.0005, -300, "int16"),
     _q_x((2, 3, 8), 20.0, [1 / 4096, 3 / 4096, 100.0, -100.0]))
case("quantize_21_uint16_axis", 21,
     lambda: quantize(21, (2, 3, 8), [0.001, 0.0001, 0.0625], [30000, 0, 65535], "uint16", axis=1),
     _q_x((2, 3, 8), 5.0))
case("dequantize_21_int16_axis", 21,
     lambda: dequantize(21, (2, 3, 8), "int16", [0.001, 0.0001, 0.0625], [1000, -7, 0], axis=1),
     lambda rng: {"x": ints(rng, (2, 3, 8), "int16")})
case("dequantize_21_uint16_tensor", 21,
     lambda: dequantize(21, (2, 3, 8), "uint16", 0.0003, 32768),
     lambda rng: {"x": ints(rng, (2, 3, 8), "uint16")})


def _qlinearmatmul():
    import numpy as np
    inits = {"a_scale": f32(0.02), "a_zero_point": np.uint8(120), "b_scale": f32(0.015),
             "b_zero_point": np.uint8(131), "y_scale": f32(0.05), "y_zero_point": np.uint8(125)}
    return single("QLinearMatMul", 21, [("a", "uint8", (2, 3, 8)), ("b", "uint8", (8, 5))],
                  [("y", "uint8", (2, 3, 5))], inits,
                  ["a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale", "y_zero_point"])


case("qlinearmatmul_21_uint8", 21, _qlinearmatmul,
     lambda rng: {"a": ints(rng, (2, 3, 8), "uint8"), "b": ints(rng, (8, 5), "uint8")})


# ---------------------------------------------------------------------------------------------
# The narrow types: Cast-19 to and from the four float8 formats (saturating and not), Cast-21 and
# QuantizeLinear/DequantizeLinear-21 with int4/uint4 (blocked 4-bit weights before a MatMul, the
# form 4-bit exporters write), QuantizeLinear/DequantizeLinear-19 with float8. Graph inputs and
# outputs stay float or int: numpy has no narrow types; the narrow values live inside the graph.
# ---------------------------------------------------------------------------------------------

def _cast_chain(opset, shape, in_dtype, narrow, out_dtype, **attrs):
    """x -> Cast(to=narrow, attrs) -> Cast(to=out_dtype) -> y."""
    from onnx import helper
    code = FLOAT8.get(narrow) or INT4[narrow]
    out_code = _onnx_type(out_dtype)
    nodes = [helper.make_node("Cast", ["x"], ["n"], to=code, **attrs), helper.make_node("Cast", ["n"], ["y"], to=out_code)]
    return model(nodes, [("x", in_dtype, shape)], [("y", out_dtype, shape)], opset)


def _float8_probe(rng):
    """Values that probe rounding and range for every float8 format: ties at 1/16 and 1/8 steps in
    [1, 3), subnormal ties of each format, the largest finite values and just beyond, signed zeros,
    infinities, NaN, and random magnitudes from 2^-20 to 2^17."""
    import numpy as np
    v = [k / 16 for k in range(16, 48)]
    v += [k * 2.0 ** -11 for k in range(0, 40)] + [k * 2.0 ** -18 for k in range(0, 24)]
    v += [232, 240, 244, 248, 250, 256, 440, 448, 456, 464, 465, 480, 500, 57344, 59392, 59393, 61440, 70000, 1e9]
    v += [0.0, -0.0, np.inf, -np.inf, np.nan, -1e-9]
    v = np.asarray(v, dtype=np.float32)
    v = np.concatenate([v, -v])
    rnd = (2.0 ** rng.uniform(-20, 17, size=128) * rng.choice([-1, 1], size=128)).astype(np.float32)
    return {"x": np.concatenate([v, rnd]).astype(np.float32)}


def _float8_probe_nosat(rng):
    """The probe without the two ranges where ONNX Runtime 1.30's non-saturating conversion leaves
    ONNX's table: |x| in [480, 496) gives E4M3FN's 448 (the table: NaN, as anything that rounds past
    448), and |x| in [59392, 65536), which rounds past E5M2's 57344, gives NaN (the table:
    infinity). Kiln follows the table there."""
    import numpy as np
    x = _float8_probe(rng)["x"]
    a = np.abs(x)
    odd = ((a >= 480) & (a < 496)) | ((a >= 59392) & (a < 65536))
    return {"x": np.where(odd, np.float32(1.0), x)}


_PROBE_SIZE = 2 * (32 + 40 + 24 + 19 + 6) + 128
for _f8 in FLOAT8:
    for _sat in (1, 0):
        case("cast_19_%s_sat%d" % (_f8, _sat), 19,
             lambda f=_f8, s=_sat: _cast_chain(19, (_PROBE_SIZE,), "float32", f, "float32", saturate=s),
             _float8_probe if _sat else _float8_probe_nosat, tol=0)
case("cast_19_float16_float8e4m3fn", 19,
     lambda: _cast_chain(19, (4, 16), "float16", "float8e4m3fn", "float32"),
     lambda rng: {"x": (uniform(rng, (4, 16), -300, 300)).astype("float16")}, tol=0)
# To 4-bit: floats round to the nearest integer (ties away from zero, as ONNX Runtime does), then
# every value keeps its low 4 bits (wraps).
case("cast_21_float_int4", 21,
     lambda: _cast_chain(21, (40,), "float32", "int4", "float32"),
     lambda rng: {"x": f32([k / 2 for k in range(-20, 20)])}, tol=0)
case("cast_21_float_uint4", 21,
     lambda: _cast_chain(21, (40,), "float32", "uint4", "int32"),
     lambda rng: {"x": f32([k / 2 for k in range(-6, 34)])})
case("cast_21_int32_int4", 21,
     lambda: _cast_chain(21, (24,), "int32", "int4", "int64"),
     lambda rng: {"x": ints(rng, (24,), "int8").astype("int32")})


def _int4_weights_matmul(narrow, block):
    """y = x @ DequantizeLinear(w: narrow [16, 6], blocked along axis 0 by `block`)."""
    import numpy as np
    from onnx import helper
    rng = np.random.default_rng(11)
    lo, hi = (-8, 7) if narrow == "int4" else (0, 15)
    w = rng.integers(lo, hi, size=(16, 6), endpoint=True)
    blocks = (16 + block - 1) // block
    scale = f32(rng.uniform(0.01, 0.1, size=(blocks, 6)))
    zp = rng.integers(lo, hi, size=(blocks, 6), endpoint=True)
    inits = {"w": narrow_tensor(narrow, w), "w_scale": scale, "w_zero_point": narrow_tensor(narrow, zp)}
    nodes = [helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zero_point"], ["wf"], axis=0, block_size=block),
             helper.make_node("MatMul", ["x", "wf"], ["y"])]
    return model(nodes, [("x", "float32", (3, 16))], [("y", "float32", (3, 6))], 21, inits)


case("dequantize_21_int4_block_matmul", 21, lambda: _int4_weights_matmul("int4", 4), _x((3, 16)))
case("dequantize_21_uint4_block_ragged_matmul", 21, lambda: _int4_weights_matmul("uint4", 5), _x((3, 16)))


def _quantize_roundtrip(opset, narrow, shape, scale, zp, out_dtype="float32", **attrs):
    """x -> QuantizeLinear(narrow) -> DequantizeLinear -> y (both with the same scale and zero point)."""
    from onnx import helper
    inits = {"scale": f32(scale), "zero_point": narrow_tensor(narrow, zp)}
    nodes = [helper.make_node("QuantizeLinear", ["x", "scale", "zero_point"], ["q"], **attrs),
             helper.make_node("DequantizeLinear", ["q", "scale", "zero_point"], ["y"],
                              **{k: v for k, v in attrs.items() if k in ("axis", "block_size")})]
    return model(nodes, [("x", "float32", shape)], [("y", out_dtype, shape)], opset, inits)


case("quantize_21_int4_axis", 21,
     lambda: _quantize_roundtrip(21, "int4", (2, 3, 8), [0.0625, 0.25, 0.03], [0, -3, 5], axis=1),
     _q_x((2, 3, 8), 2.0, [1 / 32, 3 / 32, -1 / 32, -5 / 32, 100.0, -100.0]), tol=0)
case("quantize_21_uint4_block", 21,
     lambda: _quantize_roundtrip(21, "uint4", (2, 6), [[0.1, 0.2, 0.05], [0.0625, 0.5, 0.3]], [[8, 0, 15], [3, 7, 12]],
                                 axis=1, block_size=2),
     _q_x((2, 6), 2.0, [1 / 32, 100.0]), tol=0)
for _f8 in ("float8e4m3fn", "float8e5m2"):
    case("quantize_19_%s_tensor" % _f8, 19,
         lambda f=_f8: _quantize_roundtrip(19, f, (2, 3, 16), 0.125, 0),
         lambda rng: {"x": _float8_probe(rng)["x"][:96].reshape(2, 3, 16)}, tol=0)
case("quantize_19_float8e4m3fnuz_axis_nosat", 19,
     lambda: _quantize_roundtrip(19, "float8e4m3fnuz", (2, 3, 16), [0.5, 2.0, 0.01], [0, 0, 0], axis=1, saturate=0),
     lambda rng: {"x": _float8_probe(rng)["x"][96:192].reshape(2, 3, 16)}, tol=0)


# ---------------------------------------------------------------------------------------------
# GroupNormalization-18 (scale, bias [num_groups]) and -21 (scale, bias [C])
# ---------------------------------------------------------------------------------------------

def _groupnorm(opset, per):
    import numpy as np
    rng = np.random.default_rng(7)
    inits = {"scale": uniform(rng, (per,), 0.5, 1.5), "bias": uniform(rng, (per,), -0.5, 0.5)}
    return single("GroupNormalization", opset, [("x", "float32", (2, 6, 3, 4))], [("y", "float32", (2, 6, 3, 4))],
                  inits, num_groups=3, epsilon=1e-3)


case("groupnorm_18", 18, lambda: _groupnorm(18, 3), lambda rng: {"x": uniform(rng, (2, 6, 3, 4), -2, 3)})
case("groupnorm_21", 21, lambda: _groupnorm(21, 6), lambda rng: {"x": uniform(rng, (2, 6, 3, 4), -2, 3)})


# ---------------------------------------------------------------------------------------------
# Controls: opset-18+ forms of operators Kiln already has (plus Col2Im, CenterCropPad, AffineGrid)
# ---------------------------------------------------------------------------------------------

case("reducesum_18_axes_input", 18,
     lambda: single("ReduceSum", 18, [("x", "float32", (2, 3, 4))], [("y", "float32", (2, 1, 4))],
                    {"axes": i64([1])}, keepdims=1),
     _x((2, 3, 4)))
case("reducemax_18_axes_input", 18,
     lambda: single("ReduceMax", 18, [("x", "float32", (2, 3, 4))], [("y", "float32", (3,))],
                    {"axes": i64([0, -1])}, keepdims=0),
     _x((2, 3, 4)))
# Pad-18 with axes: pads are [begins..., ends...] in the order of axes. [1, -1]: axis 1 gets 1 + 2,
# axis 2 gets 0 + 1; reflect with axes [2, 1]: axis 2 gets 2 + 0, axis 1 gets 1 + 2.
case("pad_18_axes_constant", 18,
     lambda: single("Pad", 18, [("x", "float32", (2, 3, 4))], [("y", "float32", (2, 6, 5))],
                    {"pads": i64([1, 0, 2, 1]), "value": f32(0.5), "axes": i64([1, -1])}, mode="constant"),
     _x((2, 3, 4)))
case("pad_18_axes_reflect", 18,
     lambda: single("Pad", 18, [("x", "float32", (2, 3, 4))], [("y", "float32", (2, 6, 6))],
                    {"pads": i64([2, 1, 0, 2]), "axes": i64([2, 1])}, ["x", "pads", "", "axes"], mode="reflect"),
     _x((2, 3, 4)))
# Split-18 num_outputs: 7 into ceil(7/3) = 3, 3, 1.
case("split_18_num_outputs", 18,
     lambda: single("Split", 18, [("x", "float32", (2, 7))],
                    [("y0", "float32", (2, 3)), ("y1", "float32", (2, 3)), ("y2", "float32", (2, 1))],
                    axis=1, num_outputs=3),
     _x((2, 7)))
# Col2Im-18: C = 2, block 2x2 -> 8 rows. Image 4x5, stride 1: 3 * 4 = 12 blocks; image 5x5, stride 2,
# pads 1: 3 * 3 = 9 blocks.
case("col2im_18", 18,
     lambda: single("Col2Im", 18, [("x", "float32", (1, 8, 12))], [("y", "float32", (1, 2, 4, 5))],
                    {"image_shape": i64([4, 5]), "block_shape": i64([2, 2])}),
     _x((1, 8, 12)))
case("col2im_18_strides_pads", 18,
     lambda: single("Col2Im", 18, [("x", "float32", (1, 8, 9))], [("y", "float32", (1, 2, 5, 5))],
                    {"image_shape": i64([5, 5]), "block_shape": i64([2, 2])}, strides=[2, 2], pads=[1, 1, 1, 1]),
     _x((1, 8, 9)))
# CenterCropPad-18: crop 7x8 to 4x5 over axes [1, 2] (odd differences); then crop one axis and pad
# another with no axes attribute.
case("centercroppad_18_crop", 18,
     lambda: single("CenterCropPad", 18, [("x", "float32", (2, 7, 8))], [("y", "float32", (2, 4, 5))],
                    {"shape": i64([4, 5])}, axes=[1, 2]),
     _x((2, 7, 8)))
case("centercroppad_18_crop_and_pad", 18,
     lambda: single("CenterCropPad", 18, [("x", "float32", (2, 3, 4))], [("y", "float32", (2, 2, 7))],
                    {"shape": i64([2, 2, 7])}),
     _x((2, 3, 4)))
# AffineGrid-20, 2-D: theta [N, 2, 3], size (N, C, H, W) -> grid [N, H, W, 2].
for _ac in (0, 1):
    case("affinegrid_20_align_corners%d" % _ac, 20,
         lambda ac=_ac: single("AffineGrid", 20, [("theta", "float32", (2, 2, 3))], [("grid", "float32", (2, 4, 5, 2))],
                               {"size": i64([2, 3, 4, 5])}, align_corners=ac),
         lambda rng: {"theta": uniform(rng, (2, 2, 3))})


# ---------------------------------------------------------------------------------------------
# DeformConv-19: bilinear taps moved by offsets (zero outside the image), weighted by a mask
# ---------------------------------------------------------------------------------------------

case("deformconv_19_mask_bias", 19,
     lambda: single("DeformConv", 19,
                    [("x", "float32", (1, 2, 5, 6)), ("w", "float32", (3, 2, 3, 3)), ("offset", "float32", (1, 18, 3, 4)),
                     ("b", "float32", (3,)), ("mask", "float32", (1, 9, 3, 4))],
                    [("y", "float32", (1, 3, 3, 4))], kernel_shape=[3, 3]),
     lambda rng: {"x": uniform(rng, (1, 2, 5, 6)), "w": uniform(rng, (3, 2, 3, 3)), "offset": uniform(rng, (1, 18, 3, 4), -1.5, 1.5),
                  "b": uniform(rng, (3,)), "mask": uniform(rng, (1, 9, 3, 4), 0.0, 1.0)})
# Two groups and two offset groups, stride 2, pads 1, dilation 2, no bias or mask: (7 + 2 - 3) / 2 + 1 = 4.
case("deformconv_19_groups_strides", 19,
     lambda: single("DeformConv", 19,
                    [("x", "float32", (2, 4, 7, 7)), ("w", "float32", (6, 2, 2, 2)), ("offset", "float32", (2, 16, 4, 4))],
                    [("y", "float32", (2, 6, 4, 4))], kernel_shape=[2, 2], group=2, offset_group=2, strides=[2, 2],
                    pads=[1, 1, 1, 1], dilations=[2, 2]),
     lambda rng: {"x": uniform(rng, (2, 4, 7, 7)), "w": uniform(rng, (6, 2, 2, 2)), "offset": uniform(rng, (2, 16, 4, 4), -2.0, 2.0)})


# ---------------------------------------------------------------------------------------------
# GridSample-20: modes renamed linear / nearest / cubic; 5-D volumes (ONNX Runtime samples 4-D and
# 5-D, cubic only 4-D). Grids reach a little past [-1, 1] so that every padding mode matters.
# ---------------------------------------------------------------------------------------------

def _grid_sample(x_shape, grid_shape, **attrs):
    y_shape = tuple(x_shape[:2]) + tuple(grid_shape[1:-1])
    return (lambda: single("GridSample", 20, [("x", "float32", x_shape), ("grid", "float32", grid_shape)],
                           [("y", "float32", y_shape)], **attrs),
            lambda rng: {"x": uniform(rng, x_shape), "grid": uniform(rng, grid_shape, -1.2, 1.2)})


for _mode, _pad, _ac in (("linear", "zeros", 0), ("cubic", "border", 1), ("cubic", "reflection", 0),
                         ("nearest", "reflection", 1)):
    case("gridsample_20_2d_%s_%s_ac%d" % (_mode, _pad, _ac), 20,
         *_grid_sample((2, 3, 5, 6), (2, 4, 3, 2), mode=_mode, padding_mode=_pad, align_corners=_ac))
for _mode, _pad, _ac in (("linear", "zeros", 0), ("linear", "reflection", 1), ("nearest", "border", 0)):
    case("gridsample_20_3d_%s_%s_ac%d" % (_mode, _pad, _ac), 20,
         *_grid_sample((1, 2, 3, 4, 5), (1, 2, 3, 4, 3), mode=_mode, padding_mode=_pad, align_corners=_ac))


# ---------------------------------------------------------------------------------------------
# DFT-20: the axis is an input (default -2), not an attribute
# ---------------------------------------------------------------------------------------------

# A real signal [2, 8, 3, 1] transformed along axis 1, given as an input.
case("dft_20_axis_input", 20,
     lambda: single("DFT", 20, [("x", "float32", (2, 8, 3, 1))], [("y", "float32", (2, 8, 3, 2))],
                    {"axis": i64(1)}, node_inputs=["x", "", "axis"]),
     lambda rng: {"x": uniform(rng, (2, 8, 3, 1))}, tol=1e-4)
# The default axis -2 (the last signal dim), one-sided, zero-padded to dft_length 10: 10 / 2 + 1 = 6 bins.
case("dft_20_default_axis_onesided_padded", 20,
     lambda: single("DFT", 20, [("x", "float32", (3, 7, 1))], [("y", "float32", (3, 6, 2))],
                    {"dft_length": i64(10)}, onesided=1),
     lambda rng: {"x": uniform(rng, (3, 7, 1))})
# The inverse of a complex signal along a negative axis, cut to dft_length 5.
case("dft_20_inverse_negative_axis", 20,
     lambda: single("DFT", 20, [("x", "float32", (6, 4, 2))], [("y", "float32", (5, 4, 2))],
                    {"dft_length": i64(5), "axis": i64(-3)}, inverse=1),
     lambda rng: {"x": uniform(rng, (6, 4, 2))})


# ---------------------------------------------------------------------------------------------
# OptionalHasElement-18, OptionalGetElement-18: a plain tensor input (always an element), and no
# input at all (no element)
# ---------------------------------------------------------------------------------------------

def _optional_18():
    from onnx import helper
    nodes = [helper.make_node("OptionalHasElement", ["x"], ["has"]),
             helper.make_node("OptionalHasElement", [""], ["has_none"]),
             helper.make_node("OptionalGetElement", ["x"], ["y"])]
    return model(nodes, [("x", "float32", (2, 3))],
                 [("has", "bool", ()), ("has_none", "bool", ()), ("y", "float32", (2, 3))], 18)


case("optional_18_tensor_inputs", 18, _optional_18, _x((2, 3)))


# ---------------------------------------------------------------------------------------------
# StringConcat-20, StringSplit-20, RegexFullMatch-20: string tensors (numpy str arrays in .npy)
# ---------------------------------------------------------------------------------------------

def _strings(rows):
    import numpy as np
    return lambda rng: {n: np.array(v, dtype=str) for n, v in rows.items()}


# Broadcast [2, 3] + [3], with empty strings and non-ASCII text; a scalar prefix on a [2, 2].
case("stringconcat_20_broadcast", 20,
     lambda: single("StringConcat", 20, [("x", "str", (2, 3)), ("y", "str", (3,))], [("z", "str", (2, 3))]),
     _strings({"x": [["a", "", "日本"], ["hello ", "ß", "x"]], "y": ["1", "語", ""]}))
case("stringconcat_20_scalar", 20,
     lambda: single("StringConcat", 20, [("x", "str", ()), ("y", "str", (2, 2))], [("z", "str", (2, 2))]),
     _strings({"x": "pre-", "y": [["a", "bb"], ["", "é"]]}))

_SPLIT_TEXT = [["a,b,,c", "", ","], ["x", "日本,語,", ",,lead"]]
_SPACED_TEXT = [["  two  words ", "one", ""], ["   ", "tab\tis not  a space", " a b c d  "]]
# With a delimiter: consecutive delimiters give empty strings; the empty string has no substrings.
case("stringsplit_20_delimiter", 20,
     lambda: single("StringSplit", 20, [("x", "str", (2, 3))], [("y", "str", (2, 3, "n")), ("z", "int64", (2, 3))],
                    delimiter=","),
     _strings({"x": _SPLIT_TEXT}))
# A two-character delimiter, at most one split: the rest stays whole.
case("stringsplit_20_delimiter_maxsplit", 20,
     lambda: single("StringSplit", 20, [("x", "str", (4,))], [("y", "str", (4, "n")), ("z", "int64", (4,))],
                    delimiter="--", maxsplit=1),
     _strings({"x": ["a--b--c", "----", "no delimiter", "-a--"]}))
# No delimiter: runs of spaces separate, leading and trailing ones are dropped.
case("stringsplit_20_spaces", 20,
     lambda: single("StringSplit", 20, [("x", "str", (2, 3))], [("y", "str", (2, 3, "n")), ("z", "int64", (2, 3))]),
     _strings({"x": _SPACED_TEXT}))
# No delimiter with maxsplit 2: the unsplit rest loses its trailing spaces too.
case("stringsplit_20_spaces_maxsplit", 20,
     lambda: single("StringSplit", 20, [("x", "str", (2, 3))], [("y", "str", (2, 3, "n")), ("z", "int64", (2, 3))],
                    delimiter="", maxsplit=2),
     _strings({"x": _SPACED_TEXT}))
# An empty input: [0] -> [0, 0] and [0].
case("stringsplit_20_empty_input", 20,
     lambda: single("StringSplit", 20, [("x", "str", (0,))], [("y", "str", (0, "n")), ("z", "int64", (0,))],
                    delimiter=","),
     _strings({"x": []}))

_REGEX_TEXT = [["user@example.com", "not an email", "a.b-c@d.org"], ["UPPER@CASE.IO", "", "日本@語.jp"]]
case("regexfullmatch_20_email", 20,
     lambda: single("RegexFullMatch", 20, [("x", "str", (2, 3))], [("y", "bool", (2, 3))],
                    pattern=r"[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}"),
     _strings({"x": _REGEX_TEXT}))
# RE2's syntax: a case-insensitive flag and Unicode classes (\p{Han}), matched on UTF-8 text.
case("regexfullmatch_20_re2_syntax", 20,
     lambda: single("RegexFullMatch", 20, [("x", "str", (2, 3))], [("y", "bool", (2, 3))],
                    pattern=r"(?i)[\p{L}\p{Han}.]+@\w+\.(io|jp|com)"),
     _strings({"x": _REGEX_TEXT}))
