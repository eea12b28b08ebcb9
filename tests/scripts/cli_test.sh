#!/usr/bin/env bash
# Behaviour of the `tosac` command: exit codes, messages, JSON validity, options.
#
#   bash cli_test.sh PATH/TO/tosac WORKDIR
#
# Input graphs come from the gen_example tool (tests/tools/gen_example.c), looked up as
# $TOSAC_GEN_EXAMPLE, $TOSAC_BUILD_DIR/tests/gen_example or <dir of tosac>/tests/gen_example.
# If $TOSAC_BUILD_DIR/tests/corpus holds .tosa files (the gen_corpus fixture), inspect/print are
# also run over all of them. The last line is "N passed, M failed"; the exit status is 1 if M > 0.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 PATH/TO/tosac WORKDIR" >&2
    exit 2
fi
TOSAC=$1
WORK=$2
PY=/usr/bin/python3
rm -rf "$WORK"
mkdir -p "$WORK"
EX=$WORK/ex
mkdir -p "$EX"

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() {
    failed=$((failed + 1))
    echo "FAIL $1"
    if [ -s "$WORK/stderr" ]; then sed -e 's/^/       stderr: /' "$WORK/stderr" | head -n 8; fi
}

# run CMD...: runs CMD with stdout/stderr captured in $WORK/stdout, $WORK/stderr; exit code in $rc.
rc=0
run() {
    set +e
    "$@" >"$WORK/stdout" 2>"$WORK/stderr"
    rc=$?
    set -e
}
# expect_rc WANT NAME CMD...
expect_rc() {
    local want=$1 name=$2
    shift 2
    run "$@"
    if [ "$rc" -eq "$want" ]; then ok "$name"; else bad "$name (exit $rc, expected $want)"; fi
}
# has FILE TEXT NAME: FILE (stdout|stderr of the last run) contains the fixed string TEXT.
has() {
    if grep -qF -- "$2" "$WORK/$1"; then ok "$3"; else bad "$3 ('$2' not in $1)"; fi
}
lacks() {
    if grep -qF -- "$2" "$WORK/$1"; then bad "$3 ('$2' unexpectedly in $1)"; else ok "$3"; fi
}
json_ok() { # json_ok FILE NAME
    if "$PY" -m json.tool "$1" >/dev/null 2>"$WORK/json_err"; then ok "$2"; else
        failed=$((failed + 1))
        echo "FAIL $2 (invalid JSON: $(head -c 200 "$WORK/json_err"))"
    fi
}

# ---------------------------------------------------------------------------------------------
# Inputs

GEN=${TOSAC_GEN_EXAMPLE:-}
if [ -z "$GEN" ]; then
    for c in "${TOSAC_BUILD_DIR:-/nonexistent}/tests/gen_example" "$(dirname "$TOSAC")/tests/gen_example"; do
        if [ -x "$c" ]; then GEN=$c; break; fi
    done
fi
have_gen=0
if [ -n "$GEN" ] && "$GEN" "$EX" >"$WORK/gen.log" 2>&1; then
    have_gen=1
    ok "gen_example wrote the example graphs"
else
    bad "gen_example not found or failed (build target gen_example; see tests/tools/gen_example.c)"
    [ -s "$WORK/gen.log" ] && sed -e 's/^/       /' "$WORK/gen.log" | head -n 5
    if [ -n "${TOSAC_SOURCE_DIR:-}" ] && [ -f "$TOSAC_SOURCE_DIR/examples/conv_int8.tosa" ]; then
        cp "$TOSAC_SOURCE_DIR/examples/conv_int8.tosa" "$EX/"
    fi
fi
CONV=$EX/conv_int8.tosa

head -c 100 "$CONV" >"$WORK/truncated.tosa" 2>/dev/null || : >"$WORK/truncated.tosa"
printf 'this is not a TOSA flatbuffer, just some text\n' >"$WORK/text.tosa"
: >"$WORK/empty.tosa"
mkdir -p "$WORK/a_directory.tosa"

# ---------------------------------------------------------------------------------------------
# Top level: version, help, unknown commands and options

