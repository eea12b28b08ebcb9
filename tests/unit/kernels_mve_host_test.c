/*
 * The Helium (TOSAC_KISA_MVE) hooks on a host without MVE: prepare packs the Helium layout (plain
 * C, what a host prepares for emitted Cortex-M code), deterministically and differently from the
 * portable layout; running such a call here fails cleanly (UNSUPPORTED) instead of misreading it;
 * calls the Helium kernels leave alone (int16 CONV2D, MATMUL) and the RESCALE (whose prepared bytes
 * start with the portable ones) give the portable bits at the MVE level. The Helium results
 * themselves are checked in QEMU (tests/mcu/kernels_mve.c).
 */
#include <stdlib.h>
#include <string.h>

#include "harness/ktensor.h"
#include "harness/test.h"
#include "kernels/kernel.h"

static void fill(tt *x, uint32_t seed)
{
    for (int64_t i = 0; i < x->t.nelem; i++) {
        seed = seed * 1664525u + 1013904223u;
        const int32_t v = (int32_t)(seed >> 24) - 128;
        if (x->t.dtype == TOSAC_DTYPE_INT8)
            ((int8_t *)x->buf)[i] = (int8_t)v;
        else if (x->t.dtype == TOSAC_DTYPE_INT16)
            ((int16_t *)x->buf)[i] = (int16_t)(v * 100);
        else
            ((int32_t *)x->buf)[i] = v * 1000;
    }
}

/* Prepares c at `isa` into fresh buffers (*prep, *scratch: caller frees); returns the status. */
static tosac_status prepare(tosac_kcall *c, uint32_t isa, tosac_kprep *sz, uint8_t **prep)
{
    c->isa = isa;
    tosac_kernel_prepare_fn pf = tosac_kernel_prepare_for(c->op);
    tosac_status s = pf(c, sz, NULL);
    *prep = calloc(sz->const_size + 16, 1);
    if (s == TOSAC_OK && sz->const_size) s = pf(c, sz, *prep);
    return s;
}

/* Runs c at `isa`; the output bytes go to `out` (n bytes). */
static tosac_status run(tosac_kcall *c, uint32_t isa, const tt *y, uint8_t *out)
{
    tosac_kprep sz = {0, 0, 0};
    uint8_t *prep;
    tosac_status s = prepare(c, isa, &sz, &prep);
    void *scratch = calloc(sz.scratch_size + 16, 1);
    c->prep = sz.const_size ? prep : NULL, c->prep_size = sz.const_size;
    c->scratch = scratch, c->scratch_size = sz.scratch_size;
    if (s == TOSAC_OK) s = tosac_kernel_for(c->op)(c);
    memcpy(out, y->buf, (size_t)y->t.nelem * y->es);
    c->prep = NULL, c->scratch = NULL;
    free(prep);
    free(scratch);
    return s;
}

typedef struct conv {
    tt x, w, b, izp, wzp, y;
    tosac_ktensor in[5];
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    int32_t pad[4], st[2], dl[2];
    tosac_kcall c;
} conv;

static void conv_make(conv *k, tosac_dtype dt)
{
    memset(k, 0, sizeof *k);
    const int64_t xs[4] = {1, 6, 5, 13}, ws[4] = {7, 3, 3, 13}, ys[4] = {1, 6, 5, 7}, one = 1, oc = 7;
    tt_make(&k->x, dt, false, 4, xs), tt_make(&k->w, TOSAC_DTYPE_INT8, false, 4, ws);
    tt_make(&k->b, dt == TOSAC_DTYPE_INT8 ? TOSAC_DTYPE_INT32 : TOSAC_DTYPE_INT48, false, 1, &oc);
    tt_make(&k->izp, dt, false, 1, &one), tt_make(&k->wzp, TOSAC_DTYPE_INT8, false, 1, &one);
    tt_make(&k->y, dt == TOSAC_DTYPE_INT8 ? TOSAC_DTYPE_INT32 : TOSAC_DTYPE_INT48, false, 4, ys);
    fill(&k->x, 1), fill(&k->w, 2);
    if (dt == TOSAC_DTYPE_INT8) ((int8_t *)k->izp.buf)[0] = -5, fill(&k->b, 3);
    k->in[0] = k->x.t, k->in[1] = k->w.t, k->in[2] = k->b.t, k->in[3] = k->izp.t, k->in[4] = k->wzp.t;
    for (int i = 1; i < 5; i++) k->in[i].constant = true;
    for (int i = 0; i < 4; i++) k->pad[i] = 1;
    k->st[0] = k->st[1] = k->dl[0] = k->dl[1] = 1;
    k->a[TOSAC_ATTR_CONV2D_pad] = (tosac_attr_val){true, 0, k->pad, 4};
    k->a[TOSAC_ATTR_CONV2D_stride] = (tosac_attr_val){true, 0, k->st, 2};
    k->a[TOSAC_ATTR_CONV2D_dilation] = (tosac_attr_val){true, 0, k->dl, 2};
    k->a[TOSAC_ATTR_CONV2D_acc_type] =
        (tosac_attr_val){true, dt == TOSAC_DTYPE_INT8 ? TOSAC_DTYPE_INT32 : TOSAC_DTYPE_INT48, NULL, 0};
    k->c = (tosac_kcall){.op = TOSAC_OP_CONV2D, .n_in = 5, .n_out = 1, .in = k->in, .out = &k->y.t, .attr = k->a};
}

static void conv_free(conv *k)
{
    tt_free(&k->x), tt_free(&k->w), tt_free(&k->b), tt_free(&k->izp), tt_free(&k->wzp), tt_free(&k->y);
}

