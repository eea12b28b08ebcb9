/*
 * The Ethos-U operator rules (rules.def): one check per rule, each answering "does this rule keep
 * operator n off the NPU?" for the operator in its current neighbourhood (who produces and reads
 * its tensors, and where they run), so that RESCALE fusion can be modelled the way Vela does it.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/encoding.h"
#include "target/target_internal.h"

#define MAX_AXIS 65536

/* ---- helpers -------------------------------------------------------------------------------- */

static bool ival(const tosac_value *v, uint64_t k, int64_t *out)
{
    return v && v->data && tosac_encoded_int(v->dtype, v->data, v->data_len, k, out);
}

/* Attribute `id` as `len` int32s, or NULL when absent or shorter. */
static const int32_t *ints(const tosac_node *n, unsigned id, uint32_t len)
{
    const tosac_attr_val *a = &n->attr[id];
    return a->present && a->data && a->len >= len ? a->data : NULL;
}

static bool is_int8_16(tosac_dtype t) { return t == TOSAC_DTYPE_INT8 || t == TOSAC_DTYPE_INT16; }
static const tosac_value *in(const tosac_node *n, uint32_t k) { return k < n->n_inputs ? n->inputs[k] : NULL; }
static const tosac_value *out0(const tosac_node *n) { return n->n_outputs ? n->outputs[0] : NULL; }
static int64_t dim(const tosac_value *v, int32_t k) { return v && k >= 0 && k < v->rank ? v->shape[k] : 1; }

/* Any input or output tensor (shape values aside) whose type satisfies pred. */
static bool any_type(const tosac_node *n, bool (*pred)(tosac_dtype))
{
    for (uint32_t k = 0; k < n->n_inputs; k++)
        if (!n->inputs[k]->is_shape && pred(n->inputs[k]->dtype)) return true;
    for (uint32_t k = 0; k < n->n_outputs; k++)
        if (pred(n->outputs[k]->dtype)) return true;
    return false;
}

/* A constant tensor (the producer is CONST and the data is there). */
static bool is_const(const place_ctx *c, const tosac_value *v)
{
    const tosac_node *p = v ? place_producer(c, v) : NULL;
    return p && p->op == TOSAC_OP_CONST && v->data;
}

static bool is_bool(tosac_dtype t) { return t == TOSAC_DTYPE_BOOL; }

static bool is_conv(uint32_t op)
{
    return op == TOSAC_OP_CONV2D || op == TOSAC_OP_DEPTHWISE_CONV2D || op == TOSAC_OP_TRANSPOSE_CONV2D ||
           op == TOSAC_OP_CONV3D;
}

/* Data-layout operators (op_type.hpp:302-309): no scaling fuses into them. */
static bool is_layout(uint32_t op)
{
    switch (op) {
    case TOSAC_OP_CONCAT: case TOSAC_OP_RESHAPE: case TOSAC_OP_PAD: case TOSAC_OP_REVERSE: case TOSAC_OP_SLICE:
    case TOSAC_OP_TILE: case TOSAC_OP_TRANSPOSE: case TOSAC_OP_IDENTITY: return true;
    default: return false;
    }
}

/* Kernel height and width of a convolution from its weights. */
static void conv_kernel(const tosac_node *n, int64_t *kh, int64_t *kw)
{
    const tosac_value *w = in(n, 1);
    int32_t h = n->op == TOSAC_OP_DEPTHWISE_CONV2D ? 0 : n->op == TOSAC_OP_CONV3D ? 2 : 1;
    *kh = dim(w, h);
    *kw = dim(w, h + 1);
}

static bool per_channel(const tosac_node *r) { return r->attr[TOSAC_ATTR_RESCALE_per_channel].i != 0; }

/* ---- RESCALE fusion (ETHOS_U.md §2 RESCALE) ------------------------------------------------
 * A model of Vela 5.1.0's FuseRescale (gio:1309-1672), which runs after RemoveReshape: a RESCALE
 * is fused into its producer as output scaling or into its reader as input scaling when the
 * tensor between them has exactly one reader and one writer, a zero point of 0, is no graph
 * input/output, the other operator is no data layout/SELECT and has unit scaling on that side
 * (so two RESCALEs are never merged), and the architecture's SupportsQuantization accepts the
 * result (c55:101-199, c85:152-230). A binary elementwise operator takes both of its input
 * RESCALEs at once, together with its output RESCALE (the compound fuse): this is how a
 * residual ADD of int8 tensors becomes one NPU ADD. Modelled per operator, not by replaying
 * Vela's traversal order; the one simplification is that a binary operator fuses both input
 * RESCALEs or, when only one can go, one whose input type equals the other input's. */

/* A quantized scale as Vela compares it: multiplier and shift with common factors of two removed
   (scaling.cpp:100-110 ReduceScale). */
typedef struct qscale {
    int64_t m, s;
} qscale;

static const qscale UNIT = {1, 0};

static bool is_unit(qscale q) { return q.m == 1 && q.s == 0; }

/* The per-tensor scale of RESCALE r, reduced; false when per-channel or not constant. */
static bool rescale_scale(const tosac_node *r, qscale *q)
{
    int64_t m, s;
    if (per_channel(r) || !ival(in(r, 1), 0, &m) || !ival(in(r, 2), 0, &s) || m <= 0 || s < 0) return false;
    while (m > 1 && !(m & 1) && s > 0) m >>= 1, s--;
    *q = (qscale){m, s};
    return true;
}

static int64_t zp_of(const tosac_node *r, uint32_t k)
{
    int64_t z = 0;
    return ival(in(r, k), 0, &z) ? z : 0;
}

/* Vela removes every RESHAPE before fusing (gio:1689-1758): its readers read its input. It keeps
   a copy when the input has other readers or both ends are graph I/O; modelled as: a RESHAPE on
   the NPU is transparent when its input has no other reader and neither end is a block output. */
