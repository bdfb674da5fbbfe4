#!/usr/bin/python3
"""Writes Kiln's test decoders: GGUF v3 files with random weights (fixed seeds, same bytes on every
run) for each architecture Kiln builds (llama, qwen2, qwen3, phi3), the llama one also in every
ggml block type Kiln dequantizes. The tokenizer is copied whole from llama.cpp's vocab-only GGUFs
(tests/llm/llm.sh unpacks them into $KILN_LLM_DIR/vocab) so that llama.cpp loads the models.

Usage: make_models.py VOCAB_DIR OUT_DIR  -> OUT_DIR/<model>.gguf for every model of MODELS.

Only numpy. The quantizers round to nearest per block (they do not search scales as llama.cpp's do);
what matters is ggml's block layout, which tests/llm/README.md's parity tests read through both
llama.cpp and Kiln. Every quantized block is checked against a dequantization written from ggml's
layout before the file is written.
"""
import struct
import sys
from pathlib import Path

import numpy as np

# ---------------------------------------------------------------- GGUF reading (metadata only)
U8, I8, U16, I16, U32, I32, F32V, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32V: "<f", BOOL: "<B", U64: "<Q", I64: "<q", F64: "<d"}


def read_metadata(path):
    """{key: (value type, raw bytes of the value)} of a GGUF file, in file order."""
    data = Path(path).read_bytes()
    if data[:4] != b"GGUF":
        raise ValueError(f"{path}: not a GGUF file")
    version, tensors, count = struct.unpack_from("<IQQ", data, 4)
    if version != 3:
        raise ValueError(f"{path}: GGUF version {version}, expected 3")
    at = 24

    def string(at):
        (n,) = struct.unpack_from("<Q", data, at)
        return data[at + 8:at + 8 + n].decode("utf-8"), at + 8 + n

    def skip(kind, at):
        if kind == STRING:
            (n,) = struct.unpack_from("<Q", data, at)
            return at + 8 + n
        if kind == ARRAY:
            element, n = struct.unpack_from("<IQ", data, at)
            at += 12
            if element in SCALAR:
                return at + n * struct.calcsize(SCALAR[element])
            for _ in range(n):
                at = skip(element, at)
            return at
        return at + struct.calcsize(SCALAR[kind])

    out = {}
    for _ in range(count):
        key, at = string(at)
        (kind,) = struct.unpack_from("<I", data, at)
        end = skip(kind, at + 4)
        out[key] = (kind, data[at + 4:end])
        at = end
    return out


# ---------------------------------------------------------------- GGUF writing
def gguf_string(s):
    b = s.encode("utf-8")
    return struct.pack("<Q", len(b)) + b


def value(kind, v):
    if kind == STRING:
        return gguf_string(v)
    return struct.pack(SCALAR[kind], v)


F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K = 0, 1, 2, 3, 6, 7, 8, 10, 11, 12, 13, 14
TYPE_NAMES = {F32: "f32", F16: "f16", Q4_0: "q4_0", Q4_1: "q4_1", Q5_0: "q5_0", Q5_1: "q5_1", Q8_0: "q8_0",
              Q2_K: "q2_k", Q3_K: "q3_k", Q4_K: "q4_k", Q5_K: "q5_k", Q6_K: "q6_k"}
ALIGNMENT = 32


def write_gguf(path, metadata, tensors):
    """metadata: [(key, kind, raw value bytes)]; tensors: [(name, numpy shape outermost first, type, bytes)]."""
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata))
    for key, kind, raw in metadata:
        head += gguf_string(key) + struct.pack("<I", kind) + raw
    offset = 0
    blobs = []
    for name, shape, kind, blob in tensors:
        head += gguf_string(name) + struct.pack("<I", len(shape))
        head += b"".join(struct.pack("<Q", d) for d in reversed(shape))  # innermost first
        head += struct.pack("<IQ", kind, offset)
        pad = (-len(blob)) % ALIGNMENT
        blobs.append(blob + b"\0" * pad)
        offset += len(blob) + pad
    head += b"\0" * ((-len(head)) % ALIGNMENT)
    tmp = Path(str(path) + ".part")
    with open(tmp, "wb") as f:
        f.write(head)
        for b in blobs:
            f.write(b)
    tmp.replace(path)


