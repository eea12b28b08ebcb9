#!/bin/bash
# QDQ versions of zoo models (tools/quant/make_qdq.py, ranges from the model's own input) compiled
# for TOSA-1.0+INT without calibration and for TOSA-1.0+FP, each run by tosac and compared with
# onnxruntime-node running the QDQ model (optimisations off): the fraction of output elements
# identical and within one output step (the scale of the output's DequantizeLinear), the largest
# difference in steps, the cosine, and the INT8 compile time.
#
#   tools/quant/eval_qdq.sh TOSAC ZOO_DIR WORK_DIR MODEL...
# (ZOO_DIR holds MODEL.onnx and MODEL.input.npy, as tools/zoo/make_zoo.py writes them)
set -u
T=$(realpath "$1") ZOO=$(realpath "$2") WORK=$3
shift 3
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
PY=/usr/bin/python3
mkdir -p "$WORK" && cd "$WORK" || exit 1
for mdl in "$@"; do
    $PY "$ROOT/tools/quant/make_qdq.py" "$ZOO/$mdl.onnx" "$ZOO/$mdl.input.npy" "${mdl}_qdq.onnx" || continue
    rm -f "$mdl.tosa"
    s=$(date +%s.%N)
    "$T" compile "${mdl}_qdq.onnx" -o "$mdl.tosa" --target TOSA-1.0+INT || continue
    e=$(date +%s.%N)
    "$T" validate "$mdl.tosa" --profile INT -q || echo "$mdl: INVALID for PRO-INT"
    "$T" compile "${mdl}_qdq.onnx" -o "${mdl}_fp.tosa" || continue
    in=$($PY -c "import onnx; print(onnx.load('$ZOO/$mdl.onnx').graph.input[0].name)")
    "$T" run "$mdl.tosa" -i "$in=$ZOO/$mdl.input.npy" -o "${mdl}_int" > /dev/null
    "$T" run "${mdl}_fp.tosa" -i "$in=$ZOO/$mdl.input.npy" -o "${mdl}_fp" > /dev/null
    node "$ROOT/tools/zoo/ort_run.js" "${mdl}_qdq.onnx" "$ZOO/$mdl.input.npy" "${mdl}_ort" > /dev/null 2>&1
    $PY - "$mdl" "$(echo "$e - $s" | bc)" <<'PYEOF'
import sys
import numpy as np, onnx
from onnx import numpy_helper
mdl, secs = sys.argv[1], float(sys.argv[2])
m = onnx.load(f"{mdl}_qdq.onnx")
init = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
prod = {n.output[0]: n for n in m.graph.node}
o = m.graph.output[0].name
dq = prod[o]
while dq.op_type != "DequantizeLinear":  # Flatten keeps its input's codes
    dq = prod[dq.input[0]]
step = float(init[dq.input[1]])
f = o.replace("/", "_")
b = np.load(f"{mdl}_ort/{f}.npy").ravel().astype(np.float64)
for kind in ("int", "fp"):
    a = np.load(f"{mdl}_{kind}/{f}.npy").ravel().astype(np.float64)
    d = np.abs(a - b) / step
    cos = (a * b).sum() / np.linalg.norm(a) / np.linalg.norm(b)
    print(f"{mdl:20s} {kind.upper():3s} identical {np.mean(a == b):.3f}  within one step {np.mean(d <= 1.001):.3f}  "
          f"max {d.max():4.1f} steps  cosine {cos:.4f}" + (f"  INT8 compile {secs:.2f} s" if kind == "int" else ""))
PYEOF
done
