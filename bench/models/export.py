#!/usr/bin/python3
"""Exports Kiln's benchmark and parity-test models to ONNX (opset 17) with PyTorch.

For each model it writes <out>/<model>/{model.onnx, input_<name>.npy, output_<name>.npy,
meta.json}: the model, one reference input and PyTorch's output for it. Weights are re-drawn with
a fixed seed at real scale (see NOTES.md: default inits export degenerate models), and the script
fails unless every reference output has real scale and spread. See bench/models/README.md.
"""
import argparse
import collections
import json
import math
import os
import sys
import time
import warnings

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # must precede the torch import

import numpy as np
import onnx
import torch
import torch.nn.functional as F
import torchvision
from torch import nn

OPSET = 17
SEED = 20240517
MODELS = ["resnet50", "mobilenet_v2", "squeezenet1_1", "vit_b_16", "bert_encoder", "gpt2_decoder", "ocr_det"]
# Exported only when named: the BERT-style encoder with dynamic batch and sequence axes, for the
# dynamic-shape benchmark (bench/dynamic.sh).
ON_REQUEST = ["bert_encoder_dynamic"]


# ---------------------------------------------------------------------------------------------
# Hand-written transformers (plain torch, so the exported operators are the ones we choose).

class MultiHeadSelfAttention(nn.Module):
    """Q/K/V projections, MatMul/Div/Softmax/MatMul attention, output projection."""

    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query, self.key, self.value = nn.Linear(hidden, hidden), nn.Linear(hidden, hidden), nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, hidden)

    def split_heads(self, x):  # [B, S, H] -> [B, heads, S, head_dim]
        return x.view(x.size(0), x.size(1), self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, masked_out):
        """masked_out: bool, broadcastable to [B, heads, S, S]; True where attention is forbidden."""
        q, k, v = self.split_heads(self.query(x)), self.split_heads(self.key(x)), self.split_heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(masked_out, torch.finfo(scores.dtype).min)  # exports as Where
        context = torch.matmul(torch.softmax(scores, dim=-1), v)
        context = context.permute(0, 2, 1, 3).reshape(x.size(0), x.size(1), -1)
        return self.out(context)


