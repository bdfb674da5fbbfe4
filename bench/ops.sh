#!/usr/bin/env bash
# Per-op speed: every op the cpu provider runs (`kiln ops`), as single-node models and small fused
# patterns at shapes real models use (bench/op_shapes.json), timed in Kiln and ONNX Runtime, 1 and 2
# threads; prints each case's kiln/ort and Kiln's implementation, flags those over 1.25x. Needs
# build/kiln and bench/setup.sh's onnxruntime-node.
#   bench/ops.sh [--ops Conv,Relu] [--threads 1,2] [--rounds 2] [--budget-ms 500] [--kiln PATH] [--isa avx2]
#   bench/ops.sh --smoke            # tiny sizes, Kiln only: every op still runs (make test: bench.ops_smoke)
# Options: bench/ops.sh --help; how it measures: bench/README.md, "Per-op speed (bench/ops.sh)".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec /usr/bin/python3 bench/harness/ops.py "$@"
