#!/bin/bash
# Every quantized test model (tests/onnx/make_quant_*.py: the CNN, the transformer block, the
# RESIZE neck, the lowering cases and the quantizer's edge cases), int8 and --a16w8, compiled for
# one target of each Ethos-U family (ethos-u55-128, ethos-u65-256, ethos-u85-256): the compile
# succeeds, every NPU segment validates alone as TOSA-1.0 PRO-INT level 8K with the target's
# extensions, and `tosac validate ART` (which also judges every NPU segment alone by every rule of
# the target's rule set, docs/TARGETS.md) accepts the artifact, and its chained segments run
# bit-identically to the unpartitioned INT program for the target (`-o FILE.tosa`). A model the
# quantizer refuses must be refused for that reason, never an internal error: gemm_nan (no finite
# range, quant_edge_test.sh).
. "$TOSAC_SOURCE_DIR/tests/harness/script_lib.sh" "$@"
for g in cnn edge lowering resize transformer; do
    $PY "$TOSAC_SOURCE_DIR/tests/onnx/make_quant_$g.py" . > /dev/null || exit 1
done
models=$(ls *.onnx | sed 's/\.onnx$//' | sort)
check "the test models are there ($(echo $models | wc -w))" '[ $(echo $models | wc -w) -ge 17 ]'
# an input for each model: its own held-out input when it has one, else seeded random data of the input's shape
cat > mkin.py <<'PYEOF'
import sys
import numpy as np
import onnx
m = onnx.load(sys.argv[1] + ".onnx")
x = m.graph.input[0]
shape = [d.dim_value or 1 for d in x.type.tensor_type.shape.dim]
np.save(sys.argv[1] + ".x.npy", np.random.default_rng(3).normal(0, 1, shape).astype(np.float32))
print(x.name)
PYEOF
for m in $models; do
    name=$($PY mkin.py $m) || { check "$m: an input" false; continue; }
    for t in ethos-u55-128 ethos-u65-256 ethos-u85-256; do
        for mode in int8 a16w8; do
            flags=(--target $t --calibrate random --calib-samples 2)
            [ $mode = a16w8 ] && flags+=(--a16w8)
            art=${m}_${t}_$mode
            if ! "$TOSAC" compile $m.onnx -o $art "${flags[@]}" > /dev/null 2> $art.err; then
                check "$m $t $mode: refused for the quantizer's reason" \
                    '[ $m = gemm_nan ] && grep -q "no quantization range" $art.err'
                continue
            fi
            bad=0
            for s in $art/segment_*_npu.tosa; do
                [ -e "$s" ] || continue
                "$TOSAC" validate --profile INT --ext int16,int4,doubleround --level 8K -q "$s" || bad=1
            done
            "$TOSAC" validate -q $art || bad=1
            "$TOSAC" compile $m.onnx -o $art.tosa "${flags[@]}" > /dev/null &&
                "$TOSAC" run $art.tosa -i $name=$m.x.npy -o $art.ref > /dev/null &&
                "$TOSAC" run $art -i $name=$m.x.npy -o $art.out > /dev/null &&
                diff -r $art.ref $art.out > /dev/null || bad=1
            check "$m $t $mode: $(grep -c '"runs_on": "npu", "operators"' $art/manifest.json) NPU + $(grep -c '"runs_on": "cpu", "operators"' $art/manifest.json) CPU segments, every NPU segment PRO-INT 8K and within every rule, bit-identical" '[ $bad -eq 0 ]'
        done
    done
done
finish
