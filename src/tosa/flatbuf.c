/* Verifying flatbuffers reader and deterministic builder (see flatbuf.h). */
#include "tosa/flatbuf.h"

#include <string.h>

#include "core/alloc.h"
#include "core/diag.h"

/* =========================================================================================== */
/* Reader                                                                                      */
/* =========================================================================================== */

static tosac_status fb_fail_code(const fb_reader *r, tosac_status code, uint64_t off, const char *ctx,
                                 const char *what)
{
    return tosac_diag_add(r ? r->diag : NULL, code, "%s: byte %llu: %s: %s",
                          (r && r->file) ? r->file : "<buffer>", (unsigned long long)off,
                          ctx ? ctx : "flatbuffer", what);
}

static tosac_status fb_fail(const fb_reader *r, uint64_t off, const char *ctx, const char *what)
{
    return fb_fail_code(r, TOSAC_ERR_FORMAT, off, ctx, what);
}

/* True if [off, off+n) lies in the buffer (64-bit arithmetic, no overflow for our sizes). */
static bool in_buf(const fb_reader *r, uint64_t off, uint64_t n)
{
    return off <= r->len && n <= (uint64_t)r->len - off;
}

static tosac_status take_budget(const fb_reader *r, uint64_t off, const char *ctx)
{
    if (!r->budget) return TOSAC_OK;
    if (*r->budget == 0)
        return fb_fail_code(r, TOSAC_ERR_NOMEM, off, ctx, "object budget exhausted (too many objects)");
    (*r->budget)--;
    return TOSAC_OK;
}

/* Verifies the table starting at `pos` and fills *out. */
static tosac_status table_at(const fb_reader *r, uint64_t pos, uint32_t depth, fb_table *out,
                             const char *ctx)
{
    unsigned maxd = r->max_depth ? r->max_depth : FB_DEFAULT_MAX_DEPTH;
    if (depth > maxd) return fb_fail(r, pos, ctx, "tables nested too deeply");
    tosac_status st = take_budget(r, pos, ctx);
    if (st != TOSAC_OK) return st;
    if (!in_buf(r, pos, 4)) return fb_fail(r, pos, ctx, "table starts outside the buffer");
    int64_t vt = (int64_t)pos - (int64_t)fb_le_i32(r->buf + pos);
    if (vt < 0 || !in_buf(r, (uint64_t)vt, 4))
        return fb_fail(r, pos, ctx, "table's vtable offset points outside the buffer");
    uint16_t vt_len = fb_le_u16(r->buf + vt);
    uint16_t tbl_len = fb_le_u16(r->buf + vt + 2);
    if (vt_len < 4 || (vt_len & 1u)) return fb_fail(r, (uint64_t)vt, ctx, "invalid vtable size");
    if (!in_buf(r, (uint64_t)vt, vt_len)) return fb_fail(r, (uint64_t)vt, ctx, "vtable extends past the buffer");
    if (tbl_len < 4) return fb_fail(r, (uint64_t)vt, ctx, "invalid table size in vtable");
    if (!in_buf(r, pos, tbl_len)) return fb_fail(r, pos, ctx, "table extends past the buffer");
    out->r = r;
    out->pos = (uint32_t)pos;
    out->vt = (uint32_t)vt;
    out->vt_len = vt_len;
    out->tbl_len = tbl_len;
    out->depth = depth;
    return TOSAC_OK;
}

tosac_status fb_root(const fb_reader *r, const char *ident, fb_table *root)
{
    if (!r || !root) return TOSAC_ERR_INVALID_ARG;
    if (!r->buf || r->len < 8) return fb_fail(r, 0, "header", "buffer shorter than 8 bytes");
    if (r->len > FB_MAX_BUFFER_SIZE) return fb_fail(r, 0, "header", "buffer of 2 GiB or more");
    if (ident && memcmp(r->buf + 4, ident, 4) != 0)
        return fb_fail(r, 4, "header", "wrong file identifier");
    uint32_t v = fb_le_u32(r->buf);
    if (v == 0 || !in_buf(r, v, 4)) return fb_fail(r, 0, "header", "root offset points outside the buffer");
    fb_table t;
    tosac_status st = table_at(r, v, 0, &t, "root table");
    if (st != TOSAC_OK) return st;
    *root = t;
    return TOSAC_OK;
}

