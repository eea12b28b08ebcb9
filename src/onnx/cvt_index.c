/*
 * GatherND with run-time indices (row at the end of onnx_ops.def). With b batch dims, data
 * [B..., D_b..D_{b+q-1}, S...] and indices [B..., M..., q], every index tuple picks one slice of
 * S elements: its row r = sum_k wrap(idx[..., k], D_{b+k}) * stride_k (INT32 SLICE, MUL, ADD), and
 * one GATHER over data as [prod B, rows, prod S] with the rows as [prod B, prod M] gives the
 * output [B..., M..., S...].
 */
#include "onnx/convert.h"

tosac_status cvt_gather_nd(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s), *idx = x ? cvt_in_tensor(c, 1, &s) : NULL;
    if (!idx) return s;
    if ((s = cvt_need_type(c, x, true, true, false)) != TOSAC_OK) return s;
    if ((s = cvt_need_type(c, idx, false, true, false)) != TOSAC_OK) return s;
    int64_t b = cvt_attr_i(c, "batch_dims", 0), q = idx->rank ? idx->shape[idx->rank - 1] : 0;
    if (b < 0 || idx->rank < 1 || b >= idx->rank || q < 1 || b + q > x->rank)
        return cvt_fail(c, TOSAC_ERR_FORMAT, "indices of depth %lld with %lld batch dims do not fit data of rank %d",
                        (long long)q, (long long)b, x->rank);
    int64_t B = 1, M = 1, S = 1, rows = 1, stride[TOSAC_MAX_RANK];
    for (int64_t d = 0; d < b; d++) {
        if (idx->shape[d] != x->shape[d]) return cvt_fail(c, TOSAC_ERR_FORMAT, "batch dims of data and indices differ");
        B *= x->shape[d];
    }
    for (int64_t d = b; d < idx->rank - 1; d++) M *= idx->shape[d];
    for (int64_t d = b + q; d < x->rank; d++) S *= x->shape[d];
    for (int64_t k = q - 1; k >= 0; k--) {
        stride[k] = rows;
        rows *= x->shape[b + k];
    }
    if (B * rows * S > INT32_MAX || B * M > INT32_MAX) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "tensor too large");
    /* the row of every index tuple, as [B, M] */
    int64_t flat[2] = {B * M, q}, one[2] = {B * M, 1};
    tosac_value *t = cvt_mk_reshape(c, idx, 2, flat), *row = NULL;
    for (int64_t k = 0; k < q && t; k++) {
        int64_t start[2] = {0, k};
        tosac_value *sl = cvt_new(c, TOSAC_DTYPE_INT32, 2, one);
        tosac_value *in[3] = {t, cvt_shape_const(c, start, 2), cvt_shape_const(c, one, 2)};
        if (!cvt_op(c, TOSAC_OP_SLICE, 3, in, sl)) return cvt_nomem(c);
        tosac_value *w = cvt_wrap_index(c, sl, x->shape[b + k], &s);
        if (w && stride[k] != 1)
            w = cvt_binary(c, TOSAC_OP_MUL, w, cvt_const_scalar(c, TOSAC_DTYPE_INT32, 2, (double)stride[k]),
                           TOSAC_DTYPE_UNKNOWN);
        row = !w ? NULL : row ? cvt_binary(c, TOSAC_OP_ADD, row, w, TOSAC_DTYPE_UNKNOWN) : w;
        if (!row) return s != TOSAC_OK ? s : cvt_nomem(c);
    }
    int64_t rshape[2] = {B, M}, vshape[3] = {B, rows, S}, gshape[3] = {B, M, S}, oshape[TOSAC_MAX_RANK];
    int orank = 0;
    for (int64_t d = 0; d < idx->rank - 1; d++) oshape[orank++] = idx->shape[d];
    for (int64_t d = b + q; d < x->rank; d++) oshape[orank++] = x->shape[d];
    if (orank > TOSAC_MAX_RANK) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "rank too large");
    tosac_value *in[2] = {NULL, NULL};
    in[0] = cvt_mk_reshape(c, x, 3, vshape);
    in[1] = cvt_mk_reshape(c, row, 2, rshape);
    tosac_value *g = cvt_new(c, x->dtype, 3, gshape);
    if (!in[0] || !in[1] || !cvt_op(c, TOSAC_OP_GATHER, 2, in, g)) return cvt_nomem(c);
    return cvt_finish(c, cvt_mk_reshape(c, g, orank, oshape), s);
}
