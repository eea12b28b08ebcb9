/*
 * Family checks for the elementwise and data-node operators (TOSA.md §B.2/§B.3): unary ops and
 * NEGATE's zero points, binary ops and comparisons (broadcasting, MUL shift, MAXIMUM/MINIMUM
 * nan_mode), SELECT, the reductions, CAST, CONST, IDENTITY and CONST_SHAPE.
 *
 * validate.c has already checked operand counts and kinds and picked the type-support row, so
 * element types are right; these functions check shapes, attribute values and constant contents.
 * Operands may still have any rank or lack constant data, so every access is guarded.
 */
#include "tosa/check.h"

/*
 * Broadcasting of `n` inputs to `out` (TOSA.md §B.1): equal ranks, every dim equal or 1, and the
 * output shape equal to the broadcast shape.
 */
static void check_broadcast(tosac_check_ctx *c, const tosac_value *const *ins, const char *const *names, int n,
                            const tosac_value *out)
{
    if (!out || !tosac_rank_ok(out)) return;
    for (int k = 0; k < n; k++) {
        if (!ins[k] || !tosac_rank_ok(ins[k])) return;
        if (ins[k]->rank != out->rank) {
            tosac_check_error(c, "%s has rank %d but the output has rank %d (broadcasting needs equal ranks; insert a RESHAPE)",
                              names[k], (int)ins[k]->rank, (int)out->rank);
            return;
        }
    }
    int64_t bshape[TOSAC_MAX_RANK];
    for (int32_t d = 0; d < out->rank; d++) {
        int64_t b = 1;
        for (int k = 0; k < n; k++) {
            int64_t x = ins[k]->shape[d];
            if (x == 1) continue;
            if (b == 1) {
                b = x;
            } else if (x != b) {
                char s0[192], s1[192];
                int first = 0;
                while (first < k && ins[first]->shape[d] != b) first++;
                tosac_check_error(c, "%s %s and %s %s cannot be broadcast: dimension %d is %lld vs %lld", names[first],
                                  tosac_shape_str(ins[first], s0, sizeof s0), names[k],
                                  tosac_shape_str(ins[k], s1, sizeof s1), (int)d, (long long)b, (long long)x);
                return;
            }
        }
        bshape[d] = b;
    }
    for (int32_t d = 0; d < out->rank; d++) {
        if (out->shape[d] == bshape[d]) continue;
        char s0[192], s1[192];
        tosac_check_error(c, "output shape %s does not match the broadcast shape %s", tosac_shape_str(out, s0, sizeof s0),
                          tosac_dims_str(bshape, out->rank, false, s1, sizeof s1));
        return;
    }
}

/* Zero point of NEGATE: must be 0 unless the data type is INT8. */
static void check_zero_point(tosac_check_ctx *c, const tosac_value *zp, const char *what)
{
    if (!tosac_check_shape_one(c, zp, what, true)) return;
    tosac_dtype t = (tosac_dtype)c->row->t[0];
    if (t == TOSAC_DTYPE_INT8) return;
    if (tosac_dtype_is_float(zp->dtype)) {
        ERROR_IF(c, tosac_fp_const_is_zero(zp, NULL) == 0,
                 "%s '%s' must be 0 for %s data (only INT8 allows non-zero zero points)", what, tosac_nm(zp->name),
                 tosac_dtype_name(t));
        return;
    }
    int64_t v;
    if (!tosac_const_get_i64(zp, 0, &v)) return;
    ERROR_IF(c, v != 0, "%s '%s' is %lld but must be 0 for %s data (only INT8 allows non-zero zero points)", what,
             tosac_nm(zp->name), (long long)v, tosac_dtype_name(t));
}

/* ------------------------------------------------------------------------------------------ */

void tosac_check_unary(tosac_check_ctx *c)
{
    const tosac_value *in = tosac_check_in(c, 0), *out = tosac_check_out(c, 0);
    tosac_check_same_shape(c, in, out, "input1");
    if (c->node->op == TOSAC_OP_NEGATE) {
        check_zero_point(c, tosac_check_in(c, 1), "input1_zp");
        check_zero_point(c, tosac_check_in(c, 2), "output_zp");
    }
}

void tosac_check_binary(tosac_check_ctx *c)
{
    const tosac_value *ins[2] = {tosac_check_in(c, 0), tosac_check_in(c, 1)};
    static const char *const names[2] = {"input1", "input2"};
    check_broadcast(c, ins, names, 2, tosac_check_out(c, 0));
    switch (c->node->op) {
    case TOSAC_OP_MUL: {
        const tosac_value *shift = tosac_check_in(c, 2);
        if (!tosac_check_shape_one(c, shift, "shift", true)) break;
        int64_t s;
        if (!tosac_const_get_i64(shift, 0, &s)) break;
        if (s < 0 || s > 63) {
            tosac_check_error(c, "shift %lld is outside [0, 63]", (long long)s);
        } else if (s != 0 && c->row->t[0] != TOSAC_DTYPE_INT32) {
            tosac_check_level(c, "REQUIRE failed: shift is %lld but must be 0 unless in_t is INT32 (in_t is %s)",
                              (long long)s, tosac_dtype_name((tosac_dtype)c->row->t[0]));
        }
        break;
    }
    case TOSAC_OP_MAXIMUM: tosac_check_nan_mode(c, TOSAC_ATTR_MAXIMUM_nan_mode, false); break;
    case TOSAC_OP_MINIMUM: tosac_check_nan_mode(c, TOSAC_ATTR_MINIMUM_nan_mode, false); break;
    default: break;
    }
}

