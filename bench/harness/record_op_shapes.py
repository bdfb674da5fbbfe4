#!/usr/bin/python3
"""Records the shapes, dtypes and attributes real models give each op, for the per-op speed harness
(bench/ops.sh, harness/op_cases.py): writes bench/op_shapes.json.

Models scanned: the zoo (tests/zoo/cases.txt, fetched by `make zoo` into ${KILN_ZOO_DIR:-~/.cache/kiln/zoo})
and the parity models (build/models/<name>/model.onnx with input_<name>.npy), plus, when present, the
bench's own exports (bench/models/out/full/<model>/model.onnx with bench_inputs_b1/). Each model's
inputs are pinned to its input files' shapes and ONNX shape inference runs (with data propagation);
the values whose shapes it leaves unknown are read from one ONNX Runtime run (tests/zoo/run_ort.js,
onnxruntime-node) of the model with them added as outputs; what still has no shape (values inside
If/Loop/Scan bodies) is recorded as null.

Per op type, the distinct signatures: each node's input shapes and dtypes, small constant inputs
(axes, pads, shapes, scales: up to 16 values), output shapes and attributes (subgraphs and tensors
summarised; `initializer` marks a weight), with how many nodes had it and which models. At most
--keep (default 5) signatures per op are kept: the heaviest (count x elements of the largest input),
the heaviest op_cases.py may time (timing_eligible: shapes known, no float16, at most 2^22 elements),
the most frequent, then the next heaviest (each with `count`, `models` and the model's `opset`);
`signatures_seen` and `nodes` keep the totals.

    bench/harness/record_op_shapes.py [--out bench/op_shapes.json] [--keep 5] [--no-ort]
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper, shape_inference

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import zoo  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
RUN_ORT = os.path.join(ROOT, "tests", "zoo", "run_ort.js")
SMALL_CONST = 16  # constant inputs with at most this many elements are recorded by value


def dtype_name(elem_type):
    if not elem_type:
        return None
    if elem_type == onnx.TensorProto.STRING:
        return "string"
    if elem_type == onnx.TensorProto.BFLOAT16:
        return "bfloat16"
    np_type = onnx.mapping.TENSOR_TYPE_TO_NP_TYPE.get(elem_type)  # onnx 1.12 (Debian's)
    return str(np_type) if np_type is not None else onnx.TensorProto.DataType.Name(elem_type).lower()


def zoo_models(zoo_dir):
    """[(label, model path, {input name: .npy path})], one per distinct model file (cases.txt order)."""
    models, seen = [], set()
    for name, path, inputs in zoo.read_cases(zoo_dir):
        if path not in seen:
            seen.add(path)
            models.append(("zoo:" + name, path, inputs))
    return models


def dir_models(prefix, root, model_name, input_dir, input_prefix):
    """Models laid out as root/<name>/model.onnx with root/<name>/<input_dir>/<input_prefix><input>.npy."""
    models = []
    if not os.path.isdir(root):
        return models
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name, model_name)
        folder = os.path.join(root, name, input_dir)
        if not os.path.exists(path) or not os.path.isdir(folder):
            continue
        inputs = {f[len(input_prefix):-4]: os.path.join(folder, f) for f in sorted(os.listdir(folder))
                  if f.startswith(input_prefix) and f.endswith(".npy")}
        if inputs:
            models.append((f"{prefix}:{name}", path, inputs))
    return models


def pin_inputs(model, shapes):
    """Sets each graph input's dims to its input file's shape (by name; sanitized file names matched too)."""
    sanitized = {"".join(c if c.isalnum() or c in "_.-" else "_" for c in k): v for k, v in shapes.items()}
    for value in model.graph.input:
        shape = shapes.get(value.name, sanitized.get("".join(c if c.isalnum() or c in "_.-" else "_" for c in value.name)))
        if shape is None or not value.type.HasField("tensor_type"):
            continue
        dims = value.type.tensor_type.shape
        del dims.dim[:]
        for d in shape:
            dims.dim.add().dim_value = int(d)


def type_of(value_info):
    t = value_info.type
    if not t.HasField("tensor_type"):
        return (t.WhichOneof("value") or "unknown", None)
    tt = t.tensor_type
    shape = None
    if tt.HasField("shape"):
        dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
        shape = None if any(d is None for d in dims) else dims
    return (dtype_name(tt.elem_type), shape)


def attribute_summary(attr):
    value = helper.get_attribute_value(attr)
    if attr.type == onnx.AttributeProto.GRAPH:
        return f"<graph: {len(value.node)} nodes>"
    if attr.type == onnx.AttributeProto.GRAPHS:
        return [f"<graph: {len(g.node)} nodes>" for g in value]
    if attr.type == onnx.AttributeProto.TENSOR:
        array = numpy_helper.to_array(value)
        return array.tolist() if array.size <= SMALL_CONST else f"<tensor {array.dtype} {list(array.shape)}>"
    if attr.type in (onnx.AttributeProto.TENSORS, onnx.AttributeProto.SPARSE_TENSOR, onnx.AttributeProto.SPARSE_TENSORS,
                     onnx.AttributeProto.TYPE_PROTO, onnx.AttributeProto.TYPE_PROTOS):
        return f"<{onnx.AttributeProto.AttributeType.Name(attr.type).lower()}>"
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list):
        return [v.decode("utf-8", "replace") if isinstance(v, bytes) else (round(v, 6) if isinstance(v, float) else v)
                for v in value]
    return round(value, 6) if isinstance(value, float) else value


def constants_of(graph):
    """Small constant values by name: initializers and Constant nodes' tensors."""
    values = {}
    for init in graph.initializer:
        if np.prod(init.dims, dtype=np.int64) <= SMALL_CONST:
            values[init.name] = numpy_helper.to_array(init)
    for node in graph.node:
        if node.op_type == "Constant" and node.output:
            for attr in node.attribute:
                if attr.name == "value" and attr.type == onnx.AttributeProto.TENSOR:
                    array = numpy_helper.to_array(attr.t)
                    if array.size <= SMALL_CONST:
                        values[node.output[0]] = array
    return values


