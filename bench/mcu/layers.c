/*
 * The layers of docs/MCU_KERNELS.md's table (MLPerf Tiny shapes, as /work/shared/MCU.md measured
 * CMSIS-NN on them) as int8 kernel calls on seeded random data with per-channel requantization
 * fused into the producer, each run with the portable kernels and with the Helium kernels between
 * instruction-count markers (tools/qemu_insn); bench/mcu/mcu_bench.py reads the counts. Prints one
 * line per layer: name, MACs, CMSIS-NN's instructions.
 */
#include <stdio.h>

#include "kcase.h"

typedef struct layer {
    const char *name;
    kc_conv_shape s;
    long cmsis;
} layer;

static const layer layers[] = {
    /* op, IH, IW, IC, OC, KH, KW, sy, sx, dy, dx, pad {top, bottom, left, right} */
    {"DS-CNN conv 10x4 s2, 49x10x1->25x5x64", {TOSAC_OP_CONV2D, 49, 10, 1, 64, 10, 4, 2, 2, 1, 1, {5, 4, 1, 1}}, 306213},
    {"DS-CNN depthwise 3x3, 25x5x64", {TOSAC_OP_DEPTHWISE_CONV2D, 25, 5, 64, 64, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}}, 168688},
    {"DS-CNN 1x1 64->64, 25x5", {TOSAC_OP_CONV2D, 25, 5, 64, 64, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}}, 202917},
    {"DS-CNN FC 64->12 (as a 1x1 CONV2D)", {TOSAC_OP_CONV2D, 1, 1, 64, 12, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}}, 667},
    {"ResNet-8 3x3 16->16, 32x32", {TOSAC_OP_CONV2D, 32, 32, 16, 16, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}}, 941964},
    {"ResNet-8 3x3 s2 16->32, 32x32->16x16", {TOSAC_OP_CONV2D, 32, 32, 16, 32, 3, 3, 2, 2, 1, 1, {0, 1, 0, 1}}, 394654},
    {"ResNet-8 3x3 s2 32->64, 16x16->8x8", {TOSAC_OP_CONV2D, 16, 16, 32, 64, 3, 3, 2, 2, 1, 1, {0, 1, 0, 1}}, 281367},
    {"ResNet-8 3x3 64->64, 8x8", {TOSAC_OP_CONV2D, 8, 8, 64, 64, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}}, 487272},
    {"MobileNetV1 conv 3x3 s2 3->8, 96x96", {TOSAC_OP_CONV2D, 96, 96, 3, 8, 3, 3, 2, 2, 1, 1, {0, 1, 0, 1}}, 1050178},
    {"MobileNetV1 depthwise 3x3, 48x48x8", {TOSAC_OP_DEPTHWISE_CONV2D, 48, 48, 8, 8, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}}, 897326},
    {"MobileNetV1 1x1 8->16, 48x48", {TOSAC_OP_CONV2D, 48, 48, 8, 16, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}}, 641829},
    {"MobileNetV1 depthwise 3x3, 6x6x128", {TOSAC_OP_DEPTHWISE_CONV2D, 6, 6, 128, 128, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}}, 97433},
    {"MobileNetV1 1x1 128->128, 6x6", {TOSAC_OP_CONV2D, 6, 6, 128, 128, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}}, 166434},
    {"MobileNetV1 1x1 128->256, 3x3", {TOSAC_OP_CONV2D, 3, 3, 128, 256, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}}, 91168},
};

/* one call at both levels (regions 2i, 2i+1), results compared */
static int run_both(tosac_kcall *c, const tosac_ktensor *out)
{
    size_t n = (size_t)out->nelem * tosac_exec_elem_size(out->dtype, false);
    tosac_status s0 = kc_run(c, TOSAC_KISA_PORTABLE, NULL);
    uint8_t *want = kc_alloc(n);
    memcpy(want, out->data, n);
    tosac_status s1 = kc_run(c, TOSAC_KISA_MVE, NULL);
    return s0 != TOSAC_OK || s1 != TOSAC_OK || memcmp(want, out->data, n) != 0;
}

/*
 * DS-CNN (MLPerf Tiny keyword spotting) as its chain of kernel calls, each int8 result feeding the
 * next: CONV2D 10x4 s2 (RESCALE and ReLU fused), 4 x (DEPTHWISE_CONV2D 3x3, CONV2D 1x1, each with
 * its RESCALE and ReLU fused), AVG_POOL2D 25x5, the FC 64->12 as a 1x1 CONV2D with its RESCALE.
 * The whole chain is one counted region (regions: portable, then Helium); CMSIS-NN's layers
 * chained by hand took 1,806,963 instructions (MCU.md). Returns nonzero when the two differ.
 */
