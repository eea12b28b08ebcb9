/* Test tensors for calling kernels directly: a tosac_ktensor that owns its buffer and shape. */
#ifndef TOSAC_TEST_KTENSOR_H
#define TOSAC_TEST_KTENSOR_H

#include <stdlib.h>
#include <string.h>

#include "kernels/kernel.h"

/* Keep a tt in place: t.shape points into it. */
typedef struct tt {
    tosac_ktensor t;
    int64_t shape[8];
    uint8_t *buf;
    size_t es;
} tt;

/* Zero-filled storage for `shape` (plus one spare element so empty tensors get a buffer). */
static inline void tt_make(tt *x, tosac_dtype dt, bool f64, int rank, const int64_t *shape)
{
    memset(x, 0, sizeof *x);
    x->es = tosac_exec_elem_size(dt, f64);
    int64_t n = 1;
    for (int d = 0; d < rank; d++) {
        x->shape[d] = shape[d];
        n *= shape[d];
    }
    x->buf = (uint8_t *)calloc((size_t)n + 1, x->es ? x->es : 1);
    x->t.data = x->buf;
    x->t.dtype = dt;
    x->t.f64 = f64;
    x->t.rank = rank;
    x->t.shape = x->shape;
    x->t.nelem = n;
}

static inline void tt_free(tt *x)
{
    free(x->buf);
    x->buf = NULL;
}

#endif
