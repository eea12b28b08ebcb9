#!/bin/bash
# RESIZE in INT8 programs: nearest upsampling moves int8 codes (int8 -> int8 at the input's
# q-params), bilinear gives int32 (weights summing to scale_y_n * scale_x_n) with the zero point
# taken out by an int32 ADD before its consumer's RESCALE. A conv/Resize nearest/conv/Resize
# linear/conv model (tests/onnx/make_quant_resize.py) must validate for PRO-INT alone and stay
# within cosine 0.99 of onnxruntime running the FP model on held-out inputs.
. "$TOSAC_SOURCE_DIR/tests/harness/script_lib.sh" "$@"
$PY "$TOSAC_SOURCE_DIR/tests/onnx/make_quant_resize.py" . || exit 1

"$TOSAC" compile qresize.onnx -o q.tosa --target TOSA-1.0+INT --calibrate calib > /dev/null 2> err.txt
check "compiles to INT8" '[ $? -eq 0 ]'
"$TOSAC" validate --profile INT -q q.tosa
check "validates for PRO-INT alone" '[ $? -eq 0 ]'
"$TOSAC" inspect --json q.tosa > q.json
check "RESIZE nearest int8 -> int8, bilinear int8 -> int32" '$PY - <<PYEOF
import json, sys
b = json.load(open("q.json"))["regions"][0]["blocks"][0]
tt = {t["name"]: t["type"] for t in b["tensors"]}
rs = {o["attributes"]["mode"]: (tt[o["inputs"][0]], tt[o["outputs"][0]]) for o in b["operators"] if o["op"] == "RESIZE"}
print("  ", rs)
sys.exit(0 if rs == {"NEAREST": ("INT8", "INT8"), "BILINEAR": ("INT8", "INT32")} else 1)
PYEOF'
for k in 00 01 02 03; do
    "$TOSAC" run q.tosa -i x=held_$k.npy -o q_$k > /dev/null
    node "$TOSAC_SOURCE_DIR/tools/zoo/ort_run.js" qresize.onnx held_$k.npy ort_$k > /dev/null
done
check "within cosine 0.99 of onnxruntime on held-out inputs" '$PY -c "
import numpy as np, sys
a = np.concatenate([np.load(f\"q_{k:02d}/y.npy\").ravel() for k in range(4)]).astype(np.float64)
r = np.concatenate([np.load(f\"ort_{k:02d}/y.npy\").ravel() for k in range(4)]).astype(np.float64)
c = a @ r / np.linalg.norm(a) / np.linalg.norm(r)
print(f\"  cosine {c:.5f}, rel L2 {np.linalg.norm(a - r) / np.linalg.norm(r):.4f}\")
sys.exit(0 if a.shape == r.shape and c >= 0.99 else 1)"'

finish
