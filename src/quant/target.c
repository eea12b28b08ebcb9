/*
 * Target lowering (the TOSAC_LOWER_* bits of include/tosac/quant.h, docs/QUANT.md "Target
 * lowering"): rewrites of the finished integer block into the forms an Ethos-U NPU runs well
 * (Vela's rules in ETHOS_U.md). Each rewrite matches what the default lowering wrote, checks at
 * compile time that the rewritten operators compute the same integers (index maps, padding taps,
 * exact unit RESCALEs), marks the operators it replaces dead and appends the new ones (ir_compact
 * restores the order). Where a pattern does not match, the default lowering stays. The values that
 * hold an FP value's integer form keep their identity: the SQNR report and --emit-qdq refer to them.
 * CONCAT_DIRECT is a choice of q-params, made in lower.c before the operators are written.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant/quant_internal.h"
#include "ir/rewrite.h"

/* ---- the table of names ------------------------------------------------------------------- */

static const struct {
    uint32_t bit;
    const char *name, *what;
} lowerings[] = {
#define ROW_(name, bit, cli, what) {1u << (bit), cli, what},
    TOSAC_QUANT_LOWERINGS(ROW_)
#undef ROW_
};
#define N_LOWERINGS (sizeof lowerings / sizeof lowerings[0])

const char *tosac_quant_lowering_name(uint32_t bit)
{
    for (size_t k = 0; k < N_LOWERINGS; k++)
        if (lowerings[k].bit == bit) return lowerings[k].name;
    return NULL;
}

const char *tosac_quant_lowering_what(uint32_t bit)
{
    for (size_t k = 0; k < N_LOWERINGS; k++)
        if (lowerings[k].bit == bit) return lowerings[k].what;
    return NULL;
}

bool tosac_quant_lowering_parse(const char *list, uint32_t *bits, const char **bad, size_t *bad_len)
{
    uint32_t v = 0;
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ",");
        bool ok = false;
        if (len == 3 && !strncmp(p, "all", 3)) v = TOSAC_LOWER_ALL, ok = true;
        else if (len == 4 && !strncmp(p, "none", 4)) v = 0, ok = true;
        for (size_t k = 0; k < N_LOWERINGS && !ok; k++)
            if (strlen(lowerings[k].name) == len && !strncmp(p, lowerings[k].name, len)) v |= lowerings[k].bit, ok = true;
        if (!ok) {
            *bad = p;
            *bad_len = len;
            return false;
        }
        p += len + (p[len] == ',');
    }
    *bits = v;
    return true;
}

/* ---- reading the integer block ------------------------------------------------------------ */

static unsigned width(tosac_dtype t)
{
    return t == TOSAC_DTYPE_INT8 ? 1 : t == TOSAC_DTYPE_INT16 ? 2 : t == TOSAC_DTYPE_INT48 ? 6 : t == TOSAC_DTYPE_INT32 ? 4 : 8;
}

/* Element k of an integer constant or a shape value (little-endian, sign-extended). */
static int64_t cint(const tosac_value *v, int64_t k)
{
    unsigned w = v->is_shape ? 8 : width(v->dtype);
    uint64_t u = 0;
    for (unsigned j = 0; j < w; j++) u |= (uint64_t)v->data[(size_t)k * w + j] << (8 * j);
    if (w < 8) {
        uint64_t sign = 1ull << (8 * w - 1);
        u = (u ^ sign) - sign;
    }
    return (int64_t)u;
}

/* How often live operators and the block's outputs read v. */
static uint32_t reads(const tosac_block *b, const tosac_value *v)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < b->n_nodes; i++)
        if (!b->nodes[i]->dead)
            for (uint32_t k = 0; k < b->nodes[i]->n_inputs; k++) n += b->nodes[i]->inputs[k] == v;
    for (uint32_t k = 0; k < b->n_outputs; k++) n += b->outputs[k] == v;
    return n;
}

/* The one live operator reading v once, when nothing else reads it (not a block output either). */
static tosac_node *sole_reader(const tosac_block *b, const tosac_value *v)
{
    if (reads(b, v) != 1) return NULL;
    for (uint32_t i = 0; i < b->n_nodes; i++)
        if (!b->nodes[i]->dead)
            for (uint32_t k = 0; k < b->nodes[i]->n_inputs; k++)
                if (b->nodes[i]->inputs[k] == v) return b->nodes[i];
    return NULL;
}

static bool is_i8_or_i16(const tosac_value *v) { return v->dtype == TOSAC_DTYPE_INT8 || v->dtype == TOSAC_DTYPE_INT16; }

/* A RESCALE to INT32 that only takes the zero point out (multiplier/2^shift exactly 1, one
   channel, signed, output zero point 0): its result is in - *in_zp, exactly. */
static bool unit_rescale(const tosac_node *r, tosac_value **in_zp)
{
    if (!r || r->dead || r->op != TOSAC_OP_RESCALE || r->n_inputs != 5 || r->outputs[0]->dtype != TOSAC_DTYPE_INT32 ||
        r->attr[TOSAC_ATTR_RESCALE_input_unsigned].i || r->attr[TOSAC_ATTR_RESCALE_output_unsigned].i)
        return false;
    for (int k = 1; k < 5; k++)
        if (!ir_is_const(r->inputs[k])) return false;
    if (tosac_value_nelem(r->inputs[1]) != 1 || cint(r->inputs[4], 0) != 0) return false;
    int64_t m = cint(r->inputs[1], 0), s = cint(r->inputs[2], 0);
    *in_zp = r->inputs[3];
    return s >= 0 && s < 62 && m == (int64_t)1 << s;
}

/* ---- building ------------------------------------------------------------------------------ */