expect_rc 0 "--version exits 0" "$TOSAC" --version
has stdout "tosac " "--version prints the name"
expect_rc 0 "help exits 0" "$TOSAC" help
has stdout "validate" "help lists validate"
has stdout "inspect" "help lists inspect"
has stdout "print" "help lists print"
expect_rc 0 "--help exits 0" "$TOSAC" --help
expect_rc 0 "help validate exits 0" "$TOSAC" help validate
has stdout "--profile" "help validate describes --profile"
expect_rc 0 "validate --help exits 0" "$TOSAC" validate --help
has stdout "exit status" "validate --help documents the exit status"
expect_rc 0 "inspect -h exits 0" "$TOSAC" inspect -h
has stdout "--json" "inspect -h describes --json"
expect_rc 0 "print --help exits 0" "$TOSAC" print --help
expect_rc 1 "no arguments exits 1" "$TOSAC"
has stderr "usage" "no arguments prints the usage"
expect_rc 1 "unknown command exits 1" "$TOSAC" frobnicate "$CONV"
has stderr "unknown command 'frobnicate'" "unknown command is named"
expect_rc 1 "help of an unknown command exits 1" "$TOSAC" help frobnicate
expect_rc 1 "unknown top-level option exits 1" "$TOSAC" --frob
expect_rc 1 "unknown validate option exits 1" "$TOSAC" validate --frob "$CONV"
has stderr "--frob" "unknown option is named"
expect_rc 1 "unknown inspect option exits 1" "$TOSAC" inspect "$CONV" --yaml
expect_rc 1 "print does not take --json" "$TOSAC" print --json "$CONV"
expect_rc 1 "validate without FILE exits 1" "$TOSAC" validate
has stderr "missing FILE" "missing FILE is reported"
expect_rc 1 "two FILEs exit 1" "$TOSAC" validate "$CONV" "$CONV"
expect_rc 1 "option without its value exits 1" "$TOSAC" validate "$CONV" --profile
has stderr "needs a value" "missing option value is reported"
expect_rc 1 "bad --profile exits 1" "$TOSAC" validate --profile DSP "$CONV"
expect_rc 1 "bad --level exits 1" "$TOSAC" validate --level 16K "$CONV"
expect_rc 1 "bad --ext exits 1" "$TOSAC" validate --ext int16,warp "$CONV"
has stderr "warp" "unknown extension is named"

# ---------------------------------------------------------------------------------------------
# validate

expect_rc 0 "valid int8 conv block exits 0" "$TOSAC" validate "$CONV"
has stdout "conv_int8.tosa: valid (profile INT+FP, extensions all but dynamic, level 8K)" "valid summary line"
expect_rc 0 "--profile INT accepts the int8 graph" "$TOSAC" validate --profile INT "$CONV"
has stdout "profile INT, extensions none" "summary names the profile and extensions"
expect_rc 0 "-q valid file exits 0" "$TOSAC" validate -q "$CONV"
if [ -s "$WORK/stdout" ]; then bad "-q prints nothing for a valid file"; else ok "-q prints nothing for a valid file"; fi
expect_rc 2 "--profile FP rejects the int8 graph" "$TOSAC" validate --profile FP "$CONV"
has stderr "PRO-INT" "the missing profile PRO-INT is named"

for f in missing.tosa truncated.tosa text.tosa empty.tosa a_directory.tosa; do
    expect_rc 1 "validate $f exits 1" "$TOSAC" validate "$WORK/$f"
    has stderr "$WORK/$f: error:" "validate $f names the file"
    if [ -s "$WORK/stdout" ]; then bad "validate $f prints no summary"; else ok "validate $f prints no summary"; fi
done
expect_rc 1 "a file name after -- is taken literally" "$TOSAC" validate -- "-missing.tosa"
has stderr "-missing.tosa: error:" "the literal file name is reported"

if [ "$have_gen" = 1 ]; then
    expect_rc 2 "shape mismatch exits 2" "$TOSAC" validate "$EX/bad_shape.tosa"
    has stderr "bad_shape.tosa: error:" "error lines name the file"
    has stderr "ADD" "error lines name the op"
    has stdout "bad_shape.tosa: invalid:" "invalid summary line"

    expect_rc 0 "fp32 graph is valid by default" "$TOSAC" validate "$EX/fp32_relu6.tosa"
    expect_rc 2 "--profile INT rejects an fp32 graph" "$TOSAC" validate --profile INT "$EX/fp32_relu6.tosa"
    has stderr "PRO-FP" "the missing profile PRO-FP is named"
    has stderr "fp32_relu6.tosa: error:" "profile error names the file"
    expect_rc 0 "--profile FP accepts the fp32 graph" "$TOSAC" validate --profile FP "$EX/fp32_relu6.tosa"
    expect_rc 0 "--profile=INT+FP form" "$TOSAC" validate --profile=INT+FP "$EX/fp32_relu6.tosa"

    expect_rc 2 "rank 7 fails level 8K" "$TOSAC" validate "$EX/rank7.tosa"
    has stderr "rank7.tosa: error:" "rank above MAX_RANK is an ERROR, as the official conformance tests expect"
    expect_rc 2 "explicit --level 8K" "$TOSAC" validate --level 8K "$EX/rank7.tosa"
    expect_rc 0 "--level none accepts rank 7" "$TOSAC" validate --level none "$EX/rank7.tosa"
    has stdout "level none" "summary names level none"
    expect_rc 0 "--level=none form" "$TOSAC" validate --level=none "$EX/rank7.tosa"

    expect_rc 0 "COND_IF graph is valid with all extensions" "$TOSAC" validate "$EX/cond_if.tosa"
    expect_rc 2 "--profile INT without extensions rejects COND_IF" "$TOSAC" validate --profile INT "$EX/cond_if.tosa"
    has stderr "CONTROLFLOW" "the missing extension is named"
    expect_rc 0 "--ext controlflow enables COND_IF" "$TOSAC" validate --profile INT --ext controlflow "$EX/cond_if.tosa"
    has stdout "extensions controlflow" "summary lists the enabled extension"
    expect_rc 2 "--ext none rejects COND_IF" "$TOSAC" validate --ext none "$EX/cond_if.tosa"

    expect_rc 0 "odd names validate" "$TOSAC" validate "$EX/odd_names.tosa"
