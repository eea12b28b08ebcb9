#!/bin/bash
# The I/O of quantized programs (`tosac compile --io float|int8|uint8`, --preserve-io-quantization):
# - --io uint8 (ExecuTorch's uint8 I/O): the boundary tensors are INT8 in the file, the unsigned
#   meaning is only in the first RESCALE's input_unsigned and the last one's output_unsigned, no
#   other RESCALE carries a flag, the output's int32 accumulator is rescaled to int8 first (TOSA
#   forbids output_unsigned on a 32-bit input), and uint8 images quantized by numpy with the
#   sidecar's scale/zero point give exactly the outputs the int8 program gives on the same data;
# - --target TOSA-1.0+INT+FP with --calibrate: float I/O with the quantize/dequantize inside the
#   program (valid for INT+FP, not for INT alone), equal to the int8 program up to the float
#   rounding of x * (1/s); --preserve-io-quantization keeps INT8 I/O there;
# - every form stays within cosine 0.99 of onnxruntime running the FP model on held-out inputs;
# - wrong data or options: clear errors.
. "$TOSAC_SOURCE_DIR/tests/harness/script_lib.sh" "$@"
$PY "$TOSAC_SOURCE_DIR/tests/onnx/make_quant_cnn.py" . || exit 1
C="--calibrate calib"

