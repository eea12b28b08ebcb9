/*
 * Family checks for the tensor operators (TOSA.md §B.2 group "tensor", §B.3):
 * CONV2D, CONV3D, DEPTHWISE_CONV2D, TRANSPOSE_CONV2D (tosac_check_conv), AVG_POOL2D and
 * MAX_POOL2D (tosac_check_pool2d), MATMUL, FFT2D/RFFT2D and ARGMAX.
 *
 * validate.c has already matched the operand counts/kinds and the type-support row (c->row) and
 * the acc_type attribute; what is left here are the shape, attribute-value, zero-point and level
 * rules. Every operand may be absent or have any rank and dims, constants may lack data, so each
 * access is guarded and all size arithmetic is overflow-checked int64.
 */
#include <stdio.h>

#include "tosa/check.h"

/* ------------------------------------------------------------------------------------------ */
/* Small helpers                                                                                 */

/* Compares the declared shape of `v` (rank n already verified) with the inferred dims (TOSAC_DIM_UNK dims
   are not compared) and reports one message naming every mismatching dim. */
static void check_inferred(tosac_check_ctx *c, const tosac_value *v, const char *what, const int64_t *exp, int n,
                           const char *const *names)
{
    if (!v || v->rank != n || (n && !v->shape)) return;
    char detail[256];
    size_t pos = 0;
    bool bad = false;
    detail[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (exp[i] == TOSAC_DIM_UNK || exp[i] == v->shape[i]) continue;
        bad = true;
        if (pos < sizeof detail) {
            int w = names ? snprintf(detail + pos, sizeof detail - pos, "%s%s %lld, expected %lld", pos ? "; " : "",
                                     names[i], (long long)v->shape[i], (long long)exp[i])
                          : snprintf(detail + pos, sizeof detail - pos, "%sdim %d is %lld, expected %lld",
                                     pos ? "; " : "", i, (long long)v->shape[i], (long long)exp[i]);
            if (w > 0) pos += (size_t)w;
        }
    }
    if (!bad) return;
    char got[192], want[192];
    tosac_check_error(c, "%s shape %s does not match the inferred %s (%s)", what, tosac_shape_str(v, got, sizeof got),
                      tosac_dims_str(exp, n, true, want, sizeof want), detail);
}

/* Zero-point operand: shape [1]; when `nonzero_ok` is false its value must be 0 (skipped when the
   constant data is absent, e.g. under EXT-DYNAMIC). `elem` names the governing element type. */
static void check_zp(tosac_check_ctx *c, const tosac_value *zp, const char *what, tosac_dtype elem, bool nonzero_ok)
{
    if (!tosac_check_shape_one(c, zp, what, false) || nonzero_ok) return;
    if (tosac_dtype_is_float(zp->dtype)) {
        uint32_t bits = 0;
        ERROR_IF(c, tosac_fp_const_is_zero(zp, &bits) == 0,
                 "%s (bits 0x%0*x) must be 0 for %s data (non-zero zero points are only allowed for INT8)", what,
                 (int)(tosac_dtype_bits(zp->dtype) / 4), (unsigned)bits, tosac_dtype_name(elem));
        return;
    }
    int64_t v = 0;
    if (!tosac_const_get_i64(zp, 0, &v)) return;
    ERROR_IF(c, v != 0, "%s %lld must be 0 for %s data (non-zero zero points are only allowed for INT8)", what,
             (long long)v, tosac_dtype_name(elem));
}

/* An I32V attribute that must have exactly `want` elements; NULL (after reporting) otherwise. */
static const int32_t *attr_vec(tosac_check_ctx *c, unsigned id, const char *name, uint32_t want)
{
    uint32_t n = 0;
    const int32_t *p = tosac_check_attr_ints(c, id, &n);
    if (!p || n != want) {
        tosac_check_error(c, "%s has %u elements, expected %u", name, (unsigned)(p ? n : 0), (unsigned)want);
        return NULL;
    }
    return p;
}

/*
 * Inferred output extent out = num/stride + 1 with num = in - 1 + pa + pb - (k - 1)*dil
 * (conv and pooling: pooling is the dil = 1 case). Reports a negative or non-integer quotient
 * and returns TOSAC_DIM_UNK then; TOSAC_DIM_UNK also when the inputs are unusable (reported elsewhere).
 */
