/*
 * RESIZE (TOSA.md §B.3 "RESIZE"): input[N,IH,IW,C] -> output[N,OH,OW,C], scale = [scale_y_n,
 * scale_y_d, scale_x_n, scale_x_d], offset = [offset_y, offset_x], border = [border_y, border_x]
 * (SHAPE operands), mode NEAREST or BILINEAR.
 *
 * Per output (oy, ox): y = oy*scale_y_d + offset_y, iy = floor(y / scale_y_n) (floor division on
 * integers), dy = y - iy*scale_y_n; iy0 = max(iy, 0), iy1 = min(iy + 1, IH - 1); same for x.
 *   Integer rows: BILINEAR (i8->i32, i16->i48) is the exact sum
 *     v00*(Sy-dy)*(Sx-dx) + v01*(Sy-dy)*dx + v10*dy*(Sx-dx) + v11*dy*dx   (Sy = scale_y_n, Sx = scale_x_n),
 *   i.e. scaled by Sy*Sx; NEAREST (i8->i8, i16->i16) takes iy1 when 2*dy >= Sy (ties up), else iy0.
 *   FP rows: fy = (float)y / (float)scale_y_n, dy = fy - iy, computed in fp32 exactly as the
 *     reference model does for fp32 (one operation per statement, so no contraction); BILINEAR sums
 *     v00*(1-dy)*(1-dx) + v01*(1-dy)*dx + v10*dy*(1-dx) + v11*dy*dx in that order; NEAREST takes 1
 *     when d >= 0.5. fp16/bf16 run the same fp32 computation and round once to the output type;
 *     precise mode (f64 storage) computes everything in double.
 * Loop order n, oy, ox, c: the coordinate arithmetic is done once per output pixel and the channel
 * loop is contiguous on both sides (NEAREST copies whole channel rows with memcpy).
 */
#include <string.h>

#include "kernels/kutil.h"

/* floor(a / b) for b > 0, without relying on the sign of C's remainder beyond C99's truncation. */
static inline int32_t kz_floordiv(int32_t a, int32_t b)
{
    int32_t q = a / b;
    if (a % b != 0 && a < 0) q--;
    return q;
}

/* Exact int64 -> fp32 (|v| < 2^53 here), rounded to nearest even in software. */
static inline float kz_f32(int64_t v) { return tosac_fp64_to_fp32((double)v); }

/* One axis' sampling position. */
typedef struct kz_pos {
    int64_t i0, i1; /* clamped source indices */
    int64_t d;      /* integer fraction, 0 <= d < scale_n */
    float df;       /* fp32 fraction */
    double dd;      /* fp64 fraction */
} kz_pos;

static inline void kz_position(int64_t o, int64_t sn, int64_t sd, int64_t off, int64_t in_dim, kz_pos *p)
{
    /* the run's checks (o < 16384, scale_d < 16 * scale_n <= 32768, |offset| < 32768) keep |v| < 2^30:
       32-bit division, native on 32-bit targets */
    const int64_t v = o * sd + off;
    const int64_t i = kz_floordiv((int32_t)v, (int32_t)sn);
    p->d = v - i * sn;
    const float fv = kz_f32(v) / kz_f32(sn);
    p->df = fv - kz_f32(i);
    p->dd = (double)v / (double)sn - (double)i;
    p->i0 = i > 0 ? i : 0;
    p->i1 = i + 1 < in_dim - 1 ? i + 1 : in_dim - 1;
}

/* Integer BILINEAR channel loop: IT input, OT output (exact, scaled by sy*sx). */
#define KZ_BILINEAR_INT(NAME, IT, OT)                                                                     \
    static void NAME(OT *o, const IT *p00, const IT *p01, const IT *p10, const IT *p11, int64_t C,        \
                     int64_t wy0, int64_t wy1, int64_t wx0, int64_t wx1)                                  \
    {                                                                                                     \
        const int64_t w00 = wy0 * wx0, w01 = wy0 * wx1, w10 = wy1 * wx0, w11 = wy1 * wx1;                 \
        for (int64_t c = 0; c < C; c++)                                                                   \
            o[c] = (OT)((int64_t)p00[c] * w00 + (int64_t)p01[c] * w01 + (int64_t)p10[c] * w10 +           \
                        (int64_t)p11[c] * w11);                                                           \
    }
KZ_BILINEAR_INT(kz_bil_i8_i32, int8_t, int32_t)
KZ_BILINEAR_INT(kz_bil_i16_i48, int16_t, int64_t)
#undef KZ_BILINEAR_INT

/*
 * FP BILINEAR channel loop computed in CT (float or double): ET storage element, LOAD/STORE
 * convert. Each operation is its own statement (no FMA contraction, fixed evaluation order).
 */
