/* Converters for ONNX shape / data-movement ops: Expand, Tile, Pad, Split, Range, ConstantOfShape,
 * DepthToSpace, SpaceToDepth, Trilu, GatherElements, ScatterND, Slice (any step), CumSum, TopK,
 * Einsum (matmul-like), Resize / Upsample, ConvTranspose (1-D, 2-D, grouped). Constant inputs are folded.
 *
 * Many of these are index maps: every output element is one input element. Such an op computes the
 * flat input index of each output element at compile time (map) and emits it with emit_map: folded
 * when the input is a constant, else one GATHER over the flattened input. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "onnx/convert.h"

static void strides_of(int rank, const int64_t *shape, int64_t *st)
{
    int64_t m = 1;
    for (int k = rank - 1; k >= 0; k--) {
        st[k] = m;
        m *= shape[k];
    }
}

/* Output `o` = out-of-line index map of value v; map[k] is the flat index in v of output element k. */
static tosac_status emit_map_val(cvt_ctx *c, size_t o, cvt_val *v, int rank, const int64_t *shape, const int64_t *map)
{
    int64_t n = cvt_numel(rank, shape);
    /* an empty host constant is fine as long as it never becomes a TOSA tensor */
    if (n == 0 && !(v->is_const && !v->v)) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "zero-size results are not supported");
    if (v->is_const && !v->v) {
        if (v->dt == TOSAC_DTYPE_FP32) {
            float *f = tosac_arena_alloc(&c->arena, (size_t)n * 4 + 1);
            if (!f) return cvt_nomem(c);
            for (int64_t k = 0; k < n; k++) f[k] = v->f[map[k]];
            return cvt_set_out_const(c, o, v->dt, rank, shape, f, NULL);
        }
        int64_t *iv = tosac_arena_alloc(&c->arena, (size_t)n * 8 + 1);
        if (!iv) return cvt_nomem(c);
        for (int64_t k = 0; k < n; k++) iv[k] = v->i[map[k]];
        return cvt_set_out_const(c, o, v->dt, rank, shape, NULL, iv);
    }
    if (v->dt == TOSAC_DTYPE_BOOL) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "bool data is not supported here");
    if (n > INT32_MAX || v->numel > INT32_MAX) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "tensor too large");
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_tensor(c, v, &s);
    if (!x) return s;
    int32_t *ib = tosac_arena_alloc(&c->arena, (size_t)n * 4 + 1);
    if (!ib) return cvt_nomem(c);
    for (int64_t k = 0; k < n; k++) ib[k] = (int32_t)map[k];
    int64_t vs[3] = {1, v->numel, 1}, is[2] = {1, n}, os[3] = {1, n, 1};
    tosac_value *in[2] = {NULL, NULL};
    in[0] = cvt_mk_reshape(c, x, 3, vs);
    in[1] = cvt_const_i32(c, 2, is, ib);
    tosac_value *g = cvt_new(c, x->dtype, 3, os);
    if (!cvt_op(c, TOSAC_OP_GATHER, 2, in, g)) return cvt_nomem(c);
    return cvt_set_out(c, o, cvt_mk_reshape(c, g, rank, shape));
}

/* Broadcast map: output coordinate -> input flat index (input of rank r aligned to the right). */
static int64_t *broadcast_map(cvt_ctx *c, const cvt_val *v, int rank, const int64_t *oshape)
{
    int64_t n = cvt_numel(rank, oshape), ist[TOSAC_MAX_RANK], ish[TOSAC_MAX_RANK];
    int pad = rank - v->rank;
    for (int k = 0; k < rank; k++) ish[k] = k < pad ? 1 : v->shape[k - pad];
    strides_of(rank, ish, ist);
    int64_t *map = tosac_arena_alloc(&c->arena, (size_t)n * 8 + 1);
    if (!map) return NULL;
    int64_t idx[TOSAC_MAX_RANK] = {0};
    for (int64_t k = 0; k < n; k++) {
        int64_t f = 0;
        for (int d = 0; d < rank; d++) f += (ish[d] == 1 ? 0 : idx[d]) * ist[d];
        map[k] = f;
        for (int d = rank - 1; d >= 0; d--) {
            if (++idx[d] < oshape[d]) break;
            idx[d] = 0;
        }
    }
    return map;
}

static tosac_status check_size(cvt_ctx *c, int rank, const int64_t *shape)
{
    int64_t n = 1;
    for (int k = 0; k < rank; k++) {
        if (shape[k] <= 0) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "zero-size or negative dimension is not supported");
        if (shape[k] > (INT64_C(1) << 31) / n) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "result too large");
        n *= shape[k];
    }
    return TOSAC_OK;
}

static tosac_status tile_to(cvt_ctx *c, cvt_val *v, int rank, const int64_t *oshape)
{
    tosac_status s;
    if ((s = check_size(c, rank, oshape)) != TOSAC_OK) return s;
    if (v->is_const && !v->v) {
        int64_t *map = broadcast_map(c, v, rank, oshape);
        if (!map) return cvt_nomem(c);
        return emit_map_val(c, 0, v, rank, oshape, map);
    }
    s = TOSAC_OK;
    tosac_value *x = cvt_tensor(c, v, &s);
    if (!x) return s;
    if (rank == 0) return cvt_set_out(c, 0, cvt_unary(c, TOSAC_OP_IDENTITY, x));
    x = cvt_expand_rank(c, x, rank);
    if (!x) return cvt_nomem(c);
    int64_t mult[TOSAC_MAX_RANK];
    bool any = false;
    for (int k = 0; k < rank; k++) {
        mult[k] = oshape[k] / x->shape[k];
        any |= mult[k] != 1;
    }
    if (!any) return cvt_set_out(c, 0, cvt_unary(c, TOSAC_OP_IDENTITY, x));
    tosac_value *out = cvt_new(c, x->dtype, rank, oshape);
    tosac_value *in[2] = {x, cvt_shape_const(c, mult, (uint32_t)rank)};
    return cvt_set_out(c, 0, cvt_op(c, TOSAC_OP_TILE, 2, in, out) ? out : NULL);
}

tosac_status cvt_expand(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    const int64_t *sh;
    int64_t n;
    if ((s = cvt_const_ints(c, 1, &sh, &n)) != TOSAC_OK) return s;
    if (n > TOSAC_MAX_RANK) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "rank too large");
    int rank = (int)n > v->rank ? (int)n : v->rank;
    int64_t oshape[TOSAC_MAX_RANK];
    for (int k = 0; k < rank; k++) {
        int ka = k - (rank - v->rank), kb = k - (rank - (int)n);
        int64_t a = ka >= 0 ? v->shape[ka] : 1, b = kb >= 0 ? sh[kb] : 1;
        if (a != b && a != 1 && b != 1)
            return cvt_fail(c, TOSAC_ERR_FORMAT, "shape cannot be broadcast (dimension %d: %lld vs %lld)", k,
                            (long long)a, (long long)b);
        oshape[k] = a == 1 ? b : a;
    }
    return tile_to(c, v, rank, oshape);
}

tosac_status cvt_tile(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    const int64_t *rep;
    int64_t n;
    if ((s = cvt_const_ints(c, 1, &rep, &n)) != TOSAC_OK) return s;
    if (n != v->rank) return cvt_fail(c, TOSAC_ERR_FORMAT, "repeats has %lld entries for rank %d", (long long)n, v->rank);
    int64_t oshape[TOSAC_MAX_RANK];
    for (int k = 0; k < v->rank; k++) {
        if (rep[k] < 1) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "repeat %lld is not supported", (long long)rep[k]);
        oshape[k] = v->shape[k] * rep[k];
    }
    if ((s = check_size(c, v->rank, oshape)) != TOSAC_OK) return s;
    if (v->is_const && !v->v) {
        int64_t on = cvt_numel(v->rank, oshape), ist[TOSAC_MAX_RANK], idx[TOSAC_MAX_RANK] = {0};
        strides_of(v->rank, v->shape, ist);
        int64_t *map = tosac_arena_alloc(&c->arena, (size_t)on * 8 + 1);
        if (!map) return cvt_nomem(c);
        for (int64_t k = 0; k < on; k++) {
            int64_t f = 0;
            for (int d = 0; d < v->rank; d++) f += (idx[d] % v->shape[d]) * ist[d];
            map[k] = f;
            for (int d = v->rank - 1; d >= 0; d--) {
                if (++idx[d] < oshape[d]) break;
                idx[d] = 0;
            }
        }
        return emit_map_val(c, 0, v, v->rank, oshape, map);
    }
    tosac_value *x = cvt_tensor(c, v, &s);
    if (!x) return s;
    tosac_value *out = cvt_new(c, x->dtype, x->rank, oshape);
    tosac_value *in[2] = {x, cvt_shape_const(c, rep, (uint32_t)x->rank)};
    return cvt_set_out(c, 0, cvt_op(c, TOSAC_OP_TILE, 2, in, out) ? out : NULL);
}

tosac_status cvt_constant_of_shape(cvt_ctx *c)
{
    const int64_t *sh;
    int64_t n;
    tosac_status s;
    if ((s = cvt_const_ints(c, 0, &sh, &n)) != TOSAC_OK) return s;
    if (n > TOSAC_MAX_RANK) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "rank too large");
    int64_t total = 1;
    for (int64_t k = 0; k < n; k++) {
        if (sh[k] < 0) return cvt_fail(c, TOSAC_ERR_FORMAT, "negative dimension");
        if (sh[k] && total > (INT64_C(1) << 28) / sh[k]) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "result too large");
        total *= sh[k];
    }
    const tosac_onnx_attr *a = tosac_onnx_find_attr(c->node, "value");
    tosac_dtype dt = TOSAC_DTYPE_FP32;
    double val = 0;
    if (a) {
        if (a->type != TOSAC_ONNX_ATTR_TENSOR || a->t->numel != 1)
            return cvt_fail(c, TOSAC_ERR_FORMAT, "value must be a one-element tensor");
        const tosac_onnx_tensor *t = a->t;
        dt = cvt_dtype_of(t->elem_type);
        const float *f;
        int64_t *iv;
        if ((s = cvt_decode(c, t->elem_type, t->data, 1, &f, &iv)) != TOSAC_OK) return s;
        val = f ? (double)f[0] : (double)iv[0];
    }
    if (dt == TOSAC_DTYPE_FP32) {
        float *f = tosac_arena_alloc(&c->arena, (size_t)total * 4 + 1);
        if (!f) return cvt_nomem(c);
        for (int64_t k = 0; k < total; k++) f[k] = (float)val;
        return cvt_set_out_const(c, 0, dt, (int)n, sh, f, NULL);
    }
    int64_t *iv = tosac_arena_alloc(&c->arena, (size_t)total * 8 + 1);
    if (!iv) return cvt_nomem(c);
    for (int64_t k = 0; k < total; k++) iv[k] = (int64_t)val;
    return cvt_set_out_const(c, 0, dt, (int)n, sh, NULL, iv);
}

/* A constant scalar input as double. */
static tosac_status const_scalar(cvt_ctx *c, size_t i, double *out, tosac_dtype *dt)
{
    cvt_val *v = cvt_in(c, i);
    if (!v) return cvt_fail(c, TOSAC_ERR_FORMAT, "input %zu is missing", i);
    if (!v->is_const || (!v->f && !v->i))
        return cvt_need_const(c, v, "a constant");
    if (v->numel != 1) return cvt_fail(c, TOSAC_ERR_FORMAT, "input '%s' must be a scalar", v->name);
    *out = v->f ? (double)v->f[0] : (double)v->i[0];
    if (dt) *dt = v->dt;
    return TOSAC_OK;
}

tosac_status cvt_range(cvt_ctx *c)
{
    double st = 0, lim = 0, de = 0;
    tosac_dtype dt = TOSAC_DTYPE_UNKNOWN;
    tosac_status s;
    if ((s = const_scalar(c, 0, &st, &dt)) || (s = const_scalar(c, 1, &lim, NULL)) || (s = const_scalar(c, 2, &de, NULL)))
        return s;
    if (de == 0) return cvt_fail(c, TOSAC_ERR_FORMAT, "delta is 0");
    if (dt == TOSAC_DTYPE_BOOL) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "bool range");
    double cnt = ceil((lim - st) / de);
    if (cnt < 0) cnt = 0;
    if (cnt > (1 << 24)) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "range too large");
    int64_t n = (int64_t)cnt;
    if (dt == TOSAC_DTYPE_FP32) {
        float *f = tosac_arena_alloc(&c->arena, (size_t)n * 4 + 1), fs = (float)st, fd = (float)de;
        if (!f) return cvt_nomem(c);
        for (int64_t k = 0; k < n; k++) f[k] = fs + (float)k * fd;
        return cvt_set_out_const(c, 0, dt, 1, &n, f, NULL);
    }
    int64_t *iv = tosac_arena_alloc(&c->arena, (size_t)n * 8 + 1);
    if (!iv) return cvt_nomem(c);
    for (int64_t k = 0; k < n; k++) iv[k] = (int64_t)st + k * (int64_t)de;
    return cvt_set_out_const(c, 0, dt, 1, &n, NULL, iv);
}

