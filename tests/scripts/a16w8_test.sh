#!/bin/bash
# tosac compile --a16w8 (int16 symmetric activations, int8 weights, INT48 accumulators) seen from
# the command line, on the small CNN and transformer block of tests/onnx/make_quant_*.py: the
# program validates for PRO-INT + EXT-INT16 (and not without the extension), convolutions and
# MATMULs accumulate in INT48 and are rescaled with 16-bit multipliers (TOSA forbids scale32 on
# INT48), TABLEs are the 513-entry int16 kind, I/O is int16 in the sidecar, `tosac run` quantizes
# float inputs to int16, and on held-out inputs the a16w8 program is at least as close to the FP
# program as the int8 one (and within cosine 0.999). Without +int16 in the target --a16w8 is refused.
. "$TOSAC_SOURCE_DIR/tests/harness/script_lib.sh" "$@"
# Runs PREFIX{fp,q8,q16}.tosa on PREFIXheld_00..03.npy (input x) and prints "cos8 rel8 cos16 rel16"
# of the quantized outputs against the FP ones (all held-out outputs together).
compare() {
    local p=$1 k m
    for k in 00 01 02 03; do
        for m in fp q8 q16; do
            "$TOSAC" run ${p}$m.tosa -i x=${p}held_$k.npy -o ${p}${m}_$k > /dev/null || echo "run failed" >&2
        done
    done
    P=$p $PY -c '
import os, numpy as np
p = os.environ["P"]
def load(m):
    return np.concatenate([np.load(f"{p}{m}_{k:02d}/" + f).ravel() for k in range(4)
                           for f in sorted(os.listdir(f"{p}{m}_{k:02d}"))]).astype(np.float64)
b = load("fp")
out = []
for m in ("q8", "q16"):
    a = load(m)
    out += [np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b), np.linalg.norm(a - b) / np.linalg.norm(b)]
print(" ".join(f"{v:.6f}" for v in out))'
}
# Checks the printed program (tosac print) FILE: prints facts about its types.
facts() {
    $PY - "$1" <<'PYEOF'
import re, sys
dt, acc48, conv, mm48, mm, r48, r48_16bit, tab16, tabs, floats = {}, 0, 0, 0, 0, 0, 0, 0, 0, 0
for line in open(sys.argv[1]):
    if re.match(r"\s*block ", line):  # the block's inputs
        for name, t, shape in re.findall(r"%(\S+?): (\w+)\[([^\]]*)\]", line):
            dt[name] = (t, shape)
    m = re.match(r"\s*%(\S+) = (\w+)(?:\((.*?)\))?.*: (\w+)\[([^\]]*)\]", line)
    if not m:
        continue
    name, op, args, t, shape = m.groups()
    dt[name] = (t, shape)
    ins = [a.strip().lstrip("%") for a in (args or "").split(",")]
    floats += t.startswith("FP")
    if op in ("CONV2D", "DEPTHWISE_CONV2D", "TRANSPOSE_CONV2D"):
        conv += 1
        acc48 += "acc_type = INT48" in line and t == "INT48" and dt[ins[0]][0] == "INT16" and dt[ins[1]][0] == "INT8" \
            and dt[ins[2]][0] == "INT48"
    if op == "MATMUL":
        mm += 1
        mm48 += t == "INT48" and dt[ins[0]][0] == "INT16" and dt[ins[1]][0] == "INT16"
    if op == "RESCALE" and dt[ins[0]][0] == "INT48":
        r48 += 1
        r48_16bit += "scale32 = false" in line and dt[ins[1]][0] == "INT16"
    if op == "TABLE":
        tabs += 1
        tab16 += dt[ins[0]][0] == "INT16" and dt[ins[1]] == ("INT16", "513") and t == "INT32"
print("conv", conv, acc48)
print("matmul", mm, mm48)
print("rescale48", r48, r48_16bit)
print("table", tabs, tab16)
print("floats", floats)
PYEOF
}
$PY "$TOSAC_SOURCE_DIR/tests/onnx/make_quant_cnn.py" . || exit 1

