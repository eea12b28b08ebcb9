/*
 * The I/O boundary of a quantized program (`--io`, docs/QUANT.md): the lowering makes INT8 graph
 * inputs and outputs; this step changes what they hold.
 *   UINT8   ExecuTorch's uint8 I/O (REFERENCE_SYSTEM.md §5, §9(b)): TOSA has no uint8 tensor, so
 *           the boundary tensors stay INT8 and hold uint8 bit patterns; a RESCALE with
 *           input_unsigned (zero point zp+128) turns an input into the signed codes the graph
 *           uses, and one with output_unsigned turns an output back. Since the scale is the same
 *           and the zero points differ by exactly 128, both are exact (multiplier 2^30, shift 30).
 *           This is ExecuTorch's DQ(i8) -> Q(u8) pair as one RESCALE; an output made from a wider
 *           value (an int32 accumulator) keeps its i32 -> i8 RESCALE in front of it, because TOSA
 *           forbids output_unsigned with a 32-bit input (the two-step split).
 *   FLOAT32 the quantize (q = CAST_i8(x * 1/s + zp): CAST rounds half to even and saturates) and
 *           dequantize ((CAST_f32(q) - zp) * s) become FP operators inside the program, for an
 *           INT+FP target that runs both (ExecuTorch keeps I/O Q/DQ in the delegate there unless
 *           preserve_io_quantization).
 * Internal tensors are never uint8: only the boundary RESCALEs carry the unsigned flags.
 */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "ir/rewrite.h"
#include "quant/quant_internal.h"

const char *tosac_quant_io_type_name(tosac_quant_io_type t)
{
    switch (t) {
    case TOSAC_QUANT_IO_UINT8: return "uint8";
    case TOSAC_QUANT_IO_FLOAT32: return "float32";
    case TOSAC_QUANT_IO_INT16: return "int16";
    case TOSAC_QUANT_IO_INT32: return "int32";
    default: return "int8";
    }
}

void tosac_quant_io_range(tosac_quant_io_type t, int32_t *lo, int32_t *hi)
{
    *lo = t == TOSAC_QUANT_IO_UINT8 ? 0 : t == TOSAC_QUANT_IO_INT16 ? -32767 : -128;
    *hi = t == TOSAC_QUANT_IO_UINT8 ? 255 : t == TOSAC_QUANT_IO_INT16 ? 32767 : 127;
}

size_t tosac_quant_io_quantize(tosac_quant_io_type t, tosac_qparams q, const void *data, bool f64, size_t count,
                               uint8_t *out)
{
    int32_t lo, hi;
    tosac_quant_io_range(t, &lo, &hi);
    size_t w = t == TOSAC_QUANT_IO_INT16 ? 2 : 1, nans = 0;
    for (size_t k = 0; k < count; k++) {
        double x;
        if (f64) {
            memcpy(&x, (const uint8_t *)data + 8 * k, 8);
        } else {
            float f;
            memcpy(&f, (const uint8_t *)data + 4 * k, 4);
            x = f;
        }
        nans += isnan(x) != 0;
        uint32_t v = (uint32_t)tosac_quant_quantize(x, q, lo, hi);
        for (size_t j = 0; j < w; j++) out[w * k + j] = (uint8_t)(v >> (8 * j));
    }
    return nans;
}

/* A constant of one element: INT8 [1] (a MUL's shift) or FP32 with `rank` dims of 1 (TOSA's
   elementwise operands must have the same rank). */
static tosac_value *one(tosac_block *b, tosac_dtype t, int rank, double v)
{
    int64_t shape[TOSAC_MAX_RANK];
    for (int k = 0; k < rank; k++) shape[k] = 1;
    uint8_t bytes[4];
    uint32_t u;
    if (t == TOSAC_DTYPE_FP32) {
        float f = (float)v;
        memcpy(&u, &f, 4);
    } else {
        u = (uint32_t)(int32_t)v;
    }
    for (int k = 0; k < 4; k++) bytes[k] = (uint8_t)(u >> (8 * k));
    return ir_new_const(b, t == TOSAC_DTYPE_FP32 ? "io_c" : "io_shift", t, t == TOSAC_DTYPE_FP32 ? rank : 1, shape, bytes,
                        t == TOSAC_DTYPE_INT8 ? 1 : 4);
}

/* RESCALE in -> out by exactly 1 (in and out INT8), zero points izp -> ozp. */
static tosac_node *shift_zp(tosac_block *b, tosac_value *in, tosac_value *out, int32_t izp, int32_t ozp, bool in_u,
                            bool out_u)
{
    const int32_t m = 1 << 30, sh = 30;
    return quant_add_rescale(b, in, out, &m, &sh, 1, izp, ozp, in_u, out_u, NULL);
}

