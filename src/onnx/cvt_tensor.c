/* Converters for ONNX data-movement and shape ops: Constant, Shape, Reshape, Flatten, Transpose,
 * Squeeze, Unsqueeze, Concat, Gather, Slice. Constant integer data is folded at compile time. */
#include <string.h>

#include "onnx/convert.h"

/* Output 0 = input v with a new shape (folded for constants). */
static tosac_status reshape_to(cvt_ctx *c, cvt_val *v, int rank, const int64_t *shape)
{
    int64_t n = cvt_numel(rank, shape);
    if (n != v->numel) return cvt_fail(c, TOSAC_ERR_FORMAT, "reshape changes the element count (%lld to %lld)",
                                       (long long)v->numel, (long long)n);
    if (v->is_const && !v->v) return cvt_set_out_const(c, 0, v->dt, rank, shape, v->f, v->i);
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_tensor(c, v, &s);
    if (!x) return s;
    return cvt_set_out(c, 0, cvt_mk_reshape(c, x, rank, shape));
}

tosac_status cvt_constant(cvt_ctx *c)
{
    const tosac_onnx_attr *a = c->node->n_attrs ? &c->node->attrs[0] : NULL;
    if (!a) return cvt_fail(c, TOSAC_ERR_FORMAT, "no value attribute");
    int64_t one = 1, n = (int64_t)a->n;
    if (!strcmp(a->name, "value") && a->type == TOSAC_ONNX_ATTR_TENSOR) {
        const tosac_onnx_tensor *t = a->t;
        tosac_dtype dt = cvt_dtype_of(t->elem_type);
        if (dt == TOSAC_DTYPE_UNKNOWN || t->rank > TOSAC_MAX_RANK)
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "constant of type %s is not supported",
                            tosac_onnx_elem_name(t->elem_type));
        const float *f;
        int64_t *iv;
        tosac_status s = cvt_decode(c, t->elem_type, t->data, (int64_t)t->numel, &f, &iv);
        if (s != TOSAC_OK) return s;
        return cvt_set_out_const(c, 0, dt, (int)t->rank, t->dims, f, iv);
    }
    if (!strcmp(a->name, "value_float")) return cvt_set_out_const(c, 0, TOSAC_DTYPE_FP32, 0, NULL, &a->f, NULL);
    if (!strcmp(a->name, "value_floats")) return cvt_set_out_const(c, 0, TOSAC_DTYPE_FP32, 1, &n, a->floats, NULL);
    if (!strcmp(a->name, "value_int")) return cvt_set_out_const(c, 0, TOSAC_DTYPE_INT32, 0, NULL, NULL, &a->i);
    if (!strcmp(a->name, "value_ints")) return cvt_set_out_const(c, 0, TOSAC_DTYPE_INT32, 1, &n, NULL, a->ints);
    (void)one;
    return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "attribute '%s' is not supported", a->name);
}

tosac_status cvt_shape(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    int64_t r = v->rank, start = cvt_attr_i(c, "start", 0), end = cvt_attr_i(c, "end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    /* ONNX clamps both ends into [0, rank] */
    if (start < 0) start = 0;
    if (start > r) start = r;
    if (end > r) end = r;
    if (end < start) end = start;
    int64_t n = end - start;
    return cvt_set_out_const(c, 0, TOSAC_DTYPE_INT32, 1, &n, NULL, v->shape + start);
}

tosac_status cvt_reshape(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    const int64_t *sh;
    int64_t n;
    size_t na = 0;
    if (c->opset < 5) sh = cvt_attr_ints(c, "shape", &na), n = (int64_t)na;
    else if ((s = cvt_const_ints(c, 1, &sh, &n)) != TOSAC_OK) return s;
    if (n > TOSAC_MAX_RANK) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "rank %lld too large", (long long)n);
    bool allowzero = cvt_attr_i(c, "allowzero", 0) != 0;
    int64_t shape[TOSAC_MAX_RANK], known = 1;
    int minus = -1;
    for (int k = 0; k < n; k++) {
        shape[k] = sh[k];
        if (sh[k] == 0 && !allowzero) {
            if (k >= v->rank) return cvt_fail(c, TOSAC_ERR_FORMAT, "shape entry 0 beyond the input rank");
            shape[k] = v->shape[k];
        }
        if (shape[k] == -1) {
            if (minus >= 0) return cvt_fail(c, TOSAC_ERR_FORMAT, "more than one -1 in the shape");
            minus = k;
        } else if (shape[k] < 0) {
            return cvt_fail(c, TOSAC_ERR_FORMAT, "negative shape entry %lld", (long long)shape[k]);
        } else {
            if (shape[k] && known > INT64_MAX / shape[k])
                return cvt_fail(c, TOSAC_ERR_FORMAT, "shape entries multiply beyond 2^63");
            known *= shape[k];
        }
    }
    if (minus >= 0) shape[minus] = known ? v->numel / known : 0;
    return reshape_to(c, v, (int)n, shape);
}

