/*
 * Family checks for CLAMP, TABLE, RESIZE and RESCALE (TOSA.md §B.2, §B.3).
 *
 * validate.c has already matched operand counts/kinds and the type-support row (c->row); this
 * file checks shapes, attribute values, constant inputs (table length, scale/offset/border
 * values, multiplier/shift lengths, zero points) and the level limits. Constants may lack data
 * (EXT-DYNAMIC or hostile files): value rules are then skipped. Every index is guarded and all
 * arithmetic on values from the graph is overflow-checked int64.
 */
#include <math.h>
#include <stdio.h>

#include "core/fp.h"
#include "tosa/check.h"

/* Output shape must equal the input shape (elementwise-style ops). */
static void check_same_shape(tosac_check_ctx *c, const tosac_value *input, const tosac_value *output)
{
    if (!input || !output) return;
    char b1[192], b2[192];
    ERROR_IF(c, !tosac_same_shape(input, output), "output shape %s does not match the input shape %s",
             tosac_shape_str(output, b1, sizeof b1), tosac_shape_str(input, b2, sizeof b2));
}

/* ------------------------------------------------------------------------------------------ */
/* CLAMP                                                                                         */

/* Decodes one in_out_t value from the raw attribute bytes (len already verified). */
static double clamp_decode(tosac_dtype t, const uint8_t *p)
{
    switch (t) {
    case TOSAC_DTYPE_INT8: return p[0] >= 0x80 ? (double)p[0] - 256.0 : (double)p[0];
    case TOSAC_DTYPE_INT16: {
        uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8;
        return u >= 0x8000 ? (double)u - 65536.0 : (double)u;
    }
    case TOSAC_DTYPE_FP16: return tosac_fp16_to_fp32((uint16_t)(p[0] | p[1] << 8));
    case TOSAC_DTYPE_BF16: return tosac_bf16_to_fp32((uint16_t)(p[0] | p[1] << 8));
    case TOSAC_DTYPE_FP32: {
        uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
        return tosac_fp32_from_bits(u);
    }
    default: return 0.0;
    }
}

void tosac_check_clamp(tosac_check_ctx *c)
{
    const tosac_value *input = tosac_check_in(c, 0), *output = tosac_check_out(c, 0);
    check_same_shape(c, input, output);
    tosac_check_nan_mode(c, TOSAC_ATTR_CLAMP_nan_mode, true);

    const tosac_dtype t = (tosac_dtype)c->row->t[0];
    const uint32_t size = tosac_dtype_bits(t) / 8;
    const bool is_fp = tosac_dtype_is_float(t);
    if (size == 0 || size > 4) return;
    static const char *const names[2] = {"min_val", "max_val"};
    const unsigned ids[2] = {TOSAC_ATTR_CLAMP_min_val, TOSAC_ATTR_CLAMP_max_val};
    double val[2] = {0, 0};
    bool ok = true;
    for (int i = 0; i < 2; i++) {
        const tosac_attr_val *a = &c->node->attr[ids[i]];
        const uint32_t len = a->present && a->data ? a->len : 0;
        const uint8_t *p = (const uint8_t *)a->data;
        /* One in_out_t value (TOSA.md §A.6). The reference model's conformance generator pads the
           vector with zeros to 8 bytes (force_align), and the reference model reads only the first
           value, so that form is accepted too; non-zero padding means a mis-encoded value. */
        bool len_ok = len == size;
        if (len == 8) {
            len_ok = true;
            for (uint32_t k = size; k < 8; k++)
                if (p[k] != 0) len_ok = false;
        }
        if (!len_ok) {
            tosac_check_error(c, "%s has %u bytes, expected %u (one %s value, optionally zero-padded to 8 bytes)",
                              names[i], (unsigned)len, (unsigned)size, tosac_dtype_name(t));
            ok = false;
            continue;
        }
        val[i] = clamp_decode(t, p);
        if (is_fp && isnan(val[i])) {
            tosac_check_error(c, "%s is NaN", names[i]);
            ok = false;
        }
    }
    if (!ok) return;
    if (is_fp)
        ERROR_IF(c, val[1] < val[0], "max_val %g is smaller than min_val %g", val[1], val[0]);
    else
        ERROR_IF(c, val[1] < val[0], "max_val %lld is smaller than min_val %lld", (long long)val[1],
                 (long long)val[0]);
}

