/* Replaceable allocator used by every host-side tosac allocation. */
#ifndef TOSAC_ALLOC_H
#define TOSAC_ALLOC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Allocation callbacks (Lua/XNNPACK style). `alloc` returns NULL on failure; `free` receives the
 * size that was requested, so an allocator need not record block sizes.
 */
typedef struct tosac_allocator {
    void *ud;
    void *(*alloc)(void *ud, size_t size);
    void (*free)(void *ud, void *p, size_t size);
} tosac_allocator;

/**
 * Installs `a` for all later allocations (NULL restores malloc/free). Memory must be freed by the
 * allocator that made it, so switch only while no tosac object is alive.
 */
void tosac_set_allocator(const tosac_allocator *a);

/** Frees `size` bytes at `p` that a tosac call handed to the caller (e.g. tosac_npy_to_tosa's
    buffer), through the installed allocator. NULL is ignored. */
void tosac_free(void *p, size_t size);

#ifdef __cplusplus
}
#endif
#endif
