/* Global replaceable allocator; defaults to malloc/free. */
#include "core/alloc.h"

#include <stdlib.h>
#include <string.h>

static void *default_alloc(void *ud, size_t size)
{
    (void)ud;
    return malloc(size ? size : 1);
}

static void default_free(void *ud, void *p, size_t size)
{
    (void)ud;
    (void)size;
    free(p);
}

static tosac_allocator g_alloc = {NULL, default_alloc, default_free};

void tosac_set_allocator(const tosac_allocator *a)
{
    if (a && a->alloc && a->free) {
        g_alloc = *a;
    } else {
        g_alloc.ud = NULL;
        g_alloc.alloc = default_alloc;
        g_alloc.free = default_free;
    }
}

void *tosac_malloc(size_t size) { return g_alloc.alloc(g_alloc.ud, size); }

void *tosac_calloc(size_t n, size_t size)
{
    size_t total;
    if (!tosac_mul_size(n, size, &total)) return NULL;
    void *p = tosac_malloc(total);
    if (p) memset(p, 0, total);
    return p;
}

void tosac_free(void *p, size_t size)
{
    if (p) g_alloc.free(g_alloc.ud, p, size);
}

int tosac_grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 1;
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2) return 0;
        ncap *= 2;
    }
    size_t nbytes, obytes;
    if (!tosac_mul_size(ncap, elem, &nbytes)) return 0;
    obytes = *cap * elem;
    void *np = tosac_malloc(nbytes);
    if (!np) return 0;
    if (*p && obytes) memcpy(np, *p, obytes);
    memset((char *)np + obytes, 0, nbytes - obytes);
    tosac_free(*p, obytes);
    *p = np;
    *cap = ncap;
    return 1;
}

char *tosac_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = tosac_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}