/* ------------------------------------------------------------------------------------------ */
/* TABLE                                                                                         */

void tosac_check_table(tosac_check_ctx *c)
{
    const tosac_value *input = tosac_check_in(c, 0), *table = tosac_check_in(c, 1), *output = tosac_check_out(c, 0);
    check_same_shape(c, input, output);
    if (!table) return;
    const tosac_dtype t = (tosac_dtype)c->row->t[0];
    const int64_t size = t == TOSAC_DTYPE_INT16 ? 513 : 256;
    if (table->rank != 1 || !table->shape) {
        char buf[192];
        tosac_check_error(c, "table must have shape [%lld] (TABLE_SIZE for %s input), has shape %s", (long long)size,
                          tosac_dtype_name(t), tosac_shape_str(table, buf, sizeof buf));
        return;
    }
    ERROR_IF(c, table->shape[0] != size, "table has %lld elements, expected TABLE_SIZE %lld for %s input",
             (long long)table->shape[0], (long long)size, tosac_dtype_name(t));
}

/* ------------------------------------------------------------------------------------------ */
/* RESIZE                                                                                        */

/* Reads the `want` values of a shape operand into out[]; false (after reporting a wrong count) if
   the count is wrong, false silently if the data is absent. */
static bool shape_values(tosac_check_ctx *c, const tosac_value *v, const char *what, const char *layout,
                         int64_t want, int64_t *out)
{
    if (!v) return false;
    int64_t n = tosac_check_nelem(v);
    if (n != want || v->rank != 1) {
        tosac_check_error(c, "%s has %lld values, expected %lld %s", what, (long long)n, (long long)want, layout);
        return false;
    }
    for (int64_t i = 0; i < want; i++)
        if (!tosac_const_get_i64(v, i, &out[i])) return false;
    return true;
}

