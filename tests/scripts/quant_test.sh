#!/bin/bash
# tosac compile --target TOSA-1.0+INT (INT8 post-training quantization) seen from the command
# line: a small CNN (conv + BatchNorm + ReLU, 1x1 conv + ReLU6, depthwise conv + SiLU, concat,
# average pool, residual add, global average pool, Gemm) calibrated on 16 inputs must give a
# program that validates for PRO-INT alone, has INT8 I/O and no floating point, runs through its
# .quant.json sidecar (float in, dequantized float out) and stays within cosine 0.99 of the FP
# program on held-out inputs. The FP program's own correctness is the model zoo's job
# (onnxruntime goldens); here it is the reference.
# A small transformer block (tests/onnx/make_quant_transformer.py) must likewise compile, validate
# for PRO-INT and reach cosine 0.99 (0.9989 measured), with REDUCE_MAX in int8 and no i32 -> i32 RESCALE.
. "$TOSAC_SOURCE_DIR/tests/harness/script_lib.sh" "$@"
# Runs PREFIXfp.tosa and PREFIXq.tosa on PREFIXheld_00..03.npy and prints "cosine relL2" of the
# INT8 outputs against the FP ones.
held_out_cosine() {
    local p=$1 k
    for k in 00 01 02 03; do
        "$TOSAC" run ${p}fp.tosa -i x=${p}held_$k.npy -o ${p}fp_$k > /dev/null || echo "run failed" >&2
        "$TOSAC" run ${p}q.tosa -i x=${p}held_$k.npy -o ${p}q_$k > /dev/null || echo "run failed" >&2
    done
    P=$p $PY -c '
import os, numpy as np
p = os.environ["P"]
a = np.concatenate([np.load(f"{p}q_{k:02d}/y.npy").ravel() for k in range(4)]).astype(np.float64)
b = np.concatenate([np.load(f"{p}fp_{k:02d}/y.npy").ravel() for k in range(4)]).astype(np.float64)
print(f"{np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b):.6f} {np.linalg.norm(a - b) / np.linalg.norm(b):.6f}")'
}
$PY "$TOSAC_SOURCE_DIR/tests/onnx/make_quant_cnn.py" . || exit 1