/* SLICE of v (start/size per dimension) into output o; folded for constants. */
static tosac_status slice_out(cvt_ctx *c, size_t o, cvt_val *v, const int64_t *start, const int64_t *size)
{
    if (cvt_numel(v->rank, size) == 0) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "zero-size results are not supported");
    if (v->is_const && !v->v) {
        int64_t n = cvt_numel(v->rank, size), ist[TOSAC_MAX_RANK], idx[TOSAC_MAX_RANK] = {0};
        strides_of(v->rank, v->shape, ist);
        int64_t *map = tosac_arena_alloc(&c->arena, (size_t)n * 8 + 1);
        if (!map) return cvt_nomem(c);
        for (int64_t k = 0; k < n; k++) {
            int64_t f = 0;
            for (int d = 0; d < v->rank; d++) f += (start[d] + idx[d]) * ist[d];
            map[k] = f;
            for (int d = v->rank - 1; d >= 0; d--) {
                if (++idx[d] < size[d]) break;
                idx[d] = 0;
            }
        }
        return emit_map_val(c, o, v, v->rank, size, map);
    }
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_tensor(c, v, &s);
    if (!x) return s;
    tosac_value *out = cvt_new(c, x->dtype, x->rank, size);
    tosac_value *in[3] = {x, NULL, NULL};
    in[1] = cvt_shape_const(c, start, (uint32_t)x->rank);
    in[2] = cvt_shape_const(c, size, (uint32_t)x->rank);
    return cvt_set_out(c, o, cvt_op(c, TOSAC_OP_SLICE, 3, in, out) ? out : NULL);
}

tosac_status cvt_split(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    int axis;
    if ((s = cvt_axis(c, cvt_attr_i(c, "axis", 0), v->rank, &axis)) != TOSAC_OK) return s;
    size_t nout = c->node->n_outputs;
    if (nout == 0 || nout > 1024) return cvt_fail(c, TOSAC_ERR_FORMAT, "bad number of outputs");
    const int64_t *sp = NULL;
    int64_t nsp = 0;
    if (c->opset < 13) {
        size_t na;
        sp = cvt_attr_ints(c, "split", &na);
        nsp = (int64_t)na;
        if (c->opset < 2) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "opset 1 is not supported");
    } else if (cvt_in(c, 1)) {
        if ((s = cvt_const_ints(c, 1, &sp, &nsp)) != TOSAC_OK) return s;
    }
    int64_t D = v->shape[axis];
    int64_t *sizes = tosac_arena_alloc(&c->arena, nout * 8 + 1);
    if (!sizes) return cvt_nomem(c);
    if (sp && nsp) {
        if ((size_t)nsp != nout) return cvt_fail(c, TOSAC_ERR_FORMAT, "split has %lld entries for %zu outputs", (long long)nsp, nout);
        int64_t tot = 0;
        for (size_t k = 0; k < nout; k++) {
            if (sp[k] < 0) return cvt_fail(c, TOSAC_ERR_FORMAT, "negative split");
            sizes[k] = sp[k];
            tot += sp[k];
        }
        if (tot != D) return cvt_fail(c, TOSAC_ERR_FORMAT, "split sizes sum to %lld, not %lld", (long long)tot, (long long)D);
    } else {
        int64_t no = c->opset >= 18 ? cvt_attr_i(c, "num_outputs", (int64_t)nout) : (int64_t)nout;
        if (no != (int64_t)nout) return cvt_fail(c, TOSAC_ERR_FORMAT, "num_outputs %lld but %zu outputs", (long long)no, nout);
        int64_t chunk = (D + no - 1) / no;
        if (c->opset < 18 && D % no) return cvt_fail(c, TOSAC_ERR_FORMAT, "dimension %lld not divisible by %lld", (long long)D, (long long)no);
        for (size_t k = 0; k < nout; k++) {
            int64_t b = (int64_t)k * chunk, e = b + chunk > D ? D : b + chunk;
            sizes[k] = e > b ? e - b : 0;
        }
    }
    int64_t off = 0;
    for (size_t k = 0; k < nout; k++) {
        int64_t start[TOSAC_MAX_RANK] = {0}, size[TOSAC_MAX_RANK];
        memcpy(size, v->shape, sizeof size);
        start[axis] = off;
        size[axis] = sizes[k];
        off += sizes[k];
        if (!c->node->outputs[k][0]) continue;
        if ((s = slice_out(c, k, v, start, size)) != TOSAC_OK) return s;
    }
    return TOSAC_OK;
}

/* ---- Pad ------------------------------------------------------------------------------------ */

tosac_status cvt_pad(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    int r = v->rank;
    const char *mode = cvt_attr_s(c, "mode", "constant");
    int64_t pads[2 * TOSAC_MAX_RANK] = {0}; /* ONNX order: all begins, then all ends */
    const int64_t *p;
    int64_t np;
    double cval = 0;
    if (c->opset < 11) {
        size_t n;
        p = cvt_attr_ints(c, "pads", &n);
        np = (int64_t)n;
        cval = cvt_attr_f(c, "value", 0.0f);
        if ((int)np != 2 * r) return cvt_fail(c, TOSAC_ERR_FORMAT, "pads has %lld entries for rank %d", (long long)np, r);
        if (np) memcpy(pads, p, (size_t)np * 8);
    } else {
        if ((s = cvt_const_ints(c, 1, &p, &np)) != TOSAC_OK) return s;
        if (cvt_in(c, 2) && (s = const_scalar(c, 2, &cval, NULL)) != TOSAC_OK) return s;
        const int64_t *ax = NULL;
        int64_t nax = 0;
        if (cvt_in(c, 3) && (s = cvt_const_ints(c, 3, &ax, &nax)) != TOSAC_OK) return s;
        if (!ax) {
            if ((int)np != 2 * r) return cvt_fail(c, TOSAC_ERR_FORMAT, "pads has %lld entries for rank %d", (long long)np, r);
            if (np) memcpy(pads, p, (size_t)np * 8);
        } else {
            if (np != 2 * nax) return cvt_fail(c, TOSAC_ERR_FORMAT, "pads has %lld entries for %lld axes", (long long)np, (long long)nax);
            for (int64_t k = 0; k < nax; k++) {
                int a;
                if ((s = cvt_axis(c, ax[k], r, &a)) != TOSAC_OK) return s;
                pads[a] = p[k];
                pads[r + a] = p[nax + k];
            }
        }
    }
    int64_t oshape[TOSAC_MAX_RANK];
    bool neg = false;
    for (int k = 0; k < r; k++) {
        oshape[k] = v->shape[k] + pads[k] + pads[r + k];
        neg |= pads[k] < 0 || pads[r + k] < 0;
    }
    if ((s = check_size(c, r, oshape)) != TOSAC_OK) return s;
    bool is_const = !strcmp(mode, "constant");
    if (!is_const || neg || (v->is_const && !v->v)) {
        /* index map: edge / reflect / wrap, negative pads, constant folding */
        bool refl = !strcmp(mode, "reflect"), edge = !strcmp(mode, "edge"), wrap = !strcmp(mode, "wrap");
        if (!is_const && !refl && !edge && !wrap) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "mode '%s' is not supported", mode);
        if (is_const && !(v->is_const && !v->v)) {
            for (int k = 0; k < r; k++)
                if (pads[k] > 0 || pads[r + k] > 0)
                    return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "mixing negative and positive pads is not supported");
        }
        if (refl)
            for (int k = 0; k < r; k++)
                if ((pads[k] || pads[r + k]) && v->shape[k] < 2)
                    return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "reflect padding of a dimension of size 1");
        int64_t n = cvt_numel(r, oshape), ist[TOSAC_MAX_RANK], idx[TOSAC_MAX_RANK] = {0};
        strides_of(r, v->shape, ist);
        int64_t *map = tosac_arena_alloc(&c->arena, (size_t)n * 8 + 1);
        bool *fill = tosac_arena_alloc(&c->arena, (size_t)n + 1);
        if (!map || !fill) return cvt_nomem(c);
        bool any_fill = false;
        for (int64_t k = 0; k < n; k++) {
            int64_t f = 0;
            fill[k] = false;
            for (int d = 0; d < r; d++) {
                int64_t D = v->shape[d], i = idx[d] - pads[d];
                if (i < 0 || i >= D) {
                    if (is_const) fill[k] = true, i = 0;
                    else if (edge) i = i < 0 ? 0 : D - 1;
                    else if (wrap) i = ((i % D) + D) % D;
                    else {
                        int64_t per = 2 * (D - 1);
                        i = ((i % per) + per) % per;
                        if (i >= D) i = per - i;
                    }
                }
                f += i * ist[d];
            }
            any_fill |= fill[k];
            map[k] = f;
            for (int d = r - 1; d >= 0; d--) {
                if (++idx[d] < oshape[d]) break;
                idx[d] = 0;
            }
        }
        if (!any_fill) return emit_map_val(c, 0, v, r, oshape, map);
        /* folded constant padding */
        if (v->dt == TOSAC_DTYPE_FP32) {
            float *f = tosac_arena_alloc(&c->arena, (size_t)n * 4 + 1);
            if (!f) return cvt_nomem(c);
            for (int64_t k = 0; k < n; k++) f[k] = fill[k] ? (float)cval : v->f[map[k]];
            return cvt_set_out_const(c, 0, v->dt, r, oshape, f, NULL);
        }
        int64_t *iv = tosac_arena_alloc(&c->arena, (size_t)n * 8 + 1);
        if (!iv) return cvt_nomem(c);
        for (int64_t k = 0; k < n; k++) iv[k] = fill[k] ? (int64_t)cval : v->i[map[k]];
        return cvt_set_out_const(c, 0, v->dt, r, oshape, NULL, iv);
    }
    tosac_value *x = cvt_tensor(c, v, &s);
    if (!x) return s;
    if (r == 0) return cvt_set_out(c, 0, cvt_unary(c, TOSAC_OP_IDENTITY, x));
    int64_t tp[2 * TOSAC_MAX_RANK];
    for (int k = 0; k < r; k++) tp[2 * k] = pads[k], tp[2 * k + 1] = pads[r + k];
    tosac_value *out = cvt_new(c, x->dtype, r, oshape);
    tosac_value *in[3] = {x, NULL, NULL};
    in[1] = cvt_shape_const(c, tp, (uint32_t)(2 * r));
    in[2] = cvt_const_scalar(c, x->dtype, 1, cval);
    return cvt_set_out(c, 0, cvt_op(c, TOSAC_OP_PAD, 3, in, out) ? out : NULL);
}

/* ---- DepthToSpace / SpaceToDepth ---------------------------------------------------------- */

static tosac_status reshape_transpose_reshape(cvt_ctx *c, cvt_val *v, int r1, const int64_t *s1, const int32_t *perm,
                                              int r2, const int64_t *s2)
{
    tosac_status s = TOSAC_OK;
    if (v->is_const && !v->v) { /* fold through an index map */
        int64_t n = v->numel, st1[TOSAC_MAX_RANK], ps[TOSAC_MAX_RANK], idx[TOSAC_MAX_RANK] = {0};
        strides_of(r1, s1, st1);
        for (int k = 0; k < r1; k++) ps[k] = s1[perm[k]];
        int64_t *map = tosac_arena_alloc(&c->arena, (size_t)n * 8 + 1);
        if (!map) return cvt_nomem(c);
        for (int64_t k = 0; k < n; k++) {
            int64_t f = 0;
            for (int d = 0; d < r1; d++) f += idx[d] * st1[perm[d]];
            map[k] = f;
            for (int d = r1 - 1; d >= 0; d--) {
                if (++idx[d] < ps[d]) break;
                idx[d] = 0;
            }
        }
        return emit_map_val(c, 0, v, r2, s2, map);
    }
    tosac_value *x = cvt_tensor(c, v, &s);
    if (!x) return s;
    x = cvt_mk_reshape(c, x, r1, s1);
    x = cvt_mk_transpose(c, x, perm);
    return cvt_set_out(c, 0, cvt_mk_reshape(c, x, r2, s2));
}

tosac_status cvt_depth_to_space(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    if (v->rank != 4) return cvt_fail(c, TOSAC_ERR_FORMAT, "input must be rank 4");
    int64_t b = cvt_attr_i(c, "blocksize", 0), N = v->shape[0], C = v->shape[1], H = v->shape[2], W = v->shape[3];
    if (b < 1 || C % (b * b)) return cvt_fail(c, TOSAC_ERR_FORMAT, "blocksize %lld does not divide the channels", (long long)b);
    const char *mode = cvt_attr_s(c, "mode", "DCR");
    int64_t s2[4] = {N, C / (b * b), H * b, W * b};
    if (!strcmp(mode, "DCR")) {
        int64_t s1[6] = {N, b, b, C / (b * b), H, W};
        static const int32_t perm[6] = {0, 3, 4, 1, 5, 2};
        return reshape_transpose_reshape(c, v, 6, s1, perm, 4, s2);
    }
    if (!strcmp(mode, "CRD")) {
        int64_t s1[6] = {N, C / (b * b), b, b, H, W};
        static const int32_t perm[6] = {0, 1, 4, 2, 5, 3};
        return reshape_transpose_reshape(c, v, 6, s1, perm, 4, s2);
    }
    return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "mode '%s' is not supported", mode);
}

