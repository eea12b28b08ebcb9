/*
 * The q-params of tensors at segment boundaries. The integer program records no scales, only
 * zero points (as RESCALE, convolution, pooling and MATMUL operands). The quantizer's map states
 * them for every tensor holding a quantized FP value (tosac_quant_iomap.tensors, in memory after
 * tosac_quantize) and its sidecar for the model inputs and outputs. From those, scales travel through the operators
 * that keep them (data movement, pooling, CONCAT, CLAMP, nearest RESIZE: tosac's lowering gives
 * them their input's q-params) and through per-tensor RESCALEs between int8/int16 tensors
 * (s_out = s_in * 2^shift / multiplier), in both directions, until nothing changes.
 */
#include <math.h>
#include <string.h>

#include "core/encoding.h"
#include "target/target_internal.h"

static bool narrow(const tosac_value *v) { return v->dtype == TOSAC_DTYPE_INT8 || v->dtype == TOSAC_DTYPE_INT16; }

static bool ival(const tosac_value *v, int64_t *out)
{
    return v && v->data && tosac_encoded_int(v->dtype, v->data, v->data_len, 0, out);
}

static bool keeps_q(const tosac_node *n)
{
    switch (n->op) {
    case TOSAC_OP_RESHAPE: case TOSAC_OP_TRANSPOSE: case TOSAC_OP_SLICE: case TOSAC_OP_TILE: case TOSAC_OP_REVERSE:
    case TOSAC_OP_PAD: case TOSAC_OP_IDENTITY: case TOSAC_OP_MAX_POOL2D: case TOSAC_OP_AVG_POOL2D:
    case TOSAC_OP_GATHER: case TOSAC_OP_REDUCE_MAX: case TOSAC_OP_REDUCE_MIN: case TOSAC_OP_CONCAT:
    case TOSAC_OP_CLAMP: return true;
    case TOSAC_OP_RESIZE: return n->attr[TOSAC_ATTR_RESIZE_mode].i == TOSAC_RESIZE_NEAREST;
    default: return false;
    }
}

static bool set_zp(target_q *q, const tosac_value *v, const tosac_value *zp_operand)
{
    int64_t z;
    if (!narrow(v) || q[v->index].has_zp || !ival(zp_operand, &z)) return false;
    q[v->index].has_zp = true;
    q[v->index].q.zero_point = (int32_t)(v->dtype == TOSAC_DTYPE_INT16 ? (int16_t)z : (int8_t)z);
    return true;
}

static bool set_scale(target_q *q, const tosac_value *v, double s)
{
    if (!narrow(v) || q[v->index].has_scale || !(s > 0) || !isfinite(s)) return false;
    q[v->index].has_scale = true;
    q[v->index].q.scale = s;
    return true;
}

/* b takes a's zero point and scale where b lacks them. */
static bool share(target_q *q, const tosac_value *a, const tosac_value *b)
{
    bool moved = false;
    if (!narrow(a) || !narrow(b) || a->dtype != b->dtype) return false;
    if (q[a->index].has_zp && !q[b->index].has_zp) {
        q[b->index].has_zp = true;
        q[b->index].q.zero_point = q[a->index].q.zero_point;
        moved = true;
    }
    if (q[a->index].has_scale) moved |= set_scale(q, b, q[a->index].q.scale);
    return moved;
}

void target_infer_q(const place_ctx *c, const tosac_quant_iomap *io, target_q *q)
{
    const tosac_block *b = c->b;
    memset(q, 0, b->n_tensors * sizeof *q);
    for (uint32_t side = 0; io && side < 3; side++) {
        uint32_t n = side == 2 ? io->n_tensors : side ? io->n_outputs : io->n_inputs;
        const tosac_quant_io *list = side == 2 ? io->tensors : side ? io->outputs : io->inputs;
        for (uint32_t k = 0; k < n && list; k++) {
            const tosac_quant_io *e = &list[k];
            const tosac_value *v = tosac_block_find(b, e->name);
            if (!v || v->is_shape || v->index >= b->n_tensors || e->type == TOSAC_QUANT_IO_FLOAT32 ||
                q[v->index].has_scale)
                continue;
            q[v->index] = (target_q){{e->q.scale, e->q.zero_point}, true, true};
        }
    }
    /* zero points stated by operands */
    for (uint32_t k = 0; k < b->n_nodes; k++) {
        const tosac_node *n = b->nodes[k];
        const tosac_value *x = n->n_inputs ? n->inputs[0] : NULL, *y = n->n_outputs ? n->outputs[0] : NULL;
        switch (n->op) {
        case TOSAC_OP_RESCALE: set_zp(q, x, n->inputs[3]); set_zp(q, y, n->inputs[4]); break;
        case TOSAC_OP_CONV2D: case TOSAC_OP_DEPTHWISE_CONV2D: case TOSAC_OP_TRANSPOSE_CONV2D: case TOSAC_OP_CONV3D:
            set_zp(q, x, n->inputs[3]);
            break;
        case TOSAC_OP_AVG_POOL2D: set_zp(q, x, n->inputs[1]); set_zp(q, y, n->inputs[2]); break;
        case TOSAC_OP_MATMUL: set_zp(q, x, n->inputs[2]); set_zp(q, n->inputs[1], n->inputs[3]); break;
        case TOSAC_OP_NEGATE: set_zp(q, x, n->inputs[1]); set_zp(q, y, n->inputs[2]); break;
        default: break;
        }
    }
    /* scales (and zero points) through the operators that keep or rescale them */
    for (bool moved = true; moved;) {
        moved = false;
        for (uint32_t k = 0; k < b->n_nodes; k++) {
            const tosac_node *n = b->nodes[k];
            if (!n->n_inputs || !n->n_outputs || n->inputs[0]->is_shape) continue;
            const tosac_value *x = n->inputs[0], *y = n->outputs[0];
            if (keeps_q(n)) {
                for (uint32_t j = 0; j < (n->op == TOSAC_OP_CONCAT ? n->n_inputs : 1); j++) {
                    moved |= share(q, n->inputs[j], y);
                    moved |= share(q, y, n->inputs[j]);
                }
                continue;
            }
            int64_t m, s;
            if (n->op != TOSAC_OP_RESCALE || n->attr[TOSAC_ATTR_RESCALE_per_channel].i || !narrow(x) || !narrow(y) ||
                !ival(n->inputs[1], &m) || !ival(n->inputs[2], &s) || m <= 0)
                continue;
            double f = ldexp((double)m, (int)-s); /* y - zp_y = (x - zp_x) * f */
            if (q[x->index].has_scale) moved |= set_scale(q, y, q[x->index].q.scale / f);
            if (q[y->index].has_scale) moved |= set_scale(q, x, q[y->index].q.scale * f);
        }
    }
}
