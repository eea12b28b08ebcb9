#!/bin/bash
# QDQ models (QuantizeLinear/DequantizeLinear as onnxruntime's quantization tool writes them) on
# the FP target: tosac simulates the quantization in floating point and must agree with
# onnxruntime-node running the same model with graph optimisations off (the literal Q/DQ
# semantics) within one output quantization step on >= 99% of the elements.
set -u
TOSAC=$1
WORK=$2
PY=/usr/bin/python3
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi; }
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
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

echo "$fails failed"
[ $fails -eq 0 ]
