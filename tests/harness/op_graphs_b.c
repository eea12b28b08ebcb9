/*
 * Example graphs for the tensor, CLAMP/TABLE, RESIZE and RESCALE families (validator families
 * conv, pool2d, matmul, fft, argmax, clamp, table, resize, rescale): one valid graph per op and
 * type-support row. Variants differ in more than the types: strides, dilations, negative
 * out_pad, bias of length 1, batch 2, per_channel RESCALE, unsigned RESCALE flags, non-zero INT8
 * zero points, weights as graph inputs or constants.
 *
 * Constants are TOSA-encoded (TOSA.md §A.6): INT4 packed two per byte, INT48 in 6 bytes,
 * FP16/BF16/FP8 bit patterns, little endian.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/fp.h"
#include "harness/op_graphs.h"
#include "tosa/op_table.h"

/* ------------------------------------------------------------------------------------------ */
/* Builder                                                                                      */

typedef struct gb {
    tosac_graph *g;
    tosac_block *b;
    bool ok;
} gb;

static bool gb_init(gb *x)
{
    x->ok = false;
    x->b = NULL;
    x->g = tosac_graph_create();
    if (!x->g) return false;
    tosac_region *r = tosac_graph_add_region(x->g, "main");
    x->b = r ? tosac_region_add_block(r, "main") : NULL;
    x->ok = x->b != NULL;
    return x->ok;
}

static tosac_graph *gb_finish(gb *x)
{
    if (x->ok) return x->g;
    tosac_graph_destroy(x->g);
    return NULL;
}

static void put_le(uint8_t *p, uint64_t v, unsigned bytes)
{
    for (unsigned k = 0; k < bytes; k++) p[k] = (uint8_t)(v >> (8 * k));
}

/* TOSA encoding of n values of type t into out (cap bytes); *len = bytes written. */
static bool encode(tosac_dtype t, const double *v, size_t n, uint8_t *out, size_t cap, size_t *len)
{
    size_t need;
    if (!tosac_dtype_storage_bytes(t, (int64_t)n, &need) || need > cap) return false;
    memset(out, 0, need);
    for (size_t i = 0; i < n; i++) {
        const int64_t iv = (int64_t)v[i];
        const float f = (float)v[i];
        switch (t) {
        case TOSAC_DTYPE_BOOL: out[i] = v[i] != 0; break;
        case TOSAC_DTYPE_INT4: out[i / 2] |= (uint8_t)(((uint64_t)iv & 0xFu) << (i % 2 ? 4 : 0)); break;
        case TOSAC_DTYPE_INT8: out[i] = (uint8_t)((uint64_t)iv & 0xFFu); break;
        case TOSAC_DTYPE_INT16: put_le(out + 2 * i, (uint64_t)iv, 2); break;
        case TOSAC_DTYPE_INT32: put_le(out + 4 * i, (uint64_t)iv, 4); break;
        case TOSAC_DTYPE_INT48: put_le(out + 6 * i, (uint64_t)iv, 6); break;
        case TOSAC_DTYPE_SHAPE: put_le(out + 8 * i, (uint64_t)iv, 8); break;
        case TOSAC_DTYPE_FP32: put_le(out + 4 * i, tosac_fp32_bits(f), 4); break;
        case TOSAC_DTYPE_FP16: put_le(out + 2 * i, tosac_fp32_to_fp16(f), 2); break;
        case TOSAC_DTYPE_BF16: put_le(out + 2 * i, tosac_fp32_to_bf16(f), 2); break;
        case TOSAC_DTYPE_FP8E4M3: out[i] = tosac_fp32_to_fp8e4m3(f); break;
        case TOSAC_DTYPE_FP8E5M2: out[i] = tosac_fp32_to_fp8e5m2(f); break;
        default: return false;
        }
    }
    *len = need;
    return true;
}

static size_t count_of(int rank, const int64_t *shape)
{
    size_t n = 1;
    for (int i = 0; i < rank; i++) n *= (size_t)shape[i];
    return n;
}