tosac_status cvt_space_to_depth(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    if (v->rank != 4) return cvt_fail(c, TOSAC_ERR_FORMAT, "input must be rank 4");
    int64_t b = cvt_attr_i(c, "blocksize", 0), N = v->shape[0], C = v->shape[1], H = v->shape[2], W = v->shape[3];
    if (b < 1 || H % b || W % b) return cvt_fail(c, TOSAC_ERR_FORMAT, "blocksize %lld does not divide H and W", (long long)b);
    int64_t s1[6] = {N, C, H / b, b, W / b, b}, s2[4] = {N, C * b * b, H / b, W / b};
    static const int32_t perm[6] = {0, 3, 5, 1, 2, 4};
    return reshape_transpose_reshape(c, v, 6, s1, perm, 4, s2);
}

/* ---- Trilu ------------------------------------------------------------------------------------ */

tosac_status cvt_trilu(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    if (v->rank < 2) return cvt_fail(c, TOSAC_ERR_FORMAT, "input rank must be at least 2");
    double kd = 0;
    if (cvt_in(c, 1) && (s = const_scalar(c, 1, &kd, NULL)) != TOSAC_OK) return s;
    int64_t k = (int64_t)kd, upper = cvt_attr_i(c, "upper", 1);
    int r = v->rank;
    int64_t M = v->shape[r - 2], N = v->shape[r - 1];
    if (v->numel == 0) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "zero-size tensors are not supported");
    int64_t *keep = tosac_arena_alloc(&c->arena, (size_t)(M * N) * 8 + 1);
    if (!keep) return cvt_nomem(c);
    bool all = true;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            keep[i * N + j] = upper ? j - i >= k : j - i <= k;
            all &= keep[i * N + j] != 0;
        }
    if (v->is_const && !v->v) {
        int64_t n = v->numel;
        if (v->dt == TOSAC_DTYPE_FP32) {
            float *f = tosac_arena_alloc(&c->arena, (size_t)n * 4 + 1);
            if (!f) return cvt_nomem(c);
            for (int64_t q = 0; q < n; q++) f[q] = keep[q % (M * N)] ? v->f[q] : 0.0f;
            return cvt_set_out_const(c, 0, v->dt, r, v->shape, f, NULL);
        }
        int64_t *iv = tosac_arena_alloc(&c->arena, (size_t)n * 8 + 1);
        if (!iv) return cvt_nomem(c);
        for (int64_t q = 0; q < n; q++) iv[q] = keep[q % (M * N)] ? v->i[q] : 0;
        return cvt_set_out_const(c, 0, v->dt, r, v->shape, NULL, iv);
    }
    tosac_value *x = cvt_tensor(c, v, &s);
    if (!x) return s;
    if (all) return cvt_set_out(c, 0, cvt_unary(c, TOSAC_OP_IDENTITY, x));
    uint8_t *mb = tosac_arena_alloc(&c->arena, (size_t)(M * N) + 1);
    if (!mb) return cvt_nomem(c);
    for (int64_t q = 0; q < M * N; q++) mb[q] = (uint8_t)keep[q];
    int64_t ms[TOSAC_MAX_RANK];
    for (int d = 0; d < r; d++) ms[d] = d < r - 2 ? 1 : v->shape[d];
    char name[32];
    snprintf(name, sizeof name, "onnx_m%u", c->counter++);
    tosac_value *mask = tosac_block_add_const(c->b, name, TOSAC_DTYPE_BOOL, r, ms, mb, (size_t)(M * N));
    tosac_value *zero = cvt_const_scalar(c, x->dtype, r, 0.0);
    tosac_value *out = cvt_new(c, x->dtype, r, x->shape);
    tosac_value *in[3] = {mask, x, zero};
    return cvt_set_out(c, 0, cvt_op(c, TOSAC_OP_SELECT, 3, in, out) ? out : NULL);
}

/* ---- GatherElements / ScatterND / Slice --------------------------------------------------- */

/* GatherElements with run-time indices: the flat index of output element k is
   idx[k] * stride(axis) + (its offset over the other axes, a constant), one GATHER over the
   flattened data. */
static tosac_status gather_elements_dynamic(cvt_ctx *c, cvt_val *v, cvt_val *iv, int axis, const int64_t *ist)
{
    tosac_status s = TOSAC_OK;
    int64_t n = iv->numel, pos[TOSAC_MAX_RANK] = {0};
    if (n == 0 || v->numel == 0) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "zero-size tensors are not supported");
    if (v->numel > INT32_MAX || n > INT32_MAX) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "tensor too large");
    if (v->dt == TOSAC_DTYPE_BOOL) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "bool data is not supported here");
    tosac_value *x = cvt_tensor(c, v, &s), *ix = x ? cvt_tensor(c, iv, &s) : NULL;
    if (!ix) return s;
    if (ix->dtype != TOSAC_DTYPE_INT32) return cvt_fail(c, TOSAC_ERR_FORMAT, "indices must be integers");
    int32_t *base = tosac_arena_alloc(&c->arena, (size_t)n * 4 + 1);
    if (!base) return cvt_nomem(c);
    for (int64_t k = 0; k < n; k++) {
        int64_t f = 0;
        for (int d = 0; d < v->rank; d++) f += d == axis ? 0 : pos[d] * ist[d];
        base[k] = (int32_t)f;
        for (int d = v->rank - 1; d >= 0; d--) {
            if (++pos[d] < iv->shape[d]) break;
            pos[d] = 0;
        }
    }
    tosac_value *j = cvt_wrap_index(c, ix, v->shape[axis], &s);
    j = cvt_binary(c, TOSAC_OP_MUL, j, cvt_const_scalar(c, TOSAC_DTYPE_INT32, ix->rank, (double)ist[axis]), TOSAC_DTYPE_UNKNOWN);
    j = cvt_binary(c, TOSAC_OP_ADD, j, cvt_const_i32(c, iv->rank, iv->shape, base), TOSAC_DTYPE_UNKNOWN);
    int64_t vs[3] = {1, v->numel, 1}, is[2] = {1, n}, os[3] = {1, n, 1};
    tosac_value *in[2] = {NULL, NULL};
    in[0] = cvt_mk_reshape(c, x, 3, vs);
    in[1] = cvt_mk_reshape(c, j, 2, is);
    tosac_value *g = cvt_new(c, x->dtype, 3, os);
    if (!cvt_op(c, TOSAC_OP_GATHER, 2, in, g)) return s != TOSAC_OK ? s : cvt_nomem(c);
    return cvt_set_out(c, 0, cvt_mk_reshape(c, g, iv->rank, iv->shape));
}

tosac_status cvt_gather_elements(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s), *iv = v ? cvt_in_req(c, 1, &s) : NULL;
    if (!iv) return s;
    int axis;
    if ((s = cvt_axis(c, cvt_attr_i(c, "axis", 0), v->rank, &axis)) != TOSAC_OK) return s;
    if (iv->rank != v->rank) return cvt_fail(c, TOSAC_ERR_FORMAT, "indices rank differs from data rank");
    for (int d = 0; d < v->rank; d++)
        if (d != axis && iv->shape[d] > v->shape[d]) return cvt_fail(c, TOSAC_ERR_FORMAT, "indices shape exceeds data shape");
    int64_t ist[TOSAC_MAX_RANK], pos[TOSAC_MAX_RANK] = {0}, K = v->shape[axis];
    strides_of(v->rank, v->shape, ist);
    if (!(iv->is_const && iv->i)) return gather_elements_dynamic(c, v, iv, axis, ist);
    const int64_t *idx;
    int64_t ni;
    if ((s = cvt_const_ints(c, 1, &idx, &ni)) != TOSAC_OK) return s;
    int64_t *map = tosac_arena_alloc(&c->arena, (size_t)ni * 8 + 1);
    if (!map) return cvt_nomem(c);
    for (int64_t k = 0; k < ni; k++) {
        int64_t j = idx[k] < 0 ? idx[k] + K : idx[k];
        if (j < 0 || j >= K) return cvt_fail(c, TOSAC_ERR_FORMAT, "index %lld out of range", (long long)idx[k]);
        int64_t f = 0;
        for (int d = 0; d < v->rank; d++) f += (d == axis ? j : pos[d]) * ist[d];
        map[k] = f;
        for (int d = v->rank - 1; d >= 0; d--) {
            if (++pos[d] < iv->shape[d]) break;
            pos[d] = 0;
        }
    }
    return emit_map_val(c, 0, v, iv->rank, iv->shape, map);
}

/* Scatter of the updates uv into v: update element e goes to flat index tgt[e] of v (U of them,
   in update order). Without a reduction (op UNKNOWN) the last update aimed at an element wins;
   with one, every element combines the data with the updates aimed at it, in update order: with
   the largest number of updates per element L, that is L rounds of
   out = out (op) GATHER(updates ++ [neutral element], the round's update index per element). */
static tosac_status scatter_flat(cvt_ctx *c, cvt_val *v, cvt_val *uv, tosac_op op, const int64_t *tgt, int64_t U)
{
    tosac_status s = TOSAC_OK;
    int64_t n = v->numel, L = 0;
    if (n == 0) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "zero-size tensors are not supported");
    if (uv->dt != v->dt) return cvt_fail(c, TOSAC_ERR_FORMAT, "updates type differs from data type");
    int64_t *cnt = tosac_arena_alloc(&c->arena, (size_t)n * 8 + 1), *map = tosac_arena_alloc(&c->arena, (size_t)n * 8 + 1);
    if (!cnt || !map) return cvt_nomem(c);
    memset(cnt, 0, (size_t)n * 8);
    for (int64_t k = 0; k < n; k++) map[k] = k;
    for (int64_t e = 0; e < U; e++) {
        map[tgt[e]] = n + e; /* from updates */
        if (++cnt[tgt[e]] > L) L = cnt[tgt[e]];
    }
    if (op == TOSAC_OP_UNKNOWN && v->is_const && !v->v && uv->is_const && !uv->v) {
        if (v->dt == TOSAC_DTYPE_FP32) {
            float *f = tosac_arena_alloc(&c->arena, (size_t)n * 4 + 1);
            if (!f) return cvt_nomem(c);
            for (int64_t k = 0; k < n; k++) f[k] = map[k] < n ? v->f[map[k]] : uv->f[map[k] - n];
            return cvt_set_out_const(c, 0, v->dt, v->rank, v->shape, f, NULL);
        }
        int64_t *ib = tosac_arena_alloc(&c->arena, (size_t)n * 8 + 1);
        if (!ib) return cvt_nomem(c);
        for (int64_t k = 0; k < n; k++) ib[k] = map[k] < n ? v->i[map[k]] : uv->i[map[k] - n];
        return cvt_set_out_const(c, 0, v->dt, v->rank, v->shape, NULL, ib);
    }
    if (v->dt == TOSAC_DTYPE_BOOL) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "bool data is not supported here");
    if (n + U >= INT32_MAX) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "tensor too large");
    if (L > 64) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "an element receives %lld updates (at most 64)", (long long)L);
    tosac_value *x = cvt_tensor(c, v, &s), *u = x ? cvt_tensor(c, uv, &s) : NULL;
    if (!u) return s;
    int64_t xs[3] = {1, n, 1}, us[3] = {1, U, 1}, is[2] = {1, n};
    int32_t *ib = tosac_arena_alloc(&c->arena, (size_t)n * 4 + 1);
    if (!ib) return cvt_nomem(c);
    tosac_value *cat_in[2] = {NULL, NULL};
    if (op == TOSAC_OP_UNKNOWN) { /* one GATHER over data ++ updates */
        int64_t cs[3] = {1, n + U, 1};
        cat_in[0] = cvt_mk_reshape(c, x, 3, xs);
        cat_in[1] = cvt_mk_reshape(c, u, 3, us);
        tosac_value *cat = cvt_new(c, x->dtype, 3, cs);
        tosac_node *nd = cvt_op(c, TOSAC_OP_CONCAT, 2, cat_in, cat);
        if (!nd || tosac_node_set_int(nd, TOSAC_ATTR_CONCAT_axis, 1) != TOSAC_OK) return cvt_nomem(c);
        for (int64_t k = 0; k < n; k++) ib[k] = (int32_t)map[k];
        tosac_value *g = cvt_new(c, x->dtype, 3, xs);
        tosac_value *gin[2] = {cat, cvt_const_i32(c, 2, is, ib)};
        if (!cvt_op(c, TOSAC_OP_GATHER, 2, gin, g)) return cvt_nomem(c);
        return cvt_set_out(c, 0, cvt_mk_reshape(c, g, v->rank, v->shape));
    }
    bool fp = v->dt == TOSAC_DTYPE_FP32;
    double neutral = op == TOSAC_OP_ADD ? 0.0 : op == TOSAC_OP_MUL ? 1.0
                   : op == TOSAC_OP_MAXIMUM ? (fp ? -INFINITY : (double)INT32_MIN) : (fp ? INFINITY : (double)INT32_MAX);
    int64_t es[3] = {1, U + 1, 1};
    cat_in[0] = cvt_mk_reshape(c, u, 3, us);
    cat_in[1] = cvt_const_scalar(c, x->dtype, 3, neutral);
    tosac_value *ext = cvt_new(c, x->dtype, 3, es);
    tosac_node *nd = cvt_op(c, TOSAC_OP_CONCAT, 2, cat_in, ext);
    if (!nd || tosac_node_set_int(nd, TOSAC_ATTR_CONCAT_axis, 1) != TOSAC_OK) return cvt_nomem(c);
    tosac_value *acc = cvt_mk_reshape(c, x, 3, xs);
    for (int64_t l = 0; l < L; l++) {
        for (int64_t k = 0; k < n; k++) ib[k] = (int32_t)U;
        memset(cnt, 0, (size_t)n * 8);
        for (int64_t e = 0; e < U; e++)
            if (cnt[tgt[e]]++ == l) ib[tgt[e]] = (int32_t)e;
        tosac_value *g = cvt_new(c, x->dtype, 3, xs);
        tosac_value *gin[2] = {ext, cvt_const_i32(c, 2, is, ib)};
        if (!cvt_op(c, TOSAC_OP_GATHER, 2, gin, g)) return cvt_nomem(c);
        acc = cvt_binary(c, op, acc, g, TOSAC_DTYPE_UNKNOWN);
    }
    return cvt_set_out(c, 0, cvt_mk_reshape(c, acc, v->rank, v->shape));
}

