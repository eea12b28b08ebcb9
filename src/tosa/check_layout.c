/*
 * Family checks for the data-layout and scatter/gather operators (TOSA.md §B.2/§B.3): CONCAT, PAD,
 * RESHAPE, REVERSE, SLICE, TILE, TRANSPOSE, GATHER and SCATTER.
 *
 * Shape arguments (padding, shape, start, size, multiples) are shape values produced by
 * CONST_SHAPE; when their data is unavailable (EXT-DYNAMIC) only the element counts are checked.
 * All size arithmetic is overflow-checked int64.
 */
#include "tosa/check.h"

/* Output rank must equal `rank`. */
static bool require_rank(tosac_check_ctx *c, const tosac_value *v, const char *what, int32_t rank)
{
    if (v->rank == rank) return true;
    tosac_check_error(c, "%s '%s' has rank %d, expected %d", what, tosac_nm(v->name), (int)v->rank, (int)rank);
    return false;
}

/*
 * Reads the elements of shape value `v` into out[want]. Returns -1 after reporting a wrong element
 * count, 0 when the values are not available (non-constant), 1 on success.
 */
static int read_shape_vals(tosac_check_ctx *c, const tosac_value *v, const char *what, int64_t want, const char *why,
                           int64_t *out)
{
    if (!v || v->rank != 1 || !v->shape) return 0;
    if (v->shape[0] != want) {
        tosac_check_error(c, "%s '%s' has %lld elements, expected %lld (%s)", what, tosac_nm(v->name),
                          (long long)v->shape[0], (long long)want, why);
        return -1;
    }
    for (int64_t i = 0; i < want; i++)
        if (!tosac_const_get_i64(v, i, &out[i])) return 0;
    return 1;
}

/* Reports out != expected (dims `exp` of rank out->rank). */
static void compare_output(tosac_check_ctx *c, const tosac_value *out, const int64_t *exp, const char *how)
{
    for (int32_t d = 0; d < out->rank; d++) {
        if (out->shape[d] == exp[d]) continue;
        char a[192], b[192];
        tosac_check_error(c, "output shape %s does not match %s (%s)", tosac_shape_str(out, a, sizeof a),
                          tosac_dims_str(exp, out->rank, false, b, sizeof b), how);
        return;
    }
}

/* ------------------------------------------------------------------------------------------ */

void tosac_check_concat(tosac_check_ctx *c)
{
    const tosac_value *out = tosac_check_out(c, 0);
    uint32_t n = c->node->n_inputs;
    int64_t axis = tosac_check_attr_int(c, TOSAC_ATTR_CONCAT_axis, 0);
    if (!out || !tosac_rank_ok(out)) return;
    if (n < 1) {
        tosac_check_error(c, "CONCAT needs at least one input tensor");
        return;
    }
    if (out->rank < 1) {
        tosac_check_error(c, "CONCAT needs tensors of rank >= 1 (output has rank 0)");
        return;
    }
    if (axis < 0 || axis >= out->rank) {
        tosac_check_error(c, "axis %lld is out of range for rank %d (need 0 <= axis < rank)", (long long)axis,
                          (int)out->rank);
        return;
    }
    int64_t sum = 0;
    bool sum_ok = true;
    for (uint32_t i = 0; i < n; i++) {
        const tosac_value *v = tosac_check_in(c, i);
        if (!v || !tosac_rank_ok(v)) return;
        if (v->rank != out->rank) {
            tosac_check_error(c, "input1[%u] '%s' has rank %d but the output has rank %d (all ranks must be equal)",
                              (unsigned)i, tosac_nm(v->name), (int)v->rank, (int)out->rank);
            return;
        }
        for (int32_t d = 0; d < v->rank; d++) {
            if (d == axis || v->shape[d] == out->shape[d]) continue;
            char a[192], b[192];
            tosac_check_error(c, "input1[%u] '%s' shape %s differs from the output shape %s outside axis %lld",
                              (unsigned)i, tosac_nm(v->name), tosac_shape_str(v, a, sizeof a),
                              tosac_shape_str(out, b, sizeof b), (long long)axis);
            return;
        }
        if (sum_ok && !tosac_checked_add(sum, v->shape[axis], &sum)) sum_ok = false;
    }
    if (!sum_ok)
        tosac_check_error(c, "the sum of the input sizes along axis %lld overflows", (long long)axis);
    else
        ERROR_IF(c, out->shape[axis] != sum,
                 "output dimension %lld is %lld but the inputs along the axis sum to %lld", (long long)axis,
                 (long long)out->shape[axis], (long long)sum);
}

