/*
 * Converters for the ONNX recurrent layers RNN, GRU and LSTM, unrolled over their (static)
 * sequence length: the input projection of every step is one MATMUL over the whole sequence, each
 * step one MATMUL of the previous hidden state with R and the gate arithmetic (MUL, ADD, the
 * activations), so that the quantizer sees only operators it lowers (MATMUL with constant
 * weights, ADD/MUL, TABLEs for the activations, SLICE/CONCAT/RESHAPE moves).
 *
 * All three share one driver (rnn_convert): layouts 0 and 1, directions forward, reverse and
 * bidirectional, optional B, initial_h (initial_c, P for LSTM), sequence_lens when it is a constant
 * equal to the sequence length for every batch entry, clip, the activation list with
 * activation_alpha / activation_beta, and each of the outputs Y, Y_h (Y_c).
 */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "onnx/convert.h"

typedef enum { RNN_SIMPLE, RNN_GRU, RNN_LSTM } rnn_kind;

/* Gates per kind (rows of W / R per direction in units of hidden_size) and activations per
   direction. */
static const int k_gates[] = {1, 3, 4};
static const int k_acts[] = {1, 2, 3};

typedef struct {
    const char *name; /* k_act_table's spelling */
    float alpha, beta;
} rnn_act;

/* The activation functions ONNX's recurrent layers allow, with the attribute defaults of the
   corresponding operators; `alpha`/`beta` say whether the function consumes an entry of
   activation_alpha / activation_beta. */
static const struct {
    const char *name;
    bool alpha, beta;
    float def_alpha, def_beta;
} k_act_table[] = {
    {"Relu", false, false, 0, 0},       {"Tanh", false, false, 0, 0},
    {"Sigmoid", false, false, 0, 0},    {"Affine", true, true, 1.0f, 0.0f},
    {"LeakyRelu", true, false, 0.01f, 0}, {"ThresholdedRelu", true, false, 1.0f, 0},
    {"ScaledTanh", true, true, 1.0f, 1.0f}, {"HardSigmoid", true, true, 0.2f, 0.5f},
    {"Elu", true, false, 1.0f, 0},      {"Softsign", false, false, 0, 0},
    {"Softplus", false, false, 0, 0},
};

static tosac_value *kf(cvt_ctx *c, const tosac_value *like, double v)
{
    return like ? cvt_const_scalar(c, TOSAC_DTYPE_FP32, like->rank, v) : NULL;
}

static tosac_value *mul_k(cvt_ctx *c, tosac_value *x, double k)
{
    return cvt_binary(c, TOSAC_OP_MUL, x, kf(c, x, k), TOSAC_DTYPE_UNKNOWN);
}

static tosac_value *add_k(cvt_ctx *c, tosac_value *x, double k)
{
    return cvt_binary(c, TOSAC_OP_ADD, x, kf(c, x, k), TOSAC_DTYPE_UNKNOWN);
}