typedef struct tl {
    tosac_block *b;
    tosac_diag *d;
} tl;

static tosac_status oom(tl *t) { return tosac_diag_add(t->d, TOSAC_ERR_NOMEM, "out of memory"); }

/* x reshaped to `shape` into out (NULL: a new value). */
static tosac_value *reshape(tl *t, tosac_value *x, int rank, const int64_t *shape, tosac_value *out, const tosac_node *like)
{
    if (!out) out = ir_new_tensor(t->b, "reshaped", x->dtype, rank, shape);
    tosac_value *ins[2] = {x, ir_new_shape(t->b, shape, (uint32_t)rank)};
    return out && ir_add_op(t->b, TOSAC_OP_RESHAPE, 2, ins, out, like) ? out : NULL;
}

/* CONV2D or DEPTHWISE_CONV2D (they share attribute ids) x * w + bias -> out. */
static bool add_conv(tl *t, tosac_op op, tosac_value *const in[5], tosac_value *out, const int32_t pad[4],
                     const int32_t stride[2], const tosac_node *like)
{
    static const int32_t one[2] = {1, 1};
    tosac_node *n = ir_add_op(t->b, op, 5, in, out, like);
    return n && tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_pad, pad, 4) == TOSAC_OK &&
           tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_stride, stride, 2) == TOSAC_OK &&
           tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_dilation, one, 2) == TOSAC_OK &&
           tosac_node_set_int(n, TOSAC_ATTR_CONV2D_local_bound, 0) == TOSAC_OK &&
           tosac_node_set_int(n, TOSAC_ATTR_CONV2D_acc_type, out->dtype) == TOSAC_OK;
}

/* ---- FC_AS_CONV2D, NO_INT16_MATMUL ---------------------------------------------------------- */

/*
 * MATMUL a[1,M,K] x B[1,K,N] with constant int8-coded B (zero point 0) -> RESHAPE a to [1,M,1,K],
 * CONV2D 1x1 with weights B^T [N,1,1,K], RESHAPE back: the same int32 (int16: INT48) dot products.
 * A constant ADD after it (through RESHAPEs) whose value depends only on the output column is the
 * bias (ExecuTorch's decompose_linear): integer addition in the accumulator instead of after it.
 */
static tosac_status fc_as_conv(tl *t, tosac_node *mm)
{
    tosac_value *a = mm->inputs[0], *bw = mm->inputs[1], *y = mm->outputs[0];
    if (!ir_is_const(bw) || !ir_is_const(mm->inputs[3]) || a->rank != 3 || bw->rank != 3 || a->shape[0] != 1 ||
        bw->shape[0] != 1 || cint(mm->inputs[3], 0) != 0)
        return TOSAC_OK;
    int64_t M = a->shape[1], K = a->shape[2], N = bw->shape[2];
    for (int64_t e = 0; e < K * N; e++)
        if (cint(bw, e) < -128 || cint(bw, e) > 127) return TOSAC_OK;
    /* the bias: y -> RESHAPE* -> ADD(., constant per column) */
    tosac_value *end = y, *target = y;
    tosac_node *r = sole_reader(t->b, end), *add = NULL;
    while (r && r->op == TOSAC_OP_RESHAPE && r->inputs[0] == end) r = sole_reader(t->b, end = r->outputs[0]);
    const tosac_value *k = NULL;
    if (r && r->op == TOSAC_OP_ADD && y->dtype == TOSAC_DTYPE_INT32 && end->rank >= 1 && end->shape[end->rank - 1] == N &&
        tosac_value_nelem(r->outputs[0]) == tosac_value_nelem(end)) {
        k = r->inputs[0] == end ? r->inputs[1] : r->inputs[0];
        int64_t kn = tosac_value_nelem(k), kl = k->rank ? k->shape[k->rank - 1] : 1;
        bool per_col = ir_is_const(k) && k->dtype == TOSAC_DTYPE_INT32 && (kl == 1 || kl == N) && k != end;
        for (int64_t e = 0; e < kn && per_col; e++) per_col = cint(k, e) == cint(k, e % kl);
        if (per_col) add = r, target = r->outputs[0];
        else k = NULL;
    }
    /* read by RESCALEs only: they read the conv, and the RESHAPE moves to their int8 results, so
       each fuses into the conv as its output scaling (Vela fuses no RESCALE into a RESHAPE,
       ETHOS_U.md §2);
       required for INT48, which TOSA cannot RESHAPE */
    uint32_t by_rescale = 0;
    for (uint32_t i = 0; i < t->b->n_nodes; i++)
        by_rescale += !t->b->nodes[i]->dead && t->b->nodes[i]->op == TOSAC_OP_RESCALE && t->b->nodes[i]->inputs[0] == target;
    bool via_rescale = by_rescale && by_rescale == reads(t->b, target);
    if (y->dtype == TOSAC_DTYPE_INT48 && !via_rescale) return TOSAC_OK;
    int32_t *w = malloc((size_t)(N * K > 0 ? N * K : 1) * sizeof *w);
    int64_t *bias = calloc((size_t)(N ? N : 1), sizeof *bias);
    tosac_status s = w && bias ? TOSAC_OK : oom(t);
    for (int64_t o = 0; o < N && s == TOSAC_OK; o++) {
        for (int64_t c = 0; c < K; c++) w[o * K + c] = (int32_t)cint(bw, c * N + o);
        if (k) bias[o] = cint(k, k->rank && k->shape[k->rank - 1] == N ? o : 0);
    }
    if (s == TOSAC_OK) {
        int64_t xs[4] = {1, M, 1, K}, ws[4] = {N, 1, 1, K}, os[4] = {1, M, 1, N};
        static const int32_t pad[4] = {0, 0, 0, 0}, stride[2] = {1, 1};
        tosac_value *in[5] = {reshape(t, a, 4, xs, NULL, mm), quant_enc_const(t->b, "qweight", TOSAC_DTYPE_INT8, 4, ws, w, NULL, N * K),
                              quant_enc_const(t->b, "qbias", y->dtype, 1, &N, NULL, bias, N), mm->inputs[2],
                              quant_scalar(t->b, TOSAC_DTYPE_INT8, 0)};
        tosac_value *out = ir_new_tensor(t->b, "fc", y->dtype, 4, os);
        if (!add_conv(t, TOSAC_OP_CONV2D, in, out, pad, stride, mm)) s = oom(t);
        else if (!via_rescale) {
            if (!reshape(t, out, target->rank, target->shape, target, mm)) s = oom(t);
        } else
            for (uint32_t i = 0, nn = t->b->n_nodes; i < nn && s == TOSAC_OK; i++) {
                tosac_node *c = t->b->nodes[i];
                if (c->dead || c->op != TOSAC_OP_RESCALE || c->inputs[0] != target) continue;
                tosac_value *o4 = ir_new_tensor(t->b, "rescaled", c->outputs[0]->dtype, 4, os);
                tosac_value *rin[5] = {out, c->inputs[1], c->inputs[2], c->inputs[3], c->inputs[4]};
                tosac_node *r2 = o4 ? ir_add_op(t->b, TOSAC_OP_RESCALE, 5, rin, o4, c) : NULL;
                if (!r2 || ir_copy_attrs(r2, c) != TOSAC_OK ||
                    !reshape(t, o4, target->rank, target->shape, c->outputs[0], c))
                    s = oom(t);
                c->dead = true;
            }
        mm->dead = true;
        if (add) add->dead = true;
    }
    free(w);
    free(bias);
    return s;
}