void tosac_check_pad(tosac_check_ctx *c)
{
    const tosac_value *in = tosac_check_in(c, 0), *padding = tosac_check_in(c, 1), *pad_const = tosac_check_in(c, 2),
                      *out = tosac_check_out(c, 0);
    tosac_check_shape_one(c, pad_const, "pad_const", true);
    if (!in || !out || !tosac_rank_ok(in) || !tosac_rank_ok(out)) return;
    int64_t pads[2 * TOSAC_MAX_RANK];
    int got = read_shape_vals(c, padding, "padding", 2 * (int64_t)in->rank, "2 x input rank: before and after each dim",
                              pads);
    if (!require_rank(c, out, "output", in->rank) || got <= 0) return;
    int64_t exp[TOSAC_MAX_RANK];
    for (int32_t d = 0; d < in->rank; d++) {
        int64_t lo = pads[2 * d], hi = pads[2 * d + 1];
        if (lo < 0 || hi < 0) {
            tosac_check_error(c, "padding of dimension %d is [%lld, %lld]; padding must be >= 0", (int)d, (long long)lo,
                              (long long)hi);
            return;
        }
        if (!tosac_checked_add(lo, in->shape[d], &exp[d]) || !tosac_checked_add(exp[d], hi, &exp[d])) {
            tosac_check_error(c, "padded size of dimension %d overflows", (int)d);
            return;
        }
    }
    compare_output(c, out, exp, "padding before + input + padding after");
}

void tosac_check_reshape(tosac_check_ctx *c)
{
    const tosac_value *in = tosac_check_in(c, 0), *shape = tosac_check_in(c, 1), *out = tosac_check_out(c, 0);
    if (!in || !out || !tosac_rank_ok(in) || !tosac_rank_ok(out)) return;
    int64_t ni = tosac_check_nelem(in), no = tosac_check_nelem(out);
    char a[192], b[192];
    ERROR_IF(c, ni != no, "input %s has %lld elements but output %s has %lld (RESHAPE keeps the element count)",
             tosac_shape_str(in, a, sizeof a), (long long)ni, tosac_shape_str(out, b, sizeof b), (long long)no);
    int64_t vals[TOSAC_MAX_RANK];
    if (read_shape_vals(c, shape, "shape", out->rank, "one per output dimension", vals) <= 0) return;
    compare_output(c, out, vals, "the shape operand");
}

void tosac_check_reverse(tosac_check_ctx *c)
{
    const tosac_value *in = tosac_check_in(c, 0), *out = tosac_check_out(c, 0);
    int64_t axis = tosac_check_attr_int(c, TOSAC_ATTR_REVERSE_axis, 0);
    if (!in || !out || !tosac_rank_ok(in) || !tosac_rank_ok(out)) return;
    if (axis < 0 || axis >= in->rank)
        tosac_check_error(c, "axis %lld is out of range for input rank %d (need 0 <= axis < rank)", (long long)axis,
                          (int)in->rank);
    tosac_check_same_shape(c, in, out, "input");
}

void tosac_check_slice(tosac_check_ctx *c)
{
    const tosac_value *in = tosac_check_in(c, 0), *start = tosac_check_in(c, 1), *size = tosac_check_in(c, 2),
                      *out = tosac_check_out(c, 0);
    if (!in || !out || !tosac_rank_ok(in) || !tosac_rank_ok(out)) return;
    int64_t st[TOSAC_MAX_RANK], sz[TOSAC_MAX_RANK];
    int g1 = read_shape_vals(c, start, "start", in->rank, "one per input dimension", st);
    int g2 = read_shape_vals(c, size, "size", in->rank, "one per input dimension", sz);
    if (!require_rank(c, out, "output", in->rank) || g1 <= 0 || g2 <= 0) return;
    bool ok = true;
    for (int32_t d = 0; d < in->rank; d++) {
        int64_t end;
        if (st[d] < 0) {
            tosac_check_error(c, "start[%d] is %lld; start must be >= 0", (int)d, (long long)st[d]);
            ok = false;
        } else if (sz[d] < 1) {
            tosac_check_error(c, "size[%d] is %lld; size must be >= 1", (int)d, (long long)sz[d]);
            ok = false;
        } else if (!tosac_checked_add(st[d], sz[d], &end) || end > in->shape[d]) {
            tosac_check_error(c, "start[%d] + size[%d] = %lld + %lld exceeds input dimension %lld", (int)d, (int)d,
                              (long long)st[d], (long long)sz[d], (long long)in->shape[d]);
            ok = false;
        }
    }
    if (ok) compare_output(c, out, sz, "the size operand");
}