static int dscnn(void)
{
    size_t mark = kc_used;
    enum { NCONV = 10 };
    static kc_conv convs[NCONV];
    static const kc_conv_shape first = {TOSAC_OP_CONV2D, 49, 10, 1, 64, 10, 4, 2, 2, 1, 1, {5, 4, 1, 1}};
    static const kc_conv_shape dw = {TOSAC_OP_DEPTHWISE_CONV2D, 25, 5, 64, 64, 3, 3, 1, 1, 1, 1, {1, 1, 1, 1}};
    static const kc_conv_shape pw = {TOSAC_OP_CONV2D, 25, 5, 64, 64, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}};
    static const kc_conv_shape fc = {TOSAC_OP_CONV2D, 1, 1, 64, 12, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}};
    static const int32_t nopad[4] = {0, 0, 0, 0};
    for (int i = 0; i < 9; i++) {
        kc_conv_make(&convs[i], i == 0 ? &first : i % 2 ? &dw : &pw, i == 0 ? 0 : -128, 0, true, TOSAC_DTYPE_INT8, true,
                     false, 36, 42, 20000);
        convs[i].epi.lo = -128; /* ReLU: the output zero point is -128 */
        kc_set(&convs[i].r.ozp, 0, -128);
        convs[i].r.in[4] = convs[i].r.ozp.t;
        convs[i].r.c.prep = NULL; /* the fused RESCALE's tables again, with that zero point */
        {
            tosac_kprep sz = {0, 0, 0};
            tosac_kernel_rescale_prepare(&convs[i].r.c, &sz, NULL);
            void *pp = kc_alloc(sz.const_size);
            tosac_kernel_rescale_prepare(&convs[i].r.c, &sz, pp);
            convs[i].r.c.prep = pp;
        }
        if (i) convs[i].in[0].data = convs[i - 1].y.t.data;
    }
    kc_pool pool;
    kc_pool_make(&pool, TOSAC_OP_AVG_POOL2D, 25, 5, 64, 25, 5, 1, 1, nopad, -128, -128);
    pool.in[0].data = convs[8].y.t.data;
    kc_conv_make(&convs[9], &fc, -128, 0, true, TOSAC_DTYPE_INT8, true, false, 36, 42, 20000);
    convs[9].in[0].data = pool.y.t.data;
    tosac_kcall *calls[11];
    for (int i = 0; i < 9; i++) calls[i] = &convs[i].c;
    calls[9] = &pool.c, calls[10] = &convs[9].c;
    int8_t want[12];
    int bad = 0;
    for (int level = 0; level < 2; level++) {
        uint32_t isa = level ? TOSAC_KISA_MVE : TOSAC_KISA_PORTABLE;
        for (int i = 0; i < 11; i++) bad |= kc_prepare(calls[i], isa) != TOSAC_OK;
        tosac_mark_begin();
        for (int i = 0; i < 11; i++) bad |= tosac_kernel_for(calls[i]->op)(calls[i]) != TOSAC_OK;
        tosac_mark_end();
        if (!level) memcpy(want, convs[9].y.t.data, sizeof want);
    }
    bad |= memcmp(want, convs[9].y.t.data, sizeof want) != 0;
    printf("dscnn|DS-CNN, the whole network (11 kernel calls)|2656768|1806963\n");
    kc_used = mark;
    return bad;
}

int main(void)
{
    int bad = 0;
    for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
        size_t mark = kc_used;
        kc_conv k;
        /* activations after a ReLU have zero point -128; symmetric weights; SINGLE_ROUND */
        kc_conv_make(&k, &layers[i].s, -128, 0, true, TOSAC_DTYPE_INT8, true, false, 36, 42, 20000);
        bad += run_both(&k.c, &k.y.t);
        printf("layer|%s|%ld|%ld\n", layers[i].name, (long)kc_conv_macs(&k), layers[i].cmsis);
        kc_used = mark;
        if (i == 2) { /* the DS-CNN average pool after its last 1x1 convolution */
            static const int32_t nopad[4] = {0, 0, 0, 0};
            kc_pool p;
            kc_pool_make(&p, TOSAC_OP_AVG_POOL2D, 25, 5, 64, 25, 5, 1, 1, nopad, -128, -128);
            bad += run_both(&p.c, &p.y.t);
            printf("layer|DS-CNN avgpool 25x5x64|8000|13084\n");
            kc_used = mark;
        }
    }
    bad += dscnn();
    return bad;
}