/* The reduction attribute of ScatterND / ScatterElements (UNKNOWN for "none"). */
static tosac_status scatter_reduction(cvt_ctx *c, tosac_op *rop)
{
    const char *red = cvt_attr_s(c, "reduction", "none");
    *rop = !strcmp(red, "add") ? TOSAC_OP_ADD : !strcmp(red, "mul") ? TOSAC_OP_MUL
         : !strcmp(red, "max") ? TOSAC_OP_MAXIMUM : !strcmp(red, "min") ? TOSAC_OP_MINIMUM : TOSAC_OP_UNKNOWN;
    if (strcmp(red, "none") && *rop == TOSAC_OP_UNKNOWN)
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "reduction '%s' is not supported", red);
    return TOSAC_OK;
}

tosac_status cvt_scatter_nd(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s), *iv = v ? cvt_in_req(c, 1, &s) : NULL, *uv = iv ? cvt_in_req(c, 2, &s) : NULL;
    if (!uv) return s;
    tosac_op rop;
    if ((s = scatter_reduction(c, &rop)) != TOSAC_OK) return s;
    const int64_t *idx;
    int64_t ni;
    if ((s = cvt_const_ints(c, 1, &idx, &ni)) != TOSAC_OK) return s;
    if (iv->rank < 1) return cvt_fail(c, TOSAC_ERR_FORMAT, "indices must have rank >= 1");
    int64_t q = iv->shape[iv->rank - 1];
    if (q < 1 || q > v->rank) return cvt_fail(c, TOSAC_ERR_FORMAT, "bad index depth %lld", (long long)q);
    int64_t nupd = q ? ni / q : 0, slice = 1, ist[TOSAC_MAX_RANK];
    for (int d = (int)q; d < v->rank; d++) slice *= v->shape[d];
    if (uv->numel != nupd * slice) return cvt_fail(c, TOSAC_ERR_FORMAT, "updates shape does not match");
    strides_of(v->rank, v->shape, ist);
    int64_t *tgt = tosac_arena_alloc(&c->arena, (size_t)uv->numel * 8 + 1);
    if (!tgt) return cvt_nomem(c);
    for (int64_t u = 0; u < nupd; u++) {
        int64_t base = 0;
        for (int64_t d = 0; d < q; d++) {
            int64_t j = idx[u * q + d], D = v->shape[d];
            if (j < 0) j += D;
            if (j < 0 || j >= D) return cvt_fail(c, TOSAC_ERR_FORMAT, "index %lld out of range", (long long)idx[u * q + d]);
            base += j * ist[d];
        }
        for (int64_t e = 0; e < slice; e++) tgt[u * slice + e] = base + e;
    }
    return scatter_flat(c, v, uv, rop, tgt, uv->numel);
}

/* ScatterElements (and the deprecated Scatter, its reduction-less form): update element p goes to
   p with its `axis` coordinate replaced by indices[p] (constant indices). */
tosac_status cvt_scatter_elements(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s), *iv = v ? cvt_in_req(c, 1, &s) : NULL, *uv = iv ? cvt_in_req(c, 2, &s) : NULL;
    if (!uv) return s;
    tosac_op rop;
    if ((s = scatter_reduction(c, &rop)) != TOSAC_OK) return s;
    int axis;
    if ((s = cvt_axis(c, cvt_attr_i(c, "axis", 0), v->rank, &axis)) != TOSAC_OK) return s;
    const int64_t *idx;
    int64_t ni;
    if ((s = cvt_const_ints(c, 1, &idx, &ni)) != TOSAC_OK) return s;
    if (iv->rank != v->rank || uv->rank != v->rank || ni != uv->numel)
        return cvt_fail(c, TOSAC_ERR_FORMAT, "indices and updates must have one shape, of the data's rank");
    for (int d = 0; d < v->rank; d++)
        if (iv->shape[d] != uv->shape[d] || (d != axis && iv->shape[d] > v->shape[d]))
            return cvt_fail(c, TOSAC_ERR_FORMAT, "indices and updates must have one shape within the data's");
    int64_t ist[TOSAC_MAX_RANK], ust[TOSAC_MAX_RANK], D = v->shape[axis];
    strides_of(v->rank, v->shape, ist);
    strides_of(iv->rank, iv->shape, ust);
    int64_t *tgt = tosac_arena_alloc(&c->arena, (size_t)ni * 8 + 1);
    if (!tgt) return cvt_nomem(c);
    for (int64_t e = 0; e < ni; e++) {
        int64_t j = idx[e], flat = 0;
        if (j < 0) j += D;
        if (j < 0 || j >= D) return cvt_fail(c, TOSAC_ERR_FORMAT, "index %lld out of range", (long long)idx[e]);
        for (int d = 0; d < v->rank; d++) flat += (d == axis ? j : e / ust[d] % iv->shape[d]) * ist[d];
        tgt[e] = flat;
    }
    return scatter_flat(c, v, uv, rop, tgt, ni);
}

/* ReverseSequence: along time_axis, the first sequence_lens[b] elements of batch b reversed (the
   rest kept); constant lengths, an index map. */
tosac_status cvt_reverse_sequence(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s), *lv = v ? cvt_in_req(c, 1, &s) : NULL;
    if (!lv) return s;
    const int64_t *len;
    int64_t nl;
    if ((s = cvt_const_ints(c, 1, &len, &nl)) != TOSAC_OK) return s;
    int64_t ta = cvt_attr_i(c, "time_axis", 0), ba = cvt_attr_i(c, "batch_axis", 1);
    if (v->rank < 2 || !((ta == 0 && ba == 1) || (ta == 1 && ba == 0)) || nl != v->shape[ba])
        return cvt_fail(c, TOSAC_ERR_FORMAT, "needs rank >= 2, time and batch axes 0 and 1, one length per batch");
    int64_t T = v->shape[ta], st[TOSAC_MAX_RANK], n = v->numel;
    strides_of(v->rank, v->shape, st);
    int64_t *map = tosac_arena_alloc(&c->arena, (size_t)n * 8 + 1);
    if (!map) return cvt_nomem(c);
    for (int64_t k = 0; k < n; k++) {
        int64_t t = k / st[ta] % T, b = k / st[ba] % v->shape[ba], L = len[b];
        if (L < 0 || L > T) return cvt_fail(c, TOSAC_ERR_FORMAT, "sequence length %lld out of range", (long long)L);
        map[k] = t < L ? k + (L - 1 - 2 * t) * st[ta] : k;
    }
    return emit_map_val(c, 0, v, v->rank, v->shape, map);
}

/* Compress: the slices along `axis` (of the flattened input without one) where the constant
   condition is true; an index map. */
tosac_status cvt_compress(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s), *cv = v ? cvt_in_req(c, 1, &s) : NULL;
    if (!cv) return s;
    const int64_t *cond;
    int64_t nc;
    if ((s = cvt_const_ints(c, 1, &cond, &nc)) != TOSAC_OK) return s;
    int64_t ax = cvt_attr_i(c, "axis", INT64_MIN);
    int rank = ax == INT64_MIN ? 1 : v->rank, axis = 0;
    int64_t shape[TOSAC_MAX_RANK];
    if (ax == INT64_MIN) shape[0] = v->numel;
    else memcpy(shape, v->shape, (size_t)rank * sizeof *shape);
    if (ax != INT64_MIN && (s = cvt_axis(c, ax, v->rank, &axis)) != TOSAC_OK) return s;
    int64_t D = shape[axis], kept = 0, inner = 1, outer = 1;
    for (int64_t k = 0; k < nc && k < D; k++) kept += cond[k] != 0;
    for (int d = axis + 1; d < rank; d++) inner *= shape[d];
    for (int d = 0; d < axis; d++) outer *= shape[d];
    int64_t oshape[TOSAC_MAX_RANK];
    memcpy(oshape, shape, (size_t)rank * sizeof *oshape);
    oshape[axis] = kept;
    int64_t *map = tosac_arena_alloc(&c->arena, (size_t)(outer * kept * inner) * 8 + 1);
    if (!map) return cvt_nomem(c);
    int64_t at = 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t k = 0; k < nc && k < D; k++)
            if (cond[k])
                for (int64_t i = 0; i < inner; i++) map[at++] = (o * D + k) * inner + i;
    return emit_map_val(c, 0, v, rank, oshape, map);
}

/* Slice with any steps (the row overrides cvt_tensor.c's; steps of 1 go to cvt_slice). */
tosac_status cvt_slice_steps(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    /* a host constant is sliced host-side (its result may be empty: shape arithmetic) */
    bool host = v->is_const && !v->v;
    const int64_t *st, *en, *ax = NULL, *sp = NULL;
    int64_t ns, ne, na = 0, nsp = 0;
    if (cvt_in(c, 4) && (s = cvt_const_ints(c, 4, &sp, &nsp)) != TOSAC_OK) return s;
    bool ones = true;
    for (int64_t k = 0; k < nsp; k++) ones &= sp[k] == 1;
    if (ones && !host) return cvt_slice(c);
    if ((s = cvt_const_ints(c, 1, &st, &ns)) != TOSAC_OK || (s = cvt_const_ints(c, 2, &en, &ne)) != TOSAC_OK) return s;
    if (cvt_in(c, 3) && (s = cvt_const_ints(c, 3, &ax, &na)) != TOSAC_OK) return s;
    if (ns != ne || (ax && na != ns) || (sp && nsp != ns)) return cvt_fail(c, TOSAC_ERR_FORMAT, "inconsistent lengths");
    int64_t start[TOSAC_MAX_RANK], step[TOSAC_MAX_RANK], size[TOSAC_MAX_RANK];
    for (int k = 0; k < v->rank; k++) start[k] = 0, step[k] = 1, size[k] = v->shape[k];
    bool seen[TOSAC_MAX_RANK] = {false};
    for (int64_t k = 0; k < ns; k++) {
        int a;
        if ((s = cvt_axis(c, ax ? ax[k] : k, v->rank, &a)) != TOSAC_OK) return s;
        if (seen[a]) return cvt_fail(c, TOSAC_ERR_FORMAT, "repeated axis %d", a);
        seen[a] = true;
        int64_t d = v->shape[a], b = st[k], e = en[k], p = sp ? sp[k] : 1;
        if (p == 0) return cvt_fail(c, TOSAC_ERR_FORMAT, "step 0");
        if (b < 0) b += d;
        if (e < 0) e += d;
        if (p > 0) {
            b = b < 0 ? 0 : b > d ? d : b;
            e = e < 0 ? 0 : e > d ? d : e;
            size[a] = e > b ? (e - b + p - 1) / p : 0;
        } else {
            b = b < 0 ? -1 : b > d - 1 ? d - 1 : b;
            e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
            size[a] = b > e ? (b - e + (-p) - 1) / (-p) : 0;
        }
        start[a] = b;
        step[a] = p;
        if (size[a] == 0 && !host) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "empty slices are not supported");
    }
    int64_t n = cvt_numel(v->rank, size), ist[TOSAC_MAX_RANK], idx[TOSAC_MAX_RANK] = {0};
    strides_of(v->rank, v->shape, ist);
    int64_t *map = tosac_arena_alloc(&c->arena, (size_t)n * 8 + 1);
    if (!map) return cvt_nomem(c);
    for (int64_t k = 0; k < n; k++) {
        int64_t f = 0;
        for (int d = 0; d < v->rank; d++) f += (start[d] + idx[d] * step[d]) * ist[d];
        map[k] = f;
        for (int d = v->rank - 1; d >= 0; d--) {
            if (++idx[d] < size[d]) break;
            idx[d] = 0;
        }
    }
    return emit_map_val(c, 0, v, v->rank, size, map);
}

/* ---- CumSum ----------------------------------------------------------------------------------- */