#define KZ_BILINEAR_FP(NAME, ET, CT, LOAD, STORE)                                                        \
    static void NAME(ET *o, const ET *p00, const ET *p01, const ET *p10, const ET *p11, int64_t C, CT dy, \
                     CT dx)                                                                             \
    {                                                                                                   \
        const CT one = 1;                                                                               \
        const CT wy0 = one - dy;                                                                        \
        const CT wx0 = one - dx;                                                                        \
        for (int64_t c = 0; c < C; c++) {                                                               \
            CT t, acc;                                                                                  \
            t = (CT)LOAD(p00[c]) * wy0;                                                                 \
            acc = t * wx0;                                                                              \
            t = (CT)LOAD(p01[c]) * wy0;                                                                 \
            t = t * dx;                                                                                 \
            acc = acc + t;                                                                              \
            t = (CT)LOAD(p10[c]) * dy;                                                                  \
            t = t * wx0;                                                                                \
            acc = acc + t;                                                                              \
            t = (CT)LOAD(p11[c]) * dy;                                                                  \
            t = t * dx;                                                                                 \
            acc = acc + t;                                                                              \
            o[c] = STORE(acc);                                                                          \
        }                                                                                               \
    }
#define KZ_ID(x) (x)
KZ_BILINEAR_FP(kz_bil_f32, float, float, KZ_ID, KZ_ID)
KZ_BILINEAR_FP(kz_bil_f16, uint16_t, float, tosac_fp16_to_fp32, tosac_fp32_to_fp16)
KZ_BILINEAR_FP(kz_bil_bf16, uint16_t, float, tosac_bf16_to_fp32, tosac_fp32_to_bf16)
KZ_BILINEAR_FP(kz_bil_f64, double, double, KZ_ID, KZ_ID)
#undef KZ_BILINEAR_FP
#undef KZ_ID

enum kz_kind {
    KZ_NEAREST_INT, /* any NEAREST row decided on the integer fraction: memcpy of the channel row */
    KZ_NEAREST_F32,
    KZ_NEAREST_F64,
    KZ_BIL_I8,  /* i8 -> i32 */
    KZ_BIL_I16, /* i16 -> i48 */
    KZ_BIL_F32,
    KZ_BIL_F16,
    KZ_BIL_BF16,
    KZ_BIL_F64
};