fi

# ---------------------------------------------------------------------------------------------
# inspect and print

expect_rc 0 "inspect exits 0" "$TOSAC" inspect "$CONV"
has stdout "CONV2D" "inspect lists the conv"
has stdout "parameter bytes" "inspect prints the totals"
has stdout "acc_type = INT32" "inspect shows attributes"
cp "$WORK/stdout" "$WORK/inspect1.txt"
run "$TOSAC" inspect "$CONV"
if cmp -s "$WORK/stdout" "$WORK/inspect1.txt"; then ok "inspect is deterministic"; else bad "inspect is deterministic"; fi

expect_rc 0 "inspect --json exits 0" "$TOSAC" inspect --json "$CONV"
cp "$WORK/stdout" "$WORK/conv.json"
json_ok "$WORK/conv.json" "inspect --json is valid JSON"
if "$PY" - "$WORK/conv.json" >"$WORK/stderr" 2>&1 <<'EOF'; then ok "inspect --json has the documented structure"; else bad "inspect --json has the documented structure"; fi
import json, sys
d = json.load(open(sys.argv[1]))
assert set(d) == {"version", "regions", "totals"}, d.keys()
assert d["version"] == {"major": 1, "minor": 0, "patch": 0, "draft": False}, d["version"]
b = d["regions"][0]["blocks"][0]
assert d["regions"][0]["name"] == "main" and b["name"] == "main"
assert b["inputs"] == ["input"] and b["outputs"] == ["output"], (b["inputs"], b["outputs"])
t = {x["name"]: x for x in b["tensors"]}
for x in b["tensors"]:
    for k in ("name", "type", "shape", "const_bytes", "variable"):
        assert k in x, (k, x)
assert t["weight"]["type"] == "INT8" and t["weight"]["shape"] == [4, 3, 3, 3] and t["weight"]["const_bytes"] == 108
assert t["input_zp"]["values"] == [-128]
ops = {o["op"]: o for o in b["operators"]}
c = ops["CONV2D"]
assert c["inputs"] == ["input", "weight", "bias", "input_zp", "weight_zp"], c["inputs"]
assert c["attributes"]["pad"] == [1, 1, 1, 1] and c["attributes"]["acc_type"] == "INT32", c["attributes"]
assert ops["RESCALE"]["attributes"]["rounding_mode"] == "SINGLE_ROUND"
assert ops["CLAMP"]["attributes"]["min_val"] == -128 and ops["CLAMP"]["attributes"]["max_val"] == 127
assert b["shapes"][0]["values"] == [1, 256]
tot = d["totals"]
assert tot["operators"] == len(b["operators"]) == sum(tot["ops_by_type"].values())
assert tot["tensors"] == len(b["tensors"])
assert tot["parameter_bytes"] == sum(x["const_bytes"] for x in b["tensors"])
assert list(tot["ops_by_type"].items())[0] == ("CONST", 8), tot["ops_by_type"]
counts = list(tot["ops_by_type"].items())
assert counts == sorted(counts, key=lambda kv: (-kv[1], kv[0])), counts
EOF

expect_rc 0 "print exits 0" "$TOSAC" print "$CONV"
has stdout "tosa 1.0.0 (final)" "print shows the version"
has stdout "%conv_acc = CONV2D(%input, %weight, %bias, %input_zp, %weight_zp)" "print shows the conv with its operands"
has stdout "rounding_mode = SINGLE_ROUND" "print shows enums by name"
has stdout "%input_zp = CONST : INT8[1] = [-128]" "print shows small constants"
has stdout "%weight = CONST : INT8[4,3,3,3]  // 108 bytes" "print summarises large constants"
has stdout "%flat_shape = CONST_SHAPE : shape[2] = [1,256]" "print shows shape constants"
has stdout 'loc("conv_int8.py:12 (conv)")' "print shows locations"