"$TOSAC" compile qcnn.onnx -o fp.tosa || exit 1
"$TOSAC" compile qcnn.onnx -o q8.tosa --target TOSA-1.0+INT --calibrate calib > /dev/null || exit 1
"$TOSAC" compile qcnn.onnx -o q16.tosa --target TOSA-1.0+INT+int16 --a16w8 --calibrate calib --report > rep.txt 2> err.txt
check "--a16w8 compiles with TOSA-1.0+INT+int16" '[ $? -eq 0 ] && [ -s q16.tosa ] && [ -s q16.tosa.quant.json ]'
"$TOSAC" validate --profile INT --ext int16 -q q16.tosa
check "validates for PRO-INT + EXT-INT16" '[ $? -eq 0 ]'
"$TOSAC" validate --profile INT -q q16.tosa > /dev/null 2> val_noext.txt
check "does not validate without the int16 extension" '[ $? -ne 0 ] && grep -q "requires EXT-INT16" val_noext.txt'
"$TOSAC" print q16.tosa > q16.txt
facts q16.txt > facts.txt
check "every convolution is int16 x int8 -> INT48 with an INT48 bias" 'grep -qE "^conv ([1-9][0-9]*) \1$" facts.txt'
check "the Gemm's MATMUL is int16 x int16 -> INT48" 'grep -qE "^matmul 1 1$" facts.txt'
check "INT48 is rescaled with 16-bit multipliers (scale32 = false)" 'grep -qE "^rescale48 ([1-9][0-9]*) \1$" facts.txt'
check "SiLU is one int16 TABLE (513 entries, int32 result)" 'grep -qE "^table 1 1$" facts.txt'
check "no floating-point tensor left" 'grep -q "^floats 0$" facts.txt'
check "the SQNR report shows int16 forms" 'grep -qE "^[0-9]+ +[0-9.]+ +i16 " rep.txt'
check "sidecar records int16 I/O with zero point 0" '$PY -c "
import json, sys
j = json.load(open(\"q16.tosa.quant.json\"))
sys.exit(0 if all(e[\"dtype\"] == \"int16\" and e[\"zero_point\"] == 0 and e[\"scale\"] > 0 for e in j[\"inputs\"] + j[\"outputs\"]) else 1)"'
"$TOSAC" compile qcnn.onnx -o q16b.tosa --target TOSA-1.0+INT+int16 --a16w8 --calibrate calib > /dev/null
check "deterministic" 'cmp -s q16.tosa q16b.tosa'

compare "" > cos.txt
read c8 r8 c16 r16 < cos.txt
check "a16w8 output is dequantized float32" '$PY -c "import numpy as np, sys; y = np.load(\"q16_00/y.npy\"); sys.exit(0 if y.dtype == np.float32 and y.shape == (1, 10) else 1)"'
check "CNN held-out cosine vs FP >= 0.999 (a16w8 $c16, rel L2 $r16)" '$PY -c "import sys; sys.exit(0 if float(\"$c16\") >= 0.999 else 1)"'
check "CNN: a16w8 at least as close as int8 (rel L2 $r16 vs $r8)" '$PY -c "import sys; sys.exit(0 if float(\"$r16\") <= float(\"$r8\") else 1)"'

# int16 data is taken as is: quantizing by hand (symmetric, [-32767, 32767]) gives the same output
$PY -c "
import json, numpy as np
q = json.load(open('q16.tosa.quant.json'))['inputs'][0]
x = np.load('held_00.npy').astype(np.float64)
np.save('held_00_i16.npy', np.clip(np.round(x / q['scale']), -32767, 32767).astype(np.int16))"
"$TOSAC" run q16.tosa -i x=held_00_i16.npy -o qi_00 > /dev/null
check "int16 input accepted as is" 'cmp -s qi_00/y.npy q16_00/y.npy'

rm -f no.tosa
"$TOSAC" compile qcnn.onnx -o no.tosa --target TOSA-1.0+INT --a16w8 --calibrate calib > /dev/null 2> err_no.txt
check "--a16w8 without +int16: refused with a clear message, no output" '[ $? -eq 1 ] && grep -q "TOSA-1.0+INT+int16" err_no.txt && [ ! -e no.tosa ]'
"$TOSAC" compile qcnn.onnx -o no.tosa --a16w8 > /dev/null 2> err_fp.txt
check "--a16w8 with the FP target: refused" '[ $? -eq 1 ] && grep -q "int16 extension" err_fp.txt && [ ! -e no.tosa ]'

# the transformer block: activation x activation MATMULs in int16 -> INT48, softmax's EXP and
# RECIPROCAL and GELU as int16 TABLEs
$PY "$TOSAC_SOURCE_DIR/tests/onnx/make_quant_transformer.py" . || exit 1
"$TOSAC" compile qtf.onnx -o tf_fp.tosa || exit 1
"$TOSAC" compile qtf.onnx -o tf_q8.tosa --target TOSA-1.0+INT --calibrate calib_tf > /dev/null || exit 1
"$TOSAC" compile qtf.onnx -o tf_q16.tosa --target TOSA-1.0+INT+int16 --a16w8 --calibrate calib_tf > /dev/null
check "transformer block compiles with --a16w8" '[ $? -eq 0 ] && [ -s tf_q16.tosa ]'
"$TOSAC" validate --profile INT --ext int16 -q tf_q16.tosa
check "transformer block validates for PRO-INT + EXT-INT16" '[ $? -eq 0 ]'
"$TOSAC" print tf_q16.tosa > tf_q16.txt
facts tf_q16.txt > tf_facts.txt
check "all 8 MATMULs are int16 x int16 -> INT48" 'grep -qE "^matmul 8 8$" tf_facts.txt'
check "every TABLE is the int16 kind" 'grep -qE "^table ([1-9][0-9]*) \1$" tf_facts.txt && grep -q "^floats 0$" tf_facts.txt'
compare tf_ > tf_cos.txt
read tc8 tr8 tc16 tr16 < tf_cos.txt
check "transformer held-out cosine vs FP >= 0.999 (a16w8 $tc16, rel L2 $tr16)" '$PY -c "import sys; sys.exit(0 if float(\"$tc16\") >= 0.999 else 1)"'
check "transformer: a16w8 at least as close as int8 (rel L2 $tr16 vs $tr8)" '$PY -c "import sys; sys.exit(0 if float(\"$tr16\") <= float(\"$tr8\") else 1)"'

finish