static tosac_value *apply_act(cvt_ctx *c, const rnn_act *a, tosac_value *x, tosac_status *s)
{
    if (!x) return NULL;
    const char *n = a->name;
    if (!strcmp(n, "Tanh")) return cvt_unary(c, TOSAC_OP_TANH, x);
    if (!strcmp(n, "Sigmoid")) return cvt_unary(c, TOSAC_OP_SIGMOID, x);
    if (!strcmp(n, "Relu")) return cvt_clamp(c, x, 0.0f, INFINITY);
    if (!strcmp(n, "Affine")) return add_k(c, mul_k(c, x, a->alpha), a->beta);
    if (!strcmp(n, "ScaledTanh")) return mul_k(c, cvt_unary(c, TOSAC_OP_TANH, mul_k(c, x, a->beta)), a->alpha);
    if (!strcmp(n, "HardSigmoid")) return cvt_clamp(c, add_k(c, mul_k(c, x, a->alpha), a->beta), 0.0f, 1.0f);
    if (!strcmp(n, "Softsign"))
        return cvt_binary(c, TOSAC_OP_MUL, x, cvt_unary(c, TOSAC_OP_RECIPROCAL, add_k(c, cvt_unary(c, TOSAC_OP_ABS, x), 1.0)),
                          TOSAC_DTYPE_UNKNOWN);
    if (!strcmp(n, "Softplus")) { /* max(x, 0) + log(1 + exp(-|x|)): no overflow */
        tosac_value *e = cvt_unary(c, TOSAC_OP_EXP, cvt_unary(c, TOSAC_OP_NEGATE, cvt_unary(c, TOSAC_OP_ABS, x)));
        return cvt_binary(c, TOSAC_OP_ADD, cvt_clamp(c, x, 0.0f, INFINITY), cvt_unary(c, TOSAC_OP_LOG, add_k(c, e, 1.0)),
                          TOSAC_DTYPE_UNKNOWN);
    }
    /* LeakyRelu and Elu without SELECT, so that they stay in one quantized TABLE: x >= 0 picks x
       in max(x, alpha x) for alpha <= 1 and in min(x, alpha x) above; Elu is
       max(x, 0) + alpha (exp(min(x, 0)) - 1) */
    if (!strcmp(n, "LeakyRelu"))
        return cvt_binary(c, a->alpha <= 1.0f ? TOSAC_OP_MAXIMUM : TOSAC_OP_MINIMUM, x, mul_k(c, x, a->alpha), TOSAC_DTYPE_UNKNOWN);
    if (!strcmp(n, "Elu")) {
        tosac_value *neg = cvt_binary(c, TOSAC_OP_MINIMUM, x, kf(c, x, 0.0), TOSAC_DTYPE_UNKNOWN);
        return cvt_binary(c, TOSAC_OP_ADD, cvt_clamp(c, x, 0.0f, INFINITY),
                          mul_k(c, add_k(c, cvt_unary(c, TOSAC_OP_EXP, neg), -1.0), a->alpha), TOSAC_DTYPE_UNKNOWN);
    }
    /* ThresholdedRelu: x if x > alpha else 0 */
    tosac_value *pos = cvt_binary(c, TOSAC_OP_GREATER, x, kf(c, x, a->alpha), TOSAC_DTYPE_BOOL);
    return cvt_select(c, pos, x, kf(c, x, 0.0), s);
}

/* The activations of every direction: the `activations` attribute (case-insensitive names, as
   onnxruntime reads them) or the kind's defaults, alphas and betas consumed in order by the
   functions that take them. */
static tosac_status read_acts(cvt_ctx *c, rnn_kind kind, int dirs, rnn_act *acts)
{
    static const char *const defaults[3][3] = {{"Tanh"}, {"Sigmoid", "Tanh"}, {"Sigmoid", "Tanh", "Tanh"}};
    int na = k_acts[kind] * dirs;
    const tosac_onnx_attr *at = NULL;
    for (size_t k = 0; k < c->node->n_attrs; k++)
        if (!strcmp(c->node->attrs[k].name, "activations")) at = &c->node->attrs[k];
    if (at && at->type != TOSAC_ONNX_ATTR_STRINGS)
        return cvt_fail(c, TOSAC_ERR_FORMAT, "attribute 'activations' is not a list of strings");
    if (at && (int)at->n != na) return cvt_fail(c, TOSAC_ERR_FORMAT, "%zu activations given, %d expected", at->n, na);
    size_t n_alpha = 0, n_beta = 0, ia = 0, ib = 0;
    const float *alpha = NULL, *beta = NULL;
    for (size_t k = 0; k < c->node->n_attrs; k++) {
        const tosac_onnx_attr *t = &c->node->attrs[k];
        if (t->type == TOSAC_ONNX_ATTR_FLOATS && !strcmp(t->name, "activation_alpha")) alpha = t->floats, n_alpha = t->n;
        if (t->type == TOSAC_ONNX_ATTR_FLOATS && !strcmp(t->name, "activation_beta")) beta = t->floats, n_beta = t->n;
    }
    for (int k = 0; k < na; k++) {
        const char *nm = defaults[kind][k % k_acts[kind]];
        size_t len = strlen(nm);
        if (at) nm = at->strings[k], len = at->string_lens[k];
        size_t t = 0;
        for (; t < sizeof k_act_table / sizeof *k_act_table; t++)
            if (strlen(k_act_table[t].name) == len && !strncasecmp(k_act_table[t].name, nm, len)) break;
        if (t == sizeof k_act_table / sizeof *k_act_table)
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "activation '%.*s' is not supported", (int)(len > 40 ? 40 : len), nm);
        acts[k].name = k_act_table[t].name;
        acts[k].alpha = k_act_table[t].def_alpha;
        acts[k].beta = k_act_table[t].def_beta;
        if (k_act_table[t].alpha && ia < n_alpha) acts[k].alpha = alpha[ia++];
        if (k_act_table[t].beta && ib < n_beta) acts[k].beta = beta[ib++];
    }
    return TOSAC_OK;
}

