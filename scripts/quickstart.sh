#!/usr/bin/env bash
# The main job on the bundled examples: build tosac; compile the ONNX CNN examples/small_cnn.onnx to an
# FP program and, calibrated, to an INT8 one with uint8 I/O, validate and run both; validate, inspect
# and run the hand-made examples/conv_int8.tosa.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build build/release -j "$(nproc)" >/dev/null
set -x
build/release/tosac validate examples/conv_int8.tosa --profile INT --level 8K
build/release/tosac inspect examples/conv_int8.tosa
build/release/tosac run examples/conv_int8.tosa -i input=examples/conv_int8_input.npy --profile
out=build/release/example
mkdir -p "$out"
build/release/tosac compile examples/small_cnn.onnx -o "$out/small_cnn.tosa" --report
build/release/tosac run "$out/small_cnn.tosa" -i x=examples/small_cnn_input.npy
build/release/tosac compile examples/small_cnn.onnx -o "$out/small_cnn_int8.tosa" --target TOSA-1.0+INT \
  --calibrate random --io uint8 --report
build/release/tosac validate "$out/small_cnn_int8.tosa" --profile INT
cat "$out/small_cnn_int8.tosa.quant.json"
build/release/tosac run "$out/small_cnn_int8.tosa" -i x=examples/small_cnn_input.npy
