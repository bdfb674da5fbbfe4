#!/usr/bin/env bash
# Dynamic-shape comparison: the BERT-style encoder with sequence lengths and batch sizes mixed at
# random over many calls, run in one process per runner: Kiln jit, Kiln graph, ONNX Runtime.
# Run bench/setup.sh first. Options: bench/dynamic.sh --help.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec /usr/bin/python3 bench/harness/dynamic.py "$@"
