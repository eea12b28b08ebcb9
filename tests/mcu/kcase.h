/*
 * Kernel calls built on the device (tests/mcu/kernels_mve.c, bench/mcu/layers.c): tensors from a
 * bump pool in SRAM, seeded random data, and a call run the way the runtime runs it (prepare for
 * the sizes, prepare into fresh bytes, run with scratch filled with garbage) at a chosen `isa`.
 */
#ifndef TOSAC_MCU_KCASE_H
#define TOSAC_MCU_KCASE_H

#include <string.h>

#include "kernels/k_epilogue.h"
#include "kernels/kernel.h"
#include "mcu.h"

/* ---- pool and random numbers ---- */
#define KC_POOL_BYTES (3u << 20)
static uint8_t kc_mem[KC_POOL_BYTES] MCU_SRAM;
static size_t kc_used;

static inline void *kc_alloc(size_t n)
{
    size_t o = (kc_used + 15u) & ~(size_t)15u;
    if (o + n > KC_POOL_BYTES) {
        mcu_write(2, "kcase: pool exhausted\n", 22);
        mcu_exit(71);
    }
    kc_used = o + n;
    return kc_mem + o;
}

static uint32_t kc_seed = 0x9E3779B9u;
static inline uint32_t kc_rnd(void)
{
    kc_seed ^= kc_seed << 13, kc_seed ^= kc_seed >> 17, kc_seed ^= kc_seed << 5;
    return kc_seed;
}
/* uniform in [lo, hi] */
static inline int32_t kc_in(int32_t lo, int32_t hi) { return lo + (int32_t)(kc_rnd() % (uint32_t)(hi - lo + 1)); }

/* ---- tensors ---- */
typedef struct kc_tensor {
    tosac_ktensor t;
    int64_t shape[4];
} kc_tensor;

static inline void kc_make(kc_tensor *x, tosac_dtype dt, int32_t rank, const int32_t *shape, bool constant)
{
    memset(x, 0, sizeof *x);
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++) x->shape[i] = shape[i], n *= shape[i];
    x->t.dtype = dt, x->t.rank = rank, x->t.shape = x->shape, x->t.nelem = n, x->t.constant = constant;
    x->t.data = kc_alloc((size_t)n * tosac_exec_elem_size(dt, false) + 16);
}
static inline void kc_make1(kc_tensor *x, tosac_dtype dt, int32_t n, bool constant)
{
    int32_t s[1] = {n};
    kc_make(x, dt, 1, s, constant);
}
static inline void kc_set(kc_tensor *x, int64_t i, int32_t v)
{
    switch (x->t.dtype) {
    case TOSAC_DTYPE_INT8: ((int8_t *)x->t.data)[i] = (int8_t)v; break;
    case TOSAC_DTYPE_INT16: ((int16_t *)x->t.data)[i] = (int16_t)v; break;
    default: ((int32_t *)x->t.data)[i] = v; break;
    }
}
static inline void kc_fill(kc_tensor *x, int32_t lo, int32_t hi)
{
    for (int64_t i = 0; i < x->t.nelem; i++) kc_set(x, i, kc_in(lo, hi));
}
static inline size_t kc_bytes(const kc_tensor *x) { return (size_t)x->t.nelem * tosac_exec_elem_size(x->t.dtype, false); }

static inline void kc_attr_i(tosac_attr_val *a, unsigned id, int64_t v)
{
    a[id].present = true;
    a[id].i = v;
}
static inline void kc_attr_v(tosac_attr_val *a, unsigned id, const int32_t *v, uint32_t n)
{
    a[id].present = true;
    a[id].data = v;
    a[id].len = n;
}

/* ---- running a call ---- */

/* When set, kc_run prepares with the call's epilogue and runs without it, as the runtime does when an
   op callback observes every result. */
static bool kc_drop_epi;