/* ---- GAP_AS_POOL -------------------------------------------------------------------------- */

/* U55's convolution kernel limits (ETHOS_U.md §3 CONV2D), and how many partial sums a folded
   global pool may add up. */
#define CONV_MAX_KY 64
#define CONV_MAX_KXY 4096
#define GAP_MAX_PARTS 16

/* DEPTHWISE_CONV2D of ones, kernel kh x kw with the same stride, of int8 x at input zero point zp
   into out: the int32 sums of x - zp over each window. */
static bool ones_depthwise(tl *t, tosac_value *x, tosac_value *zp, int64_t kh, int64_t kw, tosac_value *out,
                           const tosac_node *like)
{
    static const int32_t pad[4] = {0, 0, 0, 0};
    int64_t C = x->shape[3], ws[4] = {kh, kw, C, 1}, n = kh * kw * C;
    int32_t *ones = malloc((size_t)n * sizeof *ones), stride[2] = {(int32_t)kh, (int32_t)kw};
    int64_t *zeros = calloc((size_t)C, sizeof *zeros);
    bool ok = ones && zeros;
    for (int64_t e = 0; e < n && ok; e++) ones[e] = 1;
    if (ok) {
        tosac_value *in[5] = {x, quant_enc_const(t->b, "ones", TOSAC_DTYPE_INT8, 4, ws, ones, NULL, n),
                              quant_enc_const(t->b, "zbias", TOSAC_DTYPE_INT32, 1, &C, NULL, zeros, C), zp,
                              quant_scalar(t->b, TOSAC_DTYPE_INT8, 0)};
        ok = add_conv(t, TOSAC_OP_DEPTHWISE_CONV2D, in, out, pad, stride, like);
    }
    free(ones);
    free(zeros);
    return ok;
}

/*
 * RESCALE(x int8 -> int32, unit: x - zp) -> REDUCE_SUM over H -> REDUCE_SUM over W (either order),
 * the default global average pool (its 1/(H*W) is in its consumers' RESCALE scales):
 *   - DEPTHWISE_CONV2D of ones with kernel HxW and input zero point zp: the same int32 sums;
 *   - a kernel beyond U55's convolution limits: the map folded by RESHAPEs (rows side by side,
 *     neighbouring columns into the channels) until one depthwise of ones within the limits covers
 *     it, and a REDUCE_SUM of its few partial sums moved to the last axis (TRANSPOSE): the same
 *     int32 sums;
 *   - when neither fits, or x is int16: AVG_POOL2D (int8/int16 at x's q-params: round(sum / (H*W))
 *     + zp) when every reader of the sum is a RESCALE, whose scale is then multiplied by H*W. This
 *     rounds the mean to an integer before the consumer's RESCALE does: results can change by one
 *     code (docs/QUANT.md).
 */
