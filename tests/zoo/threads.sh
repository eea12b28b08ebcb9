#!/bin/bash
# zoo.threads: every zoo model's FP32 program, and the INT8 programs of four CNNs, give the same
# output bytes on 1, 2 and 3 threads (`tosac run --threads N`: large operators split into output
# tiles, kernels/kernel.h tosac_kparallel), and the large ones really run on that many threads.
# usage: threads.sh TOSAC MODELS_DIR WORK_DIR
set -u
TOSAC=$1 MODELS=$2 WORK=$3
fails=0 count=0 threaded=0
rm -rf "$WORK" && mkdir -p "$WORK" || exit 1
cd "$WORK" || exit 1
check_prog() { # NAME PROGRAM INPUT
    local n=$1 prog=$2 inp=$3 t
    for t in 1 2 3; do
        if ! "$TOSAC" run "$prog" -i "input=$inp" -o "$n.t$t" --threads $t --time 2> "$n.t$t.err" > /dev/null; then
            echo "FAIL $n: run on $t threads: $(tail -c 300 "$n.t$t.err")"; fails=$((fails + 1)); return
        fi
    done
    grep -q "on 3 threads" "$n.t3.err" && threaded=$((threaded + 1))
    if diff -r "$n.t1" "$n.t2" > /dev/null && diff -r "$n.t1" "$n.t3" > /dev/null; then echo "ok   $n"
    else echo "FAIL $n: outputs differ between thread counts"; fails=$((fails + 1)); fi
    count=$((count + 1))
}
for f in "$MODELS"/*.onnx; do
    m=$(basename "$f" .onnx)
    [ -f "$MODELS/$m.input.npy" ] || continue
    case $m in dup_output|equal_constants|mlp) continue ;; esac # too small to start threads
    "$TOSAC" compile "$f" -o "$m.fp.tosa" > /dev/null || { echo "FAIL $m: compile"; fails=$((fails + 1)); continue; }
    check_prog "$m.fp32" "$m.fp.tosa" "$MODELS/$m.input.npy"
done
for m in resnet18 mobilenet_v2 efficientnet_b0 shufflenet_v2_x1_0; do
    if ! "$TOSAC" compile "$MODELS/$m.onnx" -o "$m.i8.tosa" --target TOSA-1.0+INT --calibrate random \
         --calib-samples 2 > /dev/null; then
        echo "FAIL $m: INT8 compile"; fails=$((fails + 1)); continue
    fi
    check_prog "$m.int8" "$m.i8.tosa" "$MODELS/$m.input.npy"
done
echo "$count programs, $threaded of them on 3 threads"
[ $count -ge 14 ] && [ $threaded -ge 10 ] || { echo "FAIL too few programs checked, or threaded"; fails=$((fails + 1)); }
echo "$fails failed"
[ $fails -eq 0 ]