/* A block input tensor. */
static tosac_value *gb_in(gb *x, const char *name, tosac_dtype t, int rank, const int64_t *shape)
{
    if (!x->ok) return NULL;
    tosac_value *v = tosac_block_add_tensor(x->b, name, t, rank, shape);
    if (!v || tosac_block_add_input(x->b, v) != TOSAC_OK) x->ok = false;
    return v;
}

/* A block output tensor. */
static tosac_value *gb_out(gb *x, const char *name, tosac_dtype t, int rank, const int64_t *shape)
{
    if (!x->ok) return NULL;
    tosac_value *v = tosac_block_add_tensor(x->b, name, t, rank, shape);
    if (!v || tosac_block_add_output(x->b, v) != TOSAC_OK) x->ok = false;
    return v;
}

/* A CONST tensor with the given values (NULL: a small deterministic pattern from `seed`). */
static tosac_value *gb_const(gb *x, const char *name, tosac_dtype t, int rank, const int64_t *shape,
                             const double *vals, unsigned seed)
{
    enum { MAXN = 1024 };
    static double gen[MAXN];
    static uint8_t bytes[MAXN * 8];
    if (!x->ok) return NULL;
    size_t n = count_of(rank, shape), len = 0;
    if (n > MAXN) {
        x->ok = false;
        return NULL;
    }
    if (!vals) {
        const bool fp = tosac_dtype_is_float(t);
        for (size_t i = 0; i < n; i++) {
            int v = (int)((i * 7 + seed) % 11) - 5; /* -5..5: fits INT4 too */
            gen[i] = fp ? v * 0.25 : v;
        }
        vals = gen;
    }
    tosac_value *v = NULL;
    if (encode(t, vals, n, bytes, sizeof bytes, &len))
        v = tosac_block_add_const(x->b, name, t, rank, shape, bytes, len);
    if (!v) x->ok = false;
    return v;
}

/* A [1] zero-point constant. */
static tosac_value *gb_zp(gb *x, const char *name, tosac_dtype t, double value)
{
    const int64_t one = 1;
    return gb_const(x, name, t, 1, &one, &value, 0);
}

static tosac_value *gb_shape(gb *x, const char *name, const int64_t *vals, uint32_t n)
{
    if (!x->ok) return NULL;
    tosac_value *v = tosac_block_add_const_shape(x->b, name, vals, n);
    if (!v) x->ok = false;
    return v;
}

static tosac_node *gb_node(gb *x, uint32_t op, tosac_value *const *in, uint32_t n_in, tosac_value *const *out,
                           uint32_t n_out)
{
    if (!x->ok) return NULL;
    for (uint32_t i = 0; i < n_in; i++)
        if (!in[i]) x->ok = false;
    for (uint32_t i = 0; i < n_out; i++)
        if (!out[i]) x->ok = false;
    tosac_node *n = x->ok ? tosac_block_add_node(x->b, (tosac_op)op, n_in, in, n_out, out) : NULL;
    if (!n) x->ok = false;
    return n;
}

static void gb_int(gb *x, tosac_node *n, unsigned id, int64_t v)
{
    if (x->ok && tosac_node_set_int(n, id, v) != TOSAC_OK) x->ok = false;
}

static void gb_ints(gb *x, tosac_node *n, unsigned id, const int32_t *v, uint32_t count)
{
    if (x->ok && tosac_node_set_ints(n, id, v, count) != TOSAC_OK) x->ok = false;
}

static void gb_bytes(gb *x, tosac_node *n, unsigned id, const void *v, uint32_t len)
{
    if (x->ok && tosac_node_set_bytes(n, id, v, len) != TOSAC_OK) x->ok = false;
}

static tosac_dtype T(const tosac_type_row *r, int i) { return (tosac_dtype)r->t[i]; }

/* ------------------------------------------------------------------------------------------ */
/* CONV2D, CONV3D, DEPTHWISE_CONV2D, TRANSPOSE_CONV2D                                            */

