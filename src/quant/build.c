/* The quantizer's shared builders (build.h). */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/diag.h"
#include "ir/rewrite.h"
#include "quant/build.h"
#include "tosac/validate.h"

tosac_block *quant_main_block(const tosac_graph *g)
{
    return g && g->n_regions && g->regions[0]->n_blocks ? g->regions[0]->blocks[0] : NULL;
}

float quant_const_f32(const tosac_value *v, int64_t k) { return quant_f32_at(v->data, k); }

const char *quant_where(const tosac_node *n, char *buf, size_t size)
{
    if (n && n->location) snprintf(buf, size, " (ONNX node '%s')", n->location);
    else buf[0] = '\0';
    return buf;
}

float quant_attr_f32(const tosac_node *n, unsigned id, float dflt)
{
    const tosac_attr_val *a = &n->attr[id];
    if (!a->present || a->len < 4) return dflt;
    const uint8_t *p = a->data;
    uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

void quant_put_le(uint8_t *p, int64_t v, unsigned bytes)
{
    for (unsigned k = 0; k < bytes; k++) p[k] = (uint8_t)((uint64_t)v >> (8 * k));
}

tosac_value *quant_enc_const(tosac_block *b, const char *prefix, tosac_dtype t, int rank, const int64_t *shape,
                             const int32_t *v32, const int64_t *v64, int64_t n)
{
    unsigned w = t == TOSAC_DTYPE_INT8 ? 1 : t == TOSAC_DTYPE_INT16 ? 2 : t == TOSAC_DTYPE_INT48 ? 6 : 4;
    uint8_t *data = tosac_arena_alloc_uninit(&b->graph->arena, (size_t)(n ? n : 1) * w);
    if (!data) return NULL;
    if (w == 1 && !v64) /* int8 weights: most of the bytes */
        for (int64_t k = 0; k < n; k++) data[k] = (uint8_t)v32[k];
    else
        for (int64_t k = 0; k < n; k++) quant_put_le(data + k * w, v64 ? v64[k] : v32[k], w);
    return ir_new_const_adopt(b, prefix, t, rank, shape, data, (size_t)n * w);
}

static const char *zp_prefix(tosac_dtype t)
{
    return t == TOSAC_DTYPE_INT8 ? "zp8_" : t == TOSAC_DTYPE_INT16 ? "zp16_" : t == TOSAC_DTYPE_INT48 ? "zp48_" : "zp32_";
}

tosac_value *quant_scalar(tosac_block *b, tosac_dtype t, int32_t v)
{
    int64_t one = 1;
    return quant_enc_const(b, zp_prefix(t), t, 1, &one, &v, NULL, 1);
}

tosac_node *quant_add_rescale(tosac_block *b, tosac_value *in, tosac_value *out, const int32_t *m, const int32_t *s,
                              uint32_t n, int32_t in_zp, int32_t out_zp, bool in_unsigned, bool out_unsigned,
                              const tosac_node *like)
{
    /* TOSA forbids scale32 with an INT48 input: a 16-bit multiplier there */
    bool scale32 = in->dtype != TOSAC_DTYPE_INT48;
    int64_t nn = n, one = 1;
    /* one statement each: the order of initializer evaluation is unspecified, and the constants'
       names and order in the file must not depend on the compiler */
    tosac_value *ins[5] = {in, NULL, NULL, NULL, NULL};
    ins[1] = quant_enc_const(b, "multiplier", scale32 ? TOSAC_DTYPE_INT32 : TOSAC_DTYPE_INT16, 1, &nn, m, NULL, n);
    ins[2] = quant_enc_const(b, "shift", TOSAC_DTYPE_INT8, 1, &nn, s, NULL, n);
    ins[3] = quant_enc_const(b, zp_prefix(in->dtype), in->dtype, 1, &one, &in_zp, NULL, 1);
    ins[4] = quant_enc_const(b, zp_prefix(out->dtype), out->dtype, 1, &one, &out_zp, NULL, 1);
    for (int k = 1; k < 5; k++)
        if (!ins[k]) return NULL;
    tosac_node *op = ir_add_op(b, TOSAC_OP_RESCALE, 5, ins, out, like);
    if (!op || tosac_node_set_int(op, TOSAC_ATTR_RESCALE_scale32, scale32) != TOSAC_OK ||
        tosac_node_set_int(op, TOSAC_ATTR_RESCALE_rounding_mode, TOSAC_ROUND_SINGLE) != TOSAC_OK ||
        tosac_node_set_int(op, TOSAC_ATTR_RESCALE_per_channel, n > 1) != TOSAC_OK ||
        tosac_node_set_int(op, TOSAC_ATTR_RESCALE_input_unsigned, in_unsigned) != TOSAC_OK ||
        tosac_node_set_int(op, TOSAC_ATTR_RESCALE_output_unsigned, out_unsigned) != TOSAC_OK)
        return NULL;
    return op;
}

tosac_status quant_validate(const tosac_graph *g, uint32_t profiles, uint32_t extensions, tosac_diag *d)
{
    tosac_validate_opts vo = tosac_validate_opts_default();
    vo.profiles = profiles;
    vo.extensions = extensions;
    tosac_diag *vd = tosac_diag_create();
    if (!vd) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    tosac_status s = TOSAC_OK;
    if (tosac_validate(g, &vo, vd) != TOSAC_OK) {
        for (size_t k = 0; k < tosac_diag_count(vd); k++) {
            tosac_status code = TOSAC_OK;
            const char *msg = tosac_diag_message(vd, k, &code);
            if (code != TOSAC_OK) tosac_diag_add(d, TOSAC_ERR_INTERNAL, "internal error: integer graph: %s", msg);
        }
        s = TOSAC_ERR_INTERNAL;
    }
    tosac_diag_destroy(vd);
    return s;
}