def gelu_tanh(x):
    """GPT-2's GELU (HF NewGELUActivation): exports as Pow/Mul/Add/Tanh."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class BertLayer(nn.Module):
    """Post-LayerNorm encoder block: attention + residual + LN, erf-GELU FFN + residual + LN."""

    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.attention = MultiHeadSelfAttention(hidden, heads)
        self.attention_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate, self.output = nn.Linear(hidden, ffn), nn.Linear(ffn, hidden)
        self.output_norm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, masked_out):
        x = self.attention_norm(x + self.attention(x, masked_out))
        return self.output_norm(x + self.output(F.gelu(self.intermediate(x))))  # erf GELU


class BertEncoder(nn.Module):
    """BERT-style encoder: word + learned position embeddings, LN, layers, tanh pooler on [CLS]."""

    def __init__(self, vocab, max_positions, hidden, heads, layers):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(max_positions, hidden)
        self.register_buffer("position_ids", torch.arange(max_positions).unsqueeze(0), persistent=False)
        self.embedding_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList([BertLayer(hidden, heads, 4 * hidden) for _ in range(layers)])
        self.pooler = nn.Linear(hidden, hidden)

    def forward(self, input_ids, attention_mask):
        positions = self.position_ids[:, : input_ids.size(1)]
        x = self.embedding_norm(self.word_embeddings(input_ids) + self.position_embeddings(positions))
        masked_out = ~attention_mask.bool()[:, None, None, :]  # Cast/Not
        for layer in self.layers:
            x = layer(x, masked_out)
        return x, torch.tanh(self.pooler(x[:, 0]))


class Gpt2Block(nn.Module):
    """Pre-LayerNorm decoder block with tanh-GELU MLP."""

    def __init__(self, hidden, heads):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(hidden, eps=1e-5), nn.LayerNorm(hidden, eps=1e-5)
        self.attention = MultiHeadSelfAttention(hidden, heads)
        self.fc, self.proj = nn.Linear(hidden, 4 * hidden), nn.Linear(4 * hidden, hidden)

    def forward(self, x, masked_out):
        x = x + self.attention(self.norm1(x), masked_out)
        return x + self.proj(gelu_tanh(self.fc(self.norm2(x))))


class Gpt2Decoder(nn.Module):
    """GPT-2-style causal LM: token + position embeddings, blocks, final LN, tied LM head."""

    def __init__(self, vocab, max_positions, hidden, heads, layers):
        super().__init__()
        self.token_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(max_positions, hidden)
        self.register_buffer("position_ids", torch.arange(max_positions).unsqueeze(0), persistent=False)
        self.blocks = nn.ModuleList([Gpt2Block(hidden, heads) for _ in range(layers)])
        self.final_norm = nn.LayerNorm(hidden, eps=1e-5)

    def forward(self, input_ids):
        seq = input_ids.size(1)
        x = self.token_embeddings(input_ids) + self.position_embeddings(self.position_ids[:, :seq])
        # Causal mask built from the runtime sequence length: ConstantOfShape -> Trilu -> Not -> Where.
        causal = torch.ones(seq, seq, dtype=torch.bool, device=input_ids.device).tril()
        masked_out = ~causal
        for block in self.blocks:
            x = block(x, masked_out)
        return torch.matmul(self.final_norm(x), self.token_embeddings.weight.t())  # tied head


# ---------------------------------------------------------------------------------------------
# PaddleOCR-style text detector (DB-like): MobileNetV3-ish backbone, FPN neck, ConvTranspose head.

def conv_bn(cin, cout, kernel, stride=1, groups=1, act=nn.Hardswish):
    layers = [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, act()) if act else nn.Sequential(*layers)


class SqueezeExcite(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.reduce, self.expand = nn.Conv2d(channels, channels // 4, 1), nn.Conv2d(channels // 4, channels, 1)

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * F.hardsigmoid(self.expand(F.relu(self.reduce(s))))


class DepthwiseSeparable(nn.Module):
    """Depthwise 3x3 (stride s) + optional SE + pointwise 1x1, both Conv+BN+HardSwish."""

    def __init__(self, cin, cout, stride, se=False):
        super().__init__()
        self.depthwise = conv_bn(cin, cin, 3, stride, groups=cin)
        self.se = SqueezeExcite(cin) if se else nn.Identity()
        self.pointwise = conv_bn(cin, cout, 1)

    def forward(self, x):
        return self.pointwise(self.se(self.depthwise(x)))


class OcrDetector(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = conv_bn(3, 16, 3, 2)  # /2
        self.stage1 = nn.Sequential(DepthwiseSeparable(16, 24, 2), DepthwiseSeparable(24, 24, 1))  # /4
        self.stage2 = nn.Sequential(DepthwiseSeparable(24, 40, 2, se=True), DepthwiseSeparable(40, 40, 1))  # /8
        self.stage3 = nn.Sequential(DepthwiseSeparable(40, 80, 2), DepthwiseSeparable(80, 80, 1, se=True))  # /16
        self.stage4 = nn.Sequential(DepthwiseSeparable(80, 160, 2, se=True))  # /32
        neck = 64
        self.lateral = nn.ModuleList([nn.Conv2d(c, neck, 1, bias=False) for c in (24, 40, 80, 160)])
        self.smooth = nn.ModuleList([nn.Conv2d(neck, neck // 4, 3, padding=1, bias=False) for _ in range(4)])
        self.head = nn.Sequential(
            conv_bn(neck, neck // 4, 3, act=nn.ReLU),
            nn.ConvTranspose2d(neck // 4, neck // 4, 2, 2), nn.BatchNorm2d(neck // 4), nn.ReLU(),
            nn.ConvTranspose2d(neck // 4, 1, 2, 2))

    def forward(self, x):
        c2 = self.stage1(self.stem(x))
        c3 = self.stage2(c2)
        c4 = self.stage3(c3)
        c5 = self.stage4(c4)
        p5, p4, p3, p2 = [lat(c) for lat, c in zip(self.lateral[::-1], (c5, c4, c3, c2))]
        p4 = p4 + F.interpolate(p5, scale_factor=2.0, mode="nearest")  # Resize
        p3 = p3 + F.interpolate(p4, scale_factor=2.0, mode="nearest")
        p2 = p2 + F.interpolate(p3, scale_factor=2.0, mode="nearest")
        levels = [conv(p) for conv, p in zip(self.smooth, (p2, p3, p4, p5))]
        fused = torch.cat([levels[0]] + [F.interpolate(p, scale_factor=2.0 ** i, mode="nearest")
                                         for i, p in enumerate(levels[1:], start=1)], dim=1)
        return torch.sigmoid(self.head(fused))  # probability map at input resolution


# ---------------------------------------------------------------------------------------------
# Model specs per variant: constructor, reference inputs, names, dynamic axes.

def image_spec(build, size, input_name="image", output_name="logits"):
    """Reference batch 1, with a dynamic batch axis."""
    dynamic = {input_name: {0: "batch"}, output_name: {0: "batch"}}
    return {"build": build, "inputs": {input_name: ("image", [1, 3, size, size])},
            "outputs": [output_name], "dynamic": dynamic}


def vit(size, layers):
    return torchvision.models.vision_transformer.VisionTransformer(
        image_size=size, patch_size=16, num_layers=layers, num_heads=12, hidden_dim=768, mlp_dim=3072)


def specs(variant):
    full = variant == "full"
    # The test variant keeps every model's real width and input size; only the transformers lose
    # depth (2 layers, same operators) and, for the token models, vocabulary rows. Every model has a
    # dynamic batch axis (bench/ runs batch 1 and 8; the tests run batches 1 to 3).
    bert = dict(vocab=30522 if full else 1024, max_positions=512, hidden=768, heads=12, layers=12 if full else 2)
    gpt2 = dict(vocab=50257 if full else 1024, max_positions=1024, hidden=768, heads=12, layers=12 if full else 2)
    seq = 128 if full else 32
    batch_axes = {0: "batch"}
    return {
        "resnet50": image_spec(lambda: torchvision.models.resnet50(weights=None), 224),
        "mobilenet_v2": image_spec(lambda: torchvision.models.mobilenet_v2(weights=None), 224),
        "squeezenet1_1": image_spec(lambda: torchvision.models.squeezenet1_1(weights=None), 224),
        "vit_b_16": {"build": lambda: vit(224, 12 if full else 2),
                     "inputs": {"image": ("image", [2, 3, 224, 224])},
                     "outputs": ["logits"], "dynamic": {"image": batch_axes, "logits": batch_axes},
                     "config": {"image_size": 224, "num_layers": 12 if full else 2}},
        "bert_encoder": {"build": lambda: BertEncoder(**bert),
                         "inputs": {"input_ids": ("tokens", [2, seq], bert["vocab"]),
                                    "attention_mask": ("mask", [2, seq])},
                         "outputs": ["last_hidden_state", "pooler_output"],
                         "dynamic": {"input_ids": batch_axes, "attention_mask": batch_axes,
                                     "last_hidden_state": batch_axes, "pooler_output": batch_axes},
                         "config": dict(bert, seq=seq)},
        "bert_encoder_dynamic": {"build": lambda: BertEncoder(**bert),
                                 "inputs": {"input_ids": ("tokens", [2, seq], bert["vocab"]),
                                            "attention_mask": ("mask", [2, seq])},
                                 "outputs": ["last_hidden_state", "pooler_output"],
                                 "dynamic": {"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"},
                                             "last_hidden_state": {0: "batch", 1: "seq"}, "pooler_output": batch_axes},
                                 "config": dict(bert, seq=seq)},
        "gpt2_decoder": {"build": lambda: Gpt2Decoder(**gpt2),
                         "inputs": {"input_ids": ("tokens", [2, seq], gpt2["vocab"])},
                         "outputs": ["logits"],
                         "dynamic": {"input_ids": batch_axes, "logits": batch_axes},
                         "config": dict(gpt2, seq=seq)},
        "ocr_det": image_spec(OcrDetector, 640 if full else 128, output_name="probability"),
    }


def make_input(kind, shape, generator, high=None):
    if kind == "image":
        return torch.randn(shape, generator=generator)
    if kind == "tokens":
        return torch.randint(0, high, shape, generator=generator, dtype=torch.int64)
    mask = torch.ones(shape, dtype=torch.int64)  # row b pads the last (b % 4) quarters: padding to test
    for b in range(shape[0]):
        mask[b, shape[1] - (b % 4) * shape[1] // 4:] = 0
    return mask


def make_inputs(spec, generator, batch=None):
    """The spec's reference inputs by name, drawn from generator; batch replaces the reference batch."""
    inputs = {}
    for name, (kind, shape, *rest) in spec["inputs"].items():
        inputs[name] = make_input(kind, [batch or shape[0]] + shape[1:], generator, *rest)
    return inputs


