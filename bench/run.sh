#!/usr/bin/env bash
# One invocation produces the whole benchmark comparison (Kiln vs ONNX Runtime vs PyTorch):
# bench/out/results.json, bench/out/results.png and a table on stdout. Run bench/setup.sh first.
# Options: bench/run.sh --help; what the columns mean: bench/README.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec /usr/bin/python3 bench/harness/run.py "$@"
