#!/bin/bash
# libtosac_rt cross-compiled for a Cortex-M55 (cmake/arm-none-eabi-cortex-m55.cmake) with the
# project's warning flags and -Werror: the runtime-only library builds for bare metal, as the README
# says. The toolchain comes from scripts/install-deps.sh; without it the test fails (never skips).
. "$TOSAC_SOURCE_DIR/tests/harness/script_lib.sh" "$@"

if ! command -v arm-none-eabi-gcc >/dev/null; then
    echo "FAIL arm-none-eabi-gcc not found: install gcc-arm-none-eabi and libnewlib-arm-none-eabi (scripts/install-deps.sh)"
    exit 1
fi
cmake -S "$TOSAC_SOURCE_DIR" -B m55 -G Ninja -DTOSAC_RUNTIME_ONLY=ON -DTOSAC_WERROR=ON \
    -DCMAKE_TOOLCHAIN_FILE="$TOSAC_SOURCE_DIR/cmake/arm-none-eabi-cortex-m55.cmake" \
    -DCMAKE_BUILD_TYPE=MinSizeRel >configure.log 2>&1
check "configure for arm-none-eabi" '[ $? -eq 0 ] || { cat configure.log; false; }'
cmake --build m55 -j2 >build.log 2>&1
check "libtosac_rt builds warning-free (-Werror)" '[ $? -eq 0 ] || { tail -40 build.log; false; }'
check "no warning in the log" '! grep -q "warning:" build.log'
check "the library is Arm code" 'arm-none-eabi-objdump -f m55/libtosac_rt.a | grep -q "elf32-littlearm"'
check "4 KiB allocator chunks" 'grep -q "^TOSAC_ARENA_CHUNK:STRING=4096" m55/CMakeCache.txt'
arm-none-eabi-size -t m55/libtosac_rt.a | tail -1
finish
