#!/usr/bin/env bash
# Installs the Debian 12 packages tosac needs to build and test (only those missing), then the
# npm packages of package.json (onnxruntime-node, the model zoo's reference) when node_modules
# lacks the declared version. Idempotent: a second run installs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  gcc g++ make cmake ninja-build pkg-config   # build; g++ and pkg-config for the installed-use test
  clang libclang-rt-14-dev          # second compiler, ASan/UBSan runtimes, libFuzzer
  flatbuffers-compiler              # flatc: independent check of our .tosa bytes
  python3 python3-numpy             # .npy cross-checks, JSON validation in tests
  protobuf-c-compiler libprotobuf-c-dev libonnx-dev   # ONNX reader: protoc-c on onnx.proto
  libonnx-testdata python3-onnx     # ONNX reader tests (models, independent decoding)
  python3-torch python3-torchvision python3-torchaudio # model zoos: real networks exported to ONNX (tools/zoo)
  python3-dev python3-setuptools python3-venv python3-pytest   # the Python package and its tests
  gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm    # Cortex-M55 builds run in QEMU (tests/mcu)
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# node and npm run onnxruntime-node for the zoo's golden outputs; a node from elsewhere (with its
# own npm) is used as it is, Debian's nodejs/npm are installed otherwise.
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)

if [ ${#missing[@]} -ne 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: missing packages: ${missing[*]} (run as root or install them)" >&2
    exit 1
  fi
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm packages (package.json): --ignore-scripts because onnxruntime-node's install script would
# download GPU binaries; its CPU binaries are in the package itself. No lock file is written.
want=$(node -p "require('./package.json').dependencies['onnxruntime-node']")
have=$(node -p "try { require('./node_modules/onnxruntime-node/package.json').version } catch (e) { '' }")
if [ "$want" != "$have" ]; then
  echo "install-deps: npm install (onnxruntime-node $want)"
  npm install --ignore-scripts --no-package-lock --no-audit --no-fund >/dev/null
fi
