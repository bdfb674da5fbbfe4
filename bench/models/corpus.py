#!/usr/bin/python3
"""Exports Kiln's perf corpus: 31 architectures from torchvision and torch.nn to ONNX, for bench/corpus.sh.

For each model it writes <out>/<model>/{model.onnx, input_<name>.npy, output_<name>.npy, meta.json}
as export.py does (and reuses export.py's weights and checks): random weights only (no downloads),
re-drawn with export.SEED at real scale and BatchNorm statistics calibrated, because default inits
export degenerate models (NOTES.md). Classification CNNs get a dynamic batch axis and, where the
table says so, batch-4 inputs in <out>/<model>/b4/ for the `<model>_b4` timing rows; every other
model is exported at batch 1. A model that fails to export is skipped: the reason is printed and
recorded in <out>/<model>/meta.json ("status": "skipped") and <out>/corpus.json.

The table (MODELS) is the corpus's one source of truth: bench/harness/corpus.py imports this file
for its cases (`cases()`), so this module imports torch only when it exports. See
bench/models/README.md and bench/README.md, "The perf corpus".
"""
import argparse
import collections
import json
import os
import sys
import time
import traceback
from dataclasses import dataclass, field

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # export.py, imported when exporting
DEFAULT_OUT = os.path.join(HERE, "out", "corpus")
OPSET = 17


@dataclass
class Entry:
    """One architecture: how to build it (a callable run only when exporting), its reference inputs
    {name: (kind, shape, *extra)} at batch 1, its output names, and the extra batch sizes timed."""
    family: str
    build: object
    inputs: dict
    outputs: list
    dynamic_batch: bool = False  # a symbolic "batch" axis 0 on every input and output
    batches: tuple = ()  # extra timing rows `<name>_b<N>` (dynamic_batch models only)
    opset: int = OPSET
    note: str = ""
    config: dict = field(default_factory=dict)
    adjust: object = None  # adjust(module, generator): after the re-draw, before BatchNorm calibration
    sparse_outputs: tuple = ()  # outputs mostly 0 by design (pasted masks): checked on their nonzero values


# ---------------------------------------------------------------------------------------------
# Builders. Each returns a callable that imports torch/torchvision and constructs the module.

def tv(fn, module="", **kwargs):
    """torchvision.models[.module].<fn> with random weights (weights=None: nothing is downloaded)."""
    def build():
        import importlib
        return getattr(importlib.import_module("torchvision.models" + (f".{module}" if module else "")), fn)(
            weights=None, **kwargs)
    return build


def wrapped(wrapper, fn, module="", wrapper_args=(), **kwargs):
    """torchvision.models[.module].<fn> (random weights, weights_backbone=None where it has one) inside
    one of _wrappers()' modules, which turn its dict/list outputs into a tuple of tensors."""
    def build():
        import importlib
        models = importlib.import_module("torchvision.models" + (f".{module}" if module else ""))
        if module in ("detection", "segmentation"):
            kwargs.setdefault("weights_backbone", None)
        return _wrappers()[wrapper](getattr(models, fn)(weights=None, **kwargs), *wrapper_args)
    return build


def custom(name, **kwargs):
    def build():
        return _wrappers()[name](**kwargs)
    return build


_WRAPPERS = {}


