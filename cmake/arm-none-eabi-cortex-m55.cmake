# Cross-compiling for an Arm Cortex-M55 (Helium/MVE, hard-float) with Debian's arm-none-eabi GCC
# and newlib-nano (docs/EMIT_C.md):
#   cmake -S . -B build/m55 -DTOSAC_RUNTIME_ONLY=ON \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/arm-none-eabi-cortex-m55.cmake
# Bare metal: no operating system, so CMake's test programs are linked as static libraries only.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR cortex-m55)

set(CMAKE_C_COMPILER arm-none-eabi-gcc)
set(CMAKE_ASM_COMPILER arm-none-eabi-gcc)
set(CMAKE_AR arm-none-eabi-ar CACHE FILEPATH "")
set(CMAKE_RANLIB arm-none-eabi-ranlib CACHE FILEPATH "")
set(CMAKE_OBJCOPY arm-none-eabi-objcopy CACHE FILEPATH "")
set(CMAKE_SIZE arm-none-eabi-size CACHE FILEPATH "")
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

# -mfpu=auto takes the FPU and MVE from -mcpu (__ARM_FEATURE_MVE == 3). Debian's GCC <stdint.h>
# does not pull in newlib's, so <inttypes.h> first leaves PRId64 undefined: sys/types.h first
# brings newlib's integer type machinery in (MCU.md).
set(TOSAC_M55_FLAGS "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard -mfpu=auto -ffunction-sections -fdata-sections -include sys/types.h")
set(CMAKE_C_FLAGS_INIT "${TOSAC_M55_FLAGS}")
set(CMAKE_ASM_FLAGS_INIT "${TOSAC_M55_FLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "--specs=nano.specs -Wl,--gc-sections")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)

# A device's heap is small: 4 KiB chunks for the runtime's internal tables (CMakeLists.txt).
set(TOSAC_ARENA_CHUNK 4096 CACHE STRING "Bytes of one chunk of tosac's internal bump allocator")
