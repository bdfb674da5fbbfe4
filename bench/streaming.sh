#!/usr/bin/env bash
# Per-call cost of a stateful model called in a loop (an LSTM over 512-sample chunks, its state
# carried from call to call), Kiln (kiln.Stream, and InferenceSession.run fed by hand) against ONNX
# Runtime (onnxruntime-node), 1 intra-op thread each: per-call median and p99, and the cost beyond
# the kernels (a null twin of the model). Needs make build and bench/setup.sh's onnxruntime-node;
# exports the model with PyTorch on first use.
#   bench/streaming.sh [--calls 10000] [--rounds 3]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec /usr/bin/python3 bench/harness/streaming.py "$@"