static bool transparent_reshape(const place_ctx *c, const tosac_node *n)
{
    return n && n->op == TOSAC_OP_RESHAPE && c->where[n->index] == 1 && place_readers(c, in(n, 0)) == 1 &&
           !c->is_output[in(n, 0)->index] && !c->is_output[out0(n)->index];
}

/* The operator writing v once the RESHAPEs are gone. */
static const tosac_node *writer(const place_ctx *c, const tosac_value *v)
{
    const tosac_node *p = place_producer(c, v);
    while (transparent_reshape(c, p)) p = place_producer(c, in(p, 0));
    return p;
}

/* The only reader of v once the RESHAPEs are gone; NULL when v has several or is a block output. */
static const tosac_node *sole_reader(const place_ctx *c, const tosac_value *v)
{
    for (;;) {
        if (c->is_output[v->index] || place_readers(c, v) != 1) return NULL;
        const tosac_node *q = c->readers[c->reader_off[v->index]];
        if (!transparent_reshape(c, q)) return q;
        v = out0(q);
    }
}

static bool on_npu(const place_ctx *c, const tosac_node *n) { return n && c->where[n->index] == 1; }

static bool is_binary_elementwise(uint32_t op)
{
    switch (op) {
    case TOSAC_OP_ADD: case TOSAC_OP_SUB: case TOSAC_OP_MUL: case TOSAC_OP_MAXIMUM: case TOSAC_OP_MINIMUM:
    case TOSAC_OP_ARITHMETIC_RIGHT_SHIFT: case TOSAC_OP_LOGICAL_LEFT_SHIFT: case TOSAC_OP_LOGICAL_RIGHT_SHIFT:
    case TOSAC_OP_INTDIV: return true;
    default: return false;
    }
}

static int64_t type_min(tosac_dtype t) { return -(1ll << (tosac_dtype_bits(t) - 1)); }
static int64_t type_max(tosac_dtype t) { return (1ll << (tosac_dtype_bits(t) - 1)) - 1; }

/* CanBeFused(ontoConsumers) of RESCALE r (gio:1309-1373): its result has one reader, a zero point
   of 0, and the extreme input value it can see does not clip once scaled (input fusion drops the
   RESCALE's saturation). */
static bool input_candidate(const place_ctx *c, const tosac_node *r, const tosac_node *q)
{
    int64_t m, s;
    if (!on_npu(c, r) || r->op != TOSAC_OP_RESCALE || per_channel(r) || sole_reader(c, out0(r)) != q ||
        zp_of(r, 4) != 0 || !ival(in(r, 1), 0, &m) || !ival(in(r, 2), 0, &s) || s < 0 || s > 62)
        return false;
    tosac_dtype ti = in(r, 0)->dtype, to = out0(r)->dtype;
    if (tosac_dtype_bits(ti) > 32 || tosac_dtype_bits(to) > 32) return false;
    int64_t zp = zp_of(r, 3), v = (zp < 0 ? type_max(ti) : type_min(ti)) - zp;
    int64_t w = v * m; /* |v| <= 2^17, m < 2^31 */
    w = w >= 0 ? w >> s : -((-w) >> s);
    return w >= type_min(to) && w <= type_max(to);
}

/* SupportsQuantization of a binary elementwise operator with input scales qa/qb (types ta/tb,
   zero points za/zb) and output scale qo (type to, zero point zo): c55:101-199,300-453 and
   c85:152-230,385-416. */
static bool supports_binary(const place_ctx *c, uint32_t op, qscale qa, tosac_dtype ta, int64_t za, qscale qb,
                            tosac_dtype tb, int64_t zb, qscale qo, tosac_dtype to, int64_t zo)
{
    unsigned bi = tosac_dtype_bits(ta), bo = tosac_dtype_bits(to);
    if (ta != tb || (bi == 32 && (za || zb)) || (bo == 32 && zo)) return false;
    bool in_unit = is_unit(qa) && is_unit(qb);
    if (c->set == RS_U55) {
        if (op == TOSAC_OP_ADD || op == TOSAC_OP_SUB) {
            if (bo > 16 && !in_unit) return false;
            bool simple = qa.s == 0 && qb.s == 0 && qa.m <= INT16_MAX && qb.m <= INT16_MAX;
            /* "advanced": the larger scale is exactly 2^19 (8 bit) or 2^14 (16 bit), the two differ */
            qscale big = (double)qa.m * ldexp(1, (int)-qa.s) >= (double)qb.m * ldexp(1, (int)-qb.s) ? qa : qb;
            int64_t fixed = bi == 8 ? 1ll << 19 : 1ll << 14;
            bool advanced = (bi == 8 || bi == 16) && (qa.m != qb.m || qa.s != qb.s) && big.m == fixed && big.s == 0;
            if (!simple && !advanced) return false;
        } else if (!in_unit)
            return false;
        switch (op) {
        case TOSAC_OP_MAXIMUM: case TOSAC_OP_MINIMUM: case TOSAC_OP_ARITHMETIC_RIGHT_SHIFT:
        case TOSAC_OP_LOGICAL_LEFT_SHIFT:
            if (!is_unit(qo)) return false;
            break;
        default:
            if (!(bi < 32 && bo < 32) && qo.m != 1) return false;
        }
        if (op == TOSAC_OP_LOGICAL_LEFT_SHIFT || op == TOSAC_OP_ARITHMETIC_RIGHT_SHIFT) return bi == 32;
        return bi >= 8 && bi <= 32 && (bo <= 32 || op == TOSAC_OP_ADD);
    }
    if (op == TOSAC_OP_MUL || op == TOSAC_OP_INTDIV) {
        if (!in_unit) return false;
    } else if (!(bi == 8 || bi == 16) && !in_unit)
        return false;
    if (op == TOSAC_OP_MUL && bi == 32 && qo.m != 1) return false;
    if ((op == TOSAC_OP_ARITHMETIC_RIGHT_SHIFT || op == TOSAC_OP_LOGICAL_LEFT_SHIFT ||
         op == TOSAC_OP_LOGICAL_RIGHT_SHIFT || op == TOSAC_OP_INTDIV) && !is_unit(qo))
        return false;
    return true;
}