def types_of(graph, outer):
    types = dict(outer)
    for init in graph.initializer:
        types[init.name] = (dtype_name(init.data_type), list(init.dims))
    for value in list(graph.input) + list(graph.value_info) + list(graph.output):
        dtype, shape = type_of(value)
        old = types.get(value.name)
        if old is None or (old[1] is None and shape is not None):
            types[value.name] = (dtype, shape)
    return types


def walk(graph, outer_types, outer_consts, outer_weights, visit, ort_types):
    types = types_of(graph, outer_types)
    for name, t in ort_types.items():
        if name in types and types[name][1] is None:
            types[name] = t
    consts = dict(outer_consts)
    consts.update(constants_of(graph))
    weights = set(outer_weights) | {init.name for init in graph.initializer}
    weights.update(o for node in graph.node if node.op_type == "Constant" for o in node.output)
    for node in graph.node:
        visit(node, types, consts, weights)
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                walk(attr.g, types, consts, weights, visit, {})
            elif attr.type == onnx.AttributeProto.GRAPHS:
                for g in attr.graphs:
                    walk(g, types, consts, weights, visit, {})


def unknown_values(graph, types):
    """Top-level node inputs and outputs whose shape inference left unknown (by name, in order)."""
    names = []
    for node in graph.node:
        for name in list(node.input) + list(node.output):
            if name and (types.get(name) is None or types[name][1] is None) and name not in names:
                names.append(name)
    return names


