#!/bin/bash
# tosac compile: the pass pipeline seen from the command line (--report, --dump-after,
# --io-layout nhwc, IDENTITY fan-out, errors leave no output file). Numbers against onnxruntime
# are the model zoo's job (tests/zoo); here the NHWC program must compute exactly what the NCHW
# one does, element for element after the transposition.
. "$TOSAC_SOURCE_DIR/tests/harness/script_lib.sh" "$@"
$PY "$TOSAC_SOURCE_DIR/tests/onnx/make_small_cnn.py" . || exit 1

"$TOSAC" compile cnn.onnx -o cnn.tosa --report --verify-each > report.txt 2> err.txt
check "compile cnn" '[ $? -eq 0 ] && [ -s cnn.tosa ]'
check "report lists the steps" 'grep -q "^layout " report.txt && grep -q "^fold_conv_affine " report.txt && grep -q "^read ONNX" report.txt'
check "report counts ONNX ops in" 'grep -qE "^  BatchNormalization +1$" report.txt'
# the one MUL left is GlobalAveragePool's 1/(H*W); the two ADDs are the residual and Gemm's bias
check "BatchNorm folded into the conv" 'grep -qE "^  MUL +1$" report.txt && grep -qE "^  ADD +2$" report.txt'
check "only the input transpose is left" 'grep -q "^transposes: [0-9]* after import, 1 in the program" report.txt'
"$TOSAC" validate cnn.tosa --profile FP -q
check "validates under the FP profile" '[ $? -eq 0 ]'

"$TOSAC" compile cnn.onnx -o cnn_nhwc.tosa --io-layout nhwc --report > report_nhwc.txt
check "io-layout nhwc: no transpose at all" 'grep -q "in the program" report_nhwc.txt && grep -q ", 0 in the program" report_nhwc.txt'
$PY -c "import numpy as np; np.save('x_nhwc.npy', np.load('x_nchw.npy').transpose(0, 2, 3, 1))"
"$TOSAC" run cnn.tosa -i x=x_nchw.npy -o o1 > /dev/null && "$TOSAC" run cnn_nhwc.tosa -i x=x_nhwc.npy -o o2 > /dev/null
check "run -o creates a missing output directory" '[ -f o1/y.npy ] && [ -f o2/y.npy ]'
"$TOSAC" run cnn.tosa -i x=x_nchw.npy -o no/such/dir > /dev/null 2> err_dir.txt
check "run -o with a missing parent fails clearly" '[ $? -ne 0 ] && grep -q "cannot create the output directory" err_dir.txt'
check "nhwc program computes the same output" '$PY -c "import numpy as np, sys; sys.exit(0 if np.array_equal(np.load(\"o1/y.npy\"), np.load(\"o2/y.npy\")) else 1)"'
"$TOSAC" run cnn_nhwc.tosa -i x=x_nchw.npy -o o2 > /dev/null 2>&1
check "nhwc program refuses an NCHW input" '[ $? -ne 0 ]'

"$TOSAC" compile cnn.onnx -o d.tosa --dump-after layout > dump.txt
check "dump-after layout prints that step only" '[ "$(grep -c "^// ---- after" dump.txt)" = 1 ] && grep -q "^// ---- after layout ----" dump.txt && grep -q "CONV2D" dump.txt'
"$TOSAC" compile cnn.onnx -o d.tosa --dump-after all > dump_all.txt
steps=$(sed -n '/^step /,/^total /p' report.txt | grep -vc '^step \|^total ')
check "dump-after all prints every step ($steps)" '[ "$steps" -ge 8 ] && [ "$(grep -c "^// ---- after" dump_all.txt)" = "$steps" ]'
rm -f d2.tosa
"$TOSAC" compile cnn.onnx -o d2.tosa --dump-after nosuchpass > /dev/null 2> err.txt
check "unknown pass is a usage error" '[ $? -eq 1 ] && grep -q "unknown pass" err.txt && [ ! -e d2.tosa ]'

"$TOSAC" compile dup.onnx -o dup.tosa --report > report_dup.txt
check "one IDENTITY per repeated output slot" 'grep -qE "^  IDENTITY +2$" report_dup.txt && grep -q "^identities for repeated outputs: 2" report_dup.txt'
mkdir -p o3 && "$TOSAC" run dup.tosa -i x=x_dup.npy -o o3 > /dev/null
check "repeated outputs keep their names and values" '$PY -c "import numpy as np, sys; x = np.load(\"x_dup.npy\"); y = np.exp(x); sys.exit(0 if np.allclose(np.load(\"o3/y.npy\"), y, rtol=1e-6) and np.allclose(np.load(\"o3/y2.npy\"), y, rtol=1e-6) and np.allclose(np.load(\"o3/z.npy\"), y, rtol=1e-6) else 1)"'

rm -f bad.tosa
"$TOSAC" compile bad.onnx -o bad.tosa 2> err.txt
check "unlowerable node: exit 1, names node and op, no output file" '[ $? -eq 1 ] && grep -q "bad.onnx: error: node .conv_w_input. (Conv)" err.txt && grep -q -- "--bind w=FILE.npy" err.txt && [ ! -e bad.tosa ]'

for m in edge_shape edge_empty edge_reshape; do
  "$TOSAC" compile $m.onnx -o $m.tosa > /dev/null 2> err_$m.txt
  rc=$?
  check "$m: exit 0 or 1, no crash ($rc)" '[ $rc -eq 0 ] || { [ $rc -eq 1 ] && grep -q "error:" err_$m.txt; }'
done

finish