/* What Vela fuses into binary elementwise operator q: its input RESCALEs (in[k], NULL when that
   input keeps its own tensor) and its output RESCALE (out). */
typedef struct bin_fusion {
    const tosac_node *in[2], *out;
} bin_fusion;

static bin_fusion binary_fusion(const place_ctx *c, const tosac_node *q)
{
    bin_fusion f = {{NULL, NULL}, NULL};
    const tosac_node *cand[2], *r3 = sole_reader(c, out0(q));
    qscale q3;
    if (!(on_npu(c, r3) && r3->op == TOSAC_OP_RESCALE && zp_of(r3, 3) == 0 && rescale_scale(r3, &q3))) r3 = NULL;
    for (int k = 0; k < 2; k++) {
        cand[k] = writer(c, in(q, (uint32_t)k));
        if (!input_candidate(c, cand[k], q)) cand[k] = NULL;
    }
    /* both input RESCALEs, else one of them */
    static const bool use[3][2] = {{true, true}, {true, false}, {false, true}};
    for (int u = 0; u < 3; u++) {
        if ((use[u][0] && !cand[0]) || (use[u][1] && !cand[1])) continue;
        qscale qs[2] = {UNIT, UNIT};
        tosac_dtype ts[2];
        int64_t zs[2] = {0, 0};
        bool ok = true;
        for (int k = 0; k < 2 && ok; k++) {
            ts[k] = in(q, (uint32_t)k)->dtype;
            if (!use[u][k]) continue;
            ok = rescale_scale(cand[k], &qs[k]);
            ts[k] = in(cand[k], 0)->dtype;
            zs[k] = zp_of(cand[k], 3);
        }
        if (!ok) continue;
        bool with_out = r3 && supports_binary(c, q->op, qs[0], ts[0], zs[0], qs[1], ts[1], zs[1], q3, out0(r3)->dtype,
                                              zp_of(r3, 4));
        if (with_out || supports_binary(c, q->op, qs[0], ts[0], zs[0], qs[1], ts[1], zs[1], UNIT, out0(q)->dtype, 0)) {
            f.in[0] = use[u][0] ? cand[0] : NULL;
            f.in[1] = use[u][1] ? cand[1] : NULL;
            f.out = with_out ? r3 : NULL;
            return f;
        }
    }
    /* no input fusion: the output RESCALE alone, on the operator's own types */
    if (r3 && supports_binary(c, q->op, UNIT, in(q, 0)->dtype, 0, UNIT, in(q, 1)->dtype, 0, q3, out0(r3)->dtype,
                              zp_of(r3, 4)))
        f.out = r3;
    return f;
}

/* The operator RESCALE r fuses into as output scaling, or NULL. */
static const tosac_node *fused_producer(const place_ctx *c, const tosac_node *r)
{
    const tosac_value *x = in(r, 0);
    const tosac_node *p = x ? writer(c, x) : NULL;
    if (!on_npu(c, p) || p->op == TOSAC_OP_CONST || sole_reader(c, out0(p)) != r || zp_of(r, 3) != 0) return NULL;
    if (is_layout(p->op) || p->op == TOSAC_OP_SELECT || p->op == TOSAC_OP_RESCALE) return NULL;
    if (is_binary_elementwise(p->op)) return binary_fusion(c, p).out == r ? p : NULL;
    /* the ops whose OFM takes any scaling, per-channel included (c55:159-199, c85:182-230) */
    if (is_conv(p->op) || p->op == TOSAC_OP_MAX_POOL2D || (c->set == RS_U85 && p->op == TOSAC_OP_MATMUL)) return p;
    qscale q;
    if (!rescale_scale(r, &q)) return NULL; /* per-channel scaling: those only */
    switch (p->op) {
    case TOSAC_OP_MATMUL: case TOSAC_OP_REDUCE_SUM: return p;
    case TOSAC_OP_TABLE: return q.m == 1 && q.s == 7 ? p : NULL;
    case TOSAC_OP_CLAMP: return NULL; /* activations take no fused scaling */
    case TOSAC_OP_ABS: case TOSAC_OP_NEGATE: case TOSAC_OP_CLZ:
        if (c->set == RS_U55 && p->op != TOSAC_OP_NEGATE && !is_unit(q)) return NULL;
        return (tosac_dtype_bits(in(p, 0)->dtype) < 32 && tosac_dtype_bits(out0(r)->dtype) < 32) || q.m == 1 ? p : NULL;
    default: return is_unit(q) ? p : NULL; /* AVG_POOL2D and the rest: unit only */
    }
}

/* The operator RESCALE r fuses into as input scaling, or NULL. */
static const tosac_node *fused_consumer(const place_ctx *c, const tosac_node *r)
{
    const tosac_node *q = sole_reader(c, out0(r));
    qscale s;
    if (!on_npu(c, q) || !input_candidate(c, r, q) || is_layout(q->op) || q->op == TOSAC_OP_SELECT ||
        q->op == TOSAC_OP_RESCALE || q->op == TOSAC_OP_CLAMP || !rescale_scale(r, &s))
        return NULL;
    if (is_binary_elementwise(q->op)) {
        bin_fusion f = binary_fusion(c, q);
        return f.in[0] == r || f.in[1] == r ? q : NULL;
    }
    /* any other reader takes unit input scaling only (c55:121-127, c85:152-180), of a type it reads */
    tosac_dtype ti = in(r, 0)->dtype;
    return is_unit(s) && (ti == TOSAC_DTYPE_INT8 || ti == TOSAC_DTYPE_INT16) && q->op != TOSAC_OP_TABLE ? q : NULL;
}

