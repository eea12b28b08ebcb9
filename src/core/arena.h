/* Bump arena: objects live until the arena is destroyed (graphs own one). */
#ifndef TOSAC_CORE_ARENA_H
#define TOSAC_CORE_ARENA_H

#include <stddef.h>

typedef struct tosac_arena_chunk tosac_arena_chunk;

typedef struct tosac_arena {
    tosac_arena_chunk *head;
    size_t total;    /* bytes handed out, for reporting */
    size_t reserved; /* bytes of the chunks taken from the allocator */
} tosac_arena;

void tosac_arena_init(tosac_arena *a);
void tosac_arena_deinit(tosac_arena *a);
/* 16-byte aligned, zero-filled; NULL on failure. */
void *tosac_arena_alloc(tosac_arena *a, size_t size);
/* Same without zeroing, for blocks the caller fills completely. */
void *tosac_arena_alloc_uninit(tosac_arena *a, size_t size);
void *tosac_arena_memdup(tosac_arena *a, const void *p, size_t size);
char *tosac_arena_strdup(tosac_arena *a, const char *s);
char *tosac_arena_strndup(tosac_arena *a, const char *s, size_t n);

#endif