static tosac_graph *build_conv(uint32_t op, const tosac_type_row *r, unsigned variant)
{
    const bool is3d = op == TOSAC_OP_CONV3D, dw = op == TOSAC_OP_DEPTHWISE_CONV2D;
    const bool tr = op == TOSAC_OP_TRANSPOSE_CONV2D;
    const int nsp = is3d ? 3 : 2;
    const unsigned v3 = variant % 3;
    int64_t n = v3 == 2 ? 2 : 1, ic = 3, oc = 4, m = 2;
    int64_t in[3] = {5, 6, 0}, k[3] = {3, 3, 0};
    int32_t pad[6] = {1, 1, 1, 1, 0, 0}, stride[3] = {1, 1, 1}, dil[3] = {1, 1, 1};
    if (tr) {
        in[0] = 3, in[1] = 4, ic = 2, oc = 5;
        stride[0] = 2, stride[1] = 2;
        static const int32_t opads[3][4] = {{0, 0, 0, 0}, {-1, 0, 0, -2}, {1, 0, 0, 1}};
        memcpy(pad, opads[v3], sizeof opads[v3]);
    } else if (is3d) {
        static const int64_t i3[3] = {4, 5, 6}, k3[3] = {2, 3, 3};
        static const int32_t p3[3][6] = {{0, 0, 1, 1, 1, 1}, {0, 1, 1, 1, 1, 0}, {1, 0, 2, 2, 0, 0}};
        static const int32_t s3[3][3] = {{1, 1, 1}, {1, 2, 2}, {1, 1, 1}};
        static const int32_t d3[3][3] = {{1, 1, 1}, {1, 1, 1}, {1, 2, 1}};
        memcpy(in, i3, sizeof in);
        memcpy(k, k3, sizeof k);
        memcpy(pad, p3[v3], sizeof p3[v3]);
        memcpy(stride, s3[v3], sizeof s3[v3]);
        memcpy(dil, d3[v3], sizeof d3[v3]);
        ic = 2, oc = 3;
    } else {
        static const int32_t p2[3][4] = {{1, 1, 1, 1}, {1, 1, 1, 0}, {2, 2, 1, 1}};
        static const int32_t s2[3][2] = {{1, 1}, {2, 2}, {1, 1}};
        static const int32_t d2[3][2] = {{1, 1}, {1, 1}, {2, 1}};
        memcpy(pad, p2[v3], sizeof p2[v3]);
        memcpy(stride, s2[v3], sizeof s2[v3]);
        memcpy(dil, d2[v3], sizeof d2[v3]);
    }
    const int64_t och = dw ? ic * m : oc;

    int64_t ishape[5], wshape[5], oshape[5];
    ishape[0] = oshape[0] = n;
    for (int i = 0; i < nsp; i++) {
        ishape[1 + i] = in[i];
        if (tr)
            oshape[1 + i] = (in[i] - 1) * stride[i] + pad[2 * i] + pad[2 * i + 1] + k[i];
        else
            oshape[1 + i] = (in[i] - 1 + pad[2 * i] + pad[2 * i + 1] - (k[i] - 1) * dil[i]) / stride[i] + 1;
    }
    ishape[nsp + 1] = ic;
    oshape[nsp + 1] = och;
    if (dw) {
        wshape[0] = k[0], wshape[1] = k[1], wshape[2] = ic, wshape[3] = m;
    } else {
        wshape[0] = oc;
        for (int i = 0; i < nsp; i++) wshape[1 + i] = k[i];
        wshape[nsp + 1] = ic;
    }
    const int64_t bc = variant % 4 == 1 ? 1 : och;

    gb x;
    if (!gb_init(&x)) return gb_finish(&x);
    const int rank = nsp + 2;
    tosac_value *ops[5], *out;
    ops[0] = gb_in(&x, "input", T(r, 0), rank, ishape);
    ops[1] = variant % 2 ? gb_const(&x, "weight", T(r, 1), rank, wshape, NULL, variant)
                         : gb_in(&x, "weight", T(r, 1), rank, wshape);
    ops[2] = variant % 4 == 3 ? gb_in(&x, "bias", T(r, 2), 1, &bc) : gb_const(&x, "bias", T(r, 2), 1, &bc, NULL, 3);
    ops[3] = gb_zp(&x, "input_zp", T(r, 0), T(r, 0) == TOSAC_DTYPE_INT8 ? (variant % 2 ? 5 : -3) : 0);
    ops[4] = gb_zp(&x, "weight_zp", T(r, 1), T(r, 1) == TOSAC_DTYPE_INT8 ? 2 : 0);
    out = gb_out(&x, "output", T(r, 2), rank, oshape);
    tosac_node *nd = gb_node(&x, op, ops, 5, &out, 1);
    if (tr) {
        gb_ints(&x, nd, TOSAC_ATTR_TRANSPOSE_CONV2D_out_pad, pad, 4);
        gb_ints(&x, nd, TOSAC_ATTR_TRANSPOSE_CONV2D_stride, stride, 2);
        gb_int(&x, nd, TOSAC_ATTR_TRANSPOSE_CONV2D_local_bound, variant % 2);
        gb_int(&x, nd, TOSAC_ATTR_TRANSPOSE_CONV2D_acc_type, T(r, 3));
    } else {
        /* CONV2D, CONV3D and DEPTHWISE_CONV2D share the field ids */
        gb_ints(&x, nd, TOSAC_ATTR_CONV2D_pad, pad, (uint32_t)(2 * nsp));
        gb_ints(&x, nd, TOSAC_ATTR_CONV2D_stride, stride, (uint32_t)nsp);
        gb_ints(&x, nd, TOSAC_ATTR_CONV2D_dilation, dil, (uint32_t)nsp);
        gb_int(&x, nd, TOSAC_ATTR_CONV2D_local_bound, variant % 2);
        gb_int(&x, nd, TOSAC_ATTR_CONV2D_acc_type, T(r, 3));
    }
    return gb_finish(&x);
}

