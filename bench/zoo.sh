#!/usr/bin/env bash
# Times every zoo model (tests/zoo/cases.txt, fetched by `make zoo`) in Kiln and ONNX Runtime with the
# same inputs and 2 threads, and prints kiln/ort per model and the geometric mean (issue 18's goal:
# every model <= 1.0x, geometric mean <= 0.8x). Needs build/kiln and bench/setup.sh's onnxruntime-node.
#   bench/zoo.sh [--cases fp_eye,oww_alexa] [--rounds 3] [--runs N] [--kiln PATH] [--out FILE.json]
# Options: bench/zoo.sh --help; how it measures: bench/README.md, "The zoo".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec /usr/bin/python3 bench/harness/zoo.py "$@"
