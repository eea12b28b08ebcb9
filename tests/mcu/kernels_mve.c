/*
 * Helium kernels against the portable kernels, bit for bit, in QEMU's Cortex-M55: every call is
 * run at TOSAC_KISA_PORTABLE and at TOSAC_KISA_MVE on the same seeded random data and the output
 * bytes and statuses must agree. Edge shapes (channel counts not a multiple of 16, padding,
 * strides, dilation, non-zero zero points, per-channel and per-tensor scales, both roundings,
 * int8 and int16 results, shifts below 32 that the Helium path leaves to the portable one), then
 * random shapes. The Helium path must have been taken on most of them (k_mve.h's prepare hooks
 * say which). Exit status: the number of mismatches (0 = pass).
 */
#include <stdio.h>

#include "kcase.h"
#include "kernels/k_mve.h"

static int fails, cases, mve_cases;

static void check(const char *what, tosac_kcall *c, const tosac_ktensor *out)
{
    size_t n = (size_t)out->nelem * tosac_exec_elem_size(out->dtype, false);
    uint8_t *want = kc_alloc(n);
    memset(out->data, 0x5A, n);
    tosac_status s0 = kc_run(c, TOSAC_KISA_PORTABLE, NULL);
    memcpy(want, out->data, n);
    memset(out->data, 0xC3, n);
    tosac_status s1 = kc_run(c, TOSAC_KISA_MVE, NULL);
    cases++;
    if (s0 != s1 || (s0 == TOSAC_OK && memcmp(want, out->data, n) != 0)) {
        size_t i = 0;
        while (i < n && want[i] == ((const uint8_t *)out->data)[i]) i++;
        printf("FAIL %s: status %d vs %d, first differing byte %u of %u\n", what, (int)s0, (int)s1, (unsigned)i,
               (unsigned)n);
        fails++;
    }
}

static void conv_case(const kc_conv_shape *s, const char *name)
{
    size_t mark = kc_used;
    char what[96];
    for (int variant = 0; variant < 5; variant++) {
        kc_conv k;
        int32_t izp = variant == 0 ? 0 : kc_in(-128, 127), wzp = variant == 3 ? kc_in(-128, 127) : 0;
        bool fused = variant != 1, pc = variant != 2, dbl = variant & 1;
        kc_drop_epi = variant == 4; /* prepared with the epilogue, run without (int32 results) */
        tosac_dtype to = variant == 2 ? TOSAC_DTYPE_INT16 : TOSAC_DTYPE_INT8;
        /* one case in 8 has a shift below 32: the Helium path must leave it to the portable one */
        int32_t smin = kc_rnd() % 8 == 0 ? 20 : 32;
        kc_conv_make(&k, s, izp, wzp, fused, to, pc, dbl, smin, 44, 200000);
        if (fused && kc_rnd() % 2) { /* a CLAMP narrows the range */
            k.epi.lo = kc_in(k.epi.lo, 0);
            k.epi.hi = kc_in(0, k.epi.hi);
        }
        tosac_kprep sz;
        k.c.isa = TOSAC_KISA_MVE;
        mve_cases += tosac_conv_mve_prepare(&k.c, &sz, NULL);
        snprintf(what, sizeof what, "%s izp %d wzp %d fused %d pc %d dbl %d", name, (int)izp, (int)wzp, fused, pc, dbl);
        check(what, &k.c, fused && !kc_drop_epi ? &k.y.t : &k.acc.t);
        kc_drop_epi = false;
        kc_used = mark;
    }
}

static void pool_case(uint32_t op, int32_t IH, int32_t IW, int32_t C, int32_t KY, int32_t KX, int32_t sy, int32_t sx,
                      const int32_t pad[4], const char *name)
{
    size_t mark = kc_used;
    kc_pool p;
    kc_pool_make(&p, op, IH, IW, C, KY, KX, sy, sx, pad, kc_in(-128, 127), kc_in(-128, 127));
    mve_cases++; /* the pool family has no prepare hook: int8 calls always take the Helium path */
    check(name, &p.c, &p.y.t);
    kc_used = mark;
}

