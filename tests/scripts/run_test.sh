#!/usr/bin/env bash
# `tosac run` end to end: both spellings, exit codes (0 VALID, 1 UNPREDICTABLE, 2 ERROR, 3 tool
# failure), .npy outputs and dtypes, precise mode, COND_IF, and no output files on failure.
# Expected values are computed by numpy in this script, not by tosac.
set -uo pipefail
tosac=$1
work=$2
py=/usr/bin/python3
gen=${TOSAC_GEN_EXAMPLE:-$TOSAC_BUILD_DIR/tests/gen_example}
corpus=$TOSAC_BUILD_DIR/tests/corpus
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
pass=0
fail=0
check() { # check NAME COMMAND...: the command must succeed
  local name=$1
  shift
  if "$@" >/dev/null 2>"$work/last.err"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $name" >&2; cat "$work/last.err" >&2; fi
}
expect_rc() { # expect_rc NAME RC COMMAND...
  local name=$1 want=$2
  shift 2
  "$@" >"$work/last.out" 2>"$work/last.err"
  local rc=$?
  if [ "$rc" -eq "$want" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL $name: exit $rc, expected $want" >&2; cat "$work/last.err" >&2; fi
}

"$gen" "$work" fp32_relu6 bad_shape cond_if rank7 >/dev/null || { echo "gen_example failed"; echo "0 passed, 1 failed"; exit 1; }

$py - <<'PY'
import numpy as np
rng = np.random.default_rng(7)
np.save("a.npy", rng.uniform(-5, 8, (2, 2)).astype(np.float32))
np.save("b.npy", rng.uniform(-5, 8, (2, 2)).astype(np.float32))
np.save("ia.npy", np.array([7, -3], dtype=np.int32))
np.save("ib.npy", np.array([2, 10], dtype=np.int32))
np.save("t.npy", np.array(True))
np.save("f.npy", np.array(False))
np.save("wrong_count.npy", np.zeros((3,), dtype=np.float32))
PY

# model spelling: outputs as DIR/<name>.npy, values equal numpy's clip(a + b, 0, 6) in fp32
mkdir -p out
check "relu6 run" "$tosac" run fp32_relu6.tosa -i a=a.npy -i b=b.npy -o out
check "relu6 values" $py -c "
import numpy as np
a, b, o = np.load('a.npy'), np.load('b.npy'), np.load('out/out.npy')
assert o.dtype == np.float32 and o.shape == (2, 2), (o.dtype, o.shape)
assert np.array_equal(o, np.clip(a + b, np.float32(0), np.float32(6)))"
check "summary without -o" "$tosac" run fp32_relu6.tosa -i a=a.npy -i b=b.npy
check "profile" bash -c "'$tosac' run fp32_relu6.tosa -i a=a.npy -i b=b.npy --profile --repeat 3 | grep -q 'per operator type'"
# medians over the invokes after the warm-up, 2000 of them recorded every second one
check "profile warm-up" bash -c "'$tosac' run fp32_relu6.tosa -i a=a.npy -i b=b.npy --profile --repeat 3 | grep -q 'median of 2 invokes after a warm-up'"
check "profile sampled" bash -c "'$tosac' run fp32_relu6.tosa -i a=a.npy -i b=b.npy --profile --repeat 2001 | grep -q 'median of 1000 invokes after'"
check "profile one invoke" bash -c "'$tosac' run fp32_relu6.tosa -i a=a.npy -i b=b.npy --profile | grep -q 'median of 1 invoke):'"

# reference-model spelling: desc.json relative paths, --output_dir, precise mode -> <f8
mkdir -p desc/sub res
cp fp32_relu6.tosa desc/m.tosa && cp a.npy b.npy desc/sub/
cat > desc/desc.json <<'JSON'
{"tosa_file": "m.tosa", "ifm_name": ["a", "b"], "ifm_file": ["sub/a.npy", "sub/b.npy"],
 "ofm_name": ["out"], "ofm_file": ["result_out.npy"], "expected_failure": false}
JSON
check "test_desc run" "$tosac" run --test_desc desc/desc.json
check "test_desc output" $py -c "
import numpy as np; o = np.load('desc/result_out.npy'); assert o.dtype == np.float32"
check "precise mode" "$tosac" run --test_desc desc/desc.json --output_dir res --precise_mode 1
check "precise output is fp64" $py -c "
import numpy as np
a, b, o = np.load('a.npy'), np.load('b.npy'), np.load('res/result_out.npy')
assert o.dtype == np.float64, o.dtype
assert np.array_equal(o, np.clip(a.astype(np.float64) + b, 0, 6))"
check "flag overrides, no desc" "$tosac" run --tosa_file fp32_relu6.tosa --ifm_name a,b --ifm_file a.npy,b.npy \
  --ofm_name out --ofm_file flag_out.npy --output_dir res
check "flag override output" test -f res/flag_out.npy

# COND_IF: then = ADD, else = SUB
check "cond true" "$tosac" run cond_if.tosa -i cond=t.npy -i a=ia.npy -i b=ib.npy -o out
check "cond true values" $py -c "
import numpy as np; assert np.load('out/out.npy').tolist() == [9, 7]"
check "cond false" "$tosac" run cond_if.tosa -i cond=f.npy -i a=ia.npy -i b=ib.npy -o out
check "cond false values" $py -c "
import numpy as np; assert np.load('out/out.npy').tolist() == [5, -13]"

# an ONNX model is compiled in memory: libonnx-testdata's test_relu against its own output_0.pb
relu=/usr/share/libonnx-testdata/data/node/test_relu
check "onnx test data decoded" $py -c "
import onnx, numpy as np
from onnx import numpy_helper
for k in ('input', 'output'):
    t = onnx.TensorProto(); t.ParseFromString(open('$relu/test_data_set_0/%s_0.pb' % k, 'rb').read())
    np.save('relu_%s.npy' % k, numpy_helper.to_array(t))"
mkdir -p onnx_out
check "run .onnx" "$tosac" run "$relu/model.onnx" -i x=relu_input.npy -o onnx_out
check "run .onnx values" $py -c "
import numpy as np; assert np.array_equal(np.load('onnx_out/y.npy'), np.load('relu_output.npy'))"

# graph status exit codes; nothing written on failure
rm -rf res && mkdir res
expect_rc "ERROR_IF graph exits 2" 2 "$tosac" run bad_shape.tosa -i a=ia.npy -i b=ib.npy -o res
expect_rc "rank 7 is fine at level NONE" 0 "$tosac" run rank7.tosa -i a=ia.npy -i b=ib.npy -o res
rm -f res/*
expect_rc "rank 7 fails the 8K level: ERROR (docs/CONFORMANCE.md)" 2 "$tosac" run rank7.tosa -i a=ia.npy -i b=ib.npy -o res --tosa_level EIGHTK
if [ -f "$corpus/INTDIV_0.tosa" ]; then
  # numerator ones, divisor zeros, shapes read from `tosac inspect --json`
  args=$("$tosac" inspect --json "$corpus/INTDIV_0.tosa" | $py -c "
import json, sys, numpy as np
blk = json.load(sys.stdin)['regions'][0]['blocks'][0]
shapes = {t['name']: t['shape'] for t in blk['tensors']}
for k, name in enumerate(blk['inputs']):
    np.save('div%d.npy' % k, np.full(shapes[name], 1 - k, dtype=np.int32))
    print('-i %s=div%d.npy' % (name, k), end=' ')")
  expect_rc "INTDIV by zero: UNPREDICTABLE" 1 "$tosac" run "$corpus/INTDIV_0.tosa" $args -o res
else
  fail=$((fail + 1))
  echo "FAIL corpus missing: $corpus/INTDIV_0.tosa (setup.corpus fixture)" >&2
fi
check "no output after failures" bash -c "[ -z \"\$(ls res)\" ]"
expect_rc "missing input file" 3 "$tosac" run fp32_relu6.tosa -i a=a.npy -i b=nope.npy -o res
expect_rc "input not given" 3 "$tosac" run fp32_relu6.tosa -i a=a.npy
expect_rc "unknown input name" 3 "$tosac" run fp32_relu6.tosa -i a=a.npy -i b=b.npy -i zz=a.npy
expect_rc "wrong element count" 3 "$tosac" run fp32_relu6.tosa -i a=a.npy -i b=wrong_count.npy
expect_rc "malformed desc.json" 3 bash -c "echo '{\"tosa_file\": ' > bad.json; '$tosac' run --test_desc bad.json"
expect_rc "not a TOSA file" 3 "$tosac" run a.npy
expect_rc "unknown option" 3 "$tosac" run fp32_relu6.tosa --bogus
check "no output after tool failures" bash -c "[ -z \"\$(ls res)\" ]"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