static int64_t window_out(tosac_check_ctx *c, const char *axis, const char *formula, int64_t in, int64_t pa,
                          int64_t pb, int64_t k, int64_t dil, int64_t stride)
{
    if (in == TOSAC_DIM_UNK || k == TOSAC_DIM_UNK || in < 1 || k < 1 || dil < 1 || stride < 1) return TOSAC_DIM_UNK;
    int64_t num = 0, kk = 0;
    if (!tosac_checked_add(in - 1, pa, &num) || !tosac_checked_add(num, pb, &num) ||
        !tosac_checked_mul(k - 1, dil, &kk) || !tosac_checked_sub(num, kk, &num)) {
        tosac_check_error(c, "output %s %s overflows int64 (%s %lld, kernel %lld)", axis, formula, axis,
                          (long long)in, (long long)k);
        return TOSAC_DIM_UNK;
    }
    if (num < 0) {
        tosac_check_error(c, "output %s %s = %lld/%lld is negative: the kernel does not fit in the padded input",
                          axis, formula, (long long)num, (long long)stride);
        return TOSAC_DIM_UNK;
    }
    if (num % stride != 0) {
        tosac_check_error(c, "output %s %s = %lld/%lld is not an integer", axis, formula, (long long)num,
                          (long long)stride);
        return TOSAC_DIM_UNK;
    }
    return num / stride + 1;
}

/* ------------------------------------------------------------------------------------------ */
/* CONV2D, CONV3D, DEPTHWISE_CONV2D, TRANSPOSE_CONV2D                                            */

/* Per-axis names, depth first; 2-D ops use entries 1 and 2. */
static const char *const k_axis[3] = {"depth", "height", "width"};
static const char *const k_in_dim[3] = {"ID", "IH", "IW"};
static const char *const k_out_dim[3] = {"OD", "OH", "OW"};
static const char *const k_kdim[3] = {"KD", "KH", "KW"};
static const char *const k_pad[6] = {"pad_d0", "pad_d1", "pad_top", "pad_bottom", "pad_left", "pad_right"};
static const char *const k_out_pad[6] = {"", "", "out_pad_top", "out_pad_bottom", "out_pad_left", "out_pad_right"};
static const char *const k_stride[3] = {"stride_d", "stride_y", "stride_x"};
static const char *const k_dil[3] = {"dilation_d", "dilation_y", "dilation_x"};

/* Name of element i of the op's pad (or out_pad) attribute; a0 = first axis entry. */
static const char *pad_name(bool tr, int a0, int i)
{
    const int j = tr ? 2 + i : 2 * a0 + i;
    if (j < 0 || j >= 6) return "pad";
    return tr ? k_out_pad[j] : k_pad[j];
}