tosac_status cvt_flatten(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    int64_t a = cvt_attr_i(c, "axis", 1);
    if (a < 0) a += v->rank;
    if (a < 0 || a > v->rank) return cvt_fail(c, TOSAC_ERR_FORMAT, "axis out of range");
    int64_t shape[2] = {1, 1};
    for (int k = 0; k < v->rank; k++) shape[k >= a] *= v->shape[k];
    return reshape_to(c, v, 2, shape);
}

tosac_status cvt_squeeze(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    const int64_t *axes;
    int64_t n;
    if ((s = cvt_axes_arg(c, 13, &axes, &n)) != TOSAC_OK) return s;
    bool drop[TOSAC_MAX_RANK] = {false};
    for (int64_t k = 0; k < n; k++) {
        int a;
        if ((s = cvt_axis(c, axes[k], v->rank, &a)) != TOSAC_OK) return s;
        if (v->shape[a] != 1) return cvt_fail(c, TOSAC_ERR_FORMAT, "axis %d has size %lld, not 1", a, (long long)v->shape[a]);
        drop[a] = true;
    }
    int64_t shape[TOSAC_MAX_RANK];
    int r = 0;
    for (int k = 0; k < v->rank; k++)
        if (!(n ? drop[k] : v->shape[k] == 1)) shape[r++] = v->shape[k];
    return reshape_to(c, v, r, shape);
}

tosac_status cvt_unsqueeze(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    const int64_t *axes;
    int64_t n;
    if ((s = cvt_axes_arg(c, 13, &axes, &n)) != TOSAC_OK) return s;
    int r = v->rank + (int)n;
    if (r > TOSAC_MAX_RANK) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "rank too large");
    bool ins[TOSAC_MAX_RANK] = {false};
    for (int64_t k = 0; k < n; k++) {
        int a;
        if ((s = cvt_axis(c, axes[k], r, &a)) != TOSAC_OK) return s;
        if (ins[a]) return cvt_fail(c, TOSAC_ERR_FORMAT, "repeated axis %d", a);
        ins[a] = true;
    }
    int64_t shape[TOSAC_MAX_RANK];
    for (int k = 0, j = 0; k < r; k++) shape[k] = ins[k] ? 1 : v->shape[j++];
    return reshape_to(c, v, r, shape);
}

tosac_status cvt_transpose(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    size_t np;
    const int64_t *p = cvt_attr_ints(c, "perm", &np);
    int32_t perm[TOSAC_MAX_RANK];
    if (p && (int)np != v->rank) return cvt_fail(c, TOSAC_ERR_FORMAT, "perm has %zu entries for rank %d", np, v->rank);
    bool seen[TOSAC_MAX_RANK] = {false};
    for (int k = 0; k < v->rank; k++) {
        int64_t q = p ? p[k] : v->rank - 1 - k;
        if (q < 0 || q >= v->rank || seen[q]) return cvt_fail(c, TOSAC_ERR_FORMAT, "perm is not a permutation");
        seen[q] = true;
        perm[k] = (int32_t)q;
    }
    tosac_value *x = cvt_tensor(c, v, &s);
    if (!x) return s;
    if (x->rank == 0) return cvt_set_out(c, 0, cvt_unary(c, TOSAC_OP_IDENTITY, x));
    return cvt_set_out(c, 0, cvt_mk_transpose(c, x, perm));
}