static tosac_status gap_as_pool(tl *t, tosac_node *rs1)
{
    tosac_value *sum1 = rs1->inputs[0], *zp = NULL;
    tosac_node *rsc = sum1->producer, *rs2 = sole_reader(t->b, rs1->outputs[0]);
    int64_t a1 = rs1->attr[TOSAC_ATTR_REDUCE_SUM_axis].i;
    if (sum1->rank != 4 || (a1 != 1 && a1 != 2) || !rs2 || rs2->op != TOSAC_OP_REDUCE_SUM ||
        rs2->attr[TOSAC_ATTR_REDUCE_SUM_axis].i != 3 - a1 || !unit_rescale(rsc, &zp) || sole_reader(t->b, sum1) != rs1 ||
        !is_i8_or_i16(rsc->inputs[0]))
        return TOSAC_OK;
    tosac_value *x = rsc->inputs[0], *y = rs2->outputs[0];
    int64_t H = x->shape[1], W = x->shape[2], C = x->shape[3];
    static const int32_t pad[4] = {0, 0, 0, 0}, stride[2] = {1, 1};
    /* Vela 5.1.0 on U55 cannot run a convolution whose stride above 3 really strides (it splits
       strides only with the U85's accumulator save/restore, sd:1119-1123,1446-1450: measured on a
       96x96 pool in 48x48 tiles), so the map is not tiled spatially. Pure RESHAPEs fold it instead:
       [N,H,W,C] -> [N, H/a, a*W, C] (a rows side by side) -> [N, H/a, a*W/m, m*C] (m neighbouring
       columns into the channels), with H/a and the kernel H*W/m within U55's limits and m as small
       as possible; one depthwise of ones over the whole folded map gives m partial sums per
       channel. */
    int64_t fa = 0, fm = 0;
    for (int64_t m = 1; m <= GAP_MAX_PARTS && !fm && x->dtype == TOSAC_DTYPE_INT8; m++)
        for (int64_t a = 1; a <= H && !fm; a++)
            if (H % a == 0 && (a * W) % m == 0 && H / a <= CONV_MAX_KY && H * W / m <= CONV_MAX_KXY) fa = a, fm = m;
    if (fm) {
        int64_t N = x->shape[0], kh = H / fa, kw = fa * W / fm, fs[4] = {N, kh, kw, fm * C}, ps[4] = {N, 1, 1, fm * C},
                one[4] = {N, 1, 1, C};
        tosac_value *folded = fa == 1 && fm == 1 ? x : reshape(t, x, 4, fs, NULL, rs2);
        tosac_value *part = fm == 1 ? y : ir_new_tensor(t->b, "gap_part", TOSAC_DTYPE_INT32, 4, ps);
        if (!folded || !part || !ones_depthwise(t, folded, zp, kh, kw, part, rs2)) return oom(t);
        if (fm > 1) {
            /* the m partial sums along the last axis, where REDUCE_SUM is native (ETHOS_U.md §3), so
               that the RESCALE reading the total fuses into it as output scaling: RESHAPE to
               [N, m, C], TRANSPOSE to [N, C, m], REDUCE_SUM over m, RESHAPE to [N, 1, 1, C] */
            int64_t s3[3] = {N, fm, C}, t3[3] = {N, C, fm}, r3[3] = {N, C, 1};
            static const int32_t perms[3] = {0, 2, 1};
            tosac_value *flat = reshape(t, part, 3, s3, NULL, rs2), *tr = ir_new_tensor(t->b, "gap_parts", TOSAC_DTYPE_INT32, 3, t3),
                        *sum = ir_new_tensor(t->b, "gap_sum", TOSAC_DTYPE_INT32, 3, r3);
            tosac_node *tn = flat && tr ? ir_add_op(t->b, TOSAC_OP_TRANSPOSE, 1, &flat, tr, rs2) : NULL;
            tosac_node *rn = tn && sum ? ir_add_op(t->b, TOSAC_OP_REDUCE_SUM, 1, &tr, sum, rs2) : NULL;
            if (!rn || tosac_node_set_ints(tn, TOSAC_ATTR_TRANSPOSE_perms, perms, 3) != TOSAC_OK ||
                tosac_node_set_int(rn, TOSAC_ATTR_REDUCE_SUM_axis, 2) != TOSAC_OK || !reshape(t, sum, 4, one, y, rs2))
                return oom(t);
        }
        rs1->dead = rs2->dead = true;
        return TOSAC_OK;
    }
    /* AVG_POOL2D: the sum (through RESHAPEs nothing else reads) is read by RESCALEs only (signed,
       one channel, zero point 0 on the sum) */
    tosac_value *v = y;
    for (tosac_node *r; (r = sole_reader(t->b, v)) && r->op == TOSAC_OP_RESHAPE && r->inputs[0] == v;) v = r->outputs[0];
    uint32_t n_readers = reads(t->b, v), found = 0;
    for (uint32_t k = 0; k < t->b->n_outputs; k++)
        if (t->b->outputs[k] == v) return TOSAC_OK;
    for (uint32_t i = 0; i < t->b->n_nodes; i++) {
        const tosac_node *c = t->b->nodes[i];
        if (c->dead || !(c->n_inputs && c->inputs[0] == v)) continue;
        if (c->op != TOSAC_OP_RESCALE || c->attr[TOSAC_ATTR_RESCALE_input_unsigned].i || !ir_is_const(c->inputs[1]) ||
            !ir_is_const(c->inputs[2]) || tosac_value_nelem(c->inputs[1]) != 1 || !ir_is_const(c->inputs[3]) ||
            cint(c->inputs[3], 0) != 0 || !ir_is_const(c->inputs[4]))
            return TOSAC_OK;
        double scale = (double)cint(c->inputs[1], 0) * ldexp(1.0, -(int)cint(c->inputs[2], 0)) * (double)(H * W);
        int32_t m, sh;
        if (!tosac_quant_multiplier(scale, &m, &sh)) return TOSAC_OK;
        found++;
    }
    if (found != n_readers) return TOSAC_OK;
    int64_t ps[4] = {x->shape[0], 1, 1, C};
    tosac_value *avg = ir_new_tensor(t->b, "avg", x->dtype, 4, ps), *pin[3] = {x, zp, zp};
    tosac_node *pool = avg ? ir_add_op(t->b, TOSAC_OP_AVG_POOL2D, 3, pin, avg, rs2) : NULL;
    int32_t kernel[2] = {(int32_t)H, (int32_t)W};
    if (!pool || tosac_node_set_ints(pool, TOSAC_ATTR_AVG_POOL2D_kernel, kernel, 2) != TOSAC_OK ||
        tosac_node_set_ints(pool, TOSAC_ATTR_AVG_POOL2D_stride, stride, 2) != TOSAC_OK ||
        tosac_node_set_ints(pool, TOSAC_ATTR_AVG_POOL2D_pad, pad, 4) != TOSAC_OK ||
        tosac_node_set_int(pool, TOSAC_ATTR_AVG_POOL2D_acc_type, TOSAC_DTYPE_INT32) != TOSAC_OK)
        return oom(t);
    tosac_value *src = v == y ? avg : reshape(t, avg, v->rank, v->shape, NULL, rs2);
    if (!src) return oom(t);
    int32_t zpv = (int32_t)cint(zp, 0);
    uint32_t n_nodes = t->b->n_nodes;
    for (uint32_t i = 0; i < n_nodes; i++) {
        tosac_node *c = t->b->nodes[i];
        if (c->dead || !(c->n_inputs && c->inputs[0] == v)) continue;
        double scale = (double)cint(c->inputs[1], 0) * ldexp(1.0, -(int)cint(c->inputs[2], 0)) * (double)(H * W);
        int32_t m, sh;
        tosac_quant_multiplier(scale, &m, &sh); /* checked above */
        if (!quant_add_rescale(t->b, src, c->outputs[0], &m, &sh, 1, zpv, (int32_t)cint(c->inputs[4], 0), false,
                               c->attr[TOSAC_ATTR_RESCALE_output_unsigned].i != 0, c))
            return oom(t);
        c->dead = true;
    }
    rs1->dead = rs2->dead = true;
    return TOSAC_OK;
}