def ort_shapes(model, names, inputs, work):
    """{value name: (dtype, shape)} from one ONNX Runtime run with `names` added as outputs."""
    if not names or not os.path.exists(RUN_ORT):
        return {}
    graph_outputs = {o.name for o in model.graph.output}
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    del copy.graph.value_info[:]  # stale partial shapes would make ONNX Runtime's own inference clash
    for name in names:
        if name not in graph_outputs:
            copy.graph.output.append(onnx.ValueInfoProto(name=name))
    path = os.path.join(work, "exposed.onnx")
    onnx.save(copy, path, save_as_external_data=copy.ByteSize() > 1_900_000_000)
    outdir = os.path.join(work, "out")
    command = ["node", RUN_ORT, path, outdir, *[f"{k}={v}" for k, v in inputs.items()]]
    try:
        process = subprocess.run(command, capture_output=True, text=True, timeout=600,
                                 env=dict(os.environ, ZOO_ORT_RUNS="1"))
        result = json.loads(process.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as error:
        print(f"    ONNX Runtime: {error}", file=sys.stderr)
        return {}
    if not result.get("ok"):
        print(f"    ONNX Runtime: {result.get('error', '')[:300]}", file=sys.stderr)
        return {}
    ort_dtype = {"float32": "float32", "float16": "float16", "float64": "float64", "int64": "int64", "int32": "int32",
                 "int8": "int8", "uint8": "uint8", "bool": "bool", "string": "string"}
    return {name: (ort_dtype.get(o["type"], o["type"]), [int(d) for d in o["dims"]])
            for name, o in result.get("outputs", {}).items()}


def scan_model(label, path, inputs, use_ort, signatures):
    model = onnx.load(path)
    shapes = {name: list(np.load(p, mmap_mode="r").shape) for name, p in inputs.items()}
    pin_inputs(model, shapes)
    try:
        model = shape_inference.infer_shapes(model, strict_mode=False, data_prop=True)
    except Exception as error:  # noqa: BLE001
        print(f"  {label}: shape inference failed ({error}); shapes from ONNX Runtime only", file=sys.stderr)
    types = types_of(model.graph, {})
    unknown = unknown_values(model.graph, types)
    ort_types = {}
    if unknown and use_ort:
        with tempfile.TemporaryDirectory() as work:
            ort_types = ort_shapes(model, unknown, inputs, work)
    ort_types = {n: t for n, t in ort_types.items() if n in unknown}
    still = [n for n in unknown if n not in ort_types]
    print(f"  {label}: {len(model.graph.node)} nodes, {len(unknown)} values without an inferred shape, "
          f"{len(ort_types)} read from ONNX Runtime, {len(still)} left unknown", file=sys.stderr)
    opsets = {o.domain or "ai.onnx": o.version for o in model.opset_import}

    def visit(node, types, consts, weights):
        domain = node.domain if node.domain not in ("", "ai.onnx") else ""
        op = f"{domain}.{node.op_type}" if domain else node.op_type
        ins = []
        for name in node.input:
            if not name:
                ins.append(None)
                continue
            dtype, shape = types.get(name, (None, None))
            entry = {"shape": shape, "dtype": dtype}
            if name in consts:
                entry["const"] = consts[name].tolist()
            elif name in weights:
                entry["initializer"] = True
            ins.append(entry)
        outs = [types.get(name, (None, None))[1] if name else None for name in node.output]
        attrs = {a.name: attribute_summary(a) for a in node.attribute}
        key = json.dumps([ins, outs, attrs], sort_keys=True)
        entry = signatures[op].setdefault(key, {"inputs": ins, "outputs": outs, "attributes": attrs, "count": 0,
                                                "models": set(), "opset": opsets.get(domain or "ai.onnx")})
        entry["count"] += 1
        entry["models"].add(label)

    walk(model.graph, {}, {}, set(), visit, ort_types)


def elements(signature):
    sizes = [int(np.prod(i["shape"], dtype=np.int64)) for i in signature["inputs"] if i and i["shape"] is not None]
    return max(sizes, default=0)


# The largest input a timing case takes from a recorded signature (16 MiB of float32): bigger ones
# (the 1024x1024 imgly models' 64x512x512 maps) make one case take seconds per process.
TIMING_CAP_ELEMENTS = 1 << 22
UNFEEDABLE_DTYPES = ("float16", "bfloat16", "float64", "string", None)


def timing_eligible(signature):
    """Whether harness/op_cases.py may time this signature: every present input's shape known, no
    half-precision or string input, the largest input at most TIMING_CAP_ELEMENTS elements."""
    present = [i for i in signature["inputs"] if i]
    return (all(i["shape"] is not None and i["dtype"] not in UNFEEDABLE_DTYPES for i in present)
            and elements(signature) <= TIMING_CAP_ELEMENTS)


def kept_signatures(entries, keep):
    """`entries` sorted heaviest first (count x elements of the largest input): the heaviest, the
    heaviest one op_cases.py may time, the most frequent, then the next heaviest up to `keep`."""
    picks = [entries[0] if entries else None,
             next((s for s in entries if timing_eligible(s)), None),
             min(entries, key=lambda s: (-s["count"], -elements(s))) if entries else None,
             *entries]
    kept = []
    for s in picks:
        if s is not None and not any(s is k for k in kept) and len(kept) < keep:
            kept.append(s)
    return kept


def compact_json(data):
    """Indented to the signature level, each signature on one line: small diffs, readable."""
    lines = ["{"]
    ops = sorted(data["ops"])
    head = {k: v for k, v in data.items() if k != "ops"}
    for k, v in head.items():
        lines.append(f" {json.dumps(k)}: {json.dumps(v)},")
    lines.append(' "ops": {')
    for i, op in enumerate(ops):
        entry = data["ops"][op]
        lines.append(f"  {json.dumps(op)}: {{\"nodes\": {entry['nodes']}, \"signatures_seen\": {entry['signatures_seen']}, "
                     f"\"models\": {json.dumps(entry['models'])}, \"signatures\": [")
        for j, sig in enumerate(entry["signatures"]):
            lines.append("   " + json.dumps(sig) + ("," if j + 1 < len(entry["signatures"]) else ""))
        lines.append("  ]}" + ("," if i + 1 < len(ops) else ""))
    lines.append(" }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "op_shapes.json"))
    parser.add_argument("--keep", type=int, default=5, help="signatures kept per op (default 5)")
    parser.add_argument("--zoo-dir", default=os.environ.get("KILN_ZOO_DIR", os.path.expanduser("~/.cache/kiln/zoo")))
    parser.add_argument("--no-ort", action="store_true", help="do not ask ONNX Runtime for the shapes inference leaves unknown")
    args = parser.parse_args()

    models = (zoo_models(args.zoo_dir)
              + dir_models("parity", os.path.join(ROOT, "build", "models"), "model.onnx", ".", "input_")
              + dir_models("export", os.path.join(ROOT, "bench", "models", "out", "full"), "model.onnx",
                           "bench_inputs_b1", ""))
    signatures = collections.defaultdict(dict)
    scanned = []
    for label, path, inputs in models:
        missing = [p for p in [path, *inputs.values()] if not os.path.exists(p)]
        if missing:
            print(f"  {label}: skipped, {missing[0]} missing", file=sys.stderr)
            continue
        scan_model(label, path, inputs, not args.no_ort, signatures)
        scanned.append(label)

    out = {"about": "op type -> the distinct (input shapes, dtypes, small constant inputs, attributes) real models give it; "
                    "written by bench/harness/record_op_shapes.py; read by bench/harness/op_cases.py",
           "models": scanned, "ops": {}}
    for op, table in signatures.items():
        entries = list(table.values())
        entries.sort(key=lambda s: (-(s["count"] * elements(s)), -s["count"]))
        models_of_op = sorted(set().union(*(s["models"] for s in entries)))
        kept = []
        for s in kept_signatures(entries, args.keep):
            s = dict(s)
            s["models"] = sorted(s["models"])
            kept.append(s)
        out["ops"][op] = {"nodes": sum(s["count"] for s in entries), "signatures_seen": len(entries),
                          "models": models_of_op, "signatures": kept}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        f.write(compact_json(out))
    print(f"{len(out['ops'])} op types from {len(scanned)} models -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
