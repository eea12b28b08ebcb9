/* Converters for the ONNX reductions (one TOSA REDUCE_* per axis, keepdims by RESHAPE) and Size. */
#include <string.h>

#include "onnx/convert.h"

typedef enum { R_MAX, R_MIN, R_SUM, R_MEAN, R_PROD, R_SUMSQ } rkind;

static tosac_status reduce(cvt_ctx *c, rkind k)
{
    tosac_status s = TOSAC_OK;
    tosac_value *x = cvt_in_tensor(c, 0, &s);
    if (!x) return s;
    bool fp_only = k == R_MEAN || k == R_PROD || k == R_SUMSQ;
    if ((s = cvt_need_type(c, x, true, !fp_only, false)) != TOSAC_OK) return s;
    if (x->rank == 0) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "reduction of a scalar");
    /* axes: attribute, or input 1 (ReduceSum from opset 13, the others from 18) */
    const int64_t *axes;
    int64_t n;
    if ((s = cvt_axes_arg(c, k == R_SUM ? 13 : 18, &axes, &n)) != TOSAC_OK) return s;
    bool keep = cvt_attr_i(c, "keepdims", 1) != 0;
    bool red[TOSAC_MAX_RANK] = {false};
    if (n == 0) {
        if (cvt_attr_i(c, "noop_with_empty_axes", 0)) return cvt_set_out(c, 0, cvt_unary(c, TOSAC_OP_IDENTITY, x));
        for (int a = 0; a < x->rank; a++) red[a] = true;
    }
    for (int64_t j = 0; j < n; j++) {
        int a;
        if ((s = cvt_axis(c, axes[j], x->rank, &a)) != TOSAC_OK) return s;
        red[a] = true;
    }
    for (int a = 0; a < x->rank; a++)
        if (red[a] && x->shape[a] == 0) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "empty reductions are not supported");
    if (k == R_SUMSQ) x = cvt_binary(c, TOSAC_OP_MUL, x, x, TOSAC_DTYPE_UNKNOWN);
    tosac_op op = k == R_MAX ? TOSAC_OP_REDUCE_MAX : k == R_MIN ? TOSAC_OP_REDUCE_MIN
                : k == R_PROD ? TOSAC_OP_REDUCE_PRODUCT : TOSAC_OP_REDUCE_SUM;
    double count = 1;
    int64_t oshape[TOSAC_MAX_RANK];
    int orank = 0;
    for (int a = 0; a < x->rank && x; a++) {
        if (!red[a]) {
            oshape[orank++] = x->shape[a];
            continue;
        }
        if (keep) oshape[orank++] = 1;
        count *= (double)x->shape[a];
        if (!(x = cvt_reduce_axis(c, op, x, a))) return cvt_nomem(c);
    }
    if (x && k == R_MEAN)
        x = cvt_binary(c, TOSAC_OP_MUL, x, cvt_const_scalar(c, TOSAC_DTYPE_FP32, x->rank, 1.0 / count), TOSAC_DTYPE_UNKNOWN);
    if (x && !keep) x = cvt_mk_reshape(c, x, orank, oshape);
    return x ? cvt_set_out(c, 0, x) : cvt_nomem(c);
}

tosac_status cvt_reduce_max(cvt_ctx *c) { return reduce(c, R_MAX); }
tosac_status cvt_reduce_min(cvt_ctx *c) { return reduce(c, R_MIN); }
tosac_status cvt_reduce_sum(cvt_ctx *c) { return reduce(c, R_SUM); }
tosac_status cvt_reduce_mean(cvt_ctx *c) { return reduce(c, R_MEAN); }
tosac_status cvt_reduce_prod(cvt_ctx *c) { return reduce(c, R_PROD); }
tosac_status cvt_reduce_sum_square(cvt_ctx *c) { return reduce(c, R_SUMSQ); }

tosac_status cvt_size(cvt_ctx *c)
{
    tosac_status s = TOSAC_OK;
    cvt_val *v = cvt_in_req(c, 0, &s);
    if (!v) return s;
    return cvt_set_out_const(c, 0, TOSAC_DTYPE_INT32, 0, NULL, NULL, &v->numel);
}