def _wrappers():
    """The nn.Module classes of the corpus, defined on first use (torch is imported only to export)."""
    if _WRAPPERS:
        return _WRAPPERS
    import torch
    from torch import nn

    class Segmentation(nn.Module):
        """torchvision segmentation model: the "out" map only (no aux head)."""

        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, image):
            return self.model(image)["out"]

    class Detection(nn.Module):
        """torchvision detector on one [3, H, W] image (it takes a list): boxes, scores, labels (and masks)."""

        def __init__(self, model, outputs=("boxes", "scores", "labels")):
            super().__init__()
            self.model, self.outputs = model, outputs

        def forward(self, image):
            detections = self.model([image])[0]
            return tuple(detections[k] for k in self.outputs)

    class OpticalFlow(nn.Module):
        """RAFT: the final flow estimate only (it returns one per refinement iteration)."""

        def __init__(self, model, num_flow_updates=12):
            super().__init__()
            self.model, self.num_flow_updates = model, num_flow_updates

        def forward(self, image1, image2):
            return self.model(image1, image2, num_flow_updates=self.num_flow_updates)[-1]

    class Recurrent(nn.Module):
        """An nn.GRU / nn.LSTM / nn.RNN over a [batch, seq, features] sequence (zero initial state):
        the output sequence and the final state(s)."""

        def __init__(self, kind, input_size, hidden_size, num_layers, bidirectional=False):
            super().__init__()
            self.rnn = getattr(nn, kind)(input_size, hidden_size, num_layers, batch_first=True,
                                         bidirectional=bidirectional)

        def forward(self, sequence):
            output, state = self.rnn(sequence)
            return (output, *state) if isinstance(state, tuple) else (output, state)

    class TransformerEncoder(nn.Module):
        """nn.TransformerEncoder (post-LN, ReLU FFN, batch_first) and a final LayerNorm."""

        def __init__(self, d_model, nhead, ffn, layers):
            super().__init__()
            layer = nn.TransformerEncoderLayer(d_model, nhead, ffn, dropout=0.1, batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(d_model))

        def forward(self, src):
            return self.encoder(src)

    class TransformerDecoder(nn.Module):
        """nn.TransformerDecoder (self-attention with a causal mask built from the target length,
        cross-attention to the memory, GELU FFN, batch_first) and a final LayerNorm."""

        def __init__(self, d_model, nhead, ffn, layers):
            super().__init__()
            layer = nn.TransformerDecoderLayer(d_model, nhead, ffn, dropout=0.1, activation="gelu",
                                               batch_first=True)
            self.decoder = nn.TransformerDecoder(layer, layers, norm=nn.LayerNorm(d_model))

        def forward(self, tgt, memory):
            seq = tgt.size(1)
            causal = torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)  # -inf above the diagonal
            return self.decoder(tgt, memory, tgt_mask=causal)

    _WRAPPERS.update(Segmentation=Segmentation, Detection=Detection, OpticalFlow=OpticalFlow, Recurrent=Recurrent,
                     TransformerEncoder=TransformerEncoder, TransformerDecoder=TransformerDecoder)
    return _WRAPPERS


def retinanet_prior(model, generator):
    """RetinaNet's class logits at full scale (std ~5 over 90 classes x 9 anchors x every location)
    saturate the top 300 sigmoid scores at exactly 1.0; torchvision's own init uses a prior bias of
    -log(99) and small weights. Keep the re-drawn weights at 0.3x and a bias of -log(99) + N(0, 0.05)."""
    import math
    import torch
    head = model.model.head.classification_head.cls_logits
    with torch.no_grad():
        head.weight.mul_(0.3)
        head.bias.copy_(-math.log(99) + 0.05 * torch.randn(head.bias.shape, generator=generator))


def classifier(fn, size=224, batches=(), **kwargs):
    return Entry("classification", tv(fn, **kwargs), {"image": ("image", [1, 3, size, size])}, ["logits"],
                 dynamic_batch=True, batches=batches, config={"image_size": size, **kwargs})


def detector(fn, size, adjust=None, note="", outputs=("boxes", "scores", "labels"), **kwargs):
    return Entry("detection", wrapped("Detection", fn, "detection", wrapper_args=(outputs,), **kwargs),
                 {"image": ("unit", [3, size, size])}, list(outputs), config={"image_size": size, **kwargs},
                 adjust=adjust, note=note, sparse_outputs=("masks",))


def segmenter(fn, size):
    return Entry("segmentation", wrapped("Segmentation", fn, "segmentation"), {"image": ("image", [1, 3, size, size])},
                 ["out"], config={"image_size": size})


SWIN_DROPOUT = ("torchvision's shifted_window_attention calls F.dropout(attn, p=0.0) and F.dropout(x, p=0.0) "
                "without training=False, so the export keeps 24 Dropout nodes with ratio 0 and training_mode "
                "True (their mask outputs unused): identities in effect, where eval-mode dropouts vanish")
