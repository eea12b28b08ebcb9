#!/bin/bash
# tosac emit-c on a segmented artifact and its refusals (docs/EMIT_C.md): a model with RESIZEs the
# Ethos-U55 cannot run, compiled for ethos-u55-128 (NPU, CPU, NPU segments), emitted as C, built by
# the host's gcc -Werror with the listed kernel sources: its outputs equal `tosac run` on the
# artifact (the runtime chaining the segments), the NPU segments go through NAME_npu_segment_K
# (a strong definition replaces the weak default), the arena is within 5% of its lower bound.
. "$TOSAC_SOURCE_DIR/tests/harness/script_lib.sh" "$@"
SRC=$TOSAC_SOURCE_DIR
$PY "$SRC/tests/onnx/make_quant_resize.py" . >/dev/null || exit 1
"$TOSAC" compile qresize.onnx -o art --target ethos-u55-128 --calibrate calib >/dev/null
check "artifact with NPU and CPU segments" '[ -s art/manifest.json ] && grep -q segment_1_cpu art/manifest.json'
# the input as int8 codes of the manifest's q-params; the expected output codes from tosac run
$PY - <<'PY'
import json
import numpy as np
m = json.load(open("art/manifest.json"))
x, y = m["inputs"][0], m["outputs"][0]
q = np.clip(np.rint(np.load("held_00.npy") / x["scale"]) + x["zero_point"], -128, 127).astype(np.int8)
np.save("x_codes.npy", q)
json.dump({"scale": y["scale"], "zero_point": y["zero_point"]}, open("yq.json", "w"))
PY
"$TOSAC" run art -i x=x_codes.npy -o ref >/dev/null
$PY - <<'PY'
import json
import numpy as np
q = json.load(open("yq.json"))
y = np.load("ref/y.npy")
np.save("expect.npy", np.clip(np.rint(y / q["scale"]) + q["zero_point"], -128, 127).astype(np.int8))
PY
"$TOSAC" emit-c art -o c --name rs >emit.log
check "emit-c writes the artifact" '[ -s c/rs.c ] && [ -s c/rs.h ] && [ -s c/sources.txt ]'
check "the NPU segments have hooks, the CPU segment none" \
    'grep -q "int rs_npu_segment_0(" c/rs.h && grep -q "int rs_npu_segment_2(" c/rs.h && ! grep -q "rs_npu_segment_1" c/rs.h'
check "arena within 5% of its liveness lower bound" \
    '$PY -c "import re,sys; a,b=map(int,re.search(r\"arena (\d+) bytes, liveness lower bound (\d+)\",open(\"emit.log\").read()).groups()); sys.exit(0 if a <= 1.05*b else 1)"'
$PY "$SRC/tests/mcu/emit_testdata.py" testdata.c --in x_codes.npy --expect expect.npy
# the kernel sources once (-O0: this checks the wiring, emit_c.host and emit_c.qemu the models)
CC=(gcc -std=c11 -O0 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -DTOSAC_NO_SIMD -D_POSIX_C_SOURCE=200809L
    -Ic -I"$SRC/include" -I"$SRC/src" -DEMIT_HEADER='"rs.h"' -DEMIT_INVOKE=rs_invoke -DEMIT_ARENA=rs_ARENA_SIZE)
objs=() ok=true
while read -r f; do
    o=$(echo "$f" | tr / _).o
    "${CC[@]}" -c "$SRC/$f" -o "$o" 2>>build.log || ok=false
    objs+=("$o")
done <c/sources.txt
$ok && "${CC[@]}" -c "$SRC/tests/mcu/emit_check_main.c" testdata.c c/rs.c 2>>build.log &&
    "${CC[@]}" -o check emit_check_main.o testdata.o rs.o "${objs[@]}" -lm 2>>build.log
check "the emitted C builds warning-free" '[ $? -eq 0 ] || { head -20 build.log; false; }'
./check >run.log 2>&1
check "outputs bit-identical to tosac run on the artifact" '[ $? -eq 0 ] && grep -q identical run.log || { cat run.log; false; }'
# a strong NPU hook replaces the default: its status comes back from rs_invoke
cat >hook.c <<'C'
#include "rs.h"
int rs_npu_segment_2(const void *const in[], void *const out[], void *arena)
{
    (void)in, (void)out, (void)arena;
    return 42;
}
C
"${CC[@]}" -o check_hook emit_check_main.o testdata.o rs.o hook.c "${objs[@]}" -lm 2>>build.log
./check_hook >hook.log 2>&1
check "a strong rs_npu_segment_2 runs instead of the default" 'grep -q "invoke failed: status 42" hook.log'

# refusals: nothing written, exit 1, a reason
"$TOSAC" emit-c art -o bad --isa avx >/dev/null 2>err.txt
check "--isa other than portable or mve is refused" '[ $? -eq 1 ] && grep -q "bad --isa" err.txt && [ ! -e bad ]'
"$TOSAC" emit-c art -o bad --name 9lives >/dev/null 2>err.txt
check "a name that is not a C identifier is refused" '[ $? -eq 1 ] && grep -q "not a C identifier" err.txt && [ ! -e bad/9lives.c ]'
"$TOSAC" emit-c art >/dev/null 2>err.txt
check "no -o is refused" '[ $? -eq 1 ] && grep -q "no output directory" err.txt'
finish
