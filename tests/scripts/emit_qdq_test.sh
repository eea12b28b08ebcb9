#!/bin/bash
# tosac compile --target TOSA-1.0+INT --emit-qdq FILE.onnx: the FP program written back as ONNX with
# QuantizeLinear/DequantizeLinear at tosac's chosen q-params wherever the INT program has int8 values.
# For the small CNN (tests/onnx/make_quant_cnn.py) and the transformer block
# (make_quant_transformer.py) the emitted model must pass onnx.checker, keep the original I/O names,
# shapes and float type, and, run by onnxruntime-node with graph optimizations disabled
# (tools/zoo/ort_run.js) on held-out inputs, agree with the INT program run by `tosac run` (sidecar
# quantization) within one output quantization step on >= 99% of the output elements
# (tools/quant/qdq_agree.py; both are exact, 100% identical, when this was written).
. "$TOSAC_SOURCE_DIR/tests/harness/script_lib.sh" "$@"
AGREE="$PY $TOSAC_SOURCE_DIR/tools/quant/qdq_agree.py --tosac $TOSAC"
$PY "$TOSAC_SOURCE_DIR/tests/onnx/make_quant_cnn.py" . > /dev/null || exit 1
$PY "$TOSAC_SOURCE_DIR/tests/onnx/make_quant_transformer.py" . > /dev/null || exit 1

# model I/O must match the original's (names, shapes, float32) and the checker must accept it
io_check() {
    $PY - "$1" "$2" <<'PYEOF'
import sys, onnx
orig, emitted = onnx.load(sys.argv[1]), onnx.load(sys.argv[2])
onnx.checker.check_model(emitted, full_check=True)
def io(vs):
    return [(v.name, v.type.tensor_type.elem_type, [d.dim_value for d in v.type.tensor_type.shape.dim]) for v in vs]
ok = io(orig.graph.input) == io(emitted.graph.input) and io(orig.graph.output) == io(emitted.graph.output)
ops = {n.op_type for n in emitted.graph.node}
ok = ok and {"QuantizeLinear", "DequantizeLinear"} <= ops
sys.exit(0 if ok else 1)
PYEOF
}

for m in cnn tf; do
    if [ $m = cnn ]; then onnx=qcnn.onnx calib=calib held="held_00.npy held_01.npy held_02.npy held_03.npy"
    else onnx=qtf.onnx calib=calib_tf held="tf_held_00.npy tf_held_01.npy tf_held_02.npy tf_held_03.npy"; fi
    "$TOSAC" compile $onnx -o $m.tosa --target TOSA-1.0+INT --calibrate $calib --emit-qdq $m.qdq.onnx > /dev/null
    check "$m: compile INT8 with --emit-qdq" '[ $? -eq 0 ] && [ -s $m.tosa ] && [ -s $m.qdq.onnx ]'
    check "$m: onnx.checker passes, I/O as in the original" 'io_check $onnx $m.qdq.onnx'
    $AGREE --work agree_$m $m.tosa $m.qdq.onnx $held > agree_$m.txt
    rc=$?
    check "$m: INT program vs QDQ model in onnxruntime: $(cat agree_$m.txt)" '[ $rc -eq 0 ]'
done
"$TOSAC" compile qcnn.onnx -o cnn2.tosa --target TOSA-1.0+INT --calibrate calib > /dev/null
check "--emit-qdq does not change the INT program" 'cmp -s cnn.tosa cnn2.tosa'

# negative cases: a clear error, exit 1, no file left behind
"$TOSAC" compile qcnn.onnx -o fp.tosa --emit-qdq fp.qdq.onnx > /dev/null 2> err_fp.txt
check "--emit-qdq without the INT target is a usage error" '[ $? -eq 1 ] && grep -q "apply to quantized programs" err_fp.txt && [ ! -e fp.qdq.onnx ]'
"$TOSAC" compile qcnn.onnx -o nd.tosa --target TOSA-1.0+INT --calibrate calib --emit-qdq no/such/dir/m.onnx > /dev/null 2> err_nd.txt
check "unwritable --emit-qdq path: error, no .tosa" '[ $? -eq 1 ] && grep -q "m.onnx: .*No such file or directory" err_nd.txt && [ ! -e nd.tosa ] && ! ls no 2> /dev/null'
# ConvTranspose (TRANSPOSE_CONV2D: ONNX weights [I, O, KH, KW], TOSA's out_pad as pads +
# output_padding) must agree as well
$PY - <<'PYEOF'
import numpy as np, onnx
from onnx import TensorProto, helper, numpy_helper
rng = np.random.default_rng(5)
w = numpy_helper.from_array(rng.uniform(-0.5, 0.5, (4, 3, 3, 3)).astype(np.float32), "w")
b = numpy_helper.from_array(rng.uniform(-0.1, 0.1, (3,)).astype(np.float32), "b")
g = helper.make_graph([helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], name="up", strides=[2, 2],
                                       pads=[1, 0, 1, 1], output_padding=[1, 1])], "ct",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 5, 5])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 3, 10, 11])], [w, b])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "ct.onnx")
for k in range(4):
    np.save(f"ct_held_{k}.npy", rng.standard_normal((1, 4, 5, 5)).astype(np.float32))
PYEOF
"$TOSAC" compile ct.onnx -o ct.tosa --target TOSA-1.0+INT --calibrate random --calib-samples 4 --emit-qdq ct.qdq.onnx > /dev/null
check "ConvTranspose: compile with --emit-qdq" '[ $? -eq 0 ] && io_check ct.onnx ct.qdq.onnx'
$AGREE --work agree_ct ct.tosa ct.qdq.onnx ct_held_0.npy ct_held_1.npy ct_held_2.npy ct_held_3.npy > agree_ct.txt
rc=$?
check "ConvTranspose: INT program vs QDQ model: $(cat agree_ct.txt)" '[ $rc -eq 0 ]'

# a model that cannot be quantized leaves no QDQ model behind either
$PY - <<'PYEOF'
import numpy as np, onnx
from onnx import TensorProto, helper, numpy_helper
sc = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "sc")
g = helper.make_graph([helper.make_node("Resize", ["x", "", "sc"], ["y"], name="up", mode="nearest")], "rs",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 4, 4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 8, 8])], [sc])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "rs.onnx")
PYEOF
"$TOSAC" compile rs.onnx -o rs.tosa --target TOSA-1.0+INT --calibrate random --calib-samples 2 --emit-qdq rs.qdq.onnx > /dev/null 2> err_rs.txt
rc=$?
check "quantization error: named operator and node, no .tosa, no QDQ model" '[ $rc -eq 1 ] && grep -q "RESIZE.*up" err_rs.txt && [ ! -e rs.qdq.onnx ] && [ ! -e rs.tosa ]'

finish