# ---------------------------------------------------------------------------------------------
# Weights at real scale (NOTES.md): no two initializers equal, no zero heads, real BN statistics.

def redraw_weights(model, generator):
    with torch.no_grad():
        for name, p in model.named_parameters():
            leaf = name.rsplit(".", 1)[-1]
            if leaf in ("class_token", "pos_embedding"):
                p.copy_(0.02 * torch.randn(p.shape, generator=generator))
            elif p.dim() >= 2:  # variance-preserving: He for convs (ReLU nets), LeCun for the rest
                gain = 2.0 if p.dim() == 4 else 1.0
                p.copy_(torch.randn(p.shape, generator=generator) * math.sqrt(gain / p[0].numel()))
            elif leaf == "weight":  # norm scales
                p.copy_(1.0 + 0.1 * torch.randn(p.shape, generator=generator))
            else:  # biases
                p.copy_(0.05 * torch.randn(p.shape, generator=generator))


def calibrate_batchnorm(model, example, generator):
    """Sets running stats to the statistics of random inputs (as training would), then perturbs them
    so eval-mode BN is a non-trivial affine map rather than near-identity or explosive."""
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not norms:
        return
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # cumulative average
    model.train()
    with torch.no_grad():
        model(torch.randn([4] + list(example.shape[1:]), generator=generator))
        for m in norms:
            m.running_mean.add_(0.05 * torch.randn(m.running_mean.shape, generator=generator))
            m.running_var.mul_(1.0 + 0.2 * torch.rand(m.running_var.shape, generator=generator))
    model.eval()


