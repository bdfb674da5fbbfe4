#!/usr/bin/python3
"""Runs one opset-parity case (cases.py) through ONNX Runtime and Kiln and compares every output.

usage: run_case.py CASE --kiln PATH [--work-dir DIR] [--mode graph|eager] [--keep]
       run_case.py --list

Writes CASE.onnx and one .npy per input into the work folder, runs ONNX Runtime
(`node tests/zoo/run_ort.js MODEL ort/ name=file.npy ...`, onnxruntime-node from bench/peers or
$ORT_NODE_PATH) and `kiln run MODEL --mode MODE --input name=file.npy ... --output-dir kiln/`, then
checks each graph output: the same shape and dtype, NaN (and +-inf) where ONNX Runtime has them,
float values within tol * max(1, max|ort|) (tol from the case, default 1e-4), integer and bool
values equal (or within the case's int_tol). One line PASS/FAIL names the worst output.

ONNX Runtime failing, or giving an output of another type or shape than the model declares, is a
FAIL of the case's definition, never a pass.

Exit codes: 0 pass, 1 fail, 77 skipped (node or onnxruntime-node is not installed).
"""
import argparse
import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RUN_ORT = os.path.join(ROOT, "tests", "zoo", "run_ort.js")
SKIP = 77
ORT_TIMEOUT = 60
KILN_TIMEOUT = 90

sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "zoo"))
import cases  # noqa: E402  (needs neither numpy nor onnx to list)
from run_zoo_case import file_name_for, first_error  # noqa: E402  (the zoo runner's: one way to name and read kiln's results)


def run(cmd, timeout, env=None):
    for attempt in range(4):
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout,
                               env=env)
        except subprocess.TimeoutExpired:
            return -1, "timed out after %d s: %s" % (timeout, " ".join(cmd))
        except OSError as e:
            # a binary being relinked at this moment (text file busy, or not yet executable): retry
            if e.errno in (errno.ETXTBSY, errno.EACCES) and attempt < 3:
                time.sleep(3)
                continue
            return -2, "could not run %s: %s" % (cmd[0], e)
        return p.returncode, p.stdout


def missing_ort():
    """Why ONNX Runtime cannot be run here, or None."""
    if shutil.which("node") is None:
        return "node is not installed (Debian: nodejs)"
    ort = os.environ.get("ORT_NODE_PATH") or os.path.join(ROOT, "bench", "peers", "node_modules", "onnxruntime-node")
    if not os.path.exists(os.path.join(ort, "package.json")):
        return "onnxruntime-node is not installed at %s (bench/setup.sh onnxruntime)" % ort
    return None


def declared_outputs(model):
    """[(name, numpy dtype, shape)] from the graph's outputs; a string output's dtype is numpy's
    str (of any width), a symbolic dim is None."""
    import numpy as np
    from onnx import TensorProto, mapping
    out = []
    for vi in model.graph.output:
        t = vi.type.tensor_type
        dtype = np.dtype(str) if t.elem_type == TensorProto.STRING else np.dtype(
            mapping.TENSOR_TYPE_TO_NP_TYPE[t.elem_type])
        out.append((vi.name, dtype, tuple(d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim)))
    return out


def matches_declared(arr, dtype, shape):
    """True when `arr` has the declared dtype (strings: any width) and shape (None: any size)."""
    kind_ok = arr.dtype.kind == "U" if dtype.kind == "U" else arr.dtype == dtype
    return kind_ok and len(arr.shape) == len(shape) and all(d is None or d == n for d, n in zip(shape, arr.shape))


