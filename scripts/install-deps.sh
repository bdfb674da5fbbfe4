#!/usr/bin/env bash
# Installs every Debian package Kiln needs to build, test and run its demo.
# Idempotent: only missing packages are installed. Runs as root (or with sudo) on Debian 12.
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config
  libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
  libdnnl-dev libflatbuffers-dev flatbuffers-compiler libsodium-dev libssl-dev
  libre2-dev nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev
  python3-onnx python3-numpy python3-torch python3-torchvision
  pybind11-dev python3-dev python3-pytest python3-distributed
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get install -y --no-install-recommends "${missing[@]}" \
  || { $SUDO apt-get update && $SUDO apt-get install -y --no-install-recommends "${missing[@]}"; }
