#!/bin/bash
# The int8 weights of a quantized convolution and depthwise convolution equal numpy's symmetric
# per-channel formula, computed here: scale = max|w| / 127 of the output channel, code = w / scale
# rounded half to even (np.rint) and clamped to +-127. The rows cover the vector loops and their
# tails (19 input channels; depthwise rows of 6 channels), values on ties, the channel's extremes,
# tiny values and -0. The program comes from flatc's JSON of the .tosa (tools/quant/spec_run.py's
# schema).
. "$TOSAC_SOURCE_DIR/tests/harness/script_lib.sh" "$@"
$PY - <<'PYEOF' || exit 1
import numpy as np, onnx
from onnx import TensorProto, helper, numpy_helper
rng = np.random.default_rng(7)
w1 = rng.normal(0, 0.3, (6, 19, 1, 1)).astype(np.float32)
w1[0, :, 0, 0] = 0.0
w1[0, :8, 0, 0] = [1.27, 0.005, 0.015, -0.025, 0.635, -1.27, 1e-9, -0.0]  # scale 0.01: ties
w1[1, 3, 0, 0] = -5.0  # a negative extreme
w2 = rng.normal(0, 0.5, (6, 1, 3, 3)).astype(np.float32)
w2[2, 0, 1, 1] = 2.54  # scale 0.02 for channel 2, ties beside it
w2[2, 0, 0, :] = [0.01, 0.03, -0.05]
nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["h"]),
         helper.make_node("Conv", ["h", "w2", "b2"], ["y"], group=6, pads=[1, 1, 1, 1])]
inits = [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(np.zeros(6, np.float32), "b1"),
         numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(np.zeros(6, np.float32), "b2")]
g = helper.make_graph(nodes, "w", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 19, 5, 5])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6, 5, 5])], inits)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "w.onnx")
np.save("w1.npy", w1)
np.save("w2.npy", w2)
PYEOF
"$TOSAC" compile w.onnx -o w.tosa --target TOSA-1.0+INT --calibrate random > /dev/null || exit 1
FLATC=$(command -v flatc || echo flatc)
"$FLATC" --json --strict-json --raw-binary --defaults-json -o . "$TOSAC_SOURCE_DIR/schema/tosa.fbs" -- w.tosa || exit 1
$PY - > w_check.txt <<'PYEOF'
import json, numpy as np
g = json.load(open("w.json"))
blk = g["regions"][0]["blocks"][0]
data = {t["name"]: np.array(t["data"], np.uint8).view(np.int8)[:int(np.prod(t["shape"]))].reshape(t["shape"])
        for t in blk["tensors"] if t.get("data") and t.get("type") == "INT8"}  # the data is padded
def ref(w, axis_oc):  # w in TOSA layout, the output channel on axis_oc
    w64 = w.astype(np.float64)
    other = tuple(a for a in range(w.ndim) if a != axis_oc)
    scale = np.abs(w64).max(axis=other, keepdims=True) / 127.0
    return np.clip(np.rint(w64 / scale), -127, 127).astype(np.int8)
want = {"CONV2D": ref(np.load("w1.npy").transpose(0, 2, 3, 1), 0),  # [OC, KH, KW, IC]
        "DEPTHWISE_CONV2D": ref(np.load("w2.npy").transpose(2, 3, 0, 1), 2)}  # [KH, KW, C, M]
for op in blk["operators"]:
    if op["op"] in want:
        got = data.get(op["inputs"][1])
        print(op["op"], got is not None and got.shape == want[op["op"]].shape and bool((got == want[op["op"]]).all()))
PYEOF
check "CONV2D int8 weights equal numpy's formula" 'grep -q "^CONV2D True$" w_check.txt'
check "DEPTHWISE_CONV2D int8 weights equal numpy's formula" 'grep -q "^DEPTHWISE_CONV2D True$" w_check.txt'
finish
