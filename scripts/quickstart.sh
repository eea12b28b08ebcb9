#!/usr/bin/env bash
# The main job on the bundled example: build tosac, validate, inspect and run examples/conv_int8.tosa.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build build/release -j "$(nproc)" >/dev/null
set -x
build/release/tosac validate examples/conv_int8.tosa --profile INT --level 8K
build/release/tosac inspect examples/conv_int8.tosa
build/release/tosac run examples/conv_int8.tosa -i input=examples/conv_int8_input.npy --profile