B4 = (4,)
# name -> Entry, in table order. Sizes keep every model near or under ~300 ms in ONNX Runtime, 2 threads.
MODELS = {
    # Classification CNNs: dynamic batch axis; reference batch 1, and batch 4 rows for the small ones.
    "resnet18": classifier("resnet18", batches=B4),
    "resnext50_32x4d": classifier("resnext50_32x4d"),
    "mobilenet_v3_small": classifier("mobilenet_v3_small", batches=B4),
    "mobilenet_v3_large": classifier("mobilenet_v3_large", batches=B4),
    "efficientnet_b0": classifier("efficientnet_b0", batches=B4),
    "regnet_y_400mf": classifier("regnet_y_400mf", batches=B4),
    "shufflenet_v2_x1_0": classifier("shufflenet_v2_x1_0", batches=B4),
    "mnasnet0_5": classifier("mnasnet0_5", batches=B4),
    "densenet121": classifier("densenet121"),
    "convnext_tiny": classifier("convnext_tiny"),
    "googlenet": classifier("googlenet", aux_logits=False, init_weights=False),
    "inception_v3": classifier("inception_v3", size=299, aux_logits=False, init_weights=False),
    "alexnet": classifier("alexnet"),
    "squeezenet1_0": classifier("squeezenet1_0"),
    # Vision transformers (batch 1).
    "swin_t": Entry("vision transformer", tv("swin_t"), {"image": ("image", [1, 3, 224, 224])}, ["logits"],
                    config={"image_size": 224}, note=SWIN_DROPOUT),
    "maxvit_t": Entry("vision transformer", tv("maxvit_t"), {"image": ("image", [1, 3, 224, 224])}, ["logits"],
                      config={"image_size": 224}),
    # Segmentation (batch 1).
    "lraspp_mobilenet_v3_large": segmenter("lraspp_mobilenet_v3_large", 320),
    "deeplabv3_mobilenet_v3_large": segmenter("deeplabv3_mobilenet_v3_large", 320),
    "fcn_resnet50": segmenter("fcn_resnet50", 160),  # dilated ResNet-50, output stride 8: 27 GFLOP at 160
    # Detection (batch 1, post-processing with If/Loop kept): one image [3, H, W] in [0, 1]; the
    # ResNet-50 FPN detectors resized to 256 (min_size/max_size) instead of their 800.
    "ssdlite320_mobilenet_v3_large": detector("ssdlite320_mobilenet_v3_large", 320),
    "fasterrcnn_mobilenet_v3_large_320_fpn": detector("fasterrcnn_mobilenet_v3_large_320_fpn", 320,
                                                      box_score_thresh=0.01),
    "retinanet_resnet50_fpn": detector("retinanet_resnet50_fpn", 256, min_size=256, max_size=256,
                                       adjust=retinanet_prior, note=" ".join(retinanet_prior.__doc__.split())),
    "fcos_resnet50_fpn": detector("fcos_resnet50_fpn", 256, min_size=256, max_size=256),
    # Mask R-CNN for its Loop (masks pasted into the image one detection at a time): few proposals and
    # detections keep its box and mask heads small.
    "maskrcnn_resnet50_fpn": detector("maskrcnn_resnet50_fpn", 256, outputs=("boxes", "scores", "labels", "masks"),
                                      min_size=256, max_size=256, rpn_post_nms_top_n_test=100,
                                      box_detections_per_img=10),
    # Optical flow: RAFT (small), 12 refinement iterations unrolled; GridSample needs opset 16+.
    "raft_small": Entry("optical flow", wrapped("OpticalFlow", "raft_small", "optical_flow"),
                        {"image1": ("image", [1, 3, 128, 128]), "image2": ("image", [1, 3, 128, 128])}, ["flow"],
                        config={"image_size": [128, 128], "num_flow_updates": 12}),
    # Video: R3D-18 (Conv3d) on a 4-frame 112x112 clip (20 GFLOP; 16 frames, its training clip, is 80).
    "r3d_18": Entry("video", tv("r3d_18", "video"), {"clip": ("image", [1, 3, 4, 112, 112])}, ["logits"],
                    config={"clip": [4, 112, 112]}),
    # Recurrent (torch.nn modules, batch-first sequences).
    "gru": Entry("recurrent", custom("Recurrent", kind="GRU", input_size=64, hidden_size=128, num_layers=2),
                 {"sequence": ("image", [2, 64, 64])}, ["output", "h_n"],
                 config={"layers": 2, "input": 64, "hidden": 128, "batch": 2, "seq": 64}),
    "lstm_bidir": Entry("recurrent", custom("Recurrent", kind="LSTM", input_size=64, hidden_size=128, num_layers=2,
                                            bidirectional=True),
                        {"sequence": ("image", [1, 100, 64])}, ["output", "h_n", "c_n"],
                        config={"layers": 2, "bidirectional": True, "input": 64, "hidden": 128, "seq": 100}),
    "rnn_tanh": Entry("recurrent", custom("Recurrent", kind="RNN", input_size=64, hidden_size=256, num_layers=2),
                      {"sequence": ("image", [1, 100, 64])}, ["output", "h_n"],
                      config={"layers": 2, "input": 64, "hidden": 256, "seq": 100}),
    # Transformers (torch.nn), batch 1.
    "transformer_encoder": Entry("transformer", custom("TransformerEncoder", d_model=256, nhead=4, ffn=1024, layers=4),
                                 {"src": ("image", [1, 128, 256])}, ["output"],
                                 config={"d_model": 256, "heads": 4, "ffn": 1024, "layers": 4, "seq": 128}),
    "transformer_decoder": Entry("transformer", custom("TransformerDecoder", d_model=256, nhead=4, ffn=1024, layers=4),
                                 {"tgt": ("image", [1, 64, 256]), "memory": ("image", [1, 128, 256])}, ["output"],
                                 config={"d_model": 256, "heads": 4, "ffn": 1024, "layers": 4, "tgt_seq": 64,
                                         "memory_seq": 128, "mask": "causal"}),
}


