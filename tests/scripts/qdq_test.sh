#!/bin/bash
# QDQ models (QuantizeLinear/DequantizeLinear as onnxruntime's quantization tool writes them) must
# agree with onnxruntime-node running the same model with graph optimisations off (the literal Q/DQ
# semantics) within one output quantization step on >= 99% of the elements:
# - on the FP target tosac simulates the quantization in floating point;
# - on TOSA-1.0+INT, without calibration data, the Q/DQ pairs are folded into an integer program
#   with the model's own scales and zero points (int8 and uint8 activations, per-channel and
#   per-tensor int8 weights, int32 biases; src/quant/qdq.c), which must also validate for PRO-INT
#   alone, hold no FP32 tensor and run bit-exactly against the numpy TOSA spec (spec_run.py);
# - a value no Q/DQ covers is a clear error without calibration data and calibrated with it.
. "$TOSAC_SOURCE_DIR/tests/harness/script_lib.sh" "$@"
$PY "$TOSAC_SOURCE_DIR/tests/onnx/make_qdq_model.py" . || exit 1

"$TOSAC" compile qdq.onnx -o qdq.tosa > /dev/null 2> err.txt
check "compile the QDQ model for TOSA-1.0+FP" '[ $? -eq 0 ]'
"$TOSAC" validate qdq.tosa --profile FP -q
check "validates under the FP profile" '[ $? -eq 0 ]'
"$TOSAC" run qdq.tosa -i x=qdq_in.npy -o tosac_out > /dev/null
node "$TOSAC_SOURCE_DIR/tools/zoo/ort_run.js" qdq.onnx qdq_in.npy ort_out > /dev/null
check "onnxruntime-node ran the model" '[ -f ort_out/y.npy ]'
check "within one quantization step (0.04) on >= 99% of the outputs" '$PY -c "
import numpy as np, sys
a, b = np.load(\"tosac_out/y.npy\"), np.load(\"ort_out/y.npy\")
far = np.abs(a - b) > 0.04 * 1.001
print(\"  elements off by more than one step:\", int(far.sum()), \"of\", a.size, \"; identical:\", int((a == b).sum()))
sys.exit(0 if a.shape == b.shape and far.mean() <= 0.01 else 1)"'

# within_one OUT_DIR ORT_DIR STEP: the outputs y.npy agree within one step on >= 99% of elements
within_one() {
    $PY - "$@" <<'PYEOF'
import sys
import numpy as np
a, b, step = np.load(sys.argv[1] + "/y.npy"), np.load(sys.argv[2] + "/y.npy"), float(sys.argv[3])
d = np.abs(a.astype(np.float64) - b) / step
print(f"  {a.size} outputs: identical {np.mean(d < 1e-3):.4f}, within one step {np.mean(d <= 1.001):.4f}, max {d.max():.3f} steps")
sys.exit(0 if a.shape == b.shape and np.mean(d <= 1.001) >= 0.99 else 1)
PYEOF
}
"$TOSAC" compile qdq.onnx -o qdq_int.tosa --target TOSA-1.0+INT > /dev/null 2> err_int.txt
check "the QDQ model compiles for TOSA-1.0+INT without calibration data" '[ $? -eq 0 ]'
check "it validates for PRO-INT alone and holds no FP32 tensor" '"$TOSAC" validate --profile INT -q qdq_int.tosa && "$TOSAC" inspect --json qdq_int.tosa > qi.json && ! grep -q "\"FP32\"" qi.json'
check "the model's input q-params are the program's (scale 0.02, zero point 3)" '$PY -c "
import json, sys
e = json.load(open(\"qdq_int.tosa.quant.json\"))[\"inputs\"][0]
sys.exit(0 if abs(e[\"scale\"] - 0.02) < 1e-7 and e[\"zero_point\"] == 3 else 1)"'
"$TOSAC" run qdq_int.tosa -i x=qdq_in.npy -o int_out > /dev/null
check "INT program within one step (0.04) of onnxruntime on >= 99%" 'within_one int_out ort_out 0.04'

$PY "$TOSAC_SOURCE_DIR/tests/onnx/make_qdq_cnn.py" . || exit 1
"$TOSAC" compile qdq_cnn.onnx -o qdq_cnn.tosa --target TOSA-1.0+INT > /dev/null 2> err_cnn.txt
check "QDQ CNN (uint8/int8 activations, residual Add, MaxPool, GAP, Gemm) compiles for INT" '[ $? -eq 0 ] && "$TOSAC" validate --profile INT -q qdq_cnn.tosa'
step=$($PY -c "import json; print(json.load(open('qdq_cnn.tosa.quant.json'))['outputs'][0]['scale'])")
for k in 00 01 02 03 04 05 06 07; do
    "$TOSAC" run qdq_cnn.tosa -i x=qdq_cnn_in_$k.npy -o cnn_$k > /dev/null
    node "$TOSAC_SOURCE_DIR/tools/zoo/ort_run.js" qdq_cnn.onnx qdq_cnn_in_$k.npy ort_cnn_$k > /dev/null
done
$PY -c "
import numpy as np, os
os.makedirs('cnn_all', exist_ok=True); os.makedirs('ort_cnn_all', exist_ok=True)
np.save('cnn_all/y.npy', np.concatenate([np.load(f'cnn_{k:02d}/y.npy') for k in range(8)]))
np.save('ort_cnn_all/y.npy', np.concatenate([np.load(f'ort_cnn_{k:02d}/y.npy') for k in range(8)]))"
check "QDQ CNN INT program within one step of onnxruntime on >= 99% (8 inputs)" 'within_one cnn_all ort_cnn_all $step'
$PY "$TOSAC_SOURCE_DIR/tools/quant/quantize_npy.py" qdq_cnn.tosa.quant.json qdq_cnn_in_00.npy cnn_q.npy > /dev/null
check "QDQ CNN INT program bit-exact with the numpy TOSA spec" '$PY "$TOSAC_SOURCE_DIR/tools/quant/spec_run.py" --tosac "$TOSAC" qdq_cnn.tosa x=cnn_q.npy'

# a value no Q/DQ covers (the ReLU output between two convs)
$PY - <<'PYEOF'
import onnx
m = onnx.load("qdq.onnx")
g = m.graph
keep = [n for n in g.node if n.name not in ("q_a", "dq_a")]
for n in keep:
    for k, i in enumerate(n.input):
        if i == "r_dq":
            n.input[k] = "r"
del g.node[:]
g.node.extend(keep)
onnx.save(m, "qdq_gap.onnx")
PYEOF
"$TOSAC" compile qdq_gap.onnx -o gap.tosa --target TOSA-1.0+INT 2> err_gap.txt
check "a value without Q/DQ and no calibration: clear error naming the node, no file" '[ $? -eq 1 ] && grep -q "no QuantizeLinear/DequantizeLinear of the model covers it" err_gap.txt && grep -q "ONNX node" err_gap.txt && [ ! -e gap.tosa ]'
"$TOSAC" compile qdq_gap.onnx -o gap.tosa --target TOSA-1.0+INT --calibrate random > /dev/null 2>&1
check "with --calibrate the rest is calibrated" '[ $? -eq 0 ] && "$TOSAC" validate --profile INT -q gap.tosa'

# the quantized codes may only feed DequantizeLinear
$PY - <<'PYEOF'
import onnx
from onnx import helper, TensorProto, numpy_helper
import numpy as np
nodes = [helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"], name="q"),
         helper.make_node("Neg", ["q"], ["y"], name="neg_of_codes")]
g = helper.make_graph(nodes, "bad", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                      [helper.make_tensor_value_info("y", TensorProto.INT8, [4])],
                      [numpy_helper.from_array(np.float32(0.1), "s"), numpy_helper.from_array(np.int8(0), "zp")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.save(m, "codes_misuse.onnx")
PYEOF
"$TOSAC" compile codes_misuse.onnx -o codes_misuse.tosa 2> err2.txt
check "QuantizeLinear output read by another op: clear error, no file" '[ $? -eq 1 ] && grep -q "neg_of_codes.*only DequantizeLinear" err2.txt && [ ! -e codes_misuse.tosa ]'

finish
