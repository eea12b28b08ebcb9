#!/usr/bin/env bash
# Prepares the model zoo for CTest `zoo` (tests/zoo/CMakeLists.txt) in DIR:
#   1. the small committed models of tests/zoo/models (NAME.onnx, NAME.input.npy);
#   2. every other model of tools/zoo/make_zoo.py, generated with Debian's torch/torchvision;
#   3. onnxruntime-node's golden outputs in DIR/NAME.ort/ (tools/zoo/ort_run.js).
# Fails (exit 1), never skips, when python3-torch, node or onnxruntime-node is missing:
# scripts/install-deps.sh installs them.
#
# usage: tests/zoo/setup_zoo.sh PYTHON NODE DIR
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 PYTHON NODE DIR" >&2
  exit 2
fi
python=$1 node=$2 dir=$3
src=$(cd "$(dirname "$0")/../.." && pwd)
committed=$src/tests/zoo/models

if ! command -v "$node" >/dev/null 2>&1; then
  echo "setup_zoo: node ($node) not found: install nodejs and npm (scripts/install-deps.sh)" >&2
  exit 1
fi
rm -rf "$dir"
mkdir -p "$dir"

skip=()
for f in "$committed"/*.onnx; do
  name=$(basename "$f" .onnx)
  cp "$f" "$committed/$name.input.npy" "$dir/"
  skip+=("$name")
done
t0=$(date +%s)
"$python" "$src/tools/zoo/make_zoo.py" "$dir" --skip "${skip[@]}"
t1=$(date +%s)
for f in "$dir"/*.onnx; do
  name=$(basename "$f" .onnx)
  "$node" "$src/tools/zoo/ort_run.js" "$f" "$dir/$name.input.npy" "$dir/$name.ort" >/dev/null
done
t2=$(date +%s)
echo "setup_zoo: models generated in $((t1 - t0)) s, onnxruntime goldens in $((t2 - t1)) s"
