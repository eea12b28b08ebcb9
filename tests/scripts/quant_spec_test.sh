#!/bin/bash
# Quantized programs run bit-exactly: `tosac run` must give the same integer outputs as
# tools/quant/spec_run.py, a numpy interpreter built on tools/conformance/refimpl.py (the TOSA 1.0
# spec pseudocode, independent of tosac's kernels), for the small CNN (int8 and uint8 I/O), the
# transformer block (TABLEs, REDUCE_MAX, activation x activation MATMUL with zero points) and the
# upsampling model (RESIZE nearest and bilinear), each on 2 held-out inputs quantized here with
# the sidecar's numbers. (The zoo's CNNs and ViT: zoo.int8_spec.)
set -u
TOSAC=$1
WORK=$2
PY=/usr/bin/python3
SPEC="$PY $TOSAC_SOURCE_DIR/tools/quant/spec_run.py --tosac $TOSAC"
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi; }
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
# quantize.py SIDECAR IN.npy OUT.npy: the sidecar's first input mapping, applied in numpy
cat > quantize.py <<'PYEOF'
import json, sys
import numpy as np
e = json.load(open(sys.argv[1]))["inputs"][0]
lo, hi, t = (0, 255, np.uint8) if e["dtype"] == "uint8" else (-128, 127, np.int8)
x = np.load(sys.argv[2]).astype(np.float64)
np.save(sys.argv[3], np.clip(np.rint(x / e["scale"]) + e["zero_point"], lo, hi).astype(t))
PYEOF
for gen in make_quant_cnn make_quant_transformer make_quant_resize; do
    mkdir -p $gen && (cd $gen && $PY "$TOSAC_SOURCE_DIR/tests/onnx/$gen.py" . > /dev/null) || exit 1
done
spec_check() { # DIR MODEL.onnx CALIB HELD_PREFIX IO
    local dir=$1 onnx=$2 calib=$3 held=$4 io=$5 k
    "$TOSAC" compile $dir/$onnx -o $dir/$io.tosa --target TOSA-1.0+INT --calibrate $dir/$calib --io $io > /dev/null || return 1
    for k in 00 01; do
        $PY quantize.py $dir/$io.tosa.quant.json $dir/${held}_$k.npy $dir/${io}_in_$k.npy || return 1
        $SPEC $dir/$io.tosa x=$dir/${io}_in_$k.npy || return 1
    done
}
check "small CNN, int8 I/O: bit-exact with the spec" 'spec_check make_quant_cnn qcnn.onnx calib held int8'
check "small CNN, uint8 I/O: bit-exact with the spec" 'spec_check make_quant_cnn qcnn.onnx calib held uint8'
check "transformer block: bit-exact with the spec" 'spec_check make_quant_transformer qtf.onnx calib_tf tf_held int8'
check "RESIZE nearest/bilinear: bit-exact with the spec" 'spec_check make_quant_resize qresize.onnx calib held int8'

echo "$fails failed"
[ $fails -eq 0 ]
