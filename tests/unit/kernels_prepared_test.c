/*
 * The kernels' prepare step and fused epilogues through the runtime, on examples/conv_int8.tosa
 * (CONV2D -> RESCALE -> CLAMP -> RESHAPE): the fused program, the same program with an op callback
 * (every operator run one by one, their results observable) and a program whose prepared
 * constants the caller supplies give the same output bytes, at every instruction-set level; a
 * program without its prepared constants refuses to run.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/test.h"
#include "kernels/kernel.h"
#include "tosac/runtime.h"
#include "tosac/status.h"
#include "tosac/tosa_file.h"

static uint32_t n_ops_seen;

static void on_op(void *user, uint32_t op_index, uint32_t op, uint64_t ns)
{
    (void)user, (void)op_index, (void)op, (void)ns;
    n_ops_seen++;
}

/* Runs the graph on a fixed input; copies the output into out (n bytes). */
static tosac_status run(const tosac_graph *g, bool caller_prepared, bool observe, uint8_t *out, size_t n)
{
    tosac_program_opts o = tosac_program_opts_default();
    o.caller_prepared = caller_prepared;
    tosac_program *p = NULL;
    tosac_status s = tosac_program_create(g, &o, &p, NULL);
    if (s != TOSAC_OK) return s;
    void *prep = NULL;
    tosac_tensor_info in;
    tosac_program_input_info(p, 0, &in);
    int8_t *x = tosac_program_input_ptr(p, 0);
    for (int64_t i = 0; i < in.nelem; i++) x[i] = (int8_t)((i * 37 + 11) % 256 - 128);
    if (caller_prepared) {
        size_t sz = tosac_program_prepared_size(p);
        EXPECT(sz > 0);
        EXPECT(tosac_program_prepared(p) == NULL);
        EXPECT_EQ_I(tosac_program_invoke(p, NULL), TOSAC_ERR_INVALID_ARG); /* not prepared yet */
        static uint8_t misaligned[32];
        EXPECT_EQ_I(tosac_program_set_prepared(p, misaligned + 1, sz, NULL), TOSAC_ERR_INVALID_ARG); /* never written */
        prep = aligned_alloc(64, (sz + 63) & ~(size_t)63);
        EXPECT_EQ_I(tosac_program_set_prepared(p, prep, sz, NULL), TOSAC_OK);
        EXPECT(tosac_program_prepared(p) == prep);
        for (int64_t i = 0; i < in.nelem; i++) x[i] = (int8_t)((i * 37 + 11) % 256 - 128);
    }
    if (observe) tosac_program_set_op_callback(p, on_op, NULL);
    s = tosac_program_invoke(p, NULL);
    if (s == TOSAC_OK) {
        tosac_tensor_info oi;
        tosac_program_output_info(p, 0, &oi);
        EXPECT_EQ_I(oi.nbytes, n);
        memcpy(out, tosac_program_output_ptr(p, 0), n);
    }
    tosac_program_destroy(p);
    free(prep);
    return s;
}

static void test_prepared_and_fused(void)
{
    const char *src = getenv("TOSAC_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/examples/conv_int8.tosa", src ? src : "..");
    tosac_graph *g = NULL;
    EXPECT_EQ_I(tosac_tosa_read_file(path, NULL, &g, NULL), TOSAC_OK);
    if (!g) return;
    uint8_t ref[256], got[256];
    tosac_kernel_limit_isa(TOSAC_KISA_PORTABLE);
    n_ops_seen = 0;
    EXPECT_EQ_I(run(g, false, true, ref, sizeof ref), TOSAC_OK); /* portable kernels, one by one */
    EXPECT(n_ops_seen >= 4);
    for (uint32_t level = 0; level <= TOSAC_KISA_AVX512; level++) {
        tosac_kernel_limit_isa(level);
        for (int mode = 0; mode < 3; mode++) {
            memset(got, 0x5A, sizeof got);
            EXPECT_EQ_I(run(g, mode == 2, mode == 1, got, sizeof got), TOSAC_OK);
            if (memcmp(ref, got, sizeof ref) != 0) {
                fprintf(stderr, "  level %u mode %d differs\n", level, mode);
                EXPECT(!"output differs");
            }
        }
    }
    tosac_kernel_limit_isa(TOSAC_KISA_AVX512);
    tosac_graph_destroy(g);
}

int main(void)
{
    RUN(test_prepared_and_fused);
    return test_summary();
}
