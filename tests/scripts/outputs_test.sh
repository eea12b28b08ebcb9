#!/bin/bash
# Output rules of every command (src/core/outfile.h, README "Output files"): an output that is an
# input (by device and inode, whatever the spelling), a directory or a non-regular file is
# refused; a character device is written in place and never replaced or deleted; all outputs of a
# compile (program, sidecar, SQNR report, QDQ model) appear together or not at all; a stale sidecar
# goes with an FP program written over an INT one; no temporary survives SIGINT/SIGTERM; errors
# give the OS reason. Also: a sidecar from another program is refused by `tosac run`, external data
# reached through a symbolic link is refused, a WHILE_LOOP that never ends stops at the iteration
# cap, and the weak answers (-i twice, NaN in calibration data, NaN inputs to an INT8 program).
. "$TOSAC_SOURCE_DIR/tests/harness/script_lib.sh" "$@"
EX=$TOSAC_SOURCE_DIR/examples
cp "$EX/small_cnn.onnx" m.onnx && cp "$EX/small_cnn_input.npy" in.npy || exit 1
mkdir calib && cp in.npy calib/a.npy && cp in.npy calib/b.npy
cp m.onnx m.orig && cp in.npy in.orig
no_temps() { ! ls -a | grep -q '\.tmp-' && ! ls -a calib | grep -q '\.tmp-'; }
INT="--target TOSA-1.0+INT --calibrate calib"

# ---- an output that is an input ------------------------------------------------------------------
"$TOSAC" compile m.onnx -o m.onnx 2> e1.txt
check "compile -o MODEL: refused, model intact" '[ $? -eq 1 ] && grep -q "same file as the input" e1.txt && cmp -s m.onnx m.orig'
ln m.onnx hard.onnx
"$TOSAC" compile m.onnx -o ./hard.onnx 2> e2.txt
check "compile -o a hard link of the model: refused (inode, not text)" '[ $? -eq 1 ] && grep -q "same file as the input" e2.txt && cmp -s m.onnx m.orig'
"$TOSAC" compile m.onnx -o q.tosa $INT --report-json calib/a.npy 2> e3.txt
check "--report-json aimed at a calibration file: refused, file intact, nothing written" \
    '[ $? -eq 1 ] && grep -q "calib/a.npy: is an input and the output" e3.txt && cmp -s calib/a.npy in.orig && [ ! -e q.tosa ] && [ ! -e q.tosa.quant.json ] && no_temps'
"$TOSAC" compile m.onnx -o q.tosa $INT --emit-qdq m.onnx 2> e4.txt
check "--emit-qdq aimed at the model: refused, model intact" '[ $? -eq 1 ] && grep -q "same file as the input" e4.txt && cmp -s m.onnx m.orig && [ ! -e q.tosa ]'
"$TOSAC" compile m.onnx -o calib/b.npy $INT 2> e5.txt
check "-o aimed at a file of the calibration folder: refused" '[ $? -eq 1 ] && grep -q "never writes over its inputs" e5.txt && cmp -s calib/b.npy in.orig'
"$TOSAC" compile m.onnx -o m.onnx.quant.json.tosa $INT --report-json m.onnx.quant.json.tosa.quant.json 2> e6.txt
check "two outputs that are one file: refused" '[ $? -eq 1 ] && grep -q "is also the output" e6.txt && no_temps'
cp m.orig m.onnx && cp in.orig calib/a.npy && cp in.orig calib/b.npy # so that a failure above spoils no later case
"$TOSAC" compile m.onnx -o fp.tosa || exit 1
cp fp.tosa fp.orig
for cmd in inspect print; do
    "$TOSAC" $cmd fp.tosa -o fp.tosa 2> e_$cmd.txt
    check "$cmd -o FILE: refused, file intact" '[ $? -eq 1 ] && grep -q "same file as the input" e_$cmd.txt && cmp -s fp.tosa fp.orig'
