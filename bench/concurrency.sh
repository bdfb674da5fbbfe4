#!/usr/bin/env bash
# Throughput of one session with 1, 2 and 4 concurrent callers (1 intra-op thread each), Kiln (its
# Python package) against ONNX Runtime (onnxruntime-node), on zoo models. Needs make build, make zoo
# and bench/setup.sh's onnxruntime-node.
#   bench/concurrency.sh [--cases fp_landmark,fp_detect] [--callers 1,2,4] [--rounds 3] [--seconds 2]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec /usr/bin/python3 bench/harness/concurrency.py "$@"
