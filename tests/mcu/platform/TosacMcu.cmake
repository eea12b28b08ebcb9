# Cortex-M55 programs for QEMU mps3-an547, built with the arm-none-eabi GCC from the host build
# (custom commands, no second CMake project), and CTest tests that run them.
#
#   tosac_mcu_elf(NAME SOURCES src... [INCLUDES dir...] [DEFINES D=1...] [DEPENDS file...] [CFLAGS f...])
#     builds ${CMAKE_CURRENT_BINARY_DIR}/NAME.elf (target mcu_NAME) with the platform layer (startup,
#     linker script, semihosting); sets TOSAC_MCU_ELF_NAME in the caller to its path.
#   tosac_mcu_test(NAME [EXPECT status] [TIMEOUT s]) runs NAME.elf as test mcu.NAME.
#
# TOSAC_MCU_OK is false when the toolchain or QEMU is missing: callers then call
# tosac_mcu_unavailable(NAME), a test that fails when CI=true and is skipped otherwise (visibly).
set(TOSAC_MCU_PLATFORM ${CMAKE_CURRENT_LIST_DIR})
find_program(TOSAC_ARM_GCC arm-none-eabi-gcc)
find_program(TOSAC_QEMU_ARM qemu-system-arm)
find_program(TOSAC_ARM_SIZE arm-none-eabi-size)
set(TOSAC_MCU_OK FALSE)
if(TOSAC_ARM_GCC AND TOSAC_QEMU_ARM)
  set(TOSAC_MCU_OK TRUE)
endif()

# -include sys/types.h: Debian's arm GCC <stdint.h> does not pull in newlib's, which leaves the
# PRId64 family undefined when <inttypes.h> comes first.
set(TOSAC_MCU_CFLAGS -mcpu=cortex-m55 -mthumb -mfloat-abi=hard -mfpu=auto -O2 -g -std=c11
    -Wall -Wextra -Wshadow -Wstrict-prototypes -Werror -ffunction-sections -fdata-sections
    -include sys/types.h)
set(TOSAC_MCU_LDFLAGS --specs=nano.specs -nostartfiles -T ${TOSAC_MCU_PLATFORM}/mps3_an547.ld
    -Wl,--gc-sections -Wl,--no-warn-rwx-segments -lm)

function(tosac_mcu_elf name)
  cmake_parse_arguments(M "" "" "SOURCES;INCLUDES;DEFINES;DEPENDS;CFLAGS" ${ARGN})
  set(elf ${CMAKE_CURRENT_BINARY_DIR}/${name}.elf)
  set(flags ${TOSAC_MCU_CFLAGS} ${M_CFLAGS} -I${TOSAC_MCU_PLATFORM})
  foreach(d ${M_INCLUDES})
    list(APPEND flags -I${d})
  endforeach()
  foreach(d ${M_DEFINES})
    list(APPEND flags -D${d})
  endforeach()
  # one object per source (header dependencies from the compiler's depfiles)
  set(objs)
  foreach(src ${TOSAC_MCU_PLATFORM}/startup.c ${TOSAC_MCU_PLATFORM}/semihost.c ${M_SOURCES})
    get_filename_component(base ${src} NAME_WE)
    set(obj ${CMAKE_CURRENT_BINARY_DIR}/${name}_obj/${base}.o)
    add_custom_command(OUTPUT ${obj}
      COMMAND ${TOSAC_ARM_GCC} ${flags} -MD -MF ${obj}.d -c ${src} -o ${obj}
      DEPENDS ${src} ${M_DEPENDS}
      DEPFILE ${obj}.d
      COMMENT "arm-none-eabi-gcc ${name}: ${base}.c"
      VERBATIM)
    list(APPEND objs ${obj})
  endforeach()
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/${name}_obj)
  add_custom_command(OUTPUT ${elf}
    COMMAND ${TOSAC_ARM_GCC} ${TOSAC_MCU_CFLAGS} ${objs} ${TOSAC_MCU_LDFLAGS} -Wl,-Map,${name}.map -o ${elf}
    DEPENDS ${objs} ${TOSAC_MCU_PLATFORM}/mps3_an547.ld
    WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}
    COMMENT "arm-none-eabi-gcc ${name}.elf"
    VERBATIM)
  add_custom_target(mcu_${name} ALL DEPENDS ${elf})
  set(TOSAC_MCU_ELF_${name} ${elf} PARENT_SCOPE)
endfunction()

function(tosac_mcu_test name)
  cmake_parse_arguments(M "" "EXPECT;TIMEOUT" "" ${ARGN})
  if(NOT M_EXPECT)
    set(M_EXPECT 0)
  endif()
  if(NOT M_TIMEOUT)
    set(M_TIMEOUT 60)
  endif()
  add_test(NAME mcu.${name}
    COMMAND bash ${TOSAC_MCU_PLATFORM}/run.sh --expect ${M_EXPECT} --timeout ${M_TIMEOUT}
            ${CMAKE_CURRENT_BINARY_DIR}/${name}.elf)
  set_tests_properties(mcu.${name} PROPERTIES ENVIRONMENT "TOSAC_QEMU_ARM=${TOSAC_QEMU_ARM}"
                       TIMEOUT ${M_TIMEOUT})
endfunction()

function(tosac_mcu_unavailable name)
  set(msg "arm-none-eabi-gcc or qemu-system-arm not found (scripts/install-deps.sh installs them)")
  if("$ENV{CI}" STREQUAL "true")
    add_test(NAME mcu.${name} COMMAND bash -c "echo 'mcu: ${msg}' >&2; exit 1")
  else()
    message(STATUS "tests/mcu: ${msg}: mcu.${name} is skipped")
    add_test(NAME mcu.${name} COMMAND bash -c "echo 'mcu: SKIPPED: ${msg}' >&2; exit 77")
    set_tests_properties(mcu.${name} PROPERTIES SKIP_RETURN_CODE 77)
  endif()
endfunction()