"$TOSAC" compile qcnn.onnx -o fp.tosa || exit 1
"$TOSAC" compile qcnn.onnx -o q.tosa --target TOSA-1.0+INT --calibrate calib --report > report.txt 2> err.txt
check "compile INT8 from a calibration directory" '[ $? -eq 0 ] && [ -s q.tosa ] && [ -s q.tosa.quant.json ]'
"$TOSAC" validate --profile INT -q q.tosa
check "validates for PRO-INT alone" '[ $? -eq 0 ]'
"$TOSAC" inspect --json q.tosa > q.json
check "no floating-point tensor left" '! grep -q "\"FP32\"" q.json'
check "SiLU (Sigmoid, Mul) became one TABLE" 'grep -qE "^  TABLE +1$" report.txt && ! grep -qE "^  (SIGMOID|MUL) " report.txt'
check "ReLU/ReLU6 folded: no CLAMP" '! grep -qE "^  CLAMP " report.txt'
check "average pool stays AVG_POOL2D, concat stays CONCAT" 'grep -qE "^  AVG_POOL2D +1$" report.txt && grep -qE "^  CONCAT +1$" report.txt'
check "sidecar records int8 I/O" '$PY -c "
import json, sys
j = json.load(open(\"q.tosa.quant.json\"))
ok = j[\"format\"] == \"tosac-quant-io\" and [i[\"name\"] for i in j[\"inputs\"]] == [\"x\"] and [o[\"name\"] for o in j[\"outputs\"]] == [\"y\"]
ok = ok and all(e[\"dtype\"] == \"int8\" and e[\"scale\"] > 0 and -128 <= e[\"zero_point\"] <= 127 for e in j[\"inputs\"] + j[\"outputs\"])
sys.exit(0 if ok else 1)"'

"$TOSAC" compile qcnn.onnx -o qb.tosa --target TOSA-1.0+INT --calibrate calib_batch.npy > /dev/null
check "a batch file gives the same program as the directory" 'cmp -s q.tosa qb.tosa && cmp -s q.tosa.quant.json qb.tosa.quant.json'
"$TOSAC" compile qcnn.onnx -o q2.tosa --target TOSA-1.0+INT --calibrate calib > /dev/null
check "deterministic" 'cmp -s q.tosa q2.tosa'
"$TOSAC" compile qcnn.onnx -o qs.tosa --target TOSA-1.0+INT --calibrate calib/00.npy calib/01.npy calib/02.npy > /dev/null
check "several .npy files after one --calibrate" '[ $? -eq 0 ] && "$TOSAC" validate --profile INT -q qs.tosa'

held_out_cosine "" > cos.txt
check "INT8 output is dequantized float32" '$PY -c "import numpy as np, sys; y = np.load(\"q_00/y.npy\"); sys.exit(0 if y.dtype == np.float32 and y.shape == (1, 10) else 1)"'
read cosv rel < cos.txt
check "held-out cosine vs FP >= 0.99 (cosine $cosv, rel L2 $rel)" '$PY -c "import sys; sys.exit(0 if float(\"$cosv\") >= 0.99 else 1)"'

# int8 data is taken as is: quantizing by hand gives the same output
$PY -c "
import json, numpy as np
q = json.load(open('q.tosa.quant.json'))['inputs'][0]
x = np.load('held_00.npy').astype(np.float64)
np.save('held_00_i8.npy', np.clip(np.round(x / q['scale']) + q['zero_point'], -128, 127).astype(np.int8))"
"$TOSAC" run q.tosa -i x=held_00_i8.npy -o qi_00 > /dev/null
check "int8 input accepted as is" 'cmp -s qi_00/y.npy q_00/y.npy'

rm -f nc.tosa
"$TOSAC" compile qcnn.onnx -o nc.tosa --target TOSA-1.0+INT > /dev/null 2> err_nc.txt
check "no calibration data: refused with a clear message" '[ $? -eq 1 ] && grep -q "needs calibration data" err_nc.txt && grep -q "\-\-calibrate random" err_nc.txt && [ ! -e nc.tosa ]'
"$TOSAC" compile qcnn.onnx -o r.tosa --target TOSA-1.0+INT --calibrate random --calib-samples 4 > /dev/null
check "--calibrate random works when asked for" '[ $? -eq 0 ] && "$TOSAC" validate --profile INT -q r.tosa'
"$TOSAC" compile qcnn.onnx -o x.tosa --calibrate calib > /dev/null 2> err_fp.txt
check "--calibrate without the INT target is a usage error" '[ $? -eq 1 ] && grep -q "TOSA-1.0+INT only" err_fp.txt'

# the per-layer SQNR report: a table worst first, and the same layers as JSON
"$TOSAC" compile qcnn.onnx -o qr.tosa --target TOSA-1.0+INT --calibrate calib --report --report-json rep.json > rep.txt
check "--report and --report-json compile" '[ $? -eq 0 ] && [ -s rep.json ]'
check "the SQNR report gives the same program" 'cmp -s q.tosa qr.tosa'
$PY - > rep_check.txt <<'PYEOF'
import json, math, re
rows = []
on = False
for line in open("rep.txt"):
    if re.match(r"^rank +SQNR dB", line):
        on = True
        continue
    if on and re.match(r"^\d+ ", line):
        f = line.split()
        rows.append((float(f[1]), f[5]))
j = json.load(open("rep.json"))
L = j["layers"]
sq = [float("inf") if l["sqnr_db"] is None else l["sqnr_db"] for l in L]
print("rows", len(rows))
print("sorted", all(rows[k][0] <= rows[k + 1][0] for k in range(len(rows) - 1)))
print("json_sorted", all(sq[k] <= sq[k + 1] for k in range(len(sq) - 1)))
print("same_layers", [r[1] for r in rows] == [l["name"] for l in L])
# the SQNR is what the sums say, and the sums are over 16 samples of each value
print("formula", all(l["sqnr_db"] is None or abs(10 * math.log10(l["signal"] / l["noise"]) - l["sqnr_db"]) < 1e-9 for l in L))
print("format", j["format"] == "tosac-quant-report" and j["samples"] == 16)
ops = {l["op"] for l in L}
print("ops", "CONV2D" in ops and "DEPTHWISE_CONV2D" in ops and "ADD" in ops)
print("output", j["output_sqnr_db"] is not None and j["output_sqnr_db"] > 15)
PYEOF
check "report table has layers" 'grep -qE "^rows ([5-9]|[1-9][0-9]+)$" rep_check.txt'
check "report table is sorted worst first" 'grep -q "^sorted True$" rep_check.txt'
check "report JSON is valid, sorted, and lists the table's layers" 'grep -q "^json_sorted True$" rep_check.txt && grep -q "^same_layers True$" rep_check.txt && grep -q "^format True$" rep_check.txt'
check "report SQNR = 10 log10(signal/noise)" 'grep -q "^formula True$" rep_check.txt'
check "report covers convolutions, depthwise and the residual add" 'grep -q "^ops True$" rep_check.txt'
check "report output SQNR above 15 dB" 'grep -q "^output True$" rep_check.txt'

# weight granularity and calibration methods: each compiles and validates for PRO-INT
for flags in "--per-tensor" "--calib-method minmax" "--calib-method percentile" "--calib-method mse" "--per-tensor --calib-method mse"; do
    rm -f m.tosa
    "$TOSAC" compile qcnn.onnx -o m.tosa --target TOSA-1.0+INT --calibrate calib $flags > /dev/null
    check "$flags compiles and validates --profile INT" '[ $? -eq 0 ] && "$TOSAC" validate --profile INT -q m.tosa'
    cp m.tosa "m_$(echo $flags | tr -d ' -').tosa"
done
check "the default is percentile" 'cmp -s q.tosa m_calibmethodpercentile.tosa'
check "the methods give different programs" '! cmp -s m_calibmethodminmax.tosa m_calibmethodmse.tosa && ! cmp -s m_calibmethodminmax.tosa q.tosa'
check "--per-tensor changes the weights" '! cmp -s m_pertensor.tosa q.tosa'
"$TOSAC" compile qcnn.onnx -o m.tosa --target TOSA-1.0+INT --calibrate calib --calib-method best > /dev/null 2> err_m.txt
check "an unknown --calib-method is a usage error" '[ $? -ne 0 ] && grep -q "minmax, percentile or mse" err_m.txt'
"$TOSAC" compile qcnn.onnx -o m.tosa --per-tensor > /dev/null 2> err_pt.txt
check "--per-tensor without the INT target is a usage error" '[ $? -eq 1 ] && grep -q "TOSA-1.0+INT only" err_pt.txt'

# a transformer block (LayerNormalization, Q K^T and P V MatMuls of two activations, Softmax,
# GELU): REDUCE_MAX on int8 at its input's q-params, activation x activation MATMULs, no float
$PY "$TOSAC_SOURCE_DIR/tests/onnx/make_quant_transformer.py" . || exit 1
"$TOSAC" compile qtf.onnx -o tf_fp.tosa || exit 1
"$TOSAC" compile qtf.onnx -o tf_q.tosa --target TOSA-1.0+INT --calibrate calib_tf --report > tf_rep.txt
check "transformer block compiles to INT8" '[ $? -eq 0 ] && [ -s tf_q.tosa ]'
"$TOSAC" validate --profile INT -q tf_q.tosa
check "transformer block validates for PRO-INT alone" '[ $? -eq 0 ]'
"$TOSAC" inspect --json tf_q.tosa > tf_q.json
check "transformer block: no floating-point tensor left" '! grep -q "\"FP32\"" tf_q.json'
check "softmax max stays REDUCE_MAX, all 8 MatMuls are MATMUL" 'grep -qE "^  REDUCE_MAX +1$" tf_rep.txt && grep -qE "^  MATMUL +8$" tf_rep.txt'
"$TOSAC" print tf_q.tosa > tf_q.txt
$PY - > tf_check.txt <<'PYEOF'
import re
dt, ok_max, n_mm_act, i32_i32 = {}, True, 0, 0
for line in open("tf_q.txt"):
    m = re.match(r"\s*%(\S+) = (\w+)\((.*?)\).*: (\w+)\[", line)
    if not m:
        continue
    name, op, args, t = m.groups()
    dt[name] = t
    ins = [a.strip().lstrip("%") for a in args.split(",")]
    if op == "REDUCE_MAX":
        ok_max &= t == "INT8" and dt.get(ins[0]) == "INT8"
    if op == "MATMUL" and not ins[1].startswith("qweight"):
        n_mm_act += 1
    if op == "RESCALE" and t == "INT32" and dt.get(ins[0]) == "INT32":
        i32_i32 += 1
print("max_i8", ok_max)
print("act_matmuls", n_mm_act)
print("i32_i32", i32_i32)
PYEOF
check "REDUCE_MAX is int8 -> int8" 'grep -q "^max_i8 True$" tf_check.txt'
check "two activation x activation MATMULs (Q K^T, P V)" 'grep -q "^act_matmuls 2$" tf_check.txt'
check "no int32 -> int32 RESCALE" 'grep -q "^i32_i32 0$" tf_check.txt'
held_out_cosine tf_ > tf_cos.txt
read tcos trel < tf_cos.txt
check "transformer held-out cosine vs FP >= 0.99 (cosine $tcos, rel L2 $trel)" '$PY -c "import sys; sys.exit(0 if float(\"$tcos\") >= 0.99 else 1)"'

finish
