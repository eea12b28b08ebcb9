#!/usr/bin/env bash
# Prepares the second model zoo for CTest zoo2 / zoo2.int (tests/zoo/CMakeLists.txt) in DIR: every
# model of tools/zoo/make_zoo2.py at torch's default opset and at 17 (NAME.default.onnx,
# NAME.17.onnx, NAME.input.npy), and onnxruntime-node's outputs of each in NAME.<opset>.ort/
# (tools/zoo/ort_run.js). Fails, never skips, without torch/torchvision/torchaudio, node or
# onnxruntime-node (scripts/install-deps.sh installs them).
#
# usage: tests/zoo/setup_zoo2.sh PYTHON NODE DIR
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 PYTHON NODE DIR" >&2
  exit 2
fi
python=$1 node=$2 dir=$3
src=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v "$node" >/dev/null 2>&1; then
  echo "setup_zoo2: node ($node) not found: install nodejs and npm (scripts/install-deps.sh)" >&2
  exit 1
fi
rm -rf "$dir"
mkdir -p "$dir"
t0=$(date +%s)
"$python" "$src/tools/zoo/make_zoo2.py" "$dir"
t1=$(date +%s)
for f in "$dir"/*.onnx; do
  base=$(basename "$f" .onnx)
  "$node" "$src/tools/zoo/ort_run.js" "$f" "$dir/${base%.*}.input.npy" "$dir/$base.ort" >/dev/null
done
t2=$(date +%s)
echo "setup_zoo2: models generated in $((t1 - t0)) s, onnxruntime goldens in $((t2 - t1)) s"
