#!/bin/bash
# Quantized programs run bit-exactly: `tosac run` must give the same integer outputs as
# tools/quant/spec_run.py, a numpy interpreter built on tools/conformance/refimpl.py (the TOSA 1.0
# spec pseudocode, independent of tosac's kernels), for the small CNN (int8 and uint8 I/O), the
# transformer block (TABLEs, REDUCE_MAX, activation x activation MATMUL with zero points) and the
# upsampling model (RESIZE nearest and bilinear), each on 2 held-out inputs quantized here with
# the sidecar's numbers. (The zoo's CNNs and ViT: zoo.int8_spec.)
. "$TOSAC_SOURCE_DIR/tests/harness/script_lib.sh" "$@"
SPEC="$PY $TOSAC_SOURCE_DIR/tools/quant/spec_run.py --tosac $TOSAC"
for gen in make_quant_cnn make_quant_transformer make_quant_resize; do
    mkdir -p $gen && (cd $gen && $PY "$TOSAC_SOURCE_DIR/tests/onnx/$gen.py" . > /dev/null) || exit 1
done
spec_check() { # DIR MODEL.onnx CALIB HELD_PREFIX IO
    local dir=$1 onnx=$2 calib=$3 held=$4 io=$5 k
    "$TOSAC" compile $dir/$onnx -o $dir/$io.tosa --target TOSA-1.0+INT --calibrate $dir/$calib --io $io > /dev/null || return 1
    for k in 00 01; do
        $PY "$TOSAC_SOURCE_DIR/tools/quant/quantize_npy.py" $dir/$io.tosa.quant.json $dir/${held}_$k.npy $dir/${io}_in_$k.npy > /dev/null || return 1
        $SPEC $dir/$io.tosa x=$dir/${io}_in_$k.npy || return 1
    done
}
check "small CNN, int8 I/O: bit-exact with the spec" 'spec_check make_quant_cnn qcnn.onnx calib held int8'
check "small CNN, uint8 I/O: bit-exact with the spec" 'spec_check make_quant_cnn qcnn.onnx calib held uint8'
check "transformer block: bit-exact with the spec" 'spec_check make_quant_transformer qtf.onnx calib_tf tf_held int8'
check "RESIZE nearest/bilinear: bit-exact with the spec" 'spec_check make_quant_resize qresize.onnx calib held int8'

finish