/* ---- RESIZE_HALF_PIXEL ---------------------------------------------------------------------- */

/* The input row TOSA's integer NEAREST reads for output row o (refimpl.py / the spec pseudocode). */
static int64_t nearest_index(int64_t o, int64_t n, int64_t d, int64_t off, int64_t in)
{
    int64_t y = o * d + off, i = y >= 0 ? y / n : -((-y + n - 1) / n), r = y - i * n;
    int64_t i0 = i < 0 ? 0 : i, i1 = i + 1 < in - 1 ? i + 1 : in - 1;
    i0 = i0 < in - 1 ? i0 : in - 1;
    return 2 * r >= n ? i1 : i0;
}

/*
 * RESIZE NEAREST by an integer factor f on an axis in the half-pixel-centre encoding Vela's U55
 * lowering recognises (scale 2f/2, offset -(f-1), border from the output size), when every output
 * row and column reads the same input one as before (checked here over the whole axis).
 */
static tosac_status resize_half_pixel(tl *t, tosac_node *n)
{
    tosac_value *x = n->inputs[0], *y = n->outputs[0];
    if (n->attr[TOSAC_ATTR_RESIZE_mode].i != TOSAC_RESIZE_NEAREST || x->rank != 4 || n->n_inputs != 4 ||
        n->inputs[1]->data_len < 32 || n->inputs[2]->data_len < 16 || n->inputs[3]->data_len < 16)
        return TOSAC_OK;
    int64_t sc[4], off[2], bord[2];
    for (int k = 0; k < 4; k++) sc[k] = cint(n->inputs[1], k);
    for (int k = 0; k < 2; k++) off[k] = cint(n->inputs[2], k), bord[k] = cint(n->inputs[3], k);
    bool changed = false;
    for (int a = 0; a < 2; a++) {
        int64_t nn = sc[2 * a], dd = sc[2 * a + 1], in = x->shape[1 + a], out = y->shape[1 + a];
        if (dd <= 0 || nn % dd || nn / dd < 2 || (nn == 2 * (nn / dd) && dd == 2 && off[a] == 1 - nn / dd)) continue;
        int64_t f = nn / dd, n2 = 2 * f, o2 = 1 - f, b2 = (out - 1) * 2 - (in - 1) * n2 + o2;
        if (b2 < -n2 || b2 >= n2) return TOSAC_OK;
        for (int64_t o = 0; o < out; o++)
            if (nearest_index(o, nn, dd, off[a], in) != nearest_index(o, n2, 2, o2, in)) return TOSAC_OK;
        sc[2 * a] = n2, sc[2 * a + 1] = 2, off[a] = o2, bord[a] = b2;
        changed = true;
    }
    if (!changed) return TOSAC_OK;
    tosac_value *in[4] = {x, NULL, NULL, NULL}; /* one builder call per statement: fixed order */
    in[1] = ir_new_shape(t->b, sc, 4);
    in[2] = ir_new_shape(t->b, off, 2);
    in[3] = ir_new_shape(t->b, bord, 2);
    tosac_node *r = ir_add_op(t->b, TOSAC_OP_RESIZE, 4, in, y, n);
    if (!r || ir_copy_attrs(r, n) != TOSAC_OK) return oom(t);
    n->dead = true;
    return TOSAC_OK;
}

/* ---- UPSAMPLE_1X1_BROADCAST ----------------------------------------------------------------- */

/*
 * RESIZE of a 1x1 map: every output reads the one input pixel. NEAREST: TILE. BILINEAR (int8 ->
 * int32 = units * q with units = scale_y_n * scale_x_n, then the default lowering's ADD of
 * -zp * units): RESCALE by the integer `units` (exact) and the same ADD with its constant spread
 * over the output's H and W, which broadcasts the pixel.
 */