# ---------------------------------------------------------------- quantizers (ggml block layouts)
def f16(x):
    return np.asarray(x, dtype=np.float32).astype(np.float16)


def nibbles(q):
    """q [blocks, 32] in 0..15 -> [blocks, 16]: element j in the low nibble, j + 16 in the high."""
    return (q[:, :16] | (q[:, 16:] << 4)).astype(np.uint8)


def fifth_bits(q):
    """q [blocks, 32] in 0..31 -> [blocks, 4] bytes of a little-endian u32: bit j = bit 4 of q[j]."""
    bits = ((q >> 4) & 1).astype(np.uint32)
    word = (bits << np.arange(32, dtype=np.uint32)).sum(axis=1, dtype=np.uint32)
    return word.astype("<u4").view(np.uint8).reshape(-1, 4)


def safe_inverse(d):
    return np.where(d != 0, 1.0 / np.where(d != 0, d, 1), 0).astype(np.float32)


def quantize_q8_0(x):
    b = x.reshape(-1, 32)
    d = f16(np.abs(b).max(axis=1) / 127)
    q = np.clip(np.rint(b * safe_inverse(d.astype(np.float32))[:, None]), -127, 127).astype(np.int8)
    deq = q * d.astype(np.float32)[:, None]
    return np.concatenate([d.view(np.uint8).reshape(-1, 2), q.view(np.uint8)], axis=1), deq


def quantize_q4_0(x, bits=4):
    b = x.reshape(-1, 32)
    half = 1 << (bits - 1)
    extreme = b[np.arange(len(b)), np.abs(b).argmax(axis=1)]  # the value of largest magnitude maps to -half
    d = f16(extreme / -half)
    q = np.clip(np.rint(b * safe_inverse(d.astype(np.float32))[:, None]) + half, 0, 2 * half - 1).astype(np.uint32)
    deq = (q.astype(np.float32) - half) * d.astype(np.float32)[:, None]
    parts = [d.view(np.uint8).reshape(-1, 2)]
    if bits == 5:
        parts.append(fifth_bits(q))
    parts.append(nibbles(q & 15))
    return np.concatenate(parts, axis=1), deq


def quantize_q4_1(x, bits=4):
    b = x.reshape(-1, 32)
    top = (1 << bits) - 1
    lo, hi = b.min(axis=1), b.max(axis=1)
    d, m = f16((hi - lo) / top), f16(lo)
    q = np.clip(np.rint((b - m.astype(np.float32)[:, None]) * safe_inverse(d.astype(np.float32))[:, None]), 0, top).astype(np.uint32)
    deq = q * d.astype(np.float32)[:, None] + m.astype(np.float32)[:, None]
    parts = [d.view(np.uint8).reshape(-1, 2), m.view(np.uint8).reshape(-1, 2)]
    if bits == 5:
        parts.append(fifth_bits(q))
    parts.append(nibbles(q & 15))
    return np.concatenate(parts, axis=1), deq


def scale_min_quantize(b, sub, top, scale_levels):
    """Asymmetric super-blocks: b [blocks, 256] in sub-blocks of `sub`, values q * d * sc - dmin * m with
    q in 0..top, sc and m in 0..scale_levels. Returns d, dmin (f16), sc, m, q."""
    s = b.reshape(len(b), -1, sub)
    lo = np.minimum(s.min(axis=2), 0)
    scale = (s.max(axis=2) - lo) / top
    d = f16(scale.max(axis=1) / scale_levels)
    dmin = f16(-lo.min(axis=1) / scale_levels)
    sc = np.clip(np.rint(scale * safe_inverse(d.astype(np.float32))[:, None]), 0, scale_levels).astype(np.uint32)
    m = np.clip(np.rint(-lo * safe_inverse(dmin.astype(np.float32))[:, None]), 0, scale_levels).astype(np.uint32)
    step = d.astype(np.float32)[:, None] * sc
    offset = dmin.astype(np.float32)[:, None] * m
    q = np.clip(np.rint((s + offset[:, :, None]) * safe_inverse(step)[:, :, None]), 0, top).astype(np.uint32)
    deq = (step[:, :, None] * q - offset[:, :, None]).reshape(len(b), -1)
    return d, dmin, sc, m, q.reshape(len(b), -1), deq


