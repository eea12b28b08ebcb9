/*
 * fold_conv_affine: a floating-point convolution followed by a per-output-channel MUL and/or
 * ADD/SUB by constants (an inference BatchNormalization after the import, a scale or bias the
 * exporter left separate) becomes the convolution alone with scaled weights and bias:
 *     conv(x, W, b) * s + a  ==  conv(x, W * s[oc], b * s + a)
 * It runs after layout and fold_constants, when the channel is the last axis and the per-channel
 * operands are constants of shape [1, ..., 1, OC] (or all ones). New weight and bias constants
 * are made; the new weights take over the old ones' bytes and are scaled in place when nothing
 * else reads them (the import's own copy: one copy of the weights fewer, which on a large model
 * is mostly the cost of faulting fresh pages in), else they are a scaled copy.
 */
#include <string.h>

#include "core/alloc.h"
#include "ir/rewrite.h"
#include "passes/pass.h"

typedef struct conv_fold {
    int64_t oc;
    float *w, *bias; /* the new weights and bias, in the graph's arena */
    int64_t nw;
} conv_fold;

/* dst[i] = src[i] * v[output channel of i] (a copy when v is NULL; dst may be src): weights are
   [OC, ...] except depthwise [KH, KW, C, M], whose output channel c*M+m varies fastest. src may be
   the bytes of a constant, which the arena keeps 16-byte aligned. */
static void scale_weights(const tosac_node *n, const tosac_value *w, const float *src, float *dst, int64_t nw,
                          const float *v)
{
    if (!v) {
        if (dst != src) memcpy(dst, src, (size_t)nw * sizeof(float));
        return;
    }
    if (n->op == TOSAC_OP_DEPTHWISE_CONV2D) {
        int64_t cm = w->shape[2] * w->shape[3];
        for (int64_t i = 0; i < nw; i += cm)
            for (int64_t j = 0; j < cm; j++) dst[i + j] = src[i + j] * v[j];
        return;
    }
    int64_t per = nw / w->shape[0];
    for (int64_t oc = 0; oc < w->shape[0]; oc++)
        for (int64_t j = 0; j < per; j++) dst[oc * per + j] = src[oc * per + j] * v[oc];
}

/* The per-channel constant operand of a binary op next to `y`, as OC floats (NULL if none). */
static const float *channel_operand(const tosac_node *m, const tosac_value *y, int64_t oc, bool y_first_only,
                                    float *buf)
{
    if (m->n_inputs < 2) return NULL;
    const tosac_value *a = m->inputs[0] == y ? m->inputs[1] : m->inputs[1] == y && !y_first_only ? m->inputs[0] : NULL;
    if (!a || a == y || !ir_is_const(a) || a->is_shape || a->dtype != TOSAC_DTYPE_FP32 || a->rank != y->rank) return NULL;
    for (int32_t k = 0; k + 1 < a->rank; k++)
        if (a->shape[k] != 1) return NULL;
    int64_t last = a->rank ? a->shape[a->rank - 1] : 1;
    if (last != 1 && last != oc) return NULL;
    for (int64_t c = 0; c < oc; c++) memcpy(&buf[c], a->data + 4 * (last == 1 ? 0 : c), 4);
    return buf;
}

static bool is_zero_shift(const tosac_node *m)
{
    if (m->op != TOSAC_OP_MUL) return true;
    const tosac_value *sh = m->inputs[2];
    if (!ir_is_const(sh)) return false;
    for (size_t k = 0; k < sh->data_len; k++)
        if (sh->data[k]) return false;
    return true;
}

static tosac_node *sole_consumer(tosac_block *b, const tosac_value *y)
{
    if (y->n_uses != 1) return NULL;
    for (uint32_t k = 0; k < b->n_outputs; k++)
        if (b->outputs[k] == y) return NULL;
    for (uint32_t i = 0; i < b->n_nodes; i++) {
        tosac_node *m = b->nodes[i];
        if (m->dead) continue;
        for (uint32_t k = 0; k < m->n_inputs; k++)
            if (m->inputs[k] == y) return m;
    }
    return NULL;
}

