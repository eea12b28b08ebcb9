#!/bin/bash
# zoo.lowering: the zoo's CNNs with `--lowering all` (the Ethos-U lowering, docs/QUANT.md "Target
# lowering"), 4 seeded random calibration inputs. Each lowered program must validate for PRO-INT
# alone and have its classifier head and global pools as CONV2D / DEPTHWISE_CONV2D / AVG_POOL2D (no
# MATMUL, no REDUCE_SUM over H or W), no RESCALE reading another RESCALE's output except the int8 ->
# int32 widening in front of an integer ADD/SUB/MUL (TOSA has no int8 ADD; ExecuTorch emits the
# same pair and Vela fuses each half into its neighbour), per-channel RESCALEs only right after a
# CONV2D/DEPTHWISE_CONV2D (where Vela fuses per-channel output scaling), and run bit-exactly against
# tools/quant/spec_run.py. Every choice but concat-direct (which changes q-params) must also run
# bit-identically to the default INT program. MODEL:a16w8 is the --a16w8 program, whose global pools
# (squeeze-and-excitation ones of an int16 TABLE's SiLU included) become AVG_POOL2D (docs/QUANT.md:
# results change by the rounding of the mean), so it is checked against the spec only.
# usage: lowering.sh TOSAC PYTHON MODELS_DIR WORK_DIR
set -u
TOSAC=$1 PY=$2 MODELS=$3 WORK=$4
SRC=$(cd "$(dirname "$0")/../.." && pwd)
fails=0
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
same=$("$TOSAC" compile --help | sed -n 's/.*comma-separated: all, none, //p' | tr -d ' ' | sed 's/concat-direct,//')
cat > "$WORK/check.py" <<'PYEOF'
import collections, json, sys
b = json.load(open(sys.argv[1]))["regions"][0]["blocks"][0]
ops = b["operators"]
tt = {t["name"]: t for t in b["tensors"]}
prod = {o["outputs"][0]: o for o in ops}
readers = collections.defaultdict(list)
for o in ops:
    for i in o["inputs"]:
        readers[i].append(o["op"])
bad = []
for o in ops:
    x = tt.get(o["inputs"][0], {}) if o["inputs"] else {}
    if o["op"] == "MATMUL":
        bad.append("MATMUL")
    if o["op"] == "REDUCE_SUM" and x.get("rank", len(x.get("shape", []))) == 4 and o["attributes"]["axis"] in (1, 2):
        bad.append("REDUCE_SUM over H/W")
    if o["op"] == "RESCALE" and o["attributes"]["per_channel"] and prod.get(o["inputs"][0], {}).get("op") not in ("CONV2D", "DEPTHWISE_CONV2D"):
        bad.append("per-channel RESCALE after " + str(prod.get(o["inputs"][0], {}).get("op")))
    if o["op"] == "RESCALE" and prod.get(o["inputs"][0], {}).get("op") == "RESCALE":
        widen = tt[o["outputs"][0]]["type"] == "INT32" and set(readers[o["outputs"][0]]) <= {"ADD", "SUB", "MUL"}
        if not widen:
            bad.append("RESCALE -> RESCALE -> " + ",".join(readers[o["outputs"][0]]))
c = collections.Counter(o["op"] for o in ops)
print(f"  {sys.argv[2]}: CONV2D {c['CONV2D']} DEPTHWISE_CONV2D {c['DEPTHWISE_CONV2D']} AVG_POOL2D {c['AVG_POOL2D']} "
      f"RESCALE {c['RESCALE']} (default {sys.argv[3]})", "; ".join(sorted(set(bad))))
sys.exit(1 if bad else 0)
PYEOF
for spec in resnet18 resnet50 mobilenet_v2 mobilenet_v3_small efficientnet_b0 squeezenet1_1 shufflenet_v2_x1_0 \
            resnet18:a16w8 mobilenet_v3_small:a16w8 efficientnet_b0:a16w8; do
    m=${spec%%:*} k=${spec/:/_}
    d=$WORK/$k.d.tosa l=$WORK/$k.l.tosa s=$WORK/$k.s.tosa
    flags=(--target TOSA-1.0+INT --calibrate random --calib-samples 4) ext=none
    if [ "$spec" != "$m" ]; then flags=(--target TOSA-1.0+INT+int16 --a16w8 --calibrate random --calib-samples 4) ext=int16; fi
    if ! "$TOSAC" compile "$MODELS/$m.onnx" -o "$d" "${flags[@]}" > /dev/null ||
       ! "$TOSAC" compile "$MODELS/$m.onnx" -o "$l" "${flags[@]}" --lowering all > /dev/null ||
       ! "$TOSAC" compile "$MODELS/$m.onnx" -o "$s" "${flags[@]}" --lowering "$same" > /dev/null ||
       ! "$TOSAC" validate --profile INT --ext $ext -q "$l"; then
        echo "FAIL $spec: compile/validate"; fails=$((fails + 1)); continue
    fi
    "$TOSAC" inspect --json "$d" > "$WORK/$k.d.json" && "$TOSAC" inspect --json "$l" > "$WORK/$k.l.json"
    nd=$("$PY" -c "import json,sys; print(sum(o['op'] == 'RESCALE' for o in json.load(open(sys.argv[1]))['regions'][0]['blocks'][0]['operators']))" "$WORK/$k.d.json")
    if ! "$PY" "$WORK/check.py" "$WORK/$k.l.json" "$spec" "$nd"; then echo "FAIL $spec: operator structure"; fails=$((fails + 1)); fi
    name=$("$PY" "$SRC/tools/quant/quantize_npy.py" "$l.quant.json" "$MODELS/$m.input.npy" "$WORK/$k.in.npy")
    if ! "$PY" "$SRC/tools/quant/spec_run.py" --tosac "$TOSAC" "$l" "$name=$WORK/$k.in.npy" > /dev/null; then
        echo "FAIL $spec: --lowering all is not bit-exact with the spec"; fails=$((fails + 1)); continue
    fi
    if [ "$spec" != "$m" ]; then echo "ok   $spec"; continue; fi
    rm -rf "$WORK/$k.od" "$WORK/$k.os"
    name=$("$PY" "$SRC/tools/quant/quantize_npy.py" "$d.quant.json" "$MODELS/$m.input.npy" "$WORK/$k.in.npy")
    if "$TOSAC" run "$d" -i "$name=$WORK/$k.in.npy" -o "$WORK/$k.od" > /dev/null &&
       "$TOSAC" run "$s" -i "$name=$WORK/$k.in.npy" -o "$WORK/$k.os" > /dev/null &&
       diff <(grep -v '"program":' "$d.quant.json") <(grep -v '"program":' "$s.quant.json") > /dev/null && diff -r "$WORK/$k.od" "$WORK/$k.os" > /dev/null; then
        echo "ok   $spec"
    else echo "FAIL $spec: --lowering $same is not bit-identical to the default program"; fails=$((fails + 1)); fi
done
echo "$fails failed"
[ $fails -eq 0 ]
