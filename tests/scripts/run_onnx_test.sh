#!/bin/sh
# `tosac run model.onnx` as a user runs it (issue 12): inputs TOSA needs as constants bound from the
# -i files, symbolic dims from the data, .npy types converted with range checks, --input-shape and
# --bind as in compile, and the input checks. Expected values: libonnx-testdata's own outputs
# (decoded by python3-onnx) and numpy.
. "$TOSAC_SOURCE_DIR/tests/harness/script_lib.sh" "$@"
tosac=$TOSAC
node=/usr/share/libonnx-testdata/data/node

# a case's inputs as ONNX stores them (int64 stays int64) and its expected outputs
$PY - "$node" <<'EOF' || exit 1
import os, sys, onnx, numpy as np
from onnx import numpy_helper
node = sys.argv[1]
for case in ("test_reshape_reordered_all_dims", "test_basic_conv_with_padding", "test_gather_0",
             "test_cast_DOUBLE_to_FLOAT"):
    m = onnx.load(f"{node}/{case}/model.onnx")
    os.makedirs(case)
    for k, vi in enumerate(m.graph.input):
        t = onnx.TensorProto(); t.ParseFromString(open(f"{node}/{case}/test_data_set_0/input_{k}.pb", "rb").read())
        np.save(f"{case}/{vi.name}.npy", numpy_helper.to_array(t))
    for k, vi in enumerate(m.graph.output):
        t = onnx.TensorProto(); t.ParseFromString(open(f"{node}/{case}/test_data_set_0/output_{k}.pb", "rb").read())
        np.save(f"{case}/expected_{vi.name}.npy", numpy_helper.to_array(t))
# a model with a symbolic batch dimension, and one whose Reshape shape is a graph input
from onnx import helper, TensorProto
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "dyn", [x], [y])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]), "dyn.onnx")
# the same with a negative batch dimension (the IR says dim_value is non-negative)
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [-5, 4])
g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "neg", [x], [y])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]), "negdim.onnx")
# an output that varies by far less than one int8 step of its range: constant once quantized
w = helper.make_tensor("w", TensorProto.FLOAT, [1], [1e-4])
b = helper.make_tensor("b", TensorProto.FLOAT, [1], [100.0])
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])
g = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["t"]), helper.make_node("Add", ["t", "b"], ["y"])],
                      "flat", [x], [y], [w, b])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]), "flat.onnx")
# a piecewise function (GREATER/SELECT inside) after a conv: one int8 TABLE once quantized
xs = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])
ys = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 6, 6])
wc = helper.make_tensor("w", TensorProto.FLOAT, [2, 2, 1, 1], [1.0, 0.5, -0.5, 1.0])
g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["c"]),
                       helper.make_node("Shrink", ["c"], ["y"], lambd=0.5, bias=0.25)], "shrink", [xs], [ys], [wc])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)]), "shrink.onnx")
np.save("xs.npy", np.random.RandomState(1).randn(1, 2, 6, 6).astype(np.float32))
np.save("x3.npy", np.array([[-1, 2, -3, 4], [5, -6, 7, -8], [0, 1, -1, 2]], np.float32))
EOF

# a Reshape whose shape and a Conv whose weights are graph inputs: bound from their -i files
for c in "test_reshape_reordered_all_dims data shape reshaped" "test_basic_conv_with_padding x W y"; do
    set -- $c
    check "$1 runs as a user runs it" \
        "'$tosac' run $node/$1/model.onnx -i $2=$1/$2.npy -i $3=$1/$3.npy -o $1/out 2>$1/err"
    check "$1 values" "$PY -c \"
import numpy as np; assert np.allclose(np.load('$1/out/$4.npy'), np.load('$1/expected_$4.npy'), rtol=1e-5, atol=1e-6)\""
done
# int64 indices and float64 data are converted to the program's INT32 / FP32 inputs
check "int64 indices" "'$tosac' run $node/test_gather_0/model.onnx -i data=test_gather_0/data.npy \
    -i indices=test_gather_0/indices.npy -o test_gather_0/out"
check "int64 indices values" "$PY -c \"
import numpy as np; assert np.array_equal(np.load('test_gather_0/out/y.npy'), np.load('test_gather_0/expected_y.npy'))\""
check "float64 data" "'$tosac' run $node/test_cast_DOUBLE_to_FLOAT/model.onnx \
    -i input=test_cast_DOUBLE_to_FLOAT/input.npy -o cast_out"
check "float64 data values" "$PY -c \"
import numpy as np
assert np.array_equal(np.load('cast_out/output.npy'), np.load('test_cast_DOUBLE_to_FLOAT/expected_output.npy'))\""
# a value that does not fit is an error naming the input, the file, the element and the value
$PY -c "import numpy as np; a = np.array([0, 1, 2], np.int64); a[2] = 3 << 32; np.save('big.npy', a)"
check "int64 beyond INT32 refused" "! '$tosac' run $node/test_gather_0/model.onnx -i data=test_gather_0/data.npy \
    -i indices=big.npy 2>big.err"
check "its message" "grep -q \"big.npy for input 'indices': element 2 (index \\[2\\]) is 12884901888, which the input's type INT32 cannot hold\" big.err"
$PY -c "import numpy as np; a = np.zeros((3, 4)); a[1, 2] = 1e39; np.save('huge.npy', a)"
check "float64 beyond FP32 refused" "! '$tosac' run $node/test_cast_DOUBLE_to_FLOAT/model.onnx -i input=huge.npy 2>huge.err"
check "its message" "grep -q \"element 6 (index \\[1,2\\]) is 1e+39\" huge.err"

