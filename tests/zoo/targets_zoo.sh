#!/bin/bash
# zoo.targets: the zoo's CNNs quantized for one target of each Ethos-U family (U55, U65, U85)
# must give one NPU segment and no CPU segment (the report says 100% NPU), the segment must
# validate on its own as PRO-INT level 8K with the target's extensions, and `tosac run` on the
# artifact must give the outputs of the unpartitioned INT program for the target (`-o FILE.tosa`)
# bit for bit. The other zoo models (vit_small, autoencoder, mlp, dup_output, equal_constants)
# and --a16w8 programs of resnet8, ds_cnn, mobilenet_v1_025, autoencoder and vit_small are
# partitioned too: every segment must validate (PRO-INT 8K and every rule, `tosac validate`), the
# chained segments must be bit-identical, and what they keep off the NPU is printed with its rule.
# For every CNN (the ImageNet ones and the MLPerf Tiny ds_cnn, mobilenet_v1_025, resnet8) on every
# target, check.py also asserts, from the segments' operators and the partition report:
#   - head and pool: no MATMUL, and REDUCE_SUM only over the last axis (none over H or W);
#   - "every RESCALE fuses" (docs/TARGETS.md): every RESCALE of an NPU segment fuses into a
#     neighbouring NPU operator (the report's note: into its producer as output scaling or into
#     its reader as input scaling; the segment counts no standalone RESCALE), and where a RESCALE
#     reads another RESCALE's output, the first reads the INT32 result of a CONV2D,
#     DEPTHWISE_CONV2D, ADD, SUB, MUL or REDUCE_SUM that nothing else reads and fuses into it, and
#     the second writes the INT32 input of the one ADD/SUB/MUL that reads it and fuses into that:
#     so no RESCALE is left standalone and none feeds another in the graph Vela schedules.
# The --a16w8 programs: their int16 TABLEs run on the NPU everywhere (Vela 5.1.0 makes them its
# 16-bit LUT, docs/TARGETS.md), so on U55/U65 only int16 MATMULs (and the RESCALE of their INT48
# result, which only a MATMUL it fuses into could take) go to the CPU, and on U85 each program is
# one NPU segment; mobilenet_v3_small and efficientnet_b0 (SiLU/hard-swish TABLEs, no MATMUL of two
# activations) are one NPU segment on every target.
# usage: targets_zoo.sh TOSAC MODELS_DIR WORK_DIR [SPEC...]
# SPEC: MODEL or MODEL:a16w8; default every model and program below (the sanitizer build, where a
# quantized compile is ~10x slower, passes a few small ones: tests/zoo/CMakeLists.txt)
set -u
TOSAC=$1 MODELS=$2 WORK=$3
shift 3
fails=0
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
cat > "$WORK/check.py" <<'PYEOF'
# check.py TOSAC ARTIFACT: the head/pool and "every RESCALE fuses" properties (see targets_zoo.sh)
import collections, json, subprocess, sys
tosac, art = sys.argv[1], sys.argv[2]
rep = json.load(open(art + "/partition_report.json"))
note = {o["output"]: o.get("note") or "" for o in rep["operators"]}
bad = ["segment %d: %d standalone RESCALEs" % (s["index"], s["standalone_rescales"]) for s in rep["segments"]
       if s["runs_on"] == "npu" and s["standalone_rescales"]]
for s in rep["segments"]:
    if s["runs_on"] != "npu":
        continue
    b = json.loads(subprocess.check_output([tosac, "inspect", "--json", art + "/" + s["file"]]))["regions"][0]["blocks"][0]
    ops = b["operators"]
    tt = {t["name"]: t for t in b["tensors"]}
    prod = {o["outputs"][0]: o for o in ops}
    readers = collections.defaultdict(list)
    for o in ops:
        for i in o["inputs"]:
            readers[i].append(o)
    outs = set(b["outputs"])
    for o in ops:
        x = tt.get(o["inputs"][0], {}) if o["inputs"] else {}
        if o["op"] == "MATMUL":
            bad.append("MATMUL " + o["outputs"][0])
        if o["op"] == "REDUCE_SUM" and o["attributes"]["axis"] != len(x["shape"]) - 1:
            bad.append("REDUCE_SUM over axis %d of %s" % (o["attributes"]["axis"], x["shape"]))
        if o["op"] != "RESCALE":
            continue
        y = o["outputs"][0]
        if not note[y].startswith("fused"):
            bad.append("RESCALE %s: %s" % (y, note[y]))
        r1 = prod.get(o["inputs"][0])
        if not r1 or r1["op"] != "RESCALE":
            continue
        p, w = prod.get(r1["inputs"][0], {}), r1["inputs"][0]
        rd = readers[y]
        if not (p.get("op") in ("CONV2D", "DEPTHWISE_CONV2D", "ADD", "SUB", "MUL", "REDUCE_SUM") and tt[w]["type"] == "INT32"
                and len(readers[w]) == 1 and w not in outs and note[r1["outputs"][0]] == "fused into its producer as output scaling"):
            bad.append("RESCALE %s feeds RESCALE %s, and does not fuse into a producer (%s)" % (r1["outputs"][0], y, p.get("op")))
        if not (tt[y]["type"] == "INT32" and len(rd) == 1 and rd[0]["op"] in ("ADD", "SUB", "MUL") and y not in outs
                and note[y] == "fused into its reader as input scaling"):
            bad.append("RESCALE %s reads RESCALE %s, and does not fuse into an ADD/SUB/MUL reading it" % (y, r1["outputs"][0]))