static const char *rescale_note(const place_ctx *c, const tosac_node *r)
{
    if (fused_producer(c, r)) return "fused into its producer as output scaling";
    if (fused_consumer(c, r)) return "fused into its reader as input scaling";
    tosac_dtype ti = in(r, 0)->dtype, to = out0(r)->dtype;
    if (tosac_dtype_bits(ti) <= 16 && tosac_dtype_bits(to) <= 16) return "standalone: an AvgPool NOP pass";
    if (c->set == RS_U55 && ti == TOSAC_DTYPE_INT32)
        return "standalone: int32 input rewritten into MULs, one per channel group (gio:867-982)";
    return "standalone";
}

/* Binary elementwise operators whose inputs are both broadcast (ETHOS_U.md §2 broadcast: U55 takes
   one broadcast input; Vela materialises IFM0 with an extra ADD(0) first, gio:3192-3224). */
static bool both_broadcast(const tosac_node *n)
{
    if (n->n_inputs != 2 || n->n_outputs != 1) return false;
    switch (n->op) {
    case TOSAC_OP_ADD: case TOSAC_OP_SUB: case TOSAC_OP_MUL: case TOSAC_OP_MAXIMUM: case TOSAC_OP_MINIMUM:
    case TOSAC_OP_ARITHMETIC_RIGHT_SHIFT: case TOSAC_OP_LOGICAL_LEFT_SHIFT: break;
    default: return false;
    }
    const tosac_value *y = out0(n);
    bool b[2] = {false, false};
    for (int k = 0; k < 2; k++)
        for (int32_t j = 0; j < y->rank; j++) b[k] |= dim(n->inputs[k], j) != y->shape[j];
    return b[0] && b[1];
}

/* An int16 TABLE on U55/U65. SOPS:933-938 calls EXT-INT16 TABLE unsupported there, but Vela
   5.1.0 runs it (measured: efficientnet_b0 and mobilenet_v3_small a16w8 accepted whole): RewriteTable
   (gio:1759-1870) makes it the native 16-bit interpolating LUT when its OFM is int16, i.e. when the
   RESCALE of its int32 result has fused as the LUT's (1, 7) output scaling; an int32 OFM asks for
   OpSubstitution on U55 (c55:630-640) and becomes 3 LUTs, 2 MULs and an ADD. U85 has no such
   substitution. */
static const char *table16_note(const place_ctx *c, const tosac_node *n)
{
    const tosac_node *r = sole_reader(c, out0(n));
    if (r && r->op == TOSAC_OP_RESCALE && on_npu(c, r) && fused_producer(c, r) == n)
        return "int16 TABLE: the native 16-bit LUT (its RESCALE fuses as the LUT's output shift)";
    return TABLE16_EMULATED ": Vela emulates it with 3 LUTs, 2 MULs and an ADD (no RESCALE of its int32 result fuses as the "
                            "LUT's 2^-7 output shift, gio:1803-1850)";
}

const char *target_op_note(const place_ctx *c, const tosac_node *n)
{
    if (n->op == TOSAC_OP_RESCALE) return rescale_note(c, n);
    if (c->set == RS_U55 && n->op == TOSAC_OP_TABLE && in(n, 0)->dtype == TOSAC_DTYPE_INT16) return table16_note(c, n);
    if (c->set == RS_U55 && both_broadcast(n)) return "both inputs broadcast: Vela first materialises one with an ADD(0)";
    return NULL;
}

/* ---- the rules ------------------------------------------------------------------------------ */

static bool rule_FLOAT_TYPE(const place_ctx *c, const tosac_node *n) { (void)c; return any_type(n, tosac_dtype_is_float); }

static bool rule_RANK(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    for (uint32_t k = 0; k < n->n_inputs; k++)
        if (!n->inputs[k]->is_shape && n->inputs[k]->rank > 6) return true;
    for (uint32_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k]->rank > 6) return true;
    return false;
}

static bool rule_LEVEL_8K(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    const int64_t max = 8192;
    if (is_conv(n->op) || n->op == TOSAC_OP_AVG_POOL2D || n->op == TOSAC_OP_MAX_POOL2D) {
        bool pool = !is_conv(n->op);
        int64_t kh = 1, kw = 1;
        const int32_t *k = pool ? ints(n, TOSAC_ATTR_AVG_POOL2D_kernel, 2) : NULL;
        if (pool && k) kh = k[0], kw = k[1];
        else if (!pool) conv_kernel(n, &kh, &kw);
        const int32_t *dl = !pool && n->op != TOSAC_OP_TRANSPOSE_CONV2D ? ints(n, TOSAC_ATTR_CONV2D_dilation, 2) : NULL;
        if (kh * (dl ? dl[0] : 1) > max || kw * (dl ? dl[1] : 1) > max) return true;
        const tosac_attr_val *st = &n->attr[pool ? TOSAC_ATTR_AVG_POOL2D_stride : TOSAC_ATTR_CONV2D_stride];
        for (uint32_t j = 0; st->present && j < st->len; j++)
            if (((const int32_t *)st->data)[j] > max) return true;
        const tosac_attr_val *pd = &n->attr[pool ? TOSAC_ATTR_AVG_POOL2D_pad
                                                 : n->op == TOSAC_OP_TRANSPOSE_CONV2D ? TOSAC_ATTR_TRANSPOSE_CONV2D_out_pad
                                                                                      : TOSAC_ATTR_CONV2D_pad];
        for (uint32_t j = 0; pd->present && j < pd->len; j++)
            if (((const int32_t *)pd->data)[j] > max) return true;
    }
    if (n->op == TOSAC_OP_RESIZE) {
        int64_t s[4];
        for (int j = 0; j < 4; j++)
            if (!ival(in(n, 1), (uint64_t)j, &s[j])) return false;
        return s[0] > 256 * s[1] || s[2] > 256 * s[3];
    }
    return false;
}

