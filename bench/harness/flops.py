"""Counts a model's floating-point work for bench/run.sh: the multiply-adds of its Conv, MatMul and
Gemm nodes at concrete input shapes, 2 FLOPs per MAC. Other operators (element-wise, normalisation,
softmax) are not counted.

Shapes come from ONNX shape inference. The transformer exports compute every Reshape target at run
time (Shape/Gather/Unsqueeze/Concat chains), which onnx 1.12's inference cannot see through, so the
counter folds that shape arithmetic into constants with NumPy and infers again until nothing new
folds."""
import math

import numpy as np
import onnx
from onnx import numpy_helper, shape_inference

SMALL = 1 << 16  # tensors up to this many elements are folded or kept as values


def _attribute(node, name, default=None):
    for attribute in node.attribute:
        if attribute.name == name:
            return onnx.helper.get_attribute_value(attribute)
    return default


def _shape_of(node, inputs, shapes):
    shape = shapes[node.input[0]]
    return np.array(shape[_attribute(node, "start", 0):_attribute(node, "end", len(shape))], np.int64)


def _slice(node, inputs, shapes):
    data, starts, ends = inputs[:3]
    axes = inputs[3] if len(inputs) > 3 and inputs[3] is not None else range(len(starts))
    steps = inputs[4] if len(inputs) > 4 and inputs[4] is not None else [1] * len(starts)
    index = [slice(None)] * data.ndim
    for axis, start, end, step in zip(axes, starts, ends, steps):
        index[axis] = slice(int(start), int(end), int(step))
    return data[tuple(index)]


def _divide(node, inputs, shapes):
    a, b = inputs
    return a // b if np.issubdtype(a.dtype, np.integer) else a / b


def _constant_of_shape(node, inputs, shapes):
    value = _attribute(node, "value")
    return np.full(inputs[0], 0.0 if value is None else numpy_helper.to_array(value).reshape(()))


# NumPy evaluation of the operators that shape arithmetic uses; each returns the node's one output.
_EVALUATORS = {
    "Constant": lambda node, inputs, shapes: numpy_helper.to_array(_attribute(node, "value")),
    "Shape": _shape_of,
    "Gather": lambda node, inputs, shapes: np.take(inputs[0], inputs[1], axis=_attribute(node, "axis", 0)),
    "Unsqueeze": lambda node, inputs, shapes: np.expand_dims(
        inputs[0], tuple(int(a) % (inputs[0].ndim + len(inputs[1])) for a in inputs[1])),
    "Squeeze": lambda node, inputs, shapes: np.squeeze(
        inputs[0], tuple(int(a) for a in inputs[1]) if len(inputs) > 1 else None),
    "Concat": lambda node, inputs, shapes: np.concatenate(inputs, axis=_attribute(node, "axis")),
    "Slice": _slice,
    "Cast": lambda node, inputs, shapes: inputs[0].astype(
        onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[_attribute(node, "to")]),
    "Add": lambda node, inputs, shapes: inputs[0] + inputs[1],
    "Sub": lambda node, inputs, shapes: inputs[0] - inputs[1],
    "Mul": lambda node, inputs, shapes: inputs[0] * inputs[1],
    "Div": _divide,
    "Equal": lambda node, inputs, shapes: np.equal(inputs[0], inputs[1]),
    "Where": lambda node, inputs, shapes: np.where(*inputs),
    "ConstantOfShape": _constant_of_shape,
}


def _weights_as_inputs(model):
    """Replaces large initializers by typed graph inputs: inference needs only their shapes, and
    re-inferring a 600 MB model dozens of times would be slow."""
    graph = model.graph
    small = [t for t in graph.initializer if math.prod(t.dims) <= SMALL]
    for tensor in graph.initializer:
        if math.prod(tensor.dims) > SMALL:
            graph.input.append(onnx.helper.make_tensor_value_info(tensor.name, tensor.data_type, tensor.dims))
    del graph.initializer[:]
    graph.initializer.extend(small)
    return model


def _pin_input_shapes(model, input_shapes):
    """Pins the named graph inputs' dims to concrete shapes (a dynamic batch becomes a number)."""
    for value in model.graph.input:
        if value.name in input_shapes:
            for dim, size in zip(value.type.tensor_type.shape.dim, input_shapes[value.name]):
                dim.Clear()
                dim.dim_value = size
    return model


def _known_shapes(model):
    shapes = {}
    graph = model.graph
    for value in list(graph.input) + list(graph.value_info) + list(graph.output):
        tensor_type = value.type.tensor_type
        if tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in tensor_type.shape.dim):
            shapes[value.name] = [d.dim_value for d in tensor_type.shape.dim]
    for tensor in graph.initializer:
        shapes[tensor.name] = list(tensor.dims)
    return shapes


def _fold_once(model, shapes):
    """Replaces every node it can evaluate (all inputs constant, or a Shape of a known shape) by an
    initializer holding its value. Returns how many nodes it folded."""
    graph = model.graph
    values = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    kept, folded = [], 0
    for node in graph.node:
        evaluate = _EVALUATORS.get(node.op_type)
        ready = node.input[0] in shapes if node.op_type == "Shape" else all(
            not name or name in values for name in node.input)
        if evaluate is None or not ready or len(node.output) != 1:
            kept.append(node)
            continue
        value = np.asarray(evaluate(node, [values.get(name) for name in node.input], shapes))
        if value.size > SMALL:
            kept.append(node)
            continue
        values[node.output[0]] = value
        graph.initializer.append(numpy_helper.from_array(value, node.output[0]))
        folded += 1
    del graph.node[:]
    graph.node.extend(kept)
    return folded


def _infer_all_shapes(model):
    while True:
        del model.graph.value_info[:]  # inference does not refine shapes it recorded as unknown
        model = shape_inference.infer_shapes(model, data_prop=True)
        if _fold_once(model, _known_shapes(model)) == 0:
            return _known_shapes(model)


def _conv_macs(node, shapes):
    # Each output element takes (C_in / group) * kernel multiply-adds: exactly W's per-filter size.
    return math.prod(shapes[node.output[0]]) * math.prod(shapes[node.input[1]][1:])


def _matmul_macs(node, shapes):
    a = shapes[node.input[0]]
    return math.prod(shapes[node.output[0]]) * a[-1]  # the output holds the batch dims, M and N


def _gemm_macs(node, shapes):
    a = shapes[node.input[0]]
    return math.prod(shapes[node.output[0]]) * (a[0] if _attribute(node, "transA", 0) else a[1])


_MAC_COUNTERS = {"Conv": _conv_macs, "MatMul": _matmul_macs, "Gemm": _gemm_macs}


def count_flops(model_path, input_shapes):
    """Returns {"gflop": total or None, "by_op": {op: GFLOP}, "unresolved": [node names]} for the
    model at the given input shapes. If inference left any counted node's shapes unknown, the node
    is listed and the total is None: a partial count would understate the work."""
    model = _pin_input_shapes(_weights_as_inputs(onnx.load(model_path)), input_shapes)
    counted = [n for n in model.graph.node if n.op_type in _MAC_COUNTERS]
    shapes = _infer_all_shapes(model)
    by_op, unresolved = {}, []
    for node in counted:
        try:
            macs = _MAC_COUNTERS[node.op_type](node, shapes)
        except KeyError:
            unresolved.append(node.name or node.output[0])
            continue
        by_op[node.op_type] = by_op.get(node.op_type, 0.0) + 2.0 * macs / 1e9
    return {"gflop": None if unresolved else sum(by_op.values()), "by_op": by_op, "unresolved": unresolved}