/* Rows [row0, row0 + rows) of direction d of a constant [dirs, R, cols] input as a [1, cols, rows]
   constant (transposed: the right-hand MATMUL operand). */
static tosac_value *weight_t(cvt_ctx *c, const cvt_val *w, int d, int64_t row0, int64_t rows)
{
    int64_t R = w->shape[1], cols = w->shape[2];
    float *t = cvt_const_buffer(c, (size_t)(rows * cols));
    if (!t) return NULL;
    const float *src = w->f + (int64_t)d * R * cols;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t k = 0; k < cols; k++) t[k * rows + r] = src[(row0 + r) * cols + k];
    int64_t shape[3] = {1, cols, rows};
    return cvt_const_f32_adopt(c, 3, shape, t);
}

/* A [1, 1, n] constant of entries [off, off + n) of direction d of a [dirs, len] constant, plus
   entries [off2, off2 + n) when off2 >= 0 (the W and R biases summed); zeros when v is NULL. */
static tosac_value *vec_const(cvt_ctx *c, const cvt_val *v, int d, int64_t off, int64_t off2, int64_t n)
{
    float *t = cvt_const_buffer(c, (size_t)n);
    if (!t) return NULL;
    for (int64_t k = 0; k < n; k++) {
        float a = 0.0f;
        if (v) {
            const float *row = v->f + (int64_t)d * v->shape[1];
            a = row[off + k] + (off2 >= 0 ? row[off2 + k] : 0.0f);
        }
        t[k] = a;
    }
    int64_t shape[3] = {1, 1, n};
    return cvt_const_f32_adopt(c, 3, shape, t);
}

static tosac_value *matmul(cvt_ctx *c, tosac_value *a, tosac_value *b)
{
    int64_t shape[3] = {1, a->shape[1], b->shape[2]};
    tosac_value *out = cvt_new(c, TOSAC_DTYPE_FP32, 3, shape);
    tosac_value *in[4] = {a, b, cvt_zp(c, TOSAC_DTYPE_FP32), cvt_zp(c, TOSAC_DTYPE_FP32)};
    return out && in[2] && in[3] && cvt_op(c, TOSAC_OP_MATMUL, 4, in, out) ? out : NULL;
}

/* Rows [r0, r0 + n) of a [1, rows, cols] tensor. */
static tosac_value *rows_of(cvt_ctx *c, tosac_value *x, int64_t r0, int64_t n)
{
    if (!x) return NULL;
    int64_t st[3] = {0, r0, 0}, sz[3] = {1, n, x->shape[2]};
    return cvt_mk_slice(c, x, st, sz);
}

/* Columns [c0, c0 + n) of a [1, rows, cols] tensor (one gate of a fused projection). */
static tosac_value *cols_of(cvt_ctx *c, tosac_value *x, int64_t c0, int64_t n)
{
    if (!x) return NULL;
    int64_t st[3] = {0, 0, c0}, sz[3] = {1, x->shape[1], n};
    return cvt_mk_slice(c, x, st, sz);
}

static tosac_value *clip(cvt_ctx *c, tosac_value *x, float cl)
{
    return cl > 0.0f && x ? cvt_clamp(c, x, -cl, cl) : x;
}

static tosac_value *add(cvt_ctx *c, tosac_value *a, tosac_value *b) { return cvt_binary(c, TOSAC_OP_ADD, a, b, TOSAC_DTYPE_UNKNOWN); }
static tosac_value *mul(cvt_ctx *c, tosac_value *a, tosac_value *b) { return cvt_binary(c, TOSAC_OP_MUL, a, b, TOSAC_DTYPE_UNKNOWN); }

/* The [1, batch, H] initial state of direction d from a [dirs, batch, H] input (layout 0) or
   [batch, dirs, H] (layout 1); zeros when absent. */
