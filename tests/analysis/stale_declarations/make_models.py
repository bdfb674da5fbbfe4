#!/usr/bin/python3
"""Makes the stale-declaration models of tests/analysis/stale_declarations_test.cpp and records
ONNX Runtime's outputs for their fixed inputs (tests/zoo/run_ort.js, onnxruntime-node from
bench/peers). Each model declares shapes the way exporters get them wrong; ONNX Runtime runs it.

  loop_growing_concat: a Loop carries a tensor that starts empty, float[0,3,4], and grows by a
      Concat each iteration; the body's input and output, the Loop's output and the graph
      output are declared with the starting size.
  nested_if_ranks: Ifs nested three deep, chosen by bool inputs, whose branches give outputs of
      different ranks; the inner Ifs' outputs are declared for one branch's rank (symbolic dims:
      ONNX Runtime refuses a static branch output its branch contradicts), the outer output
      (value_info) for one branch's rank and read by an Unsqueeze whose output is declared for
      that branch too.
  branch_shape_arithmetic: an If chosen by the input's batch size (as exporters write for a batch
      of one) whose branches Unsqueeze and Reshape by computed shapes, every intermediate
      declared with stale dims; an Unsqueeze after it is declared one rank short.

usage: /usr/bin/python3 tests/analysis/stale_declarations/make_models.py
writes, beside this script, MODEL.onnx and MODEL/CASE/{input,output}_NAME.npy.
"""
import json
import os
import shutil
import subprocess
import tempfile

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper, save

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
OPSET = [helper.make_opsetid("", 13)]
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def value(name, elem, dims):
    return helper.make_tensor_value_info(name, elem, dims)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def loop_growing_concat():
    body = helper.make_graph(
        [
            helper.make_node("Cast", ["i"], ["i_float"], to=F),
            helper.make_node("Add", ["i_float", "one"], ["scale"]),
            helper.make_node("Mul", ["x", "scale"], ["piece"]),
            helper.make_node("Concat", ["acc_in", "piece"], ["acc_out"], axis=0),
            helper.make_node("Identity", ["cond_in"], ["cond_out"]),
        ],
        "grow",
        [value("i", I64, []), value("cond_in", B, []), value("acc_in", F, [0, 3, 4])],
        [value("cond_out", B, []), value("acc_out", F, [0, 3, 4])],
        [numpy_helper.from_array(np.array(1, dtype=np.float32), "one")],
        value_info=[value("piece", F, [1, 3, 4])],
    )
    graph = helper.make_graph(
        [
            helper.make_node("Loop", ["n", "", "empty"], ["grown"], "append_loop", body=body),
            helper.make_node("Mul", ["grown", "two"], ["y"]),
        ],
        "loop_growing_concat",
        [value("x", F, [1, 3, 4]), value("n", I64, [])],
        [value("y", F, [0, 3, 4])],
        [numpy_helper.from_array(np.zeros((0, 3, 4), np.float32), "empty"),
         numpy_helper.from_array(np.array(2, dtype=np.float32), "two")],
        value_info=[value("grown", F, [0, 3, 4])],
    )
    x = np.arange(12, dtype=np.float32).reshape(1, 3, 4) / 8
    return graph, {"three": {"x": x, "n": np.array(3, np.int64)},
                   "one": {"x": x, "n": np.array(1, np.int64)}}


def nested_if_ranks():
    # Innermost: c3 ? x[None] (rank 3) : x * 2 (rank 2).
    inner3 = helper.make_node(
        "If", ["c3"], ["level3"], "level3_if",
        then_branch=helper.make_graph([helper.make_node("Unsqueeze", ["x", "axes0"], ["x_up"])], "level3_then", [],
                                      [value("x_up", F, [1, 2, 8])]),
        else_branch=helper.make_graph([helper.make_node("Mul", ["x", "two"], ["x_twice"])], "level3_else", [],
                                      [value("x_twice", F, [2, 8])]))
    # Middle: c2 ? level3 : x - 1 (rank 2).
    inner2 = helper.make_node(
        "If", ["c2"], ["level2"], "level2_if",
        then_branch=helper.make_graph([inner3], "level2_then", [], [value("level3", F, ["S", "T", 8])]),
        else_branch=helper.make_graph([helper.make_node("Sub", ["x", "one"], ["x_less"])], "level2_else", [],
                                      [value("x_less", F, [2, 8])]))
    # Outer: c1 ? level2 : x[None][None] (rank 4).
    outer = helper.make_node(
        "If", ["c1"], ["level1"], "level1_if",
        then_branch=helper.make_graph([inner2], "level1_then", [], [value("level2", F, [1, "T", 8])]),
        else_branch=helper.make_graph([helper.make_node("Unsqueeze", ["x", "axes01"], ["x_up2"])], "level1_else", [],
                                      [value("x_up2", F, [1, 1, 2, 8])]))
    graph = helper.make_graph(
        [outer, helper.make_node("Unsqueeze", ["level1", "axes_last"], ["y"], "after_if")],
        "nested_if_ranks",
        [value("x", F, [2, 8]), value("c1", B, []), value("c2", B, []), value("c3", B, [])],
        [value("y", F, [1, 2, 8, 1])],
        [ints("axes0", [0]), ints("axes01", [0, 1]), ints("axes_last", [-1]),
         numpy_helper.from_array(np.array(2, dtype=np.float32), "two"),
         numpy_helper.from_array(np.array(1, dtype=np.float32), "one")],
        value_info=[value("level1", F, [1, 2, 8])],
    )
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(2, 8)
    t, f = np.array(True), np.array(False)
    cases = {"rank3": (t, t, t), "rank2_twice": (t, t, f), "rank2_less": (t, f, t), "rank4": (f, t, t)}
    return graph, {name: {"x": x, "c1": c[0], "c2": c[1], "c3": c[2]} for name, c in cases.items()}