void tosac_check_conv(tosac_check_ctx *c)
{
    const uint32_t op = c->node->op;
    const bool is3d = op == TOSAC_OP_CONV3D;
    const bool dw = op == TOSAC_OP_DEPTHWISE_CONV2D;
    const bool tr = op == TOSAC_OP_TRANSPOSE_CONV2D;
    const int nsp = is3d ? 3 : 2; /* spatial axes */
    const int a0 = 3 - nsp;       /* first entry of the per-axis name tables */
    const int32_t rank = nsp + 2;

    const tosac_value *input = tosac_check_in(c, 0), *weight = tosac_check_in(c, 1), *bias = tosac_check_in(c, 2);
    const tosac_value *output = tosac_check_out(c, 0);

    /* zero points: non-zero only for INT8 input / INT8 weights */
    const tosac_dtype in_t = (tosac_dtype)c->row->t[0], w_t = (tosac_dtype)c->row->t[1];
    check_zp(c, tosac_check_in(c, 3), "input_zp", in_t, in_t == TOSAC_DTYPE_INT8);
    check_zp(c, tosac_check_in(c, 4), "weight_zp", w_t, w_t == TOSAC_DTYPE_INT8);

    const char *in_layout = is3d ? "[N,ID,IH,IW,IC]" : dw ? "[N,IH,IW,C]" : "[N,IH,IW,IC]";
    const char *w_layout = is3d ? "[OC,KD,KH,KW,IC]" : dw ? "[KH,KW,C,M]" : "[OC,KH,KW,IC]";
    const char *out_layout = is3d ? "[N,OD,OH,OW,OC]" : dw ? "[N,OH,OW,C*M]" : "[N,OH,OW,OC]";
    const bool in_ok = tosac_check_need_rank(c, input, "input", rank, in_layout);
    const bool w_ok = tosac_check_need_rank(c, weight, "weight", rank, w_layout);
    const bool b_ok = tosac_check_need_rank(c, bias, "bias", 1, "[BC]");
    const bool out_ok = tosac_check_need_rank(c, output, "output", rank, out_layout);

    /* attributes (field ids: pad/out_pad 0, stride 1, dilation 2 for all four ops) */
    const int32_t *pad = attr_vec(c, 0, tr ? "out_pad" : "pad", (uint32_t)(2 * nsp));
    const int32_t *stride = attr_vec(c, 1, "stride", (uint32_t)nsp);
    const int32_t *dil = tr ? NULL : attr_vec(c, 2, "dilation", (uint32_t)nsp);
    bool pad_ok = pad != NULL, stride_ok = stride != NULL, dil_ok = tr || dil != NULL;
    for (int i = 0; pad && !tr && i < 2 * nsp; i++) {
        if (pad[i] < 0) {
            tosac_check_error(c, "%s %d must be >= 0", pad_name(false, a0, i), (int)pad[i]);
            pad_ok = false;
        }
    }
    for (int i = 0; stride && i < nsp; i++) {
        if (stride[i] < 1) {
            tosac_check_error(c, "%s %d must be >= 1", k_stride[a0 + i], (int)stride[i]);
            stride_ok = false;
        }
    }
    for (int i = 0; dil && i < nsp; i++) {
        if (dil[i] < 1) {
            tosac_check_error(c, "%s %d must be >= 1", k_dil[a0 + i], (int)dil[i]);
            dil_ok = false;
        }
    }

    /* kernel extents and channels */
    int64_t k[3] = {TOSAC_DIM_UNK, TOSAC_DIM_UNK, TOSAC_DIM_UNK};
    int64_t oc = TOSAC_DIM_UNK;
    if (w_ok) {
        for (int i = 0; i < nsp; i++) k[i] = tosac_dim(weight, dw ? i : 1 + i);
        if (dw) {
            int64_t ch = tosac_dim(weight, 2), m = tosac_dim(weight, 3), prod = 0;
            if (ch != TOSAC_DIM_UNK && m != TOSAC_DIM_UNK && tosac_checked_mul(ch, m, &prod)) oc = prod;
        } else {
            oc = tosac_dim(weight, 0);
        }
        if (in_ok) {
            int64_t ic = tosac_dim(input, rank - 1), wic = tosac_dim(weight, dw ? 2 : rank - 1);
            ERROR_IF(c, ic != wic, "weight %s %lld does not match the input channels %s %lld", dw ? "C" : "IC",
                     (long long)wic, dw ? "C" : "IC", (long long)ic);
        }
    }
    if (b_ok && oc != TOSAC_DIM_UNK) {
        int64_t bc = tosac_dim(bias, 0);
        ERROR_IF(c, bc != oc && bc != 1, "bias length BC %lld must equal the output channels %s %lld or be 1",
                 (long long)bc, dw ? "C*M" : "OC", (long long)oc);
    }
    if (tr && pad && w_ok) {
        for (int i = 0; i < 4; i++) {
            int64_t kd = k[i / 2];
            ERROR_IF(c, kd != TOSAC_DIM_UNK && (int64_t)pad[i] <= -kd, "%s %d must be > -%s (-%lld)",
                     pad_name(true, a0, i), (int)pad[i], k_kdim[1 + i / 2], (long long)kd);
        }
    }

    /* output shape */
    if (in_ok && out_ok) {
        int64_t exp[5];
        const char *names[5];
        exp[0] = tosac_dim(input, 0);
        names[0] = "N";
        for (int i = 0; i < nsp; i++) {
            const int ax = a0 + i;
            const int64_t in = tosac_dim(input, 1 + i);
            names[1 + i] = k_out_dim[ax];
            exp[1 + i] = TOSAC_DIM_UNK;
            if (!pad_ok || !stride_ok || !dil_ok || !w_ok || in == TOSAC_DIM_UNK || k[i] == TOSAC_DIM_UNK || in < 1 ||
                k[i] < 1)
                continue;
            if (tr) {
                /* OH = (IH - 1)*stride_y + out_pad_top + out_pad_bottom + KH */
                int64_t v = 0;
                if (!tosac_checked_mul(in - 1, stride[i], &v) || !tosac_checked_add(v, pad[2 * i], &v) ||
                    !tosac_checked_add(v, pad[2 * i + 1], &v) || !tosac_checked_add(v, k[i], &v)) {
                    tosac_check_error(c, "output %s (%s-1)*%s+%s+%s+%s overflows int64", k_axis[ax], k_in_dim[ax],
                                      k_stride[ax], k_out_pad[2 * ax], k_out_pad[2 * ax + 1], k_kdim[ax]);
                    continue;
                }
                if (v < 1) {
                    tosac_check_error(c, "output %s (%s-1)*%s+%s+%s+%s = %lld is not positive", k_axis[ax],
                                      k_in_dim[ax], k_stride[ax], k_out_pad[2 * ax], k_out_pad[2 * ax + 1],
                                      k_kdim[ax], (long long)v);
                    continue;
                }
                exp[1 + i] = v;
            } else {
                char formula[96];
                snprintf(formula, sizeof formula, "(%s-1+%s+%s-(%s-1)*%s)/%s", k_in_dim[ax], k_pad[2 * ax],
                         k_pad[2 * ax + 1], k_kdim[ax], k_dil[ax], k_stride[ax]);
                exp[1 + i] =
                    window_out(c, k_axis[ax], formula, in, pad[2 * i], pad[2 * i + 1], k[i], dil[i], stride[i]);
            }
        }
        exp[rank - 1] = oc;
        names[rank - 1] = dw ? "C*M" : "OC";
        check_inferred(c, output, "output", exp, rank, names);
    }

    /* level limits (TOSA.md §B.2 "level:" lines) */
    const int64_t max_k = c->lim.max_kernel, max_s = c->lim.max_stride;
    for (int i = 0; i < nsp; i++) {
        const int ax = a0 + i;
        if (k[i] == TOSAC_DIM_UNK) continue;
        if (tr) {
            LEVEL_CHECK(c, k[i] <= max_k, "%s %lld exceeds MAX_KERNEL %lld (level %s)", k_kdim[ax], (long long)k[i],
                        (long long)max_k, tosac_check_level_name(c));
        } else if (dil && dil[i] >= 1) {
            int64_t ext = 0;
            bool ok = tosac_checked_mul(dil[i], k[i], &ext) && ext <= max_k;
            LEVEL_CHECK(c, ok, "%s*%s = %d*%lld exceeds MAX_KERNEL %lld (level %s)", k_dil[ax], k_kdim[ax],
                        (int)dil[i], (long long)k[i], (long long)max_k, tosac_check_level_name(c));
        }
    }
    for (int i = 0; pad && i < 2 * nsp; i++) {
        LEVEL_CHECK(c, pad[i] <= max_k, "%s %d exceeds MAX_KERNEL %lld (level %s)",
                    pad_name(tr, a0, i), (int)pad[i], (long long)max_k, tosac_check_level_name(c));
    }
    for (int i = 0; stride && i < nsp; i++) {
        LEVEL_CHECK(c, stride[i] <= max_s, "%s %d exceeds MAX_STRIDE %lld (level %s)", k_stride[a0 + i],
                    (int)stride[i], (long long)max_s, tosac_check_level_name(c));
    }
}

