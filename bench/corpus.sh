#!/usr/bin/env bash
# Times the perf corpus (bench/models/corpus.py's exports: classification at batch 1 and 4, vision
# transformers, segmentation, detection, optical flow, video, recurrent, transformer encoder/decoder) in
# Kiln and ONNX Runtime with the same inputs and 2 threads, and prints kiln/ort per case and the geometric
# mean, as bench/zoo.sh does for the zoo. Needs build/kiln, bench/setup.sh's onnxruntime-node and the
# exports (/usr/bin/python3 bench/models/corpus.py).
#   bench/corpus.sh [--cases resnet18,resnet18_b4] [--rounds 3] [--runs N] [--budget-ms 1000] [--kiln PATH]
# Options: bench/corpus.sh --help; how it measures: bench/README.md, "The perf corpus".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec /usr/bin/python3 bench/harness/corpus.py "$@"
