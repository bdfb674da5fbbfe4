#!/usr/bin/python3
"""bench/corpus.sh: times Kiln's perf corpus (bench/models/corpus.py: 30-odd architectures exported with
PyTorch: classification CNNs at batch 1 and 4, vision transformers, segmentation, detection with control
flow, optical flow, video, recurrent models, transformer encoder/decoder) in Kiln and ONNX Runtime,
same inputs, same thread count, and prints kiln/ort per case and their geometric mean. The timing is
harness/comparison.py's, the zoo's (bench/zoo.sh). See bench/README.md, "The perf corpus".

The cases come from bench/models/corpus.py's table (`<model>` at batch 1 and `<model>_b<N>` for the
extra batches); their files from its exports (`bench/models/corpus.py` first: it is not run from here).
A model that is not exported is a `missing` row, one whose export failed a `skipped` row; neither is
timed nor counted in the geometric mean."""
import argparse
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import comparison  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
OUT_DIR = os.path.join(ROOT, "bench", "out", "corpus")
CORPUS_PY = os.path.join(ROOT, "bench", "models", "corpus.py")
TOP_KERNELS = 5


def load_corpus():
    """bench/models/corpus.py as a module (it imports torch only to export)."""
    spec = importlib.util.spec_from_file_location("corpus_models", CORPUS_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def top_kernels(row, count=TOP_KERNELS):
    """The slowest kernels of the row's last Kiln process ({op_type, implementation, provider, calls, ms
    per run, share of their sum}), from `kiln bench --json`'s "kernels" profile."""
    kernels = sorted((comparison.last_result(row, "kiln") or {}).get("kernels") or [], key=lambda k: -k["ms"])
    total = sum(k["ms"] for k in kernels) or 1.0
    return [{**k, "share": k["ms"] / total} for k in kernels[:count]]


def main():
    sys.stdout.reconfigure(line_buffering=True)
    corpus = load_corpus()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", help="comma-separated case names (default: all; `bench/models/corpus.py --list`)")
    comparison.add_arguments(parser)
    parser.add_argument("--threads", type=int, default=2, help="threads for both runners (default 2)")
    parser.add_argument("--corpus-dir", default=corpus.DEFAULT_OUT,
                        help="the exports (default bench/models/out/corpus, bench/models/corpus.py's --out)")
    parser.add_argument("--out", default=os.path.join(OUT_DIR, "results.json"), help="JSON with every raw number "
                        "(default bench/out/corpus/results.json); each process's JSON is kept in bench/out/corpus/runs/")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    cases = comparison.select_cases(parser, corpus.cases(args.corpus_dir), args.cases,
                                    "bench/models/corpus.py --list")
    case_model = {case: name for name in corpus.MODELS for case, _, _ in corpus.cases(args.corpus_dir, [name])}

    def precheck(case, model, inputs):
        meta = corpus.export_status(args.corpus_dir, case_model[case])
        if meta and meta.get("status") == "skipped":
            return "skipped", "export", f"export failed: {meta.get('reason')}"
        return None

    def annotate(row):
        name = case_model[row["case"]]
        meta = corpus.export_status(args.corpus_dir, name) or {}
        row["corpus_model"] = name
        row["family"] = corpus.MODELS[name].family
        if meta.get("status") == "ok":
            histogram = meta.get("op_histogram_with_subgraphs", {})
            row["notable_ops"] = {op: n for op, n in histogram.items() if op in corpus.NOTABLE}
            row["model_bytes"] = meta.get("model_bytes")
        row["kiln_top_kernels"] = top_kernels(row)

    results = comparison.run("corpus bench", cases, args, OUT_DIR,
                             ("corpus", "not exported (run /usr/bin/python3 bench/models/corpus.py)"),
                             precheck=precheck, annotate=annotate)

    # Where Kiln loses most: the top kernels of the slowest ratios.
    slowest = sorted((r for r in results["rows"] if r.get("kiln_over_ort")), key=lambda r: -r["kiln_over_ort"])
    if slowest:
        print(f"\nKiln's top kernels (ms per run, share) in the {min(5, len(slowest))} slowest kiln/ort cases:")
    for r in slowest[:5]:
        kernels = ", ".join(f"{k['op_type']}" + (f"[{k['implementation']}]" if k.get("implementation") else "")
                            + f" {k['ms']:.2f} ({k['share']:.0%})" for k in r["kiln_top_kernels"])
        print(f"  {r['case']} {r['kiln_over_ort']:.2f}x: {kernels or '-'}")


if __name__ == "__main__":
    main()
