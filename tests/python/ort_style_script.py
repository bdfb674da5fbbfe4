"""A script written against onnxruntime's Python API, with only its import changed: it runs a
model on .npy inputs and writes the outputs, as deployment scripts do. test_ort_script.py runs it
unchanged on the exported parity models.

    python3 ort_style_script.py MODEL OUT_DIR NAME=INPUT.npy ...
"""

import os
import sys

import numpy as np

import kiln as ort


def main(argv):
    model, out_dir, feeds = argv[0], argv[1], dict(a.split("=", 1) for a in argv[2:])
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(model, sess_options=so, providers=["CPUExecutionProvider"])
    print("providers:", sess.get_providers())
    inputs = {}
    for arg in sess.get_inputs():
        value = np.load(feeds[arg.name])
        print("input %s %s %s <- %s" % (arg.name, arg.type, arg.shape, value.shape))
        inputs[arg.name] = value
    names = [o.name for o in sess.get_outputs()]
    results = sess.run(names, inputs)
    os.makedirs(out_dir, exist_ok=True)
    for name, value in zip(names, results):
        np.save(os.path.join(out_dir, name + ".npy"), value)
        print("output %s %s %s" % (name, value.dtype, value.shape))
    meta = sess.get_modelmeta()
    print("producer:", meta.producer_name, meta.version)


if __name__ == "__main__":
    main(sys.argv[1:])