tosac_status cvt_cumsum(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    double ad;
    if ((s = const_scalar(c, 1, &ad, NULL)) != TOSAC_OK) return s;
    int axis;
    if ((s = cvt_axis(c, (int64_t)ad, v->rank, &axis)) != TOSAC_OK) return s;
    bool excl = cvt_attr_i(c, "exclusive", 0) != 0, rev = cvt_attr_i(c, "reverse", 0) != 0;
    if (v->dt == TOSAC_DTYPE_BOOL) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "bool data is not supported");
    int64_t L = v->shape[axis];
    if (L > 256) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "axis of size %lld is too long (at most 256)", (long long)L);
    if (v->numel == 0) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "zero-size tensors are not supported");
    tosac_value *x = cvt_tensor(c, v, &s);
    if (!x) return s;
    int r = v->rank;
    int64_t sz[TOSAC_MAX_RANK];
    memcpy(sz, v->shape, sizeof sz);
    sz[axis] = 1;
    tosac_value *parts[256], *acc = NULL;
    for (int64_t t = 0; t < L; t++) {
        int64_t j = rev ? L - 1 - t : t;
        int64_t start[TOSAC_MAX_RANK] = {0};
        start[axis] = j;
        tosac_value *sl = cvt_new(c, x->dtype, r, sz);
        tosac_value *in[3] = {x, NULL, NULL};
        in[1] = cvt_shape_const(c, start, (uint32_t)r);
        in[2] = cvt_shape_const(c, sz, (uint32_t)r);
        if (!cvt_op(c, TOSAC_OP_SLICE, 3, in, sl)) return cvt_nomem(c);
        tosac_value *prev = acc;
        acc = acc ? cvt_binary(c, TOSAC_OP_ADD, acc, sl, TOSAC_DTYPE_UNKNOWN) : sl;
        if (!acc) return s ? s : cvt_nomem(c);
        tosac_value *res = excl ? (prev ? prev : NULL) : acc;
        if (!res) { /* exclusive first element: zeros */
            size_t m = (size_t)cvt_numel(r, sz);
            void *z = tosac_arena_alloc(&c->arena, m * 4 + 1);
            if (!z) return cvt_nomem(c);
            memset(z, 0, m * 4);
            res = x->dtype == TOSAC_DTYPE_FP32 ? cvt_const_f32(c, r, sz, z) : cvt_const_i32(c, r, sz, z);
            if (!res) return cvt_nomem(c);
        }
        parts[j] = res;
    }
    if (L == 1) return cvt_set_out(c, 0, cvt_unary(c, TOSAC_OP_IDENTITY, parts[0]));
    tosac_value *out = cvt_new(c, x->dtype, r, v->shape);
    tosac_node *nd = cvt_op(c, TOSAC_OP_CONCAT, (uint32_t)L, parts, out);
    if (!nd || tosac_node_set_int(nd, TOSAC_ATTR_CONCAT_axis, axis) != TOSAC_OK) return cvt_nomem(c);
    return cvt_set_out(c, 0, out);
}

/* ---- TopK ------------------------------------------------------------------------------------ */

/* k rounds of ARGMAX (the first maximum: ONNX puts the lower index first among equal values) and
   REDUCE_MAX, each masking its pick to -inf for the next round (a -inf in the data itself can then
   tie with a masked element); the smallest k use the negated data. */
tosac_status cvt_topk(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    int64_t k;
    if (c->opset < 10) k = cvt_attr_i(c, "k", -1);
    else {
        double kd;
        if ((s = const_scalar(c, 1, &kd, NULL)) != TOSAC_OK) return s;
        k = (int64_t)kd;
    }
    int axis;
    if ((s = cvt_axis(c, cvt_attr_i(c, "axis", -1), v->rank, &axis)) != TOSAC_OK) return s;
    if (v->rank == 0) return cvt_fail(c, TOSAC_ERR_FORMAT, "input must have rank >= 1");
    int64_t L = v->shape[axis];
    if (k < 1 || k > L) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "k=%lld is not supported (1 to %lld)", (long long)k, (long long)L);
    if (k > 256) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "k=%lld is too large (at most 256)", (long long)k);
    bool largest = cvt_attr_i(c, "largest", 1) != 0;
    if (v->dt != TOSAC_DTYPE_FP32) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "only FLOAT data is supported");
    tosac_value *x = cvt_tensor(c, v, &s);
    if (!x) return s;
    int r = x->rank;
    int64_t ks[TOSAC_MAX_RANK], as[TOSAC_MAX_RANK], ios[TOSAC_MAX_RANK];
    for (int d = 0, j = 0; d < r; d++) {
        ks[d] = d == axis ? 1 : x->shape[d];
        ios[d] = d == axis ? L : 1;
        if (d != axis) as[j++] = x->shape[d];
    }
    int32_t *iota = tosac_arena_alloc(&c->arena, (size_t)L * 4 + 1);
    if (!iota) return cvt_nomem(c);
    for (int64_t j = 0; j < L; j++) iota[j] = (int32_t)j;
    tosac_value *w = largest ? x : cvt_unary(c, TOSAC_OP_NEGATE, x), *pos = cvt_const_i32(c, r, ios, iota);
    tosac_value *vals[256], *idxs[256];
    for (int64_t t = 0; t < k; t++) {
        tosac_value *m = cvt_new(c, TOSAC_DTYPE_FP32, r, ks), *am = cvt_new(c, TOSAC_DTYPE_INT32, r - 1, as);
        tosac_node *n1 = cvt_op(c, TOSAC_OP_REDUCE_MAX, 1, &w, m), *n2 = cvt_op(c, TOSAC_OP_ARGMAX, 1, &w, am);
        if (!n1 || !n2 || tosac_node_set_int(n1, TOSAC_ATTR_REDUCE_MAX_axis, axis) != TOSAC_OK ||
            tosac_node_set_int(n2, TOSAC_ATTR_ARGMAX_axis, axis) != TOSAC_OK ||
            tosac_node_set_int(n2, TOSAC_ATTR_ARGMAX_nan_mode, 1) != TOSAC_OK)
            return cvt_nomem(c);
        vals[t] = largest ? m : cvt_unary(c, TOSAC_OP_NEGATE, m);
        idxs[t] = cvt_mk_reshape(c, am, r, ks);
        if (t + 1 < k) {
            tosac_value *hit = cvt_binary(c, TOSAC_OP_EQUAL, pos, idxs[t], TOSAC_DTYPE_BOOL);
            w = cvt_select(c, hit, cvt_const_scalar(c, TOSAC_DTYPE_FP32, r, -INFINITY), w, &s);
            if (!w) return s != TOSAC_OK ? s : cvt_nomem(c);
        }
        if (!vals[t] || !idxs[t]) return cvt_nomem(c);
    }
    tosac_value *outs[2] = {vals[0], idxs[0]};
    if (k > 1) {
        int64_t os[TOSAC_MAX_RANK];
        memcpy(os, ks, sizeof os);
        os[axis] = k;
        for (int o = 0; o < 2; o++) {
            outs[o] = cvt_new(c, o ? TOSAC_DTYPE_INT32 : TOSAC_DTYPE_FP32, r, os);
            tosac_node *nd = cvt_op(c, TOSAC_OP_CONCAT, (uint32_t)k, o ? idxs : vals, outs[o]);
            if (!nd || tosac_node_set_int(nd, TOSAC_ATTR_CONCAT_axis, axis) != TOSAC_OK) return cvt_nomem(c);
        }
    }
    if ((s = cvt_set_out(c, 0, outs[0])) != TOSAC_OK) return s;
    return cvt_set_out(c, 1, outs[1]);
}

/* ---- Einsum ----------------------------------------------------------------------------------- */

/* x re-indexed by an index map (map[k] = flat index in x of result element k): one GATHER over the
   flattened x; NULL on failure (reported). */
static tosac_value *gather_map(cvt_ctx *c, tosac_value *x, int rank, const int64_t *shape, const int64_t *map)
{
    int64_t n = cvt_numel(rank, shape), xn = cvt_numel(x->rank, x->shape);
    if (n == 0 || n > INT32_MAX || xn > INT32_MAX || x->dtype == TOSAC_DTYPE_BOOL) {
        cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "empty, too large or bool gather");
        return NULL;
    }
    int32_t *ib = tosac_arena_alloc(&c->arena, (size_t)n * 4 + 1);
    if (!ib) return NULL;
    for (int64_t k = 0; k < n; k++) ib[k] = (int32_t)map[k];
    int64_t vs[3] = {1, xn, 1}, is[2] = {1, n}, os[3] = {1, n, 1};
    tosac_value *in[2] = {NULL, NULL};
    in[0] = cvt_mk_reshape(c, x, 3, vs);
    in[1] = cvt_const_i32(c, 2, is, ib);
    tosac_value *g = cvt_new(c, x->dtype, 3, os);
    if (!cvt_op(c, TOSAC_OP_GATHER, 2, in, g)) return NULL;
    return cvt_mk_reshape(c, g, rank, shape);
}

/* One Einsum operand reduced to distinct subscripts that are still needed: the diagonal of
   repeated subscripts (an index map), then a REDUCE_SUM over those used nowhere else. sub is
   updated in place; NULL on failure (reported). */
static tosac_value *einsum_operand(cvt_ctx *c, tosac_value *x, char *sub, const char *needed)
{
    int r = x->rank;
    char u[TOSAC_MAX_RANK + 1] = {0};
    int nu = 0;
    int64_t ushape[TOSAC_MAX_RANK];
    for (int k = 0; k < r; k++) {
        char *p = strchr(u, sub[k]);
        if (!p) {
            ushape[nu] = x->shape[k];
            u[nu++] = sub[k];
        } else if (ushape[p - u] != x->shape[k]) {
            cvt_fail(c, TOSAC_ERR_FORMAT, "subscript '%c' has sizes %lld and %lld", sub[k], (long long)ushape[p - u],
                     (long long)x->shape[k]);
            return NULL;
        }
    }
    if (nu < r) { /* diagonal */
        int64_t n = cvt_numel(nu, ushape), st[TOSAC_MAX_RANK], idx[TOSAC_MAX_RANK] = {0};
        strides_of(r, x->shape, st);
        int64_t *map = tosac_arena_alloc(&c->arena, (size_t)n * 8 + 1);
        if (!map) return NULL;
        for (int64_t k = 0; k < n; k++) {
            int64_t f = 0;
            for (int d = 0; d < r; d++) f += idx[strchr(u, sub[d]) - u] * st[d];
            map[k] = f;
            for (int d = nu - 1; d >= 0; d--) {
                if (++idx[d] < ushape[d]) break;
                idx[d] = 0;
            }
        }
        if (!(x = gather_map(c, x, nu, ushape, map))) return NULL;
        memcpy(sub, u, (size_t)nu + 1);
        r = nu;
    }
    int64_t kshape[TOSAC_MAX_RANK];
    char kept[TOSAC_MAX_RANK + 1] = {0};
    int nk = 0;
    for (int k = 0; k < r && x; k++) {
        if (strchr(needed, sub[k])) {
            kshape[nk] = x->shape[k];
            kept[nk++] = sub[k];
        } else {
            x = cvt_reduce_axis(c, TOSAC_OP_REDUCE_SUM, x, k);
        }
    }
    if (x && nk < r) x = cvt_mk_reshape(c, x, nk, kshape);
    memcpy(sub, kept, (size_t)nk + 1);
    return x;
}

/* Parses one term: letters and at most one "..." (expanded to the subscripts ell[E - e..E) for an
   operand with e broadcast dimensions, or all E of them in the output). */
static bool einsum_term(const char *p, const char *end, int rank, int E, const char *ell, char *out)
{
    int n = 0;
    bool dots = false;
    int letters = 0;
    for (const char *q = p; q < end; q++)
        letters += (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z');
    for (const char *q = p; q < end; q++) {
        if (*q == ' ') continue;
        if (*q == '.') {
            if (dots || end - q < 3 || q[1] != '.' || q[2] != '.') return false;
            dots = true;
            q += 2;
            int e = rank < 0 ? E : rank - letters;
            if (e < 0 || e > E) return false;
            for (int k = E - e; k < E; k++) {
                if (n >= TOSAC_MAX_RANK) return false;
                out[n++] = ell[k];
            }
        } else if ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z')) {
            if (n >= TOSAC_MAX_RANK) return false;
            out[n++] = *q;
        } else {
            return false;
        }
    }
    out[n] = 0;
    return rank < 0 || n == rank;
}

/* Einsum of one or two operands: repeated subscripts (diagonals) and subscripts summed in one
   operand only are handled per operand, then a TRANSPOSE (one operand) or a batched MATMUL over
   [batch, m, k] x [batch, k, n]. Implicit outputs and "..." follow numpy; operand sizes must agree
   (no broadcasting). */
