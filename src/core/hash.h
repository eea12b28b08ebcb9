/*
 * FNV-1a (64-bit) over bytes and files: how a quantization sidecar names the program it belongs to
 * (docs/QUANT.md). Not a cryptographic hash: it tells files apart, it does not resist forgery.
 */
#ifndef TOSAC_CORE_HASH_H
#define TOSAC_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "tosac/status.h"

#define TOSAC_FNV1A64_INIT 0xcbf29ce484222325ull

/* Continues hash `h` over n bytes. */
uint64_t tosac_fnv1a64(uint64_t h, const void *bytes, size_t n);
/* The FNV-1a hash of a file's bytes and its size; TOSAC_ERR_IO (with the OS reason) if it cannot
   be read. */
tosac_status tosac_hash_file(const char *path, uint64_t *hash, uint64_t *size, tosac_diag *d);

#endif