/* Whether w's bytes are its own: read by one operator input, and shared with no other value of
   the graph (fold_constants gives a RESHAPE of a constant the same bytes). */
static bool sole_owner(const tosac_graph *g, const tosac_block *b, const tosac_value *w)
{
    if (w->n_uses != 1 || !w->producer || w->variable) return false;
    for (uint32_t k = 0; k < b->n_outputs; k++)
        if (b->outputs[k] == w) return false;
    const uint8_t *lo = w->data, *hi = w->data + w->data_len;
    for (uint32_t r = 0; r < g->n_regions; r++)
        for (uint32_t k = 0; k < g->regions[r]->n_blocks; k++) {
            const tosac_block *bb = g->regions[r]->blocks[k];
            for (uint32_t t = 0; t < bb->n_tensors; t++) {
                const tosac_value *v = bb->tensors[t];
                if (v != w && v->data && v->data < hi && lo < v->data + v->data_len) return false;
            }
        }
    return true;
}

static tosac_status fold_one(pass_ctx *pc, tosac_node *n, float *chan)
{
    tosac_block *b = pc->b;
    tosac_value *w = n->inputs[1], *bias = n->inputs[2], *y = n->outputs[0];
    if (y->dtype != TOSAC_DTYPE_FP32 || w->dtype != TOSAC_DTYPE_FP32 || bias->dtype != TOSAC_DTYPE_FP32 ||
        !ir_is_const(w) || !ir_is_const(bias) || !y->rank)
        return TOSAC_OK;
    int64_t oc = y->shape[y->rank - 1];
    int64_t nb = tosac_value_nelem(bias);
    if (nb != 1 && nb != oc) return TOSAC_OK;
    conv_fold f = {oc, NULL, NULL, tosac_value_nelem(w)};
    bool changed = false, own = false;
    for (;;) {
        tosac_node *m = sole_consumer(b, y);
        if (!m || m->n_outputs != 1 || m->outputs[0]->dtype != TOSAC_DTYPE_FP32) break;
        const float *v = NULL;
        int kind = 0; /* 1 scale, 2 add, 3 subtract */
        if (m->op == TOSAC_OP_MUL && is_zero_shift(m) && (v = channel_operand(m, y, oc, false, chan))) kind = 1;
        else if (m->op == TOSAC_OP_ADD && (v = channel_operand(m, y, oc, false, chan))) kind = 2;
        else if (m->op == TOSAC_OP_SUB && (v = channel_operand(m, y, oc, true, chan))) kind = 3;
        /* a MUL whose product is rounded to an integer is a QuantizeLinear's x * (1/s): the
           quantizer reads the model's scale from it (src/quant/qdq.c), so it stays */
        tosac_node *after = kind == 1 ? sole_consumer(b, m->outputs[0]) : NULL;
        if (after && after->op == TOSAC_OP_CAST && after->outputs[0]->dtype == TOSAC_DTYPE_INT32) break;
        if (!kind) break;
        if (!f.w) {
            /* written once, straight into the graph's arena (or w's own bytes, in place), and
               adopted as the new constants; a first scale is applied while copying */
            own = sole_owner(pc->g, b, w);
            f.w = own ? (float *)(uintptr_t)w->data
                      : tosac_arena_alloc_uninit(&pc->g->arena, (size_t)f.nw * sizeof(float));
            f.bias = tosac_arena_alloc_uninit(&pc->g->arena, (size_t)oc * sizeof(float));
            if (!f.w || !f.bias) return tosac_diag_add(pc->d, TOSAC_ERR_NOMEM, "out of memory");
            for (int64_t c = 0; c < oc; c++) memcpy(&f.bias[c], bias->data + 4 * (nb == 1 ? 0 : c), 4);
            scale_weights(n, w, (const float *)(const void *)w->data, f.w, f.nw, kind == 1 ? v : NULL);
            if (kind == 1)
                for (int64_t c = 0; c < oc; c++) f.bias[c] *= v[c];
        } else if (kind == 1) {
            scale_weights(n, w, f.w, f.w, f.nw, v);
            for (int64_t c = 0; c < oc; c++) f.bias[c] *= v[c];
        }
        if (kind != 1) {
            for (int64_t c = 0; c < oc; c++) f.bias[c] = kind == 2 ? f.bias[c] + v[c] : f.bias[c] - v[c];
        }
        /* the convolution now produces m's result */
        tosac_value *z = m->outputs[0];
        m->dead = true;
        for (uint32_t k = 0; k < m->n_inputs; k++) m->inputs[k]->n_uses--;
        y->producer = NULL;
        n->outputs[0] = z;
        z->producer = n;
        y = z;
        changed = true;
        pc->changes++;
    }
    if (!changed) return TOSAC_OK;
    int64_t oc_shape = oc;
    tosac_value *nw = ir_new_const_adopt(b, "folded_w", TOSAC_DTYPE_FP32, w->rank, w->shape, f.w, (size_t)f.nw * 4);
    tosac_value *nbias =
        nw ? ir_new_const_adopt(b, "folded_b", TOSAC_DTYPE_FP32, 1, &oc_shape, f.bias, (size_t)oc * 4) : NULL;
    if (!nbias) return tosac_diag_add(pc->d, TOSAC_ERR_NOMEM, "out of memory");
    n->inputs[1] = nw;
    n->inputs[2] = nbias;
    /* the old constant no longer has bytes of its own: gone now, not compared by
       dedupe_constants first */
    if (own) {
        w->producer->dead = true;
        w->producer = NULL;
        w->n_uses = 0;
    }
    return TOSAC_OK;
}