/* ------------------------------------------------------------------------------------------ */
/* AVG_POOL2D, MAX_POOL2D                                                                        */

static tosac_graph *build_pool(uint32_t op, const tosac_type_row *r, unsigned variant)
{
    const bool avg = op == TOSAC_OP_AVG_POOL2D;
    static const int64_t ish[2][4] = {{1, 7, 7, 3}, {2, 6, 5, 4}};
    static const int32_t kern[2][2] = {{3, 3}, {2, 3}}, str[2][2] = {{2, 2}, {2, 1}};
    static const int32_t pads[2][4] = {{1, 1, 1, 1}, {0, 0, 1, 1}};
    const unsigned v = variant % 2;
    int64_t osh[4] = {ish[v][0], 0, 0, ish[v][3]};
    for (int i = 0; i < 2; i++)
        osh[1 + i] = (ish[v][1 + i] + pads[v][2 * i] + pads[v][2 * i + 1] - kern[v][i]) / str[v][i] + 1;

    gb x;
    if (!gb_init(&x)) return gb_finish(&x);
    const tosac_dtype t = T(r, 0);
    tosac_value *ops[3] = {NULL, NULL, NULL}, *out;
    ops[0] = gb_in(&x, "input", t, 4, ish[v]);
    if (avg) {
        ops[1] = gb_zp(&x, "input_zp", t, t == TOSAC_DTYPE_INT8 ? -5 : 0);
        ops[2] = gb_zp(&x, "output_zp", t, t == TOSAC_DTYPE_INT8 ? 7 : 0);
    }
    out = gb_out(&x, "output", t, 4, osh);
    tosac_node *nd = gb_node(&x, op, ops, avg ? 3 : 1, &out, 1);
    /* kernel/stride/pad share the field ids in both tables */
    gb_ints(&x, nd, TOSAC_ATTR_AVG_POOL2D_kernel, kern[v], 2);
    gb_ints(&x, nd, TOSAC_ATTR_AVG_POOL2D_stride, str[v], 2);
    gb_ints(&x, nd, TOSAC_ATTR_AVG_POOL2D_pad, pads[v], 4);
    if (avg)
        gb_int(&x, nd, TOSAC_ATTR_AVG_POOL2D_acc_type, T(r, 1));
    else
        gb_int(&x, nd, TOSAC_ATTR_MAX_POOL2D_nan_mode, v ? TOSAC_NAN_IGNORE : TOSAC_NAN_PROPAGATE);
    return gb_finish(&x);
}

