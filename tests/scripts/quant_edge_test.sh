#!/bin/bash
# Quantizer edge cases from fuzz_onnx_quant (issue 11): a Gemm with alpha = NaN and a HardSigmoid
# on a scalar compile without undefined behaviour (the ASan+UBSan build reports it on stderr as
# "runtime error"): the scalar one to a valid PRO-INT program that runs, the NaN one to an INT
# program or a clear error, never a crash.
. "$TOSAC_SOURCE_DIR/tests/harness/script_lib.sh" "$@"
$PY "$TOSAC_SOURCE_DIR/tests/onnx/make_quant_edge.py" . || exit 1

"$TOSAC" compile gemm_nan.onnx -o g.tosa --target TOSA-1.0+INT --calibrate random > /dev/null 2> g_err.txt
rc=$?
check "Gemm alpha=NaN: compiles or fails cleanly (rc $rc)" '[ $rc -le 1 ] && ! grep -q "runtime error\|Sanitizer" g_err.txt'
check "Gemm alpha=NaN: a message naming the missing range, not silence" '[ $rc -eq 0 ] || grep -q "finite value" g_err.txt'

"$TOSAC" compile hsig_scalar.onnx -o h.tosa --target TOSA-1.0+INT --calibrate random > /dev/null 2> h_err.txt
check "HardSigmoid on a scalar compiles" '[ $? -eq 0 ] && ! grep -q "runtime error\|Sanitizer" h_err.txt'
"$TOSAC" validate --profile INT -q h.tosa
check "HardSigmoid on a scalar validates for PRO-INT" '[ $? -eq 0 ]'
$PY -c "
import json, numpy as np
q = json.load(open('h.tosa.quant.json'))['inputs'][0]
np.save('xq.npy', np.array(np.clip(np.round(0.5 / q['scale']) + q['zero_point'], -128, 127), np.int8))"
"$TOSAC" run h.tosa -i x=xq.npy -o hout > /dev/null 2> r_err.txt
check "and runs" '[ $? -eq 0 ] && ! grep -q "runtime error\|Sanitizer" r_err.txt'
finish