static bool rule_CUSTOM(const place_ctx *c, const tosac_node *n) { (void)c; return n->op == TOSAC_OP_CUSTOM || !tosac_op_valid(n->op); }

static bool rule_CONTROL_FLOW(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    return n->op == TOSAC_OP_COND_IF || n->op == TOSAC_OP_WHILE_LOOP;
}

static bool rule_VARIABLE(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    return n->op == TOSAC_OP_VARIABLE || n->op == TOSAC_OP_VARIABLE_READ || n->op == TOSAC_OP_VARIABLE_WRITE;
}

static bool rule_U55_UNSUPPORTED_OP(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    switch (n->op) {
    case TOSAC_OP_EQUAL: case TOSAC_OP_GREATER: case TOSAC_OP_GREATER_EQUAL: case TOSAC_OP_SELECT:
    case TOSAC_OP_LOGICAL_AND: case TOSAC_OP_LOGICAL_OR: case TOSAC_OP_LOGICAL_XOR: case TOSAC_OP_LOGICAL_NOT:
    case TOSAC_OP_BITWISE_AND: case TOSAC_OP_BITWISE_OR: case TOSAC_OP_BITWISE_XOR: case TOSAC_OP_BITWISE_NOT:
    case TOSAC_OP_INTDIV: case TOSAC_OP_LOGICAL_RIGHT_SHIFT: case TOSAC_OP_GATHER: case TOSAC_OP_SCATTER:
    case TOSAC_OP_REDUCE_ALL: case TOSAC_OP_REDUCE_ANY: return true;
    default: return false;
    }
}

static bool rule_U55_BOOL(const place_ctx *c, const tosac_node *n) { (void)c; return any_type(n, is_bool); }

static bool rule_BOUNDARY_TYPE(const place_ctx *c, const tosac_node *n)
{
    for (uint32_t k = 0; k < n->n_inputs; k++) {
        const tosac_value *v = n->inputs[k];
        const tosac_node *p = place_producer(c, v);
        if (v->is_shape || is_int8_16(v->dtype) || (p && p->op == TOSAC_OP_CONST)) continue;
        if (!p || c->where[p->index] == 0) return true;
    }
    for (uint32_t k = 0; k < n->n_outputs; k++) {
        const tosac_value *v = n->outputs[k];
        if (is_int8_16(v->dtype)) continue;
        if (c->is_output[v->index]) return true;
        for (uint32_t j = c->reader_off[v->index]; j < c->reader_off[v->index + 1]; j++)
            if (c->where[c->readers[j]->index] == 0) return true;
    }
    return false;
}

static bool rule_ELEMENTWISE_TYPE(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    switch (n->op) {
    case TOSAC_OP_CLZ: case TOSAC_OP_LOGICAL_LEFT_SHIFT:
        return in(n, 0)->dtype != TOSAC_DTYPE_INT32 || out0(n)->dtype != TOSAC_DTYPE_INT32;
    case TOSAC_OP_ARITHMETIC_RIGHT_SHIFT: return in(n, 0)->dtype != TOSAC_DTYPE_INT32;
    default: return false;
    }
}

static bool rule_SHIFT_ROUND(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    return n->op == TOSAC_OP_ARITHMETIC_RIGHT_SHIFT && !n->attr[TOSAC_ATTR_ARITHMETIC_RIGHT_SHIFT_round].i;
}

static bool rule_CONV_KERNEL(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    if (!is_conv(n->op)) return false;
    int64_t kh, kw;
    conv_kernel(n, &kh, &kw);
    return kh > 64 || kh * kw > 4096;
}

static bool rule_CONV_STRIDE(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    if (n->op != TOSAC_OP_CONV2D && n->op != TOSAC_OP_DEPTHWISE_CONV2D) return false;
    const int32_t *st = ints(n, TOSAC_ATTR_CONV2D_stride, 2), *pd = ints(n, TOSAC_ATTR_CONV2D_pad, 4),
                  *dl = ints(n, TOSAC_ATTR_CONV2D_dilation, 2);
    if (!st || (st[0] <= 3 && st[1] <= 3)) return false;
    bool padded = pd && (pd[0] || pd[1] || pd[2] || pd[3]);
    bool dilated = dl && (dl[0] != 1 || dl[1] != 1);
    /* a depthwise stride only matters where the output has more than one element */
    bool strides = (st[0] > 3 && dim(out0(n), 1) > 1) || (st[1] > 3 && dim(out0(n), 2) > 1);
    return padded || dilated || (n->op == TOSAC_OP_DEPTHWISE_CONV2D && strides);
}

static bool rule_CONV_AXIS(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    if (!is_conv(n->op)) return false;
    const tosac_value *x = in(n, 0);
    if (dim(x, x->rank - 1) > MAX_AXIS) return true;
    return n->op == TOSAC_OP_DEPTHWISE_CONV2D && (dim(x, 1) > MAX_AXIS || dim(x, 2) > MAX_AXIS);
}

static bool rule_CONV_WEIGHTS_CONST(const place_ctx *c, const tosac_node *n)
{
    if (!is_conv(n->op)) return false;
    if (c->set == RS_U55) return !is_const(c, in(n, 1));
    if (n->op != TOSAC_OP_TRANSPOSE_CONV2D && n->op != TOSAC_OP_CONV3D) return false;
    return !is_const(c, in(n, 1)) || !is_const(c, in(n, 2));
}

