#!/usr/bin/env bash
# Language models: Kiln against llama.cpp (npm node-llama-cpp, bench/peers/llama/bench.js) on GGUF
# files with real shapes and random weights (bench/llm/make_bench_models.py: Llama-3.2-1B in Q4_0,
# Q8_0 and a Q4_K_M mix, Qwen2.5-0.5B in Q8_0), llama-bench's figures: prompt processing of 512
# tokens (pp512), generation of 128 tokens one call each (tg128), and generation after 2048 tokens
# of context (tg128@2048). One runner after the other, alternating, --rounds times, medians; each
# row gives Kiln/llama.cpp and the share of the machine's bandwidth bound that decoding reaches
# (read bandwidth, bench/llm/read_bandwidth.cpp, measured in every round right before and right
# after Kiln's decoding runs, their mean over the bytes of weights one token reads: each round's
# share, the median over the rounds).
# Never a test: run it on an idle machine. Writes bench/out/llm.json and prints the table.
#   bench/llm.sh [--rounds 3] [--threads 2] [--models llama32-1b-q4_0 ...] [--no-depth]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KILN="${KILN:-$ROOT/build/kiln}"
LLM="${KILN_LLM_DIR:-$HOME/.cache/kiln/llm}"
OUT="$ROOT/bench/out"
rounds=3 threads=2 depth=1
models=(llama32-1b-q4_0 llama32-1b-q8_0 llama32-1b-q4_k_m qwen25-05b-q8_0)
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --models) shift; models=(); while [ $# -gt 0 ] && [[ "$1" != --* ]]; do models+=("$1"); shift; done ;;
    --no-depth) depth=0; shift ;;
    *) echo "llm.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

"$ROOT/bench/setup.sh" llama >/dev/null
"$ROOT/tests/llm/llm.sh" >/dev/null || true  # the vocabularies
mkdir -p "$OUT" "$LLM/bench"
/usr/bin/python3 "$ROOT/bench/llm/make_bench_models.py" "$LLM/vocab" "$LLM/bench" "${models[@]}"
g++ -O2 -mavx2 -fopenmp "$ROOT/bench/llm/read_bandwidth.cpp" -o "$OUT/read_bandwidth"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