void tosac_check_tile(tosac_check_ctx *c)
{
    const tosac_value *in = tosac_check_in(c, 0), *mult = tosac_check_in(c, 1), *out = tosac_check_out(c, 0);
    if (!in || !out || !tosac_rank_ok(in) || !tosac_rank_ok(out)) return;
    int64_t m[TOSAC_MAX_RANK], exp[TOSAC_MAX_RANK];
    int got = read_shape_vals(c, mult, "multiples", in->rank, "one per input dimension", m);
    if (!require_rank(c, out, "output", in->rank) || got <= 0) return;
    for (int32_t d = 0; d < in->rank; d++) {
        if (m[d] < 1) {
            tosac_check_error(c, "multiples[%d] is %lld; multiples must be >= 1", (int)d, (long long)m[d]);
            return;
        }
        if (!tosac_checked_mul(in->shape[d], m[d], &exp[d])) {
            tosac_check_error(c, "tiled size of dimension %d overflows", (int)d);
            return;
        }
    }
    compare_output(c, out, exp, "input dimension x multiples");
}

void tosac_check_transpose(tosac_check_ctx *c)
{
    const tosac_value *in = tosac_check_in(c, 0), *out = tosac_check_out(c, 0);
    if (!in || !out || !tosac_rank_ok(in) || !tosac_rank_ok(out)) return;
    uint32_t n = 0;
    const int32_t *perms = tosac_check_attr_ints(c, TOSAC_ATTR_TRANSPOSE_perms, &n);
    if ((int64_t)n != in->rank) {
        tosac_check_error(c, "perms has %u entries, expected one per input dimension (%d)", (unsigned)n, (int)in->rank);
        return;
    }
    bool seen[TOSAC_MAX_RANK] = {false};
    for (uint32_t i = 0; i < n; i++) {
        if (perms[i] < 0 || perms[i] >= in->rank) {
            tosac_check_error(c, "perms[%u] = %d is out of range [0, %d)", (unsigned)i, (int)perms[i], (int)in->rank);
            return;
        }
        if (seen[perms[i]]) {
            tosac_check_error(c, "perms is not a permutation: %d appears twice", (int)perms[i]);
            return;
        }
        seen[perms[i]] = true;
    }
    if (!require_rank(c, out, "output", in->rank)) return;
    int64_t exp[TOSAC_MAX_RANK];
    for (uint32_t i = 0; i < n; i++) exp[i] = in->shape[perms[i]];
    compare_output(c, out, exp, "output[i] = input[perms[i]]");
}

/* GATHER values[N,K,C], indices[N,W] -> output[N,W,C]. */
void tosac_check_gather(tosac_check_ctx *c)
{
    const tosac_value *values = tosac_check_in(c, 0), *indices = tosac_check_in(c, 1), *out = tosac_check_out(c, 0);
    if (!values || !indices || !out || !tosac_rank_ok(values) || !tosac_rank_ok(indices) || !tosac_rank_ok(out)) return;
    bool ok = require_rank(c, values, "values [N,K,C]", 3);
    ok = require_rank(c, indices, "indices [N,W]", 2) && ok;
    ok = require_rank(c, out, "output [N,W,C]", 3) && ok;
    if (!ok) return;
    int64_t N = values->shape[0], C = values->shape[2], W = indices->shape[1];
    ERROR_IF(c, indices->shape[0] != N, "indices batch N is %lld but values has N = %lld", (long long)indices->shape[0],
             (long long)N);
    int64_t exp[3] = {N, W, C};
    compare_output(c, out, exp, "[N,W,C] from values [N,K,C] and indices [N,W]");
}

/* SCATTER values_in[N,K,C], indices[N,W], input[N,W,C] -> values_out[N,K,C]. */
void tosac_check_scatter(tosac_check_ctx *c)
{
    const tosac_value *vin = tosac_check_in(c, 0), *indices = tosac_check_in(c, 1), *input = tosac_check_in(c, 2),
                      *out = tosac_check_out(c, 0);
    if (!vin || !indices || !input || !out) return;
    if (!tosac_rank_ok(vin) || !tosac_rank_ok(indices) || !tosac_rank_ok(input) || !tosac_rank_ok(out)) return;
    bool ok = require_rank(c, vin, "values_in [N,K,C]", 3);
    ok = require_rank(c, indices, "indices [N,W]", 2) && ok;
    ok = require_rank(c, input, "input [N,W,C]", 3) && ok;
    ok = require_rank(c, out, "values_out [N,K,C]", 3) && ok;
    if (!ok) return;
    int64_t N = vin->shape[0], C = vin->shape[2], W = indices->shape[1];
    ERROR_IF(c, indices->shape[0] != N, "indices batch N is %lld but values_in has N = %lld",
             (long long)indices->shape[0], (long long)N);
    int64_t exp_in[3] = {N, W, C};
    for (int d = 0; d < 3; d++) {
        if (input->shape[d] == exp_in[d]) continue;
        char a[192], b[192];
        tosac_check_error(c, "input shape %s does not match %s ([N,W,C] from values_in and indices)",
                          tosac_shape_str(input, a, sizeof a), tosac_dims_str(exp_in, 3, false, b, sizeof b));
        break;
    }
    compare_output(c, out, vin->shape, "values_out has the shape of values_in");
}