static bool rule_CONV_WEIGHT_SUM(const place_ctx *c, const tosac_node *n)
{
    const tosac_value *w = in(n, 1);
    if (!is_conv(n->op) || !is_const(c, w)) return false;
    int64_t wzp = 0, nel = tosac_value_nelem(w), v;
    ival(in(n, 4), 0, &wzp);
    /* output channel of element k: the first axis, or the last two together for depthwise */
    int64_t oc = n->op == TOSAC_OP_DEPTHWISE_CONV2D ? dim(w, 2) * dim(w, 3) : dim(w, 0);
    if (oc <= 0 || nel <= 0) return false;
    int64_t *sum = calloc((size_t)oc, sizeof *sum);
    if (!sum) return false; /* cannot tell; Vela will say */
    bool over = false;
    for (int64_t k = 0; k < nel && ival(w, (uint64_t)k, &v); k++) {
        int64_t ch = n->op == TOSAC_OP_DEPTHWISE_CONV2D ? k % oc : k / (nel / oc);
        sum[ch] += v > wzp ? v - wzp : wzp - v;
    }
    for (int64_t ch = 0; ch < oc; ch++) over |= sum[ch] > 127ll * 65536;
    free(sum);
    return over;
}

static bool rule_CONV_BIAS_40BIT(const place_ctx *c, const tosac_node *n)
{
    const tosac_value *b = in(n, 2);
    if (!is_conv(n->op) || !is_const(c, b) || b->dtype != TOSAC_DTYPE_INT48) return false;
    int64_t v, nel = tosac_value_nelem(b);
    for (int64_t k = 0; k < nel && ival(b, (uint64_t)k, &v); k++)
        if (v >= (1ll << 39) || v < -(1ll << 39)) return true;
    return false;
}

static bool rule_CONV_INT16_RESCALE(const place_ctx *c, const tosac_node *n)
{
    if (!is_conv(n->op) || in(n, 0)->dtype != TOSAC_DTYPE_INT16) return false;
    const tosac_value *y = out0(n);
    if (c->is_output[y->index] || place_readers(c, y) != 1) return true;
    const tosac_node *r = c->readers[c->reader_off[y->index]];
    return r->op != TOSAC_OP_RESCALE || c->where[r->index] != 1 || fused_producer(c, r) != n;
}

static bool rule_CONV3D_U55(const place_ctx *c, const tosac_node *n) { (void)c; return n->op == TOSAC_OP_CONV3D; }

static bool rule_TRANSPOSE_CONV_STRIDE(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    if (n->op != TOSAC_OP_TRANSPOSE_CONV2D) return false;
    const int32_t *st = ints(n, TOSAC_ATTR_TRANSPOSE_CONV2D_stride, 2);
    if (!st) return false;
    int64_t kh, kw;
    conv_kernel(n, &kh, &kw);
    const tosac_value *x = in(n, 0);
    if ((st[0] == 1 && st[1] == 1) || (st[0] == 2 && st[1] == 2)) return false;
    if (st[0] == 1 && st[1] == 2) return !(dim(x, 1) == 1 && kh == 1);
    if (st[0] == 2 && st[1] == 1) return !(dim(x, 2) == 1 && kw == 1);
    return true;
}

static bool rule_MATMUL_INT16(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    return n->op == TOSAC_OP_MATMUL && in(n, 0)->dtype == TOSAC_DTYPE_INT16;
}

static bool rule_MATMUL_AXIS(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    return n->op == TOSAC_OP_MATMUL && (dim(in(n, 0), 2) > MAX_AXIS || dim(in(n, 1), 2) > MAX_AXIS);
}

static bool rule_AVG_POOL_BATCH(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    return n->op == TOSAC_OP_AVG_POOL2D && dim(in(n, 0), 0) != 1;
}

static bool pool_padded(const tosac_node *n)
{
    const int32_t *pd = ints(n, TOSAC_ATTR_AVG_POOL2D_pad, 4);
    return pd && (pd[0] || pd[1] || pd[2] || pd[3]);
}

static bool rule_AVG_POOL_PAD_KERNEL(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    const int32_t *k = ints(n, TOSAC_ATTR_AVG_POOL2D_kernel, 2);
    return n->op == TOSAC_OP_AVG_POOL2D && k && pool_padded(n) && (k[0] > 8 || k[1] > 8);
}

static bool rule_POOL_KERNEL(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    if (n->op != TOSAC_OP_MAX_POOL2D && !(n->op == TOSAC_OP_AVG_POOL2D && !pool_padded(n))) return false;
    const int32_t *k = ints(n, TOSAC_ATTR_AVG_POOL2D_kernel, 2);
    return k && (k[0] > 256 || (int64_t)k[0] * k[1] > 65536);
}

static bool rule_POOL_STRIDE(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    if (n->op != TOSAC_OP_MAX_POOL2D && n->op != TOSAC_OP_AVG_POOL2D) return false;
    const int32_t *st = ints(n, TOSAC_ATTR_AVG_POOL2D_stride, 2);
    return st && (st[0] > 3 || st[1] > 3);
}

static bool rule_POOL_AXIS(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    const tosac_value *x = in(n, 0);
    return n->op == TOSAC_OP_AVG_POOL2D && (dim(x, 1) > MAX_AXIS || dim(x, 2) > MAX_AXIS || dim(x, 3) > MAX_AXIS);
}

static bool rule_REDUCE_SUM_AXES(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    if (n->op != TOSAC_OP_REDUCE_SUM) return false;
    const tosac_value *x = in(n, 0);
    int32_t axis = (int32_t)n->attr[TOSAC_ATTR_REDUCE_SUM_axis].i;
    if (dim(x, axis) > MAX_AXIS) return true;
    if (axis == x->rank - 1) return false;
    int64_t before = 1, after = 1;
    for (int32_t k = 0; k < x->rank; k++) {
        if (k < axis) before *= x->shape[k];
        if (k > axis) after *= x->shape[k];
        if (before > MAX_AXIS || after > MAX_AXIS) return true;
    }
    return false;
}

static bool rule_REDUCE_MINMAX_TYPE(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    return (n->op == TOSAC_OP_REDUCE_MAX || n->op == TOSAC_OP_REDUCE_MIN) && !is_int8_16(in(n, 0)->dtype);
}