def check_output(model_name, name, y):
    """Fails unless the reference output is finite, not vanishing, spread out and not saturated."""
    y = y.astype(np.float64)
    scale, std = float(np.max(np.abs(y))), float(np.std(y))
    distinct = len(np.unique(y)) / y.size
    problems = []
    if not np.all(np.isfinite(y)):
        problems.append("non-finite values")
    if scale < 1e-2:
        problems.append(f"max|y| = {scale:.3g} < 1e-2")
    if std < 1e-2 * scale:
        problems.append(f"std {std:.3g} < 1e-2 * max|y| {scale:.3g}")
    if distinct < 0.1:
        problems.append(f"only {distinct:.1%} distinct values (saturated or collapsed)")
    if problems:
        sys.exit(f"{model_name}: degenerate reference output '{name}': {', '.join(problems)}")
    return {"max_abs": scale, "std": std, "mean": float(np.mean(y)), "distinct_fraction": distinct}


# ---------------------------------------------------------------------------------------------

def build_model(name, variant):
    """The seeded model in eval mode, its spec and its reference inputs. The single definition of
    every model's weights: the export and the PyTorch benchmark peer (bench/peers/torch_bench.py)
    both build through here, so they run the same network."""
    spec = specs(variant)[name]
    generator = torch.Generator().manual_seed(SEED)
    torch.manual_seed(SEED)
    model = spec["build"]()
    redraw_weights(model, generator)
    inputs = make_inputs(spec, generator)
    calibrate_batchnorm(model, next(iter(inputs.values())), generator)
    model.eval()
    return model, spec, inputs


