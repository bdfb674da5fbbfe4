#!/usr/bin/python3
"""Cross-checks Kiln's int8 against ONNX Runtime running the int8 model Kiln writes, on one zoo case.

usage: run_int8_export_case.py CASE --kiln PATH [--zoo-dir DIR] [--work-dir DIR]

`kiln compile MODEL --precision int8 --calibrate DIR --emit-onnx q.onnx` writes the model with its int8
products in ONNX's quantization operators: static int8, calibrated (min-max) on the case's own inputs,
so every product is a QDQ pair (QuantizeLinear -> DequantizeLinear of the input with Kiln's scale and
zero point, DequantizeLinear of Kiln's own int8 weights with their per-channel scales). ONNX Runtime
(bench/peers' onnxruntime-node, through run_ort.js) runs it on the case's inputs and `kiln run MODEL
--precision int8 --calibrate DIR` runs the original. Both quantize the same inputs with the same scales
and weights; they differ by float rounding, which moves a uint8 code where a value sits at a rounding
tie, and in a deep network those moved codes spread. So each output must either agree within float
rounding (max err <= 1e-2 x max(1, max|ref|): the shallow models agree bit for bit), or the two int8
results must be nearer each other than independent errors would leave them: ||kiln - ort_int8||_2 <=
1.2 x ||kiln - fp32||_2 (fp32: ONNX Runtime running the original model), where two int8 errors of the
same size with nothing in common are sqrt(2) = 1.41 x apart and an export ONNX Runtime computes
garbage from is further still. Measured on the zoo (Zen 4): 0.19-0.58, and 0.93 and 1.06 on the
large MLSD models, whose outputs int8 moves by over 100% in both engines (the code flips, measured
at every 4th Conv of mlsd_320_large, grow from 1.5e-7 to 0.33 of max). What this cannot see: the
weights at other levels (127 against 63) measured 0.87. The line gives both ratios. The MLSD models
at 512x512 take a wider limit (SHARED_ERROR_LIMITS, with the measurements).
A case Kiln reduces no product of, whose int8 products the form cannot hold (a
control-flow body's, opset below 13), or whose opset predates DynamicQuantizeLinear (11) is skipped
saying so. A case listed in known_failures.txt under int8_onnx must fail, saying why.

Exit codes: 0 pass, 1 fail, 77 skipped (no zoo, no onnxruntime-node, nothing in int8).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import run_zoo_case as zoo_case

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ROUNDING_TOL = 1e-2  # float rounding alone
SHARED_ERROR_LIMIT = 1.2  # ||kiln - ort int8|| / ||kiln - fp32||; independent errors: sqrt(2)
# Cases whose int8 results are near-independent however right the export is, with the limit they
# take instead and why. MLSD at 512x512: its outputs move by over 100% under int8 in both engines,
# so the few uint8 codes the two flip differently at rounding ties (ONNX Runtime's QLinearConv
# requantizes in another float order than Kiln's post-ops) end up as far apart as independent
# errors. Measured on Zen 5 (native; Kiln at --isa avx2 with 63-level weights): mlsd_512_large
# 1.16 and 0.18 native, 1.41 and 1.30 capped (before and after Kiln kept values uint8 between
# products, which ONNX Runtime then runs in QLinearConv); mlsd_512_tiny 0.61 and 1.19 native, 0.86
# and 0.33 capped. The 320x320 models stay under 0.6. An export with wrong scales or weights errs
# by far more than int8's own error, and is caught at this limit too.
CHAOTIC_LIMIT = 1.6
SHARED_ERROR_LIMITS = {"mlsd_512_large": CHAOTIC_LIMIT, "mlsd_512_tiny": CHAOTIC_LIMIT}


def shared_error(np, kiln_out, ort_out, fp32_out, limit):
    """(ok, worst ratio, its output): per output ||kiln - ort_int8||_2 / ||kiln - fp32||_2 <= limit."""
    with open(os.path.join(ort_out, "outputs.tsv")) as f:
        rows = [l.rstrip("\n").split("\t", 1) for l in f if l.strip()]
    worst, worst_name = 0.0, ""
    for ref_file, name in rows:
        got = np.load(os.path.join(kiln_out, zoo_case.file_name_for(name) + ".npy")).astype(np.float64)
        ort = np.load(os.path.join(ort_out, ref_file)).astype(np.float64)
        fp32 = np.load(os.path.join(fp32_out, ref_file)).astype(np.float64)
        apart, from_fp32 = np.linalg.norm(got - ort), np.linalg.norm(got - fp32)
        ratio = apart / from_fp32 if from_fp32 > 0 else (0.0 if apart == 0 else float("inf"))
        if not ratio <= worst:
            worst, worst_name = ratio, name
    return worst <= limit, worst, worst_name


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("case")
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--zoo-dir", default=os.environ.get("KILN_ZOO_DIR") or os.path.expanduser("~/.cache/kiln/zoo"))
    ap.add_argument("--work-dir")
    ap.add_argument("--timeout", type=int, default=420)
    a = ap.parse_args()
    tag = "zoo %s int8 export:" % a.case
    found = zoo_case.find_case(a.case)
    if found is None:
        print("FAIL: %s no such case" % tag)
        return 1
    model_rel, inputs = found
    model = os.path.join(a.zoo_dir, model_rel)
    ort = os.path.join(ROOT, "bench", "peers", "node_modules", "onnxruntime-node")
    missing = [p for p in [model] + [os.path.join(a.zoo_dir, p) for _, p in inputs] + [ort] if not os.path.exists(p)]
    if missing or not shutil.which("node"):
        print("SKIP: %s missing %s (make zoo fetches the models and onnxruntime-node)" % (tag, missing or "node"))
        return zoo_case.SKIP
    import numpy as np

    work = a.work_dir or tempfile.mkdtemp(prefix="kiln-int8-export-%s-" % a.case)
    shutil.rmtree(work, ignore_errors=True)
    kiln_out, ort_out = os.path.join(work, "kiln"), os.path.join(work, "ort")
    os.makedirs(kiln_out)
    exported = os.path.join(work, "int8.onnx")
    validation = os.path.join(work, "validation")  # the case's inputs, named as kiln --validation reads them
    os.makedirs(validation)
    for name, path in inputs:
        os.symlink(os.path.join(a.zoo_dir, path), os.path.join(validation, name + ".npy"))
    calibration = ["--calibrate", validation]
    rc, text = zoo_case.run([a.kiln, "compile", model, "--precision", "int8"] + calibration + ["--emit-onnx", exported], a.timeout)
    if rc != 0:
        if "has none" in text or "its int8 form needs" in text:
            print("SKIP: %s %s" % (tag, zoo_case.first_error(text)))
            return zoo_case.SKIP
        print("FAIL: %s kiln compile exited %d: %s" % (tag, rc, zoo_case.first_error(text)))
        return 1
    written = [l for l in text.splitlines() if l.startswith("onnx ")]
    if written and "left fp32 there" in written[0]:
        print("SKIP: %s %s" % (tag, written[0]))
        return zoo_case.SKIP
    feeds = ["%s=%s" % (name, os.path.join(a.zoo_dir, path)) for name, path in inputs]
    rc, text = zoo_case.run([a.kiln, "run", model, "--precision", "int8", "--output-dir", kiln_out] + calibration +
                            [f for feed in feeds for f in ("--input", feed)], a.timeout)
    if rc != 0:
        print("FAIL: %s kiln run exited %d: %s" % (tag, rc, zoo_case.first_error(text)))
        return 1
    env = dict(os.environ, ORT_NODE_PATH=ort, ZOO_ORT_RUNS="1")
    p = subprocess.run(["node", os.path.join(HERE, "run_ort.js"), exported, ort_out] + feeds,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=a.timeout, env=env)
    result = json.loads(p.stdout.strip().splitlines()[-1]) if p.stdout.strip() else {"ok": False, "error": p.stderr}
    if not result.get("ok"):
        print("FAIL: %s ONNX Runtime cannot run the written model: %s" % (tag, result.get("error")))
        return 1
    rounding_ok, rounding_ratio, worst = zoo_case.compare(np, ort_out, kiln_out, ROUNDING_TOL)
    ok, shared = rounding_ok, ""
    if not rounding_ok:
        fp32_out = os.path.join(work, "fp32")
        p = subprocess.run(["node", os.path.join(HERE, "run_ort.js"), model, fp32_out] + feeds,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=a.timeout, env=env)
        limit = SHARED_ERROR_LIMITS.get(a.case, SHARED_ERROR_LIMIT)
        ok, ratio, name = shared_error(np, kiln_out, ort_out, fp32_out, limit)
        shared = "; ||kiln - ort int8|| / ||kiln - fp32|| %.3g on %r (limit %g; independent errors: 1.41)" % (ratio, name, limit)
    detail = "%s (%s); worst err %.3g of float rounding's %g%s" % (worst, written[0].split(": ", 1)[-1], rounding_ratio, ROUNDING_TOL, shared)
    code = zoo_case.verdict(tag, ok, detail, zoo_case.known_failure(a.case, "int8_onnx"))
    if ok and not a.work_dir:
        shutil.rmtree(work, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