def compare_one(np, name, ref, got, c):
    """Returns (ok, ratio = error / allowed, text)."""
    if ref.dtype.kind == "U":
        if got.shape != ref.shape or got.dtype.kind != "U":
            return False, float("inf"), "output %r: Kiln %s %s, ONNX Runtime strings %s" % (
                name, got.dtype, got.shape, ref.shape)
        off = int((got != ref).sum())
        text = "output %r (strings): %d of %d elements differ" % (name, off, ref.size)
        if off:
            at = tuple(int(i) for i in np.argwhere(got != ref)[0])
            text += ", first at %s: Kiln %r, ONNX Runtime %r" % (at, str(got[at]), str(ref[at]))
        return off == 0, 0.0 if off == 0 else float("inf"), text
    if got.shape != ref.shape or got.dtype != ref.dtype:
        return False, float("inf"), "output %r: Kiln %s %s, ONNX Runtime %s %s" % (
            name, got.dtype, got.shape, ref.dtype, ref.shape)
    if ref.size == 0:
        return True, 0.0, "output %r: empty" % name
    if ref.dtype.kind in "fc":
        r = ref.astype(np.float64)
        g = got.astype(np.float64)
        nan_r, nan_g = np.isnan(r), np.isnan(g)
        if (nan_r != nan_g).any():
            return False, float("inf"), "output %r: NaN at %d places where ONNX Runtime has none or vice versa" % (
                name, int((nan_r != nan_g).sum()))
        inf_r = np.isinf(r)
        if (inf_r != np.isinf(g)).any() or (r[inf_r] != g[inf_r]).any():
            return False, float("inf"), "output %r: +-inf where ONNX Runtime has none or vice versa" % name
        finite = np.isfinite(r)
        if not finite.any():
            return True, 0.0, "output %r: no finite values" % name
        err = float(np.max(np.abs(g[finite] - r[finite])))
        ref_max = float(np.max(np.abs(r[finite])))
        allowed = c.tol * max(1.0, ref_max)
        ratio = err / allowed if allowed > 0 else (0.0 if err == 0 else float("inf"))
        text = "output %r: max abs err %.3g, allowed %.3g (tol %g x max(1, %.3g))" % (
            name, err, allowed, c.tol, ref_max)
        return ratio <= 1.0, ratio, text
    # integer and bool: exact unless the case allows int_tol
    diff = np.abs(got.astype(np.int64) - ref.astype(np.int64)) if ref.dtype != np.uint64 else \
        (got != ref).astype(np.int64)
    err = int(diff.max())
    where = int((diff > c.int_tol).sum())
    text = "output %r (%s): max abs diff %d, allowed %d, %d of %d elements off" % (
        name, ref.dtype, err, c.int_tol, where, ref.size)
    if c.int_tol == 0:
        ratio = 0.0 if err == 0 else float("inf")
    else:
        ratio = err / c.int_tol
    return err <= c.int_tol, ratio, text


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("case", nargs="?")
    ap.add_argument("--list", action="store_true", help="print the case names, one per line")
    ap.add_argument("--kiln", help="the kiln binary")
    ap.add_argument("--mode", default="graph", choices=("graph", "eager"))
    ap.add_argument("--work-dir", help="where the model, inputs and outputs go (emptied first); default: a temporary "
                                       "folder, removed afterwards unless --keep")
    ap.add_argument("--keep", action="store_true", help="keep the temporary work folder")
    ap.add_argument("--kiln-arg", action="append", default=[],
                    help="extra flag for kiln run, e.g. --kiln-arg=--allow-fallback --kiln-arg=cpu_ref")
    a = ap.parse_args()

    if a.list:
        for c in cases.CASES:
            print(c.name)
        return 0
    if not a.case or not a.kiln:
        ap.error("CASE and --kiln are required (or --list)")
    tag = "opset %s %s:" % (a.case, a.mode)
    c = cases.find(a.case)
    if c is None:
        print("FAIL: %s no case %r in %s" % (tag, a.case, os.path.join(HERE, "cases.py")))
        return 1
    why = missing_ort()
    if why:
        print("SKIP: %s %s, so there is no reference to compare with" % (tag, why))
        return SKIP
    try:
        import numpy as np
        import onnx
    except ImportError as e:
        print("FAIL: %s %s cannot import numpy and onnx (Debian: python3-numpy python3-onnx): %s"
              % (tag, sys.executable, e))
        return 1

    work = a.work_dir or tempfile.mkdtemp(prefix="kiln-opset-%s-%s-" % (a.case, a.mode))
    if a.work_dir:
        shutil.rmtree(work, ignore_errors=True)
    try:
        return check(np, onnx, c, a, tag, work)
    finally:
        if not a.work_dir and not a.keep:
            shutil.rmtree(work, ignore_errors=True)