def pack_k4_scales(sc, m):
    """8 six-bit scales and mins -> ggml's 12 bytes (get_scale_min_k4 reads them back)."""
    out = np.zeros((len(sc), 12), dtype=np.uint32)
    for j in range(4):
        out[:, j] = (sc[:, j] & 63) | ((sc[:, j + 4] >> 4) << 6)
        out[:, j + 4] = (m[:, j] & 63) | ((m[:, j + 4] >> 4) << 6)
        out[:, j + 8] = (sc[:, j + 4] & 15) | ((m[:, j + 4] & 15) << 4)
    return out.astype(np.uint8)


def k_nibbles(q):
    """q [blocks, 256] -> [blocks, 128]: per 64 values, 32 bytes with l in the low nibble, l + 32 high."""
    c = q.reshape(len(q), 4, 2, 32)
    return ((c[:, :, 0] & 15) | ((c[:, :, 1] & 15) << 4)).reshape(len(q), 128).astype(np.uint8)


def quantize_q4_k(x):
    b = x.reshape(-1, 256)
    d, dmin, sc, m, q, deq = scale_min_quantize(b, 32, 15, 63)
    blob = np.concatenate([d.view(np.uint8).reshape(-1, 2), dmin.view(np.uint8).reshape(-1, 2), pack_k4_scales(sc, m), k_nibbles(q)], axis=1)
    return blob, deq


def quantize_q5_k(x):
    b = x.reshape(-1, 256)
    d, dmin, sc, m, q, deq = scale_min_quantize(b, 32, 31, 63)
    high = ((q >> 4) & 1).reshape(len(b), 8, 32)  # sub-block j's value l: bit j of qh[l]
    qh = (high << np.arange(8, dtype=np.uint32)[None, :, None]).sum(axis=1).astype(np.uint8)
    blob = np.concatenate([d.view(np.uint8).reshape(-1, 2), dmin.view(np.uint8).reshape(-1, 2), pack_k4_scales(sc, m), qh, k_nibbles(q)], axis=1)
    return blob, deq


def quantize_q2_k(x):
    b = x.reshape(-1, 256)
    d, dmin, sc, m, q, deq = scale_min_quantize(b, 16, 3, 15)
    scales = (sc | (m << 4)).astype(np.uint8)
    # value 128 n + 32 j + l (l < 32) sits at bits 2j of qs[32 n + l]
    c = q.reshape(len(b), 2, 4, 32)
    qs = (c << (2 * np.arange(4, dtype=np.uint32))[None, None, :, None]).sum(axis=2).reshape(len(b), 64).astype(np.uint8)
    return np.concatenate([scales, qs, d.view(np.uint8).reshape(-1, 2), dmin.view(np.uint8).reshape(-1, 2)], axis=1), deq


def symmetric_superblocks(b, sub, qmin, qmax, scale_bits):
    """Symmetric super-blocks: sub-block scales s quantized to signed integers of scale_bits against d."""
    s = b.reshape(len(b), -1, sub)
    amax = np.abs(s).max(axis=2)
    scale = amax / qmax
    limit = (1 << (scale_bits - 1)) - 1
    d = f16(scale.max(axis=1) / limit)
    sc = np.clip(np.rint(scale * safe_inverse(d.astype(np.float32))[:, None]), -limit - 1, limit).astype(np.int32)
    step = d.astype(np.float32)[:, None] * sc
    q = np.clip(np.rint(s * safe_inverse(step)[:, :, None]), qmin, qmax).astype(np.int32)
    deq = (step[:, :, None] * q).reshape(len(b), -1)
    return d, sc, q.reshape(len(b), -1), deq


