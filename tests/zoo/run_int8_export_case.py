#!/usr/bin/python3
"""Cross-checks Kiln's int8 against ONNX Runtime running the int8 model Kiln writes, on one zoo case.

usage: run_int8_export_case.py CASE --kiln PATH [--zoo-dir DIR] [--work-dir DIR]

`kiln compile MODEL --precision int8 --emit-onnx q.onnx` writes the model with its int8 matrix
products as ONNX Runtime's dynamic quantization (DynamicQuantizeLinear, MatMulInteger, Kiln's own
int8 weights and scales); ONNX Runtime (bench/peers' onnxruntime-node, through run_ort.js) runs it on
the case's inputs and `kiln run MODEL --precision int8` runs the original. Both quantize the same
inputs to the same uint8 codes and sum exact int32 products, so every output must agree within
1e-2 x max(1, max|onnxruntime|): float rounding moving a code here and there, not the int8 rounding
itself (which is 5e-2 to 1e-1 against fp32). A case Kiln reduces no product of, whose int8 products
the form cannot hold (a control-flow body's), or whose opset predates DynamicQuantizeLinear (11) is
skipped saying so.

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
TOL = 1e-2


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
    rc, text = zoo_case.run([a.kiln, "compile", model, "--precision", "int8", "--validation", validation, "--emit-onnx", exported],
                            a.timeout)
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
    rc, text = zoo_case.run([a.kiln, "run", model, "--precision", "int8", "--output-dir", kiln_out] +
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
    ok, ratio, worst = zoo_case.compare(np, ort_out, kiln_out, TOL)
    print("%s: %s %s (%s); worst err/allowed %.3g" % ("PASS" if ok else "FAIL", tag, worst, written[0].split(": ", 1)[-1], ratio))
    if ok and not a.work_dir:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