# Token ids as bench.js spreads them over the vocabulary: i -> 100 + (i * 7919 + seed * 104729) % (vocab - 200).
ids() { node -e 'const [n, seed, vocab] = process.argv.slice(1).map(Number);
  console.log(Array.from({length: n}, (_, i) => 100 + ((i * 7919 + seed * 104729) % (vocab - 200))).join(","))' "$@"; }
vocab_of() { "$KILN" inspect "$1" | sed -n 's/^  gguf.vocab_size: //p'; }

kiln_run() {  # model, prompt ids file, tokens to generate -> figures JSON
  "$KILN" generate "$1" --tokens "$(cat "$2")" -n "$3" --ignore-eos --threads "$threads" --ctx 4096 --json "$scratch/k.json" \
    >/dev/null 2>&1 && cat "$scratch/k.json"
}

results="["
for model in "${models[@]}"; do
  file="$LLM/bench/$model.gguf"
  vocab="$(vocab_of "$file")"
  ids 512 2 "$vocab" > "$scratch/pp.txt"
  ids 1 3 "$vocab" > "$scratch/one.txt"
  ids 2048 1 "$vocab" > "$scratch/deep.txt"
  for round in $(seq "$rounds"); do
    echo "llm: $model round $round" >&2
    k_pp="$(kiln_run "$file" "$scratch/pp.txt" 1)"
    l="$(cd "$ROOT/bench/peers/llama" && node bench.js "$file" --threads "$threads" --prompt 512 --generate 128 --repeat 1)"
    bandwidth="$("$OUT/read_bandwidth")"
    k_tg="$(kiln_run "$file" "$scratch/one.txt" 128)"
    k_deep="{}" l_deep="{}"
    [ "$depth" = 1 ] && k_deep="$(kiln_run "$file" "$scratch/deep.txt" 128)"
    bandwidth_after="$("$OUT/read_bandwidth")"
    if [ "$depth" = 1 ]; then
      l_deep="$(cd "$ROOT/bench/peers/llama" && node bench.js "$file" --threads "$threads" --prompt 1 --depth 2047 --generate 128 --repeat 1)"
    fi
    results+="{\"model\": \"$model\", \"round\": $round, \"bandwidth\": [$bandwidth, $bandwidth_after], \"kiln_pp\": $k_pp, \"kiln_tg\": $k_tg, \"kiln_deep\": $k_deep, \"llama\": $l, \"llama_deep\": $l_deep},"
  done
done
results="${results%,}]"
echo "{\"threads\": $threads, \"cpu\": \"$(lscpu | sed -n 's/^Model name: *//p')\", \"runs\": $results}" > "$OUT/llm.json"

/usr/bin/python3 - "$OUT/llm.json" "$LLM/bench" "$KILN" <<'PY'
import json, statistics, subprocess, sys
data = json.load(open(sys.argv[1]))
# Each round's bound takes the mean of the bandwidth measured right before and right after Kiln's
# decoding runs (a shared machine's bandwidth drifts, and on some machines jumps for seconds: the
# spread is printed); a row's share is the median of its rounds'.
key = "read_gb_per_s_%d_threads" % min(data["threads"], 2)
measured = [m[key] for r in data["runs"] for m in r["bandwidth"]]
print(f"CPU {data['cpu']}, {data['threads']} threads, read bandwidth measured {len(measured)} times: "
      f"min {min(measured):.1f}, median {statistics.median(measured):.1f}, max {max(measured):.1f} GB/s")
round_bandwidth = lambda r: statistics.mean(m[key] for m in r["bandwidth"])
print(f"{'model':22} {'row':12} {'Kiln t/s':>9} {'llama.cpp':>9} {'ratio':>6} {'bound t/s':>9} {'Kiln/bound':>10}")
models = sorted({r["model"] for r in data["runs"]}, key=[r["model"] for r in data["runs"]].index)
ratios = []
for m in models:
    runs = [r for r in data["runs"] if r["model"] == m]
    info = subprocess.run([sys.argv[3], "inspect", f"{sys.argv[2]}/{m}.gguf"], capture_output=True, text=True).stdout
    meta = dict(l.strip().split(": ", 1) for l in info.splitlines() if l.strip().startswith("gguf.") and ": " in l)
    weights = int(meta["gguf.tensor_bytes"])
    print(f"{m:22} {'bandwidth':12} " + ", ".join(f"{round_bandwidth(r):.1f}" for r in runs) + " GB/s (its rounds)")
    # At depth a token also reads the cache's keys and values: Kiln's are float32, 2048 positions
    # and on average half of the 128 generated ones.
    cache_per_position = 2 * int(meta["gguf.block_count"]) * int(meta["gguf.head_count_kv"]) * int(meta["gguf.head_size"]) * 4
    bytes_of = {"tg128": weights, "tg128@2048": weights + cache_per_position * (2048 + 64)}
    med = lambda f: statistics.median(f(r) for r in runs)
    rows = [("pp512", med(lambda r: r["kiln_pp"]["prompt_tokens_per_s"]), med(lambda r: r["llama"]["pp_tokens_per_s"]), None),
            ("tg128", med(lambda r: r["kiln_tg"]["generation_tokens_per_s"]), med(lambda r: r["llama"]["tg_tokens_per_s"]),
             lambda r: r["kiln_tg"]["generation_tokens_per_s"])]
    if runs[0]["kiln_deep"]:
        rows.append(("tg128@2048", med(lambda r: r["kiln_deep"]["generation_tokens_per_s"]), med(lambda r: r["llama_deep"]["tg_tokens_per_s"]),
                     lambda r: r["kiln_deep"]["generation_tokens_per_s"]))
    for name, k, l, kiln_of in rows:
        ratios.append(k / l)
        bound = share = ""
        if kiln_of:
            bound = f"{med(lambda r: round_bandwidth(r) * 1e9 / bytes_of[name]):9.1f}"
            share = f"{med(lambda r: kiln_of(r) / (round_bandwidth(r) * 1e9 / bytes_of[name])):10.0%}"
        print(f"{m:22} {name:12} {k:9.1f} {l:9.1f} {k / l:6.2f} {bound:>9} {share}")
    print(f"{m:22} {'load ms':12} {med(lambda r: r['kiln_tg']['load_ms']):9.0f} {med(lambda r: r['llama']['load_ms']):9.0f}")
    if "first_token_ms" in runs[0]["llama"]:
        print(f"{m:22} {'1st token ms':12} {med(lambda r: r['kiln_tg']['time_to_first_token_ms']):9.0f} "
              f"{med(lambda r: r['llama']['first_token_ms']):9.0f}")
        print(f"{m:22} {'peak RSS MB':12} {med(lambda r: r['kiln_pp']['peak_resident_bytes']) / 1e6:9.0f} "
              f"{med(lambda r: r['llama']['peak_resident_bytes']) / 1e6:9.0f}")
geo = 1.0
for r in ratios: geo *= r
print(f"geometric mean Kiln/llama.cpp over the rows: {geo ** (1 / len(ratios)):.2f}")
PY
