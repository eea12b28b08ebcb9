#!/bin/bash
# libtosac_rt cross-compiled for a Cortex-M55 (cmake/arm-none-eabi-cortex-m55.cmake) with the
# project's warning flags and -Werror: the runtime-only library builds for bare metal, as the README
# says, and calls 64-bit division only from the setup-time functions listed below. The toolchain comes
# from scripts/install-deps.sh; without it the test fails (never skips).
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

# 32-bit clean (issue 13): no 64-bit division (libgcc's __aeabi_ldivmod / __aeabi_uldivmod and their
# generic forms) in any per-element, per-pixel or per-row code. Only these setup-time functions may call
# one; each runs once per graph, tensor or call, never per element. A new caller fails the test.
div64_allowed=(
    tosac_checked_mul         # validator: overflow-checked products of shapes and attributes
    tosac_check_nelem         # validator: a tensor's element count
    tosac_check_resize        # validator: RESIZE's output-size formula and scale limits
    window_out                # validator: pooling / convolution output-size formula
    validate_block            # validator: tensor bytes against 2^MAX_LOG2_SIZE
    tosac_value_nelem         # program build: a tensor's element count
    tosac_dtype_storage_bytes # program build: a tensor's bytes (overflow check, INT4 pairs)
    shape_count               # .npy reading: the header's element count
    parse_dict                # .npy reading: the header's shape
    rs_prepare                # RESCALE prepare: table rows per scratch block, once per program
)
div64_re='__(aeabi_u?ldivmod|u?divdi3|u?moddi3|udivmoddi4)'
arm-none-eabi-objdump -dr m55/libtosac_rt.a >rt.dis 2>objdump.log
check "the library disassembles" '[ $? -eq 0 ] && [ -s rt.dis ] || { cat objdump.log; false; }'
# function name of every 64-bit division call (GCC's .isra/.constprop/.part clones named as their source)
awk -v re="$div64_re" '/^[0-9a-f]+ <[^>]+>:$/ { fn = substr($2, 2, length($2) - 3); sub(/\..*/, "", fn) }
                       $0 ~ re && fn != "" { print fn }' rt.dis | sort -u >div64.txt
sed -n 's/^[0-9a-f]* <\([^>.]*\)[^>]*>:$/\1/p' rt.dis | sort -u >functions.txt
check "the scan sees functions and the allowed setup-time divisions (it cannot pass by finding nothing)" \
    '[ "$(wc -l <functions.txt)" -gt 100 ] && [ -s div64.txt ]'
printf '%s\n' "${div64_allowed[@]}" | sort -u >allowed.txt
check "every allowlisted function exists in the library" \
    'stale=$(comm -23 allowed.txt functions.txt); [ -z "$stale" ] || { echo "not in libtosac_rt: $stale"; false; }'
check "no 64-bit division outside the setup-time allowlist" \
    'extra=$(comm -23 div64.txt allowed.txt); [ -z "$extra" ] || { echo "64-bit division in: $extra"; false; }'
arm-none-eabi-size -t m55/libtosac_rt.a | tail -1
finish
