#!/usr/bin/env bash
# Installs the Debian packages Kiln needs. Idempotent: only missing packages are installed. Runs as
# root (or with sudo) on Debian 12.
#   scripts/install-deps.sh        everything: build, test (the suite, Python package, parity exports, fuzz replay)
#   scripts/install-deps.sh tool   only what the library and the kiln tool need (make demo)
#   scripts/install-deps.sh fuzz   the library's needs and clang with libFuzzer (make fuzz)
set -euo pipefail

TOOL_PACKAGES=(
  build-essential cmake pkg-config ccache
  libonnx-dev libprotobuf-dev protobuf-compiler
  libdnnl-dev libflatbuffers-dev flatbuffers-compiler libsodium-dev libssl-dev
  libre2-dev nlohmann-json3-dev libcli11-dev
)
TEST_PACKAGES=(
  libonnx-testdata libgtest-dev libgmock-dev libbenchmark-dev
  python3-onnx python3-numpy python3-torch python3-torchvision
  pybind11-dev python3-dev python3-pytest python3-distributed
)
FUZZ_PACKAGES=(clang-14 libclang-rt-14-dev libomp-14-dev)

case "${1:-all}" in
  tool) PACKAGES=("${TOOL_PACKAGES[@]}") ;;
  fuzz) PACKAGES=("${TOOL_PACKAGES[@]}" "${FUZZ_PACKAGES[@]}") ;;
  all) PACKAGES=("${TOOL_PACKAGES[@]}" "${TEST_PACKAGES[@]}" "${FUZZ_PACKAGES[@]}") ;;
  *) echo "usage: $0 [tool|fuzz|all]" >&2; exit 2 ;;
esac

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
