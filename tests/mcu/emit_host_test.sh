#!/bin/bash
# emit_c.host: the C that `tosac emit-c` wrote for each test program (emit_setup.sh), compiled by the
# host's gcc with -Wall -Wextra -Werror together with exactly the kernel sources it lists, run on
# the test input: every output byte must equal `tosac run`'s.
# usage: emit_host_test.sh WORK (the setup's directory)
set -u
WORK=$1
SRC=$(cd "$(dirname "$0")/../.." && pwd)
CFLAGS=(-std=c11 -O2 -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -DTOSAC_NO_SIMD -D_POSIX_C_SOURCE=200809L
        -ffunction-sections -fdata-sections -I"$SRC/include" -I"$SRC/src")
fails=0
# each kernel source is compiled once (the objects do not depend on the model)
mkdir -p "$WORK/.obj"
for d in "$WORK"/*/; do
    m=$(basename "$d")
    [ -f "$d/c/$m.c" ] || { echo "FAIL $m: no emitted C (emit_c.setup failed)"; fails=$((fails + 1)); continue; }
    objs=() ok=true
    while read -r f; do
        o=$WORK/.obj/$(echo "$f" | tr / _).o
        [ -f "$o" ] || gcc "${CFLAGS[@]}" -c "$SRC/$f" -o "$o" 2>>"$d/host_build.log" || ok=false
        objs+=("$o")
    done <"$d/c/sources.txt"
    if ! $ok || ! gcc "${CFLAGS[@]}" -I"$d/c" -DEMIT_HEADER="\"$m.h\"" -DEMIT_INVOKE="${m}_invoke" \
            -DEMIT_ARENA="${m}_ARENA_SIZE" -Wl,--gc-sections \
            -o "$d/host_check" "$SRC/tests/mcu/emit_check_main.c" "$d/testdata.c" "$d/c/$m.c" "${objs[@]}" -lm \
            2>>"$d/host_build.log"; then
        echo "FAIL $m: build"; head -30 "$d/host_build.log"; fails=$((fails + 1)); continue
    fi
    if "$d/host_check" >"$d/host_run.log" 2>&1; then echo "ok   $m: $(tr '\n' ' ' <"$d/host_run.log")"
    else echo "FAIL $m:"; cat "$d/host_run.log"; fails=$((fails + 1)); fi
done
echo "$fails failed"
[ $fails -eq 0 ]