for m in sorted(set(bad))[:8]:
    print("   ", m)
sys.exit(1 if bad else 0)
PYEOF
CNNS=" resnet18 resnet50 mobilenet_v2 mobilenet_v3_small efficientnet_b0 squeezenet1_1 shufflenet_v2_x1_0 ds_cnn mobilenet_v1_025 resnet8 "
# the other zoo models and --a16w8 programs: partitioned, validated and bit-identical, whatever the segments
SPECS="$*"
[ -n "$SPECS" ] || SPECS="$CNNS vit_small autoencoder mlp dup_output equal_constants
    resnet8:a16w8 ds_cnn:a16w8 mobilenet_v1_025:a16w8 autoencoder:a16w8 vit_small:a16w8
    mobilenet_v3_small:a16w8 efficientnet_b0:a16w8"
for spec in $SPECS; do
    m=${spec%%:*} k=${spec/:/_}
    flags=(--calibrate random --calib-samples 2)
    [ "$spec" != "$m" ] && flags+=(--a16w8)
    cnn=no
    [[ "$CNNS" == *" $spec "* ]] && cnn=yes
    for t in ethos-u55-128 ethos-u65-256 ethos-u85-256; do
        # the reference: the same program lowered for the target, not partitioned (-o FILE.tosa)
        ref=$WORK/${k}_$t.tosa art=$WORK/${k}_$t
        if ! "$TOSAC" compile "$MODELS/$m.onnx" -o "$ref" --target $t "${flags[@]}" > /dev/null ||
           ! "$TOSAC" run "$ref" -i input="$MODELS/$m.input.npy" -o "$WORK/${k}_${t}_ref" > /dev/null ||
           ! "$TOSAC" compile "$MODELS/$m.onnx" -o "$art" --target $t "${flags[@]}" > /dev/null; then
            echo "FAIL $spec $t: compile"; fails=$((fails + 1)); continue
        fi
        npu=$(grep -c '"runs_on": "npu", "operators"' "$art/manifest.json")
        cpu=$(grep -c '"runs_on": "cpu", "operators"' "$art/manifest.json")
        why=""
        if [ "$cpu" -ne 0 ]; then why=$(grep -A100 "^kept off the NPU" "$art/partition_report.txt" | grep "^  op" | cut -c1-160 | head -5); fi
        bad=0
        for s in "$art"/segment_*_npu.tosa; do
            [ -e "$s" ] || continue
            "$TOSAC" validate --profile INT --ext int16,int4,doubleround --level 8K -q "$s" || bad=1
        done
        "$TOSAC" validate -q "$art" || bad=1
        rm -rf "$WORK/${k}_${t}_out"
        "$TOSAC" run "$art" -i input="$MODELS/$m.input.npy" -o "$WORK/${k}_${t}_out" > /dev/null || bad=1
        diff -r "$WORK/${k}_${t}_out" "$WORK/${k}_${t}_ref" > /dev/null || bad=1
        if [ $bad -ne 0 ]; then
            echo "FAIL $spec $t: a segment does not validate or the artifact's output differs from the INT program"
            fails=$((fails + 1))
        elif [ $cnn = yes ] && { [ "$npu" -ne 1 ] || [ "$cpu" -ne 0 ] || ! grep -q "(100.0%)" "$art/partition_report.txt"; }; then
            echo "FAIL $spec $t: $npu NPU and $cpu CPU segments, expected one NPU segment"; echo "$why"
            fails=$((fails + 1))
        elif [ "$spec" != "$m" ] && ! python3 -c "
import json, sys
r = json.load(open('$art/partition_report.json'))
cpu = {(o['op'], o['rule']) for o in r['operators'] if o['runs_on'] == 'cpu'}
one = '$t'.startswith('ethos-u85') or '$m' in ('mobilenet_v3_small', 'efficientnet_b0')
sys.exit(0 if cpu <= {('MATMUL', 'MATMUL_INT16'), ('RESCALE', 'RESCALE_INT48')} and not (one and cpu) else 1)"; then
            echo "FAIL $spec $t: $npu NPU and $cpu CPU segments; expected only int16 MATMULs on the CPU (none on U85)"; echo "$why"
            fails=$((fails + 1))
        elif [ $cnn = yes ] && ! python3 "$WORK/check.py" "$TOSAC" "$art"; then
            echo "FAIL $spec $t: a MATMUL or a REDUCE_SUM over H/W, or a RESCALE that does not fuse"
            fails=$((fails + 1))
        else
            echo "ok   $spec $t: $npu NPU, $cpu CPU segment(s), valid, bit-identical$([ $cnn = yes ] && echo ", every RESCALE fuses")"
            [ -n "$why" ] && echo "$why"
        fi
    done
done
echo "$fails failed"
[ $fails -eq 0 ]