tosac_status cvt_einsum(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    const char *eq = cvt_attr_s(c, "equation", NULL);
    if (!eq) return cvt_fail(c, TOSAC_ERR_FORMAT, "no equation");
    size_t nin = c->node->n_inputs;
    if (nin < 1 || nin > 2) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "%zu operands are not supported (one or two)", nin);
    tosac_value *ops[2] = {NULL, NULL};
    for (size_t k = 0; k < nin; k++) {
        if (!(ops[k] = cvt_in_tensor(c, k, &s))) return s;
        if (ops[k]->dtype != TOSAC_DTYPE_FP32) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "only FLOAT operands are supported");
    }
    const char *arrow = strstr(eq, "->"), *stop = arrow ? arrow : eq + strlen(eq);
    const char *comma = memchr(eq, ',', (size_t)(stop - eq));
    if ((nin == 2) != (comma != NULL) || (comma && memchr(comma + 1, ',', (size_t)(stop - comma - 1))))
        return cvt_fail(c, TOSAC_ERR_FORMAT, "equation '%s' does not match %zu operands", eq, nin);
    const char *tb[2] = {eq, comma ? comma + 1 : NULL}, *te[2] = {comma ? comma : stop, stop};
    /* broadcast dimensions: E = the most any operand has; they get the subscripts '0'.. */
    static const char ell[] = "0123456789";
    int E = 0;
    for (size_t k = 0; k < nin; k++) {
        int letters = 0;
        for (const char *q = tb[k]; q < te[k]; q++) letters += (*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z');
        if (memchr(tb[k], '.', (size_t)(te[k] - tb[k])) && ops[k]->rank - letters > E) E = ops[k]->rank - letters;
    }
    char sub[2][TOSAC_MAX_RANK + 1], out[TOSAC_MAX_RANK + 1];
    for (size_t k = 0; k < nin; k++)
        if (E > 10 || !einsum_term(tb[k], te[k], ops[k]->rank, E, ell, sub[k]))
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "equation '%s' is not supported or does not match the operand ranks", eq);
    int64_t dim[128];
    for (int k = 0; k < 128; k++) dim[k] = -1;
    int count[128] = {0};
    for (size_t t = 0; t < nin; t++)
        for (int k = 0; sub[t][k]; k++) {
            int ch = sub[t][k];
            if (dim[ch] >= 0 && dim[ch] != ops[t]->shape[k])
                return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "subscript '%c' sizes differ (broadcasting is not supported)", ch);
            dim[ch] = ops[t]->shape[k];
            count[ch]++;
        }
    if (arrow) {
        if (!einsum_term(arrow + 2, arrow + strlen(arrow), -1, E, ell, out))
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "equation '%s' is not supported", eq);
    } else { /* implicit: the broadcast dimensions, then the subscripts used once, alphabetically */
        int n = 0;
        for (int k = 0; k < E; k++) out[n++] = ell[k];
        for (int ch = 'A'; ch <= 'z' && n < TOSAC_MAX_RANK; ch++)
            if (count[ch] == 1 && ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'))) out[n++] = (char)ch;
        out[n] = 0;
    }
    for (int k = 0; out[k]; k++)
        if (dim[(int)out[k]] < 0 || strchr(out + k + 1, out[k]))
            return cvt_fail(c, TOSAC_ERR_FORMAT, "output subscript '%c' is repeated or not in the inputs", out[k]);
    /* per operand: what the other operand or the output still needs */
    for (size_t t = 0; t < nin; t++) {
        char needed[2 * TOSAC_MAX_RANK + 2];
        snprintf(needed, sizeof needed, "%s%s", out, nin == 2 ? sub[1 - t] : "");
        if (!(ops[t] = einsum_operand(c, ops[t], sub[t], needed))) return s != TOSAC_OK ? s : cvt_nomem(c);
    }
    int32_t perm[TOSAC_MAX_RANK];
    bool id = true;
    if (nin == 1) {
        tosac_value *y = ops[0];
        for (int k = 0; out[k]; k++) perm[k] = (int32_t)(strchr(sub[0], out[k]) - sub[0]), id &= perm[k] == k;
        y = id || y->rank == 0 ? cvt_unary(c, TOSAC_OP_IDENTITY, y) : cvt_mk_transpose(c, y, perm);
        return cvt_finish(c, y, s);
    }
    const char *A = sub[0], *B = sub[1], *O = out;
    tosac_value *a = ops[0], *b = ops[1];
    /* classify: batch (A,B,O), m (A,O), n (B,O), k (A,B) */
    char bt[TOSAC_MAX_RANK + 1] = {0}, mt[TOSAC_MAX_RANK + 1] = {0}, ntm[TOSAC_MAX_RANK + 1] = {0}, kt[TOSAC_MAX_RANK + 1] = {0};
    int nb = 0, nm = 0, nn = 0, nk = 0;
    for (int k = 0; A[k]; k++) {
        bool inb = strchr(B, A[k]) != NULL, ino = strchr(O, A[k]) != NULL;
        if (inb && ino) bt[nb++] = A[k];
        else if (ino) mt[nm++] = A[k];
        else kt[nk++] = A[k];
    }
    for (int k = 0; B[k]; k++)
        if (!strchr(A, B[k])) ntm[nn++] = B[k];
    int64_t Bt = 1, Mt = 1, Nt = 1, Kt = 1;
    for (int k = 0; k < nb; k++) Bt *= dim[(int)bt[k]];
    for (int k = 0; k < nm; k++) Mt *= dim[(int)mt[k]];
    for (int k = 0; k < nn; k++) Nt *= dim[(int)ntm[k]];
    for (int k = 0; k < nk; k++) Kt *= dim[(int)kt[k]];
    /* A -> [batch, m, k]; B -> [batch, k, n] */
    char pa[TOSAC_MAX_RANK + 1], pb[TOSAC_MAX_RANK + 1], po[TOSAC_MAX_RANK + 1];
    snprintf(pa, sizeof pa, "%s%s%s", bt, mt, kt);
    snprintf(pb, sizeof pb, "%s%s%s", bt, kt, ntm);
    snprintf(po, sizeof po, "%s%s%s", bt, mt, ntm);
    for (int k = 0; pa[k]; k++) perm[k] = (int32_t)(strchr(A, pa[k]) - A), id &= perm[k] == k;
    if (!id && a->rank) a = cvt_mk_transpose(c, a, perm);
    id = true;
    for (int k = 0; pb[k]; k++) perm[k] = (int32_t)(strchr(B, pb[k]) - B), id &= perm[k] == k;
    if (!id && b->rank) b = cvt_mk_transpose(c, b, perm);
    int64_t sa[3] = {Bt, Mt, Kt}, sb[3] = {Bt, Kt, Nt}, so[3] = {Bt, Mt, Nt};
    a = cvt_mk_reshape(c, a, 3, sa);
    b = cvt_mk_reshape(c, b, 3, sb);
    tosac_value *y = cvt_new(c, TOSAC_DTYPE_FP32, 3, so);
    tosac_value *in[4] = {a, b, NULL, NULL};
    in[2] = cvt_zp(c, TOSAC_DTYPE_FP32);
    in[3] = cvt_zp(c, TOSAC_DTYPE_FP32);
    if (!cvt_op(c, TOSAC_OP_MATMUL, 4, in, y)) return cvt_nomem(c);
    int ro = (int)strlen(po);
    int64_t ps[TOSAC_MAX_RANK];
    for (int k = 0; k < ro; k++) ps[k] = dim[(int)po[k]];
    y = cvt_mk_reshape(c, y, ro, ps);
    id = true;
    for (int k = 0; O[k]; k++) perm[k] = (int32_t)(strchr(po, O[k]) - po), id &= perm[k] == k;
    if (!id) y = cvt_mk_transpose(c, y, perm);
    return cvt_set_out(c, 0, y);
}

/* ---- Resize / Upsample ------------------------------------------------------------------------ */

static const int32_t k_nhwc[4] = {0, 2, 3, 1}, k_nchw[4] = {0, 3, 1, 2};

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Rational n/d for a float scale (d <= 64), false when none is exact enough. */
static bool rational(double s, int64_t *n, int64_t *d)
{
    for (int64_t q = 1; q <= 64; q++) {
        double p = s * (double)q;
        double rp = floor(p + 0.5);
        if (rp >= 1 && fabs(p - rp) < 1e-5 * (double)q) {
            *n = (int64_t)rp;
            *d = q;
            return true;
        }
    }
    return false;
}

/* What a Resize asks for: per-axis output sizes and scales, and the interpolation attributes. */
typedef struct resize_cfg {
    int rank;
    int64_t out[TOSAC_MAX_RANK];
    double scale[TOSAC_MAX_RANK];
    bool from_sizes;      /* scales derived from sizes (double), else given (float32) */
    const char *mode;     /* nearest, linear (bilinear), cubic */
    const char *ctm;      /* coordinate_transformation_mode */
    const char *nearest_mode;
    double cubic_a;
    bool exclude_outside;
    const float *roi;     /* tf_crop_and_resize: starts then ends, 2 * rank entries */
    float extrapolation;
} resize_cfg;

/* The TOSA RESIZE form of cf when it has one (rank 4, N and C kept, nearest or bilinear, scales
   that are small rationals with offsets and borders in RESIZE's limits): *ok false otherwise. */
static tosac_status resize_tosa(cvt_ctx *c, tosac_value *x, const resize_cfg *cf, bool *ok)
{
    *ok = false;
    const char *ctm = cf->ctm, *mode = cf->mode, *nearest_mode = cf->nearest_mode;
    bool nearest = !strcmp(mode, "nearest");
    if (x->rank != 4 || (!nearest && strcmp(mode, "linear") && strcmp(mode, "bilinear"))) return TOSAC_OK;
    if (cf->out[0] != x->shape[0] || cf->out[1] != x->shape[1]) return TOSAC_OK;
    int64_t sc[4], off[2], border[2];
    for (int j = 0; j < 2; j++) {
        int64_t in = x->shape[2 + j], o = cf->out[2 + j], n, d;
        if (cf->from_sizes || !strcmp(ctm, "align_corners")) {
            n = o, d = in;
        } else if (!rational(cf->scale[2 + j], &n, &d)) {
            return TOSAC_OK;
        }
        int64_t of = 0;
        if (o == 1 && (!strcmp(ctm, "align_corners") || !strcmp(ctm, "pytorch_half_pixel"))) {
            n = 1, d = 1; /* the single output samples 0 */
        } else if (!strcmp(ctm, "asymmetric")) {
            of = 0;
        } else if (!strcmp(ctm, "align_corners")) {
            if (cf->from_sizes) {
                n = o - 1;
                d = in > 1 ? in - 1 : 1;
            } else { /* ONNX uses the unfloored in*scale: x = o (in-1) / (in*scale - 1) */
                int64_t p, q;
                if (!rational((double)in * cf->scale[2 + j] - 1.0, &p, &q)) return TOSAC_OK;
                n = p;
                d = (in > 1 ? in - 1 : 1) * q;
            }
        } else if (!strcmp(ctm, "half_pixel") || (!strcmp(ctm, "pytorch_half_pixel") && o > 1)) {
            n *= 2, d *= 2, of = d / 2 - n / 2; /* (o + 1/2) d/n - 1/2 */
        } else if (!strcmp(ctm, "tf_half_pixel_for_nn") && nearest) {
            n *= 2, d *= 2, of = d / 2;
        } else {
            return TOSAC_OK;
        }
        int64_t g = gcd64(gcd64(n, d), of < 0 ? -of : of);
        if (g > 1) n /= g, d /= g, of /= g;
        if (nearest) {
            n *= 2, d *= 2, of *= 2;
            if (!strcmp(nearest_mode, "floor")) of -= n / 2;
            else if (!strcmp(nearest_mode, "ceil")) of += n / 2 - 1;
            else if (!strcmp(nearest_mode, "round_prefer_floor")) of -= 1;
            else if (strcmp(nearest_mode, "round_prefer_ceil")) return TOSAC_OK;
        }
        int64_t b = (o - 1) * d - (in - 1) * n + of;
        if (n > 2048 || d >= 16 * n || of < -n || of >= 16 * n || b < -16 * n || b >= n) return TOSAC_OK;
        sc[2 * j] = n, sc[2 * j + 1] = d, off[j] = of, border[j] = b;
    }
    *ok = true;
    tosac_value *xt = cvt_mk_transpose(c, x, k_nhwc);
    int64_t os[4] = {cf->out[0], cf->out[2], cf->out[3], cf->out[1]};
    tosac_value *y = cvt_new(c, TOSAC_DTYPE_FP32, 4, os);
    tosac_value *in[4] = {xt, NULL, NULL, NULL};
    in[1] = cvt_shape_const(c, sc, 4);
    in[2] = cvt_shape_const(c, off, 2);
    in[3] = cvt_shape_const(c, border, 2);
    tosac_node *nd = cvt_op(c, TOSAC_OP_RESIZE, 4, in, y);
    if (!nd || tosac_node_set_int(nd, TOSAC_ATTR_RESIZE_mode, nearest ? TOSAC_RESIZE_NEAREST : TOSAC_RESIZE_BILINEAR))
        return cvt_nomem(c);
    return cvt_set_out(c, 0, cvt_mk_transpose(c, y, k_nchw));
}

/* Interpolation weights of one axis, w[o * in + i] (ONNX's reference Resize: the n = 2 (nearest,
   linear) or 4 (cubic) nearest samples of the edge-padded axis around the source coordinate);
   oob[o] marks tf_crop_and_resize outputs outside the input (their row stays zero). False for
   an unknown coordinate_transformation_mode. */