def quantize_q3_k(x):
    b = x.reshape(-1, 256)
    d, sc, q, deq = symmetric_superblocks(b, 16, -4, 3, 6)
    u = (q + 4).astype(np.uint32)  # 0..7: low 2 bits in qs, bit 2 in hmask
    c = (u & 3).reshape(len(b), 2, 4, 32)
    qs = (c << (2 * np.arange(4, dtype=np.uint32))[None, None, :, None]).sum(axis=2).reshape(len(b), 64).astype(np.uint8)
    h = ((u >> 2) & 1).reshape(len(b), 8, 32)  # value 128 n + 32 j + l: bit 4 n + j of hmask[l]
    hmask = (h << np.arange(8, dtype=np.uint32)[None, :, None]).sum(axis=1).astype(np.uint8)
    s = (sc + 32).astype(np.uint32)  # 16 six-bit scales
    raw = np.zeros((len(b), 12), dtype=np.uint32)
    for k in range(4):
        raw[:, k] = (s[:, k] & 15) | ((s[:, 8 + k] & 15) << 4)
        raw[:, 4 + k] = (s[:, 4 + k] & 15) | ((s[:, 12 + k] & 15) << 4)
        raw[:, 8 + k] = (s[:, k] >> 4) | ((s[:, 4 + k] >> 4) << 2) | ((s[:, 8 + k] >> 4) << 4) | ((s[:, 12 + k] >> 4) << 6)
    return np.concatenate([hmask, qs, raw.astype(np.uint8), d.view(np.uint8).reshape(-1, 2)], axis=1), deq


def quantize_q6_k(x):
    b = x.reshape(-1, 256)
    d, sc, q, deq = symmetric_superblocks(b, 16, -32, 31, 8)
    u = (q + 32).astype(np.uint32).reshape(len(b), 2, 4, 32)  # per 128 values: 4 runs of 32 (l, l+32, l+64, l+96)
    ql = np.concatenate([(u[:, :, 0] & 15) | ((u[:, :, 2] & 15) << 4), (u[:, :, 1] & 15) | ((u[:, :, 3] & 15) << 4)], axis=2)
    qh = (u[:, :, 0] >> 4) | ((u[:, :, 1] >> 4) << 2) | ((u[:, :, 2] >> 4) << 4) | ((u[:, :, 3] >> 4) << 6)
    blob = np.concatenate([ql.reshape(len(b), 128).astype(np.uint8), qh.reshape(len(b), 64).astype(np.uint8), sc.astype(np.int8).view(np.uint8),
                           d.view(np.uint8).reshape(-1, 2)], axis=1)
    return blob, deq


QUANTIZERS = {Q8_0: quantize_q8_0, Q4_0: quantize_q4_0, Q4_1: quantize_q4_1, Q5_0: lambda x: quantize_q4_0(x, 5),
              Q5_1: lambda x: quantize_q4_1(x, 5), Q2_K: quantize_q2_k, Q3_K: quantize_q3_k, Q4_K: quantize_q4_k,
              Q5_K: quantize_q5_k, Q6_K: quantize_q6_k}
BLOCK = {Q8_0: (32, 34), Q4_0: (32, 18), Q4_1: (32, 20), Q5_0: (32, 22), Q5_1: (32, 24), Q2_K: (256, 84), Q3_K: (256, 110),
         Q4_K: (256, 144), Q5_K: (256, 176), Q6_K: (256, 210)}