void tosac_check_resize(tosac_check_ctx *c)
{
    const tosac_value *input = tosac_check_in(c, 0), *output = tosac_check_out(c, 0);
    const tosac_dtype in_t = (tosac_dtype)c->row->t[1], out_t = (tosac_dtype)c->row->t[2];

    const int64_t mode = tosac_check_attr_int(c, TOSAC_ATTR_RESIZE_mode, TOSAC_RESIZE_UNKNOWN);
    if (mode != TOSAC_RESIZE_NEAREST && mode != TOSAC_RESIZE_BILINEAR) {
        tosac_check_error(c, "mode %s (%lld) is not a valid resize mode (NEAREST or BILINEAR)",
                          mode == TOSAC_RESIZE_UNKNOWN ? "UNKNOWN" : "out of range", (long long)mode);
    } else if (!tosac_dtype_is_float(in_t)) {
        /* integer rows come in pairs: BILINEAR widens (i8->i32, i16->i48), NEAREST keeps the type */
        ERROR_IF(c, mode == TOSAC_RESIZE_BILINEAR && out_t == in_t,
                 "mode BILINEAR requires a widened output (%s input gives %s), not %s", tosac_dtype_name(in_t),
                 in_t == TOSAC_DTYPE_INT8 ? "INT32" : "INT48", tosac_dtype_name(out_t));
        ERROR_IF(c, mode == TOSAC_RESIZE_NEAREST && out_t != in_t,
                 "mode NEAREST requires the output type to equal the input type %s, not %s", tosac_dtype_name(in_t),
                 tosac_dtype_name(out_t));
    }

    const bool in_ok = tosac_check_need_rank(c, input, "input", 4, "[N,IH,IW,C]");
    const bool out_ok = tosac_check_need_rank(c, output, "output", 4, "[N,OH,OW,C]");
    if (in_ok && out_ok) {
        ERROR_IF(c, tosac_dim(output, 0) != tosac_dim(input, 0),
                 "output batch N %lld does not match the input batch N %lld", (long long)tosac_dim(output, 0),
                 (long long)tosac_dim(input, 0));
        ERROR_IF(c, tosac_dim(output, 3) != tosac_dim(input, 3),
                 "output channels C %lld do not match the input channels C %lld", (long long)tosac_dim(output, 3),
                 (long long)tosac_dim(input, 3));
    }
    {
        int64_t mx = INT64_MIN;
        const char *which = "";
        static const char *const nm[4] = {"IH", "IW", "OH", "OW"};
        const int64_t d[4] = {in_ok ? tosac_dim(input, 1) : TOSAC_DIM_UNK, in_ok ? tosac_dim(input, 2) : TOSAC_DIM_UNK,
                              out_ok ? tosac_dim(output, 1) : TOSAC_DIM_UNK,
                              out_ok ? tosac_dim(output, 2) : TOSAC_DIM_UNK};
        for (int i = 0; i < 4; i++)
            if (d[i] != TOSAC_DIM_UNK && d[i] > mx) {
                mx = d[i];
                which = nm[i];
            }
        ERROR_IF(c, mx >= 16384, "max(OH,OW,IH,IW) = %s %lld must be < 16384", which, (long long)mx);
    }

    int64_t scale[4], offset[2], border[2];
    const bool s_ok =
        shape_values(c, tosac_check_in(c, 1), "scale", "[scale_y_n,scale_y_d,scale_x_n,scale_x_d]", 4, scale);
    const bool o_ok = shape_values(c, tosac_check_in(c, 2), "offset", "[offset_y,offset_x]", 2, offset);
    const bool b_ok = shape_values(c, tosac_check_in(c, 3), "border", "[border_y,border_x]", 2, border);
    if (!s_ok) return;

    static const char *const axis[2] = {"height", "width"};
    static const char *const yx[2] = {"y", "x"};
    int64_t exp[4] = {in_ok ? tosac_dim(input, 0) : TOSAC_DIM_UNK, TOSAC_DIM_UNK, TOSAC_DIM_UNK,
                      in_ok ? tosac_dim(input, 3) : TOSAC_DIM_UNK};
    for (int j = 0; j < 2; j++) {
        const int64_t n = scale[2 * j], d = scale[2 * j + 1];
        const char *a = yx[j];
        bool ok = true;
        if (n <= 0 || d <= 0) {
            ERROR_IF(c, n <= 0, "scale_%s_n %lld must be > 0", a, (long long)n);
            ERROR_IF(c, d <= 0, "scale_%s_d %lld must be > 0", a, (long long)d);
            continue;
        }
        if (n > 2048) {
            tosac_check_error(c, "scale_%s_n %lld exceeds 2048", a, (long long)n);
            ok = false;
        }
        int64_t n16 = INT64_MAX;
        const bool n16_ok = tosac_checked_mul(n, 16, &n16); /* overflow: 16*n is beyond every int64 value */
        if (n16_ok && d >= n16) {
            tosac_check_error(c, "scale_%s_d %lld must be < 16*scale_%s_n = %lld", a, (long long)d, a,
                              (long long)n16);
            ok = false;
        }
        if (o_ok && (offset[j] < -n || (n16_ok && offset[j] >= n16))) {
            tosac_check_error(c, "offset_%s %lld must be in [-scale_%s_n, 16*scale_%s_n) = [%lld, %lld)", a,
                              (long long)offset[j], a, a, (long long)-n, (long long)(n16_ok ? n16 : INT64_MAX));
            ok = false;
        }
        if (b_ok && ((n16_ok && border[j] < -n16) || border[j] >= n)) {
            tosac_check_error(c, "border_%s %lld must be in [-16*scale_%s_n, scale_%s_n) = [%lld, %lld)", a,
                              (long long)border[j], a, a, (long long)(n16_ok ? -n16 : INT64_MIN), (long long)n);
            ok = false;
        }
        LEVEL_CHECK(c, n / d <= c->lim.max_scale, "scale_%s_n/scale_%s_d = %lld/%lld exceeds MAX_SCALE %lld (level %s)",
                    a, a, (long long)n, (long long)d, (long long)c->lim.max_scale, tosac_check_level_name(c));

        /* O = ((I - 1)*scale_n - offset + border)/scale_d + 1, exact */
        const int64_t in = in_ok ? tosac_dim(input, 1 + j) : TOSAC_DIM_UNK;
        if (!ok || !o_ok || !b_ok || in == TOSAC_DIM_UNK || in < 1) continue;
        int64_t num = 0;
        if (!tosac_checked_mul(in - 1, n, &num) || !tosac_checked_sub(num, offset[j], &num) ||
            !tosac_checked_add(num, border[j], &num)) {
            tosac_check_error(c, "output %s ((I%s-1)*scale_%s_n-offset_%s+border_%s)/scale_%s_d overflows int64",
                              axis[j], j ? "W" : "H", a, a, a, a);
            continue;
        }
        if (num < 0 || num % d != 0) {
            tosac_check_error(c, "output %s ((I%s-1)*scale_%s_n-offset_%s+border_%s)/scale_%s_d = %lld/%lld %s",
                              axis[j], j ? "W" : "H", a, a, a, a, (long long)num, (long long)d,
                              num < 0 ? "is negative" : "is not an integer");
            continue;
        }
        exp[1 + j] = num / d + 1;
    }
    if (in_ok && out_ok &&
        ((exp[1] != TOSAC_DIM_UNK && exp[1] != tosac_dim(output, 1)) ||
         (exp[2] != TOSAC_DIM_UNK && exp[2] != tosac_dim(output, 2)))) {
        /* batch/channel mismatches were reported above; this compares the spatial dims */
        char got[192], want[192], hs[24] = "?", ws[24] = "?";
        if (exp[1] != TOSAC_DIM_UNK) snprintf(hs, sizeof hs, "%lld", (long long)exp[1]);
        if (exp[2] != TOSAC_DIM_UNK) snprintf(ws, sizeof ws, "%lld", (long long)exp[2]);
        snprintf(want, sizeof want, "[%lld,%s,%s,%lld]", (long long)exp[0], hs, ws, (long long)exp[3]);
        tosac_check_error(c, "output shape %s does not match the inferred %s", tosac_shape_str(output, got, sizeof got),
                          want);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* RESCALE                                                                                       */

static bool is_i32_or_i48(tosac_dtype t) { return t == TOSAC_DTYPE_INT32 || t == TOSAC_DTYPE_INT48; }

/* Zero point rule: any value for i8 (either signedness); 0 or 32768 for unsigned i16; else 0. */
static void rescale_zp(tosac_check_ctx *c, const tosac_value *zp, const char *what, tosac_dtype t, bool is_unsigned,
                       const char *side)
{
    if (!tosac_check_shape_one(c, zp, what, false)) return;
    int64_t v = 0;
    if (t == TOSAC_DTYPE_INT8 || !tosac_const_get_i64(zp, 0, &v)) return;
    if (t == TOSAC_DTYPE_INT16 && is_unsigned) {
        /* the i16 pattern read as u16 (32768 is stored as -32768) */
        const int64_t ext = (int64_t)((uint64_t)v & 0xFFFFu);
        ERROR_IF(c, ext != 0 && ext != 32768, "%s %lld must be 0 or 32768 for unsigned INT16 %s", what,
                 (long long)ext, side);
        return;
    }
    ERROR_IF(c, v != 0,
             "%s %lld must be 0 for %s%s %s (non-zero zero points are only allowed for INT8 and unsigned INT16)", what,
             (long long)v, is_unsigned ? "unsigned " : "", tosac_dtype_name(t), side);
}

void tosac_check_rescale(tosac_check_ctx *c)
{
    const tosac_value *input = tosac_check_in(c, 0), *output = tosac_check_out(c, 0);
    const tosac_dtype in_t = (tosac_dtype)c->row->t[0], out_t = (tosac_dtype)c->row->t[1];
    const bool scale32 = tosac_check_attr_int(c, TOSAC_ATTR_RESCALE_scale32, 0) != 0;
    const int64_t rm = tosac_check_attr_int(c, TOSAC_ATTR_RESCALE_rounding_mode, TOSAC_ROUND_UNKNOWN);
    const bool per_channel = tosac_check_attr_int(c, TOSAC_ATTR_RESCALE_per_channel, 0) != 0;
    const bool iu = tosac_check_attr_int(c, TOSAC_ATTR_RESCALE_input_unsigned, 0) != 0;
    const bool ou = tosac_check_attr_int(c, TOSAC_ATTR_RESCALE_output_unsigned, 0) != 0;
    const uint32_t ext = c->opts ? c->opts->extensions : 0;

    /* the order of TOSA.md §B.3 RESCALE */
    if (rm != TOSAC_ROUND_SINGLE && rm != TOSAC_ROUND_DOUBLE && rm != TOSAC_ROUND_INEXACT) {
        tosac_check_error(c, "rounding_mode %s (%lld) is not valid (SINGLE_ROUND, INEXACT_ROUND or DOUBLE_ROUND)",
                          rm == TOSAC_ROUND_UNKNOWN ? "UNKNOWN" : "out of range", (long long)rm);
    }
    ERROR_IF(c, rm == TOSAC_ROUND_DOUBLE && !(ext & TOSAC_EXT_DOUBLEROUND),
             "rounding_mode DOUBLE_ROUND requires extension EXT-DOUBLEROUND, which is not enabled");
    ERROR_IF(c, rm == TOSAC_ROUND_INEXACT && !(ext & TOSAC_EXT_INEXACTROUND),
             "rounding_mode INEXACT_ROUND requires extension EXT-INEXACTROUND, which is not enabled");
    ERROR_IF(c, scale32 && in_t == TOSAC_DTYPE_INT48, "scale32 must be false for INT48 input");
    ERROR_IF(c, !scale32 && rm == TOSAC_ROUND_DOUBLE, "rounding_mode DOUBLE_ROUND requires scale32 to be true");
    ERROR_IF(c, iu && ou, "input_unsigned and output_unsigned cannot both be true");
    ERROR_IF(c, out_t == TOSAC_DTYPE_INT32 && iu, "input_unsigned is not allowed with INT32 output");
    ERROR_IF(c, is_i32_or_i48(in_t) && ou, "output_unsigned is not allowed with %s input", tosac_dtype_name(in_t));
    ERROR_IF(c, is_i32_or_i48(in_t) && iu, "input_unsigned is not allowed for %s input", tosac_dtype_name(in_t));
    ERROR_IF(c, out_t == TOSAC_DTYPE_INT32 && ou, "output_unsigned is not allowed for INT32 output");

    const bool rank0 = input && input->rank == 0;
    ERROR_IF(c, per_channel && rank0, "per_channel requires an input of rank >= 1, input has rank 0");
    const int64_t nc =
        !per_channel ? 1 : (input && input->rank > 0) ? tosac_dim(input, input->rank - 1) : TOSAC_DIM_UNK;
    static const char *const pname[2] = {"multiplier", "shift"};
    for (uint32_t i = 0; i < 2; i++) {
        const tosac_value *v = tosac_check_in(c, 1 + i);
        if (!v) continue;
        char buf[192];
        if (v->rank != 1 || !v->shape) {
            tosac_check_error(c, "%s must have rank 1 [NC], has shape %s", pname[i],
                              tosac_shape_str(v, buf, sizeof buf));
            continue;
        }
        if (nc == TOSAC_DIM_UNK) continue;
        ERROR_IF(c, v->shape[0] != nc, "%s has %lld elements, expected %lld (%s)", pname[i], (long long)v->shape[0],
                 (long long)nc, per_channel ? "per_channel: the last input dim" : "per_channel false");
    }
    check_same_shape(c, input, output);

    rescale_zp(c, tosac_check_in(c, 3), "input_zp", in_t, iu, "input");
    rescale_zp(c, tosac_check_in(c, 4), "output_zp", out_t, ou, "output");
}