/* Elementwise FP op a (x) c -> new FP32 tensor (MUL gets its shift operand, 0). */
static tosac_value *fp_op(tosac_block *b, tosac_op op, tosac_value *a, tosac_value *c)
{
    tosac_value *out = c ? ir_new_tensor(b, "io_f", TOSAC_DTYPE_FP32, a->rank, a->shape) : NULL;
    tosac_value *ins[3] = {a, c, op == TOSAC_OP_MUL ? one(b, TOSAC_DTYPE_INT8, 1, 0) : NULL};
    uint32_t n = op == TOSAC_OP_MUL ? 3 : 2;
    if (!out || (n == 3 && !ins[2]) || !ir_add_op(b, op, n, ins, out, NULL)) return NULL;
    return out;
}

static tosac_value *cast(tosac_block *b, tosac_value *in, tosac_value *out)
{
    return ir_add_op(b, TOSAC_OP_CAST, 1, &in, out, NULL) ? out : NULL;
}

/* A new boundary tensor of `type` under t's name (t gets "<name>_q"). */
static tosac_value *take_name(tosac_block *b, tosac_value *t, tosac_quant_io_type type)
{
    char name[300];
    snprintf(name, sizeof name, "%.280s_q", t->name);
    char *orig = strdup(t->name);
    tosac_value *u = NULL;
    if (orig && ir_rename(b, t, name) == TOSAC_OK)
        u = tosac_block_add_tensor(b, orig, type == TOSAC_QUANT_IO_FLOAT32 ? TOSAC_DTYPE_FP32 : TOSAC_DTYPE_INT8, t->rank,
                                   t->shape);
    free(orig);
    return u;
}

/* Input i: a new boundary tensor under the input's name in front of the INT8 value `t`. */
static tosac_status input(tosac_block *b, uint32_t i, tosac_quant_io *io, tosac_quant_io_type type)
{
    tosac_value *t = b->inputs[i], *u = take_name(b, t, type);
    if (!u) return TOSAC_ERR_NOMEM;
    b->inputs[i] = u;
    int32_t zp = io->q.zero_point;
    if (type == TOSAC_QUANT_IO_UINT8) {
        io->q.zero_point = zp + 128;
        return shift_zp(b, u, t, zp + 128, zp, true, false) ? TOSAC_OK : TOSAC_ERR_NOMEM;
    }
    tosac_value *x = fp_op(b, TOSAC_OP_MUL, u, one(b, TOSAC_DTYPE_FP32, u->rank, 1.0 / io->q.scale));
    x = x ? fp_op(b, TOSAC_OP_ADD, x, one(b, TOSAC_DTYPE_FP32, u->rank, zp)) : NULL;
    return x && cast(b, x, t) ? TOSAC_OK : TOSAC_ERR_NOMEM;
}

/* Output i: the INT8 value `t` becomes uint8 codes or FP32 under the output's name. */
static tosac_status output(tosac_block *b, uint32_t i, tosac_quant_io *io, tosac_quant_io_type type)
{
    tosac_value *t = b->outputs[i];
    int32_t zp = io->q.zero_point;
    tosac_value *o = take_name(b, t, type);
    if (!o) return TOSAC_ERR_NOMEM;
    b->outputs[i] = o;
    if (type == TOSAC_QUANT_IO_UINT8) {
        io->q.zero_point = zp + 128;
        return shift_zp(b, t, o, zp, zp + 128, false, true) ? TOSAC_OK : TOSAC_ERR_NOMEM;
    }
    tosac_value *f = ir_new_tensor(b, "io_f", TOSAC_DTYPE_FP32, t->rank, t->shape);
    f = f ? cast(b, t, f) : NULL;
    f = f ? fp_op(b, TOSAC_OP_SUB, f, one(b, TOSAC_DTYPE_FP32, t->rank, zp)) : NULL;
    tosac_value *c = f ? one(b, TOSAC_DTYPE_FP32, t->rank, io->q.scale) : NULL;
    tosac_value *ins[3] = {f, c, c ? one(b, TOSAC_DTYPE_INT8, 1, 0) : NULL};
    return ins[2] && ir_add_op(b, TOSAC_OP_MUL, 3, ins, o, NULL) ? TOSAC_OK : TOSAC_ERR_NOMEM;
}

tosac_status quant_boundary(tosac_block *b, tosac_quant_iomap *io, tosac_quant_io_type type, tosac_diag *d)
{
    tosac_status s = TOSAC_OK;
    if (type == TOSAC_QUANT_IO_INT8) return TOSAC_OK; /* as lowered (int16 with --a16w8) */
    /* integer inputs (TOSAC_QUANT_IO_INT32) stay as they are */
    for (uint32_t i = 0; i < b->n_inputs && s == TOSAC_OK; i++)
        if (io->inputs[i].type != TOSAC_QUANT_IO_INT32) {
            io->inputs[i].type = type;
            s = input(b, i, &io->inputs[i], type);
        }
    for (uint32_t i = 0; i < io->n_outputs; i++) io->outputs[i].type = type;
    for (uint32_t i = 0; i < b->n_outputs && s == TOSAC_OK; i++) s = output(b, i, &io->outputs[i], type);
    if (s == TOSAC_OK) s = ir_compact(b);
    if (s != TOSAC_OK) return tosac_diag_add(d, s, "building the %s I/O boundary failed", tosac_quant_io_type_name(type));
    return TOSAC_OK;
}
