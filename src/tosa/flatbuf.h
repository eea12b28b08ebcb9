/*
 * Generic flatbuffers byte layer: a verifying reader and a deterministic back-to-front builder.
 *
 * Nothing here knows about TOSA; the TOSA reader/writer drives it by field id (vtable slot).
 *
 * Layout reminder (all little-endian):
 *   buffer  = uoffset32 to the root table, then optionally a 4-byte file identifier (bytes 4..7).
 *   table   = soffset32 s (vtable is at table_pos - s), then inline fields.
 *   vtable  = uint16 vtable size, uint16 table size, uint16 field offset per id (0 = absent).
 *   uoffset = uint32 v stored at location L; the target is L + v (always forward).
 *   string  = uint32 length, bytes, NUL.   vector = uint32 count, elements.
 *
 * Reader guarantees: every access is bounds-checked against [buf, buf+len); all scalars are read
 * byte by byte (no unaligned loads, host-endian independent); every failure appends one message
 * "<file>: byte <offset>: <ctx>: <problem>" to the reader's diag and returns an error status
 * without touching the out-parameters. Because uoffsets are unsigned and must be non-zero, every
 * table reached from another table or vector lies strictly after it, so cycles are impossible;
 * the depth limit and the object budget bound the work a hostile file can cause a recursive
 * caller (a file can still make many references to the same object).
 */
#ifndef TOSAC_TOSA_FLATBUF_H
#define TOSAC_TOSA_FLATBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tosac/status.h"

/* ------------------------------------------------------------------------------------------- */
/* Little-endian scalar decoding from possibly unaligned bytes.                                  */

static inline uint16_t fb_le_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t fb_le_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t fb_le_u64(const uint8_t *p)
{
    return (uint64_t)fb_le_u32(p) | ((uint64_t)fb_le_u32(p + 4) << 32);
}
static inline int32_t fb_le_i32(const uint8_t *p)
{
    uint32_t u = fb_le_u32(p);
    int32_t v;
    /* Two's complement reinterpretation without implementation-defined conversion. */
    v = (u & 0x80000000u) ? -(int32_t)(~u) - 1 : (int32_t)u;
    return v;
}
static inline int64_t fb_le_i64(const uint8_t *p)
{
    uint64_t u = fb_le_u64(p);
    return (u & 0x8000000000000000ull) ? -(int64_t)(~u) - 1 : (int64_t)u;
}

/* ------------------------------------------------------------------------------------------- */
/* Reader                                                                                      */

/** Depth used when fb_reader.max_depth is 0. The root table has depth 0. */
#define FB_DEFAULT_MAX_DEPTH 64u
/** Largest buffer either side accepts (lengths and offsets fit in int32). */
#define FB_MAX_BUFFER_SIZE 0x7FFFFFFFu

typedef struct fb_reader {
    const uint8_t *buf;
    size_t len;        /* must be >= 8 and < 2^31 */
    tosac_diag *diag;  /* may be NULL */
    const char *file;  /* label for messages; NULL -> "<buffer>" */
    unsigned max_depth; /* tables deeper than this are rejected (TOSAC_ERR_FORMAT); 0 = default 64 */
    /*
     * Object budget: NULL = unlimited. Otherwise every table, vector or string reached (root
     * included; absent fields are free) costs one unit taken from *budget; when it is 0 the access
     * fails with TOSAC_ERR_NOMEM ("object budget exhausted"). The caller owns the counter and
     * sets it before reading (e.g. a multiple of the file size).
     */
    size_t *budget;
} fb_reader;

typedef struct fb_table {
    const fb_reader *r;
    uint32_t pos;     /* table start (its soffset) */
    uint32_t vt;      /* vtable start */
    uint16_t vt_len;  /* vtable size in bytes (>= 4, even) */
    uint16_t tbl_len; /* inline table size in bytes (>= 4) */
    uint32_t depth;   /* 0 for the root */
} fb_table;

typedef struct fb_vec {
    const fb_reader *r;
    uint32_t pos; /* of the first element (after the count word); 0 for an absent vector */
    uint32_t count;
    uint32_t elem_size;
    uint32_t depth; /* depth of the table holding the vector; its element tables get depth + 1 */
} fb_vec;

/**
 * Verifies the header and the root table. `ident` is NULL (not checked) or 4 characters compared
 * with bytes 4..7. Fails (TOSAC_ERR_FORMAT) if len < 8 or len >= 2^31.
 */
tosac_status fb_root(const fb_reader *r, const char *ident, fb_table *root);

