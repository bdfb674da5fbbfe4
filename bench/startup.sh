#!/usr/bin/env bash
# Startup comparison: process start to first result for `kiln run model.kiln` versus ONNX Runtime
# creating a session (from the .onnx, and from its own optimised model) and running once.
# Run bench/setup.sh first. Options: bench/startup.sh --help.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec /usr/bin/python3 bench/harness/startup.py "$@"