def check(np, onnx, c, a, tag, work):
    ort_dir, kiln_dir = os.path.join(work, "ort"), os.path.join(work, "kiln")
    for d in (work, ort_dir, kiln_dir):
        os.makedirs(d, exist_ok=True)
    model = c.build()
    model_path = os.path.join(work, c.name + ".onnx")
    onnx.save(model, model_path)
    feeds = []
    for name, arr in c.make_inputs().items():
        path = os.path.join(work, "in_%s.npy" % file_name_for(name))
        np.save(path, np.require(arr, requirements="C"))  # keeps a 0-d array 0-d
        feeds.append("%s=%s" % (name, path))

    # ONNX Runtime: the reference. Its failure is the case's failure.
    env = dict(os.environ, ZOO_ORT_RUNS="1")
    rc, text = run(["node", RUN_ORT, model_path, ort_dir, *feeds], ORT_TIMEOUT, env)
    line = next((l for l in reversed(text.splitlines()) if l.startswith("{")), None)
    res = None
    if line is not None:
        try:
            res = json.loads(line)
        except ValueError:
            pass
    if rc != 0 or res is None or not res.get("ok"):
        err = (res or {}).get("error") or text.strip()[-1000:]
        print("FAIL: %s the case is wrong: ONNX Runtime cannot run it: %s" % (tag, err))
        return 1
    declared = declared_outputs(model)
    refs = {}
    for name, dtype, shape in declared:
        info = res["outputs"].get(name)
        if info is None:
            print("FAIL: %s the case is wrong: ONNX Runtime gave no output %r" % (tag, name))
            return 1
        ref = np.load(os.path.join(ort_dir, info["file"]))
        if not matches_declared(ref, dtype, shape):
            print("FAIL: %s the case is wrong: output %r is declared %s %s, ONNX Runtime gives %s %s"
                  % (tag, name, dtype, shape, ref.dtype, ref.shape))
            return 1
        refs[name] = ref

    # Kiln
    kiln_cmd = [a.kiln, "run", model_path, "--mode", a.mode]
    for f in feeds:
        kiln_cmd += ["--input", f]
    kiln_cmd += ["--output-dir", kiln_dir, *a.kiln_arg]
    rc, text = run(kiln_cmd, KILN_TIMEOUT)
    with open(os.path.join(work, "kiln.log"), "w") as f:
        f.write(" ".join(kiln_cmd) + "\n" + text)
    if rc != 0:
        how = "exited %d" % rc if rc > 0 else ("was killed by signal %d" % -rc if rc < -2 else "")
        print("FAIL: %s kiln %s: %s" % (tag, how or "failed", first_error(text)))
        return 1

    ok, worst_ratio, worst_text = True, -1.0, ""
    for name, ref in refs.items():
        got_path = os.path.join(kiln_dir, file_name_for(name) + ".npy")
        if not os.path.exists(got_path):
            ok, worst_ratio, worst_text = False, float("inf"), "output %r: Kiln wrote no %s" % (
                name, os.path.basename(got_path))
            break
        one_ok, ratio, text = compare_one(np, name, ref, np.load(got_path), c)
        ok = ok and one_ok
        if ratio >= worst_ratio:
            worst_ratio, worst_text = ratio, text
    print("%s: %s %s; worst err/allowed %.3g" % ("PASS" if ok else "FAIL", tag, worst_text, worst_ratio))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
