#!/bin/bash
# Test programs of the emit-c tests (emit_host_test.sh, emit_qemu_test.sh): the four MLPerf Tiny
# zoo models and the small CNN example quantized to INT8 (4 seeded random calibration inputs, the
# target lowering of docs/QUANT.md: global pools as AVG_POOL2D, FC as CONV2D, no int32 tensor of a
# whole feature map), their zoo inputs quantized with the sidecar (tools/quant/quantize_npy.py), the
# expected outputs from `tosac run` on the host (the runtime's own program: the program copied
# without its sidecar, so the outputs are the int8 codes), and the C of `tosac emit-c` for each
# (WORK/NAME/c: portable kernels, WORK/NAME/c_mve: --isa mve), in WORK/NAME/.
# usage: emit_setup.sh TOSAC MODELS_DIR WORK
set -u
TOSAC=$1 MODELS=$2 WORK=$3
SRC=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
fails=0
for m in ds_cnn mobilenet_v1_025 resnet8 autoencoder small_cnn; do
    onnx=$MODELS/$m.onnx npy=$MODELS/$m.input.npy
    if [ "$m" = small_cnn ]; then onnx=$SRC/examples/small_cnn.onnx npy=$SRC/examples/small_cnn_input.npy; fi
    d=$WORK/$m
    mkdir -p "$d/plain" "$d/expect"
    if ! "$TOSAC" compile "$onnx" -o "$d/$m.tosa" --target TOSA-1.0+INT --lowering all --calibrate random --calib-samples 4 >"$d/compile.log" 2>&1 ||
       ! name=$("$PY" "$SRC/tools/quant/quantize_npy.py" "$d/$m.tosa.quant.json" "$npy" "$d/in0.npy"); then
        echo "FAIL $m: compile"; cat "$d/compile.log"; fails=$((fails + 1)); continue
    fi
    cp "$d/$m.tosa" "$d/plain/$m.tosa"
    if ! "$TOSAC" run "$d/plain/$m.tosa" -i "$name=$d/in0.npy" -o "$d/expect" >/dev/null ||
       ! "$TOSAC" emit-c "$d/$m.tosa" -o "$d/c" --name "$m" >"$d/emit.log" ||
       ! "$TOSAC" emit-c "$d/$m.tosa" -o "$d/c_mve" --name "$m" --isa mve >"$d/emit_mve.log"; then
        echo "FAIL $m: run or emit-c"; fails=$((fails + 1)); continue
    fi
    # expected outputs in the program's output order (NAME_OUTPUT_k_NAME of the header)
    expect=()
    while read -r out; do expect+=("$d/expect/${out//\//_}.npy"); done \
        < <(sed -n "s/^#define ${m}_OUTPUT_[0-9]*_NAME \"\(.*\)\"$/\1/p" "$d/c/$m.h")
    if ! "$PY" "$SRC/tests/mcu/emit_testdata.py" "$d/testdata.c" --in "$d/in0.npy" --expect "${expect[@]}"; then
        echo "FAIL $m: test data"; fails=$((fails + 1)); continue
    fi
    echo "ok   $m: $(sed -n 2p "$d/emit.log")"
done
echo "$fails failed"
[ $fails -eq 0 ]
