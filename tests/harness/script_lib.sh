# Sourced by the CTest scripts in tests/scripts/ as
#   . "$TOSAC_SOURCE_DIR/tests/harness/script_lib.sh" "$@"
# with the script's arguments TOSAC (the tosac binary) and WORK (a scratch directory, emptied and
# entered here). Gives PY (Debian's python with numpy/onnx/torch), `check NAME 'CONDITION'` (prints
# ok/FAIL and counts failures) and `finish` (the last command: the summary and the exit status).
set -u
TOSAC=$1
WORK=$2
PY=/usr/bin/python3
fails=0
check() { if eval "$2"; then echo "ok   $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi; }
finish() {
    echo "$fails failed"
    [ "$fails" -eq 0 ]
}
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