static bool rule_ARGMAX_U55(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    if (n->op != TOSAC_OP_ARGMAX) return false;
    const tosac_value *x = in(n, 0);
    int32_t axis = (int32_t)n->attr[TOSAC_ATTR_ARGMAX_axis].i;
    if (axis != x->rank - 1 || x->dtype != TOSAC_DTYPE_INT8 || dim(x, axis) > 127 || x->rank > 4) return true;
    if (x->rank == 4 && x->shape[0] != 1) return true;
    return dim(x, x->rank - 2) * dim(x, x->rank - 3) > MAX_AXIS;
}

static bool rule_ARGMAX_U85(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    return n->op == TOSAC_OP_ARGMAX && dim(in(n, 0), (int32_t)n->attr[TOSAC_ATTR_ARGMAX_axis].i) > 32768;
}

/* RESIZE operands: scale [yn, yd, xn, xd], offset [y, x], border [y, x]; false when not constant. */
static bool resize_params(const tosac_node *n, int64_t s[4], int64_t o[2])
{
    for (int j = 0; j < 4; j++)
        if (!ival(in(n, 1), (uint64_t)j, &s[j]) || (j % 2 && s[j] <= 0)) return false;
    return ival(in(n, 2), 0, &o[0]) && ival(in(n, 2), 1, &o[1]);
}

/* An IFM of 1x1 is rewritten to a broadcast ADD (gio:3021-3049): every rule below is moot. */
static bool resize_broadcast(const tosac_node *n) { return dim(in(n, 0), 1) == 1 && dim(in(n, 0), 2) == 1; }

static bool rule_RESIZE_SCALE(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    int64_t s[4], o[2];
    if (n->op != TOSAC_OP_RESIZE || resize_broadcast(n)) return false;
    if (!resize_params(n, s, o)) return true;
    for (int a = 0; a < 2; a++) {
        int64_t num = s[2 * a], den = s[2 * a + 1];
        if (num % den) return true;
        int64_t r = num / den;
        if (r != 2 && r != 4 && r != 8) return true;
    }
    return false;
}

static bool rule_RESIZE_MODE(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    int64_t s[4], o[2];
    if (n->op != TOSAC_OP_RESIZE || resize_broadcast(n)) return false;
    if (n->attr[TOSAC_ATTR_RESIZE_mode].i != TOSAC_RESIZE_NEAREST || !resize_params(n, s, o)) return true;
    for (int a = 0; a < 2; a++) {
        int64_t num = s[2 * a], den = s[2 * a + 1];
        /* Vela's half-pixel-centre pattern: scale_d = 2, n even, offset -(n/2 - 1); its
           align-corners pattern cannot arise for a power-of-two upscale of the whole map, so
           nothing else is accepted */
        if (den != 2 || num % 2 || o[a] != -(num / 2 - 1)) return true;
    }
    return false;
}

static bool rule_CAST_U55(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    if (n->op != TOSAC_OP_CAST) return false;
    tosac_dtype ti = in(n, 0)->dtype, to = out0(n)->dtype;
    return ti == TOSAC_DTYPE_BOOL || to == TOSAC_DTYPE_BOOL || (ti == TOSAC_DTYPE_INT32 && tosac_dtype_bits(to) < 32);
}

static bool rule_TRANSPOSE_U55(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    if (n->op != TOSAC_OP_TRANSPOSE) return false;
    const tosac_value *x = in(n, 0);
    for (int32_t k = 0; k < x->rank; k++)
        if (x->shape[k] > MAX_AXIS) return true;
    if (x->dtype == TOSAC_DTYPE_INT32) return x->rank > 4;
    /* NHWC view with leading ones */
    int64_t d4[4] = {1, 1, 1, 1};
    for (int32_t k = 0; k < x->rank && x->rank <= 4; k++) d4[4 - x->rank + k] = x->shape[k];
    bool fits = x->rank <= 4 && d4[0] * d4[1] <= MAX_AXIS && d4[2] <= MAX_AXIS && d4[3] <= MAX_AXIS;
    return !fits && tosac_value_nelem(x) > MAX_AXIS;
}

static bool rule_REVERSE_U55(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    if (n->op != TOSAC_OP_REVERSE) return false;
    const tosac_value *x = in(n, 0);
    int32_t axis = (int32_t)n->attr[TOSAC_ATTR_REVERSE_axis].i;
    return !is_int8_16(x->dtype) || x->rank < 3 || (axis != x->rank - 3 && axis != x->rank - 2);
}

static bool rule_DATA_TYPE_U55(const place_ctx *c, const tosac_node *n)
{
    (void)c;
    tosac_dtype t = out0(n) ? out0(n)->dtype : TOSAC_DTYPE_UNKNOWN;
    bool i8_32 = t == TOSAC_DTYPE_INT8 || t == TOSAC_DTYPE_INT16 || t == TOSAC_DTYPE_INT32;
    switch (n->op) {
    case TOSAC_OP_CONCAT: case TOSAC_OP_PAD: case TOSAC_OP_RESHAPE: case TOSAC_OP_SLICE: case TOSAC_OP_TILE: return !i8_32;
    case TOSAC_OP_IDENTITY: return !i8_32 && t != TOSAC_DTYPE_INT48;
    default: return false;
    }
}

static bool rule_RESCALE_INT48(const place_ctx *c, const tosac_node *n)
{
    return n->op == TOSAC_OP_RESCALE && in(n, 0)->dtype == TOSAC_DTYPE_INT48 && !fused_producer(c, n);
}

static bool rule_RESCALE_PER_CHANNEL(const place_ctx *c, const tosac_node *n)
{
    return n->op == TOSAC_OP_RESCALE && per_channel(n) && tosac_dtype_bits(in(n, 0)->dtype) <= 16 &&
           !fused_producer(c, n);
}