/* Finds field `id`: 0 = absent, else its offset inside the table (>= 4, size bytes inside). */
static tosac_status field_off(const fb_table *t, unsigned id, uint32_t size, uint32_t *off,
                              const char *ctx)
{
    *off = 0;
    uint64_t slot = 4 + 2 * (uint64_t)id;
    if (slot + 2 > t->vt_len) return TOSAC_OK;
    uint16_t o = fb_le_u16(t->r->buf + t->vt + slot);
    if (o == 0) return TOSAC_OK;
    if (o < 4 || (uint32_t)o + size > t->tbl_len)
        return fb_fail(t->r, (uint64_t)t->vt + slot, ctx, "field offset outside its table");
    *off = o;
    return TOSAC_OK;
}

bool fb_has_field(const fb_table *t, unsigned id)
{
    if (!t || !t->r) return false;
    uint64_t slot = 4 + 2 * (uint64_t)id;
    if (slot + 2 > t->vt_len) return false;
    return fb_le_u16(t->r->buf + t->vt + slot) != 0;
}

/* Locates a scalar field: *p = its bytes or NULL if absent. */
static tosac_status scalar_at(const fb_table *t, unsigned id, uint32_t size, const uint8_t **p,
                              const char *ctx)
{
    *p = NULL;
    if (!t || !t->r) return TOSAC_ERR_INVALID_ARG;
    uint32_t off;
    tosac_status st = field_off(t, id, size, &off, ctx);
    if (st != TOSAC_OK) return st;
    if (off) *p = t->r->buf + t->pos + off;
    return TOSAC_OK;
}

#define FB_GETTER(name, type, size, decode)                                                        \
    tosac_status name(const fb_table *t, unsigned id, type def, type *out, bool *present,          \
                      const char *ctx)                                                             \
    {                                                                                              \
        const uint8_t *p;                                                                          \
        tosac_status st = scalar_at(t, id, size, &p, ctx);                                         \
        if (st != TOSAC_OK) return st;                                                             \
        if (out) *out = p ? (decode) : def;                                                        \
        if (present) *present = p != NULL;                                                         \
        return TOSAC_OK;                                                                           \
    }

FB_GETTER(fb_get_u8, uint8_t, 1, p[0])
FB_GETTER(fb_get_bool, bool, 1, p[0] != 0)
FB_GETTER(fb_get_u16, uint16_t, 2, fb_le_u16(p))
FB_GETTER(fb_get_i32, int32_t, 4, fb_le_i32(p))
FB_GETTER(fb_get_u32, uint32_t, 4, fb_le_u32(p))
FB_GETTER(fb_get_i64, int64_t, 8, fb_le_i64(p))
FB_GETTER(fb_get_u64, uint64_t, 8, fb_le_u64(p))

/* Follows the uoffset stored at buffer location `loc` (4 bytes there already checked). */
static tosac_status follow(const fb_reader *r, uint64_t loc, uint64_t *target, const char *ctx)
{
    uint32_t v = fb_le_u32(r->buf + loc);
    if (v == 0) return fb_fail(r, loc, ctx, "null offset");
    uint64_t tgt = loc + v;
    if (!in_buf(r, tgt, 4)) return fb_fail(r, loc, ctx, "offset points outside the buffer");
    *target = tgt;
    return TOSAC_OK;
}

/* Verifies a string object at `pos` (its length word). */
static tosac_status string_at(const fb_reader *r, uint64_t pos, const char **s, uint32_t *len,
                              const char *ctx)
{
    tosac_status st = take_budget(r, pos, ctx);
    if (st != TOSAC_OK) return st;
    if (!in_buf(r, pos, 4)) return fb_fail(r, pos, ctx, "string outside the buffer");
    uint32_t n = fb_le_u32(r->buf + pos);
    if (!in_buf(r, pos + 4, (uint64_t)n + 1)) return fb_fail(r, pos, ctx, "string length past the buffer");
    if (r->buf[pos + 4 + n] != 0) return fb_fail(r, pos + 4 + n, ctx, "string not NUL-terminated");
    *s = (const char *)(r->buf + pos + 4);
    if (len) *len = n;
    return TOSAC_OK;
}

