/*
 * Family checks for the elementwise and data-node operators (TOSA.md §B.2/§B.3): unary ops and
 * NEGATE's zero points, binary ops and comparisons (broadcasting, MUL shift, MAXIMUM/MINIMUM
 * nan_mode), SELECT, the reductions, CAST, CONST, IDENTITY and CONST_SHAPE.
 *
 * validate.c has already checked operand counts and kinds and picked the type-support row, so
 * element types are right; these functions check shapes, attribute values and constant contents.
 * Operands may still have any rank or lack constant data, so every access is guarded.
 */
#include <stdio.h>
#include <string.h>

#include "tosa/check.h"

/* Operand i when it is a declared value of the block (NULL otherwise; reported by validate.c). */
static const tosac_value *in_val(const tosac_check_ctx *c, uint32_t i)
{
    const tosac_value *v = tosac_check_in(c, i);
    return v && v->declared ? v : NULL;
}

static const tosac_value *out_val(const tosac_check_ctx *c, uint32_t i)
{
    const tosac_value *v = tosac_check_out(c, i);
    return v && v->declared ? v : NULL;
}

static const char *nm(const char *s) { return s ? s : "(null)"; }

static bool rank_ok(const tosac_value *v) { return v && v->rank >= 0 && v->rank <= TOSAC_MAX_RANK && (v->rank == 0 || v->shape); }

static void require_same_shape(tosac_check_ctx *c, const tosac_value *in, const tosac_value *out, const char *in_name)
{
    if (!in || !out || tosac_same_shape(in, out)) return;
    char a[192], b[192];
    tosac_check_error(c, "output shape %s must equal the %s shape %s", tosac_shape_str(out, a, sizeof a), in_name,
                      tosac_shape_str(in, b, sizeof b));
}

/*
 * Broadcasting of `n` inputs to `out` (TOSA.md §B.1): equal ranks, every dim equal or 1, and the
 * output shape equal to the broadcast shape.
 */
static void check_broadcast(tosac_check_ctx *c, const tosac_value *const *ins, const char *const *names, int n,
                            const tosac_value *out)
{
    if (!out || !rank_ok(out)) return;
    for (int k = 0; k < n; k++) {
        if (!ins[k] || !rank_ok(ins[k])) return;
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
        size_t len = 0;
        s1[0] = '\0';
        for (int32_t k = 0; k < out->rank && len + 24 < sizeof s1; k++)
            len += (size_t)snprintf(s1 + len, sizeof s1 - len, "%s%lld", k ? "," : "[", (long long)bshape[k]);
        if (len + 2 < sizeof s1) snprintf(s1 + len, sizeof s1 - len, "]");
        tosac_check_error(c, "output shape %s does not match the broadcast shape %s", tosac_shape_str(out, s0, sizeof s0),
                          out->rank ? s1 : "[]");
        return;
    }
}

/* Value of a one-element FP constant is zero (either sign): 1 yes, 0 no, -1 unknown. */
static int fp_const_is_zero(const tosac_value *v)
{
    unsigned bytes = tosac_dtype_bits(v->dtype) / 8;
    if (!v->data || bytes == 0 || bytes > 4 || v->data_len < bytes) return -1;
    uint32_t bits = 0;
    for (unsigned k = 0; k < bytes; k++) bits |= (uint32_t)v->data[k] << (8 * k);
    return (bits & ~(1u << (8 * bytes - 1))) == 0;
}

/* One-element operand of shape [1] (zero points, MUL shift, PAD pad_const). */
static bool require_one(tosac_check_ctx *c, const tosac_value *v, const char *what)
{
    if (!v) return false;
    if (v->rank == 1 && v->shape && v->shape[0] == 1) return true;
    char buf[192];
    tosac_check_error(c, "%s '%s' must have shape [1] (exactly one element), has shape %s", what, nm(v->name),
                      tosac_shape_str(v, buf, sizeof buf));
    return false;
}

/* Zero point of NEGATE: must be 0 unless the data type is INT8. */
static void check_zero_point(tosac_check_ctx *c, const tosac_value *zp, const char *what)
{
    if (!require_one(c, zp, what)) return;
    tosac_dtype t = (tosac_dtype)c->row->t[0];
    if (t == TOSAC_DTYPE_INT8) return;
    if (tosac_dtype_is_float(zp->dtype)) {
        ERROR_IF(c, fp_const_is_zero(zp) == 0, "%s '%s' must be 0 for %s data (only INT8 allows non-zero zero points)",
                 what, nm(zp->name), tosac_dtype_name(t));
        return;
    }
    int64_t v;
    if (!tosac_const_get_i64(zp, 0, &v)) return;
    ERROR_IF(c, v != 0, "%s '%s' is %lld but must be 0 for %s data (only INT8 allows non-zero zero points)", what,
             nm(zp->name), (long long)v, tosac_dtype_name(t));
}

static void check_nan_mode(tosac_check_ctx *c, unsigned id)
{
    int64_t m = tosac_check_attr_int(c, id, TOSAC_NAN_UNKNOWN);
    ERROR_IF(c, m != TOSAC_NAN_PROPAGATE && m != TOSAC_NAN_IGNORE,
             "nan_mode %lld is not a valid NaN propagation mode (PROPAGATE 1 or IGNORE 2)", (long long)m);
}

/* ------------------------------------------------------------------------------------------ */