static tosac_status upsample_1x1(tl *t, tosac_node *n)
{
    tosac_value *x = n->inputs[0], *y = n->outputs[0];
    if (x->rank != 4 || x->shape[1] != 1 || x->shape[2] != 1 || n->inputs[1]->data_len < 32) return TOSAC_OK;
    int64_t mult[4] = {1, y->shape[1], y->shape[2], 1};
    if (n->attr[TOSAC_ATTR_RESIZE_mode].i == TOSAC_RESIZE_NEAREST) {
        tosac_value *in[2] = {x, ir_new_shape(t->b, mult, 4)};
        if (!ir_add_op(t->b, TOSAC_OP_TILE, 2, in, y, n)) return oom(t);
        n->dead = true;
        return TOSAC_OK;
    }
    tosac_node *add = sole_reader(t->b, y);
    if (y->dtype != TOSAC_DTYPE_INT32 || !add || add->op != TOSAC_OP_ADD) return TOSAC_OK;
    tosac_value *k = add->inputs[0] == y ? add->inputs[1] : add->inputs[0];
    if (!ir_is_const(k) || k->dtype != TOSAC_DTYPE_INT32 || tosac_value_nelem(k) != 1) return TOSAC_OK;
    double units = (double)cint(n->inputs[1], 0) * (double)cint(n->inputs[1], 2);
    int32_t m, s;
    if (!(units >= 1 && units * 32768.0 < 1073741824.0) || !tosac_quant_multiplier(units, &m, &s)) return TOSAC_OK;
    int64_t one[4] = {x->shape[0], 1, 1, x->shape[3]}, ks[4] = {1, y->shape[1], y->shape[2], 1}, nk = ks[1] * ks[2];
    int32_t *kv = malloc((size_t)nk * sizeof *kv);
    if (!kv) return oom(t);
    for (int64_t e = 0; e < nk; e++) kv[e] = (int32_t)cint(k, 0);
    tosac_value *w = ir_new_tensor(t->b, "widened", TOSAC_DTYPE_INT32, 4, one);
    tosac_value *ins[2] = {w, quant_enc_const(t->b, "resize_zp", TOSAC_DTYPE_INT32, 4, ks, kv, NULL, nk)};
    free(kv);
    if (!w || !quant_add_rescale(t->b, x, w, &m, &s, 1, 0, 0, false, false, n) ||
        !ir_add_op(t->b, TOSAC_OP_ADD, 2, ins, add->outputs[0], add))
        return oom(t);
    n->dead = add->dead = true;
    return TOSAC_OK;
}

/* ---- GATHER_CONST_AS_SLICE ------------------------------------------------------------------ */

/* GATHER values[N,K,C] at constant indices[N,W] that are the same in every batch: one SLICE per
   run of consecutive indices, CONCAT along W when there are several. */
static tosac_status gather_as_slice(tl *t, tosac_node *n)
{
    tosac_value *v = n->inputs[0], *ix = n->inputs[1], *y = n->outputs[0];
    if (!ir_is_const(ix) || ix->rank != 2 || v->rank != 3) return TOSAC_OK;
    int64_t N = ix->shape[0], W = ix->shape[1], K = v->shape[1], C = v->shape[2], runs = 0;
    for (int64_t e = 0; e < N * W; e++)
        if (cint(ix, e) != cint(ix, e % W) || cint(ix, e) < 0 || cint(ix, e) >= K) return TOSAC_OK;
    for (int64_t w = 0; w < W; w++) runs += !w || cint(ix, w) != cint(ix, w - 1) + 1;
    if (!runs) return TOSAC_OK;
    tosac_value **parts = malloc((size_t)runs * sizeof *parts);
    if (!parts) return oom(t);
    tosac_status s = TOSAC_OK;
    int64_t r = 0;
    for (int64_t w = 0; w < W && s == TOSAC_OK;) {
        int64_t len = 1;
        while (w + len < W && cint(ix, w + len) == cint(ix, w) + len) len++;
        int64_t start[3] = {0, cint(ix, w), 0}, size[3] = {N, len, C};
        tosac_value *in[3] = {v, NULL, NULL}; /* one builder call per statement: fixed order */
        in[1] = ir_new_shape(t->b, start, 3);
        in[2] = ir_new_shape(t->b, size, 3);
        parts[r] = runs == 1 ? y : ir_new_tensor(t->b, "slice", v->dtype, 3, size);
        if (!parts[r] || !ir_add_op(t->b, TOSAC_OP_SLICE, 3, in, parts[r], n)) s = oom(t);
        r++;
        w += len;
    }
    if (s == TOSAC_OK && runs > 1) {
        tosac_node *c = ir_add_op(t->b, TOSAC_OP_CONCAT, (uint32_t)runs, parts, y, n);
        if (!c || tosac_node_set_int(c, TOSAC_ATTR_CONCAT_axis, 1) != TOSAC_OK) s = oom(t);
    }
    if (s == TOSAC_OK) n->dead = true;
    free(parts);
    return s;
}

/* ---- DILATED_CENTER ------------------------------------------------------------------------- */

/* The only tap of a kernel axis that reads inside the input for some output (-1: none or several). */
static int64_t only_tap(int64_t k_len, int64_t dil, int64_t stride, int64_t pad0, int64_t in, int64_t out)
{
    int64_t tap = -1;
    for (int64_t k = 0; k < k_len; k++)
        for (int64_t o = 0; o < out; o++) {
            int64_t i = o * stride - pad0 + k * dil;
            if (i < 0 || i >= in) continue;
            if (tap >= 0 && tap != k) return -1;
            tap = k;
        }
    return tap;
}

/*
 * A dilated CONV2D/DEPTHWISE_CONV2D whose every tap but one (per axis) reads only padding: padding
 * is the input zero point, which contributes 0, so the 1x1 convolution with that tap's weights and
 * the padding moved by the tap's offset gives the same sums.
 */
