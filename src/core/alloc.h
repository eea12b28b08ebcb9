/* Internal allocation helpers: every host-side allocation goes through these. */
#ifndef TOSAC_CORE_ALLOC_H
#define TOSAC_CORE_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#include "tosac/alloc.h"

void *tosac_malloc(size_t size);
void *tosac_calloc(size_t n, size_t size); /* NULL on n*size overflow */
/* Grows an array to hold at least `need` elements; *cap is updated. NULL-safe on failure (old kept). */
int tosac_grow(void **p, size_t *cap, size_t need, size_t elem);
char *tosac_strdup(const char *s);

/* Checked size arithmetic: return 0 on overflow. */
static inline int tosac_mul_size(size_t a, size_t b, size_t *out)
{
    if (a != 0 && b > SIZE_MAX / a) return 0;
    *out = a * b;
    return 1;
}
static inline int tosac_add_size(size_t a, size_t b, size_t *out)
{
    if (b > SIZE_MAX - a) return 0;
    *out = a + b;
    return 1;
}

#endif