static bool resize_weights(const resize_cfg *cf, int axis, int64_t in, double *w, bool *oob)
{
    int64_t out = cf->out[axis];
    double scale = cf->scale[axis];
    /* the reference computes in*scale in float32 when the scales are given */
    double ow = cf->from_sizes ? scale * (double)in : (double)((float)scale * (float)in);
    double owm1 = cf->from_sizes ? ow - 1.0 : (double)((float)ow - 1.0f);
    bool cubic = !strcmp(cf->mode, "cubic"), nearest = !strcmp(cf->mode, "nearest");
    int n = cubic ? 4 : 2, pad = (n + 1) / 2;
    int64_t limit = in + 2 * pad;
    memset(w, 0, (size_t)(out * in) * sizeof *w);
    for (int64_t o = 0; o < out; o++) {
        double x, od = (double)o;
        const char *m = cf->ctm;
        oob[o] = false;
        if (!strcmp(m, "align_corners")) x = ow == 1.0 ? 0.0 : od * (double)(in - 1) / owm1;
        else if (!strcmp(m, "asymmetric")) x = od / scale;
        else if (!strcmp(m, "half_pixel")) x = (od + 0.5) / scale - 0.5;
        else if (!strcmp(m, "pytorch_half_pixel")) x = ow == 1.0 ? -0.5 : (od + 0.5) / scale - 0.5;
        else if (!strcmp(m, "tf_half_pixel_for_nn")) x = (od + 0.5) / scale;
        else if (!strcmp(m, "tf_crop_and_resize") && cf->roi) {
            double r0 = cf->roi[axis], r1 = cf->roi[cf->rank + axis];
            x = ow == 1.0 ? (r1 - r0) * (double)(in - 1) / 2 : od * (r1 - r0) * (double)(in - 1) / owm1;
            x += r0 * (double)(in - 1);
            if (x < 0 || x > (double)(in - 1)) {
                oob[o] = true;
                continue;
            }
        } else {
            return false;
        }
        double xi = floor(x), ratio = x == xi ? 1.0 : x - xi, co[4];
        if (cubic) {
            double A = cf->cubic_a, r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
            co[0] = ((A * r1 - 5 * A) * r1 + 8 * A) * r1 - 4 * A;
            co[1] = ((A + 2) * ratio - (A + 3)) * ratio * ratio + 1;
            co[2] = ((A + 2) * q - (A + 3)) * q * q + 1;
            co[3] = ((A * q1 - 5 * A) * q1 + 8 * A) * q1 - 4 * A;
        } else if (!nearest) {
            co[0] = 1 - ratio, co[1] = ratio;
        } else {
            const char *nm = cf->nearest_mode;
            bool hi = x == xi                              ? true
                      : !strcmp(nm, "round_prefer_floor") ? ratio > 0.5
                      : !strcmp(nm, "round_prefer_ceil")  ? ratio >= 0.5
                                                          : strcmp(nm, "floor") != 0;
            co[0] = hi ? 0.0 : 1.0, co[1] = hi ? 1.0 : 0.0;
        }
        /* the n indices of [0, limit) nearest to x + pad, ties to the lower one, ascending */
        double xp = x + pad;
        int64_t pick[4];
        int np = 0;
        int64_t c0 = (int64_t)floor(xp) - n, cand[3][2] = {{c0, c0 + 2 * n}, {0, n - 1}, {limit - n, limit - 1}};
        for (int t = 0; t < n; t++) {
            int64_t best = -1;
            double bd = 0;
            for (int g = 0; g < 3; g++)
                for (int64_t p = cand[g][0]; p <= cand[g][1]; p++) {
                    if (p < 0 || p >= limit) continue;
                    bool used = false;
                    for (int u = 0; u < np; u++) used |= pick[u] == p;
                    double dd = fabs(xp - (double)p);
                    if (!used && (best < 0 || dd < bd || (dd == bd && p < best))) best = p, bd = dd;
                }
            pick[np++] = best;
        }
        for (int a = 0; a < np; a++) /* ascending */
            for (int b = a + 1; b < np; b++)
                if (pick[b] < pick[a]) {
                    int64_t t = pick[a];
                    pick[a] = pick[b];
                    pick[b] = t;
                }
        double sum = 0;
        for (int t = 0; t < n; t++) {
            int64_t idx = pick[t] - pad;
            if (cf->exclude_outside && (idx < 0 || idx >= in)) co[t] = 0;
            sum += co[t];
        }
        for (int t = 0; t < n; t++) {
            int64_t idx = pick[t] - pad;
            idx = idx < 0 ? 0 : idx >= in ? in - 1 : idx;
            w[o * in + idx] += cf->exclude_outside && sum != 0 ? co[t] / sum : co[t];
        }
    }
    return true;
}

/* Resize as a separable linear map: per axis that changes, the data with that axis last times the
   host-computed weight matrix (one MATMUL); tf_crop_and_resize adds extrapolation_value where any
   axis falls outside the crop. Any rank, mode and coordinate mapping of the reference. */
static tosac_status resize_matrix(cvt_ctx *c, tosac_value *x, const resize_cfg *cf)
{
    int r = x->rank;
    int64_t total_oob = 0;
    bool *oobs[TOSAC_MAX_RANK] = {NULL};
    for (int a = 0; a < r && x; a++) {
        int64_t in = x->shape[a], out = cf->out[a];
        /* the weights are a dense in x out constant: at most 1M entries (4 MB), which covers 1024 -> 1024 */
        if (out > (INT64_C(1) << 20) / in)
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "axis %d (%lld -> %lld) is too large to resize as a matrix", a,
                            (long long)in, (long long)out);
        double *w = tosac_arena_alloc(&c->arena, (size_t)(in * out) * sizeof *w + 1);
        bool *oob = tosac_arena_alloc(&c->arena, (size_t)out + 1);
        if (!w || !oob) return cvt_nomem(c);
        if (!resize_weights(cf, a, in, w, oob))
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "coordinate_transformation_mode '%s' is not supported", cf->ctm);
        bool identity = in == out;
        for (int64_t o = 0; o < out; o++) {
            total_oob += oob[o];
            for (int64_t i = 0; i < in && identity; i++) identity = w[o * in + i] == (o == i ? 1.0 : 0.0);
        }
        oobs[a] = oob;
        if (identity) continue;
        /* axis a last: [rest, in] x [in, out] */
        int32_t perm[TOSAC_MAX_RANK], inv[TOSAC_MAX_RANK];
        for (int k = 0, j = 0; k < r; k++)
            if (k != a) perm[j++] = k;
        perm[r - 1] = a;
        for (int k = 0; k < r; k++) inv[perm[k]] = k;
        tosac_value *t = a == r - 1 ? x : cvt_mk_transpose(c, x, perm);
        if (!t) return cvt_nomem(c);
        int64_t rest = cvt_numel(r, x->shape) / in, s3[3] = {1, rest, in}, ws[3] = {1, in, out}, o3[3] = {1, rest, out};
        float *wt = tosac_arena_alloc(&c->arena, (size_t)(in * out) * 4 + 1);
        if (!wt) return cvt_nomem(c);
        for (int64_t o = 0; o < out; o++)
            for (int64_t i = 0; i < in; i++) wt[i * out + o] = (float)w[o * in + i];
        tosac_value *y = cvt_new(c, TOSAC_DTYPE_FP32, 3, o3);
        tosac_value *in4[4] = {NULL, NULL, NULL, NULL};
        in4[0] = cvt_mk_reshape(c, t, 3, s3);
        in4[1] = cvt_const_f32(c, 3, ws, wt);
        in4[2] = cvt_zp(c, TOSAC_DTYPE_FP32);
        in4[3] = cvt_zp(c, TOSAC_DTYPE_FP32);
        if (!cvt_op(c, TOSAC_OP_MATMUL, 4, in4, y)) return cvt_nomem(c);
        int64_t ts[TOSAC_MAX_RANK];
        for (int k = 0; k < r; k++) ts[k] = t->shape[k];
        ts[r - 1] = out;
        y = cvt_mk_reshape(c, y, r, ts);
        x = a == r - 1 ? y : cvt_mk_transpose(c, y, inv);
    }
    if (x && total_oob) {
        int64_t n = cvt_numel(r, cf->out), idx[TOSAC_MAX_RANK] = {0};
        float *bias = tosac_arena_alloc(&c->arena, (size_t)n * 4 + 1);
        if (!bias) return cvt_nomem(c);
        for (int64_t k = 0; k < n; k++) {
            bool any = false;
            for (int d = 0; d < r; d++) any |= oobs[d][idx[d]];
            bias[k] = any ? cf->extrapolation : 0.0f;
            for (int d = r - 1; d >= 0; d--) {
                if (++idx[d] < cf->out[d]) break;
                idx[d] = 0;
            }
        }
        x = cvt_binary(c, TOSAC_OP_ADD, x, cvt_const_f32(c, r, cf->out, bias), TOSAC_DTYPE_UNKNOWN);
    }
    return x ? cvt_set_out(c, 0, x) : cvt_nomem(c);
}

/* Output sizes from scales (floor(in * scale)) or sizes, then TOSA RESIZE where it expresses the
   mapping exactly, else the matrix form. */
static tosac_status resize_common(cvt_ctx *c, tosac_value *x, resize_cfg *cf, const double *scales, const int64_t *sizes)
{
    if (x->dtype != TOSAC_DTYPE_FP32) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "only FLOAT data is supported");
    if (strcmp(cf->mode, "nearest") && strcmp(cf->mode, "linear") && strcmp(cf->mode, "bilinear") && strcmp(cf->mode, "cubic"))
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "mode '%s' is not supported", cf->mode);
    cf->rank = x->rank;
    cf->from_sizes = sizes != NULL;
    for (int k = 0; k < x->rank; k++) {
        if (sizes) {
            cf->out[k] = sizes[k];
            cf->scale[k] = x->shape[k] ? (double)sizes[k] / (double)x->shape[k] : 1.0;
        } else {
            cf->scale[k] = scales[k];
            cf->out[k] = (int64_t)floor((double)x->shape[k] * scales[k] + 1e-9);
        }
        if (cf->out[k] < 1 || cf->scale[k] <= 0)
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "zero-size results are not supported");
    }
    if (cvt_numel(x->rank, cf->out) > CVT_MAX_ELEMS) {
        c->oversize = true;
        return cvt_nomem(c);
    }
    bool ok = false;
    tosac_status s = resize_tosa(c, x, cf, &ok);
    if (s != TOSAC_OK || ok) return s;
    return resize_matrix(c, x, cf);
}

static tosac_status float_list(cvt_ctx *c, size_t i, double *out, int want)
{
    cvt_val *v = cvt_in(c, i);
    if (!v->is_const || !v->f)
        return cvt_need_const(c, v, "a constant float tensor");
    if (v->numel != want) return cvt_fail(c, TOSAC_ERR_FORMAT, "input '%s' has %lld entries, not %d", v->name, (long long)v->numel, want);
    for (int k = 0; out && k < want; k++) out[k] = v->f[k];
    return TOSAC_OK;
}

static resize_cfg resize_defaults(const char *mode, const char *ctm, const char *nearest_mode)
{
    resize_cfg cf;
    memset(&cf, 0, sizeof cf);
    cf.mode = mode;
    cf.ctm = ctm;
    cf.nearest_mode = nearest_mode;
    cf.cubic_a = -0.75;
    return cf;
}

tosac_status cvt_resize(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    int r = x->rank;
    if (r < 1) return cvt_fail(c, TOSAC_ERR_FORMAT, "input must have rank >= 1");
    const char *mode = cvt_attr_s(c, "mode", "nearest");
    double sc[TOSAC_MAX_RANK];
    if (c->opset < 11) {
        resize_cfg cf = resize_defaults(mode, "asymmetric", "floor");
        if (!cvt_in(c, 1)) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "scales input missing");
        if ((s = float_list(c, 1, sc, r)) != TOSAC_OK) return s;
        return resize_common(c, x, &cf, sc, NULL);
    }
    if (cvt_attr_i(c, "antialias", 0)) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "antialias is not supported");
    size_t nax;
    if (cvt_attr_ints(c, "axes", &nax)) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "the axes attribute is not supported");
    if (strcmp(cvt_attr_s(c, "keep_aspect_ratio_policy", "stretch"), "stretch"))
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "keep_aspect_ratio_policy is not supported");
    const char *ctm = cvt_attr_s(c, "coordinate_transformation_mode", "half_pixel");
    resize_cfg cf = resize_defaults(mode, ctm, cvt_attr_s(c, "nearest_mode", "round_prefer_floor"));
    cf.cubic_a = cvt_attr_f(c, "cubic_coeff_a", -0.75f);
    cf.exclude_outside = cvt_attr_i(c, "exclude_outside", 0) != 0;
    cf.extrapolation = cvt_attr_f(c, "extrapolation_value", 0.0f);
    if (!strcmp(cf.ctm, "tf_crop_and_resize")) {
        cvt_val *rv = cvt_in(c, 1);
        if (!rv) return cvt_fail(c, TOSAC_ERR_FORMAT, "tf_crop_and_resize needs the roi input");
        if ((s = float_list(c, 1, NULL, 2 * r)) != TOSAC_OK) return s;
        cf.roi = rv->f;
    }
    cvt_val *sv = cvt_in(c, 2), *zv = cvt_in(c, 3);
    if (sv && sv->numel == 0) sv = NULL;
    if (zv && zv->numel == 0) zv = NULL;
    if (zv) {
        const int64_t *sz;
        int64_t n;
        if ((s = cvt_const_ints(c, 3, &sz, &n)) != TOSAC_OK) return s;
        if (n != r) return cvt_fail(c, TOSAC_ERR_FORMAT, "sizes has %lld entries", (long long)n);
        return resize_common(c, x, &cf, NULL, sz);
    }
    if (!sv) return cvt_fail(c, TOSAC_ERR_FORMAT, "neither scales nor sizes given");
    if ((s = float_list(c, 2, sc, r)) != TOSAC_OK) return s;
    return resize_common(c, x, &cf, sc, NULL);
}

