#!/usr/bin/env bash
# Installs the Debian 12 packages tosac needs to build and test (only those missing).
set -euo pipefail

PACKAGES=(
  gcc make cmake ninja-build        # build
  clang libclang-rt-14-dev          # second compiler, ASan/UBSan runtimes, libFuzzer
  flatbuffers-compiler              # flatc: independent check of our .tosa bytes
  python3 python3-numpy             # .npy cross-checks, JSON validation in tests
  protobuf-c-compiler libprotobuf-c-dev libonnx-dev   # ONNX reader: protoc-c on onnx.proto
  libonnx-testdata python3-onnx     # ONNX reader tests (models, independent decoding)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]} (run as root or install them)" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