/* ------------------------------------------------------------------------------------------ */
/* MATMUL, FFT2D, RFFT2D, ARGMAX                                                                 */

static tosac_graph *build_matmul(const tosac_type_row *r, unsigned variant)
{
    static const int64_t nhcw[2][4] = {{2, 3, 5, 4}, {1, 1, 7, 3}};
    const int64_t *d = nhcw[variant % 2];
    const int64_t ash[3] = {d[0], d[1], d[2]}, bsh[3] = {d[0], d[2], d[3]}, osh[3] = {d[0], d[1], d[3]};
    const tosac_dtype t = T(r, 0);
    gb x;
    if (!gb_init(&x)) return gb_finish(&x);
    tosac_value *ops[4], *out;
    ops[0] = gb_in(&x, "A", t, 3, ash);
    ops[1] = variant % 2 ? gb_const(&x, "B", t, 3, bsh, NULL, 1) : gb_in(&x, "B", t, 3, bsh);
    ops[2] = gb_zp(&x, "A_zp", t, t == TOSAC_DTYPE_INT8 ? -1 : 0);
    ops[3] = gb_zp(&x, "B_zp", t, t == TOSAC_DTYPE_INT8 ? 4 : 0);
    out = gb_out(&x, "output", T(r, 1), 3, osh);
    gb_node(&x, TOSAC_OP_MATMUL, ops, 4, &out, 1);
    return gb_finish(&x);
}

static tosac_graph *build_fft(uint32_t op, const tosac_type_row *r, unsigned variant)
{
    const bool rfft = op == TOSAC_OP_RFFT2D;
    const tosac_dtype t = T(r, 0);
    const int64_t ish[3] = {rfft ? 2 : 1, rfft ? 4 : 8, rfft ? 8 : 4};
    const int64_t osh[3] = {ish[0], ish[1], rfft ? ish[2] / 2 + 1 : ish[2]};
    gb x;
    if (!gb_init(&x)) return gb_finish(&x);
    tosac_value *ins[2] = {NULL, NULL}, *outs[2];
    ins[0] = gb_in(&x, "input_real", t, 3, ish);
    if (!rfft) ins[1] = gb_in(&x, "input_imag", t, 3, ish);
    outs[0] = gb_out(&x, "output_real", t, 3, osh);
    outs[1] = gb_out(&x, "output_imag", t, 3, osh);
    tosac_node *nd = gb_node(&x, op, ins, rfft ? 1 : 2, outs, 2);
    if (rfft) {
        gb_int(&x, nd, TOSAC_ATTR_RFFT2D_local_bound, 1);
    } else {
        gb_int(&x, nd, TOSAC_ATTR_FFT2D_inverse, variant % 2);
        gb_int(&x, nd, TOSAC_ATTR_FFT2D_local_bound, 1);
    }
    return gb_finish(&x);
}