/* ------------------------------------------------------------------------------------------ */
/* AVG_POOL2D, MAX_POOL2D                                                                        */

void tosac_check_pool2d(tosac_check_ctx *c)
{
    const bool avg = c->node->op == TOSAC_OP_AVG_POOL2D;
    /* field ids: kernel 0, stride 1, pad 2 in both tables */
    const tosac_value *input = tosac_check_in(c, 0), *output = tosac_check_out(c, 0);

    if (avg) {
        const tosac_dtype t = (tosac_dtype)c->row->t[0];
        check_zp(c, tosac_check_in(c, 1), "input_zp", t, t == TOSAC_DTYPE_INT8);
        check_zp(c, tosac_check_in(c, 2), "output_zp", t, t == TOSAC_DTYPE_INT8);
    } else {
        tosac_check_nan_mode(c, TOSAC_ATTR_MAX_POOL2D_nan_mode, true);
    }

    const bool in_ok = tosac_check_need_rank(c, input, "input", 4, "[N,IH,IW,C]");
    const bool out_ok = tosac_check_need_rank(c, output, "output", 4, "[N,OH,OW,C]");
    const int32_t *kernel = attr_vec(c, 0, "kernel", 2);
    const int32_t *stride = attr_vec(c, 1, "stride", 2);
    const int32_t *pad = attr_vec(c, 2, "pad", 4);
    bool ok = kernel && stride && pad;
    static const char *const kname[2] = {"kernel_y", "kernel_x"};
    for (int i = 0; kernel && i < 2; i++) {
        if (kernel[i] < 1) {
            tosac_check_error(c, "%s %d must be >= 1", kname[i], (int)kernel[i]);
            ok = false;
        }
    }
    for (int i = 0; stride && i < 2; i++) {
        if (stride[i] < 1) {
            tosac_check_error(c, "%s %d must be >= 1", k_stride[1 + i], (int)stride[i]);
            ok = false;
        }
    }
    for (int i = 0; pad && i < 4; i++) {
        if (pad[i] < 0) {
            tosac_check_error(c, "%s %d must be >= 0", k_pad[2 + i], (int)pad[i]);
            ok = false;
        } else if (kernel && kernel[i / 2] >= 1 && pad[i] >= kernel[i / 2]) {
            tosac_check_error(c, "%s %d must be smaller than %s %d", k_pad[2 + i], (int)pad[i], kname[i / 2],
                              (int)kernel[i / 2]);
            ok = false;
        }
    }

    if (in_ok && out_ok) {
        static const char *const names[4] = {"N", "OH", "OW", "C"};
        static const char *const formula[2] = {"(IH+pad_top+pad_bottom-kernel_y)/stride_y",
                                               "(IW+pad_left+pad_right-kernel_x)/stride_x"};
        int64_t exp[4] = {tosac_dim(input, 0), TOSAC_DIM_UNK, TOSAC_DIM_UNK, tosac_dim(input, 3)};
        for (int i = 0; ok && i < 2; i++)
            exp[1 + i] = window_out(c, k_axis[1 + i], formula[i], tosac_dim(input, 1 + i), pad[2 * i], pad[2 * i + 1],
                                    kernel[i], 1, stride[i]);
        check_inferred(c, output, "output", exp, 4, names);
    }

    const int64_t max_k = c->lim.max_kernel, max_s = c->lim.max_stride;
    for (int i = 0; kernel && i < 2; i++)
        LEVEL_CHECK(c, kernel[i] <= max_k, "%s %d exceeds MAX_KERNEL %lld (level %s)", kname[i], (int)kernel[i],
                    (long long)max_k, tosac_check_level_name(c));
    for (int i = 0; stride && i < 2; i++)
        LEVEL_CHECK(c, stride[i] <= max_s, "%s %d exceeds MAX_STRIDE %lld (level %s)", k_stride[1 + i],
                    (int)stride[i], (long long)max_s, tosac_check_level_name(c));
    for (int i = 0; pad && i < 4; i++)
        LEVEL_CHECK(c, pad[i] <= max_k, "%s %d exceeds MAX_KERNEL %lld (level %s)", k_pad[2 + i], (int)pad[i],
                    (long long)max_k, tosac_check_level_name(c));
}