done
ln -s in.npy y.npy
"$TOSAC" run fp.tosa -i x=y.npy -o . 2> e_run.txt
check "run -o DIR whose output is an input (through a link): refused" '[ $? -eq 3 ] && grep -q "same file as the input" e_run.txt && cmp -s in.npy in.orig'

# ---- directories, FIFOs, devices ---------------------------------------------------------------------
mkdir adir
"$TOSAC" compile m.onnx -o adir 2> e7.txt
check "-o a directory: refused" '[ $? -eq 1 ] && grep -q "is a directory" e7.txt'
mkfifo fifo
timeout 60 "$TOSAC" inspect fp.tosa -o fifo 2> e8.txt
check "-o a FIFO: refused (no hang)" '[ $? -eq 1 ] && grep -q "not a regular file" e8.txt && [ -p fifo ]'
"$TOSAC" compile m.onnx -o q.tosa $INT 2> /dev/null > /dev/null
"$TOSAC" compile m.onnx -o q.tosa 2> e9.txt
check "a stale INT sidecar goes when an FP program replaces the INT one" '[ $? -eq 0 ] && [ -s q.tosa ] && [ ! -e q.tosa.quant.json ]'
mkdir d.tosa
"$TOSAC" compile m.onnx -o d.tosa $INT 2> e10.txt
check "a failed INT compile leaves no sidecar" '[ $? -eq 1 ] && [ ! -e d.tosa.quant.json ] && no_temps'
"$TOSAC" compile m.onnx -o no/such/dir/x.tosa 2> e11.txt
check "errors creating a file give the OS reason" '[ $? -eq 1 ] && grep -q "No such file or directory" e11.txt'
"$TOSAC" run fp.tosa -i x=in.npy -o no/such 2> e12.txt
check "run -o DIR that cannot be made gives the OS reason" '[ $? -eq 3 ] && grep -q "No such file or directory" e12.txt'
# Device nodes made here (mknod, root only) first, so that a regression replaces or deletes these
# and not the machine's; the real /dev/full only once they behaved.
if [ "$(id -u)" = 0 ] && mknod nulldev c 1 3 && mknod fulldev c 1 7; then
    "$TOSAC" compile m.onnx -o nulldev $INT > /dev/null 2>&1
    check "root: compile -o a null device writes it in place, no sidecar next to it" \
        '[ $? -eq 0 ] && [ -c nulldev ] && [ ! -e nulldev.quant.json ] && no_temps'
    "$TOSAC" inspect fp.tosa -o fulldev 2> e13.txt
    check "root: inspect -o a full device fails with the OS reason and keeps the device" \
        '[ $? -eq 1 ] && grep -q "No space left on device" e13.txt && [ -c fulldev ]'
    if [ -c nulldev ] && [ -c fulldev ] && [ -c /dev/full ]; then
        "$TOSAC" inspect fp.tosa -o /dev/full 2> e14.txt
        check "root: inspect -o /dev/full keeps /dev/full" '[ $? -eq 1 ] && grep -q "No space left" e14.txt && [ -c /dev/full ]'
    fi
else
    echo "FAIL the device cases need root (mknod)"
    fails=$((fails + 1))
fi