static tosac_status dilated_center(tl *t, tosac_node *n)
{
    tosac_value *x = n->inputs[0], *w = n->inputs[1], *y = n->outputs[0];
    const tosac_attr_val *pa = &n->attr[TOSAC_ATTR_CONV2D_pad], *sa = &n->attr[TOSAC_ATTR_CONV2D_stride],
                         *da = &n->attr[TOSAC_ATTR_CONV2D_dilation];
    if (!ir_is_const(w) || w->rank != 4 || x->rank != 4 || pa->len != 4 || sa->len != 2 || da->len != 2) return TOSAC_OK;
    const int32_t *pad = pa->data, *st = sa->data, *dil = da->data;
    bool dw = n->op == TOSAC_OP_DEPTHWISE_CONV2D;
    int64_t kh = dw ? w->shape[0] : w->shape[1], kw = dw ? w->shape[1] : w->shape[2];
    if ((dil[0] <= 1 && dil[1] <= 1) || (kh == 1 && kw == 1)) return TOSAC_OK;
    int64_t ty = only_tap(kh, dil[0], st[0], pad[0], x->shape[1], y->shape[1]),
            tx = only_tap(kw, dil[1], st[1], pad[2], x->shape[2], y->shape[2]);
    if (ty < 0 || tx < 0) return TOSAC_OK;
    int32_t np[4] = {(int32_t)(pad[0] - ty * dil[0]), (int32_t)(pad[1] - (kh - 1 - ty) * dil[0]),
                     (int32_t)(pad[2] - tx * dil[1]), (int32_t)(pad[3] - (kw - 1 - tx) * dil[1])};
    if (np[0] < 0 || np[1] < 0 || np[2] < 0 || np[3] < 0) return TOSAC_OK;
    /* OHWI (CONV2D) or HWCM (DEPTHWISE): the tap's slice */
    int64_t o = dw ? 1 : w->shape[0], inner = dw ? w->shape[2] * w->shape[3] : w->shape[3], n1 = o * inner;
    int64_t ws[4] = {dw ? 1 : w->shape[0], 1, 1, w->shape[3]};
    if (dw) ws[2] = w->shape[2];
    int32_t *v = malloc((size_t)n1 * sizeof *v);
    if (!v) return oom(t);
    for (int64_t a = 0; a < o; a++)
        for (int64_t c = 0; c < inner; c++)
            v[a * inner + c] = (int32_t)cint(w, dw ? (ty * kw + tx) * inner + c : ((a * kh + ty) * kw + tx) * inner + c);
    tosac_value *in[5] = {x, quant_enc_const(t->b, "qweight", w->dtype, 4, ws, v, NULL, n1), n->inputs[2], n->inputs[3],
                          n->inputs[4]};
    free(v);
    int32_t stride[2] = {st[0], st[1]};
    if (!add_conv(t, (tosac_op)n->op, in, y, np, stride, n)) return oom(t);
    n->dead = true;
    return TOSAC_OK;
}

/* ---- RESCALE chains (CONCAT_DIRECT) ------------------------------------------------------- */

/* RESCALE(x -> int32, unit: x - zp) -> RESCALE(int32 -> out, zero point 0 on its input): the
   second one reads x itself with input zero point zp, which is the same arithmetic (the first is
   exact, int8/int16 minus a zero point fits int32). */
static tosac_status fold_unit_chain(tl *t, tosac_node *r2)
{
    tosac_value *zp = NULL;
    tosac_node *r1 = r2->inputs[0]->producer;
    if (r2->n_inputs != 5 || !unit_rescale(r1, &zp) || !is_i8_or_i16(r1->inputs[0]) || !ir_is_const(r2->inputs[3]) ||
        cint(r2->inputs[3], 0) != 0 || r2->attr[TOSAC_ATTR_RESCALE_input_unsigned].i)
        return TOSAC_OK;
    tosac_value *in[5] = {r1->inputs[0], r2->inputs[1], r2->inputs[2], zp, r2->inputs[4]};
    tosac_node *r = ir_add_op(t->b, TOSAC_OP_RESCALE, 5, in, r2->outputs[0], r2);
    if (!r || ir_copy_attrs(r, r2) != TOSAC_OK) return oom(t);
    r2->dead = true;
    return TOSAC_OK;
}

/* ---- ADD_FUSABLE_SCALES --------------------------------------------------------------------- */

/* A per-tensor RESCALE i8/i16 -> int32 (signed, output zero point 0) by an exact power of two
   2^p, p >= 0: its result is (x - zp) * 2^p, exactly. -1 otherwise. */
static int widening_pow2(const tosac_node *r)
{
    if (!r || r->dead || r->op != TOSAC_OP_RESCALE || r->n_inputs != 5 || r->outputs[0]->dtype != TOSAC_DTYPE_INT32 ||
        !is_i8_or_i16(r->inputs[0]) || r->attr[TOSAC_ATTR_RESCALE_input_unsigned].i ||
        r->attr[TOSAC_ATTR_RESCALE_output_unsigned].i)
        return -1;
    for (int k = 1; k < 5; k++)
        if (!ir_is_const(r->inputs[k])) return -1;
    if (tosac_value_nelem(r->inputs[1]) != 1 || cint(r->inputs[4], 0) != 0) return -1;
    int64_t m = cint(r->inputs[1], 0), s = cint(r->inputs[2], 0);
    if (m <= 0 || (m & (m - 1))) return -1;
    int e = 0;
    while ((1ll << e) < m) e++;
    return e >= s ? (int)(e - s) : -1;
}

/*
 * ADD/SUB of two int8/int16 values at the same scale: the default lowering widens both by the
 * common 2^19 (2^14 for int16) of the ADD rule and its output RESCALE divides it out again. Vela's
 * U55 fuses input RESCALEs into an ADD only in the 16-bit form with shift 0 or when the two
 * scales differ with the larger exactly 2^19 (ETHOS_U.md §2, c55:101-153), so equal scales would
 * leave both input RESCALEs and the output one standalone. Widen by 1 instead (x - zp) and take
 * the 2^p into every output RESCALE's shift: (sum * 2^p) * M >> S == sum * M >> (S - p) exactly,
 * with TOSA's range condition on the value unchanged.
 */
