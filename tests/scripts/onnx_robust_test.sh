#!/bin/bash
# tosac compile of malformed ONNX models (tests/onnx/make_malformed.py): every node's input and
# output counts are checked against its row of src/onnx/onnx_ops*.def before the converter runs,
# attributes of the wrong type and graphs without outputs are errors. Each must exit 1 with the
# named message and write nothing; none may crash. Optional inputs given as empty names compile and
# compute what numpy says.
. "$TOSAC_SOURCE_DIR/tests/harness/script_lib.sh" "$@"
$PY "$TOSAC_SOURCE_DIR/tests/onnx/make_malformed.py" . || exit 1

# refused MODEL MESSAGE: exit 1, MESSAGE on stderr, no output file
refused() {
    local m=$1 msg=$2 rc
    rm -f "$m.tosa"
    "$TOSAC" compile "$m.onnx" -o "$m.tosa" > /dev/null 2> "$m.err"
    rc=$?
    check "$m: exit 1 ($rc), no output, says: $msg" '[ $rc -eq 1 ] && [ ! -e "$m.tosa" ] && grep -qF -- "$msg" "$m.err"'
}

refused cast_no_output "node 'c' (Cast): needs 1 output, has 0"
refused quant_no_output "node 'q' (QuantizeLinear): needs 1 output, has 0"
refused add_one_input "node 'a' (Add): needs 2 inputs, has 1"
refused relu_two_inputs "node 'r' (Relu): needs 1 input, has 2"
refused topk_one_output "node 't' (TopK): needs 2 outputs, has 1"
refused relu_two_outputs "node 'r' (Relu): needs 1 output, has 2"
refused relu_empty_input "node 'r' (Relu): input 0 is required but its name is empty"
refused cast_empty_output "node 'c' (Cast): output 0 is required but its name is empty"
refused if_branch_cast_no_output "node 'inner' (Cast): needs 1 output, has 0"
refused cast_to_string "node 'c' (Cast): attribute 'to' has type STRING, expected INT"
refused transpose_perm_floats "node 't' (Transpose): attribute 'perm' has type FLOATS, expected INTS"
refused leaky_alpha_int "node 'l' (LeakyRelu): attribute 'alpha' has type INT, expected FLOAT"
refused no_outputs "graph 'no_outputs' has no outputs: there is nothing to compute"
refused resize_oversize "node 'rs' (Resize): a tensor would have more than 2147483648 elements"
refused resize_huge "node 'rs' (Resize): axis 3 (2 -> 6291460) is too large to resize as a matrix"

"$TOSAC" compile clip_empty_min.onnx -o clip.tosa > /dev/null 2> clip.err &&
    "$TOSAC" run clip.tosa -i x=x.npy -o clip_out > /dev/null 2>> clip.err
check "Clip with an empty min compiles and clips at max only" \
    '$PY -c "import numpy as np, sys; x = np.load(\"x.npy\"); sys.exit(0 if np.array_equal(np.load(\"clip_out/y.npy\"), np.minimum(x, np.float32(0.25))) else 1)"'
"$TOSAC" compile resize_empty_roi_scales.onnx -o rs.tosa > /dev/null 2> rs.err &&
    "$TOSAC" run rs.tosa -i x4=x4.npy -o rs_out > /dev/null 2>> rs.err
check "Resize with empty roi and scales compiles (nearest x2)" \
    '$PY -c "import numpy as np, sys; x = np.load(\"x4.npy\"); sys.exit(0 if np.array_equal(np.load(\"rs_out/y4.npy\"), x.repeat(2, axis=2).repeat(2, axis=3)) else 1)"'

finish