/** True if field `id` is present in the vtable (non-zero slot). Does no other verification. */
bool fb_has_field(const fb_table *t, unsigned id);

/*
 * Scalar fields. Absent field (id past the vtable or zero slot): *out = def, *present = false.
 * Present: the field's bytes must lie inside the table (else TOSAC_ERR_FORMAT).
 * `present` may be NULL. Booleans are true for any non-zero byte.
 */
tosac_status fb_get_u8(const fb_table *t, unsigned id, uint8_t def, uint8_t *out, bool *present,
                       const char *ctx);
tosac_status fb_get_bool(const fb_table *t, unsigned id, bool def, bool *out, bool *present,
                         const char *ctx);
tosac_status fb_get_u16(const fb_table *t, unsigned id, uint16_t def, uint16_t *out, bool *present,
                        const char *ctx);
tosac_status fb_get_i32(const fb_table *t, unsigned id, int32_t def, int32_t *out, bool *present,
                        const char *ctx);
tosac_status fb_get_u32(const fb_table *t, unsigned id, uint32_t def, uint32_t *out, bool *present,
                        const char *ctx);
tosac_status fb_get_i64(const fb_table *t, unsigned id, int64_t def, int64_t *out, bool *present,
                        const char *ctx);
tosac_status fb_get_u64(const fb_table *t, unsigned id, uint64_t def, uint64_t *out, bool *present,
                        const char *ctx);

/**
 * String field. Absent -> *s = NULL, *len = 0. Present: the string (length word, bytes and the
 * terminating NUL) must lie in the buffer; *s points into the buffer and is NUL-terminated at
 * s[*len]. Embedded NULs are not rejected (compare *len with strlen if that matters).
 * `len` may be NULL.
 */
tosac_status fb_get_string(const fb_table *t, unsigned id, const char **s, uint32_t *len,
                           const char *ctx);

/** Sub-table (or union value) field. Absent -> *present = false and *out zeroed. */
tosac_status fb_get_table(const fb_table *t, unsigned id, fb_table *out, bool *present,
                          const char *ctx);

/**
 * Vector field with elements of `elem_size` bytes (1, 4 for offsets/int32, 8, ...). Absent ->
 * count 0 (fb_vec_data still returns a non-NULL pointer). Present: count * elem_size bytes after
 * the count word must lie in the buffer. Alignment is not required (read with fb_le_* / memcpy).
 */
tosac_status fb_get_vector(const fb_table *t, unsigned id, uint32_t elem_size, fb_vec *out,
                           const char *ctx);
/** Element i of a vector of table offsets (elem_size must be 4). */
tosac_status fb_vec_table(const fb_vec *v, uint32_t i, fb_table *out, const char *ctx);
/** Element i of a vector of string offsets (elem_size must be 4). `len` may be NULL. */
tosac_status fb_vec_string(const fb_vec *v, uint32_t i, const char **s, uint32_t *len,
                           const char *ctx);
/** Payload bytes (possibly unaligned); NULL only for a zero-initialised fb_vec. */
const uint8_t *fb_vec_data(const fb_vec *v);

/* Unchecked-by-status element getters: return 0 if i >= count or elem_size differs. */
uint8_t fb_vec_u8(const fb_vec *v, uint32_t i);
int32_t fb_vec_i32(const fb_vec *v, uint32_t i);
uint32_t fb_vec_u32(const fb_vec *v, uint32_t i);
int64_t fb_vec_i64(const fb_vec *v, uint32_t i);

/* ------------------------------------------------------------------------------------------- */
/* Builder                                                                                     */

/** Field ids 0 .. FB_MAX_FIELDS-1 may be used in one table. */
#define FB_MAX_FIELDS 64u

/*
 * Build children before parents; every create/end call returns a handle (the object's distance
 * from the end of the buffer, never 0 for a real object). Output is a pure function of the call
 * sequence: identical calls give byte-identical buffers. Identical vtables are shared
 * (deterministically: the first one written is reused).
 *
 * Errors are sticky: an allocation failure sets `failed` (functions then return 0 and do
 * nothing; fb_finish reports TOSAC_ERR_NOMEM); a misuse (bad id, duplicate field, nested
 * table, string/vector created inside an open table, invalid handle, table too big for 16-bit
 * offsets) sets `misuse` and fb_finish reports TOSAC_ERR_INVALID_ARG.
 */