tosac_status cvt_concat(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    size_t n = c->node->n_inputs;
    if (n == 0 || n > 256) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "%zu inputs", n);
    cvt_val *vs[256];
    bool all_const_int = true;
    for (size_t k = 0; k < n; k++) {
        if (!(vs[k] = cvt_in_req(c, k, &s))) return s;
        all_const_int &= vs[k]->is_const && vs[k]->i != NULL;
        if (vs[k]->rank != vs[0]->rank || vs[k]->dt != vs[0]->dt)
            return cvt_fail(c, TOSAC_ERR_FORMAT, "inputs differ in rank or element type");
    }
    int axis;
    if ((s = cvt_axis(c, cvt_attr_i(c, "axis", 0), vs[0]->rank, &axis)) != TOSAC_OK) return s;
    int64_t shape[TOSAC_MAX_RANK];
    memcpy(shape, vs[0]->shape, sizeof shape);
    shape[axis] = 0;
    for (size_t k = 0; k < n; k++) {
        for (int j = 0; j < vs[0]->rank; j++)
            if (j != axis && vs[k]->shape[j] != shape[j]) return cvt_fail(c, TOSAC_ERR_FORMAT, "input shapes differ");
        shape[axis] += vs[k]->shape[axis];
    }
    if (all_const_int && vs[0]->rank == 1) {
        int64_t *buf = tosac_arena_alloc(&c->arena, (size_t)shape[0] * 8 + 1), m = 0;
        if (!buf) return cvt_nomem(c);
        for (size_t k = 0; k < n; k++)
            for (int64_t j = 0; j < vs[k]->numel; j++) buf[m++] = vs[k]->i[j];
        return cvt_set_out_const(c, 0, vs[0]->dt, 1, shape, NULL, buf);
    }
    tosac_value *in[256];
    uint32_t m = 0;
    for (size_t k = 0; k < n; k++) {
        if (vs[k]->numel == 0) continue;
        if (!(in[m++] = cvt_tensor(c, vs[k], &s))) return s;
    }
    if (m == 0) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "empty result");
    tosac_value *out = cvt_new(c, vs[0]->dt, vs[0]->rank, shape);
    tosac_node *nd = cvt_op(c, TOSAC_OP_CONCAT, m, in, out);
    if (!nd || tosac_node_set_int(nd, TOSAC_ATTR_CONCAT_axis, axis) != TOSAC_OK) return cvt_nomem(c);
    return cvt_set_out(c, 0, out);
}

tosac_status cvt_gather(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s), *iv = v ? cvt_in_req(c, 1, &s) : NULL;
    if (!iv) return s;
    int axis;
    if ((s = cvt_axis(c, cvt_attr_i(c, "axis", 0), v->rank, &axis)) != TOSAC_OK) return s;
    if (v->rank + iv->rank - 1 > TOSAC_MAX_RANK) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "rank too large");
    int64_t outer = 1, inner = 1, K = v->shape[axis];
    for (int k = 0; k < axis; k++) outer *= v->shape[k];
    for (int k = axis + 1; k < v->rank; k++) inner *= v->shape[k];
    int64_t shape[TOSAC_MAX_RANK];
    int r = 0;
    for (int k = 0; k < axis; k++) shape[r++] = v->shape[k];
    for (int k = 0; k < iv->rank; k++) shape[r++] = iv->shape[k];
    for (int k = axis + 1; k < v->rank; k++) shape[r++] = v->shape[k];
    if (!(iv->is_const && iv->i)) { /* run-time indices: the same GATHER with the indices tiled over outer */
        int64_t ni = iv->numel;
        if (outer * ni * inner == 0 || outer * ni > INT32_MAX || v->numel > INT32_MAX)
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "empty or too large gather");
        tosac_value *x = cvt_tensor(c, v, &s), *ix = x ? cvt_tensor(c, iv, &s) : NULL;
        if (!ix) return s;
        if (ix->dtype != TOSAC_DTYPE_INT32) return cvt_fail(c, TOSAC_ERR_FORMAT, "indices must be integers");
        if (x->dtype == TOSAC_DTYPE_BOOL) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "bool data is not supported here");
        int64_t one[2] = {1, ni}, mult[2] = {outer, 1}, ishape[2] = {outer, ni};
        tosac_value *j = cvt_mk_reshape(c, cvt_wrap_index(c, ix, K, &s), 2, one);
        if (j && outer > 1) {
            tosac_value *t = cvt_new(c, TOSAC_DTYPE_INT32, 2, ishape);
            tosac_value *tin[2] = {j, cvt_shape_const(c, mult, 2)};
            j = cvt_op(c, TOSAC_OP_TILE, 2, tin, t) ? t : NULL;
        }
        int64_t vshape[3] = {outer, K, inner}, oshape[3] = {outer, ni, inner};
        tosac_value *in[2] = {cvt_mk_reshape(c, x, 3, vshape), j};
        tosac_value *g = cvt_new(c, x->dtype, 3, oshape);
        if (!cvt_op(c, TOSAC_OP_GATHER, 2, in, g)) return s != TOSAC_OK ? s : cvt_nomem(c);
        return cvt_set_out(c, 0, cvt_mk_reshape(c, g, r, shape));
    }
    const int64_t *idx;
    int64_t ni;
    if ((s = cvt_const_ints(c, 1, &idx, &ni)) != TOSAC_OK) return s;
    int64_t *norm = tosac_arena_alloc(&c->arena, (size_t)ni * 8 + 1);
    if (!norm) return cvt_nomem(c);
    for (int64_t k = 0; k < ni; k++) {
        norm[k] = idx[k] < 0 ? idx[k] + K : idx[k];
        if (norm[k] < 0 || norm[k] >= K) return cvt_fail(c, TOSAC_ERR_FORMAT, "index %lld out of range", (long long)idx[k]);
    }
    if (v->is_const && v->i) { /* fold integer gathers (shape arithmetic) */
        int64_t total = outer * ni * inner;
        int64_t *buf = tosac_arena_alloc(&c->arena, (size_t)total * 8 + 1);
        if (!buf) return cvt_nomem(c);
        for (int64_t o = 0; o < outer; o++)
            for (int64_t w = 0; w < ni; w++)
                for (int64_t j = 0; j < inner; j++)
                    buf[(o * ni + w) * inner + j] = v->i[(o * K + norm[w]) * inner + j];
        return cvt_set_out_const(c, 0, v->dt, r, shape, NULL, buf);
    }
    if (outer * ni * inner == 0 || ni > INT32_MAX / (outer ? outer : 1))
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "empty or too large gather");
    tosac_value *x = cvt_tensor(c, v, &s);
    if (!x) return s;
    int64_t vshape[3] = {outer, K, inner}, ishape[2] = {outer, ni}, oshape[3] = {outer, ni, inner};
    int32_t *ib = tosac_arena_alloc(&c->arena, (size_t)(outer * ni) * 4 + 1);
    if (!ib) return cvt_nomem(c);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t w = 0; w < ni; w++) ib[o * ni + w] = (int32_t)norm[w];
    tosac_value *in[2] = {NULL, NULL};
    in[0] = cvt_mk_reshape(c, x, 3, vshape);
    in[1] = cvt_const_i32(c, 2, ishape, ib);
    tosac_value *g = cvt_new(c, x->dtype, 3, oshape);
    if (!cvt_op(c, TOSAC_OP_GATHER, 2, in, g)) return cvt_nomem(c);
    return cvt_set_out(c, 0, cvt_mk_reshape(c, g, r, shape));
}

