/* Chunked bump allocator on top of the replaceable allocator. */
#include "core/arena.h"

#include <string.h>

#include "core/alloc.h"

struct tosac_arena_chunk {
    tosac_arena_chunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

/* Bytes of one chunk (blocks larger than half of it get their own): 64 KiB on a host; a
   microcontroller build sets less (CMake TOSAC_ARENA_CHUNK), every graph and program holding at
   least one chunk. */
#ifndef TOSAC_ARENA_CHUNK
#define TOSAC_ARENA_CHUNK 65536u
#endif
#define ARENA_CHUNK ((size_t)(TOSAC_ARENA_CHUNK))

void tosac_arena_init(tosac_arena *a)
{
    a->head = NULL;
    a->total = 0;
    a->reserved = 0;
}

void tosac_arena_deinit(tosac_arena *a)
{
    tosac_arena_chunk *c = a->head;
    while (c) {
        tosac_arena_chunk *n = c->next;
        tosac_free(c, sizeof(*c) + c->size);
        c = n;
    }
    a->head = NULL;
    a->total = 0;
    a->reserved = 0;
}

void *tosac_arena_alloc_uninit(tosac_arena *a, size_t size)
{
    size_t need;
    if (!tosac_add_size(size, 15, &need)) return NULL;
    need &= ~(size_t)15;
    if (need == 0) need = 16;
    tosac_arena_chunk *c = a->head;
    if (!c || c->size - c->used < need) {
        size_t csize = need > ARENA_CHUNK / 2 ? need : ARENA_CHUNK;
        size_t bytes;
        if (!tosac_add_size(sizeof(*c), csize, &bytes)) return NULL;
        tosac_arena_chunk *n = tosac_malloc(bytes);
        if (!n) return NULL;
        a->reserved += bytes;
        n->size = csize;
        n->used = 0;
        if (c && need > ARENA_CHUNK / 2) {
            /* big blocks go behind the head so the head's free space is not wasted */
            n->next = c->next;
            c->next = n;
        } else {
            n->next = c;
            a->head = n;
        }
        c = n;
    }
    void *p = c->data + c->used;
    c->used += need;
    a->total += need;
    return p;
}

void *tosac_arena_alloc(tosac_arena *a, size_t size)
{
    void *p = tosac_arena_alloc_uninit(a, size);
    if (p) memset(p, 0, size ? size : 1);
    return p;
}

void *tosac_arena_memdup(tosac_arena *a, const void *p, size_t size)
{
    /* weights run to hundreds of MB: zeroing before the copy would touch every page twice */
    void *d = tosac_arena_alloc_uninit(a, size);
    if (d && size) memcpy(d, p, size);
    return d;
}

char *tosac_arena_strndup(tosac_arena *a, const char *s, size_t n)
{
    size_t bytes;
    if (!tosac_add_size(n, 1, &bytes)) return NULL;
    char *d = tosac_arena_alloc(a, bytes);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

char *tosac_arena_strdup(tosac_arena *a, const char *s) { return tosac_arena_strndup(a, s, strlen(s)); }