def export_model(name, out_dir, variant):
    start = time.time()
    model, spec, inputs = build_model(name, variant)
    args = tuple(inputs.values())
    with torch.no_grad():
        outputs = model(*args)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)

    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "model.onnx")
    torch.onnx.export(model, args, path, opset_version=OPSET, input_names=list(inputs),
                      output_names=spec["outputs"], dynamic_axes=spec["dynamic"] or None, do_constant_folding=True)
    onnx.checker.check_model(path, full_check=True)
    proto = onnx.load(path)

    stats = {}
    for n, x in inputs.items():
        np.save(os.path.join(out_dir, f"input_{n}.npy"), x.numpy())
    for n, y in zip(spec["outputs"], outputs):
        y = y.numpy()
        stats[n] = check_output(name, n, y)
        np.save(os.path.join(out_dir, f"output_{n}.npy"), y)

    def describe(values):
        return [{"name": v.name, "elem_type": v.type.tensor_type.elem_type,
                 "shape": [d.dim_param or d.dim_value for d in v.type.tensor_type.shape.dim]} for v in values]

    meta = {
        "model": name, "variant": variant, "seed": SEED, "opset": OPSET,
        "torch": torch.__version__, "torchvision": torchvision.__version__, "onnx": onnx.__version__,
        "config": spec.get("config", {}),
        "inputs": describe(proto.graph.input), "outputs": describe(proto.graph.output),
        "reference_input_shapes": {n: list(x.shape) for n, x in inputs.items()},
        "reference_output_stats": stats,
        "parameters": sum(p.numel() for p in model.parameters()),
        "initializers": len(proto.graph.initializer), "nodes": len(proto.graph.node),
        "op_histogram": dict(sorted(collections.Counter(n.op_type for n in proto.graph.node).items())),
        "model_bytes": os.path.getsize(path), "export_seconds": round(time.time() - start, 2),
    }
    with open(os.path.join(out_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=2)
    return meta


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", choices=["test", "full"], default="test",
                        help="test: reduced inputs/depth for `make test`; full: the real models for bench/")
    parser.add_argument("--out", help="output directory (default bench/models/out/<variant>)")
    parser.add_argument("--models", nargs="+", choices=MODELS + ON_REQUEST, default=MODELS, help="subset to export")
    args = parser.parse_args()
    out = args.out or os.path.join(os.path.dirname(os.path.abspath(__file__)), "out", args.variant)
    torch.set_num_threads(1)
    # The tracer warns about asserts, Python scalars and interpolate scales; none changes the export.
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    total = time.time()
    for name in args.models:
        meta = export_model(name, os.path.join(out, name), args.variant)
        scales = ", ".join(f"{n} max|y| {s['max_abs']:.3g} std {s['std']:.3g}"
                           for n, s in meta["reference_output_stats"].items())
        print(f"{name:14s} {meta['model_bytes'] / 2**20:8.1f} MiB {meta['nodes']:5d} nodes "
              f"{meta['export_seconds']:6.1f} s  {scales}", flush=True)
    print(f"exported {len(args.models)} models to {out} in {time.time() - total:.1f} s")


if __name__ == "__main__":
    main()
