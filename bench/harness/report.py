"""Turns bench/run.sh's measurements into rows (medians over all samples, Kiln/ORT ratio, output
differences, GFLOP/s), prints them as a plain-text table and draws the ratio chart."""
import statistics

TARGET_RATIO = 0.8  # Kiln's goal: at most 0.8x ONNX Runtime's latency


def runner_summary(measurements, threads_gflop):
    """Pools the samples of every successful process of one runner; the median is over all of
    them. Errors are kept (any error means the numbers cover fewer rounds, or none)."""
    good = [m.result for m in measurements if m.result]
    summary = {"errors": [m.error for m in measurements if m.error], "processes": len(measurements)}
    if not good:
        return dict(summary, median_ms=None)
    samples = [s for result in good for s in result["samples_ms"]]
    median_ms = statistics.median(samples)
    return dict(
        summary, median_ms=median_ms, samples=len(samples), samples_ms=samples,
        round_medians_ms=[statistics.median(r["samples_ms"]) for r in good],
        load_ms=statistics.median(r["load_ms"] for r in good),
        first_run_ms=statistics.median(r["first_run_ms"] for r in good),
        gflop_per_s=threads_gflop / (median_ms / 1e3) if threads_gflop else None,
        details={k: v for k, v in good[0].items() if k not in ("samples_ms", "latency_ms", "load_ms", "first_run_ms")})


def make_row(case, flops, peak, measurements, diffs):
    runners = {name: runner_summary(ms, flops["gflop"]) for name, ms in measurements.items()}
    kiln, ort = runners.get("kiln", {}).get("median_ms"), runners.get("ort", {}).get("median_ms")
    ratio = kiln / ort if kiln and ort else None
    return {
        "model": case.model, "batch": case.batch, "threads": case.threads, "input_shapes": case.shapes,
        "gflop": flops["gflop"], "gflop_by_op": flops["by_op"], "gflop_unresolved_nodes": flops["unresolved"],
        "peak_gflop_per_s": peak, "runners": runners,
        "kiln_over_ort": ratio, "ratio_minus_target": ratio - TARGET_RATIO if ratio else None,
        "max_abs_diff": diffs,
    }


def _runner(row, name, key):
    return row["runners"].get(name, {}).get(key)  # runners left out by --runners have no entry


def _kiln_accuracy(row, key):
    """The worst of Kiln's own accuracy check (reduced precision vs its fp32, on the case's inputs)
    over the outputs: max relative error, lowest cosine, lowest top-1 agreement (class scores only)."""
    precision = (_runner(row, "kiln", "details") or {}).get("precision") or {}
    outputs = (precision.get("accuracy") or {}).get("outputs") or []
    values = [o[key] for o in outputs if key in o]
    if not values:
        return None
    return max(values) if key == "max_relative_error" else min(values)


COLUMNS = [  # header, width, value from a row
    ("model", 14, lambda r: r["model"]),
    ("batch", 5, lambda r: r["batch"]),
    ("thr", 3, lambda r: r["threads"]),
    ("kiln ms", 9, lambda r: _runner(r, "kiln", "median_ms")),
    ("ort ms", 9, lambda r: _runner(r, "ort", "median_ms")),
    ("torch ms", 9, lambda r: _runner(r, "torch", "median_ms")),
    ("ort int8 ms", 11, lambda r: _runner(r, "ort_int8", "median_ms")),
    ("kiln/ort8", 9, lambda r: None if not _runner(r, "ort_int8", "median_ms") or not _runner(r, "kiln", "median_ms")
     else _runner(r, "kiln", "median_ms") / _runner(r, "ort_int8", "median_ms")),
    ("prec", 4, lambda r: ((_runner(r, "kiln", "details") or {}).get("precision") or {}).get("requested")),
    ("kiln/ort", 8, lambda r: r["kiln_over_ort"]),
    ("-0.8", 6, lambda r: r["ratio_minus_target"]),
    ("|kiln-ort|", 10, lambda r: r["max_abs_diff"].get("kiln_vs_ort")),
    ("|torch-ort|", 11, lambda r: r["max_abs_diff"].get("torch_vs_ort")),
    ("rel vs fp32", 11, lambda r: _kiln_accuracy(r, "max_relative_error")),
    ("1-cos", 8, lambda r: None if _kiln_accuracy(r, "cosine") is None else 1 - _kiln_accuracy(r, "cosine")),
    ("top1", 5, lambda r: _kiln_accuracy(r, "top1_agreement")),
    ("GFLOP", 7, lambda r: r["gflop"]),
    ("kiln GF/s", 9, lambda r: _runner(r, "kiln", "gflop_per_s")),
    ("ort GF/s", 9, lambda r: _runner(r, "ort", "gflop_per_s")),
    ("torch GF/s", 10, lambda r: _runner(r, "torch", "gflop_per_s")),
    ("peak GF/s", 9, lambda r: r["peak_gflop_per_s"]),
]