tosac_status fb_get_string(const fb_table *t, unsigned id, const char **s, uint32_t *len,
                           const char *ctx)
{
    if (!t || !t->r || !s) return TOSAC_ERR_INVALID_ARG;
    uint32_t off;
    tosac_status st = field_off(t, id, 4, &off, ctx);
    if (st != TOSAC_OK) return st;
    if (!off) {
        *s = NULL;
        if (len) *len = 0;
        return TOSAC_OK;
    }
    uint64_t tgt;
    st = follow(t->r, (uint64_t)t->pos + off, &tgt, ctx);
    if (st != TOSAC_OK) return st;
    return string_at(t->r, tgt, s, len, ctx);
}

tosac_status fb_get_table(const fb_table *t, unsigned id, fb_table *out, bool *present,
                          const char *ctx)
{
    if (!t || !t->r || !out) return TOSAC_ERR_INVALID_ARG;
    uint32_t off;
    tosac_status st = field_off(t, id, 4, &off, ctx);
    if (st != TOSAC_OK) return st;
    if (!off) {
        memset(out, 0, sizeof(*out));
        if (present) *present = false;
        return TOSAC_OK;
    }
    uint64_t tgt;
    st = follow(t->r, (uint64_t)t->pos + off, &tgt, ctx);
    if (st != TOSAC_OK) return st;
    fb_table sub;
    st = table_at(t->r, tgt, t->depth + 1, &sub, ctx);
    if (st != TOSAC_OK) return st;
    *out = sub;
    if (present) *present = true;
    return TOSAC_OK;
}

tosac_status fb_get_vector(const fb_table *t, unsigned id, uint32_t elem_size, fb_vec *out,
                           const char *ctx)
{
    if (!t || !t->r || !out || elem_size == 0) return TOSAC_ERR_INVALID_ARG;
    uint32_t off;
    tosac_status st = field_off(t, id, 4, &off, ctx);
    if (st != TOSAC_OK) return st;
    fb_vec v = {t->r, 0, 0, elem_size, t->depth};
    if (off) {
        uint64_t tgt;
        st = follow(t->r, (uint64_t)t->pos + off, &tgt, ctx);
        if (st != TOSAC_OK) return st;
        st = take_budget(t->r, tgt, ctx);
        if (st != TOSAC_OK) return st;
        uint32_t n = fb_le_u32(t->r->buf + tgt);
        if (!in_buf(t->r, tgt + 4, (uint64_t)n * elem_size))
            return fb_fail(t->r, tgt, ctx, "vector length past the buffer");
        v.pos = (uint32_t)(tgt + 4);
        v.count = n;
    }
    *out = v;
    return TOSAC_OK;
}

/* Checks index and element size of an offset vector; returns the element location. */
static tosac_status offset_elem(const fb_vec *v, uint32_t i, uint64_t *loc, const char *ctx)
{
    if (!v || !v->r) return TOSAC_ERR_INVALID_ARG;
    if (v->elem_size != 4)
        return fb_fail_code(v->r, TOSAC_ERR_INVALID_ARG, v->pos, ctx, "not a vector of offsets");
    if (i >= v->count)
        return fb_fail_code(v->r, TOSAC_ERR_INVALID_ARG, v->pos, ctx, "vector index out of range");
    *loc = (uint64_t)v->pos + 4 * (uint64_t)i;
    return TOSAC_OK;
}

