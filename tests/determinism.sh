#!/bin/bash
# The same model and options give byte-identical output whatever compiler built tosac
# (docs/ONNX.md, "Deterministic output"): compiles every model of MODELS_DIR (the zoo,
# <build>/tests/zoo/models) to FP and to INT8, and the quantized test models of tests/onnx, with
# both binaries, and requires identical .tosa files, sidecars (.quant.json) and --emit-qdq models.
# C leaves the evaluation order of a call's arguments unspecified, so two graph-building calls as
# arguments of one call name and order tensors differently under GCC and Clang: this is the check.
# usage: tests/determinism.sh GCC_TOSAC CLANG_TOSAC WORK_DIR MODELS_DIR
set -u
if [ $# -ne 4 ]; then
    echo "usage: $0 GCC_TOSAC CLANG_TOSAC WORK_DIR MODELS_DIR" >&2
    exit 2
fi
A=$1 B=$2 WORK=$3 MODELS=$4
PY=/usr/bin/python3
SRC=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$WORK" && mkdir -p "$WORK/a" "$WORK/b" || exit 1
fails=0 jobs=0

# compile OUT_NAME MODEL ARGS...: with both binaries, into $WORK/a and $WORK/b (@DIR@ in ARGS
# stands for that folder)
compile() {
    local out=$1 model=$2
    shift 2
    jobs=$((jobs + 1))
    local ra rb
    "$A" compile "$model" -o "$WORK/a/$out.tosa" "${@//@DIR@/$WORK/a}" > /dev/null 2> "$WORK/a/$out.err"
    ra=$?
    "$B" compile "$model" -o "$WORK/b/$out.tosa" "${@//@DIR@/$WORK/b}" > /dev/null 2> "$WORK/b/$out.err"
    rb=$?
    if [ $ra -ne 0 ] || [ $rb -ne 0 ]; then
        echo "FAIL $out: compile exit $ra / $rb"
        cat "$WORK/a/$out.err" "$WORK/b/$out.err"
        fails=$((fails + 1))
    fi
}

shopt -s nullglob
models=("$MODELS"/*.onnx)
if [ ${#models[@]} -eq 0 ]; then
    echo "FAIL no model in $MODELS (run the setup.zoo test first)"
    exit 1
fi
for f in "${models[@]}"; do
    n=$(basename "$f" .onnx)
    compile "$n.fp" "$f"
    calib=(--calibrate random --calib-samples 2)
    [ -f "$MODELS/$n.input.npy" ] && calib=(--calibrate "$MODELS/$n.input.npy")
    compile "$n.int8" "$f" --target TOSA-1.0+INT "${calib[@]}"
done

# tests/onnx's quantized models: calibrated ones and QDQ models (each generator in its own folder)
for g in make_quant_cnn make_quant_transformer make_quant_resize make_qdq_model make_qdq_cnn; do
    mkdir -p "$WORK/m/$g" && (cd "$WORK/m/$g" && $PY "$SRC/tests/onnx/$g.py" . > /dev/null) ||
        { echo "FAIL generating tests/onnx/$g.py's models"; exit 1; }
done
M=$WORK/m
compile qcnn "$M/make_quant_cnn/qcnn.onnx" --target TOSA-1.0+INT --calibrate "$M/make_quant_cnn/calib"
compile qcnn_uint8 "$M/make_quant_cnn/qcnn.onnx" --target TOSA-1.0+INT --calibrate "$M/make_quant_cnn/calib" --io uint8
compile qcnn_a16w8 "$M/make_quant_cnn/qcnn.onnx" --target TOSA-1.0+INT+int16 --a16w8 --calibrate "$M/make_quant_cnn/calib"
compile qtf_qdq "$M/make_quant_transformer/qtf.onnx" --target TOSA-1.0+INT --calibrate "$M/make_quant_transformer/calib_tf" \
    --emit-qdq @DIR@/qtf_qdq.onnx
compile qtf "$M/make_quant_transformer/qtf.onnx" --target TOSA-1.0+INT --calibrate "$M/make_quant_transformer/calib_tf"
compile qresize "$M/make_quant_resize/qresize.onnx" --target TOSA-1.0+INT --calibrate "$M/make_quant_resize/calib"
compile qdq "$M/make_qdq_model/qdq.onnx" --target TOSA-1.0+INT
compile qdq_cnn "$M/make_qdq_cnn/qdq_cnn.onnx" --target TOSA-1.0+INT
# the Ethos-U lowering (every TOSAC_LOWER_* choice) on the zoo's CNNs, and partitioned artifacts
for n in squeezenet1_1 mobilenet_v2 shufflenet_v2_x1_0 efficientnet_b0 ds_cnn; do
    [ -f "$MODELS/$n.onnx" ] && compile "$n.u55" "$MODELS/$n.onnx" --target ethos-u55-128 --calibrate random --calib-samples 2
done
compile_dir() { # NAME MODEL ARGS...: an artifact directory, compared whole
    local out=$1 model=$2
    shift 2
    jobs=$((jobs + 1))
    if ! "$A" compile "$model" -o "$WORK/a/$out" "$@" > /dev/null 2> "$WORK/a/$out.err" ||
       ! "$B" compile "$model" -o "$WORK/b/$out" "$@" > /dev/null 2> "$WORK/b/$out.err"; then
        echo "FAIL $out: compile"; cat "$WORK/a/$out.err" "$WORK/b/$out.err"; fails=$((fails + 1))
    elif ! diff -r "$WORK/a/$out" "$WORK/b/$out" > /dev/null; then
        echo "FAIL $out: the artifact differs between the two builds"; fails=$((fails + 1))
    fi
}
compile_dir qresize_u55 "$M/make_quant_resize/qresize.onnx" --target ethos-u55-128 --calibrate "$M/make_quant_resize/calib"
compile_dir qtf_u55 "$M/make_quant_transformer/qtf.onnx" --target ethos-u55-128 --calibrate "$M/make_quant_transformer/calib_tf"

files=0
for fa in "$WORK"/a/*.tosa "$WORK"/a/*.json "$WORK"/a/*.onnx; do
    fb=$WORK/b/${fa#"$WORK"/a/}
    files=$((files + 1))
    if [ ! -f "$fb" ]; then
        echo "FAIL ${fa#"$WORK"/a/}: written by $A only"
        fails=$((fails + 1))
    elif ! cmp -s "$fa" "$fb"; then
        echo "FAIL ${fa#"$WORK"/a/}: differs between the two builds"
        fails=$((fails + 1))
    fi
done
for fb in "$WORK"/b/*.tosa "$WORK"/b/*.json "$WORK"/b/*.onnx; do
    [ -f "$WORK/a/${fb#"$WORK"/b/}" ] || { echo "FAIL ${fb#"$WORK"/b/}: written by $B only"; fails=$((fails + 1)); }
done
echo "determinism: $jobs compiles, $files files compared, $fails failed"
[ $fails -eq 0 ]