/*
 * MATMUL a x B with constant B [1,K,N] (a Gemm or Linear), through RESHAPEs that keep the last axis
 * N, then per-column MUL/ADD/SUB by constants that include a MUL (an inference
 * BatchNormalization1d after the Gemm's bias ADD): B's columns scaled, and one ADD of the folded
 * bias in place of the chain:  (a x B + c) * s + t  ==  a x (B * s) + (c * s + t). A chain without
 * a MUL (the Gemm's bias alone) is left as it is.
 */
static tosac_status fold_matmul(pass_ctx *pc, tosac_node *n, float *chan)
{
    tosac_block *b = pc->b;
    tosac_value *bw = n->inputs[1], *v = n->outputs[0];
    if (v->dtype != TOSAC_DTYPE_FP32 || bw->dtype != TOSAC_DTYPE_FP32 || !ir_is_const(bw) || bw->rank != 3 ||
        bw->shape[0] != 1)
        return TOSAC_OK;
    int64_t K = bw->shape[1], N = bw->shape[2];
    tosac_node *m;
    while ((m = sole_consumer(b, v)) && m->op == TOSAC_OP_RESHAPE && m->outputs[0]->rank &&
           m->outputs[0]->shape[m->outputs[0]->rank - 1] == N)
        v = m->outputs[0];
    if (!v->rank || v->shape[v->rank - 1] != N) return TOSAC_OK;
    /* y' = y * s + t over the chain */
    float *s = tosac_arena_alloc_uninit(&pc->g->arena, (size_t)(2 * N + K * N) * sizeof(float));
    if (!s) return tosac_diag_add(pc->d, TOSAC_ERR_NOMEM, "out of memory");
    float *t = s + N, *w = t + N;
    for (int64_t c = 0; c < N; c++) s[c] = 1, t[c] = 0;
    tosac_node *chain[16];
    int len = 0, muls = 0;
    for (tosac_value *y = v; len < 16; y = m->outputs[0]) {
        m = sole_consumer(b, y);
        if (!m || m->n_outputs != 1 || m->outputs[0]->dtype != TOSAC_DTYPE_FP32) break;
        const float *k = NULL;
        int kind = 0; /* 1 scale, 2 add, 3 subtract */
        if (m->op == TOSAC_OP_MUL && is_zero_shift(m) && (k = channel_operand(m, y, N, false, chan))) kind = 1;
        else if (m->op == TOSAC_OP_ADD && (k = channel_operand(m, y, N, false, chan))) kind = 2;
        else if (m->op == TOSAC_OP_SUB && (k = channel_operand(m, y, N, true, chan))) kind = 3;
        tosac_node *after = kind == 1 ? sole_consumer(b, m->outputs[0]) : NULL;
        if (!kind || (after && after->op == TOSAC_OP_CAST && after->outputs[0]->dtype == TOSAC_DTYPE_INT32)) break;
        for (int64_t c = 0; c < N; c++) {
            if (kind == 1) s[c] *= k[c], t[c] *= k[c];
            else t[c] += kind == 2 ? k[c] : -k[c];
        }
        muls += kind == 1;
        chain[len++] = m;
    }
    if (!muls) return TOSAC_OK;
    const float *src = (const float *)(const void *)bw->data;
    for (int64_t e = 0; e < K * N; e++) w[e] = src[e] * s[e % N];
    int64_t ts[TOSAC_MAX_RANK];
    for (int32_t d = 0; d < v->rank; d++) ts[d] = d + 1 < v->rank ? 1 : N;
    tosac_value *nw = ir_new_const_adopt(b, "folded_w", TOSAC_DTYPE_FP32, 3, bw->shape, w, (size_t)(K * N) * 4);
    tosac_value *nb = nw ? ir_new_const_adopt(b, "folded_b", TOSAC_DTYPE_FP32, v->rank, ts, t, (size_t)N * 4) : NULL;
    tosac_value *z = chain[len - 1]->outputs[0], *in[2] = {v, nb};
    for (int j = 0; j < len; j++) {
        chain[j]->dead = true;
        for (uint32_t k = 0; k < chain[j]->n_inputs; k++) chain[j]->inputs[k]->n_uses--;
    }
    z->producer = NULL;
    if (!nb || !ir_add_op(b, TOSAC_OP_ADD, 2, in, z, chain[0])) return tosac_diag_add(pc->d, TOSAC_ERR_NOMEM, "out of memory");
    v->n_uses++;
    nb->n_uses++;
    bw->n_uses--;
    n->inputs[1] = nw;
    nw->n_uses++;
    pc->changes++;
    return TOSAC_OK;
}