static tosac_graph *build_argmax(const tosac_type_row *r, unsigned variant)
{
    static const int64_t s3[3] = {2, 3, 4}, s1[1] = {5};
    const bool r1 = variant == 3; /* one variant reduces a rank-1 input to a rank-0 output */
    const int rank = r1 ? 1 : 3;
    const int64_t *ish = r1 ? s1 : s3;
    const int axis = r1 ? 0 : (int)(variant % 3);
    int64_t osh[3];
    int n = 0;
    for (int i = 0; i < rank; i++)
        if (i != axis) osh[n++] = ish[i];
    gb x;
    if (!gb_init(&x)) return gb_finish(&x);
    tosac_value *in = gb_in(&x, "input", T(r, 0), rank, ish);
    tosac_value *out = gb_out(&x, "output", T(r, 1), n, osh);
    tosac_node *nd = gb_node(&x, TOSAC_OP_ARGMAX, &in, 1, &out, 1);
    gb_int(&x, nd, TOSAC_ATTR_ARGMAX_axis, axis);
    gb_int(&x, nd, TOSAC_ATTR_ARGMAX_nan_mode, variant % 2 ? TOSAC_NAN_IGNORE : TOSAC_NAN_PROPAGATE);
    return gb_finish(&x);
}

/* ------------------------------------------------------------------------------------------ */
/* CLAMP, TABLE                                                                                  */

static tosac_graph *build_clamp(const tosac_type_row *r, unsigned variant)
{
    static const int64_t s2[2] = {3, 4}, s3[3] = {2, 1, 5};
    const tosac_dtype t = T(r, 0);
    double lo, hi;
    switch (t) {
    case TOSAC_DTYPE_INT8: lo = -10, hi = 100; break;
    case TOSAC_DTYPE_INT16: lo = -1000, hi = 2000; break;
    case TOSAC_DTYPE_FP16: lo = -1.5, hi = 6.0; break;
    case TOSAC_DTYPE_BF16: lo = -2.0, hi = 2.0; break;
    default: lo = 0.0, hi = 6.0; break;
    }
    uint8_t blo[8], bhi[8];
    size_t llo = 0, lhi = 0;
    gb x;
    if (!gb_init(&x)) return gb_finish(&x);
    if (!encode(t, &lo, 1, blo, sizeof blo, &llo) || !encode(t, &hi, 1, bhi, sizeof bhi, &lhi)) x.ok = false;
    const int rank = variant % 2 ? 3 : 2;
    const int64_t *sh = variant % 2 ? s3 : s2;
    tosac_value *in = gb_in(&x, "input", t, rank, sh);
    tosac_value *out = gb_out(&x, "output", t, rank, sh);
    tosac_node *nd = gb_node(&x, TOSAC_OP_CLAMP, &in, 1, &out, 1);
    gb_bytes(&x, nd, TOSAC_ATTR_CLAMP_min_val, blo, (uint32_t)llo);
    gb_bytes(&x, nd, TOSAC_ATTR_CLAMP_max_val, bhi, (uint32_t)lhi);
    gb_int(&x, nd, TOSAC_ATTR_CLAMP_nan_mode, variant % 2 ? TOSAC_NAN_IGNORE : TOSAC_NAN_PROPAGATE);
    return gb_finish(&x);
}

static tosac_graph *build_table(const tosac_type_row *r)
{
    static double vals[513];
    static const int64_t sh[2] = {2, 5};
    const bool i16 = T(r, 0) == TOSAC_DTYPE_INT16;
    const int64_t size = i16 ? 513 : 256;
    for (int64_t i = 0; i < size; i++) {
        double v = i16 ? (double)(i - 256) * 64 : (double)(i - 128) / 2;
        vals[i] = v >= 0 ? (double)(int64_t)v : -(double)(int64_t)-v;
    }
    gb x;
    if (!gb_init(&x)) return gb_finish(&x);
    tosac_value *ops[2], *out;
    ops[0] = gb_in(&x, "input1", T(r, 0), 2, sh);
    ops[1] = gb_const(&x, "table", T(r, 1), 1, &size, vals, 0);
    out = gb_out(&x, "output", T(r, 2), 2, sh);
    gb_node(&x, TOSAC_OP_TABLE, ops, 2, &out, 1);
    return gb_finish(&x);
}

/* ------------------------------------------------------------------------------------------ */
/* RESIZE                                                                                        */

