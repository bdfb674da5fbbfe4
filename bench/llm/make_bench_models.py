#!/usr/bin/python3
"""Writes the language-model benchmark's GGUF files (bench/llm.sh): the real shapes of
Llama-3.2-1B (Q4_0, Q8_0, and a Q4_K_M mix: Q4_K with the output, half the attn_v and ffn_down
tensors in Q6_K) and Qwen2.5-0.5B (Q8_0), random weights (fixed seeds), the tokenizers copied from
llama.cpp's vocab-only GGUFs. Speed does not depend on the weights' values; these files only
measure it. Quantization and the file format are tests/llm/make_models.py's.

Usage: make_bench_models.py VOCAB_DIR OUT_DIR [NAME...]  -> OUT_DIR/<name>.gguf (skipped when present)
"""
import struct
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "llm"))
import make_models as mm  # noqa: E402

SHAPES = {
    "llama32-1b": dict(arch="llama", vocab="llama-bpe", width=2048, blocks=16, heads=32, kv_heads=8, head=64, ff=8192, tied=True,
                       rope_base=500000.0, eps=1e-5, embed=1.0, seed=11),
    "qwen25-05b": dict(arch="qwen2", vocab="qwen2", width=896, blocks=24, heads=14, kv_heads=2, head=64, ff=4864, tied=True,
                       rope_base=1000000.0, eps=1e-6, embed=1.0, seed=12),
}
# name -> (shape, type of the products' weights, type of the output/embedding, Q6_K share of attn_v/ffn_down)
FILES = {
    "llama32-1b-q4_0": ("llama32-1b", mm.Q4_0, mm.Q6_K, False),
    "llama32-1b-q8_0": ("llama32-1b", mm.Q8_0, mm.Q8_0, False),
    "llama32-1b-q4_k_m": ("llama32-1b", mm.Q4_K, mm.Q6_K, True),
    "qwen25-05b-q8_0": ("qwen25-05b", mm.Q8_0, mm.Q8_0, False),
}


def tensors(spec, vocab_size, product_type, embedding_type, mixed):
    rng = np.random.default_rng(spec["seed"])
    d, heads, kv, hd, ff = spec["width"], spec["heads"], spec["kv_heads"], spec["head"], spec["ff"]
    normal = lambda shape: (rng.standard_normal(shape, dtype=np.float32) * np.float32(0.02)).astype(np.float32)
    ones = lambda n: np.ones(n, dtype=np.float32)
    yield "token_embd.weight", (vocab_size, d), embedding_type, normal((vocab_size, d))
    for b in range(spec["blocks"]):
        p = f"blk.{b}."
        sensitive = mm.Q6_K if mixed and b % 2 == 0 else product_type
        yield p + "attn_norm.weight", (d,), mm.F32, ones(d)
        yield p + "attn_q.weight", (heads * hd, d), product_type, normal((heads * hd, d))
        yield p + "attn_k.weight", (kv * hd, d), product_type, normal((kv * hd, d))
        yield p + "attn_v.weight", (kv * hd, d), sensitive, normal((kv * hd, d))
        if spec["arch"] == "qwen2":
            for name, n in (("attn_q.bias", heads * hd), ("attn_k.bias", kv * hd), ("attn_v.bias", kv * hd)):
                yield p + name, (n,), mm.F32, normal(n)
        yield p + "attn_output.weight", (d, heads * hd), product_type, normal((d, heads * hd))
        yield p + "ffn_norm.weight", (d,), mm.F32, ones(d)
        yield p + "ffn_gate.weight", (ff, d), product_type, normal((ff, d))
        yield p + "ffn_up.weight", (ff, d), product_type, normal((ff, d))
        yield p + "ffn_down.weight", (d, ff), sensitive, normal((d, ff))
    yield "output_norm.weight", (d,), mm.F32, ones(d)


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: make_bench_models.py VOCAB_DIR OUT_DIR [NAME...]")
    vocab_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for name in sys.argv[3:] or FILES:
        path = out / f"{name}.gguf"
        if path.exists():
            continue
        shape, product_type, embedding_type, mixed = FILES[name]
        spec = SHAPES[shape]
        meta = mm.read_metadata(vocab_dir / f"ggml-vocab-{spec['vocab']}.gguf")
        tokenizer = [(k, kind, raw) for k, (kind, raw) in meta.items() if k.startswith("tokenizer.")]
        vocab_size = struct.unpack_from("<Q", meta["tokenizer.ggml.tokens"][1], 4)[0]
        encoded = [(n, s, kind, mm.encode(kind, x)) for n, s, kind, x in tensors(spec, vocab_size, product_type, embedding_type, mixed)]
        spec = dict(spec, context=4096)
        mm.write_gguf(path, mm.architecture_keys(spec, vocab_size) + tokenizer, encoded)
        print(f"{path.name}: {path.stat().st_size / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