/* A standalone RESCALE from `ti` to `to` over shape [rows, nc] (per channel or not). */
static void rescale_case(tosac_dtype ti, tosac_dtype to, bool iu, bool ou, int32_t rows, int32_t nc, bool pc)
{
    size_t mark = kc_used;
    kc_tensor x, y;
    int32_t shape[2] = {rows, nc};
    kc_make(&x, ti, 2, shape, false), kc_make(&y, to, 2, shape, false);
    const int32_t lo = ti == TOSAC_DTYPE_INT8 ? -128 : ti == TOSAC_DTYPE_INT16 ? -32768 : INT32_MIN / 2;
    kc_fill(&x, lo, -lo - 1);
    int32_t izp = 0, ozp = 0;
    if (ti == TOSAC_DTYPE_INT8) izp = kc_in(-128, 127);
    if (ti == TOSAC_DTYPE_INT16 && iu) izp = kc_rnd() % 2 ? -32768 : 0; /* 32768 as int16 */
    if (to == TOSAC_DTYPE_INT8) ozp = kc_in(-128, 127);
    if (to == TOSAC_DTYPE_INT16 && ou) ozp = kc_rnd() % 2 ? -32768 : 0;
    /* shifts of 32 and more; or all below 32 (within the Helium path's range for 8/16-bit input,
       or below it: the portable kernel then runs, and reports the REQUIRE failures) */
    int32_t smin = 32, smax = ti == TOSAC_DTYPE_INT32 ? 50 : 44, kind = kc_in(0, 7);
    if (kind == 0) smin = 2, smax = 31;
    if (kind == 0 && ti == TOSAC_DTYPE_INT32 && kc_rnd() % 2) /* values that pass the REQUIRE |v| <= 2^(shift-1) */
        smin = 21, kc_fill(&x, -(1 << 20), (1 << 20) - 1);
    if (kind == 1 || kind == 2) smin = ti == TOSAC_DTYPE_INT16 ? 17 : 9, smax = 31;
    kc_rescale r;
    kc_rescale_make(&r, &x.t, &y.t, pc ? nc : 1, kc_rnd() % 2, izp, ozp, smin, smax, false);
    kc_attr_i(r.a, TOSAC_ATTR_RESCALE_input_unsigned, iu);
    kc_attr_i(r.a, TOSAC_ATTR_RESCALE_output_unsigned, ou);
    if (smin > 2 || ti == TOSAC_DTYPE_INT32) mve_cases++;
    for (int i = 1; i < 5; i++) r.in[i].constant = true;
    char what[64];
    snprintf(what, sizeof what, "rescale %d->%d u%d%d %dx%d pc %d", (int)ti, (int)to, iu, ou, (int)rows, (int)nc, pc);
    check(what, &r.c, &y.t);
    kc_used = mark;
}

/* An int8 MATMUL A [1, H, C] x B [1, C, W] (B constant), with a fused RESCALE or not. */
static void matmul_case(int32_t H, int32_t C, int32_t W, bool fused, bool batch2)
{
    size_t mark = kc_used;
    const int32_t N = batch2 ? 2 : 1;
    kc_tensor a, b, azp, bzp, acc, y;
    int32_t as[3] = {N, H, C}, bs[3] = {N, C, W}, os[3] = {N, H, W};
    kc_make(&a, TOSAC_DTYPE_INT8, 3, as, false), kc_fill(&a, -128, 127);
    kc_make(&b, TOSAC_DTYPE_INT8, 3, bs, true), kc_fill(&b, -128, 127);
    kc_make1(&azp, TOSAC_DTYPE_INT8, 1, true), kc_set(&azp, 0, kc_in(-128, 127));
    kc_make1(&bzp, TOSAC_DTYPE_INT8, 1, true), kc_set(&bzp, 0, kc_rnd() % 2 ? 0 : kc_in(-128, 127));
    kc_make(&acc, TOSAC_DTYPE_INT32, 3, os, false), kc_make(&y, TOSAC_DTYPE_INT8, 3, os, false);
    tosac_ktensor in[4] = {a.t, b.t, azp.t, bzp.t};
    tosac_attr_val at[TOSAC_ATTR_MAX_FIELDS];
    memset(at, 0, sizeof at);
    tosac_kcall c = {.op = TOSAC_OP_MATMUL, .n_in = 4, .n_out = 1, .in = in, .out = &acc.t, .attr = at};
    kc_rescale r;
    tosac_kepilogue epi;
    if (fused) {
        kc_rescale_make(&r, &acc.t, &y.t, kc_rnd() % 2 ? W : 1, kc_rnd() % 2, 0, kc_in(-128, 127), 32, 44, true);
        int32_t lo = -128, hi = 127;
        tosac_rescale_fusable(&r.c, &lo, &hi);
        epi = (tosac_kepilogue){.rescale = &r.c, .out = &y.t, .lo = lo, .hi = hi};
        c.epi = &epi;
    }
    char what[64];
    snprintf(what, sizeof what, "matmul %dx%dx%dx%d fused %d", (int)N, (int)H, (int)C, (int)W, fused);
    mve_cases += !batch2;
    check(what, &c, fused ? &y.t : &acc.t);
    kc_used = mark;
}

