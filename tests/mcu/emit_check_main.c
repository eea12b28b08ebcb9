/*
 * Runs a program written by `tosac emit-c` on the inputs of a test-data file made by
 * emit_testdata.py and compares every output byte for byte with the expected outputs there (what
 * `tosac run` gave on the host). Exit status 0: identical; 1: a difference (reported); 2: the
 * program failed. The same file is the host test (tests/mcu/emit_host_test.sh) and, with the
 * platform layer's startup and semihosting, the QEMU test.
 *
 * Compile with -DEMIT_HEADER='"NAME.h"' -DEMIT_INVOKE=NAME_invoke -DEMIT_ARENA=NAME_ARENA_SIZE
 * (and -DEMIT_MCU on the QEMU platform: the stack high-water mark since reset is printed).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include EMIT_HEADER

/* emit_testdata.py */
extern const void *const test_in[];
extern const uint8_t *const test_expect[];
extern const size_t test_out_bytes[];
extern const unsigned test_n_out;
extern void *const test_out[];

static _Alignas(16) uint8_t arena[EMIT_ARENA];

#ifdef EMIT_MCU
#include "mcu.h" /* tests/mcu/platform: the stack painted at reset */
#endif

int main(void)
{
    int st = EMIT_INVOKE(test_in, test_out, arena);
#ifdef EMIT_MCU
    printf("stack high-water mark: %u bytes\n", (unsigned)mcu_stack_high_water());
#endif
    if (st != 0) {
        printf("invoke failed: status %d\n", st);
        return 2;
    }
    int bad = 0;
    for (unsigned k = 0; k < test_n_out; k++) {
        const uint8_t *got = test_out[k];
        size_t diff = 0, first = 0;
        for (size_t i = 0; i < test_out_bytes[k]; i++)
            if (got[i] != test_expect[k][i] && diff++ == 0) first = i;
        if (diff) {
            printf("output %u: %u of %u bytes differ (first at byte %u: %u, expected %u)\n", k, (unsigned)diff,
                   (unsigned)test_out_bytes[k], (unsigned)first, got[first], test_expect[k][first]);
            bad = 1;
        } else {
            printf("output %u: %u bytes identical\n", k, (unsigned)test_out_bytes[k]);
        }
    }
    return bad;
}