# a symbolic dimension takes the data's size in run; compile takes it as 1 and says so
check "symbolic batch from the data" "'$tosac' run dyn.onnx -i x=x3.npy -o dyn_out"
check "symbolic batch values" "$PY -c \"
import numpy as np; assert np.array_equal(np.load('dyn_out/y.npy'), np.maximum(np.load('x3.npy'), 0))\""
check "compile notes the symbolic dimension" "'$tosac' compile dyn.onnx -o dyn.tosa 2>dyn.err && \
    grep -q \"note: input 'x': dimension 0 is symbolic ('N'); it is taken as 1 (set it with --input-shape x=DIMS)\" dyn.err"
check "--input-shape in run" "'$tosac' run dyn.onnx --input-shape x=3x4 -i x=x3.npy -o dyn_out2"
check "--input-shape of another size in run" "! '$tosac' run dyn.onnx --input-shape x=2x4 -i x=x3.npy 2>dyn2.err && \
    grep -q 'has shape \\[3,4\\] but the input has shape \\[2,4\\]' dyn2.err"

# input checks: unknown names and bad dimensions are errors, in compile and run
for cmd in "compile dyn.onnx -o bad.tosa" "run dyn.onnx -i x=x3.npy"; do
    check "$cmd: unknown --input-shape name" "! '$tosac' $cmd --input-shape X=3x4 2>e.txt && \
        grep -q \"input-shape X: the model has no graph input of that name\" e.txt"
    check "$cmd: unknown --bind name" "! '$tosac' $cmd --bind z=x3.npy 2>e.txt && \
        grep -q \"bind z: the model has no graph input of that name\" e.txt"
    for dims in 0x4 -5x4 3xa 3x; do
        check "$cmd: --input-shape x=$dims refused" "! '$tosac' $cmd --input-shape x=$dims 2>e.txt && \
            grep -q \"bad --input-shape 'x=$dims'\" e.txt"
    done
done
check "a negative dimension in the model is an error" "! '$tosac' compile negdim.onnx -o neg.tosa 2>e.txt && \
    grep -q \"input 'x': dimension 0 is -5; ONNX dimensions are non-negative\" e.txt && [ ! -e neg.tosa ]"
check "run: unknown -i name" "! '$tosac' run dyn.onnx -i x=x3.npy -i q=x3.npy 2>e.txt && \
    grep -q \"'q' is not an input of the model\" e.txt"
check "--bind of a .tosa refused" "! '$tosac' run dyn.tosa --bind x=x3.npy -i x=x3.npy 2>e.txt && \
    grep -q 'apply to .onnx models' e.txt"
# --bind in run, as in compile: the bound input is no program input
check "--bind in run" "'$tosac' run $node/test_reshape_reordered_all_dims/model.onnx \
    --bind shape=test_reshape_reordered_all_dims/shape.npy -i data=test_reshape_reordered_all_dims/data.npy -o bind_out"
check "--bind in run values" "$PY -c \"
import numpy as np
assert np.array_equal(np.load('bind_out/reshaped.npy'), np.load('test_reshape_reordered_all_dims/expected_reshaped.npy'))\""

# errors say what failed: a missing converter is not a missing --bind
check "no converter" "! '$tosac' run $node/test_det_2d/model.onnx -i x=x3.npy 2>e.txt && \
    grep -q 'no converter' e.txt && ! grep -q 'compile --bind' e.txt"
# an input that must be constant and has no -i file: the hint names it
check "missing constant input" "! '$tosac' run $node/test_reshape_reordered_all_dims/model.onnx \
    -i data=test_reshape_reordered_all_dims/data.npy 2>e.txt && grep -q \"input 'shape' must be\" e.txt"

# a piecewise function quantizes as a TABLE; the INT8 program follows the formula (numpy)
check "Shrink quantizes" "'$tosac' compile shrink.onnx -o shrink.tosa --target TOSA-1.0+INT --calibrate xs.npy --report \
    >shrink.rep 2>&1 && grep -q 'TABLE  *1' shrink.rep"
check "its values" "'$tosac' run shrink.tosa -i x=xs.npy -o shrink_out && $PY -c \"
import numpy as np
x = np.load('xs.npy'); c = np.einsum('oi,nihw->nohw', np.array([[1.0, 0.5], [-0.5, 1.0]]), x)
want = np.where(c < -0.5, c + 0.25, np.where(c > 0.5, c - 0.25, 0))
got = np.load('shrink_out/y.npy')
far = np.abs(np.abs(c) - 0.5) > 0.05  # next to the jumps at +-lambd one int8 step may cross them
assert far.mean() > 0.8 and np.abs(got - want)[far].max() < 0.05 * np.abs(want).max(), np.abs(got - want)[far].max()\""

# quantization that loses an output is a warning on stderr, without --report
check "constant INT8 output compiles" "'$tosac' compile flat.onnx -o flat.tosa --target TOSA-1.0+INT --calibrate random 2>flat.err"
check "constant INT8 output warned" "grep -q \"flat.onnx: warning: output 'y' of the quantized program is the constant 100 on the 2 calibration sample(s) checked while the FP program's output varies\" flat.err"
check "a program that keeps its signal is not warned about" "'$tosac' compile dyn.onnx -o dynq.tosa --target TOSA-1.0+INT \
    --calibrate random 2>dynq.err && ! grep -q warning dynq.err"
finish