def _cell(value, width):
    if value is None:
        text = "-"
    elif isinstance(value, float):
        text = f"{value:.2e}" if abs(value) < 1e-2 and value != 0 else f"{value:#.3g}" if abs(value) < 10 else f"{value:.1f}"
    else:
        text = str(value)
    return text.rjust(width)


def table(rows):
    """The rows as plain text, then every error under the table (a '-' cell has its reason there)."""
    lines = ["  ".join(header.rjust(width) for header, width, _ in COLUMNS)]
    for row in rows:
        lines.append("  ".join(_cell(value(row), width) for _, width, value in COLUMNS))
    for row in rows:
        label = f"{row['model']} b{row['batch']} t{row['threads']}"
        for runner, summary in row["runners"].items():
            for error in dict.fromkeys(summary["errors"]):  # each distinct error once
                lines.append(f"{label} {runner}: {error.splitlines()[-1] if error else error}")
        for pair, value in row["max_abs_diff"].items():
            if isinstance(value, str):
                lines.append(f"{label} {pair}: {value}")
    return "\n".join(lines)


def chart(rows, path):
    """Bar chart of Kiln/ORT per row, with the 1.0 (parity) and 0.8 (target) lines."""
    import matplotlib
    import matplotlib.ticker
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['model']}\nb{r['batch']} t{r['threads']}" for r in rows]
    ratios = [r["kiln_over_ort"] or float("nan") for r in rows]  # no bar where there is no ratio
    figure, axes = plt.subplots(figsize=(max(6.0, 0.8 * len(rows) + 2), 4.5))
    axes.set_yscale("log")  # a ratio: 2x slower and 2x faster are the same distance from 1.0
    known = [v for v in ratios if v == v] + [TARGET_RATIO, 1.0]
    low, high = min(known) / 1.5, max(known) * 1.5
    axes.set_ylim(low, high)
    axes.set_yticks([t for t in (0.1, 0.2, 0.5, 0.8, 1, 2, 5, 10, 20, 50, 100, 200, 500) if low <= t <= high])
    axes.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    axes.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    bars = axes.bar(range(len(rows)), ratios, color=["tab:green" if v <= TARGET_RATIO else "tab:blue" for v in ratios])
    for bar, row in zip(bars, rows):
        ratio = row["kiln_over_ort"]
        axes.annotate(f"{ratio:.2f}" if ratio else "no data", (bar.get_x() + bar.get_width() / 2, ratio or 1.0),
                      ha="center", va="bottom", fontsize=8)
    axes.axhline(1.0, color="black", linewidth=1, label="1.0: as fast as ONNX Runtime")
    axes.axhline(TARGET_RATIO, color="tab:red", linestyle="--", linewidth=1, label=f"{TARGET_RATIO}: target")
    axes.set_xticks(range(len(rows)), labels, fontsize=7)
    axes.set_ylabel("Kiln / ONNX Runtime latency (median, log scale)")
    axes.set_title("Kiln vs ONNX Runtime (lower is better)")
    axes.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
