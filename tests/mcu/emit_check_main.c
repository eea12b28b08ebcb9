/*
 * Runs a program written by `tosac emit-c` on the inputs of a test-data file made by
 * emit_testdata.py and compares every output byte for byte with the expected outputs there (what
 * `tosac run` gave on the host). Exit status 0: identical; 1: a difference (reported); 2: the
 * program failed. The same file is the host test (tests/mcu/emit_host_test.sh) and, with the
 * platform layer's startup and semihosting, the QEMU test.
 *
 * Compile with -DEMIT_HEADER='"NAME.h"' -DEMIT_INVOKE=NAME_invoke -DEMIT_ARENA=NAME_ARENA_SIZE
 * (and -DEMIT_MCU on the QEMU platform: the stack high-water mark since reset is printed). The
 * report is formatted here and written with the platform's raw write (no printf): the flash the
 * QEMU test reports is the model's, its kernels', the C library pieces they call and the startup
 * code, with only this file's few hundred bytes of the harness.
 */
#include <stddef.h>
#include <stdint.h>
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
#include "mcu.h" /* tests/mcu/platform: the stack painted at reset, mcu_write */
static void out_str(const char *s) { mcu_write(1, s, strlen(s)); }
#else
#include <stdio.h>
static void out_str(const char *s) { fputs(s, stdout); }
#endif

/* s, then the decimal of v (negative when neg), then the next piece. */
static void out_num(const char *s, unsigned long v, int neg)
{
    char b[24], *p = b + sizeof b;
    *--p = 0;
    do *--p = (char)('0' + v % 10); while (v /= 10);
    if (neg) *--p = '-';
    out_str(s);
    out_str(p);
}

int main(void)
{
    int st = EMIT_INVOKE(test_in, test_out, arena);
#ifdef EMIT_MCU
    out_num("stack high-water mark: ", (unsigned long)mcu_stack_high_water(), 0);
    out_str(" bytes\n");
#endif
    if (st != 0) {
        out_num("invoke failed: status ", (unsigned long)(st < 0 ? -(long)st : st), st < 0);
        out_str("\n");
        return 2;
    }
    int bad = 0;
    for (unsigned k = 0; k < test_n_out; k++) {
        const uint8_t *got = test_out[k];
        size_t diff = 0, first = 0;
        for (size_t i = 0; i < test_out_bytes[k]; i++)
            if (got[i] != test_expect[k][i] && diff++ == 0) first = i;
        out_num("output ", k, 0);
        if (diff) {
            out_num(": ", diff, 0);
            out_num(" of ", test_out_bytes[k], 0);
            out_num(" bytes differ (first at byte ", first, 0);
            out_num(": ", got[first], 0);
            out_num(", expected ", test_expect[k][first], 0);
            out_str(")\n");
            bad = 1;
        } else {
            out_num(": ", test_out_bytes[k], 0);
            out_str(" bytes identical\n");
        }
    }
    return bad;
}