tosac_status cvt_upsample(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    int r = x->rank;
    double sc[TOSAC_MAX_RANK];
    resize_cfg cf = resize_defaults(cvt_attr_s(c, "mode", "nearest"), "asymmetric", "floor");
    if (c->opset < 9) {
        const tosac_onnx_attr *a = tosac_onnx_find_attr(c->node, "scales");
        if (!a || a->type != TOSAC_ONNX_ATTR_FLOATS || (int)a->n != r)
            return cvt_fail(c, TOSAC_ERR_FORMAT, "scales attribute must have %d floats", r);
        for (int k = 0; k < r; k++) sc[k] = a->floats[k];
    } else {
        if (!cvt_in(c, 1)) return cvt_fail(c, TOSAC_ERR_FORMAT, "scales input missing");
        if ((s = float_list(c, 1, sc, r)) != TOSAC_OK) return s;
    }
    return resize_common(c, x, &cf, sc, NULL);
}

/* ---- ConvTranspose (1-D, 2-D, any group) ------------------------------------------------------ */

/* One TRANSPOSE_CONV2D (NHWC) of x (Cg channels) with the weights of input channels [i0, i0 + Cg)
   of the ONNX kernel wf [C, Mg, K0, K1] (one group: its Mg output channels); NULL on failure. */
static tosac_value *tconv_op(cvt_ctx *c, tosac_value *x, const float *wf, int64_t Mg, int64_t Cg, int64_t i0,
                             const int64_t *K, tosac_value *bias, const int64_t *oshape, const int32_t *opad,
                             const int32_t *str)
{
    float *wt = tosac_arena_alloc(&c->arena, (size_t)(Cg * Mg * K[0] * K[1]) * 4 + 1);
    if (!wt) return NULL;
    for (int64_t o = 0; o < Mg; o++)
        for (int64_t i = 0; i < Cg; i++)
            for (int64_t h = 0; h < K[0]; h++)
                for (int64_t w = 0; w < K[1]; w++)
                    wt[((o * K[0] + h) * K[1] + w) * Cg + i] = wf[(((i0 + i) * Mg + o) * K[0] + h) * K[1] + w];
    int64_t wshape[4] = {Mg, K[0], K[1], Cg};
    tosac_value *y = cvt_new(c, TOSAC_DTYPE_FP32, 4, oshape);
    tosac_value *in[5] = {x, cvt_const_f32(c, 4, wshape, wt), bias, cvt_zp(c, TOSAC_DTYPE_FP32), cvt_zp(c, TOSAC_DTYPE_FP32)};
    tosac_node *nd = x && y && in[1] && in[3] && in[4] ? cvt_op(c, TOSAC_OP_TRANSPOSE_CONV2D, 5, in, y) : NULL;
    if (!nd || tosac_node_set_ints(nd, TOSAC_ATTR_TRANSPOSE_CONV2D_out_pad, opad, 4) ||
        tosac_node_set_ints(nd, TOSAC_ATTR_TRANSPOSE_CONV2D_stride, str, 2) ||
        tosac_node_set_int(nd, TOSAC_ATTR_TRANSPOSE_CONV2D_local_bound, 0) ||
        tosac_node_set_int(nd, TOSAC_ATTR_TRANSPOSE_CONV2D_acc_type, TOSAC_DTYPE_FP32))
        return NULL;
    return y;
}

tosac_status cvt_conv_transpose(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *xv = cvt_in_req(c, 0, &s), *wv = xv ? cvt_in_req(c, 1, &s) : NULL;
    if (!wv) return s;
    bool one_d = xv->rank == 3 && wv->rank == 3;
    if (!(xv->rank == 4 && wv->rank == 4) && !one_d)
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "only 1-D and 2-D transposed convolution is supported");
    if (xv->dt != TOSAC_DTYPE_FP32) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "only FLOAT data is supported");
    if (!wv->is_const || !wv->f) return cvt_need_const(c, wv, "a constant float tensor");
    int64_t G = cvt_attr_i(c, "group", 1);
    int ns = one_d ? 1 : 2;
    int64_t C = xv->shape[1], Mg = wv->shape[1];
    if (G < 1 || C % G) return cvt_fail(c, TOSAC_ERR_FORMAT, "group %lld does not divide %lld input channels", (long long)G, (long long)C);
    int64_t M = G * Mg, Cg = C / G;
    int64_t K[2] = {one_d ? 1 : wv->shape[2], wv->shape[one_d ? 2 : 3]};
    int64_t IN[2] = {one_d ? 1 : xv->shape[2], xv->shape[one_d ? 2 : 3]};
    if (wv->shape[0] != C) return cvt_fail(c, TOSAC_ERR_FORMAT, "weight channels differ from input channels");
    int64_t st[2] = {1, 1}, op[2] = {0, 0}, pb[2] = {0, 0}, pe[2] = {0, 0};
    size_t n;
    const int64_t *v;
    if ((v = cvt_attr_ints(c, "kernel_shape", &n)) && ((int)n != ns || v[n - 1] != K[1] || (ns == 2 && v[0] != K[0])))
        return cvt_fail(c, TOSAC_ERR_FORMAT, "kernel_shape disagrees with W");
    /* a dilated kernel is the kernel with d - 1 zeros between its taps */
    int64_t dil[2] = {1, 1};
    const float *wf = wv->f;
    if ((v = cvt_attr_ints(c, "dilations", &n))) {
        if ((int)n != ns) return cvt_fail(c, TOSAC_ERR_FORMAT, "dilations has %zu entries", n);
        for (int k = 0; k < ns; k++) dil[2 - ns + k] = v[k];
        if (dil[0] < 1 || dil[1] < 1 || dil[0] > 64 || dil[1] > 64)
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "dilations %lld, %lld are not supported", (long long)dil[0], (long long)dil[1]);
    }
    if (dil[0] > 1 || dil[1] > 1) {
        int64_t DK[2] = {(K[0] - 1) * dil[0] + 1, (K[1] - 1) * dil[1] + 1};
        float *d = tosac_arena_alloc(&c->arena, (size_t)(C * Mg * DK[0] * DK[1]) * 4 + 1);
        if (!d) return cvt_nomem(c);
        memset(d, 0, (size_t)(C * Mg * DK[0] * DK[1]) * 4);
        for (int64_t q = 0; q < C * Mg; q++)
            for (int64_t h = 0; h < K[0]; h++)
                for (int64_t w = 0; w < K[1]; w++)
                    d[(q * DK[0] + h * dil[0]) * DK[1] + w * dil[1]] = wf[(q * K[0] + h) * K[1] + w];
        wf = d;
        K[0] = DK[0], K[1] = DK[1];
    }
    if ((v = cvt_attr_ints(c, "strides", &n))) {
        if ((int)n != ns) return cvt_fail(c, TOSAC_ERR_FORMAT, "strides has %zu entries", n);
        for (int k = 0; k < ns; k++) st[2 - ns + k] = v[k];
    }
    if ((v = cvt_attr_ints(c, "output_padding", &n))) {
        if ((int)n != ns) return cvt_fail(c, TOSAC_ERR_FORMAT, "output_padding has %zu entries", n);
        for (int k = 0; k < ns; k++) op[2 - ns + k] = v[k];
    }
    if ((v = cvt_attr_ints(c, "pads", &n))) {
        if ((int)n != 2 * ns) return cvt_fail(c, TOSAC_ERR_FORMAT, "pads has %zu entries", n);
        for (int k = 0; k < ns; k++) pb[2 - ns + k] = v[k], pe[2 - ns + k] = v[ns + k];
    }
    for (int k = 0; k < 2; k++)
        if (st[k] < 1 || op[k] < 0 || pb[k] < 0 || pe[k] < 0) return cvt_fail(c, TOSAC_ERR_FORMAT, "bad strides, pads or output_padding");
    const char *ap = cvt_attr_s(c, "auto_pad", "NOTSET");
    const int64_t *os = cvt_attr_ints(c, "output_shape", &n);
    if (os && (int)n != ns && (int)n != ns + 2) return cvt_fail(c, TOSAC_ERR_FORMAT, "output_shape has %zu entries", n);
    bool same = !strcmp(ap, "SAME_UPPER") || !strcmp(ap, "SAME_LOWER");
    if (!same && strcmp(ap, "NOTSET") && strcmp(ap, "VALID")) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "auto_pad %s is not supported", ap);
    if (os || same) {
        for (int k = 0; k < 2; k++) {
            int64_t want = IN[k] * st[k];
            if (os) want = (k < 2 - ns) ? 1 : os[n - (size_t)ns + (size_t)(k - (2 - ns))];
            int64_t total = st[k] * (IN[k] - 1) + op[k] + K[k] - want;
            int64_t h = total >= 0 ? total / 2 : -((1 - total) / 2); /* floor(total / 2) */
            if (!strcmp(ap, "SAME_UPPER")) pb[k] = h, pe[k] = total - h;
            else pb[k] = total - h, pe[k] = h;
        }
    }
    /* TOSA's out_pad must exceed -K: larger pads are cropped with a SLICE of the result */
    int64_t OH[2], full[2], crop[2];
    int32_t opad[4], str[2] = {(int32_t)st[0], (int32_t)st[1]};
    for (int k = 0; k < 2; k++) {
        OH[k] = st[k] * (IN[k] - 1) + op[k] + K[k] - pb[k] - pe[k];
        if (OH[k] < 1) return cvt_fail(c, TOSAC_ERR_FORMAT, "pads of %lld/%lld leave no output", (long long)pb[k], (long long)pe[k]);
        int64_t b0 = pb[k] < K[k] - 1 ? pb[k] : K[k] - 1, e0 = pe[k] < op[k] + K[k] - 1 ? pe[k] : op[k] + K[k] - 1;
        crop[k] = pb[k] - b0;
        full[k] = OH[k] + crop[k] + (pe[k] - e0);
        opad[2 * k] = (int32_t)-b0;
        opad[2 * k + 1] = (int32_t)(op[k] - e0);
    }
    cvt_val *bv = cvt_in(c, 2);
    if (bv && bv->numel != M) return cvt_fail(c, TOSAC_ERR_FORMAT, "bias has %lld entries", (long long)bv->numel);
    tosac_value *bias;
    if ((s = cvt_bias_f32(c, 2, M, &bias)) != TOSAC_OK) return s;
    tosac_value *x = cvt_tensor(c, xv, &s);
    if (!x) return s;
    int64_t N = xv->shape[0];
    if (one_d) {
        int64_t s4[4] = {N, C, 1, IN[1]};
        x = cvt_mk_reshape(c, x, 4, s4);
    }
    x = cvt_mk_transpose(c, x, k_nhwc);
    int64_t oshape[4] = {N, full[0], full[1], Mg};
    tosac_value *y = NULL;
    if (G == 1) {
        y = x ? tconv_op(c, x, wf, Mg, Cg, 0, K, bias, oshape, opad, str) : NULL;
    } else {
        /* one TRANSPOSE_CONV2D per group on its channel SLICE, CONCAT of the outputs */
        tosac_value **parts = tosac_arena_alloc(&c->arena, (size_t)G * sizeof *parts);
        if (!parts || !x) return cvt_nomem(c);
        for (int64_t g = 0; g < G; g++) {
            int64_t xs[4] = {0, 0, 0, g * Cg}, xz[4] = {N, IN[0], IN[1], Cg}, bs = g * Mg;
            tosac_value *bg = cvt_mk_slice(c, bias, &bs, &Mg);
            if (!bg || !(parts[g] = tconv_op(c, cvt_mk_slice(c, x, xs, xz), wf, Mg, Cg, g * Cg, K, bg, oshape, opad, str)))
                return cvt_nomem(c);
        }
        y = cvt_concat_axis(c, parts, G, 3);
    }
    if (y && (crop[0] || crop[1] || full[0] != OH[0] || full[1] != OH[1])) {
        int64_t ys[4] = {0, crop[0], crop[1], 0}, yz[4] = {N, OH[0], OH[1], M};
        y = cvt_mk_slice(c, y, ys, yz);
    }
    y = y ? cvt_mk_transpose(c, y, k_nchw) : NULL;
    if (y && one_d) {
        int64_t s3[3] = {N, M, OH[1]};
        y = cvt_mk_reshape(c, y, 3, s3);
    }
    return cvt_finish(c, y, s);
}
