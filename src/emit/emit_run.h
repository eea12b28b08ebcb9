/*
 * The device side of `tosac emit-c` (docs/EMIT_C.md): the emitted C describes its kernel calls as
 * const tables (a call: operator, kernel, tensors, attributes, scratch, prepared bytes, fused
 * epilogue; a tensor: where its data is, shape, type) and tosac_emit_run builds each call's
 * tosac_kcall from them and calls the kernel. One loop instead of a block of code per call: the
 * tables cost a few tens of bytes per call, the code building a call a few hundred.
 */
#ifndef TOSAC_EMIT_EMIT_RUN_H
#define TOSAC_EMIT_EMIT_RUN_H

#include <stdint.h>

#include "kernels/kernel.h"

/* tosac_emit_t.at: where the data is (kind in the top 3 bits, then an offset or an index) */
enum {
    TOSAC_EMIT_NONE = 0u << 29,  /* no data (an operand the kernel never reads) */
    TOSAC_EMIT_ARENA = 1u << 29, /* arena + offset */
    TOSAC_EMIT_IN = 2u << 29,    /* in[index] */
    TOSAC_EMIT_OUT = 3u << 29,   /* out[index] */
    TOSAC_EMIT_CONST = 4u << 29, /* the model's constant[index] */
    TOSAC_EMIT_KIND = 7u << 29
};
/* tosac_emit_t.flags: rank in bits 0-2, then */
enum {
    TOSAC_EMIT_RANK = 7u,
    TOSAC_EMIT_CONSTANT = 1u << 3, /* tosac_ktensor.constant */
    TOSAC_EMIT_SLICED = 1u << 4,   /* one slice of a sliced chain: [n / C, C] at element i0 (C: the last dimension) */
    TOSAC_EMIT_SLIM = 1u << 5,     /* (sliced) storage of one slice: not offset by i0 */
    TOSAC_EMIT_ESIZE = 6           /* bits 6-7: log2 of the element's bytes (sliced) */
};

typedef struct tosac_emit_t {
    uint32_t at;
    uint16_t shape; /* first dimension in the shape pool */
    uint8_t dtype;  /* tosac_dtype */
    uint8_t flags;
} tosac_emit_t;

typedef struct tosac_emit_call {
    uint16_t op;           /* tosac_op */
    uint8_t fn;            /* kernel: index in the function table */
    uint8_t isa;           /* tosac_kisa */
    uint8_t n_in, n_out;
    uint16_t attr;         /* 0: none; else 1 + index in the attribute table */
    uint16_t epi;          /* 0: none; else 1 + index in the epilogue table */
    uint16_t t;            /* first tensor (inputs, then outputs) */
    uint32_t scratch;      /* arena offset (scratch_size 0: none) */
    uint32_t scratch_size;
    uint32_t prep, prep_size; /* bytes in the prepared array (prep_size 0: none) */
} tosac_emit_call;

typedef struct tosac_emit_epi {
    uint16_t rescale; /* 0: none (or folded into the prepared bytes); else 1 + its call's index */
    uint16_t out;     /* the epilogue's output tensor */
    uint8_t fignore;
    int32_t lo, hi;
    float flo, fhi;
} tosac_emit_epi;

typedef struct tosac_emit_model {
    const tosac_emit_call *calls;
    const tosac_emit_t *tensors;
    const int64_t *shapes;
    const void *const *consts;
    const tosac_attr_val *const *attrs;
    const tosac_emit_epi *epis;
    const tosac_kernel_fn *fns;
    const uint8_t *prep;
} tosac_emit_model;

/* A call's working storage: room for the tensors of any call of the model (with its epilogue's). */
typedef struct tosac_emit_ws {
    tosac_ktensor *t;
    int64_t (*sh)[2];
    uint32_t n;
} tosac_emit_ws;

/* Runs calls [first, end) of m; a sliced chain's calls with slice [i0, i0 + n) of its elements.
   Returns 0 or the tosac_status of the failing kernel. */
int tosac_emit_run(const tosac_emit_model *m, uint32_t first, uint32_t end, uint8_t *arena, const void *const in[],
                   void *const out[], int64_t i0, int64_t n, const tosac_emit_ws *ws);

#endif
