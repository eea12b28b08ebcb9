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
    printf("kernels_mve: %d cases, %d on the Helium path, %d failures\n", cases, mve_cases, fails);
    if (mve_cases * 5 < cases * 3) {
        printf("kernels_mve: FAIL: too few cases took the Helium path\n");
        return 100;
    }
    return fails > 99 ? 99 : fails;
}
