#!/bin/bash
# zoo.targets: the zoo's CNNs quantized for one target of each Ethos-U family (U55, U65, U85)
# must give one NPU segment and no CPU segment (the report says 100% NPU), the segment must
# validate on its own as PRO-INT level 8K with the target's extensions, and `tosac run` on the
# artifact must give the outputs of the unpartitioned INT program for the target (`-o FILE.tosa`)
# bit for bit. vit_small (not a
# CNN) is partitioned too: every operator it keeps off the NPU is printed with its rule, and its
# chained segments must be bit-identical as well.
# usage: targets_zoo.sh TOSAC MODELS_DIR WORK_DIR
set -u
TOSAC=$1 MODELS=$2 WORK=$3
fails=0
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
for m in resnet18 mobilenet_v2 mobilenet_v3_small efficientnet_b0 squeezenet1_1 shufflenet_v2_x1_0 vit_small; do
    for t in ethos-u55-128 ethos-u65-256 ethos-u85-256; do
        # the reference: the same program lowered for the target, not partitioned (-o FILE.tosa)
        ref=$WORK/${m}_$t.tosa art=$WORK/${m}_$t
        if ! "$TOSAC" compile "$MODELS/$m.onnx" -o "$ref" --target $t --calibrate random --calib-samples 2 > /dev/null ||
           ! "$TOSAC" run "$ref" -i input="$MODELS/$m.input.npy" -o "$WORK/${m}_${t}_ref" > /dev/null ||
           ! "$TOSAC" compile "$MODELS/$m.onnx" -o "$art" --target $t --calibrate random --calib-samples 2 > /dev/null; then
            echo "FAIL $m $t: compile"; fails=$((fails + 1)); continue
        fi
        npu=$(grep -c '"runs_on": "npu", "operators"' "$art/manifest.json")
        cpu=$(grep -c '"runs_on": "cpu", "operators"' "$art/manifest.json")
        why=""
        if [ "$cpu" -ne 0 ]; then why=$(grep -A100 "^kept off the NPU" "$art/partition_report.txt" | grep "^  op" | cut -c1-160); fi
        bad=0
        for s in "$art"/segment_*_npu.tosa; do
            "$TOSAC" validate --profile INT --ext int16,int4,doubleround --level 8K -q "$s" || bad=1
        done
        "$TOSAC" validate -q "$art" || bad=1
        rm -rf "$WORK/${m}_${t}_out"
        "$TOSAC" run "$art" -i input="$MODELS/$m.input.npy" -o "$WORK/${m}_${t}_out" > /dev/null || bad=1
        cmp -s "$WORK/${m}_${t}_out/output.npy" "$WORK/${m}_${t}_ref/output.npy" || bad=1
        if [ $bad -ne 0 ]; then
            echo "FAIL $m $t: a segment does not validate or the artifact's output differs from the INT program"
            fails=$((fails + 1))
        elif [ "$m" != vit_small ] && { [ "$npu" -ne 1 ] || [ "$cpu" -ne 0 ] || ! grep -q "(100.0%)" "$art/partition_report.txt"; }; then
            echo "FAIL $m $t: $npu NPU and $cpu CPU segments, expected one NPU segment"; echo "$why"
            fails=$((fails + 1))
        else
            echo "ok   $m $t: $npu NPU, $cpu CPU segment(s), bit-identical"
            [ -n "$why" ] && echo "$why"
        fi
    done
done
echo "$fails failed"
[ $fails -eq 0 ]
