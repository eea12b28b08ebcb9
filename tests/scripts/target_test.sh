#!/bin/bash
# Ethos-U and Cortex-M targets end to end (docs/TARGETS.md): `tosac compile --target ethos-...`
# writes an artifact (manifest.json, one .tosa per segment, partition_report.{txt,json}); models
# with operators U55 cannot run (bilinear/asymmetric RESIZE; int16 MATMUL and TABLE of an a16w8
# transformer block) split into NPU and CPU segments whose chained outputs are bit-identical to
# the unpartitioned INT program (`tosac run` on both, same inputs); U85 needs fewer CPU segments;
# every NPU segment validates on its own as PRO-INT level 8K (`tosac validate`); --report-dot,
# --vela (with a fake vela that records its arguments), refusals and `tosac targets`.
. "$TOSAC_SOURCE_DIR/tests/harness/script_lib.sh" "$@"
$PY "$TOSAC_SOURCE_DIR/tests/onnx/make_quant_resize.py" . || exit 1
$PY "$TOSAC_SOURCE_DIR/tests/onnx/make_quant_transformer.py" . || exit 1
cat > bq.py <<'PYEOF'
# bq.py TOSAC ART MODEL.onnx X.npy: every segment output of artifact ART (run segment by segment
# from X quantized with the manifest's input q-params) dequantized with the manifest's q-params
# must be one of the FP model's values (every ONNX node output exposed as a model output and run
# by tosac in FP32) within quantization error: SQNR >= 20 dB against the closest of them.
import json, os, subprocess, sys
import numpy as np
import onnx
import onnx.helper
tosac, art, model, xin = sys.argv[1:5]
man = json.load(open(art + "/manifest.json"))
rep = json.load(open(art + "/partition_report.json"))
m = onnx.load(model)
fp_names = [o for n in m.graph.node for o in n.output]
have = {o.name for o in m.graph.output}
for n in fp_names:
    if n not in have:
        m.graph.output.append(onnx.helper.make_empty_tensor_value_info(n))
onnx.save(m, "dbg.onnx")
subprocess.check_call([tosac, "run", "dbg.onnx", "-i", "x=" + xin, "-o", "fp"], stdout=subprocess.DEVNULL)
vals = {}
x = np.load(xin)
q = man["inputs"][0]
lim, ty = (32767, np.int16) if q["dtype"] == "INT16" else (127, np.int8)
vals[q["name"]] = np.clip(np.round(x / q["scale"]) + q["zero_point"], -lim - 1, lim).astype(ty)
worst, bad = 1e9, []
for k, s in enumerate(man["segments"]):
    args = []
    for t in s["inputs"]:
        np.save("in_%d_%s.npy" % (k, t["name"]), vals[t["name"]].reshape(t["shape"]))
        args += ["-i", "%s=in_%d_%s.npy" % (t["name"], k, t["name"])]
    subprocess.check_call([tosac, "run", art + "/" + s["file"], *args, "-o", "seg%d" % k], stdout=subprocess.DEVNULL)
    for t in s["outputs"]:
        v = np.load("seg%d/%s.npy" % (k, t["name"]))
        vals[t["name"]] = v
        if t.get("scale") is None or t.get("zero_point") is None:
            bad.append("%s: no q-params" % t["name"]); continue
        deq = (v.astype(np.float64) - t["zero_point"]) * t["scale"]
        sqnr = -1e9
        for n in fp_names:
            ref = np.load("fp/%s.npy" % n).astype(np.float64)
            for d in (deq, deq.transpose(0, 3, 1, 2) if deq.ndim == 4 else deq):  # NHWC inside, NCHW in ONNX
                if d.shape == ref.shape:
                    sqnr = max(sqnr, 10 * np.log10(np.sum(ref ** 2) / max(np.sum((d - ref) ** 2), 1e-30)))
        print("  segment %d %s %s: scale %.6g zp %d, SQNR %.1f dB" % (k, s["runs_on"], t["name"], t["scale"], t["zero_point"], sqnr))
        if sqnr < 20: bad.append("%s: SQNR %.1f dB" % (t["name"], sqnr))