tosac_status tosac_kernel_resize(tosac_kcall *c)
{
    const tosac_ktensor *in = &c->in[0], *out = &c->out[0];
    if (c->n_in < 4 || in->rank != 4 || out->rank != 4 || c->in[1].nelem != 4 || c->in[2].nelem != 2 ||
        c->in[3].nelem != 2)
        return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "RESIZE: operand shapes");
    const int64_t *scale = (const int64_t *)c->in[1].data, *offset = (const int64_t *)c->in[2].data,
                  *border = (const int64_t *)c->in[3].data;
    const int64_t mode = tosac_kattr_int(c, TOSAC_ATTR_RESIZE_mode, TOSAC_RESIZE_UNKNOWN);
    const int64_t N = in->shape[0], IH = in->shape[1], IW = in->shape[2], C = in->shape[3];
    const int64_t OH = out->shape[1], OW = out->shape[2];
    const int64_t syn = scale[0], syd = scale[1], sxn = scale[2], sxd = scale[3];
    const int64_t offy = offset[0], offx = offset[1];

    /* the ERROR_IF rules that keep every read inside the input */
    if (out->shape[0] != N || out->shape[3] != C)
        return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "RESIZE: output batch/channels differ from the input");
    if (IH >= 16384 || IW >= 16384 || OH >= 16384 || OW >= 16384)
        return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "RESIZE: max(OH,OW,IH,IW) must be < 16384");
    if (syn <= 0 || syd <= 0 || sxn <= 0 || sxd <= 0 || syn > 2048 || sxn > 2048 || syd >= 16 * syn ||
        sxd >= 16 * sxn)
        return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "RESIZE: invalid scale");
    if (offy < -syn || offy >= 16 * syn || offx < -sxn || offx >= 16 * sxn)
        return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "RESIZE: invalid offset");
    if (border[0] < -16 * syn || border[0] >= syn || border[1] < -16 * sxn || border[1] >= sxn)
        return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "RESIZE: invalid border");
    if ((OH - 1) * syd != (IH - 1) * syn - offy + border[0] || (OW - 1) * sxd != (IW - 1) * sxn - offx + border[1])
        return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "RESIZE: output height/width do not match scale, offset and border");

    const bool fp = tosac_dtype_is_float(in->dtype);
    enum kz_kind kind;
    if (mode == TOSAC_RESIZE_NEAREST) {
        if (out->dtype != in->dtype || out->f64 != in->f64)
            return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "RESIZE: NEAREST needs equal input and output types");
        if (!fp && in->dtype != TOSAC_DTYPE_INT8 && in->dtype != TOSAC_DTYPE_INT16)
            return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "RESIZE: input type");
        if (fp && in->dtype != TOSAC_DTYPE_FP32 && in->dtype != TOSAC_DTYPE_FP16 && in->dtype != TOSAC_DTYPE_BF16)
            return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "RESIZE: input type");
        kind = !fp ? KZ_NEAREST_INT : in->f64 ? KZ_NEAREST_F64 : KZ_NEAREST_F32;
    } else if (mode == TOSAC_RESIZE_BILINEAR) {
        if (in->dtype == TOSAC_DTYPE_INT8 && out->dtype == TOSAC_DTYPE_INT32)
            kind = KZ_BIL_I8;
        else if (in->dtype == TOSAC_DTYPE_INT16 && out->dtype == TOSAC_DTYPE_INT48)
            kind = KZ_BIL_I16;
        else if (fp && out->dtype == in->dtype && out->f64 == in->f64 && in->f64)
            kind = KZ_BIL_F64;
        else if (in->dtype == TOSAC_DTYPE_FP32 && out->dtype == in->dtype)
            kind = KZ_BIL_F32;
        else if (in->dtype == TOSAC_DTYPE_FP16 && out->dtype == in->dtype)
            kind = KZ_BIL_F16;
        else if (in->dtype == TOSAC_DTYPE_BF16 && out->dtype == in->dtype)
            kind = KZ_BIL_BF16;
        else
            return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "RESIZE: BILINEAR type row not supported");
    } else {
        return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "RESIZE: mode must be NEAREST or BILINEAR");
    }

    const size_t ies = tosac_exec_elem_size(in->dtype, in->f64), oes = tosac_exec_elem_size(out->dtype, out->f64);
    const size_t irow = (size_t)C * ies, orow = (size_t)C * oes; /* bytes of one pixel */
    const uint8_t *ip = (const uint8_t *)in->data;
    uint8_t *op = (uint8_t *)out->data;
    for (int64_t n = 0; n < N; n++) {
        const uint8_t *ib = ip + (size_t)(n * IH * IW) * irow;
        for (int64_t oy = 0; oy < OH; oy++) {
            kz_pos py;
            kz_position(oy, syn, syd, offy, IH, &py);
            const uint8_t *r0 = ib + (size_t)(py.i0 * IW) * irow, *r1 = ib + (size_t)(py.i1 * IW) * irow;
            for (int64_t ox = 0; ox < OW; ox++, op += orow) {
                kz_pos px;
                kz_position(ox, sxn, sxd, offx, IW, &px);
                const size_t c0 = (size_t)px.i0 * irow, c1 = (size_t)px.i1 * irow;
                switch (kind) {
                case KZ_NEAREST_INT: {
                    const uint8_t *r = 2 * py.d >= syn ? r1 : r0;
                    memcpy(op, r + (2 * px.d >= sxn ? c1 : c0), irow);
                    break;
                }
                case KZ_NEAREST_F32: {
                    const uint8_t *r = py.df >= 0.5f ? r1 : r0;
                    memcpy(op, r + (px.df >= 0.5f ? c1 : c0), irow);
                    break;
                }
                case KZ_NEAREST_F64: {
                    const uint8_t *r = py.dd >= 0.5 ? r1 : r0;
                    memcpy(op, r + (px.dd >= 0.5 ? c1 : c0), irow);
                    break;
                }
                case KZ_BIL_I8:
                    kz_bil_i8_i32((int32_t *)(void *)op, (const int8_t *)(r0 + c0), (const int8_t *)(r0 + c1),
                                  (const int8_t *)(r1 + c0), (const int8_t *)(r1 + c1), C, syn - py.d, py.d,
                                  sxn - px.d, px.d);
                    break;
                case KZ_BIL_I16:
                    kz_bil_i16_i48((int64_t *)(void *)op, (const int16_t *)(const void *)(r0 + c0),
                                   (const int16_t *)(const void *)(r0 + c1), (const int16_t *)(const void *)(r1 + c0),
                                   (const int16_t *)(const void *)(r1 + c1), C, syn - py.d, py.d, sxn - px.d, px.d);
                    break;
                case KZ_BIL_F32:
                    kz_bil_f32((float *)(void *)op, (const float *)(const void *)(r0 + c0),
                               (const float *)(const void *)(r0 + c1), (const float *)(const void *)(r1 + c0),
                               (const float *)(const void *)(r1 + c1), C, py.df, px.df);
                    break;
                case KZ_BIL_F16:
                    kz_bil_f16((uint16_t *)(void *)op, (const uint16_t *)(const void *)(r0 + c0),
                               (const uint16_t *)(const void *)(r0 + c1), (const uint16_t *)(const void *)(r1 + c0),
                               (const uint16_t *)(const void *)(r1 + c1), C, py.df, px.df);
                    break;
                case KZ_BIL_BF16:
                    kz_bil_bf16((uint16_t *)(void *)op, (const uint16_t *)(const void *)(r0 + c0),
                                (const uint16_t *)(const void *)(r0 + c1), (const uint16_t *)(const void *)(r1 + c0),
                                (const uint16_t *)(const void *)(r1 + c1), C, py.df, px.df);
                    break;
                case KZ_BIL_F64:
                    kz_bil_f64((double *)(void *)op, (const double *)(const void *)(r0 + c0),
                               (const double *)(const void *)(r0 + c1), (const double *)(const void *)(r1 + c0),
                               (const double *)(const void *)(r1 + c1), C, py.dd, px.dd);
                    break;
                }
            }
        }
    }
    return TOSAC_OK;
}

TOSAC_KERNEL_NO_PREPARE(resize)