"$TOSAC" compile qcnn.onnx -o i8.tosa --target TOSA-1.0+INT $C --io int8 > /dev/null
check "--io int8 compiles" '[ $? -eq 0 ]'
"$TOSAC" compile qcnn.onnx -o u8.tosa --target TOSA-1.0+INT $C --io uint8 > /dev/null
check "--io uint8 compiles" '[ $? -eq 0 ]'
"$TOSAC" validate --profile INT -q u8.tosa
check "the uint8 program validates for PRO-INT alone" '[ $? -eq 0 ]'
"$TOSAC" inspect --json u8.tosa > u8.json
"$TOSAC" inspect u8.tosa > u8.txt
check "uint8 RESCALE flags only at the boundary, every tensor INT8/INT32 (no uint8 type)" '$PY - <<EOF
import json, sys
j = json.load(open("u8.json"))
b = j["regions"][0]["blocks"][0]
types = {t["type"] for t in b["tensors"]}
ops = b["operators"]
resc = [o for o in ops if o["op"] == "RESCALE"]
flag = lambda o, k: bool(o.get("attributes", {}).get(k))
ins = [o for o in resc if flag(o, "input_unsigned")]
outs = [o for o in resc if flag(o, "output_unsigned")]
ok = len(ins) == 1 and ins[0]["inputs"][0] == "x" and len(outs) == 1 and outs[0]["outputs"][0] == "y"
tt = {t["name"]: t["type"] for t in b["tensors"]}
ok = ok and tt["x"] == "INT8" and tt["y"] == "INT8" and types <= {"INT8", "INT32", "SHAPE"}
# the output RESCALE reads an int8 value that another RESCALE made from the int32 accumulator
src = outs[0]["inputs"][0]
prod = [o for o in ops if src in o["outputs"]]
ok = ok and tt[src] == "INT8" and prod and prod[0]["op"] == "RESCALE" and tt[prod[0]["inputs"][0]] == "INT32"
print("  tensor types:", sorted(types), " unsigned RESCALEs in/out:", len(ins), len(outs))
sys.exit(0 if ok else 1)
EOF'
check "sidecar: uint8 entries, zero points 128 above the int8 program's" '$PY -c "
import json, sys
a, b = json.load(open(\"i8.tosa.quant.json\")), json.load(open(\"u8.tosa.quant.json\"))
ok = all(y[\"dtype\"] == \"uint8\" and x[\"dtype\"] == \"int8\" and y[\"scale\"] == x[\"scale\"] and y[\"zero_point\"] == x[\"zero_point\"] + 128
         for k in (\"inputs\", \"outputs\") for x, y in zip(a[k], b[k]))
sys.exit(0 if ok else 1)"'

# uint8 images: quantized here with the sidecar's numbers, run as raw uint8 codes
for k in 00 01 02 03; do $PY "$TOSAC_SOURCE_DIR/tools/quant/quantize_npy.py" u8.tosa.quant.json held_$k.npy img_$k.npy > /dev/null; done
$PY -c "import numpy as np; np.save('img_i8_00.npy', np.load('img_00.npy').view(np.int8))"
"$TOSAC" compile qcnn.onnx -o f.tosa --target TOSA-1.0+INT+FP $C > /dev/null
check "+INT+FP with --calibrate: float I/O in the program" '[ $? -eq 0 ] && "$TOSAC" validate --profile INT+FP -q f.tosa && ! "$TOSAC" validate --profile INT -q f.tosa > /dev/null 2>&1'
"$TOSAC" compile qcnn.onnx -o p.tosa --target TOSA-1.0+INT+FP $C --preserve-io-quantization > /dev/null
check "--preserve-io-quantization keeps INT8 I/O (the int8 program)" '[ $? -eq 0 ] && cmp -s p.tosa i8.tosa'
for k in 00 01 02 03; do
    "$TOSAC" run i8.tosa -i x=held_$k.npy -o i8_$k > /dev/null
    "$TOSAC" run u8.tosa -i x=img_$k.npy -o u8_$k > /dev/null
    "$TOSAC" run f.tosa -i x=held_$k.npy -o f_$k > /dev/null
done
node "$TOSAC_SOURCE_DIR/tools/zoo/ort_run.js" qcnn.onnx held_00.npy ort_00 > /dev/null
for k in 01 02 03; do node "$TOSAC_SOURCE_DIR/tools/zoo/ort_run.js" qcnn.onnx held_$k.npy ort_$k > /dev/null; done
check "uint8 images give exactly the int8 program's outputs" '$PY -c "
import numpy as np, sys
sys.exit(0 if all(np.array_equal(np.load(f\"i8_{k:02d}/y.npy\"), np.load(f\"u8_{k:02d}/y.npy\")) for k in range(4)) else 1)"'
# (compared as output codes: the program dequantizes in FP32, tosac run in double)
check "float I/O in the program: >= 99% the int8 program's output codes, all within one" '$PY -c "
import json, numpy as np, sys
s = json.load(open(\"i8.tosa.quant.json\"))[\"outputs\"][0][\"scale\"]
a = np.rint(np.concatenate([np.load(f\"i8_{k:02d}/y.npy\").ravel() for k in range(4)]) / s)
b = np.rint(np.concatenate([np.load(f\"f_{k:02d}/y.npy\").ravel() for k in range(4)]) / s)
print(\"  same code:\", int((a == b).sum()), \"of\", a.size)
sys.exit(0 if (a == b).mean() >= 0.99 and np.abs(a - b).max() <= 1 else 1)"'
check "uint8 and float-I/O programs within cosine 0.99 of onnxruntime (FP model)" '$PY -c "
import numpy as np, sys
r = np.concatenate([np.load(f\"ort_{k:02d}/y.npy\").ravel() for k in range(4)]).astype(np.float64)
ok = True
for p in (\"u8\", \"f\"):
    a = np.concatenate([np.load(f\"{p}_{k:02d}/y.npy\").ravel() for k in range(4)]).astype(np.float64)
    c = a @ r / np.linalg.norm(a) / np.linalg.norm(r)
    print(f\"  {p}: cosine {c:.5f}\")
    ok &= c >= 0.99
sys.exit(0 if ok else 1)"'

"$TOSAC" run u8.tosa -i x=img_i8_00.npy -o bad > /dev/null 2> err1.txt
check "int8 data for a uint8 input: clear error" '[ $? -eq 3 ] && grep -q "takes uint8 codes" err1.txt'
"$TOSAC" compile qcnn.onnx -o bad.tosa --io uint8 2> err2.txt
check "--io on an FP program: usage error, no file" '[ $? -ne 0 ] && grep -q "apply to quantized programs" err2.txt && [ ! -e bad.tosa ]'
"$TOSAC" compile qcnn.onnx -o bad.tosa --target TOSA-1.0+INT $C --io uint16 2> err3.txt
check "unknown --io: usage error, no file" '[ $? -ne 0 ] && grep -q "unknown --io" err3.txt && [ ! -e bad.tosa ]'

# a two-input model calibrated from files: --calibrate NAME=DIR|FILE.npy for each input
$PY - <<'PYEOF'
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
rng = np.random.default_rng(3)
w = rng.normal(0, 0.4, (8, 4)).astype(np.float32)
nodes = [helper.make_node("MatMul", ["a", "w"], ["m"], name="mm"), helper.make_node("Add", ["m", "b"], ["s"], name="add"),
         helper.make_node("Relu", ["s"], ["y"], name="relu")]
g = helper.make_graph(nodes, "two_in", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 8]),
                                        helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [numpy_helper.from_array(w, "w")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
m.ir_version = 7
onnx.save(m, "two_in.onnx")
os.makedirs("ca", exist_ok=True)
for k in range(16):
    np.save(f"ca/{k:02d}.npy", rng.normal(0, 1, (1, 8)).astype(np.float32))
np.save("cb.npy", rng.normal(0, 1, (16, 1, 4)).astype(np.float32))
np.save("cb8.npy", rng.normal(0, 1, (8, 1, 4)).astype(np.float32))
for k in range(4):
    np.save(f"ha_{k}.npy", rng.normal(0, 1, (1, 8)).astype(np.float32))
    np.save(f"hb_{k}.npy", rng.normal(0, 1, (1, 4)).astype(np.float32))
PYEOF
"$TOSAC" compile two_in.onnx -o two.tosa --target TOSA-1.0+INT --calibrate a=ca b=cb.npy > /dev/null 2> err4.txt
check "two inputs calibrated from files (NAME=DIR, NAME=FILE)" '[ $? -eq 0 ] && "$TOSAC" validate --profile INT -q two.tosa'
for k in 0 1 2 3; do
    "$TOSAC" run two.tosa -i a=ha_$k.npy -i b=hb_$k.npy -o two_$k > /dev/null
    node "$TOSAC_SOURCE_DIR/tools/zoo/ort_run.js" two_in.onnx ha_$k.npy hb_$k.npy ort_two_$k > /dev/null
done
check "two-input INT8 program within cosine 0.99 of onnxruntime" '$PY -c "
import numpy as np, sys
a = np.concatenate([np.load(f\"two_{k}/y.npy\").ravel() for k in range(4)]).astype(np.float64)
r = np.concatenate([np.load(f\"ort_two_{k}/y.npy\").ravel() for k in range(4)]).astype(np.float64)
c = a @ r / np.linalg.norm(a) / np.linalg.norm(r)
print(f\"  cosine {c:.5f}\")
sys.exit(0 if c >= 0.99 else 1)"'
"$TOSAC" compile two_in.onnx -o bad.tosa --target TOSA-1.0+INT --calibrate ca 2> err5.txt
check "a plain path for a two-input model: clear error, no file" '[ $? -ne 0 ] && grep -q "give NAME=DIR|FILE.npy" err5.txt && [ ! -e bad.tosa ]'
"$TOSAC" compile two_in.onnx -o bad.tosa --target TOSA-1.0+INT --calibrate a=ca b=cb8.npy 2> err6.txt
check "different sample counts per input: clear error, no file" '[ $? -ne 0 ] && grep -q "every input needs the same" err6.txt && [ ! -e bad.tosa ]'

finish