/* REDUCE_SUM (int32) / REDUCE_MAX / REDUCE_MIN of [d0, d1, d2] along `axis` (values up to `big`,
   within the type: some int32 partial sums overflow). */
static void reduce_case(uint32_t op, tosac_dtype dt, int32_t d0, int32_t d1, int32_t d2, int32_t axis, int32_t big)
{
    size_t mark = kc_used;
    kc_tensor x, y;
    int32_t xs[3] = {d0, d1, d2}, ys[3] = {d0, d1, d2};
    ys[axis] = 1;
    const int32_t top = dt == TOSAC_DTYPE_INT8 ? 127 : dt == TOSAC_DTYPE_INT16 ? 32767 : INT32_MAX;
    if (big > top) big = top;
    kc_make(&x, dt, 3, xs, false), kc_fill(&x, -big, big);
    kc_make(&y, dt, 3, ys, false);
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    memset(a, 0, sizeof a);
    kc_attr_i(a, TOSAC_ATTR_REDUCE_SUM_axis, axis);
    tosac_kcall c = {.op = op, .n_in = 1, .n_out = 1, .in = &x.t, .out = &y.t, .attr = a};
    char what[64];
    snprintf(what, sizeof what, "reduce %s %d %dx%dx%d axis %d",
             op == TOSAC_OP_REDUCE_SUM ? "sum" : op == TOSAC_OP_REDUCE_MAX ? "max" : "min", (int)dt, (int)d0, (int)d1, (int)d2, (int)axis);
    mve_cases++;
    check(what, &c, &y.t);
    kc_used = mark;
}