# ---------------------------------------------------------------------------------------------
# Cases: what bench/harness/corpus.py times (torch-free).

def input_dir(out, name, batch):
    """Where a model's input files at `batch` are: the export's own (batch 1) or <model>/b<batch>/."""
    return os.path.join(out, name) if batch == 1 else os.path.join(out, name, f"b{batch}")


def cases(out=DEFAULT_OUT, names=None):
    """[(case, model path, {input name: .npy path})] in table order: `<model>` at batch 1 and
    `<model>_b<N>` per extra batch."""
    result = []
    for name, entry in MODELS.items():
        if names and name not in names:
            continue
        for batch in (1, *entry.batches):
            folder = input_dir(out, name, batch)
            result.append((name if batch == 1 else f"{name}_b{batch}", os.path.join(out, name, "model.onnx"),
                           {n: os.path.join(folder, f"input_{n}.npy") for n in entry.inputs}))
    return result


def export_status(out, name):
    """The model's meta.json ({"status": "ok" | "skipped", ...}), or None when it was never exported."""
    try:
        with open(os.path.join(out, name, "meta.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


# ---------------------------------------------------------------------------------------------
# Export (torch from here on).

def _make_inputs(entry, batch, generator):
    import torch
    import export  # bench/models/export.py: make_input for "image" (N(0, 1))
    inputs = {}
    for n, (kind, shape, *rest) in entry.inputs.items():
        shape = ([batch] + shape[1:]) if entry.dynamic_batch else shape
        if kind == "unit":  # an image in [0, 1], as torchvision's detectors expect
            inputs[n] = torch.rand(shape, generator=generator)
        else:
            inputs[n] = export.make_input(kind, shape, generator, *rest)
    return inputs


def _calibrate(model, entry, inputs, generator):
    """export.calibrate_batchnorm: BatchNorm running statistics from a random batch, then perturbed.
    It runs the model in training mode on a batch of 4 like the example; models that cannot (several
    inputs, detectors whose training mode wants targets) run through a view whose training mode
    puts only the BatchNorm layers in training and whose forward runs their reference inputs (a
    detector: 4 random images)."""
    import torch
    from torch import nn
    import export
    if len(inputs) == 1 and entry.family != "detection":
        export.calibrate_batchnorm(model, next(iter(inputs.values())), generator)
        return
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if entry.family == "detection":  # the detector itself on 4 images (BatchNorm on 1x1 maps needs a batch)
        image = next(iter(inputs.values()))
        images = [torch.rand(image.shape, generator=generator) for _ in range(4)]
        run = lambda: model.model(images)  # noqa: E731
    else:
        run = lambda: model(*inputs.values())  # noqa: E731

    class NormsOnly(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def train(self, mode=True):
            self.model.eval()
            for m in norms:
                m.train(mode)
            return self

        def forward(self, _):
            return run()

    export.calibrate_batchnorm(NormsOnly(), torch.zeros(1), generator)


def build(name):
    """The seeded module in eval mode and its reference inputs at batch 1 (export.build_model's recipe)."""
    import torch
    import export
    entry = MODELS[name]
    generator = torch.Generator().manual_seed(export.SEED)
    torch.manual_seed(export.SEED)
    model = entry.build()
    export.redraw_weights(model, generator)
    if entry.adjust:
        entry.adjust(model, generator)
    inputs = _make_inputs(entry, 1, generator)
    _calibrate(model, entry, inputs, generator)
    model.eval()
    return model, inputs


def _histogram(graph, nested):
    """Op counts of the graph's nodes; with nested, also those inside If/Loop/Scan bodies."""
    counts = collections.Counter()
    for node in graph.node:
        counts[node.op_type] += 1
        if nested:
            for attribute in node.attribute:
                for sub in [attribute.g] if attribute.HasField("g") else list(attribute.graphs):
                    counts.update(_histogram(sub, True))
    return counts


def _output_stats(name, output, y, sparse=False):
    """export.check_output's figures; a degenerate float output raises (export.check_output exits).
    A sparse output is checked on its nonzero values."""
    import numpy as np
    import export
    if y.size == 0:
        raise ValueError(f"output '{output}' is empty")
    if not np.issubdtype(y.dtype, np.floating):  # detection labels: integer class ids
        return {"dtype": str(y.dtype), "shape": list(y.shape), "distinct": int(len(np.unique(y))),
                "min": int(y.min()), "max": int(y.max())}
    figures = {"dtype": str(y.dtype), "shape": list(y.shape)}
    if sparse:
        figures["nonzero_fraction"] = float(np.count_nonzero(y) / y.size)
        y = y[y != 0]
    try:
        figures.update(export.check_output(name, output, y))
    except SystemExit as error:
        raise ValueError(str(error)) from None
    return figures


def export_model(name, out):
    import numpy as np
    import onnx
    import torch
    import torchvision
    import export
    entry = MODELS[name]
    start = time.time()
    folder = os.path.join(out, name)
    model, inputs = build(name)
    args = tuple(inputs.values())
    with torch.no_grad():
        outputs = model(*args)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    stats = {n: _output_stats(name, n, y.numpy(), n in entry.sparse_outputs) for n, y in zip(entry.outputs, outputs)}

    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    dynamic = None
    if entry.dynamic_batch:
        dynamic = {n: {0: "batch"} for n in [*entry.inputs, *entry.outputs]}
    export_start = time.time()
    torch.onnx.export(model, args, path, opset_version=entry.opset, input_names=list(entry.inputs),
                      output_names=entry.outputs, dynamic_axes=dynamic, do_constant_folding=True)
    export_seconds = time.time() - export_start
    onnx.checker.check_model(path, full_check=True)
    proto = onnx.load(path)

    for n, x in inputs.items():
        np.save(os.path.join(folder, f"input_{n}.npy"), x.numpy())
    for n, y in zip(entry.outputs, outputs):
        np.save(os.path.join(folder, f"output_{n}.npy"), y.numpy())
    for batch in entry.batches:  # a fresh generator per batch, as export.py's bench inputs
        os.makedirs(input_dir(out, name, batch), exist_ok=True)
        for n, x in _make_inputs(entry, batch, torch.Generator().manual_seed(export.SEED)).items():
            np.save(os.path.join(input_dir(out, name, batch), f"input_{n}.npy"), x.numpy())

    def describe(values):
        return [{"name": v.name, "elem_type": v.type.tensor_type.elem_type,
                 "shape": [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]} for v in values]

    meta = {
        "model": name, "status": "ok", "family": entry.family, "seed": export.SEED, "opset": entry.opset,
        "torch": torch.__version__, "torchvision": torchvision.__version__, "onnx": onnx.__version__,
        "config": entry.config, "note": entry.note,
        "inputs": describe(proto.graph.input), "outputs": describe(proto.graph.output),
        "reference_input_shapes": {n: list(x.shape) for n, x in inputs.items()},
        "timing_batches": [1, *entry.batches],
        "reference_output_stats": stats,
        "parameters": sum(p.numel() for p in model.parameters()),
        "initializers": len(proto.graph.initializer), "nodes": len(proto.graph.node),
        "op_histogram": dict(sorted(_histogram(proto.graph, False).items())),
        "op_histogram_with_subgraphs": dict(sorted(_histogram(proto.graph, True).items())),
        "model_bytes": os.path.getsize(path),
        "export_seconds": round(export_seconds, 2), "total_seconds": round(time.time() - start, 2),
    }
    with open(os.path.join(folder, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
    return meta


def is_exported(out, name):
    meta = export_status(out, name)
    return bool(meta and meta.get("status") == "ok" and all(
        os.path.exists(p) for _, model, inputs in cases(out, [name]) for p in [model, *inputs.values()]))


NOTABLE = ("If", "Loop", "Scan", "GRU", "LSTM", "RNN", "GridSample", "HardSigmoid", "HardSwish", "Dropout",
           "Identity", "NonMaxSuppression", "RoiAlign", "TopK", "Resize", "Einsum", "Trilu", "Erf")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=DEFAULT_OUT, help="output directory (default bench/models/out/corpus)")
    parser.add_argument("--models", nargs="+", choices=list(MODELS), metavar="MODEL",
                        help=f"subset to export (default all): {' '.join(MODELS)}")
    parser.add_argument("--force", action="store_true", help="re-export models already exported")
    parser.add_argument("--list", action="store_true", help="print the timing cases and exit")
    args = parser.parse_args()
    names = args.models or list(MODELS)
    if args.list:
        for case, model, inputs in cases(args.out, names):
            print(case, os.path.relpath(model, args.out),
                  " ".join(f"{n}={os.path.relpath(p, args.out)}" for n, p in inputs.items()))
        return

    import warnings
    # As export.py, before torch is imported; not at module level: bench/harness/corpus.py imports this
    # module, and the runners it starts inherit its environment.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import torch
    torch.set_num_threads(1)  # export.py's setting: do not starve a concurrent build
    # The tracer warns about asserts, Python scalars and interpolate scales; none changes the export.
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    total = time.time()
    summary = {}
    for name in names:
        folder = os.path.join(args.out, name)
        if not args.force and is_exported(args.out, name):
            meta = export_status(args.out, name)
            print(f"{name:38s} reused ({meta['model_bytes'] / 2**20:.1f} MiB, {meta['nodes']} nodes)", flush=True)
        else:
            try:
                meta = export_model(name, args.out)
            except Exception as error:  # noqa: BLE001: any failure skips the model, with the reason recorded
                reason = f"{type(error).__name__}: {str(error).strip().splitlines()[-1] if str(error).strip() else ''}"
                meta = {"model": name, "status": "skipped", "family": MODELS[name].family, "reason": reason,
                        "traceback": traceback.format_exc()}
                os.makedirs(folder, exist_ok=True)
                for stale in ("model.onnx",):
                    if os.path.exists(os.path.join(folder, stale)):
                        os.remove(os.path.join(folder, stale))
                with open(os.path.join(folder, "meta.json"), "w") as f:
                    json.dump(meta, f, indent=2)
                print(f"{name:38s} SKIPPED: {reason}", flush=True)
            else:
                notable = ", ".join(f"{op} {n}" for op, n in meta["op_histogram_with_subgraphs"].items()
                                    if op in NOTABLE)
                print(f"{name:38s} {meta['model_bytes'] / 2**20:7.1f} MiB {meta['nodes']:5d} nodes "
                      f"{meta['export_seconds']:6.1f} s  {notable}", flush=True)
        summary[name] = {k: meta.get(k) for k in ("status", "family", "reason", "model_bytes", "nodes",
                                                  "export_seconds", "op_histogram_with_subgraphs")}
    # corpus.json: every model's status so far (this run's and earlier runs' exports).
    index_path = os.path.join(args.out, "corpus.json")
    index = {}
    for name in MODELS:
        meta = summary.get(name) or export_status(args.out, name)
        if meta:
            index[name] = {k: meta.get(k) for k in ("status", "family", "reason", "model_bytes", "nodes",
                                                    "export_seconds", "op_histogram_with_subgraphs")}
    os.makedirs(args.out, exist_ok=True)
    with open(index_path, "w") as f:
        json.dump(index, f, indent=1)
    ok = [n for n in names if summary[n]["status"] == "ok"]
    skipped = [n for n in names if summary[n]["status"] != "ok"]
    print(f"{len(ok)} of {len(names)} models exported to {args.out} in {time.time() - total:.1f} s"
          + (f"; skipped: {', '.join(skipped)}" if skipped else ""))


if __name__ == "__main__":
    main()