tosac_status cvt_slice(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    const int64_t *st, *en, *ax = NULL, *sp = NULL;
    int64_t ns, ne, na = 0, nsp = 0;
    if ((s = cvt_const_ints(c, 1, &st, &ns)) != TOSAC_OK || (s = cvt_const_ints(c, 2, &en, &ne)) != TOSAC_OK) return s;
    if (cvt_in(c, 3) && (s = cvt_const_ints(c, 3, &ax, &na)) != TOSAC_OK) return s;
    if (cvt_in(c, 4) && (s = cvt_const_ints(c, 4, &sp, &nsp)) != TOSAC_OK) return s;
    if (ns != ne || (ax && na != ns) || (sp && nsp != ns)) return cvt_fail(c, TOSAC_ERR_FORMAT, "inconsistent lengths");
    int64_t start[TOSAC_MAX_RANK], size[TOSAC_MAX_RANK];
    for (int k = 0; k < v->rank; k++) {
        start[k] = 0;
        size[k] = v->shape[k];
    }
    for (int64_t k = 0; k < ns; k++) {
        int a;
        if ((s = cvt_axis(c, ax ? ax[k] : k, v->rank, &a)) != TOSAC_OK) return s;
        if (sp && sp[k] != 1) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "step %lld is not supported (only 1)", (long long)sp[k]);
        int64_t d = v->shape[a], b = st[k], e = en[k];
        if (b < 0) b += d;
        if (e < 0) e += d;
        b = b < 0 ? 0 : b > d ? d : b;
        e = e < 0 ? 0 : e > d ? d : e;
        start[a] = b;
        size[a] = e > b ? e - b : 0;
        if (size[a] == 0) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "empty slices are not supported");
    }
    if (v->is_const && v->i && v->rank == 1) {
        return cvt_set_out_const(c, 0, v->dt, 1, size, NULL, v->i + start[0]);
    }
    tosac_value *x = cvt_tensor(c, v, &s);
    if (!x) return s;
    tosac_value *out = cvt_new(c, x->dtype, x->rank, size);
    tosac_value *in[3] = {x, NULL, NULL};
    in[1] = cvt_shape_const(c, start, (uint32_t)x->rank);
    in[2] = cvt_shape_const(c, size, (uint32_t)x->rank);
    return cvt_set_out(c, 0, cvt_op(c, TOSAC_OP_SLICE, 3, in, out) ? out : NULL);
}