# ---- a compile killed by SIGINT or SIGTERM leaves no temporary ---------------------------------------
for sig in INT TERM; do
    got=$(SIG=$sig T="$TOSAC" $PY -c '
import os, signal, subprocess, time
p = subprocess.Popen([os.environ["T"], "compile", "m.onnx", "-o", "k.tosa", "--target", "TOSA-1.0+INT",
                      "--calibrate", "random", "--calib-samples", "200000", "--report-json", "k.json"],
                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
temps = lambda: sum(".tmp-" in f for f in os.listdir("."))
for _ in range(1000):  # until the temporaries exist
    if temps(): break
    time.sleep(0.01)
seen, sig = temps(), getattr(signal, "SIG" + os.environ["SIG"])
p.send_signal(sig)
rc = p.wait()
print("ok" if seen and rc == -sig and temps() == 0 else f"temporaries seen {seen}, exit {rc}, left {temps()}")')
    check "SIG$sig during a compile: killed by it, temporaries removed ($got)" '[ "$got" = ok ]'
done
check "no k.tosa, k.json after the kills" '[ ! -e k.tosa ] && [ ! -e k.json ] && [ ! -e k.tosa.quant.json ]'

# ---- a sidecar from another program ------------------------------------------------------------------
"$TOSAC" compile m.onnx -o a.tosa $INT > /dev/null 2>&1 && "$TOSAC" compile m.onnx -o b.tosa $INT --per-tensor > /dev/null 2>&1 || exit 1
"$TOSAC" run a.tosa -i x=in.npy > /dev/null 2> e15.txt
check "run with its own sidecar" '[ $? -eq 0 ]'
check "the sidecar records the program's size and FNV-1a 64 (computed here in Python)" '$PY -c "
import json, os
h = 0xcbf29ce484222325
for b in open(\"a.tosa\", \"rb\").read(): h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
p = json.load(open(\"a.tosa.quant.json\"))[\"program\"]
assert p == {\"bytes\": os.path.getsize(\"a.tosa\"), \"fnv1a64\": format(h, \"016x\")}, p"'
cp b.tosa.quant.json a.tosa.quant.json
"$TOSAC" run a.tosa -i x=in.npy > /dev/null 2> e16.txt
check "run refuses a sidecar of another program" '[ $? -eq 3 ] && grep -q "belongs to another program" e16.txt'
$PY -c "
import json; j = json.load(open('b.tosa.quant.json')); del j['program']; json.dump(j, open('a.tosa.quant.json', 'w'))"
"$TOSAC" run a.tosa -i x=in.npy > /dev/null 2> e17.txt
check "run refuses a sidecar that does not record its program" '[ $? -eq 3 ] && grep -q "does not record its program" e17.txt'

# ---- weak answers --------------------------------------------------------------------------------------
"$TOSAC" run fp.tosa -i x=in.npy -i x=calib/a.npy > /dev/null 2> e18.txt
check "a second -i for the same input is an error" '[ $? -eq 3 ] && grep -q "given twice" e18.txt'
$PY -c "
import numpy as np
a = np.load('in.npy'); a.flat[:3] = np.nan; a.flat[5] = np.inf; np.save('nan.npy', a)"
"$TOSAC" compile m.onnx -o n.tosa --target TOSA-1.0+INT --calibrate nan.npy 2> e19.txt
check "NaN/Inf in calibration data: error naming the file, the input and the count" \
    '[ $? -eq 1 ] && grep -q "nan.npy: 4 of its 768 values for input .x. are NaN or infinite" e19.txt && [ ! -e n.tosa ]'
"$TOSAC" compile m.onnx -o b.tosa $INT > /dev/null 2>&1
"$TOSAC" run b.tosa -i x=nan.npy > /dev/null 2> e20.txt
zp=$($PY -c "import json; print(json.load(open('b.tosa.quant.json'))['inputs'][0]['zero_point'])")
check "NaN inputs to an INT8 program: a warning with the count and the code they became" \
    '[ $? -eq 0 ] && grep -q "warning: 3 of its 768 values for input .x. are NaN; they became the zero point $zp" e20.txt'

# ---- external data through a symbolic link ---------------------------------------------------------
mkdir ext outside
$PY - <<'EOF' || exit 1
import os, numpy as np, onnx
from onnx import helper, TensorProto, numpy_helper
w = numpy_helper.from_array(np.arange(16, dtype=np.float32).reshape(4, 4), "w")
g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], [w])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.save_model(m, "ext/m.onnx", save_as_external_data=True, location="w.bin", size_threshold=0)
os.makedirs("ext/sub")
m2 = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.save_model(m2, "ext/m2.onnx", save_as_external_data=True, location="sub/w.bin", size_threshold=0)
m3 = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
onnx.save_model(m3, "ext/m3.onnx", save_as_external_data=True, location="f.bin", size_threshold=0)
EOF
"$TOSAC" compile ext/m.onnx -o ext.tosa
check "external data in a regular file inside the folder" '[ $? -eq 0 ]'
cp ext/w.bin w.orig
"$TOSAC" compile ext/m.onnx -o ext/w.bin 2> e20b.txt
check "compile -o the model's external data file: refused, data intact" \
    '[ $? -eq 1 ] && grep -q "never writes over its inputs" e20b.txt && cmp -s ext/w.bin w.orig'
mv ext/w.bin outside/w.bin && ln -s /etc/passwd ext/w.bin
"$TOSAC" compile ext/m.onnx -o ext2.tosa 2> e21.txt
check "external data through a link to /etc/passwd: refused, naming the tensor and the path" \
    '[ $? -eq 1 ] && grep -q "w.*ext/w.bin.*symbolic link" e21.txt && [ ! -e ext2.tosa ]'
"$TOSAC" compile ext/m2.onnx -o ext3.tosa
check "external data in a sub-folder" '[ $? -eq 0 ]'
mv ext/sub outside/sub && ln -s ../outside/sub ext/sub
"$TOSAC" compile ext/m2.onnx -o ext3.tosa 2> e22.txt
check "external data through a linked folder: refused" '[ $? -eq 1 ] && grep -q "symbolic link .sub." e22.txt'
rm ext/f.bin && mkfifo ext/f.bin
timeout 60 "$TOSAC" compile ext/m3.onnx -o ext4.tosa 2> e22b.txt
check "external data in a FIFO: refused without waiting for a writer" '[ $? -eq 1 ] && grep -q "not a regular file" e22b.txt'

# ---- a WHILE_LOOP that never ends ------------------------------------------------------------------
$PY - <<'EOF' || exit 1
import numpy as np, onnx
from onnx import helper, TensorProto
body = helper.make_graph(
    [helper.make_node("Identity", ["c_in"], ["c_out"]), helper.make_node("Add", ["v_in", "one"], ["v_out"])],
    "body",
    [helper.make_tensor_value_info("i", TensorProto.INT64, []), helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
     helper.make_tensor_value_info("v_in", TensorProto.FLOAT, [1])],
    [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), helper.make_tensor_value_info("v_out", TensorProto.FLOAT, [1])],
    [helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])])
g = helper.make_graph([helper.make_node("Loop", ["", "cond", "x"], ["y"], body=body)], "g",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
                      [helper.make_tensor("cond", TensorProto.BOOL, [], [True])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), "loop.onnx")
np.save("one.npy", np.ones([1], np.float32))
EOF
"$TOSAC" compile loop.onnx -o loop.tosa --target TOSA-1.0+INT+FP+controlflow 2> e23.txt
check "a Loop that never ends compiles with +controlflow" '[ $? -eq 0 ]'
timeout 300 "$TOSAC" run loop.tosa -i x=one.npy --max-iterations 1000 > /dev/null 2> e24.txt
check "run --max-iterations 1000: UNPREDICTABLE naming the WHILE_LOOP" '[ $? -eq 1 ] && grep -q "WHILE_LOOP.*max_iterations (1000 iterations)" e24.txt'
timeout 300 "$TOSAC" run loop.tosa -i x=one.npy > /dev/null 2> e25.txt
check "run with the default cap stops too" '[ $? -eq 1 ] && grep -q "WHILE_LOOP.*max_iterations (10000000 iterations)" e25.txt'
"$TOSAC" run loop.tosa -i x=one.npy --max-iterations 0 > /dev/null 2> e26.txt
check "--max-iterations 0 is a usage error" '[ $? -eq 3 ] && grep -q "positive count" e26.txt'
finish