/* CLAMP (int8 / int16), TABLE (int8), ADD / SUB / MUL of n elements. */
static void elementwise_cases(int32_t n)
{
    size_t mark = kc_used;
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    char what[64];
    for (int t = 0; t < 2; t++) { /* CLAMP */
        const tosac_dtype dt = t ? TOSAC_DTYPE_INT16 : TOSAC_DTYPE_INT8;
        const int32_t top = t ? 32767 : 127;
        kc_tensor x, y;
        int32_t shape[1] = {n};
        kc_make(&x, dt, 1, shape, false), kc_make(&y, dt, 1, shape, false), kc_fill(&x, -top - 1, top);
        int32_t lo = kc_in(-top - 1, 0), hi = kc_in(0, top);
        uint8_t blo[2] = {(uint8_t)lo, (uint8_t)((uint32_t)lo >> 8)}, bhi[2] = {(uint8_t)hi, (uint8_t)((uint32_t)hi >> 8)};
        memset(a, 0, sizeof a);
        a[TOSAC_ATTR_CLAMP_min_val].present = true, a[TOSAC_ATTR_CLAMP_min_val].data = blo;
        a[TOSAC_ATTR_CLAMP_min_val].len = t ? 2 : 1;
        a[TOSAC_ATTR_CLAMP_max_val].present = true, a[TOSAC_ATTR_CLAMP_max_val].data = bhi;
        a[TOSAC_ATTR_CLAMP_max_val].len = t ? 2 : 1;
        tosac_kcall c = {.op = TOSAC_OP_CLAMP, .n_in = 1, .n_out = 1, .in = &x.t, .out = &y.t, .attr = a};
        snprintf(what, sizeof what, "clamp int%d n %d", t ? 16 : 8, (int)n);
        mve_cases++;
        check(what, &c, &y.t);
    }
    { /* TABLE */
        kc_tensor x, tab, y;
        int32_t shape[1] = {n};
        kc_make(&x, TOSAC_DTYPE_INT8, 1, shape, false), kc_fill(&x, -128, 127);
        kc_make1(&tab, TOSAC_DTYPE_INT8, 256, true), kc_fill(&tab, -128, 127);
        kc_make(&y, TOSAC_DTYPE_INT8, 1, shape, false);
        tosac_ktensor in[2] = {x.t, tab.t};
        memset(a, 0, sizeof a);
        tosac_kcall c = {.op = TOSAC_OP_TABLE, .n_in = 2, .n_out = 1, .in = in, .out = &y.t, .attr = a};
        snprintf(what, sizeof what, "table int8 n %d", (int)n);
        mve_cases++;
        check(what, &c, &y.t);
    }
    static const uint32_t ops[] = {TOSAC_OP_ADD, TOSAC_OP_SUB, TOSAC_OP_MUL, TOSAC_OP_MUL, TOSAC_OP_MUL};
    for (int k = 0; k < 10; k++) { /* k >= 5: the second operand a broadcast single value */
        const tosac_dtype dt = k % 5 == 3 ? TOSAC_DTYPE_INT8 : k % 5 == 4 ? TOSAC_DTYPE_INT16 : TOSAC_DTYPE_INT32;
        kc_tensor x0, x1, sh, y;
        int32_t shape[1] = {n}, one[1] = {1};
        kc_make(&x0, dt, 1, shape, false), kc_make(&x1, dt, 1, k >= 5 ? one : shape, false);
        kc_make(&y, TOSAC_DTYPE_INT32, 1, shape, false);
        /* int32 operands: mostly small, one case in three able to overflow */
        const int32_t big = dt == TOSAC_DTYPE_INT8 ? 127 : dt == TOSAC_DTYPE_INT16 ? 32767 : kc_rnd() % 3 ? 1 << 29 : INT32_MAX;
        kc_fill(&x0, -big, big), kc_fill(&x1, -big, big);
        kc_make1(&sh, TOSAC_DTYPE_INT8, 1, true), kc_set(&sh, 0, 0);
        tosac_ktensor in[3] = {x0.t, x1.t, sh.t};
        memset(a, 0, sizeof a);
        tosac_kcall c = {.op = ops[k % 5], .n_in = ops[k % 5] == TOSAC_OP_MUL ? 3 : 2, .n_out = 1, .in = in, .out = &y.t, .attr = a};
        snprintf(what, sizeof what, "binary op %u type %d n %d%s", (unsigned)ops[k % 5], (int)dt, (int)n,
                 k >= 5 ? " broadcast" : "");
        mve_cases++;
        check(what, &c, &y.t);
    }
    kc_used = mark;
}

