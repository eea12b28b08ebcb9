/*
 * A TOSA program run by tosac's runtime on the Cortex-M55 (QEMU): reads model.tosa from QEMU's
 * working directory (semihosting), creates the program twice (portable kernels, then Helium), fills
 * the int8 input with seeded random values before each of two invokes and counts the second
 * (region 0: portable, region 1: Helium); the outputs must be identical. bench/mcu/mcu_bench.py
 * compiles the zoo's DS-CNN to INT8 for it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kernels/kernel.h"
#include "mcu.h"
#include "tosac/runtime.h"
#include "tosac/tosa_file.h"

/* bare metal has no clock: the runtime's timing reads 0 */
int clock_gettime(clockid_t id, struct timespec *ts);
int clock_gettime(clockid_t id, struct timespec *ts)
{
    (void)id;
    ts->tv_sec = 0, ts->tv_nsec = 0;
    return 0;
}

static uint32_t seed = 12345u;
static uint8_t next(void)
{
    seed = seed * 1664525u + 1013904223u;
    return (uint8_t)(seed >> 24);
}

int main(void)
{
    size_t len = 0;
    void *bytes = mcu_read_file("model.tosa", &len);
    tosac_graph *g = NULL;
    if (!bytes || tosac_tosa_read_mem(bytes, len, "model.tosa", NULL, &g, NULL) != TOSAC_OK) {
        printf("dscnn_rt: cannot read model.tosa\n");
        return 2;
    }
    uint8_t *out[2] = {NULL, NULL};
    size_t out_bytes = 0;
    for (int level = 0; level < 2; level++) {
        tosac_kernel_limit_isa(level ? TOSAC_KISA_MVE : TOSAC_KISA_PORTABLE);
        tosac_program_opts o = tosac_program_opts_default();
        tosac_program *p = NULL;
        tosac_diag *d = tosac_diag_create();
        if (tosac_program_create(g, &o, &p, d) != TOSAC_OK) {
            printf("dscnn_rt: create failed\n");
            return 3;
        }
        tosac_tensor_info ii, oi;
        tosac_program_input_info(p, 0, &ii);
        tosac_program_output_info(p, 0, &oi);
        /* the input's arena slot is reused once it is read: written before every invoke */
        uint8_t *in = tosac_program_input_ptr(p, 0);
        seed = 12345u;
        for (size_t i = 0; i < ii.nbytes; i++) in[i] = next();
        tosac_status s = tosac_program_invoke(p, d);
        seed = 12345u;
        for (size_t i = 0; i < ii.nbytes; i++) in[i] = next();
        tosac_mark_begin();
        s |= tosac_program_invoke(p, d);
        tosac_mark_end();
        if (s != TOSAC_OK) {
            printf("dscnn_rt: invoke failed\n");
            return 4;
        }
        out_bytes = oi.nbytes;
        out[level] = malloc(out_bytes);
        memcpy(out[level], tosac_program_output_ptr(p, 0), out_bytes);
        tosac_program_destroy(p);
        tosac_diag_destroy(d);
    }
    int same = memcmp(out[0], out[1], out_bytes) == 0;
    printf("dscnn_rt: outputs %s (%u bytes), stack %u bytes\n", same ? "identical" : "DIFFER", (unsigned)out_bytes,
           (unsigned)mcu_stack_high_water());
    return same ? 0 : 1;
}