tosac_status fb_vec_table(const fb_vec *v, uint32_t i, fb_table *out, const char *ctx)
{
    if (!out) return TOSAC_ERR_INVALID_ARG;
    uint64_t loc = 0, tgt = 0;
    tosac_status st = offset_elem(v, i, &loc, ctx);
    if (st != TOSAC_OK) return st;
    st = follow(v->r, loc, &tgt, ctx);
    if (st != TOSAC_OK) return st;
    fb_table sub;
    st = table_at(v->r, tgt, v->depth + 1, &sub, ctx);
    if (st != TOSAC_OK) return st;
    *out = sub;
    return TOSAC_OK;
}

tosac_status fb_vec_string(const fb_vec *v, uint32_t i, const char **s, uint32_t *len,
                           const char *ctx)
{
    if (!s) return TOSAC_ERR_INVALID_ARG;
    uint64_t loc = 0, tgt = 0;
    tosac_status st = offset_elem(v, i, &loc, ctx);
    if (st != TOSAC_OK) return st;
    st = follow(v->r, loc, &tgt, ctx);
    if (st != TOSAC_OK) return st;
    return string_at(v->r, tgt, s, len, ctx);
}

const uint8_t *fb_vec_data(const fb_vec *v)
{
    if (!v || !v->r || !v->r->buf) return NULL;
    return v->r->buf + v->pos;
}

static const uint8_t *vec_elem(const fb_vec *v, uint32_t i, uint32_t size)
{
    if (!v || !v->r || v->elem_size != size || i >= v->count) return NULL;
    return v->r->buf + v->pos + (size_t)i * size;
}

uint8_t fb_vec_u8(const fb_vec *v, uint32_t i)
{
    const uint8_t *p = vec_elem(v, i, 1);
    return p ? p[0] : 0;
}

int32_t fb_vec_i32(const fb_vec *v, uint32_t i)
{
    const uint8_t *p = vec_elem(v, i, 4);
    return p ? fb_le_i32(p) : 0;
}

uint32_t fb_vec_u32(const fb_vec *v, uint32_t i)
{
    const uint8_t *p = vec_elem(v, i, 4);
    return p ? fb_le_u32(p) : 0;
}

int64_t fb_vec_i64(const fb_vec *v, uint32_t i)
{
    const uint8_t *p = vec_elem(v, i, 8);
    return p ? fb_le_i64(p) : 0;
}

/* =========================================================================================== */
/* Builder                                                                                     */
/* =========================================================================================== */

void fb_builder_init(fb_builder *b)
{
    memset(b, 0, sizeof(*b));
    b->minalign = 1;
}

void fb_builder_free(fb_builder *b)
{
    if (!b) return;
    tosac_free(b->buf, b->cap);
    tosac_free(b->vtables, b->vtables_cap * sizeof(uint32_t));
    tosac_free(b->segs, b->segs_cap * sizeof(fb_segment));
    fb_builder_init(b);
}

void fb_builder_reset(fb_builder *b)
{
    uint8_t *buf = b->buf;
    size_t cap = b->cap;
    uint32_t *vts = b->vtables;
    size_t vcap = b->vtables_cap;
    fb_segment *segs = b->segs;
    size_t scap = b->segs_cap;
    fb_builder_init(b);
    b->buf = buf;
    b->cap = cap;
    b->vtables = vts;
    b->vtables_cap = vcap;
    b->segs = segs;
    b->segs_cap = scap;
}

static bool usable(const fb_builder *b) { return b && !b->failed && !b->finished; }

/* Ensures n more bytes fit in front of the current data. */
static bool reserve(fb_builder *b, size_t n)
{
    if (b->failed) return false;
    if (n > FB_MAX_BUFFER_SIZE - b->size) {
        b->failed = true; /* over the format's size limit: reported as TOSAC_ERR_NOMEM */
        return false;
    }
    if (b->cap - b->size >= n) return true;
    size_t ncap = b->cap ? b->cap : 256;
    while (ncap - b->size < n) ncap *= 2; /* cannot overflow: size + n < 2^31 */
    uint8_t *nb = tosac_malloc(ncap);
    if (!nb) {
        b->failed = true;
        return false;
    }
    if (b->size) memcpy(nb + ncap - b->size, b->buf + b->cap - b->size, b->size);
    tosac_free(b->buf, b->cap);
    b->buf = nb;
    b->cap = ncap;
    return true;
}

