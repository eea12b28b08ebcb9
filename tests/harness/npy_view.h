/* A 1-D tosac_npy over existing little-endian bytes (no copy), for tests of the .npy conversions. */
#ifndef TOSAC_TEST_NPY_VIEW_H
#define TOSAC_TEST_NPY_VIEW_H

#include <stdio.h>
#include <string.h>

#include "tosac/npy.h"

static inline tosac_npy npy_view(const char *descr, size_t esize, int64_t count, const void *data)
{
    tosac_npy n;
    memset(&n, 0, sizeof n);
    snprintf(n.descr, sizeof n.descr, "%s", descr);
    n.rank = 1;
    n.shape[0] = count;
    n.count = count;
    n.elem_size = esize;
    n.data = (void *)data;
    n.nbytes = (size_t)count * esize;
    return n;
}

#endif
