#!/bin/bash
# zoo.threads: every zoo model's FP32 program, and the INT8 programs of four CNNs, give the same
# output bytes on 1, 2 and 3 threads (`tosac run --threads N`: large operators split into output
# tiles, kernels/kernel.h tosac_kparallel), and the large ones really run on that many threads;
# the INT8 compile (`tosac compile --threads N`) gives the same program bytes on 1, 2 and 3 threads.
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
# the INT8 compile itself (calibration runs and their statistics split over threads) gives the
# same program bytes for 1, 2 and 3 threads, with the percentile histograms and with minmax
for m in resnet18 mobilenet_v2 efficientnet_b0 shufflenet_v2_x1_0; do
    ok=1
    for t in 1 2 3; do
        for meth in percentile minmax; do
            if ! "$TOSAC" compile "$MODELS/$m.onnx" -o "$m.i8.$meth.t$t.tosa" --target TOSA-1.0+INT --calibrate random \
                 --calib-samples 2 --calib-method $meth --threads $t > /dev/null 2>&1; then
                echo "FAIL $m: INT8 compile ($meth, $t threads)"; fails=$((fails + 1)); ok=0
            elif [ $t -gt 1 ] && ! cmp -s "$m.i8.$meth.t1.tosa" "$m.i8.$meth.t$t.tosa"; then
                echo "FAIL $m: the INT8 program ($meth) differs between 1 and $t compile threads"; fails=$((fails + 1)); ok=0
            fi
        done
    done
    [ $ok = 1 ] && echo "ok   $m.int8 compile: same bytes on 1, 2, 3 threads" || continue
    cp "$m.i8.percentile.t1.tosa" "$m.i8.tosa" && cp "$m.i8.percentile.t1.tosa.quant.json" "$m.i8.tosa.quant.json"
    check_prog "$m.int8" "$m.i8.tosa" "$MODELS/$m.input.npy"
done
echo "$count programs, $threaded of them on 3 threads"
[ $count -ge 14 ] && [ $threaded -ge 10 ] || { echo "FAIL too few programs checked, or threaded"; fails=$((fails + 1)); }
echo "$fails failed"
[ $fails -eq 0 ]