static uint8_t *at(fb_builder *b, uint32_t handle) { return b->buf + b->cap - handle; }

static void push(fb_builder *b, const void *src, size_t n)
{
    if (!reserve(b, n)) return;
    b->size += n;
    if (n) {
        if (src)
            memcpy(at(b, (uint32_t)b->size), src, n);
        else
            memset(at(b, (uint32_t)b->size), 0, n);
    }
}

/* Pads so that after pushing `len` more bytes the size is a multiple of `align` (power of 2). */
static void prealign(fb_builder *b, size_t len, size_t align)
{
    if (align > b->minalign) b->minalign = align;
    size_t pad = (size_t)(0 - (b->size + len)) & (align - 1);
    push(b, NULL, pad);
}

static void push_u32(fb_builder *b, uint32_t v)
{
    uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    push(b, le, 4);
}

/* Value of a uoffset to `handle` stored in the 4 bytes about to be pushed (already aligned). */
static uint32_t refer_to(const fb_builder *b, uint32_t handle)
{
    return (uint32_t)(b->size + 4 - handle);
}

static bool valid_handle(const fb_builder *b, uint32_t handle)
{
    return handle != 0 && handle <= (b->in_table ? b->table_start : b->size);
}

uint32_t fb_create_string(fb_builder *b, const char *s, size_t len)
{
    if (!usable(b)) return 0;
    if (b->in_table || (!s && len)) {
        b->misuse = true;
        return 0;
    }
    if (len > FB_MAX_BUFFER_SIZE) {
        b->failed = true;
        return 0;
    }
    prealign(b, len + 1, 4);
    push(b, NULL, 1);
    push(b, s, len);
    push_u32(b, (uint32_t)len);
    return b->failed ? 0 : (uint32_t)b->size;
}

static size_t natural_align(uint32_t elem_size)
{
    return (elem_size == 1 || elem_size == 2 || elem_size == 4 || elem_size == 8) ? elem_size : 1;
}

uint32_t fb_create_vector(fb_builder *b, const void *elems, uint32_t count, uint32_t elem_size,
                          uint32_t payload_align)
{
    if (!usable(b)) return 0;
    if (b->in_table || elem_size == 0 || (!elems && count) || payload_align > 64 ||
        (payload_align & (payload_align - 1))) {
        b->misuse = true;
        return 0;
    }
    uint64_t nbytes = (uint64_t)count * elem_size;
    if (nbytes > FB_MAX_BUFFER_SIZE) {
        b->failed = true;
        return 0;
    }
    size_t align = 4;
    if (natural_align(elem_size) > align) align = natural_align(elem_size);
    if (payload_align > align) align = payload_align;
    prealign(b, (size_t)nbytes, align);
    push(b, elems, (size_t)nbytes);
    push_u32(b, count);
    return b->failed ? 0 : (uint32_t)b->size;
}

uint32_t fb_create_vector_external(fb_builder *b, const void *src, size_t len, size_t padded, uint32_t payload_align)
{
    if (!usable(b)) return 0;
    if (b->in_table || (!src && len) || padded < len || payload_align > 64 || (payload_align & (payload_align - 1))) {
        b->misuse = true;
        return 0;
    }
    if (padded > FB_MAX_BUFFER_SIZE || padded > UINT32_MAX) {
        b->failed = true;
        return 0;
    }
    if (!tosac_grow((void **)&b->segs, &b->segs_cap, b->nsegs + 1, sizeof(fb_segment))) {
        b->failed = true;
        return 0;
    }
    prealign(b, padded, payload_align > 4 ? payload_align : 4);
    if (!reserve(b, padded)) return 0;
    b->size += padded;
    /* only the padding is written now; the payload's pages stay untouched */
    if (padded > len) memset(at(b, (uint32_t)b->size) + len, 0, padded - len);
    b->segs[b->nsegs++] = (fb_segment){b->size, src, len};
    push_u32(b, (uint32_t)padded);
    return b->failed ? 0 : (uint32_t)b->size;
}