/* Prepares and runs c at `isa` (scratch filled with 0xA5); *prepared: prepared bytes used. */
static inline tosac_status kc_run(tosac_kcall *c, uint32_t isa, size_t *prepared)
{
    const tosac_kepilogue *epi = c->epi;
    size_t mark = kc_used;
    tosac_kernel_prepare_fn pf = tosac_kernel_prepare_for(c->op);
    tosac_kernel_fn fn = tosac_kernel_for(c->op);
    c->isa = isa;
    tosac_kprep sz = {0, 0, 0};
    tosac_status s = pf(c, &sz, NULL);
    if (s != TOSAC_OK) return s;
    void *prep = sz.const_size ? kc_alloc(sz.const_size) : NULL;
    void *scr = sz.scratch_size ? kc_alloc(sz.scratch_size) : NULL;
    if (prep) s = pf(c, &sz, prep);
    if (scr) memset(scr, 0xA5, sz.scratch_size);
    c->prep = prep, c->prep_size = sz.const_size, c->scratch = scr, c->scratch_size = sz.scratch_size;
    if (prepared) *prepared = sz.const_size;
    if (kc_drop_epi) c->epi = NULL;
    if (s == TOSAC_OK) {
        tosac_mark_begin();
        s = fn(c);
        tosac_mark_end();
    }
    c->epi = epi;
    c->prep = NULL, c->scratch = NULL;
    kc_used = mark;
    return s;
}

/* Prepares c at `isa` into buffers that stay allocated (for a chain of calls run later). */
static inline tosac_status kc_prepare(tosac_kcall *c, uint32_t isa)
{
    tosac_kernel_prepare_fn pf = tosac_kernel_prepare_for(c->op);
    c->isa = isa;
    tosac_kprep sz = {0, 0, 0};
    tosac_status s = pf(c, &sz, NULL);
    if (s != TOSAC_OK) return s;
    c->prep = sz.const_size ? kc_alloc(sz.const_size) : NULL, c->prep_size = sz.const_size;
    c->scratch = sz.scratch_size ? kc_alloc(sz.scratch_size) : NULL, c->scratch_size = sz.scratch_size;
    return c->prep ? pf(c, &sz, (void *)(uintptr_t)c->prep) : TOSAC_OK;
}

/* ---- a RESCALE call (its operands constant but the input) ---- */
typedef struct kc_rescale {
    kc_tensor mul, shf, izp, ozp;
    tosac_ktensor in[5];
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    tosac_kcall c;
} kc_rescale;

/* RESCALE of x (int32 or int8) to `out` with nc channels; multipliers in [2^29, 2^31), shifts in
   [smin, smax]; prepared (portable layout) when `prepare`, as the runtime does for a fused one. */
static inline void kc_rescale_make(kc_rescale *r, const tosac_ktensor *x, tosac_ktensor *out, int32_t nc, bool dbl,
                            int32_t izp, int32_t ozp, int32_t smin, int32_t smax, bool prepare)
{
    memset(r, 0, sizeof *r);
    kc_make1(&r->mul, TOSAC_DTYPE_INT32, nc, true), kc_make1(&r->shf, TOSAC_DTYPE_INT8, nc, true);
    kc_make1(&r->izp, x->dtype, 1, true), kc_make1(&r->ozp, out->dtype, 1, true);
    for (int32_t j = 0; j < nc; j++) kc_set(&r->mul, j, kc_in(1 << 29, INT32_MAX)), kc_set(&r->shf, j, kc_in(smin, smax));
    kc_set(&r->izp, 0, izp), kc_set(&r->ozp, 0, ozp);
    r->in[0] = *x, r->in[1] = r->mul.t, r->in[2] = r->shf.t, r->in[3] = r->izp.t, r->in[4] = r->ozp.t;
    kc_attr_i(r->a, TOSAC_ATTR_RESCALE_scale32, 1);
    kc_attr_i(r->a, TOSAC_ATTR_RESCALE_rounding_mode, dbl ? TOSAC_ROUND_DOUBLE : TOSAC_ROUND_SINGLE);
    kc_attr_i(r->a, TOSAC_ATTR_RESCALE_per_channel, nc > 1);
    kc_attr_i(r->a, TOSAC_ATTR_RESCALE_input_unsigned, 0);
    kc_attr_i(r->a, TOSAC_ATTR_RESCALE_output_unsigned, 0);
    memset(&r->c, 0, sizeof r->c);
    r->c.op = TOSAC_OP_RESCALE, r->c.n_in = 5, r->c.n_out = 1, r->c.in = r->in, r->c.out = out, r->c.attr = r->a;
    if (prepare) {
        tosac_kprep sz = {0, 0, 0};
        r->c.isa = TOSAC_KISA_PORTABLE;
        tosac_kernel_rescale_prepare(&r->c, &sz, NULL);
        void *p = sz.const_size ? kc_alloc(sz.const_size) : NULL;
        if (p) tosac_kernel_rescale_prepare(&r->c, &sz, p);
        r->c.prep = p, r->c.prep_size = sz.const_size;
    }
}