/* ------------------------------------------------------------------------------------------ */
/* MATMUL                                                                                        */

void tosac_check_matmul(tosac_check_ctx *c)
{
    const tosac_value *a = tosac_check_in(c, 0), *b = tosac_check_in(c, 1), *output = tosac_check_out(c, 0);
    const tosac_dtype t = (tosac_dtype)c->row->t[0];
    check_zp(c, tosac_check_in(c, 2), "A_zp", t, t == TOSAC_DTYPE_INT8);
    check_zp(c, tosac_check_in(c, 3), "B_zp", t, t == TOSAC_DTYPE_INT8);

    const bool a_ok = tosac_check_need_rank(c, a, "A", 3, "[N,H,C]");
    const bool b_ok = tosac_check_need_rank(c, b, "B", 3, "[N,C,W]");
    const bool out_ok = tosac_check_need_rank(c, output, "output", 3, "[N,H,W]");
    if (a_ok && b_ok) {
        ERROR_IF(c, tosac_dim(b, 0) != tosac_dim(a, 0), "B batch N %lld does not match A batch N %lld",
                 (long long)tosac_dim(b, 0), (long long)tosac_dim(a, 0));
        ERROR_IF(c, tosac_dim(b, 1) != tosac_dim(a, 2), "B rows C %lld do not match A columns C %lld",
                 (long long)tosac_dim(b, 1), (long long)tosac_dim(a, 2));
    }
    if (out_ok && (a_ok || b_ok)) {
        static const char *const names[3] = {"N", "H", "W"};
        int64_t exp[3] = {a_ok ? tosac_dim(a, 0) : tosac_dim(b, 0), a_ok ? tosac_dim(a, 1) : TOSAC_DIM_UNK,
                          b_ok ? tosac_dim(b, 2) : TOSAC_DIM_UNK};
        check_inferred(c, output, "output", exp, 3, names);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* FFT2D, RFFT2D                                                                                 */

static bool is_pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

void tosac_check_fft(tosac_check_ctx *c)
{
    const bool rfft = c->node->op == TOSAC_OP_RFFT2D;
    const tosac_value *re = tosac_check_in(c, 0), *im = rfft ? NULL : tosac_check_in(c, 1);
    const tosac_value *ore = tosac_check_out(c, 0), *oim = tosac_check_out(c, 1);
    char b1[192], b2[192];

    const bool re_ok = tosac_check_need_rank(c, re, "input_real", 3, "[N,H,W]");
    const bool im_ok = !rfft && tosac_check_need_rank(c, im, "input_imag", 3, "[N,H,W]");
    const bool ore_ok = tosac_check_need_rank(c, ore, "output_real", 3, rfft ? "[N,H,W/2+1]" : "[N,H,W]");
    const bool oim_ok = tosac_check_need_rank(c, oim, "output_imag", 3, rfft ? "[N,H,W/2+1]" : "[N,H,W]");

    if (re_ok) {
        const int64_t h = tosac_dim(re, 1), w = tosac_dim(re, 2);
        ERROR_IF(c, !is_pow2(h), "input height H %lld is not a power of two", (long long)h);
        ERROR_IF(c, !is_pow2(w), "input width W %lld is not a power of two", (long long)w);
        LEVEL_CHECK(c, h <= c->lim.max_kernel, "H %lld exceeds MAX_KERNEL %lld (level %s)", (long long)h,
                    (long long)c->lim.max_kernel, tosac_check_level_name(c));
        LEVEL_CHECK(c, w <= c->lim.max_kernel, "W %lld exceeds MAX_KERNEL %lld (level %s)", (long long)w,
                    (long long)c->lim.max_kernel, tosac_check_level_name(c));
    }
    if (re_ok && im_ok)
        ERROR_IF(c, !tosac_same_shape(re, im), "input_imag shape %s does not match input_real shape %s",
                 tosac_shape_str(im, b1, sizeof b1), tosac_shape_str(re, b2, sizeof b2));
    if (ore_ok && oim_ok)
        ERROR_IF(c, !tosac_same_shape(ore, oim), "output_imag shape %s does not match output_real shape %s",
                 tosac_shape_str(oim, b1, sizeof b1), tosac_shape_str(ore, b2, sizeof b2));
    if (re_ok) {
        static const char *const names[3] = {"N", "H", "W"};
        int64_t exp[3] = {tosac_dim(re, 0), tosac_dim(re, 1), tosac_dim(re, 2)};
        if (rfft) {
            static const char *const rnames[3] = {"N", "H", "W/2+1"};
            exp[2] = exp[2] == TOSAC_DIM_UNK ? TOSAC_DIM_UNK : exp[2] / 2 + 1;
            if (ore_ok) check_inferred(c, ore, "output_real", exp, 3, rnames);
            if (oim_ok) check_inferred(c, oim, "output_imag", exp, 3, rnames);
        } else {
            if (ore_ok) check_inferred(c, ore, "output_real", exp, 3, names);
            if (oim_ok) check_inferred(c, oim, "output_imag", exp, 3, names);
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* ARGMAX                                                                                        */

void tosac_check_argmax(tosac_check_ctx *c)
{
    const tosac_value *input = tosac_check_in(c, 0), *output = tosac_check_out(c, 0);
    tosac_check_nan_mode(c, TOSAC_ATTR_ARGMAX_nan_mode, true);
    if (!input) return;
    const int64_t axis = tosac_check_attr_int(c, TOSAC_ATTR_ARGMAX_axis, 0);
    if (input->rank < 1) {
        tosac_check_error(c, "input must have rank >= 1, has rank %d", (int)input->rank);
        return;
    }
    if (axis < 0 || axis >= input->rank) {
        tosac_check_error(c, "axis %lld is out of range for input rank %d (must be in [0, %d])", (long long)axis,
                          (int)input->rank, (int)input->rank - 1);
        return;
    }
    if (!output) return;
    if (output->rank != input->rank - 1) {
        tosac_check_error(c, "output rank %d must be input rank - 1 = %d (axis %lld removed)", (int)output->rank,
                          (int)input->rank - 1, (long long)axis);
        return;
    }
    if (!input->shape) return;
    int64_t exp[TOSAC_MAX_RANK];
    int n = 0;
    for (int32_t i = 0; i < input->rank && n < TOSAC_MAX_RANK; i++)
        if (i != axis) exp[n++] = input->shape[i];
    check_inferred(c, output, "output", exp, n, NULL);
}