const fb_segment *fb_segments(const fb_builder *b, size_t *n)
{
    *n = b->nsegs;
    return b->segs;
}

size_t fb_segment_offset(const fb_builder *b, const fb_segment *s) { return b->size - s->handle; }

void fb_fill_segments(fb_builder *b)
{
    for (size_t k = 0; k < b->nsegs; k++)
        if (b->segs[k].len) memcpy(at(b, (uint32_t)b->segs[k].handle), b->segs[k].src, b->segs[k].len);
}

uint32_t fb_create_offset_vector(fb_builder *b, const uint32_t *handles, uint32_t count)
{
    if (!usable(b)) return 0;
    if (b->in_table || (!handles && count)) {
        b->misuse = true;
        return 0;
    }
    if ((uint64_t)count * 4 > FB_MAX_BUFFER_SIZE) {
        b->failed = true;
        return 0;
    }
    for (uint32_t i = 0; i < count; i++) {
        if (!valid_handle(b, handles[i])) {
            b->misuse = true;
            return 0;
        }
    }
    prealign(b, (size_t)count * 4, 4);
    if (!reserve(b, (size_t)count * 4 + 4)) return 0;
    for (uint32_t i = count; i-- > 0;) push_u32(b, refer_to(b, handles[i]));
    push_u32(b, count);
    return b->failed ? 0 : (uint32_t)b->size;
}

void fb_table_begin(fb_builder *b)
{
    if (!usable(b)) return;
    if (b->in_table) {
        b->misuse = true;
        return;
    }
    b->in_table = true;
    b->table_start = (uint32_t)b->size;
    memset(b->field_loc, 0, sizeof(b->field_loc));
    b->field_end = 0;
}

static void add_scalar(fb_builder *b, unsigned id, const uint8_t *le, size_t n)
{
    if (!usable(b)) return;
    if (!b->in_table || id >= FB_MAX_FIELDS || b->field_loc[id]) {
        b->misuse = true;
        return;
    }
    prealign(b, n, n);
    push(b, le, n);
    if (b->failed) return;
    b->field_loc[id] = (uint32_t)b->size;
    if (id + 1 > b->field_end) b->field_end = id + 1;
}

void fb_add_u8(fb_builder *b, unsigned id, uint8_t v) { add_scalar(b, id, &v, 1); }

void fb_add_bool(fb_builder *b, unsigned id, bool v)
{
    uint8_t u = v ? 1 : 0;
    add_scalar(b, id, &u, 1);
}