static tosac_status add_fusable_scales(tl *t, tosac_node *n)
{
    tosac_node *ra = n->inputs[0]->producer, *rb = n->inputs[1]->producer;
    int p = widening_pow2(ra);
    if (p <= 0 || ra == rb || widening_pow2(rb) != p || sole_reader(t->b, ra->outputs[0]) != n ||
        sole_reader(t->b, rb->outputs[0]) != n || cint(ra->inputs[1], 0) != cint(rb->inputs[1], 0) ||
        cint(ra->inputs[2], 0) != cint(rb->inputs[2], 0))
        return TOSAC_OK;
    /* every reader of the sum is a RESCALE (signed, input zero point 0) whose shifts stay >= 2 */
    tosac_value *y = n->outputs[0];
    uint32_t found = 0;
    for (uint32_t i = 0; i < t->b->n_nodes; i++) {
        const tosac_node *c = t->b->nodes[i];
        if (c->dead || !(c->n_inputs && c->inputs[0] == y)) continue;
        if (c->op != TOSAC_OP_RESCALE || c->n_inputs != 5 || c->attr[TOSAC_ATTR_RESCALE_input_unsigned].i ||
            !ir_is_const(c->inputs[2]) || !ir_is_const(c->inputs[3]) || cint(c->inputs[3], 0) != 0)
            return TOSAC_OK;
        for (int64_t e = 0; e < tosac_value_nelem(c->inputs[2]); e++)
            if (cint(c->inputs[2], e) - p < 2) return TOSAC_OK;
        found++;
    }
    for (uint32_t k = 0; k < t->b->n_outputs; k++)
        if (t->b->outputs[k] == y) return TOSAC_OK;
    if (!found || found != reads(t->b, y)) return TOSAC_OK;
    static const int32_t m1 = 1 << 30, s1 = 30;
    tosac_node *r[2] = {ra, rb};
    for (int k = 0; k < 2; k++) {
        if (!quant_add_rescale(t->b, r[k]->inputs[0], r[k]->outputs[0], &m1, &s1, 1, (int32_t)cint(r[k]->inputs[3], 0), 0,
                               false, false, r[k]))
            return oom(t);
        r[k]->dead = true;
    }
    for (uint32_t i = 0, nn = t->b->n_nodes; i < nn; i++) {
        tosac_node *c = t->b->nodes[i];
        if (c->dead || c->op != TOSAC_OP_RESCALE || c->inputs[0] != y) continue;
        int64_t len = tosac_value_nelem(c->inputs[2]);
        int32_t *sh = malloc((size_t)len * sizeof *sh);
        if (!sh) return oom(t);
        for (int64_t e = 0; e < len; e++) sh[e] = (int32_t)(cint(c->inputs[2], e) - p);
        int64_t ln = len;
        tosac_value *in[5] = {y, c->inputs[1], NULL, c->inputs[3], c->inputs[4]};
        in[2] = quant_enc_const(t->b, "shift", TOSAC_DTYPE_INT8, 1, &ln, sh, NULL, len);
        free(sh);
        tosac_node *r2 = in[2] ? ir_add_op(t->b, TOSAC_OP_RESCALE, 5, in, c->outputs[0], c) : NULL;
        if (!r2 || ir_copy_attrs(r2, c) != TOSAC_OK) return oom(t);
        c->dead = true;
    }
    return TOSAC_OK;
}

/* ---- driver ---------------------------------------------------------------------------------- */

tosac_status quant_lower_target(tosac_block *b, uint32_t bits, tosac_diag *d)
{
    tl t = {b, d};
    tosac_status s = TOSAC_OK;
    /* new operators are appended: the loop sees only the default lowering's */
    uint32_t n_nodes = b->n_nodes;
    for (uint32_t i = 0; i < n_nodes && s == TOSAC_OK; i++) {
        tosac_node *n = b->nodes[i];
        if (n->dead) continue;
        switch (n->op) {
        case TOSAC_OP_MATMUL:
            if ((bits & TOSAC_LOWER_FC_AS_CONV2D) ||
                ((bits & TOSAC_LOWER_NO_INT16_MATMUL) && n->inputs[0]->dtype == TOSAC_DTYPE_INT16))
                s = fc_as_conv(&t, n);
            break;
        case TOSAC_OP_REDUCE_SUM:
            if (bits & TOSAC_LOWER_GAP_AS_POOL) s = gap_as_pool(&t, n);
            break;
        case TOSAC_OP_RESIZE:
            if (bits & TOSAC_LOWER_UPSAMPLE_1X1_BROADCAST) s = upsample_1x1(&t, n);
            if (s == TOSAC_OK && !n->dead && (bits & TOSAC_LOWER_RESIZE_HALF_PIXEL)) s = resize_half_pixel(&t, n);
            break;
        case TOSAC_OP_GATHER:
            if (bits & TOSAC_LOWER_GATHER_CONST_AS_SLICE) s = gather_as_slice(&t, n);
            break;
        case TOSAC_OP_CONV2D:
        case TOSAC_OP_DEPTHWISE_CONV2D:
            if (bits & TOSAC_LOWER_DILATED_CENTER) s = dilated_center(&t, n);
            break;
        case TOSAC_OP_RESCALE:
            if (bits & TOSAC_LOWER_CONCAT_DIRECT) s = fold_unit_chain(&t, n);
            break;
        case TOSAC_OP_ADD:
        case TOSAC_OP_SUB:
            if (bits & TOSAC_LOWER_ADD_FUSABLE_SCALES) s = add_fusable_scales(&t, n);
            break;
        default: break;
        }
    }
    return s;
}