static bool rule_RESCALE_U16_U85(const place_ctx *c, const tosac_node *n)
{
    return n->op == TOSAC_OP_RESCALE && n->attr[TOSAC_ATTR_RESCALE_input_unsigned].i &&
           in(n, 0)->dtype == TOSAC_DTYPE_INT16 && !fused_producer(c, n) && !fused_consumer(c, n);
}

/* ---- the table ------------------------------------------------------------------------------ */

typedef bool (*rule_fn)(const place_ctx *c, const tosac_node *n);
#define RULE_FN_OP(ID) rule_##ID
#define RULE_FN_NEIGHBOURS(ID) rule_##ID
#define RULE_FN_GRAPH(ID) NULL
#define RULE_NB_OP false
#define RULE_NB_NEIGHBOURS true
#define RULE_NB_GRAPH false

static const struct {
    const char *name;
    unsigned sets;
    rule_fn check;
    bool neighbours;
    const char *text;
} k_rules[] = {
#define TARGET_RULE(ID, SETS, KIND, TEXT) {#ID, SETS, RULE_FN_##KIND(ID), RULE_NB_##KIND, TEXT},
#include "target/rules.def"
#undef TARGET_RULE
};

int tosac_rule_count(void) { return RULE_COUNT; }
const char *tosac_rule_name(int rule) { return rule >= 0 && rule < RULE_COUNT ? k_rules[rule].name : "NONE"; }
const char *tosac_rule_text(int rule) { return rule >= 0 && rule < RULE_COUNT ? k_rules[rule].text : "runs on the NPU"; }

int tosac_rule_find(const char *name)
{
    for (int k = 0; name && k < RULE_COUNT; k++)
        if (!strcasecmp(k_rules[k].name, name)) return k;
    return TOSAC_RULE_NONE;
}

int target_rule_check(const place_ctx *c, const tosac_node *n, bool neighbours_only)
{
    for (int k = 0; k < RULE_COUNT; k++)
        if ((k_rules[k].sets & c->set) && k_rules[k].check && (!neighbours_only || k_rules[k].neighbours) &&
            k_rules[k].check(c, n))
            return k;
    return TOSAC_RULE_NONE;
}

unsigned target_rule_bits(tosac_rule_set s) { return s == TOSAC_RULES_U55 ? RS_U55 : s == TOSAC_RULES_U85 ? RS_U85 : 0; }

/* ---- reader lists --------------------------------------------------------------------------- */

bool place_ctx_init(place_ctx *c, const tosac_block *b, unsigned set)
{
    memset(c, 0, sizeof *c);
    c->b = b;
    c->set = set;
    uint32_t nt = b->n_tensors, total = 0;
    c->where = malloc(b->n_nodes ? b->n_nodes : 1);
    c->reader_off = calloc(nt + 1, sizeof *c->reader_off);
    c->is_output = calloc(nt ? nt : 1, sizeof *c->is_output);
    c->producer = calloc(nt ? nt : 1, sizeof *c->producer);
    if (!c->where || !c->reader_off || !c->is_output || !c->producer) return false;
    for (uint32_t k = 0; k < b->n_nodes; k++) {
        const tosac_node *n = b->nodes[k];
        c->where[k] = n->op == TOSAC_OP_CONST || n->op == TOSAC_OP_CONST_SHAPE ? -1 : 1;
        for (uint32_t j = 0; j < n->n_outputs; j++)
            if (!n->outputs[j]->is_shape && n->outputs[j]->index < nt && !c->producer[n->outputs[j]->index])
                c->producer[n->outputs[j]->index] = b->nodes[k];
        for (uint32_t j = 0; j < n->n_inputs; j++)
            if (!n->inputs[j]->is_shape && n->inputs[j]->index < nt) c->reader_off[n->inputs[j]->index + 1]++, total++;
    }
    for (uint32_t k = 0; k < nt; k++) c->reader_off[k + 1] += c->reader_off[k];
    c->readers = malloc((total ? total : 1) * sizeof *c->readers);
    uint32_t *fill = calloc(nt ? nt : 1, sizeof *fill);
    if (!c->readers || !fill) {
        free(fill);
        return false;
    }
    for (uint32_t k = 0; k < b->n_nodes; k++) {
        tosac_node *n = b->nodes[k];
        for (uint32_t j = 0; j < n->n_inputs; j++) {
            const tosac_value *v = n->inputs[j];
            if (v->is_shape || v->index >= nt) continue;
            /* an operator reading a tensor twice counts once */
            bool seen = false;
            for (uint32_t r = c->reader_off[v->index]; r < c->reader_off[v->index] + fill[v->index]; r++)
                seen |= c->readers[r] == n;
            if (!seen) c->readers[c->reader_off[v->index] + fill[v->index]++] = n;
        }
    }
    /* close the gaps left by repeated reads: readers of tensor i are the first fill[i] slots */
    uint32_t w = 0;
    for (uint32_t k = 0; k < nt; k++) {
        uint32_t start = c->reader_off[k];
        c->reader_off[k] = w;
        for (uint32_t r = 0; r < fill[k]; r++) c->readers[w++] = c->readers[start + r];
    }
    c->reader_off[nt] = w;
    free(fill);
    for (uint32_t k = 0; k < b->n_outputs; k++)
        if (b->outputs[k]->index < nt && !b->outputs[k]->is_shape) c->is_output[b->outputs[k]->index] = true;
    return true;
}

void place_ctx_free(place_ctx *c)
{
    free(c->where);
    free(c->reader_off);
    free(c->readers);
    free(c->is_output);
    free(c->producer);
    memset(c, 0, sizeof *c);
}

uint32_t place_readers(const place_ctx *c, const tosac_value *v)
{
    return v->index < c->b->n_tensors ? c->reader_off[v->index + 1] - c->reader_off[v->index] : 0;
}

tosac_node *place_producer(const place_ctx *c, const tosac_value *v)
{
    return !v->is_shape && v->index < c->b->n_tensors ? c->producer[v->index] : NULL;
}