void fb_add_u16(fb_builder *b, unsigned id, uint16_t v)
{
    uint8_t le[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    add_scalar(b, id, le, 2);
}

void fb_add_u32(fb_builder *b, unsigned id, uint32_t v)
{
    uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    add_scalar(b, id, le, 4);
}

void fb_add_i32(fb_builder *b, unsigned id, int32_t v) { fb_add_u32(b, id, (uint32_t)v); }

void fb_add_u64(fb_builder *b, unsigned id, uint64_t v)
{
    uint8_t le[8];
    for (int i = 0; i < 8; i++) le[i] = (uint8_t)(v >> (8 * i));
    add_scalar(b, id, le, 8);
}

void fb_add_i64(fb_builder *b, unsigned id, int64_t v) { fb_add_u64(b, id, (uint64_t)v); }

void fb_add_offset(fb_builder *b, unsigned id, uint32_t handle)
{
    if (!usable(b)) return;
    if (handle == 0) return;
    if (!b->in_table || id >= FB_MAX_FIELDS || b->field_loc[id] || !valid_handle(b, handle)) {
        b->misuse = true;
        return;
    }
    prealign(b, 4, 4);
    push_u32(b, refer_to(b, handle));
    if (b->failed) return;
    b->field_loc[id] = (uint32_t)b->size;
    if (id + 1 > b->field_end) b->field_end = id + 1;
}

uint32_t fb_table_end(fb_builder *b)
{
    if (!usable(b)) return 0;
    if (!b->in_table) {
        b->misuse = true;
        return 0;
    }
    b->in_table = false;
    /* soffset placeholder, patched below */
    prealign(b, 4, 4);
    push_u32(b, 0);
    if (b->failed) return 0;
    uint32_t tbl = (uint32_t)b->size;
    size_t obj_size = tbl - b->table_start;
    size_t vt_len = 4 + 2 * (size_t)b->field_end;
    if (obj_size > 0xFFFF) {
        b->misuse = true;
        return 0;
    }
    uint8_t vt[4 + 2 * FB_MAX_FIELDS];
    vt[0] = (uint8_t)vt_len;
    vt[1] = (uint8_t)(vt_len >> 8);
    vt[2] = (uint8_t)obj_size;
    vt[3] = (uint8_t)(obj_size >> 8);
    for (unsigned i = 0; i < b->field_end; i++) {
        uint32_t off = b->field_loc[i] ? tbl - b->field_loc[i] : 0;
        vt[4 + 2 * i] = (uint8_t)off;
        vt[5 + 2 * i] = (uint8_t)(off >> 8);
    }
    /* Share an identical vtable written earlier (first match wins: deterministic). */
    uint32_t vh = 0;
    for (size_t k = 0; k < b->nvtables; k++) {
        const uint8_t *p = at(b, b->vtables[k]);
        if (fb_le_u16(p) == vt_len && memcmp(p, vt, vt_len) == 0) {
            vh = b->vtables[k];
            break;
        }
    }
    if (!vh) {
        if (!tosac_grow((void **)&b->vtables, &b->vtables_cap, b->nvtables + 1, sizeof(uint32_t))) {
            b->failed = true;
            return 0;
        }
        push(b, vt, vt_len);
        if (b->failed) return 0;
        vh = (uint32_t)b->size;
        b->vtables[b->nvtables++] = vh;
    }
    /* vtable position = table position - soffset; positions from the start are total - handle. */
    int64_t soff = (int64_t)vh - (int64_t)tbl;
    uint32_t u = (uint32_t)soff;
    uint8_t *p = at(b, tbl);
    p[0] = (uint8_t)u;
    p[1] = (uint8_t)(u >> 8);
    p[2] = (uint8_t)(u >> 16);
    p[3] = (uint8_t)(u >> 24);
    return tbl;
}

tosac_status fb_finish_view(fb_builder *b, uint32_t root, const char *ident, const uint8_t **out, size_t *out_len)
{
    if (!b || !out || !out_len) return TOSAC_ERR_INVALID_ARG;
    if (b->failed) return TOSAC_ERR_NOMEM;
    if (b->finished || b->in_table || b->misuse || !valid_handle(b, root) ||
        (ident && strlen(ident) != 4))
        return TOSAC_ERR_INVALID_ARG;
    size_t align = b->minalign < 4 ? 4 : b->minalign;
    prealign(b, ident ? 8 : 4, align);
    if (ident) push(b, ident, 4);
    push_u32(b, refer_to(b, root));
    if (b->failed) return TOSAC_ERR_NOMEM;
    b->finished = true;
    *out = at(b, (uint32_t)b->size);
    *out_len = b->size;
    return TOSAC_OK;
}

tosac_status fb_finish(fb_builder *b, uint32_t root, const char *ident, uint8_t **out,
                       size_t *out_len)
{
    if (!out || !out_len) return TOSAC_ERR_INVALID_ARG;
    const uint8_t *view;
    size_t n;
    tosac_status st = fb_finish_view(b, root, ident, &view, &n);
    if (st != TOSAC_OK) return st;
    uint8_t *copy = tosac_malloc(n);
    if (!copy) {
        b->failed = true;
        return TOSAC_ERR_NOMEM;
    }
    fb_fill_segments(b);
    memcpy(copy, view, n);
    *out = copy;
    *out_len = n;
    return TOSAC_OK;
}

void fb_builder_reserve(fb_builder *b, size_t n)
{
    if (b && !b->failed && b->cap - b->size < n) reserve(b, n);
}
