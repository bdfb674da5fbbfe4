#!/usr/bin/env bash
# Installs what bench/run.sh needs, skipping whatever is already in place (safe to re-run):
# ONNX Runtime (npm onnxruntime-node 1.30.x, from bench/peers/package-lock.json), OpenBLAS for the
# PyTorch peer, matplotlib for the chart, and the FMA peak probe. See bench/README.md.
# `setup.sh onnxruntime` installs ONNX Runtime only (what `make zoo` needs for its references);
# `setup.sh llama` installs llama.cpp only (npm node-llama-cpp 3.21.1's prebuilt CPU build, from
# bench/peers/llama/package-lock.json: the reference for GGUF models).
set -euo pipefail

BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PEERS="$BENCH/peers"

# Runs a command as root: directly when we are root, else through sudo.
as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

is_installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

install_debian_packages() {
  local missing=()
  for package in "$@"; do
    is_installed "$package" || missing+=("$package")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: apt-get install ${missing[*]}"
    as_root apt-get install -y --no-install-recommends "${missing[@]}"
  fi
}

# ONNX Runtime: --ignore-scripts keeps its install script from downloading GPU parts (NOTES.md).
install_onnxruntime() {
  local installed
  installed="$(node -p "require('$PEERS/node_modules/onnxruntime-node/package.json').version" 2>/dev/null || true)"
  if [[ "$installed" != 1.30.* ]]; then
    echo "setup: npm ci onnxruntime-node (bench/peers)"
    (cd "$PEERS" && npm ci --ignore-scripts --no-audit --no-fund)
  fi
}

# llama.cpp: --omit=optional keeps npm from pulling the CUDA and Vulkan builds (730 MB);
# --ignore-scripts from building llama.cpp from source. The prebuilt CPU build runs offline.
install_llama() {
  local installed
  installed="$(node -p "require('$PEERS/llama/node_modules/node-llama-cpp/package.json').version" 2>/dev/null || true)"
  if [[ "$installed" != 3.21.1 ]]; then
    echo "setup: npm ci node-llama-cpp (bench/peers/llama)"
    (cd "$PEERS/llama" && npm ci --ignore-scripts --omit=optional --no-audit --no-fund)
  fi
}

# Debian's default libblas.so.3 may be the reference BLAS (~5 GFLOP/s), which would make PyTorch's
# matrix products 30x slower than it deserves. The OpenMP build of OpenBLAS is unpacked into
# bench/peers/openblas and put first on LD_LIBRARY_PATH for the PyTorch runs only, leaving the
# system's BLAS alternatives untouched.
install_openblas() {
  local dir="$PEERS/openblas"
  [ -e "$dir/lib/libblas.so.3" ] && return
  echo "setup: unpacking libopenblas0-openmp into bench/peers/openblas"
  local download
  download="$(mktemp -d)"
  chmod 755 "$download"  # apt-get download runs as the _apt user
  (cd "$download" && apt-get download libopenblas0-openmp)
  dpkg-deb -x "$download"/libopenblas0-openmp_*.deb "$download/root"
  mkdir -p "$dir"
  rm -rf "$dir/lib"
  cp -a "$download/root/usr/lib/x86_64-linux-gnu/openblas-openmp" "$dir/lib"
  rm -rf "$download"
}

build_fma_probe() {
  local probe="$PEERS/fma_probe"
  if [ ! -x "$probe" ] || [ "$BENCH/fma_probe.cpp" -nt "$probe" ]; then
    echo "setup: g++ bench/fma_probe.cpp"
    g++ -O2 -march=native -fopenmp -ffp-contract=fast "$BENCH/fma_probe.cpp" -o "$probe"
  fi
}

if [ "${1:-}" = onnxruntime ]; then
  install_onnxruntime
  echo "setup: ready (onnxruntime-node $(node -p "require('$PEERS/node_modules/onnxruntime-node/package.json').version"))"
  exit 0
fi

if [ "${1:-}" = llama ]; then
  install_llama
  echo "setup: ready (node-llama-cpp $(node -p "require('$PEERS/llama/node_modules/node-llama-cpp/package.json').version"))"
  exit 0
fi

# libgfortran5 is OpenBLAS's one run-time dependency that a Debian machine may lack.
install_debian_packages python3-matplotlib libgfortran5 g++
install_onnxruntime
install_openblas
build_fma_probe
echo "setup: ready (onnxruntime-node $(node -p "require('$PEERS/node_modules/onnxruntime-node/package.json').version"))"