static tosac_graph *build_resize(const tosac_type_row *r, unsigned variant)
{
    static const int64_t ish[2][4] = {{1, 4, 5, 2}, {1, 5, 7, 2}};
    static const int64_t scale[2][4] = {{4, 2, 4, 2}, {1, 2, 1, 2}};
    static const int64_t offset[2][2] = {{-1, -1}, {0, 0}}, border[2][2] = {{1, 1}, {0, 0}};
    const unsigned v = variant % 2;
    int64_t osh[4] = {ish[v][0], 0, 0, ish[v][3]};
    for (int j = 0; j < 2; j++)
        osh[1 + j] = ((ish[v][1 + j] - 1) * scale[v][2 * j] - offset[v][j] + border[v][j]) / scale[v][2 * j + 1] + 1;
    const tosac_dtype in_t = T(r, 1), out_t = T(r, 2);
    int64_t mode;
    if (tosac_dtype_is_float(in_t))
        mode = variant % 2 ? TOSAC_RESIZE_BILINEAR : TOSAC_RESIZE_NEAREST;
    else
        mode = out_t == in_t ? TOSAC_RESIZE_NEAREST : TOSAC_RESIZE_BILINEAR;

    gb x;
    if (!gb_init(&x)) return gb_finish(&x);
    tosac_value *ops[4], *out;
    ops[0] = gb_in(&x, "input", in_t, 4, ish[v]);
    ops[1] = gb_shape(&x, "scale", scale[v], 4);
    ops[2] = gb_shape(&x, "offset", offset[v], 2);
    ops[3] = gb_shape(&x, "border", border[v], 2);
    out = gb_out(&x, "output", out_t, 4, osh);
    tosac_node *nd = gb_node(&x, TOSAC_OP_RESIZE, ops, 4, &out, 1);
    gb_int(&x, nd, TOSAC_ATTR_RESIZE_mode, mode);
    return gb_finish(&x);
}

/* ------------------------------------------------------------------------------------------ */
/* RESCALE                                                                                       */

typedef struct rescale_cfg {
    bool per_channel, iu, ou;
    int rounding;
    double izp, ozp; /* as stored (the i8/i16 bit pattern of an unsigned zp) */
    int rank;
    int64_t shape[4];
} rescale_cfg;

/* One entry per RESCALE type row (types.def order: i8->i8 ... i48->i32). */
static const rescale_cfg k_rescale[12] = {
    {false, false, false, TOSAC_ROUND_SINGLE, -3, 5, 3, {2, 3, 4}},        /* i8 -> i8 */
    {false, true, false, TOSAC_ROUND_SINGLE, -128, 0, 3, {2, 3, 4}},       /* u8 (zp 128) -> i16 */
    {true, false, false, TOSAC_ROUND_DOUBLE, 7, 0, 3, {2, 3, 4}},          /* i8 -> i32 per channel */
    {false, true, false, TOSAC_ROUND_SINGLE, -32768, -1, 2, {3, 5}},       /* u16 (zp 32768) -> i8 */
    {true, false, true, TOSAC_ROUND_SINGLE, 0, -32768, 3, {2, 3, 4}},      /* i16 -> u16 (zp 32768) */
    {false, false, false, TOSAC_ROUND_SINGLE, 0, 0, 1, {7}},               /* i16 -> i32 */
    {true, false, false, TOSAC_ROUND_DOUBLE, 0, 3, 4, {1, 2, 3, 4}},       /* i32 -> i8 per channel */
    {false, false, false, TOSAC_ROUND_SINGLE, 0, 0, 3, {2, 3, 4}},         /* i32 -> i16 */
    {false, false, false, TOSAC_ROUND_INEXACT, 0, 0, 0, {0}},              /* i32 -> i32 rank 0 */
    {false, false, false, TOSAC_ROUND_SINGLE, 0, -7, 3, {2, 3, 4}},        /* i48 -> i8 */
    {true, false, false, TOSAC_ROUND_SINGLE, 0, 0, 4, {3, 1, 5, 2}},       /* i48 -> i16 per channel */
    {false, false, false, TOSAC_ROUND_SINGLE, 0, 0, 2, {4, 4}},            /* i48 -> i32 */
};