# ---------------------------------------------------------------- dequantizers read back from the bytes (ggml's layouts)
def dequantize(kind, blob):
    """The values a ggml reader gets from `blob` (uint8 [blocks, block bytes]): checks the packing."""
    h = lambda cols: blob[:, cols].copy().view(np.float16).astype(np.float32)[:, 0]
    if kind == Q8_0:
        return blob[:, 2:].view(np.int8).astype(np.float32) * h(slice(0, 2))[:, None]
    if kind in (Q4_0, Q5_0, Q4_1, Q5_1):
        asym = kind in (Q4_1, Q5_1)
        at = 4 if asym else 2
        q = np.concatenate([blob[:, -16:] & 15, blob[:, -16:] >> 4], axis=1).astype(np.uint32)
        if kind in (Q5_0, Q5_1):
            word = blob[:, at:at + 4].copy().view("<u4")[:, 0]
            q |= ((word[:, None] >> np.arange(32, dtype=np.uint32)) & 1) << 4
        d = h(slice(0, 2))[:, None]
        if asym:
            return q * d + h(slice(2, 4))[:, None]
        return (q.astype(np.float32) - (16 if kind == Q5_0 else 8)) * d
    n = len(blob)
    y = np.zeros((n, 256), dtype=np.float32)
    if kind in (Q4_K, Q5_K):
        d, dmin, sc_raw = h(slice(0, 2)), h(slice(2, 4)), blob[:, 4:16].astype(np.uint32)
        qh = blob[:, 16:48].astype(np.uint32) if kind == Q5_K else None
        ql = blob[:, -128:].astype(np.uint32)
        for j in range(8):
            if j < 4:
                sc, m = sc_raw[:, j] & 63, sc_raw[:, j + 4] & 63
            else:
                sc = (sc_raw[:, j + 4] & 15) | ((sc_raw[:, j - 4] >> 6) << 4)
                m = (sc_raw[:, j + 4] >> 4) | ((sc_raw[:, j] >> 6) << 4)
            chunk = ql[:, 32 * (j // 2):32 * (j // 2) + 32]
            q = (chunk & 15) if j % 2 == 0 else (chunk >> 4)
            if qh is not None:
                q = q + (((qh >> j) & 1) << 4)
            y[:, 32 * j:32 * j + 32] = (d * sc)[:, None] * q - (dmin * m)[:, None]
        return y
    if kind == Q6_K:
        ql, qh, sc, d = blob[:, :128].astype(np.int32), blob[:, 128:192].astype(np.int32), blob[:, 192:208].view(np.int8).astype(np.float32), h(slice(208, 210))
        for n128 in range(2):
            L, H, S = ql[:, 64 * n128:], qh[:, 32 * n128:], sc[:, 8 * n128:]
            for l in range(32):
                i = l // 16
                q1 = ((L[:, l] & 15) | (((H[:, l] >> 0) & 3) << 4)) - 32
                q2 = ((L[:, l + 32] & 15) | (((H[:, l] >> 2) & 3) << 4)) - 32
                q3 = ((L[:, l] >> 4) | (((H[:, l] >> 4) & 3) << 4)) - 32
                q4 = ((L[:, l + 32] >> 4) | (((H[:, l] >> 6) & 3) << 4)) - 32
                base = 128 * n128 + l
                y[:, base] = d * S[:, i] * q1
                y[:, base + 32] = d * S[:, i + 2] * q2
                y[:, base + 64] = d * S[:, i + 4] * q3
                y[:, base + 96] = d * S[:, i + 6] * q4
        return y
    if kind == Q2_K:
        scales, qs, d, dmin = blob[:, :16].astype(np.uint32), blob[:, 16:80].astype(np.uint32), h(slice(80, 82)), h(slice(82, 84))
        i = 0
        for n128 in range(2):
            for j in range(4):
                for half in range(2):
                    sc = scales[:, i]
                    i += 1
                    q = (qs[:, 32 * n128 + 16 * half:32 * n128 + 16 * half + 16] >> (2 * j)) & 3
                    base = 128 * n128 + 32 * j + 16 * half
                    y[:, base:base + 16] = (d * (sc & 15))[:, None] * q - (dmin * (sc >> 4))[:, None]
        return y
    if kind == Q3_K:
        hm, qs, raw, d = blob[:, :32].astype(np.int32), blob[:, 32:96].astype(np.int32), blob[:, 96:108].astype(np.int32), h(slice(108, 110))
        s = np.zeros((n, 16), dtype=np.int32)
        for k in range(4):
            s[:, k] = (raw[:, k] & 15) | ((raw[:, 8 + k] & 3) << 4)
            s[:, 4 + k] = (raw[:, 4 + k] & 15) | (((raw[:, 8 + k] >> 2) & 3) << 4)
            s[:, 8 + k] = (raw[:, k] >> 4) | (((raw[:, 8 + k] >> 4) & 3) << 4)
            s[:, 12 + k] = (raw[:, 4 + k] >> 4) | (((raw[:, 8 + k] >> 6) & 3) << 4)
        i = 0
        for n128 in range(2):
            for j in range(4):
                bit = 4 * n128 + j
                for half in range(2):
                    cols = slice(32 * n128 + 16 * half, 32 * n128 + 16 * half + 16)
                    q = ((qs[:, cols] >> (2 * j)) & 3) - np.where((hm[:, 16 * half:16 * half + 16] >> bit) & 1, 0, 4)
                    base = 128 * n128 + 32 * j + 16 * half
                    y[:, base:base + 16] = (d * (s[:, i] - 32))[:, None] * q
                    i += 1
        return y
    raise ValueError(kind)


def encode(kind, x):
    """x float32 (numpy shape, rows innermost) -> the tensor's bytes in `kind`."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    if kind == F32:
        return x.tobytes()
    if kind == F16:
        return x.astype(np.float16).tobytes()
    size, nbytes = BLOCK[kind]
    assert x.shape[-1] % size == 0, (x.shape, kind)
    blob, deq = QUANTIZERS[kind](x.reshape(-1))
    assert blob.dtype == np.uint8 and blob.shape[1] == nbytes, (kind, blob.shape)
    read = dequantize(kind, blob).reshape(-1)
    if not np.array_equal(read, deq.reshape(-1).astype(np.float32)):
        raise AssertionError(f"{TYPE_NAMES[kind]}: packed blocks do not read back ({np.abs(read - deq.reshape(-1)).max()})")
    error = np.sqrt(np.mean((read - x.reshape(-1)) ** 2) / np.mean(x ** 2))
    assert error < 0.5, (TYPE_NAMES[kind], error)
    return blob.tobytes()


# ---------------------------------------------------------------- the models
# name: architecture, vocab file, width, blocks, heads, kv heads, head size, feed-forward, tied output,
#       rope base, rms epsilon, embedding scale, seed
MODELS = {
    "llama": dict(arch="llama", vocab="llama-spm", width=256, blocks=2, heads=8, kv_heads=2, head=32, ff=512, tied=False,
                  rope_base=10000.0, eps=1e-5, embed=1.0, seed=1,
                  types=[F32, F16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K, Q2_K, Q3_K]),
    "qwen2": dict(arch="qwen2", vocab="qwen2", width=64, blocks=2, heads=4, kv_heads=2, head=16, ff=256, tied=True,
                  rope_base=1000000.0, eps=1e-6, embed=0.2, seed=2, types=[F32]),
    "qwen3": dict(arch="qwen3", vocab="qwen2", width=64, blocks=2, heads=8, kv_heads=4, head=32, ff=192, tied=True,
                  rope_base=1000000.0, eps=1e-6, embed=0.2, seed=3, types=[F32]),
    "phi3": dict(arch="phi3", vocab="phi-3", width=128, blocks=2, heads=4, kv_heads=2, head=32, ff=256, tied=False,
                 rope_base=10000.0, eps=1e-5, embed=1.0, seed=4, types=[F32]),
}
CONTEXT = 512


def weights(spec, vocab_size):
    """{name: float32 array (outermost first)}; norms and biases stay F32 in every file."""
    rng = np.random.default_rng(spec["seed"])
    d, heads, kv, hd, ff = spec["width"], spec["heads"], spec["kv_heads"], spec["head"], spec["ff"]
    normal = lambda shape, std: (rng.standard_normal(shape, dtype=np.float32) * np.float32(std)).astype(np.float32)
    norm = lambda n: (1 + normal(n, 0.1)).astype(np.float32)
    e = spec["embed"]
    w = {"token_embd.weight": normal((vocab_size, d), e)}
    for b in range(spec["blocks"]):
        p = f"blk.{b}."
        w[p + "attn_norm.weight"] = norm(d)
        q, k, v = normal((heads * hd, d), 1 / np.sqrt(d)), normal((kv * hd, d), 1 / np.sqrt(d)), normal((kv * hd, d), 1 / np.sqrt(d))
        if spec["arch"] == "phi3":
            w[p + "attn_qkv.weight"] = np.concatenate([q, k, v])
        else:
            w[p + "attn_q.weight"], w[p + "attn_k.weight"], w[p + "attn_v.weight"] = q, k, v
        if spec["arch"] == "qwen2":
            w[p + "attn_q.bias"], w[p + "attn_k.bias"], w[p + "attn_v.bias"] = normal(heads * hd, 0.3), normal(kv * hd, 0.3), normal(kv * hd, 0.3)
        if spec["arch"] == "qwen3":
            w[p + "attn_q_norm.weight"], w[p + "attn_k_norm.weight"] = norm(hd), norm(hd)
        # the blocks' outputs add about half the embedding's size to the residual stream
        w[p + "attn_output.weight"] = normal((d, heads * hd), 0.5 * e / np.sqrt(heads * hd))
        w[p + "ffn_norm.weight"] = norm(d)
        gate, up = normal((ff, d), 1 / np.sqrt(d)), normal((ff, d), 1 / np.sqrt(d))
        if spec["arch"] == "phi3":
            w[p + "ffn_up.weight"] = np.concatenate([gate, up])
        else:
            w[p + "ffn_gate.weight"], w[p + "ffn_up.weight"] = gate, up
        w[p + "ffn_down.weight"] = normal((d, ff), 1.0 * e / np.sqrt(ff))
    w["output_norm.weight"] = norm(d)
    if not spec["tied"]:
        # The head reads a successor's embedding (token t's output row is token perm[t]'s embedding), so that
        # each position has a clear favourite, as a trained model has, and not a flat spread of near ties.
        scale = 12 / (0.9 * d * e)
        successor = rng.permutation(vocab_size)
        w["output.weight"] = (w["token_embd.weight"][successor] * np.float32(scale) + normal((vocab_size, d), 0.3 * scale * e)).astype(np.float32)
    return w


def architecture_keys(spec, vocab_size):
    a = spec["arch"]
    keys = [("general.architecture", STRING, value(STRING, a)), ("general.name", STRING, value(STRING, f"kiln-test-{a}")),
            (f"{a}.context_length", U32, value(U32, spec.get("context", CONTEXT))), (f"{a}.embedding_length", U32, value(U32, spec["width"])),
            (f"{a}.block_count", U32, value(U32, spec["blocks"])), (f"{a}.feed_forward_length", U32, value(U32, spec["ff"])),
            (f"{a}.attention.head_count", U32, value(U32, spec["heads"])), (f"{a}.attention.head_count_kv", U32, value(U32, spec["kv_heads"])),
            (f"{a}.attention.layer_norm_rms_epsilon", F32V, value(F32V, spec["eps"])), (f"{a}.rope.freq_base", F32V, value(F32V, spec["rope_base"])),
            (f"{a}.rope.dimension_count", U32, value(U32, spec["head"]))]
    if spec["heads"] * spec["head"] != spec["width"]:
        keys += [(f"{a}.attention.key_length", U32, value(U32, spec["head"])), (f"{a}.attention.value_length", U32, value(U32, spec["head"]))]
    return keys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: make_models.py VOCAB_DIR OUT_DIR")
    vocab_dir, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for name, spec in MODELS.items():
        meta = read_metadata(vocab_dir / f"ggml-vocab-{spec['vocab']}.gguf")
        tokenizer = [(k, kind, raw) for k, (kind, raw) in meta.items() if k.startswith("tokenizer.")]
        kind, raw = meta["tokenizer.ggml.tokens"]
        vocab_size = struct.unpack_from("<Q", raw, 4)[0]
        w = weights(spec, vocab_size)
        for t in spec["types"]:
            tensors = []
            for tname, x in w.items():
                kind = t if x.ndim == 2 else F32  # norms and biases stay F32
                if kind in BLOCK and x.shape[-1] % BLOCK[kind][0] != 0:
                    raise ValueError(f"{name}: {tname} rows of {x.shape[-1]} are not whole {TYPE_NAMES[kind]} blocks")
                tensors.append((tname, x.shape, kind, encode(kind, x)))
            path = out / f"{name}-{TYPE_NAMES[t]}.gguf"
            write_gguf(path, architecture_keys(spec, vocab_size) + tokenizer, tensors)
            print(f"{path.name}: {path.stat().st_size} bytes")


if __name__ == "__main__":
    main()