print("\n".join(bad))
sys.exit(1 if bad else 0)
PYEOF

"$TOSAC" targets > targets.txt
check "tosac targets lists every Ethos-U configuration and cortex-m55" \
    'for t in ethos-u55-32 ethos-u55-64 ethos-u55-128 ethos-u55-256 ethos-u65-256 ethos-u65-512 ethos-u85-128 ethos-u85-256 ethos-u85-512 ethos-u85-1024 ethos-u85-2048 cortex-m55; do grep -q "^$t " targets.txt || exit 1; done'
"$TOSAC" targets --json > targets.json
check "tosac targets --json: ExecuTorch's Vela defaults" '$PY -c "
import json, sys
t = {x[\"name\"]: x for x in json.load(open(\"targets.json\"))[\"targets\"]}
ok = (t[\"ethos-u55-128\"][\"system_config\"], t[\"ethos-u55-128\"][\"memory_mode\"]) == (\"Ethos_U55_High_End_Embedded\", \"Shared_Sram\") \
  and (t[\"ethos-u65-256\"][\"system_config\"], t[\"ethos-u65-256\"][\"memory_mode\"]) == (\"Ethos_U65_High_End\", \"Dedicated_Sram_384KB\") \
  and (t[\"ethos-u85-512\"][\"system_config\"], t[\"ethos-u85-512\"][\"memory_mode\"]) == (\"Ethos_U85_SYS_DRAM_Mid\", \"Sram_Only\") \
  and t[\"ethos-u85-512\"][\"macs\"] == 512 and t[\"cortex-m55\"][\"rules\"] == \"none\"
sys.exit(0 if ok else 1)"'

# ---- the references: for each target the unpartitioned INT program lowered for it (-o FILE.tosa) ----
refs() {
    local t=$1
    "$TOSAC" compile qresize.onnx -o whole_rs_$t.tosa --target $t --calibrate calib > /dev/null || return 1
    "$TOSAC" compile qtf.onnx -o whole_tf_$t.tosa --target $t --a16w8 --calibrate calib_tf > /dev/null || return 1
    for k in 00 01; do
        "$TOSAC" run whole_rs_$t.tosa -i x=held_$k.npy -o ref_rs_${t}_$k > /dev/null || return 1
        "$TOSAC" run whole_tf_$t.tosa -i x=tf_held_$k.npy -o ref_tf_${t}_$k > /dev/null || return 1
    done
}

# segments of ART (npu or cpu) and the operators kept off the NPU, from the JSON report
count() { $PY -c "import json; r = json.load(open('$1/manifest.json')); print(sum(s['runs_on'] == '$2' for s in r['segments']))"; }

for t in ethos-u55-128 ethos-u65-256 ethos-u85-256; do
    refs $t
    check "$t: -o FILE.tosa writes the whole program lowered for the target (and its sidecar)" \
        '[ $? -eq 0 ] && [ -s whole_rs_$t.tosa.quant.json ] && "$TOSAC" validate --profile INT --ext int16,int4,doubleround -q whole_tf_$t.tosa'
    rm -rf rs_$t tf_$t
    "$TOSAC" compile qresize.onnx -o rs_$t --target $t --calibrate calib > /dev/null 2> err.txt
    check "$t: resize model compiles to an artifact" '[ $? -eq 0 ] && [ -s rs_$t/manifest.json ] && [ -s rs_$t/partition_report.txt ] && [ -s rs_$t/partition_report.json ]'
    "$TOSAC" compile qtf.onnx -o tf_$t --target $t --a16w8 --calibrate calib_tf > /dev/null 2> err.txt
    check "$t: a16w8 transformer block compiles to an artifact" '[ $? -eq 0 ] && [ -s tf_$t/manifest.json ]'
    for m in rs tf; do
        for k in 00 01; do
            in=held_$k.npy
            [ $m = tf ] && in=tf_held_$k.npy
            rm -rf out_${m}_$k
            "$TOSAC" run ${m}_$t -i x=$in -o out_${m}_$k > /dev/null
            check "$t $m input $k: chained segments bit-identical to the INT program" 'cmp -s out_${m}_$k/y.npy ref_${m}_${t}_$k/y.npy'
        done
        "$TOSAC" validate -q ${m}_$t
        check "$t $m: tosac validate accepts the artifact" '[ $? -eq 0 ]'
        bad=0
        for s in $($PY -c "import json; print(' '.join(s['file'] for s in json.load(open('${m}_$t/manifest.json'))['segments'] if s['runs_on'] == 'npu'))"); do
            "$TOSAC" validate --profile INT --ext int16,int4,doubleround --level 8K -q ${m}_$t/$s || bad=1
        done
        check "$t $m: every NPU segment validates alone as PRO-INT level 8K" '[ $bad -eq 0 ]'
        check "$t $m: every CPU operator names the rule that kept it off the NPU" '$PY -c "
import json, sys
r = json.load(open(\"${m}_$t/partition_report.json\"))
sys.exit(0 if all(o[\"rule\"] and o[\"reason\"].startswith((\"ETHOS_U.md\", \"REFERENCE_SYSTEM.md\")) for o in r[\"operators\"] if o[\"runs_on\"] == \"cpu\") else 1)"'
        check "$t $m: every segment input and output has the quantizer's q-params in the manifest" '$PY -c "
import json, sys
m = json.load(open(\"${m}_$t/manifest.json\"))
sys.exit(0 if all((t.get(\"scale\") or 0) > 0 and t.get(\"zero_point\") is not None for s in m[\"segments\"] for t in s[\"inputs\"] + s[\"outputs\"]) else 1)"'
    done
    # the boundary q-params are the ones the values have: each segment output, dequantized with
    # them, is one of the FP model's values within quantization error (bq.py)
    check "$t: every segment output of the resize model dequantizes with its manifest q-params to the FP model's value (SQNR >= 20 dB)" \
        '$PY bq.py "$TOSAC" rs_$t qresize.onnx held_00.npy > bq_$t.txt'
done
"$TOSAC" compile qresize.onnx -o rs_unsup --target ethos-u55-128 --calibrate calib --report > unsup.txt
check "U55, an operator it cannot run (bilinear RESIZE): the compile succeeds with a CPU segment, the report names the operator, its ONNX node and the rule" \
    '[ $? -eq 0 ] && [ $(count rs_unsup cpu) -ge 1 ] && grep -qE "^  op [0-9]+ RESIZE -> .* \(ONNX node .up_linear.\): RESIZE_MODE: ETHOS_U.md" unsup.txt'

check "U55: the resize model splits, RESIZE named with its rule" \
    '[ $(count rs_ethos-u55-128 cpu) -ge 1 ] && grep -q "RESIZE.*RESIZE_MODE" rs_ethos-u55-128/partition_report.txt'
# the block's two activation x activation MATMULs (Q.K^T and attention.V, the softmax between them)
# are int16 on U55: each with the RESCALE of its INT48 result is a CPU segment; its int16 TABLEs
# (softmax exp, LayerNormalization rsqrt) run on the NPU (Vela's 16-bit LUT): 3 NPU + 2 CPU segments
check "U55: the a16w8 transformer block splits at its two int16 MATMULs only (3 NPU + 2 CPU segments)" \
    '[ $(count tf_ethos-u55-128 cpu) -eq 2 ] && [ $(count tf_ethos-u55-128 npu) -eq 3 ] && $PY -c "
import json, sys
r = json.load(open(\"tf_ethos-u55-128/partition_report.json\"))
cpu = [(o[\"op\"], o[\"rule\"]) for o in r[\"operators\"] if o[\"runs_on\"] == \"cpu\"]
sys.exit(0 if sorted(cpu) == [(\"MATMUL\", \"MATMUL_INT16\")] * 2 + [(\"RESCALE\", \"RESCALE_INT48\")] * 2 else 1)"'
check "U65 follows the U55 rules" '[ $(count rs_ethos-u65-256 cpu) -eq $(count rs_ethos-u55-128 cpu) ]'
check "U85 needs fewer CPU segments (resize: $(count rs_ethos-u85-256 cpu) vs $(count rs_ethos-u55-128 cpu))" \
    '[ $(count rs_ethos-u85-256 cpu) -lt $(count rs_ethos-u55-128 cpu) ]'
check "U85 needs fewer CPU segments (a16w8 block: $(count tf_ethos-u85-256 cpu) vs $(count tf_ethos-u55-128 cpu))" \
    '[ $(count tf_ethos-u85-256 cpu) -lt $(count tf_ethos-u55-128 cpu) ]'

# ---- the manifest ----
check "manifest: format, target, model I/O q-params, segment inputs wired to earlier outputs" '$PY -c "
import json, sys
m = json.load(open(\"rs_ethos-u55-128/manifest.json\"))
ok = m[\"format\"] == \"tosac-artifact\" and m[\"version\"] == 1 and m[\"target\"][\"name\"] == \"ethos-u55-128\"
ok &= m[\"target\"][\"tosa_spec\"] == \"TOSA-1.0+INT+int16+int4+u55\" and m[\"target\"][\"macs\"] == 128
x = m[\"inputs\"][0]
ok &= x[\"name\"] == \"x\" and x[\"dtype\"] == \"INT8\" and x[\"shape\"] == [1, 3, 6, 6] and x[\"scale\"] > 0
segs = m[\"segments\"]
for i, s in enumerate(segs):
    for t in s[\"inputs\"]:
        f = t[\"from\"]
        if \"model_input\" in f: src = m[\"inputs\"][f[\"model_input\"]]
        else:
            ok &= f[\"segment\"] < i
            src = segs[f[\"segment\"]][\"outputs\"][f[\"output\"]]
        ok &= src[\"name\"] == t[\"name\"] and src[\"shape\"] == t[\"shape\"] and src[\"dtype\"] == t[\"dtype\"]
    ok &= s[\"arena_bytes\"] > 0 and s[\"constant_bytes\"] > 0
    if s[\"runs_on\"] == \"npu\": ok &= all(t[\"dtype\"] in (\"INT8\", \"INT16\") for t in s[\"inputs\"] + s[\"outputs\"])
sys.exit(0 if ok else 1)"'
"$TOSAC" inspect --json rs_ethos-u55-128 > insp.json
check "tosac inspect --json reads the artifact" '$PY -c "
import json, sys
d = json.load(open(\"insp.json\"))
sys.exit(0 if len(d[\"segments\"]) == len(d[\"artifact\"][\"segments\"]) > 1 else 1)"'
"$TOSAC" inspect rs_ethos-u55-128 > insp.txt
check "tosac inspect prints the segments" 'grep -q "==== segment 1" insp.txt'

# ---- --report, --report-dot, a whole-NPU model, cortex-m55 ----
"$TOSAC" compile qresize.onnx -o rs_rep --target ethos-u55-128 --calibrate calib --report --report-dot rs.dot > rep.txt
check "--report prints the partition report with a verdict per NPU segment" \
    'grep -q "^segments: " rep.txt && grep -q "Vela will accept it" rep.txt && grep -q "kept off the NPU" rep.txt'
check "--report-dot colours NPU and CPU segments" 'grep -q "^digraph" rs.dot && grep -q "(NPU)" rs.dot && grep -q "(CPU)" rs.dot'
"$TOSAC" compile qtf.onnx -o tf8 --target ethos-u85-128 --calibrate calib_tf --report > rep8.txt
check "int8 transformer block on U85: one NPU segment, 100% NPU" \
    '[ $(count tf8 npu) -eq 1 ] && [ $(count tf8 cpu) -eq 0 ] && grep -q "(100.0%)" rep8.txt'
"$TOSAC" compile qresize.onnx -o rs_m55 --target cortex-m55 --calibrate calib > /dev/null
"$TOSAC" run rs_m55 -i x=held_00.npy -o out_m55 > /dev/null
"$TOSAC" compile qresize.onnx -o rs_int.tosa --target TOSA-1.0+INT --calibrate calib > /dev/null
"$TOSAC" run rs_int.tosa -i x=held_00.npy -o ref_int > /dev/null
check "cortex-m55 (no lowering choices): one CPU segment, bit-identical to the TOSA-1.0+INT program" \
    '[ $(count rs_m55 cpu) -eq 1 ] && [ $(count rs_m55 npu) -eq 0 ] && cmp -s out_m55/y.npy ref_int/y.npy'

# ---- refusals ----
"$TOSAC" compile qresize.onnx -o rs_nocal --target ethos-u55-128 > /dev/null 2> err.txt
check "an Ethos-U target without calibration data is a clear error" '[ $? -ne 0 ] && grep -q "calibrat" err.txt && [ ! -e rs_nocal ]'
echo keep > notart
"$TOSAC" compile qresize.onnx -o notart --target ethos-u55-128 --calibrate calib > /dev/null 2> err.txt
check "a file that is not an artifact is not replaced" '[ $? -ne 0 ] && [ "$(cat notart)" = keep ] && grep -q "not a previous tosac artifact" err.txt'
"$TOSAC" compile qresize.onnx -o rs_ethos-u55-128 --target ethos-u55-128 --calibrate calib > /dev/null
check "a previous artifact is replaced" '[ $? -eq 0 ] && [ -s rs_ethos-u55-128/manifest.json ] && ! ls -d rs_ethos-u55-128.* 2> /dev/null'
"$TOSAC" compile qresize.onnx -o x.tosa --target TOSA-1.0+INT --calibrate calib --vela /bin/true > /dev/null 2> err.txt
check "--vela needs an Ethos-U target" '[ $? -ne 0 ] && grep -q "need an Ethos-U" err.txt'
"$TOSAC" compile qresize.onnx -o x.tosa --target ethos-u55-128 --calibrate calib --report-dot x.dot > /dev/null 2> err.txt
check "--report-dot needs an artifact directory" '[ $? -ne 0 ] && grep -q "artifact directory" err.txt && [ ! -e x.tosa ]'
"$TOSAC" compile qresize.onnx -o m55v --target cortex-m55 --calibrate calib --vela /bin/true > /dev/null 2> err.txt
check "--vela on cortex-m55 (no NPU) is refused" '[ $? -ne 0 ] && grep -q "has no NPU" err.txt && [ ! -e m55v ]'

# ---- --vela with a fake vela: ExecuTorch's flags, outputs kept in the artifact ----
cat > fakevela <<'EOF'
#!/bin/bash
echo "$@" >> "$(dirname "$0")/vela_args.txt"
out=.
for a in "$@"; do case $a in --output-dir=*) out=${a#--output-dir=};; esac; done
seg=${!#}
base=$(basename "$seg" .tosa)
echo "command stream" > "$out/${base}_vela.bin"
echo "Total SRAM used 1 KiB"
# a summary shaped like Vela 5.1.0's (a header line and one row, columns found by name): segment N
# takes (N + 1) * 1.25 ms (inference_time in seconds) and (N + 1) * 1000 + 7 cycles (cycles_total)
sys=
for a in "$@"; do case $a in --system-config=*) sys=${a#--system-config=};; esac; done
n=${base#segment_}
n=${n%_npu}
[ -n "${NOSUMMARY:-}" ] || printf '%s\n%s\n' \
    "experiment,network,accelerator_configuration,system_config,batch_size,inference_time,passes_after_fusing,cycles_npu,cycles_total" \
    "default,$base,Ethos_U55_128,$sys,1,$(((n + 1) * 125))e-5,3,$(((n + 1) * 900)),$(((n + 1) * 1000 + 7))" \
    > "$out/${base}_summary_$sys.csv"
EOF
chmod +x fakevela
rm -f vela_args.txt
"$TOSAC" compile qresize.onnx -o rs_vela --target ethos-u55-128 --calibrate calib --vela ./fakevela --report > vela_out.txt 2> err.txt
check "--vela runs once per NPU segment with ExecuTorch's flags" '[ $? -eq 0 ] && [ $(wc -l < vela_args.txt) -eq $(count rs_vela npu) ] &&
    grep -q -- "--accelerator-config=ethos-u55-128 --config=Arm/vela.ini --output-format=raw --system-config=Ethos_U55_High_End_Embedded --memory-mode=Shared_Sram" vela_args.txt'
check "--vela keeps the command streams and summaries in the artifact" \
    '[ -s rs_vela/segment_0_npu_vela.bin ] && grep -q "Total SRAM" rs_vela/segment_0_npu.tosa.vela.log &&
     [ -s rs_vela/segment_0_npu_summary_Ethos_U55_High_End_Embedded.csv ]'
# every NPU segment's estimate from its summary, in the command's output, the text and JSON reports,
# and their sum over the NPU segments; the expected values from the fake's formula
cat > est.py <<'PYEOF'
import json, sys
r = json.load(open("rs_vela/partition_report.json"))
out, txt = open("vela_out.txt").read(), open("rs_vela/partition_report.txt").read()
npu = [s for s in r["segments"] if s["runs_on"] == "npu"]
ok = len(npu) >= 2
for s in r["segments"]:
    n = s["index"]
    if s["runs_on"] == "cpu":
        ok &= s["vela_ms"] is None and s["vela_cycles"] is None
        continue
    ms, cyc = (n + 1) * 1.25, (n + 1) * 1000 + 7
    ok &= abs(s["vela_ms"] - ms) < 1e-6 and s["vela_cycles"] == cyc
    line = "%.3f ms, %d cycles" % (ms, cyc)
    ok &= ("%s: Vela's estimate %s" % (s["file"], line)) in out and ("Vela's estimate: " + line + "\n") in txt
tms, tcyc = sum((s["index"] + 1) * 1.25 for s in npu), sum((s["index"] + 1) * 1000 + 7 for s in npu)
ok &= abs(r["vela_npu_ms"] - tms) < 1e-6 and r["vela_npu_cycles"] == tcyc
ok &= ("Vela's estimate: %.3f ms, %d cycles for %d of %d NPU segments" % (tms, tcyc, len(npu), len(npu))) in out
sys.exit(0 if ok else 1)
PYEOF
check "--vela: each NPU segment's estimated time and cycles in the output and the reports, and their total" '$PY est.py'
NOSUMMARY=1 "$TOSAC" compile qresize.onnx -o rs_vela2 --target ethos-u55-128 --calibrate calib --vela ./fakevela > vela_out2.txt 2> err.txt
check "--vela without a summary: no estimate, and the output says so" '[ $? -eq 0 ] && grep -q "segment_0_npu.tosa: Vela left no summary" vela_out2.txt &&
    grep -q "\"vela_npu_ms\": null" rs_vela2/partition_report.json && ! grep -q "Vela.s estimate" rs_vela2/partition_report.txt'
printf '#!/bin/sh\necho "Vela error: no" >&2\nexit 3\n' > badvela
chmod +x badvela
"$TOSAC" compile qresize.onnx -o rs_badvela --target ethos-u55-128 --calibrate calib --vela ./badvela > /dev/null 2> err.txt
check "a failing Vela is a clear error and writes nothing" '[ $? -ne 0 ] && grep -q "Vela (./badvela) failed on segment_0_npu.tosa" err.txt && grep -q "Vela error: no" err.txt && [ ! -e rs_badvela ] && ! ls -d rs_badvela.* 2> /dev/null'
"$TOSAC" compile qresize.onnx -o rs_novela --target ethos-u55-128 --calibrate calib --vela ./missing_vela > /dev/null 2> err.txt
check "a missing Vela is a clear error and writes nothing" '[ $? -ne 0 ] && grep -q "not an executable" err.txt && [ ! -e rs_novela ]'

finish