void tosac_check_unary(tosac_check_ctx *c)
{
    const tosac_value *in = in_val(c, 0), *out = out_val(c, 0);
    require_same_shape(c, in, out, "input1");
    if (c->node->op == TOSAC_OP_NEGATE) {
        check_zero_point(c, in_val(c, 1), "input1_zp");
        check_zero_point(c, in_val(c, 2), "output_zp");
    }
}

void tosac_check_binary(tosac_check_ctx *c)
{
    const tosac_value *ins[2] = {in_val(c, 0), in_val(c, 1)};
    static const char *const names[2] = {"input1", "input2"};
    check_broadcast(c, ins, names, 2, out_val(c, 0));
    switch (c->node->op) {
    case TOSAC_OP_MUL: {
        const tosac_value *shift = in_val(c, 2);
        if (!require_one(c, shift, "shift")) break;
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
    case TOSAC_OP_MAXIMUM: check_nan_mode(c, TOSAC_ATTR_MAXIMUM_nan_mode); break;
    case TOSAC_OP_MINIMUM: check_nan_mode(c, TOSAC_ATTR_MINIMUM_nan_mode); break;
    default: break;
    }
}

void tosac_check_select(tosac_check_ctx *c)
{
    const tosac_value *ins[3] = {in_val(c, 0), in_val(c, 1), in_val(c, 2)};
    static const char *const names[3] = {"input1", "input2", "input3"};
    check_broadcast(c, ins, names, 3, out_val(c, 0));
}

void tosac_check_reduce(tosac_check_ctx *c)
{
    const tosac_value *in = in_val(c, 0), *out = out_val(c, 0);
    /* Every reduction has `axis` at field 0. */
    int64_t axis = tosac_check_attr_int(c, TOSAC_ATTR_REDUCE_SUM_axis, 0);
    uint32_t op = c->node->op;
    if (op == TOSAC_OP_REDUCE_MAX) check_nan_mode(c, TOSAC_ATTR_REDUCE_MAX_nan_mode);
    if (op == TOSAC_OP_REDUCE_MIN) check_nan_mode(c, TOSAC_ATTR_REDUCE_MIN_nan_mode);
    if (!in || !out || !rank_ok(in) || !rank_ok(out)) return;
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

void tosac_check_cast(tosac_check_ctx *c) { require_same_shape(c, in_val(c, 0), out_val(c, 0), "input"); }

void tosac_check_identity(tosac_check_ctx *c) { require_same_shape(c, in_val(c, 0), out_val(c, 0), "input1"); }

void tosac_check_const(tosac_check_ctx *c)
{
    const tosac_value *out = out_val(c, 0);
    if (!out || out->is_unranked || !rank_ok(out)) return;
    int64_t n = tosac_check_nelem(out);
    size_t need;
    char sh[192];
    if (n < 0 || !tosac_dtype_storage_bytes(out->dtype, n, &need)) {
        tosac_check_error(c, "the size of constant '%s' %s cannot be represented", nm(out->name),
                          tosac_shape_str(out, sh, sizeof sh));
        return;
    }
    uint64_t have;
    if (out->data) {
        have = out->data_len;
    } else if (out->ext_size > 1) {
        have = out->ext_size; /* data stored outside the flatbuffer (TosaTensor.offset/size) */
    } else {
        tosac_check_error(c, "constant '%s' has no data (CONST needs %zu bytes of %s %s)", nm(out->name), need,
                          tosac_dtype_name(out->dtype), tosac_shape_str(out, sh, sizeof sh));
        return;
    }
    /* Exactly the encoded size, or that size zero-padded to a multiple of 8 bytes (§A.6). */
    bool ok = have == need || (have > need && have - need < 8 && have % 8 == 0);
    ERROR_IF(c, !ok, "constant '%s' has %llu data bytes but %s %s encodes to %zu bytes", nm(out->name),
             (unsigned long long)have, tosac_dtype_name(out->dtype), tosac_shape_str(out, sh, sizeof sh), need);
}

void tosac_check_const_shape(tosac_check_ctx *c)
{
    const tosac_value *out = out_val(c, 0);
    if (!out) return;
    if (out->rank != 1 || !out->shape || out->shape[0] < 0) {
        tosac_check_error(c, "shape value '%s' has no valid element count", nm(out->name));
        return;
    }
    int64_t count = out->shape[0];
    if (count > (int64_t)(SIZE_MAX / 8)) {
        tosac_check_error(c, "shape value '%s' has too many elements (%lld)", nm(out->name), (long long)count);
        return;
    }
    size_t need = (size_t)count * 8;
    size_t have = out->data ? out->data_len : 0;
    if (have != need) {
        tosac_check_error(c, "shape value '%s' has %zu data bytes but its %lld elements need %zu (8 bytes each)",
                          nm(out->name), have, (long long)count, need);
        return;
    }
    if (c->lim.max_log2_size >= 63) return;
    int64_t hi = ((int64_t)1 << c->lim.max_log2_size) - 1, lo = -((int64_t)1 << c->lim.max_log2_size);
    for (int64_t i = 0; i < count; i++) {
        int64_t v;
        if (!tosac_const_get_i64(out, i, &v)) break;
        if (v < lo || v > hi) {
            tosac_check_level(c, "element %lld of shape value '%s' is %lld, outside [-2^%lld, 2^%lld - 1] (MAX_LOG2_SIZE)",
                              (long long)i, nm(out->name), (long long)v, (long long)c->lim.max_log2_size,
                              (long long)c->lim.max_log2_size);
            break;
        }
    }
}
