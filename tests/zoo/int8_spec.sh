#!/bin/bash
# zoo.int8_spec: the zoo's CNNs and ViT quantized to INT8, and three of them with --a16w8 (4 seeded
# random calibration inputs:
# this checks the integer execution, not accuracy: tools/quant/eval_ptq.py measures that) must
# validate for PRO-INT alone and run bit-exactly: `tosac run` gives the integer outputs of
# tools/quant/spec_run.py, the numpy interpreter on tools/conformance/refimpl.py (the TOSA 1.0 spec
# pseudocode), on the zoo's input quantized with the sidecar's numbers.
# usage: int8_spec.sh TOSAC PYTHON MODELS_DIR WORK_DIR
set -u
TOSAC=$1 PY=$2 MODELS=$3 WORK=$4
SRC=$(cd "$(dirname "$0")/../.." && pwd)
fails=0
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
# MODEL[:a16w8]: the --a16w8 program (int16 activations, INT48 accumulators, int16 TABLEs)
for spec in resnet18 mobilenet_v2 mobilenet_v3_small efficientnet_b0 squeezenet1_1 shufflenet_v2_x1_0 vit_small \
            ds_cnn mobilenet_v1_025 resnet8 autoencoder \
            resnet18:a16w8 mobilenet_v2:a16w8 vit_small:a16w8; do
    m=${spec%%:*}
    q=$WORK/${spec/:/_}.tosa
    flags=(--target TOSA-1.0+INT) ext=none
    if [ "$spec" != "$m" ]; then flags=(--target TOSA-1.0+INT+int16 --a16w8) ext=int16; fi
    if ! "$TOSAC" compile "$MODELS/$m.onnx" -o "$q" "${flags[@]}" --calibrate random --calib-samples 4 > /dev/null ||
       ! "$TOSAC" validate --profile INT --ext $ext -q "$q"; then
        echo "FAIL $spec: compile/validate"; fails=$((fails + 1)); continue
    fi
    name=$("$PY" "$SRC/tools/quant/quantize_npy.py" "$q.quant.json" "$MODELS/$m.input.npy" "$WORK/$m.in.npy")
    if "$PY" "$SRC/tools/quant/spec_run.py" --tosac "$TOSAC" "$q" "$name=$WORK/$m.in.npy"; then echo "ok   $spec"
    else echo "FAIL $spec: not bit-exact with the spec"; fails=$((fails + 1)); fi
done
echo "$fails failed"
[ $fails -eq 0 ]