/* ---- a CONV2D / DEPTHWISE_CONV2D, optionally with a fused RESCALE (+ CLAMP) epilogue ---- */
typedef struct kc_conv_shape {
    int32_t op; /* TOSAC_OP_CONV2D or TOSAC_OP_DEPTHWISE_CONV2D */
    int32_t IH, IW, IC, OC, KH, KW, sy, sx, dy, dx;
    int32_t pad[4]; /* top, bottom, left, right */
} kc_conv_shape;

typedef struct kc_conv {
    kc_conv_shape s;
    kc_tensor x, w, bias, izp, wzp, acc, y;
    tosac_ktensor in[5];
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    int32_t pad[4], st[2], dl[2];
    kc_rescale r;
    tosac_kepilogue epi;
    tosac_kcall c;
} kc_conv;

static inline int32_t kc_conv_out(int32_t in, int32_t k, int32_t s, int32_t d, int32_t p0, int32_t p1)
{
    return (in - 1 + p0 + p1 - (k - 1) * d) / s + 1;
}

/* izp, wzp: the zero points; fused: a RESCALE to `to` (int8 / int16), per channel or not. */
static inline void kc_conv_make(kc_conv *k, const kc_conv_shape *s, int32_t izp, int32_t wzp, bool fused, tosac_dtype to,
                         bool per_channel, bool dbl, int32_t smin, int32_t smax, int32_t bias_max)
{
    memset(k, 0, sizeof *k);
    k->s = *s;
    const bool dw = s->op == TOSAC_OP_DEPTHWISE_CONV2D;
    int32_t OH = kc_conv_out(s->IH, s->KH, s->sy, s->dy, s->pad[0], s->pad[1]);
    int32_t OW = kc_conv_out(s->IW, s->KW, s->sx, s->dx, s->pad[2], s->pad[3]);
    int32_t OC = dw ? s->IC : s->OC;
    int32_t xs[4] = {1, s->IH, s->IW, s->IC}, os[4] = {1, OH, OW, OC};
    int32_t ws[4] = {OC, s->KH, s->KW, s->IC}, wds[4] = {s->KH, s->KW, s->IC, 1};
    kc_make(&k->x, TOSAC_DTYPE_INT8, 4, xs, false), kc_fill(&k->x, -128, 127);
    kc_make(&k->w, TOSAC_DTYPE_INT8, 4, dw ? wds : ws, true), kc_fill(&k->w, -128, 127);
    kc_make1(&k->bias, TOSAC_DTYPE_INT32, OC, true), kc_fill(&k->bias, -bias_max, bias_max);
    kc_make1(&k->izp, TOSAC_DTYPE_INT8, 1, true), kc_set(&k->izp, 0, izp);
    kc_make1(&k->wzp, TOSAC_DTYPE_INT8, 1, true), kc_set(&k->wzp, 0, wzp);
    kc_make(&k->acc, TOSAC_DTYPE_INT32, 4, os, false);
    k->in[0] = k->x.t, k->in[1] = k->w.t, k->in[2] = k->bias.t, k->in[3] = k->izp.t, k->in[4] = k->wzp.t;
    for (int i = 0; i < 4; i++) k->pad[i] = s->pad[i];
    k->st[0] = s->sy, k->st[1] = s->sx, k->dl[0] = s->dy, k->dl[1] = s->dx;
    unsigned ap = dw ? TOSAC_ATTR_DEPTHWISE_CONV2D_pad : TOSAC_ATTR_CONV2D_pad;
    unsigned as = dw ? TOSAC_ATTR_DEPTHWISE_CONV2D_stride : TOSAC_ATTR_CONV2D_stride;
    unsigned ad = dw ? TOSAC_ATTR_DEPTHWISE_CONV2D_dilation : TOSAC_ATTR_CONV2D_dilation;
    unsigned aa = dw ? TOSAC_ATTR_DEPTHWISE_CONV2D_acc_type : TOSAC_ATTR_CONV2D_acc_type;
    kc_attr_v(k->a, ap, k->pad, 4), kc_attr_v(k->a, as, k->st, 2), kc_attr_v(k->a, ad, k->dl, 2);
    kc_attr_i(k->a, aa, TOSAC_DTYPE_INT32);
    memset(&k->c, 0, sizeof k->c);
    k->c.op = (uint32_t)s->op, k->c.n_in = 5, k->c.n_out = 1, k->c.in = k->in, k->c.out = &k->acc.t, k->c.attr = k->a;
    if (fused) {
        kc_make(&k->y, to, 4, os, false);
        int32_t ozp = to == TOSAC_DTYPE_INT8 ? kc_in(-128, 127) : 0;
        kc_rescale_make(&k->r, &k->acc.t, &k->y.t, per_channel ? OC : 1, dbl, 0, ozp, smin, smax, true);
        int32_t lo, hi;
        if (!tosac_rescale_fusable(&k->r.c, &lo, &hi)) lo = -128, hi = 127;
        k->epi.rescale = &k->r.c, k->epi.out = &k->y.t, k->epi.lo = lo, k->epi.hi = hi;
        k->c.epi = &k->epi;
    }
}