void tosac_check_select(tosac_check_ctx *c)
{
    const tosac_value *ins[3] = {tosac_check_in(c, 0), tosac_check_in(c, 1), tosac_check_in(c, 2)};
    static const char *const names[3] = {"input1", "input2", "input3"};
    check_broadcast(c, ins, names, 3, tosac_check_out(c, 0));
}

void tosac_check_reduce(tosac_check_ctx *c)
{
    const tosac_value *in = tosac_check_in(c, 0), *out = tosac_check_out(c, 0);
    /* Every reduction has `axis` at field 0. */
    int64_t axis = tosac_check_attr_int(c, TOSAC_ATTR_REDUCE_SUM_axis, 0);
    uint32_t op = c->node->op;
    if (op == TOSAC_OP_REDUCE_MAX) tosac_check_nan_mode(c, TOSAC_ATTR_REDUCE_MAX_nan_mode, false);
    if (op == TOSAC_OP_REDUCE_MIN) tosac_check_nan_mode(c, TOSAC_ATTR_REDUCE_MIN_nan_mode, false);
    if (!in || !out || !tosac_rank_ok(in) || !tosac_rank_ok(out)) return;
    if (axis < 0 || axis >= in->rank) {
        tosac_check_error(c, "axis %lld is out of range for input rank %d (need 0 <= axis < rank)", (long long)axis,
                          (int)in->rank);
        return;
    }
    char a[192], b[192];
    if (out->rank != in->rank) {
        tosac_check_error(c, "output rank %d must equal the input rank %d (the reduced axis is kept with size 1)",
                          (int)out->rank, (int)in->rank);
        return;
    }
    if (out->shape[axis] != 1)
        tosac_check_error(c, "output dimension %lld (the reduced axis) is %lld, must be 1", (long long)axis,
                          (long long)out->shape[axis]);
    for (int32_t d = 0; d < in->rank; d++) {
        if (d == axis || in->shape[d] == out->shape[d]) continue;
        tosac_check_error(c, "output shape %s must equal the input shape %s except at axis %lld",
                          tosac_shape_str(out, a, sizeof a), tosac_shape_str(in, b, sizeof b), (long long)axis);
        break;
    }
}

void tosac_check_cast(tosac_check_ctx *c)
{
    tosac_check_same_shape(c, tosac_check_in(c, 0), tosac_check_out(c, 0), "input");
}

void tosac_check_identity(tosac_check_ctx *c)
{
    tosac_check_same_shape(c, tosac_check_in(c, 0), tosac_check_out(c, 0), "input1");
}

void tosac_check_const(tosac_check_ctx *c)
{
    const tosac_value *out = tosac_check_out(c, 0);
    if (!out || out->is_unranked || !tosac_rank_ok(out)) return;
    int64_t n = tosac_check_nelem(out);
    size_t need;
    char sh[192];
    if (n < 0 || !tosac_dtype_storage_bytes(out->dtype, n, &need)) {
        tosac_check_error(c, "the size of constant '%s' %s cannot be represented", tosac_nm(out->name),
                          tosac_shape_str(out, sh, sizeof sh));
        return;
    }
    uint64_t have;
    if (out->data) {
        have = out->data_len;
    } else if (out->ext_size > 1) {
        have = out->ext_size; /* data stored outside the flatbuffer (TosaTensor.offset/size) */
    } else {
        tosac_check_error(c, "constant '%s' has no data (CONST needs %zu bytes of %s %s)", tosac_nm(out->name), need,
                          tosac_dtype_name(out->dtype), tosac_shape_str(out, sh, sizeof sh));
        return;
    }
    /* Exactly the encoded size, or that size zero-padded to a multiple of 8 bytes (§A.6). */
    bool ok = have == need || (have > need && have - need < 8 && have % 8 == 0);
    ERROR_IF(c, !ok, "constant '%s' has %llu data bytes but %s %s encodes to %zu bytes", tosac_nm(out->name),
             (unsigned long long)have, tosac_dtype_name(out->dtype), tosac_shape_str(out, sh, sizeof sh), need);
}

void tosac_check_const_shape(tosac_check_ctx *c)
{
    const tosac_value *out = tosac_check_out(c, 0);
    if (!out) return;
    if (out->rank != 1 || !out->shape || out->shape[0] < 0) {
        tosac_check_error(c, "shape value '%s' has no valid element count", tosac_nm(out->name));
        return;
    }
    int64_t count = out->shape[0];
    if (count > (int64_t)(SIZE_MAX / 8)) {
        tosac_check_error(c, "shape value '%s' has too many elements (%lld)", tosac_nm(out->name), (long long)count);
        return;
    }
    size_t need = (size_t)count * 8;
    size_t have = out->data ? out->data_len : 0;
    if (have != need) {
        tosac_check_error(c, "shape value '%s' has %zu data bytes but its %lld elements need %zu (8 bytes each)",
                          tosac_nm(out->name), have, (long long)count, need);
        return;
    }
    if (c->lim.max_log2_size >= 63) return;
    int64_t hi = ((int64_t)1 << c->lim.max_log2_size) - 1, lo = -((int64_t)1 << c->lim.max_log2_size);
    for (int64_t i = 0; i < count; i++) {
        int64_t v;
        if (!tosac_const_get_i64(out, i, &v)) break;
        if (v < lo || v > hi) {
            tosac_check_level(c, "element %lld of shape value '%s' is %lld, outside [-2^%lld, 2^%lld - 1] (MAX_LOG2_SIZE)",
                              (long long)i, tosac_nm(out->name), (long long)v, (long long)c->lim.max_log2_size,
                              (long long)c->lim.max_log2_size);
            break;
        }
    }
}