static tosac_value *initial_state(cvt_ctx *c, size_t input, int d, int dirs, int64_t batch, int64_t H, int layout,
                                  tosac_status *s)
{
    cvt_val *v = cvt_in(c, input);
    int64_t shape[3] = {1, batch, H};
    if (!v) {
        float *z = cvt_const_buffer(c, (size_t)(batch * H));
        if (!z) return NULL;
        memset(z, 0, (size_t)(batch * H) * sizeof *z);
        return cvt_const_f32_adopt(c, 3, shape, z);
    }
    int64_t want[3] = {layout ? batch : dirs, layout ? dirs : batch, H};
    if (v->rank != 3 || memcmp(v->shape, want, sizeof want)) {
        *s = cvt_fail(c, TOSAC_ERR_FORMAT, "input %zu has the wrong shape", input);
        return NULL;
    }
    tosac_value *t = cvt_tensor(c, v, s);
    if (!t) return NULL;
    if (layout) { /* [batch, dirs, H] -> [dirs, batch, H] */
        static const int32_t perm[3] = {1, 0, 2};
        t = cvt_mk_transpose(c, t, perm);
    }
    int64_t st[3] = {d, 0, 0};
    return cvt_mk_slice(c, t, st, shape);
}

static tosac_status rnn_convert(cvt_ctx *c, rnn_kind kind)
{
    tosac_status s = TOSAC_OK;
    cvt_val *xv = cvt_in_req(c, 0, &s), *wv = xv ? cvt_in_req(c, 1, &s) : NULL, *rv = wv ? cvt_in_req(c, 2, &s) : NULL;
    if (!rv) return s;
    cvt_val *bv = cvt_in(c, 3), *lv = cvt_in(c, 4), *pv = kind == RNN_LSTM ? cvt_in(c, 7) : NULL;
    if (xv->dt != TOSAC_DTYPE_FP32 || xv->rank != 3) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "X must be a 3-D float tensor");
    const char *what = "a constant float tensor (the converter unrolls the layer with constant weights)";
    if (!wv->is_const || !wv->f) return cvt_need_const(c, wv, what);
    if (!rv->is_const || !rv->f) return cvt_need_const(c, rv, what);
    if (bv && (!bv->is_const || !bv->f)) return cvt_need_const(c, bv, what);
    if (pv && (!pv->is_const || !pv->f)) return cvt_need_const(c, pv, what);
    int layout = (int)cvt_attr_i(c, "layout", 0);
    const char *dir = cvt_attr_s(c, "direction", "forward");
    int dirs = !strcmp(dir, "bidirectional") ? 2 : 1;
    if (dirs == 1 && strcmp(dir, "forward") && strcmp(dir, "reverse"))
        return cvt_fail(c, TOSAC_ERR_FORMAT, "direction '%s' is not forward, reverse or bidirectional", dir);
    if (layout != 0 && layout != 1) return cvt_fail(c, TOSAC_ERR_FORMAT, "layout %d is not 0 or 1", layout);
    int64_t T = xv->shape[layout ? 1 : 0], batch = xv->shape[layout ? 0 : 1], I = xv->shape[2];
    int G = k_gates[kind];
    int64_t H = cvt_attr_i(c, "hidden_size", wv->rank == 3 ? wv->shape[1] / G : 0);
    if (wv->rank != 3 || wv->shape[0] != dirs || wv->shape[1] != G * H || wv->shape[2] != I)
        return cvt_fail(c, TOSAC_ERR_FORMAT, "W must have shape [%d, %lld, %lld]", dirs, (long long)(G * H), (long long)I);
    if (rv->rank != 3 || rv->shape[0] != dirs || rv->shape[1] != G * H || rv->shape[2] != H)
        return cvt_fail(c, TOSAC_ERR_FORMAT, "R must have shape [%d, %lld, %lld]", dirs, (long long)(G * H), (long long)H);
    if (bv && (bv->rank != 2 || bv->shape[0] != dirs || bv->shape[1] != 2 * G * H))
        return cvt_fail(c, TOSAC_ERR_FORMAT, "B must have shape [%d, %lld]", dirs, (long long)(2 * G * H));
    if (pv && (pv->rank != 2 || pv->shape[0] != dirs || pv->shape[1] != 3 * H))
        return cvt_fail(c, TOSAC_ERR_FORMAT, "P must have shape [%d, %lld]", dirs, (long long)(3 * H));
    if (T > 4096) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "sequence length %lld: at most 4096 steps are unrolled", (long long)T);
    if (lv) { /* only the trivial sequence_lens: every sequence as long as X */
        if (!lv->is_const || !lv->i) return cvt_need_const(c, lv, "a constant (every entry the sequence length)");
        for (int64_t k = 0; k < lv->numel; k++)
            if (lv->i[k] != T)
                return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "sequence_lens shorter than the sequence (%lld < %lld) is not supported",
                                (long long)lv->i[k], (long long)T);
    }
    float cl = cvt_attr_f(c, "clip", 0.0f);
    bool lbr = kind == RNN_GRU && cvt_attr_i(c, "linear_before_reset", 0) != 0;
    bool couple = kind == RNN_LSTM && cvt_attr_i(c, "input_forget", 0) != 0;
    rnn_act acts[6];
    if ((s = read_acts(c, kind, dirs, acts)) != TOSAC_OK) return s;

    tosac_value *x = cvt_tensor(c, xv, &s);
    if (!x) return s;
    if (layout) { /* [batch, T, I] -> [T, batch, I] */
        static const int32_t perm[3] = {1, 0, 2};
        x = cvt_mk_transpose(c, x, perm);
    }
    int64_t xs[3] = {1, T * batch, I};
    x = cvt_mk_reshape(c, x, 3, xs); /* row t * batch + b */
    if (!x) return cvt_nomem(c);
    /* Y parts: [T][dirs] hidden states [1, batch, H]; final h and c per direction */
    bool want_y = c->node->n_outputs > 0 && c->node->outputs[0][0];
    tosac_value **ys = want_y ? tosac_arena_alloc(&c->arena, (size_t)(T * dirs) * sizeof *ys) : NULL;
    if (want_y && !ys) return cvt_nomem(c);
    tosac_value *hT[2] = {NULL, NULL}, *cT[2] = {NULL, NULL};
    for (int d = 0; d < dirs; d++) {
        bool rev = dirs == 2 ? d == 1 : !strcmp(dir, "reverse");
        const rnn_act *a = acts + d * k_acts[kind];
        /* the input projection of all steps, biases folded in (GRU with linear_before_reset keeps
           Rbh for the reset product) */
        tosac_value *xw = add(c, matmul(c, x, weight_t(c, wv, d, 0, G * H)),
                              vec_const(c, bv, d, 0, lbr ? -1 : G * H, G * H));
        tosac_value *rt = weight_t(c, rv, d, 0, G * H);
        tosac_value *rbh = lbr ? vec_const(c, bv, d, G * H + 2 * H, -1, H) : NULL;
        tosac_value *zr_rb = lbr ? vec_const(c, bv, d, G * H, -1, 2 * H) : NULL;
        tosac_value *pi = pv ? vec_const(c, pv, d, 0, -1, H) : NULL, *po = pv ? vec_const(c, pv, d, H, -1, H) : NULL,
                    *pf = pv ? vec_const(c, pv, d, 2 * H, -1, H) : NULL;
        tosac_value *h = initial_state(c, 5, d, dirs, batch, H, layout, &s);
        tosac_value *cc = kind == RNN_LSTM ? initial_state(c, 6, d, dirs, batch, H, layout, &s) : NULL;
        if (!xw || !rt || !h || (kind == RNN_LSTM && !cc)) return s != TOSAC_OK ? s : cvt_nomem(c);
        for (int64_t step = 0; step < T; step++) {
            int64_t t = rev ? T - 1 - step : step;
            tosac_value *gx = rows_of(c, xw, t * batch, batch); /* [1, batch, G*H] */
            tosac_value *hn = NULL;
            if (kind == RNN_SIMPLE) {
                hn = apply_act(c, &a[0], clip(c, add(c, gx, matmul(c, h, rt)), cl), &s);
            } else if (kind == RNN_GRU) {
                tosac_value *rz = matmul(c, h, cols_of(c, rt, 0, 2 * H)); /* [1, batch, 2H] */
                tosac_value *pre = add(c, cols_of(c, gx, 0, 2 * H), rz);
                if (lbr) pre = add(c, pre, zr_rb);
                tosac_value *z = apply_act(c, &a[0], clip(c, cols_of(c, pre, 0, H), cl), &s);
                tosac_value *r = apply_act(c, &a[0], clip(c, cols_of(c, pre, H, H), cl), &s);
                tosac_value *rh = cols_of(c, rt, 2 * H, H);
                tosac_value *hh = lbr ? mul(c, r, add(c, matmul(c, h, rh), rbh)) : matmul(c, mul(c, r, h), rh);
                tosac_value *ht = apply_act(c, &a[1], clip(c, add(c, cols_of(c, gx, 2 * H, H), hh), cl), &s);
                /* (1 - z) * ht + z * h = ht + z * (h - ht) */
                hn = add(c, ht, mul(c, z, cvt_binary(c, TOSAC_OP_SUB, h, ht, TOSAC_DTYPE_UNKNOWN)));
            } else {
                tosac_value *pre = add(c, gx, matmul(c, h, rt)); /* gates i, o, f, c */
                tosac_value *ipre = cols_of(c, pre, 0, H), *opre = cols_of(c, pre, H, H), *fpre = cols_of(c, pre, 2 * H, H);
                if (pi) ipre = add(c, ipre, mul(c, pi, cc));
                if (pf) fpre = add(c, fpre, mul(c, pf, cc));
                tosac_value *ig = apply_act(c, &a[0], clip(c, ipre, cl), &s);
                tosac_value *fg = couple ? add_k(c, cvt_unary(c, TOSAC_OP_NEGATE, ig), 1.0)
                                         : apply_act(c, &a[0], clip(c, fpre, cl), &s);
                tosac_value *cg = apply_act(c, &a[1], clip(c, cols_of(c, pre, 3 * H, H), cl), &s);
                cc = add(c, mul(c, fg, cc), mul(c, ig, cg));
                if (po) opre = add(c, opre, mul(c, po, cc));
                tosac_value *og = apply_act(c, &a[0], clip(c, opre, cl), &s);
                hn = mul(c, og, apply_act(c, &a[2], cc, &s));
            }
            if (!hn) return s != TOSAC_OK ? s : cvt_nomem(c);
            h = hn;
            if (ys) ys[t * dirs + d] = h;
        }
        hT[d] = h;
        cT[d] = cc;
    }
    /* outputs: Y [T, dirs, batch, H] (layout 1: [batch, T, dirs, H]), Y_h / Y_c [dirs, batch, H]
       (layout 1: [batch, dirs, H]) */
    if (ys) {
        int64_t s4[4] = {1, 1, batch, H};
        for (int64_t k = 0; k < T * dirs; k++)
            if (!(ys[k] = cvt_mk_reshape(c, ys[k], 4, s4))) return cvt_nomem(c);
        /* CONCAT of [1, 1, batch, H] parts in (t, d) order over axis 1, then RESHAPE */
        tosac_value *y = cvt_concat_axis(c, ys, T * dirs, 1);
        int64_t s_y[4] = {T, dirs, batch, H};
        y = cvt_mk_reshape(c, y, 4, s_y);
        if (y && layout) {
            static const int32_t perm[4] = {2, 0, 1, 3};
            y = cvt_mk_transpose(c, y, perm);
        }
        if (!y || (s = cvt_set_out(c, 0, y)) != TOSAC_OK) return y ? s : cvt_nomem(c);
    }
    tosac_value **finals[2] = {hT, cT};
    for (size_t o = 1; o < c->node->n_outputs && o <= (kind == RNN_LSTM ? 2u : 1u); o++) {
        if (!c->node->outputs[o][0]) continue;
        tosac_value *parts[2] = {finals[o - 1][0], finals[o - 1][1]};
        tosac_value *f = dirs == 2 ? cvt_concat_axis(c, parts, 2, 0) : parts[0]; /* [dirs, batch, H] */
        if (f && layout) {
            static const int32_t perm[3] = {1, 0, 2};
            f = cvt_mk_transpose(c, f, perm);
        }
        if (!f || (s = cvt_set_out(c, o, f)) != TOSAC_OK) return f ? s : cvt_nomem(c);
    }
    return TOSAC_OK;
}

tosac_status cvt_rnn(cvt_ctx *c) { return rnn_convert(c, RNN_SIMPLE); }
tosac_status cvt_gru(cvt_ctx *c) { return rnn_convert(c, RNN_GRU); }
tosac_status cvt_lstm(cvt_ctx *c) { return rnn_convert(c, RNN_LSTM); }