for cmd in inspect print; do
    for f in truncated.tosa text.tosa missing.tosa; do
        expect_rc 1 "$cmd $f exits 1" "$TOSAC" $cmd "$WORK/$f" -o "$WORK/out_$cmd.txt"
        has stderr "$WORK/$f: error:" "$cmd $f names the file"
        if [ -e "$WORK/out_$cmd.txt" ]; then bad "$cmd $f creates no output file"; else ok "$cmd $f creates no output file"; fi
    done
done
expect_rc 1 "inspect --json of a truncated file exits 1" "$TOSAC" inspect --json "$WORK/truncated.tosa"
if [ -s "$WORK/stdout" ]; then bad "no JSON on stdout for a malformed file"; else ok "no JSON on stdout for a malformed file"; fi
expect_rc 0 "inspect --json -o writes a file" "$TOSAC" inspect --json "$CONV" -o "$WORK/out.json"
if cmp -s "$WORK/out.json" "$WORK/conv.json"; then ok "-o file equals stdout"; else bad "-o file equals stdout"; fi
expect_rc 0 "print --output=FILE form" "$TOSAC" print "$CONV" --output="$WORK/out.txt"
if [ -s "$WORK/out.txt" ] && [ ! -s "$WORK/stdout" ]; then ok "--output writes the file only"; else bad "--output writes the file only"; fi
if [ -w /dev/full ]; then
    set +e
    "$TOSAC" print "$CONV" >/dev/full 2>"$WORK/stderr"
    rc=$?
    set -e
    if [ "$rc" -eq 1 ]; then ok "a failed write to stdout exits 1"; else bad "a failed write to stdout exits 1 (exit $rc)"; fi
fi

if [ "$have_gen" = 1 ]; then
    for f in "$EX"/*.tosa; do
        n=$(basename "$f")
        expect_rc 0 "inspect --json $n" "$TOSAC" inspect --json "$f"
        cp "$WORK/stdout" "$WORK/$n.json"
        json_ok "$WORK/$n.json" "inspect --json $n is valid JSON"
        expect_rc 0 "print $n" "$TOSAC" print "$f"
    done
    run "$TOSAC" print "$EX/odd_names.tosa"
    has stdout '%"in \"quoted\" \\ back\tslash"' "print quotes and escapes odd names"
    has stdout '\ufffd' "print replaces invalid UTF-8"
    run "$TOSAC" print "$EX/fp32_relu6.tosa"
    has stdout "min_val = 0.0, max_val = 6.0" "CLAMP bounds decoded as fp32"
    run "$TOSAC" print "$EX/cond_if.tosa"
    has stdout 'then_graph = "then"' "COND_IF branch names are shown"
    has stdout 'region "else"' "all regions are printed"

    # The bundled example is produced by our own writer from gen_example and must stay in sync.
    if [ -n "${TOSAC_SOURCE_DIR:-}" ] && [ -f "$TOSAC_SOURCE_DIR/examples/conv_int8.tosa" ]; then
        if cmp -s "$CONV" "$TOSAC_SOURCE_DIR/examples/conv_int8.tosa"; then
            ok "examples/conv_int8.tosa is up to date"
        else
            bad "examples/conv_int8.tosa is out of date (regenerate: gen_example examples conv_int8)"
        fi
    fi
fi

# Every graph of the gen_corpus fixture (if it has been generated) can be inspected and printed,
# and all its JSON documents parse (checked by one python process).
CORPUS=${TOSAC_BUILD_DIR:-/nonexistent}/tests/corpus
if [ -d "$CORPUS" ] && compgen -G "$CORPUS/*.tosa" >/dev/null; then
    mkdir -p "$WORK/corpus_json"
    n_files=0
    n_bad=0
    for f in "$CORPUS"/*.tosa; do
        n_files=$((n_files + 1))
        if ! "$TOSAC" inspect --json "$f" -o "$WORK/corpus_json/$(basename "$f").json" 2>"$WORK/stderr" ||
            ! "$TOSAC" print "$f" >/dev/null 2>>"$WORK/stderr" ||
            ! "$TOSAC" inspect "$f" >/dev/null 2>>"$WORK/stderr"; then
            n_bad=$((n_bad + 1))
            echo "       corpus file failed: $f"
        fi
    done
    if [ "$n_bad" -eq 0 ]; then ok "inspect/print over $n_files corpus files"; else bad "inspect/print over the corpus: $n_bad of $n_files failed"; fi
    if "$PY" - "$WORK/corpus_json" >"$WORK/stderr" 2>&1 <<'PYEOF'; then ok "corpus JSON is valid"; else bad "corpus JSON is valid"; fi
import json, os, sys
d = sys.argv[1]
for name in sorted(os.listdir(d)):
    with open(os.path.join(d, name), encoding="utf-8") as f:
        try:
            json.load(f)
        except ValueError as e:
            sys.exit("%s: %s" % (name, e))
PYEOF
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
