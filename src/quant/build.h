/*
 * The quantizer's shared builders (build.c): reading FP constants and attributes, writing integer
 * constants and RESCALEs, validating the result. Every step of src/quant/ uses them; they call no
 * step, so the arrows run one way (steps -> builders, lower.c orchestrating the steps).
 */
#ifndef TOSAC_QUANT_BUILD_H
#define TOSAC_QUANT_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ir/graph.h"
#include "ir/rewrite.h" /* ir_copy_attrs and the other graph edits every step uses */
#include "tosac/status.h"

/* The main block of a graph, or NULL. */
tosac_block *quant_main_block(const tosac_graph *g);
/* FP32 constant value k (TOSA encoding is little-endian float). */
float quant_const_f32(const tosac_value *v, int64_t k);
/* Element k of little-endian FP32 bytes p. */
static inline float quant_f32_at(const uint8_t *p, int64_t k)
{
    float f;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    memcpy(&f, p + 4 * k, 4); /* one load (GCC does not merge the four bytes below) */
#else
    uint32_t u = (uint32_t)p[4 * k] | (uint32_t)p[4 * k + 1] << 8 | (uint32_t)p[4 * k + 2] << 16 | (uint32_t)p[4 * k + 3] << 24;
    memcpy(&f, &u, 4);
#endif
    return f;
}
/* An FP32 attribute stored as bytes (CLAMP's min_val/max_val), or dflt when absent. */
float quant_attr_f32(const tosac_node *n, unsigned id, float dflt);
/* " (ONNX node 'X')" or "" for messages. */
const char *quant_where(const tosac_node *n, char *buf, size_t size);

/* v as `bytes` little-endian bytes at p. */
void quant_put_le(uint8_t *p, int64_t v, unsigned bytes);
/* An integer constant (INT8/16/32/48, TOSA encoding) of n values from v32 or v64, written once
   into the graph's arena. NULL when out of memory. */
tosac_value *quant_enc_const(tosac_block *b, const char *prefix, tosac_dtype t, int rank, const int64_t *shape,
                             const int32_t *v32, const int64_t *v64, int64_t n);
/* A zero point (or shift) operand: one value of type t. */
tosac_value *quant_scalar(tosac_block *b, tosac_dtype t, int32_t v);

/* Appends RESCALE in -> out to block b: multipliers m and shifts s (n: 1, or one per channel of
   the last dimension; 16-bit multipliers for an INT48 input, where TOSA forbids scale32), the zero
   points (unsigned ones as their bit patterns) and the unsigned flags; SINGLE_ROUND. The one place
   a RESCALE is assembled. NULL when out of memory. */
tosac_node *quant_add_rescale(tosac_block *b, tosac_value *in, tosac_value *out, const int32_t *m, const int32_t *s,
                              uint32_t n, int32_t in_zp, int32_t out_zp, bool in_unsigned, bool out_unsigned,
                              const tosac_node *like);

/* Validates the quantized graph for `profiles` and `extensions` (a failure is an internal error). */
tosac_status quant_validate(const tosac_graph *g, uint32_t profiles, uint32_t extensions, tosac_diag *d);

#endif
