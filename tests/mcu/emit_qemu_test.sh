#!/bin/bash
# emit_c.qemu: the C that `tosac emit-c --isa mve` wrote for each test program (emit_setup.sh),
# built for the Cortex-M55 (-mcpu=cortex-m55 -mfloat-abi=hard -O2, the platform layer of
# tests/mcu/platform) with exactly the kernel sources it lists, run in QEMU mps3-an547: every output
# byte must equal `tosac run`'s on the host (the exit status is the verdict). Prints per model the
# arena, its liveness lower bound, the stack high-water mark and the flash: arm-none-eabi-size text +
# data of the ELF less the test data object (inputs, expected outputs): the model's constants,
# prepared bytes and call tables, the runner, the kernels, the C library and libgcc pieces they
# call, startup code and vector table, the semihosting layer and the check's main (no printf).
# The four MLPerf Tiny models fail above ExecuTorch's RAM or flash on an M55 (MCU.md).
# usage: emit_qemu_test.sh WORK; the environment gives TOSAC_ARM_GCC, TOSAC_ARM_SIZE,
# TOSAC_QEMU_ARM, TOSAC_MCU_PLATFORM, TOSAC_MCU_CFLAGS and TOSAC_MCU_LDFLAGS (TosacMcu.cmake).
set -u
WORK=$1
SRC=$(cd "$(dirname "$0")/../.." && pwd)
for v in TOSAC_ARM_GCC TOSAC_ARM_SIZE TOSAC_QEMU_ARM TOSAC_MCU_PLATFORM TOSAC_MCU_CFLAGS TOSAC_MCU_LDFLAGS; do
    [ -n "${!v:-}" ] || { echo "FAIL $v is not set (arm-none-eabi-gcc or qemu-system-arm missing?)"; exit 1; }
done
read -r -a CFLAGS <<<"$TOSAC_MCU_CFLAGS"
read -r -a LDFLAGS <<<"$TOSAC_MCU_LDFLAGS"
CFLAGS+=(-DTOSAC_NO_SIMD -D_POSIX_C_SOURCE=200809L -I"$SRC/include" -I"$SRC/src" -I"$TOSAC_MCU_PLATFORM")
fails=0
obj=$WORK/.obj_m55
mkdir -p "$obj"
compile() { # SRC OBJ: each source once
    [ -f "$2" ] || "$TOSAC_ARM_GCC" "${CFLAGS[@]}" -c "$1" -o "$2"
}
compile "$TOSAC_MCU_PLATFORM/startup.c" "$obj/startup.o" && compile "$TOSAC_MCU_PLATFORM/semihost.c" "$obj/semihost.o" ||
    { echo "FAIL platform layer"; exit 1; }
echo "flash = text + data of the ELF less the test data (model, runner, kernels, libc/libgcc pieces, startup, check main)"
printf '%-18s %10s %12s %8s %10s %10s\n' model arena lower-bound stack RAM flash
for d in "$WORK"/*/; do
    m=$(basename "$d")
    c=$d/c_mve
    [ -f "$c/$m.c" ] || { echo "FAIL $m: no emitted C (emit_c.setup failed)"; fails=$((fails + 1)); continue; }
    objs=("$obj/startup.o" "$obj/semihost.o") ok=true
    while read -r f; do
        o=$obj/$(echo "$f" | tr / _).o
        compile "$SRC/$f" "$o" 2>>"$d/m55_build.log" || ok=false
        objs+=("$o")
    done <"$c/sources.txt"
    flags=("${CFLAGS[@]}" -I"$c" -DEMIT_MCU -DEMIT_HEADER="\"$m.h\"" -DEMIT_INVOKE="${m}_invoke" -DEMIT_ARENA="${m}_ARENA_SIZE")
    if ! $ok || ! "$TOSAC_ARM_GCC" "${flags[@]}" -c "$c/$m.c" -o "$d/m55_model.o" 2>>"$d/m55_build.log" ||
       ! "$TOSAC_ARM_GCC" "${flags[@]}" -c "$d/testdata.c" -o "$d/m55_testdata.o" 2>>"$d/m55_build.log" ||
       ! "$TOSAC_ARM_GCC" "${flags[@]}" -c "$SRC/tests/mcu/emit_check_main.c" -o "$d/m55_main.o" 2>>"$d/m55_build.log" ||
       ! "$TOSAC_ARM_GCC" "${CFLAGS[@]}" "${objs[@]}" "$d/m55_model.o" "$d/m55_main.o" "$d/m55_testdata.o" \
            "${LDFLAGS[@]}" -o "$d/$m.elf" 2>>"$d/m55_build.log"; then
        echo "FAIL $m: build"; head -30 "$d/m55_build.log"; fails=$((fails + 1)); continue
    fi
    if ! TOSAC_QEMU_ARM=$TOSAC_QEMU_ARM bash "$TOSAC_MCU_PLATFORM/run.sh" --timeout 120 "$d/$m.elf" >"$d/m55_run.log" 2>&1; then
        echo "FAIL $m:"; cat "$d/m55_run.log"; fails=$((fails + 1)); continue
    fi
    arena=$(sed -n "s/^#define ${m}_ARENA_SIZE //p" "$c/$m.h")
    lb=$(sed -n "s/^#define ${m}_ARENA_LOWER_BOUND //p" "$c/$m.h")
    stack=$(sed -n 's/^stack high-water mark: \([0-9]*\) bytes/\1/p' "$d/m55_run.log")
    read -r text data _ < <("$TOSAC_ARM_SIZE" "$d/$m.elf" | tail -1)
    read -r ttext tdata _ < <("$TOSAC_ARM_SIZE" "$d/m55_testdata.o" | tail -1)
    flash=$((text + data - ttext - tdata))
    printf '%-18s %10s %12s %8s %10s %10s   (%s)\n' "$m" "$arena" "$lb" "$stack" $((arena + stack)) "$flash" \
        "$(grep -c identical "$d/m55_run.log") outputs identical"
    # ExecuTorch's RAM and flash on an M55 (MCU.md, KiB as bytes): ours must stay within them
    case $m in
    ds_cnn) budget=(26624 75469) ;;
    resnet8) budget=(56422 122470) ;;
    mobilenet_v1_025) budget=(87244 296038) ;;
    autoencoder) budget=(5324 293888) ;;
    *) budget=() ;;
    esac
    if [ ${#budget[@]} -eq 2 ] && { [ $((arena + stack)) -gt "${budget[0]}" ] || [ "$flash" -gt "${budget[1]}" ]; }; then
        echo "FAIL $m: RAM $((arena + stack)) or flash $flash above ExecuTorch's ${budget[0]} / ${budget[1]} bytes"
        fails=$((fails + 1))
    fi
done
echo "$fails failed"
[ $fails -eq 0 ]