def branch_shape_arithmetic():
    # then (batch of one): Reshape x [1,T] to [T,1] by its computed shape, then Unsqueeze -> [1,T,1]
    then_branch = helper.make_graph(
        [
            helper.make_node("Shape", ["x"], ["x_shape"]),
            helper.make_node("Gather", ["x_shape", "index1"], ["length"], axis=0),
            helper.make_node("Concat", ["length", "one_dim"], ["column_shape"], axis=0),
            helper.make_node("Reshape", ["x", "column_shape"], ["column"]),
            helper.make_node("Unsqueeze", ["column", "axes0"], ["single"]),
        ],
        "batch_of_one", [], [value("single", F, [1, 1, 6])],  # stale: declared before a transpose
        value_info=[value("x_shape", I64, [2]), value("column_shape", I64, [2]), value("column", F, [1, 6, 1])])
    # else (a batch): Unsqueeze x [B,T] -> [B,1,T]
    else_branch = helper.make_graph(
        [helper.make_node("Unsqueeze", ["x", "axes1"], ["batched"])],
        "batch", [], [value("batched", F, [4, 1, "T"])])
    graph = helper.make_graph(
        [
            helper.make_node("Shape", ["x"], ["shape"]),
            helper.make_node("Gather", ["shape", "index0"], ["batch"], axis=0),
            helper.make_node("Equal", ["batch", "one"], ["is_one"]),
            helper.make_node("Squeeze", ["is_one"], ["single_item"]),
            helper.make_node("If", ["single_item"], ["z"], "batch_if", then_branch=then_branch, else_branch=else_branch),
            helper.make_node("Unsqueeze", ["z", "axes_last"], ["y"], "after_if"),
        ],
        "branch_shape_arithmetic",
        [value("x", F, ["B", "T"])],
        [value("y", F, [1, "T", 1])],
        [ints("index0", [0]), ints("index1", [1]), ints("one", [1]), ints("one_dim", [1]), ints("axes0", [0]),
         ints("axes1", [1]), ints("axes_last", [-1])],
        value_info=[value("z", F, [1, "T", 1])],
    )
    return graph, {"batch_of_one": {"x": np.linspace(0, 1, 6, dtype=np.float32).reshape(1, 6)},
                   "batch_of_three": {"x": np.linspace(-1, 1, 15, dtype=np.float32).reshape(3, 5)}}


def run_ort(model_path, inputs, case_dir):
    with tempfile.TemporaryDirectory() as tmp:
        feeds = []
        for name, array in inputs.items():
            path = os.path.join(case_dir, "input_%s.npy" % name)
            np.save(path, array)
            feeds.append("%s=%s" % (name, path))
        out = subprocess.run(["node", os.path.join(ROOT, "tests", "zoo", "run_ort.js"), model_path, tmp] + feeds,
                             check=True, capture_output=True, text=True, env=dict(os.environ, ZOO_ORT_RUNS="1"))
        result = json.loads(out.stdout.strip().splitlines()[-1])
        if not result["ok"]:
            raise SystemExit("ONNX Runtime refused %s: %s" % (model_path, result["error"]))
        for name, info in result["outputs"].items():
            shutil.copy(os.path.join(tmp, info["file"]), os.path.join(case_dir, "output_%s.npy" % name))
        return result["onnxruntime"]


def main():
    for make in (loop_growing_concat, nested_if_ranks, branch_shape_arithmetic):
        graph, cases = make()
        model = helper.make_model(graph, opset_imports=OPSET, producer_name="kiln make_models.py")
        model.ir_version = 7
        checker.check_model(model)
        path = os.path.join(HERE, make.__name__ + ".onnx")
        save(model, path)
        shutil.rmtree(os.path.join(HERE, make.__name__), ignore_errors=True)
        for case, inputs in cases.items():
            case_dir = os.path.join(HERE, make.__name__, case)
            os.makedirs(case_dir)
            version = run_ort(path, inputs, case_dir)
            print("%s/%s: ONNX Runtime %s" % (make.__name__, case, version))


if __name__ == "__main__":
    main()