typedef struct fb_builder {
    uint8_t *buf; /* data occupies the last `size` bytes of buf[0..cap) */
    size_t cap;
    size_t size;
    size_t minalign;
    bool failed;
    bool misuse;
    bool in_table;
    bool finished;
    uint32_t table_start;
    unsigned field_end;                 /* highest field id used + 1 */
    uint32_t field_loc[FB_MAX_FIELDS];  /* handle just after each field (0 = absent) */
    uint32_t *vtables;                  /* handles of vtables written, for sharing */
    size_t nvtables, vtables_cap;
    struct fb_segment *segs;            /* external payloads (fb_create_vector_external) */
    size_t nsegs, segs_cap;
} fb_builder;

/** A payload left out of the builder's memory: `len` bytes from `src` belong at the position
    whose handle is `handle` (the bytes at(handle)..). */
typedef struct fb_segment {
    size_t handle;
    const uint8_t *src;
    size_t len;
} fb_segment;

void fb_builder_init(fb_builder *b);
/** Releases memory; the builder may be re-initialised afterwards. */
void fb_builder_free(fb_builder *b);
/** Empties the builder for a new buffer, keeping its memory; clears failed/misuse. */
void fb_builder_reset(fb_builder *b);

/** `s` need not be NUL-terminated (len bytes are copied; a NUL is appended). */
uint32_t fb_create_string(fb_builder *b, const char *s, size_t len);
/**
 * Vector of `count` elements of `elem_size` bytes copied verbatim (give scalars little-endian).
 * The payload is aligned to max(4, elem_size if 1/2/4/8, payload_align); payload_align is 0 or a
 * power of two <= 64 (8 for force_align: 8). A vector with count 0 is still written.
 */
uint32_t fb_create_vector(fb_builder *b, const void *elems, uint32_t count, uint32_t elem_size,
                          uint32_t payload_align);
/** Vector of offsets to objects created earlier (tables or strings); no handle may be 0. */
uint32_t fb_create_offset_vector(fb_builder *b, const uint32_t *handles, uint32_t count);

void fb_table_begin(fb_builder *b);
/* Scalars are always written (skip defaults yourself) and naturally aligned. */
void fb_add_u8(fb_builder *b, unsigned id, uint8_t v);
void fb_add_bool(fb_builder *b, unsigned id, bool v);
void fb_add_u16(fb_builder *b, unsigned id, uint16_t v);
void fb_add_i32(fb_builder *b, unsigned id, int32_t v);
void fb_add_u32(fb_builder *b, unsigned id, uint32_t v);
void fb_add_i64(fb_builder *b, unsigned id, int64_t v);
void fb_add_u64(fb_builder *b, unsigned id, uint64_t v);
/** Offset field to an object created before fb_table_begin; handle 0 omits the field. */
void fb_add_offset(fb_builder *b, unsigned id, uint32_t handle);
/** Returns the table's handle (0 after an error). */
uint32_t fb_table_end(fb_builder *b);

/**
 * Writes the header (root offset and optional 4-character identifier) and returns a copy of the
 * finished buffer, allocated with tosac_malloc: free it with tosac_free(*out, *out_len). The
 * buffer length is a multiple of the largest alignment used, so every aligned object is aligned
 * relative to the buffer start. Call once; then fb_builder_reset or fb_builder_free.
 */
/**
 * A [ubyte] vector of `len` bytes from `src`, zero-padded to `padded` bytes, whose payload is not
 * copied into the builder: its place is reserved (untouched memory) and recorded as a segment
 * that fb_fill_segments copies in, or that a writer writes straight from `src`. `src` must stay
 * valid until then. The resulting bytes are exactly those of fb_create_vector.
 */
uint32_t fb_create_vector_external(fb_builder *b, const void *src, size_t len, size_t padded, uint32_t payload_align);
/** The external segments in creation order, i.e. in decreasing position (the buffer is built back to front). */
const fb_segment *fb_segments(const fb_builder *b, size_t *n);
/** Copies every external payload into its place (for an in-memory result). */
void fb_fill_segments(fb_builder *b);
/** Offset of a segment in the finished buffer (after fb_finish_view). */
size_t fb_segment_offset(const fb_builder *b, const fb_segment *s);
/** Like fb_finish, but *out points into the builder (valid until it is freed or reset): no copy
    of a buffer that may hold hundreds of MB of weights. */
tosac_status fb_finish_view(fb_builder *b, uint32_t root, const char *ident, const uint8_t **out, size_t *out_len);
/** Capacity hint: makes room for n more bytes at once, so building a large buffer does not
    regrow (and copy) it repeatedly. A failed allocation fails the builder as any other would. */
void fb_builder_reserve(fb_builder *b, size_t n);
tosac_status fb_finish(fb_builder *b, uint32_t root, const char *ident, uint8_t **out,
                       size_t *out_len);

#endif