int main(void)
{
    static const struct {
        const char *name;
        kc_conv_shape s;
    } edges[] = {
        /* op, IH, IW, IC, OC, KH, KW, sy, sx, dy, dx, pad */
        {"1x1 64->64 rows", {TOSAC_OP_CONV2D, 5, 5, 64, 64, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}}},
        {"1x1 64->64 25x5 (DS-CNN)", {TOSAC_OP_CONV2D, 25, 5, 64, 64, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}}},
        {"1x1 7->13 s2", {TOSAC_OP_CONV2D, 7, 6, 7, 13, 1, 1, 2, 2, 1, 1, {0, 0, 0, 0}}},
        {"1x1 33->5", {TOSAC_OP_CONV2D, 3, 4, 33, 5, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}}},
        {"3x3 16->16 pad", {TOSAC_OP_CONV2D, 6, 5, 16, 16, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}}},
        {"10x4 s2 1->64 ds-cnn", {TOSAC_OP_CONV2D, 49, 10, 1, 64, 10, 4, 2, 2, 1, 1, {5, 4, 1, 1}}},
        {"3x3 s2 3->8", {TOSAC_OP_CONV2D, 11, 9, 3, 8, 3, 3, 2, 2, 1, 1, {0, 1, 0, 1}}},
        {"3x3 dil2 5->9", {TOSAC_OP_CONV2D, 9, 8, 5, 9, 3, 3, 1, 1, 2, 2, {2, 1, 2, 0}}},
        {"2x3 s(1,2) 17->31 pad", {TOSAC_OP_CONV2D, 7, 9, 17, 31, 2, 3, 1, 2, 1, 1, {1, 0, 2, 1}}},
        {"fc 64->12", {TOSAC_OP_CONV2D, 1, 1, 64, 12, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}}},
        {"fc 250->3", {TOSAC_OP_CONV2D, 1, 1, 250, 3, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}}},
        /* one output pixel: the input row read in place (K a multiple of 16) or copied */
        {"fc 640->128 (autoencoder)", {TOSAC_OP_CONV2D, 1, 1, 640, 128, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}}},
        {"fc 8->130", {TOSAC_OP_CONV2D, 1, 1, 8, 130, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}}},
        {"3x3 5->7 to one pixel", {TOSAC_OP_CONV2D, 3, 3, 5, 7, 3, 3, 1, 1, 1, 1, {0, 0, 0, 0}}},
        {"3x3 pad 6->9 on 1x1", {TOSAC_OP_CONV2D, 1, 1, 6, 9, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}}},
        {"dw 3x3 64 pad", {TOSAC_OP_DEPTHWISE_CONV2D, 6, 5, 64, 64, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}}},
        {"dw 3x3 13 s2", {TOSAC_OP_DEPTHWISE_CONV2D, 9, 7, 13, 13, 3, 3, 2, 2, 1, 1, {1, 1, 1, 1}}},
        {"dw 3x3 1", {TOSAC_OP_DEPTHWISE_CONV2D, 5, 5, 1, 1, 3, 3, 1, 1, 1, 1, {0, 0, 0, 0}}},
        {"dw 3x3 17 dil2", {TOSAC_OP_DEPTHWISE_CONV2D, 8, 8, 17, 17, 3, 3, 1, 1, 2, 2, {2, 2, 2, 2}}},
        {"dw 5x2 30 pad", {TOSAC_OP_DEPTHWISE_CONV2D, 4, 6, 30, 30, 5, 2, 1, 2, 1, 1, {2, 2, 0, 1}}},
    };
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) conv_case(&edges[i].s, edges[i].name);

    for (int i = 0; i < 40; i++) {
        kc_conv_shape s;
        memset(&s, 0, sizeof s);
        s.op = i % 3 == 2 ? TOSAC_OP_DEPTHWISE_CONV2D : TOSAC_OP_CONV2D;
        s.IH = kc_in(1, 9), s.IW = kc_in(1, 9), s.IC = kc_in(1, 40), s.OC = kc_in(1, 40);
        s.KH = kc_in(1, 4), s.KW = kc_in(1, 4), s.sy = kc_in(1, 2), s.sx = kc_in(1, 2);
        s.dy = kc_rnd() % 4 ? 1 : 2, s.dx = kc_rnd() % 4 ? 1 : 2;
        for (int j = 0; j < 4; j++) s.pad[j] = kc_in(0, 2);
        while (kc_conv_out(s.IH, s.KH, s.sy, s.dy, s.pad[0], s.pad[1]) < 1) s.IH++;
        while (kc_conv_out(s.IW, s.KW, s.sx, s.dx, s.pad[2], s.pad[3]) < 1) s.IW++;
        conv_case(&s, s.op == TOSAC_OP_CONV2D ? "random conv" : "random depthwise");
    }
    static const int32_t nopad[4] = {0, 0, 0, 0}, pad1[4] = {1, 1, 1, 1}, pad2[4] = {1, 0, 2, 1};
    for (int i = 0; i < 2; i++) {
        uint32_t op = i ? TOSAC_OP_MAX_POOL2D : TOSAC_OP_AVG_POOL2D;
        pool_case(op, 25, 5, 64, 25, 5, 1, 1, nopad, "pool global 25x5x64");
        pool_case(op, 8, 8, 13, 2, 2, 2, 2, nopad, "pool 2x2 s2 13");
        pool_case(op, 7, 9, 21, 3, 3, 2, 2, pad1, "pool 3x3 s2 pad 21");
        pool_case(op, 6, 7, 40, 3, 4, 1, 2, pad2, "pool 3x4 pad 40");
        pool_case(op, 5, 5, 3, 2, 2, 1, 1, pad1, "pool 2x2 pad1 (windows of 1 tap)");
        pool_case(op, 17, 16, 8, 16, 16, 1, 1, nopad, "pool 16x16 (256 taps)");
        pool_case(op, 18, 17, 8, 17, 17, 1, 1, nopad, "pool 17x17 (portable)");
    }
    for (int i = 0; i < 20; i++) {
        int32_t KY = kc_in(1, 4), KX = kc_in(1, 4), pad[4];
        for (int j = 0; j < 4; j++) pad[j] = kc_in(0, (j < 2 ? KY : KX) - 1);
        int32_t IH = kc_in(1, 9) + KY, IW = kc_in(1, 9) + KX;
        pool_case(i % 2 ? TOSAC_OP_MAX_POOL2D : TOSAC_OP_AVG_POOL2D, IH, IW, kc_in(1, 40), KY, KX, kc_in(1, 3), kc_in(1, 3),
                  pad, "random pool");
    }
    static const struct {
        tosac_dtype ti, to;
        bool iu, ou;
    } rs[] = {
        {TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT32, false, false},  {TOSAC_DTYPE_INT32, TOSAC_DTYPE_INT8, false, false},
        {TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT8, false, false},   {TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT16, false, false},
        {TOSAC_DTYPE_INT32, TOSAC_DTYPE_INT16, false, false}, {TOSAC_DTYPE_INT32, TOSAC_DTYPE_INT32, false, false},
        {TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT8, true, false},    {TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT8, false, true},
        {TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT8, true, false},   {TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT16, false, true},
    };
    for (size_t i = 0; i < sizeof rs / sizeof rs[0]; i++)
        for (int k = 0; k < 3; k++)
            rescale_case(rs[i].ti, rs[i].to, rs[i].iu, rs[i].ou, kc_in(1, 30), kc_in(1, 37), k != 0);
    for (int axis = 0; axis < 3; axis++) {
        reduce_case(TOSAC_OP_REDUCE_SUM, TOSAC_DTYPE_INT32, 3, 25, 64, axis, 100000);
        reduce_case(TOSAC_OP_REDUCE_SUM, TOSAC_DTYPE_INT32, 2, 7, 13, axis, 1 << 30); /* partial sums that overflow */
        reduce_case(TOSAC_OP_REDUCE_SUM, TOSAC_DTYPE_INT32, kc_in(1, 5), kc_in(1, 9), kc_in(1, 19), axis, 1 << 20);
        static const tosac_dtype mm[] = {TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT32};
        for (int t = 0; t < 3; t++) {
            reduce_case(TOSAC_OP_REDUCE_MAX, mm[t], 1, kc_in(1, 4), 12, axis, 1 << 30); /* a softmax's row */
            reduce_case(TOSAC_OP_REDUCE_MIN, mm[t], 2, 7, 33, axis, 1 << 30);
            reduce_case(t % 2 ? TOSAC_OP_REDUCE_MAX : TOSAC_OP_REDUCE_MIN, mm[t], kc_in(1, 5), kc_in(1, 9), kc_in(1, 40),
                        axis, 1 << 30);
        }
    }
    matmul_case(1, 64, 12, true, false);
    matmul_case(1, 64, 12, false, false);
    matmul_case(3, 33, 7, true, false);
    matmul_case(5, 16, 16, false, false);
    matmul_case(2, 20, 9, true, true); /* two batches: the portable kernel */
    for (int i = 0; i < 6; i++) matmul_case(kc_in(1, 9), kc_in(1, 70), kc_in(1, 40), i % 2, false);
    static const int32_t lens[] = {1, 15, 16, 17, 100, 1000};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) elementwise_cases(lens[i]);
    printf("kernels_mve: %d cases, %d on the Helium path, %d failures\n", cases, mve_cases, fails);
    if (mve_cases * 5 < cases * 3) {
        printf("kernels_mve: FAIL: too few cases took the Helium path\n");
        return 100;
    }
    return fails > 99 ? 99 : fails;
}