static void test_conv_layouts(void)
{
    conv k;
    conv_make(&k, TOSAC_DTYPE_INT8);
    tosac_kprep s0 = {0, 0, 0}, s1 = {0, 0, 0}, s2 = {0, 0, 0};
    uint8_t *p0, *p1, *p2;
    EXPECT_EQ_I(prepare(&k.c, TOSAC_KISA_PORTABLE, &s0, &p0), TOSAC_OK);
    EXPECT_EQ_I(prepare(&k.c, TOSAC_KISA_MVE, &s1, &p1), TOSAC_OK);
    EXPECT_EQ_I(prepare(&k.c, TOSAC_KISA_MVE, &s2, &p2), TOSAC_OK);
    EXPECT(s1.const_size > 0 && s1.const_size == s2.const_size && memcmp(p1, p2, s1.const_size) == 0);
    EXPECT(s1.const_size != s0.const_size || memcmp(p0, p1, s0.const_size) != 0);
    free(p0), free(p1), free(p2);
    uint8_t *out = malloc(k.y.t.nelem * 4);
    k.c.why = NULL;
    EXPECT_EQ_I(run(&k.c, TOSAC_KISA_MVE, &k.y, out), TOSAC_ERR_UNSUPPORTED);
    EXPECT(k.c.why != NULL);
    free(out);
    conv_free(&k);
}

/* int16 CONV2D: the Helium kernels leave it; the MVE level gives the portable bytes and bits. */
static void test_conv_fallback(void)
{
    conv k;
    conv_make(&k, TOSAC_DTYPE_INT16);
    tosac_kprep s0 = {0, 0, 0}, s1 = {0, 0, 0};
    uint8_t *p0, *p1;
    EXPECT_EQ_I(prepare(&k.c, TOSAC_KISA_PORTABLE, &s0, &p0), TOSAC_OK);
    EXPECT_EQ_I(prepare(&k.c, TOSAC_KISA_MVE, &s1, &p1), TOSAC_OK);
    EXPECT(s0.const_size == s1.const_size && s0.scratch_size == s1.scratch_size && memcmp(p0, p1, s0.const_size) == 0);
    free(p0), free(p1);
    const size_t n = (size_t)k.y.t.nelem * k.y.es;
    uint8_t *want = malloc(n), *got = malloc(n);
    EXPECT_EQ_I(run(&k.c, TOSAC_KISA_PORTABLE, &k.y, want), TOSAC_OK);
    EXPECT_EQ_I(run(&k.c, TOSAC_KISA_MVE, &k.y, got), TOSAC_OK);
    EXPECT(memcmp(want, got, n) == 0);
    free(want), free(got);
    conv_free(&k);
}

/* RESCALE: the MVE bytes extend the portable ones; the portable path runs on them here. */
static void test_rescale(void)
{
    const int64_t xs[2] = {9, 6}, nc = 6, one = 1;
    tt x, m, s, izp, ozp, y;
    tt_make(&x, TOSAC_DTYPE_INT32, false, 2, xs), tt_make(&y, TOSAC_DTYPE_INT8, false, 2, xs);
    tt_make(&m, TOSAC_DTYPE_INT32, false, 1, &nc), tt_make(&s, TOSAC_DTYPE_INT8, false, 1, &nc);
    tt_make(&izp, TOSAC_DTYPE_INT32, false, 1, &one), tt_make(&ozp, TOSAC_DTYPE_INT8, false, 1, &one);
    fill(&x, 4);
    for (int j = 0; j < 6; j++) ((int32_t *)m.buf)[j] = (1 << 30) + j * 12345, ((int8_t *)s.buf)[j] = (int8_t)(36 + j);
    ((int8_t *)ozp.buf)[0] = 3;
    tosac_ktensor in[5] = {x.t, m.t, s.t, izp.t, ozp.t};
    for (int i = 1; i < 5; i++) in[i].constant = true;
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    memset(a, 0, sizeof a);
    a[TOSAC_ATTR_RESCALE_scale32] = (tosac_attr_val){true, 1, NULL, 0};
    a[TOSAC_ATTR_RESCALE_rounding_mode] = (tosac_attr_val){true, TOSAC_ROUND_DOUBLE, NULL, 0};
    a[TOSAC_ATTR_RESCALE_per_channel] = (tosac_attr_val){true, 1, NULL, 0};
    tosac_kcall c = {.op = TOSAC_OP_RESCALE, .n_in = 5, .n_out = 1, .in = in, .out = &y.t, .attr = a};
    tosac_kprep s0 = {0, 0, 0}, s1 = {0, 0, 0};
    uint8_t *p0, *p1;
    EXPECT_EQ_I(prepare(&c, TOSAC_KISA_PORTABLE, &s0, &p0), TOSAC_OK);
    EXPECT_EQ_I(prepare(&c, TOSAC_KISA_MVE, &s1, &p1), TOSAC_OK);
    EXPECT(s1.const_size > s0.const_size && s0.const_size > 0 && memcmp(p0, p1, s0.const_size) == 0);
    free(p0), free(p1);
    uint8_t want[54], got[54];
    EXPECT_EQ_I(run(&c, TOSAC_KISA_PORTABLE, &y, want), TOSAC_OK);
    EXPECT_EQ_I(run(&c, TOSAC_KISA_MVE, &y, got), TOSAC_OK);
    EXPECT(memcmp(want, got, sizeof want) == 0);
    tt_free(&x), tt_free(&m), tt_free(&s), tt_free(&izp), tt_free(&ozp), tt_free(&y);
}

int main(void)
{
    RUN(test_conv_layouts);
    RUN(test_conv_fallback);
    RUN(test_rescale);
    return test_summary();
}