static tosac_graph *build_rescale(const tosac_type_row *r, unsigned variant)
{
    if (variant >= sizeof k_rescale / sizeof k_rescale[0]) return NULL;
    const rescale_cfg *cfg = &k_rescale[variant];
    const tosac_dtype in_t = T(r, 0), out_t = T(r, 1);
    const bool scale32 = in_t != TOSAC_DTYPE_INT48;
    const int64_t nc = cfg->per_channel ? cfg->shape[cfg->rank - 1] : 1;
    double mult[16], shift[16];
    if (nc > 16) return NULL;
    for (int64_t i = 0; i < nc; i++) {
        /* scale32: ~0.7 * 2^-(shift-31); 16-bit: ~1.0 * 2^-(shift-14) */
        mult[i] = scale32 ? 1518500250.0 - 1000.0 * (double)i : 16384.0 - (double)i;
        shift[i] = scale32 ? 31 + (double)(i % 3) : 14 + (double)(i % 2);
    }
    gb x;
    if (!gb_init(&x)) return gb_finish(&x);
    tosac_value *ops[5], *out;
    ops[0] = gb_in(&x, "input", in_t, cfg->rank, cfg->shape);
    ops[1] = gb_const(&x, "multiplier", scale32 ? TOSAC_DTYPE_INT32 : TOSAC_DTYPE_INT16, 1, &nc, mult, 0);
    ops[2] = gb_const(&x, "shift", TOSAC_DTYPE_INT8, 1, &nc, shift, 0);
    ops[3] = gb_zp(&x, "input_zp", in_t, cfg->izp);
    ops[4] = gb_zp(&x, "output_zp", out_t, cfg->ozp);
    out = gb_out(&x, "output", out_t, cfg->rank, cfg->shape);
    tosac_node *nd = gb_node(&x, TOSAC_OP_RESCALE, ops, 5, &out, 1);
    gb_int(&x, nd, TOSAC_ATTR_RESCALE_scale32, scale32);
    gb_int(&x, nd, TOSAC_ATTR_RESCALE_rounding_mode, cfg->rounding);
    gb_int(&x, nd, TOSAC_ATTR_RESCALE_per_channel, cfg->per_channel);
    gb_int(&x, nd, TOSAC_ATTR_RESCALE_input_unsigned, cfg->iu);
    gb_int(&x, nd, TOSAC_ATTR_RESCALE_output_unsigned, cfg->ou);
    return gb_finish(&x);
}

/* ------------------------------------------------------------------------------------------ */

tosac_graph *test_op_graph_b(uint32_t op, unsigned variant)
{
    unsigned nrows = 0;
    const tosac_type_row *rows = tosac_op_type_rows(op, &nrows);
    if (!rows || variant >= nrows) return NULL;
    const tosac_type_row *r = &rows[variant];
    switch (op) {
    case TOSAC_OP_CONV2D:
    case TOSAC_OP_CONV3D:
    case TOSAC_OP_DEPTHWISE_CONV2D:
    case TOSAC_OP_TRANSPOSE_CONV2D: return build_conv(op, r, variant);
    case TOSAC_OP_AVG_POOL2D:
    case TOSAC_OP_MAX_POOL2D: return build_pool(op, r, variant);
    case TOSAC_OP_MATMUL: return build_matmul(r, variant);
    case TOSAC_OP_FFT2D:
    case TOSAC_OP_RFFT2D: return build_fft(op, r, variant);
    case TOSAC_OP_ARGMAX: return build_argmax(r, variant);
    case TOSAC_OP_CLAMP: return build_clamp(r, variant);
    case TOSAC_OP_TABLE: return build_table(r);
    case TOSAC_OP_RESIZE: return build_resize(r, variant);
    case TOSAC_OP_RESCALE: return build_rescale(r, variant);
    default: return NULL;
    }
}