/* ---- an int8 AVG_POOL2D / MAX_POOL2D ---- */
typedef struct kc_pool {
    kc_tensor x, izp, ozp, y;
    tosac_ktensor in[3];
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    int32_t k[2], st[2], pad[4];
    tosac_kcall c;
} kc_pool;

static inline void kc_pool_make(kc_pool *p, uint32_t op, int32_t IH, int32_t IW, int32_t C, int32_t KY, int32_t KX,
                                int32_t sy, int32_t sx, const int32_t pad[4], int32_t izp, int32_t ozp)
{
    memset(p, 0, sizeof *p);
    const bool avg = op == TOSAC_OP_AVG_POOL2D;
    int32_t OH = kc_conv_out(IH, KY, sy, 1, pad[0], pad[1]), OW = kc_conv_out(IW, KX, sx, 1, pad[2], pad[3]);
    int32_t xs[4] = {1, IH, IW, C}, os[4] = {1, OH, OW, C};
    kc_make(&p->x, TOSAC_DTYPE_INT8, 4, xs, false), kc_fill(&p->x, -128, 127);
    kc_make(&p->y, TOSAC_DTYPE_INT8, 4, os, false);
    kc_make1(&p->izp, TOSAC_DTYPE_INT8, 1, true), kc_set(&p->izp, 0, izp);
    kc_make1(&p->ozp, TOSAC_DTYPE_INT8, 1, true), kc_set(&p->ozp, 0, ozp);
    p->in[0] = p->x.t, p->in[1] = p->izp.t, p->in[2] = p->ozp.t;
    p->k[0] = KY, p->k[1] = KX, p->st[0] = sy, p->st[1] = sx;
    for (int i = 0; i < 4; i++) p->pad[i] = pad[i];
    kc_attr_v(p->a, avg ? TOSAC_ATTR_AVG_POOL2D_kernel : TOSAC_ATTR_MAX_POOL2D_kernel, p->k, 2);
    kc_attr_v(p->a, avg ? TOSAC_ATTR_AVG_POOL2D_stride : TOSAC_ATTR_MAX_POOL2D_stride, p->st, 2);
    kc_attr_v(p->a, avg ? TOSAC_ATTR_AVG_POOL2D_pad : TOSAC_ATTR_MAX_POOL2D_pad, p->pad, 4);
    if (avg) kc_attr_i(p->a, TOSAC_ATTR_AVG_POOL2D_acc_type, TOSAC_DTYPE_INT32);
    p->c.op = op, p->c.n_in = avg ? 3 : 1, p->c.n_out = 1, p->c.in = p->in, p->c.out = &p->y.t, p->c.attr = p->a;
}

/* MACs of the call */
static inline int64_t kc_conv_macs(const kc_conv *k)
{
    int64_t taps = (int64_t)k->s.KH * k->s.KW;
    const int64_t *o = k->acc.shape;
    return o[1] * o[2] * o[3] * taps * (k->s.op == TOSAC_OP_DEPTHWISE_CONV2D ? 1 : k->s.IC);
}

#endif