tosac_status pass_fold_conv_affine(pass_ctx *pc)
{
    tosac_block *b = pc->b;
    ir_count_uses(b);
    float *chan = NULL;
    size_t chan_bytes = 0;
    uint32_t n0 = b->n_nodes;
    tosac_status s = TOSAC_OK;
    for (uint32_t i = 0; i < n0 && s == TOSAC_OK; i++) {
        tosac_node *n = b->nodes[i];
        bool mm = n->op == TOSAC_OP_MATMUL;
        if (n->dead || (!mm && n->op != TOSAC_OP_CONV2D && n->op != TOSAC_OP_CONV3D &&
                        n->op != TOSAC_OP_DEPTHWISE_CONV2D && n->op != TOSAC_OP_TRANSPOSE_CONV2D))
            continue;
        const tosac_value *y = mm ? n->inputs[1] : n->outputs[0];
        size_t need = (size_t)(y->rank ? y->shape[y->rank - 1] : 1) * sizeof(float);
        if (need > chan_bytes) {
            if (chan) tosac_free(chan, chan_bytes);
            chan = tosac_malloc(need);
            chan_bytes = chan ? need : 0;
            if (!chan) return tosac_diag_add(pc->d, TOSAC_ERR_NOMEM, "out of memory");
        }
        s = mm ? fold_matmul(pc, n, chan) : fold_one(pc, n, chan);
    }
    if (chan) tosac_free(chan, chan_bytes);
    return s;
}
