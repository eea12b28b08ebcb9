/*
 * TOSA flatbuffer writer: graph IR -> bytes (see include/tosac/tosa_file.h).
 *
 * Objects are built children first with the back-to-front builder of flatbuf.h, in IR order, so
 * the output depends only on the graph. Each value's name string is written once per block and
 * shared by the tensor/shape table and every operand list that names it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/diag.h"
#include "core/outfile.h"
#include "ir/graph.h"
#include "tosa/flatbuf.h"
#include "tosa/op_table.h"
#include "tosa/schema_ids.h"
#include "tosac/tosa_file.h"

typedef struct writer {
    fb_builder fb;
    tosac_diag *diag;
    const char *label;
    tosac_arena scratch; /* per-call temporaries (handle arrays) */
    uint8_t *tmp;        /* growable byte scratch (padded data, little-endian int32 vectors) */
    size_t tmp_cap;
    /* name string handles of the block being written, by value list */
    const tosac_block *blk;
    uint32_t *h_tensor, *h_shape, *h_undecl;
} writer;

static tosac_status wr_err(writer *w, tosac_status code, const char *where, const char *fmt, ...)
    TOSAC_PRINTF(4, 5);

static tosac_status wr_err(writer *w, tosac_status code, const char *where, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return tosac_diag_add(w->diag, code, "%s: %s: %s", w->label, where, msg);
}

static tosac_status wr_nomem(writer *w)
{
    return tosac_diag_add(w->diag, TOSAC_ERR_NOMEM, "%s: out of memory", w->label);
}

static uint8_t *tmp_bytes(writer *w, size_t n)
{
    if (!tosac_grow((void **)&w->tmp, &w->tmp_cap, n ? n : 1, 1)) return NULL;
    return w->tmp;
}

/* The (shared) name string of value `v` of the current block. */
static uint32_t name_handle(writer *w, const tosac_value *v)
{
    const tosac_block *b = w->blk;
    uint32_t *slot = NULL;
    if (v->block == b) {
        if (v->is_shape) {
            if (v->index < b->n_shapes && b->shapes[v->index] == v) slot = &w->h_shape[v->index];
        } else if (!v->declared) {
            if (v->index < b->n_undeclared && b->undeclared[v->index] == v) slot = &w->h_undecl[v->index];
        } else if (v->index < b->n_tensors && b->tensors[v->index] == v) {
            slot = &w->h_tensor[v->index];
        }
    }
    if (slot && *slot) return *slot;
    uint32_t h = fb_create_string(&w->fb, v->name, strlen(v->name));
    if (slot) *slot = h;
    return h;
}

static void le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

#define EXTERNAL_MIN 4096

/* A [ubyte] vector of `len` bytes with 8-byte aligned payload, zero-padded to a multiple of 8. */
static tosac_status padded_bytes(writer *w, const uint8_t *data, size_t len, uint32_t *h)
{
    size_t padded = (len + 7) & ~(size_t)7;
    if (padded < len || padded > FB_MAX_BUFFER_SIZE) return TOSAC_ERR_NOMEM;
    /* big payloads (weights) stay where they are until the file is written */
    if (len >= EXTERNAL_MIN) {
        *h = fb_create_vector_external(&w->fb, data, len, padded, 8);
        return TOSAC_OK;
    }
    const uint8_t *src = data;
    if (padded != len) {
        uint8_t *t = tmp_bytes(w, padded);
        if (!t) return TOSAC_ERR_NOMEM;
        memcpy(t, data, len);
        memset(t + len, 0, padded - len);
        src = t;
    }
    *h = fb_create_vector(&w->fb, src, (uint32_t)padded, 1, 8);
    return TOSAC_OK;
}

static tosac_status write_tensor(writer *w, const tosac_value *v, const char *where, uint32_t *out)
{
    if (v->rank < 0 || v->rank > TOSAC_MAX_RANK || (v->rank > 0 && !v->shape))
        return wr_err(w, TOSAC_ERR_INVALID_ARG, where, "tensor '%s' has invalid rank %d", v->name, (int)v->rank);
    uint8_t dims[4 * TOSAC_MAX_RANK];
    for (int32_t i = 0; i < v->rank; i++) {
        int64_t d = v->shape[i];
        if (d < INT32_MIN || d > INT32_MAX)
            return wr_err(w, TOSAC_ERR_UNSUPPORTED, where,
                          "tensor '%s': dimension %d is %lld, which does not fit the file's int32", v->name,
                          (int)i, (long long)d);
        le32(dims + 4 * i, (uint32_t)(int32_t)d);
    }
    if ((uint32_t)v->dtype >= TOSAC_DTYPE_COUNT)
        return wr_err(w, TOSAC_ERR_INVALID_ARG, where, "tensor '%s' has invalid DType %u", v->name,
                      (unsigned)v->dtype);
    uint32_t h_name = name_handle(w, v);
    uint32_t h_shape = fb_create_vector(&w->fb, dims, (uint32_t)v->rank, 4, 0);
    uint32_t h_data = 0, h_varname = 0;
    if (v->data) {
        if (v->data_len > FB_MAX_BUFFER_SIZE || padded_bytes(w, v->data, v->data_len, &h_data) != TOSAC_OK)
            return wr_err(w, TOSAC_ERR_NOMEM, where, "tensor '%s': %zu data bytes do not fit a flatbuffer", v->name,
                          v->data_len);
    }
    if (v->variable_name) h_varname = fb_create_string(&w->fb, v->variable_name, strlen(v->variable_name));
    fb_builder *b = &w->fb;
    fb_table_begin(b);
    if (v->ext_offset) fb_add_u64(b, TENSOR_OFFSET, v->ext_offset);
    if (v->ext_size) fb_add_u64(b, TENSOR_SIZE, v->ext_size);
    fb_add_offset(b, TENSOR_NAME, h_name);
    fb_add_offset(b, TENSOR_SHAPE, h_shape);
    fb_add_u32(b, TENSOR_TYPE, (uint32_t)v->dtype);
    fb_add_offset(b, TENSOR_DATA, h_data);
    fb_add_offset(b, TENSOR_VARNAME, h_varname);
    if (v->variable) fb_add_bool(b, TENSOR_VARIABLE, true);
    if (v->is_unranked) fb_add_bool(b, TENSOR_UNRANKED, true);
    *out = fb_table_end(b);
    return TOSAC_OK;
}

static tosac_status write_shape(writer *w, const tosac_value *v, const char *where, uint32_t *out)
{
    if (v->rank != 1 || !v->shape || v->shape[0] < 0 || v->shape[0] > (int64_t)UINT32_MAX)
        return wr_err(w, TOSAC_ERR_UNSUPPORTED, where, "shape value '%s' has no element count that fits uint32",
                      v->name);
    uint32_t rank = (uint32_t)v->shape[0];
    if (v->data && v->data_len != (size_t)rank * 8)
        return wr_err(w, TOSAC_ERR_INVALID_ARG, where, "shape value '%s' has %zu data bytes, expected %llu", v->name,
                      v->data_len, (unsigned long long)rank * 8);
    uint32_t h_name = name_handle(w, v);
    uint32_t h_data = 0;
    if (v->data)
        h_data = v->data_len >= EXTERNAL_MIN ? fb_create_vector_external(&w->fb, v->data, v->data_len, v->data_len, 8)
                                             : fb_create_vector(&w->fb, v->data, (uint32_t)v->data_len, 1, 8);
    fb_builder *b = &w->fb;
    fb_table_begin(b);
    fb_add_offset(b, SHAPE_NAME, h_name);
    fb_add_u32(b, SHAPE_RANK, rank);
    fb_add_offset(b, SHAPE_DATA, h_data);
    *out = fb_table_end(b);
    return TOSAC_OK;
}

/* The attribute table of node `n` under union tag `tag`. */
static tosac_status write_attrs(writer *w, const tosac_node *n, uint32_t tag, const char *where, uint32_t *out)
{
    uint32_t child[TOSAC_ATTR_MAX_FIELDS] = {0};
    for (unsigned id = 0; id < TOSAC_ATTR_MAX_FIELDS; id++) {
        const tosac_attr_val *a = &n->attr[id];
        if (!a->present) continue;
        const tosac_attr_desc *desc = tosac_op_attr_desc(tag, id);
        const char *fname = desc->name ? desc->name : "?";
        switch ((tosac_attr_kind)desc->kind) {
        case TOSAC_AK_NONE:
            return wr_err(w, TOSAC_ERR_INVALID_ARG, where, "attribute field %u is not a field of %sAttribute", id,
                          tosac_op_attr_table(tag));
        case TOSAC_AK_I32:
            if (a->i < INT32_MIN || a->i > INT32_MAX)
                return wr_err(w, TOSAC_ERR_UNSUPPORTED, where, "attribute %s = %lld does not fit int32", fname,
                              (long long)a->i);
            break;
        case TOSAC_AK_BOOL:
            break;
        case TOSAC_AK_DTYPE:
        case TOSAC_AK_NAN:
        case TOSAC_AK_RESIZE:
        case TOSAC_AK_ROUND:
            if (a->i < 0 || a->i > (int64_t)UINT32_MAX)
                return wr_err(w, TOSAC_ERR_UNSUPPORTED, where, "attribute %s = %lld does not fit its enum (uint32)",
                              fname, (long long)a->i);
            break;
        case TOSAC_AK_I32V: {
            if (a->len && !a->data)
                return wr_err(w, TOSAC_ERR_INVALID_ARG, where, "attribute %s has no data", fname);
            size_t nbytes;
            if (!tosac_mul_size(a->len, 4, &nbytes) || nbytes > FB_MAX_BUFFER_SIZE) return wr_nomem(w);
            uint8_t *t = tmp_bytes(w, nbytes);
            if (!t) return wr_nomem(w);
            const int32_t *vals = a->data;
            for (uint32_t i = 0; i < a->len; i++) le32(t + 4 * (size_t)i, (uint32_t)vals[i]);
            child[id] = fb_create_vector(&w->fb, t, a->len, 4, 0);
            break;
        }
        case TOSAC_AK_BYTES:
        case TOSAC_AK_BYTES8:
            if (a->len && !a->data)
                return wr_err(w, TOSAC_ERR_INVALID_ARG, where, "attribute %s has no data", fname);
            child[id] = fb_create_vector(&w->fb, a->data, a->len, 1, desc->kind == TOSAC_AK_BYTES8 ? 8 : 0);
            break;
        case TOSAC_AK_STR:
            if (a->len && !a->data)
                return wr_err(w, TOSAC_ERR_INVALID_ARG, where, "attribute %s has no data", fname);
            child[id] = fb_create_string(&w->fb, a->data, a->len);
            break;
        }
    }
    fb_builder *b = &w->fb;
    fb_table_begin(b);
    for (unsigned id = 0; id < TOSAC_ATTR_MAX_FIELDS; id++) {
        const tosac_attr_val *a = &n->attr[id];
        if (!a->present) continue;
        switch ((tosac_attr_kind)tosac_op_attr_desc(tag, id)->kind) {
        case TOSAC_AK_I32: fb_add_i32(b, id, (int32_t)a->i); break;
        case TOSAC_AK_BOOL: fb_add_bool(b, id, a->i != 0); break;
        case TOSAC_AK_DTYPE:
        case TOSAC_AK_NAN:
        case TOSAC_AK_RESIZE:
        case TOSAC_AK_ROUND: fb_add_u32(b, id, (uint32_t)a->i); break;
        case TOSAC_AK_I32V:
        case TOSAC_AK_BYTES:
        case TOSAC_AK_BYTES8:
        case TOSAC_AK_STR: fb_add_offset(b, id, child[id]); break;
        case TOSAC_AK_NONE: break;
        }
    }
    *out = fb_table_end(b);
    return TOSAC_OK;
}

/* An offset vector of the names of `n` values. */
static tosac_status name_vector(writer *w, tosac_value *const *vals, uint32_t n, const char *where, const char *what,
                                uint32_t *out)
{
    uint32_t *h = NULL;
    if (n) {
        size_t bytes;
        if (!tosac_mul_size(n, sizeof(uint32_t), &bytes) || !(h = tosac_arena_alloc(&w->scratch, bytes)))
            return wr_nomem(w);
    }
    for (uint32_t i = 0; i < n; i++) {
        if (!vals[i] || !vals[i]->name)
            return wr_err(w, TOSAC_ERR_INVALID_ARG, where, "%s[%u] is not a value", what, (unsigned)i);
        h[i] = name_handle(w, vals[i]);
    }
    *out = fb_create_offset_vector(&w->fb, h, n);
    return TOSAC_OK;
}

static tosac_status write_operator(writer *w, const tosac_node *n, const char *where, uint32_t *out)
{
    if (!tosac_op_valid(n->op))
        return wr_err(w, TOSAC_ERR_INVALID_ARG, where, "operator number %u is not a TOSA 1.0 operator",
                      (unsigned)n->op);
    uint32_t tag = n->attr_type ? n->attr_type : n->op;
    if (!tosac_op_valid(tag))
        return wr_err(w, TOSAC_ERR_INVALID_ARG, where, "attribute type tag %u is not a TOSA 1.0 attribute table",
                      (unsigned)tag);
    tosac_status st;
    uint32_t h_attr = 0, h_in = 0, h_out = 0, h_loc = 0;
    if ((st = write_attrs(w, n, tag, where, &h_attr)) != TOSAC_OK) return st;
    if ((st = name_vector(w, n->inputs, n->n_inputs, where, "inputs", &h_in)) != TOSAC_OK) return st;
    if ((st = name_vector(w, n->outputs, n->n_outputs, where, "outputs", &h_out)) != TOSAC_OK) return st;
    fb_builder *b = &w->fb;
    if (n->location) {
        uint32_t h_text = fb_create_string(b, n->location, strlen(n->location));
        fb_table_begin(b);
        fb_add_offset(b, LOC_TEXT, h_text);
        h_loc = fb_table_end(b);
    }
    fb_table_begin(b);
    fb_add_u32(b, OPR_OP, n->op);
    fb_add_offset(b, OPR_ATTR, h_attr);
    fb_add_offset(b, OPR_INPUTS, h_in);
    fb_add_offset(b, OPR_OUTPUTS, h_out);
    fb_add_offset(b, OPR_LOCATION, h_loc);
    fb_add_u8(b, OPR_ATTR_TYPE, (uint8_t)tag);
    *out = fb_table_end(b);
    return TOSAC_OK;
}

/* Allocates a zeroed array of n handles from the scratch arena (*out NULL for n == 0). */
static tosac_status handles(writer *w, uint32_t n, uint32_t **out)
{
    *out = NULL;
    if (!n) return TOSAC_OK;
    size_t bytes;
    if (!tosac_mul_size(n, sizeof(uint32_t), &bytes) || !(*out = tosac_arena_alloc(&w->scratch, bytes)))
        return wr_nomem(w);
    return TOSAC_OK;
}

static tosac_status write_block(writer *w, const tosac_block *b, const char *where, uint32_t *out)
{
    tosac_status st;
    char p[256];
    w->blk = b;
    uint32_t *ht = NULL, *hs = NULL, *hn = NULL;
    if ((st = handles(w, b->n_tensors, &w->h_tensor)) != TOSAC_OK) return st;
    if ((st = handles(w, b->n_shapes, &w->h_shape)) != TOSAC_OK) return st;
    if ((st = handles(w, b->n_undeclared, &w->h_undecl)) != TOSAC_OK) return st;
    if ((st = handles(w, b->n_tensors, &ht)) != TOSAC_OK) return st;
    if ((st = handles(w, b->n_shapes, &hs)) != TOSAC_OK) return st;
    if ((st = handles(w, b->n_nodes, &hn)) != TOSAC_OK) return st;
    for (uint32_t i = 0; i < b->n_tensors; i++) {
        snprintf(p, sizeof(p), "%s.tensors[%u]", where, (unsigned)i);
        if ((st = write_tensor(w, b->tensors[i], p, &ht[i])) != TOSAC_OK) return st;
    }
    for (uint32_t i = 0; i < b->n_shapes; i++) {
        snprintf(p, sizeof(p), "%s.shapes[%u]", where, (unsigned)i);
        if ((st = write_shape(w, b->shapes[i], p, &hs[i])) != TOSAC_OK) return st;
    }
    for (uint32_t i = 0; i < b->n_nodes; i++) {
        snprintf(p, sizeof(p), "%s.operators[%u]", where, (unsigned)i);
        if ((st = write_operator(w, b->nodes[i], p, &hn[i])) != TOSAC_OK) return st;
    }
    uint32_t h_ops = fb_create_offset_vector(&w->fb, hn, b->n_nodes);
    uint32_t h_tensors = fb_create_offset_vector(&w->fb, ht, b->n_tensors);
    uint32_t h_shapes = fb_create_offset_vector(&w->fb, hs, b->n_shapes);
    uint32_t h_in = 0, h_out = 0;
    if ((st = name_vector(w, b->inputs, b->n_inputs, where, "inputs", &h_in)) != TOSAC_OK) return st;
    if ((st = name_vector(w, b->outputs, b->n_outputs, where, "outputs", &h_out)) != TOSAC_OK) return st;
    uint32_t h_name = fb_create_string(&w->fb, b->name, strlen(b->name));
    fb_builder *fb = &w->fb;
    fb_table_begin(fb);
    fb_add_offset(fb, BLOCK_NAME, h_name);
    fb_add_offset(fb, BLOCK_OPERATORS, h_ops);
    fb_add_offset(fb, BLOCK_TENSORS, h_tensors);
    fb_add_offset(fb, BLOCK_INPUTS, h_in);
    fb_add_offset(fb, BLOCK_OUTPUTS, h_out);
    fb_add_offset(fb, BLOCK_SHAPES, h_shapes);
    *out = fb_table_end(fb);
    w->blk = NULL;
    return TOSAC_OK;
}

/* Upper-bound-ish estimate of the flatbuffer size: constant payloads dominate; names, shapes and
   tables get a generous per-item allowance. Only a capacity hint. */
static size_t estimate_size(const tosac_graph *g)
{
    size_t n = 4096;
    for (uint32_t r = 0; r < g->n_regions; r++)
        for (uint32_t i = 0; i < g->regions[r]->n_blocks; i++) {
            const tosac_block *b = g->regions[r]->blocks[i];
            for (uint32_t k = 0; k < b->n_tensors; k++)
                n += b->tensors[k]->data_len + 16 + 160 + 8 * (size_t)b->tensors[k]->rank + strlen(b->tensors[k]->name);
            n += (size_t)b->n_shapes * 200 + (size_t)b->n_nodes * 256;
        }
    return n;
}

static tosac_status write_graph(writer *w, const tosac_graph *g, const uint8_t **out, size_t *len)
{
    fb_builder_reserve(&w->fb, estimate_size(g));
    tosac_status st;
    char p[128];
    uint32_t *hr = NULL;
    if ((st = handles(w, g->n_regions, &hr)) != TOSAC_OK) return st;
    for (uint32_t r = 0; r < g->n_regions; r++) {
        const tosac_region *reg = g->regions[r];
        uint32_t *hb = NULL;
        if ((st = handles(w, reg->n_blocks, &hb)) != TOSAC_OK) return st;
        for (uint32_t i = 0; i < reg->n_blocks; i++) {
            snprintf(p, sizeof(p), "regions[%u].blocks[%u]", (unsigned)r, (unsigned)i);
            if ((st = write_block(w, reg->blocks[i], p, &hb[i])) != TOSAC_OK) return st;
        }
        uint32_t h_blocks = fb_create_offset_vector(&w->fb, hb, reg->n_blocks);
        uint32_t h_name = fb_create_string(&w->fb, reg->name, strlen(reg->name));
        fb_table_begin(&w->fb);
        fb_add_offset(&w->fb, REGION_NAME, h_name);
        fb_add_offset(&w->fb, REGION_BLOCKS, h_blocks);
        hr[r] = fb_table_end(&w->fb);
    }
    uint32_t h_regions = fb_create_offset_vector(&w->fb, hr, g->n_regions);
    fb_builder *b = &w->fb;
    fb_table_begin(b);
    fb_add_i32(b, VER_MAJOR, g->ver_major);
    fb_add_i32(b, VER_MINOR, g->ver_minor);
    fb_add_i32(b, VER_PATCH, g->ver_patch);
    fb_add_bool(b, VER_DRAFT, g->ver_draft);
    uint32_t h_ver = fb_table_end(b);
    fb_table_begin(b);
    fb_add_offset(b, GRAPH_VERSION, h_ver);
    fb_add_offset(b, GRAPH_REGIONS, h_regions);
    uint32_t root = fb_table_end(b);
    st = fb_finish_view(b, root, "TOSA", out, len);
    if (st == TOSAC_ERR_NOMEM)
        return tosac_diag_add(w->diag, st, "%s: out of memory, or the graph is over the 2 GiB flatbuffer limit",
                              w->label);
    if (st != TOSAC_OK)
        return tosac_diag_add(w->diag, TOSAC_ERR_INTERNAL, "%s: flatbuffer builder misuse (a tosac bug)", w->label);
    return TOSAC_OK;
}

/* Builds g's flatbuffer in w (a view into w's builder; release with writer_free). */
static tosac_status build(writer *w, const tosac_graph *g, const char *label, const uint8_t **view, size_t *len,
                          tosac_diag *d)
{
    memset(w, 0, sizeof(*w));
    w->diag = d;
    w->label = label;
    fb_builder_init(&w->fb);
    tosac_arena_init(&w->scratch);
    if (!g || !view || !len) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s: bad arguments", label);
    return write_graph(w, g, view, len);
}

static void writer_free(writer *w)
{
    fb_builder_free(&w->fb);
    tosac_arena_deinit(&w->scratch);
    tosac_free(w->tmp, w->tmp_cap);
}

static tosac_status write_mem_labelled(const tosac_graph *g, const char *label, uint8_t **out, size_t *len,
                                       tosac_diag *d)
{
    if (!out || !len) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s: bad arguments", label);
    writer w;
    const uint8_t *view = NULL;
    size_t n = 0;
    tosac_status st = build(&w, g, label, &view, &n, d);
    uint8_t *copy = st == TOSAC_OK ? tosac_malloc(n) : NULL;
    if (st == TOSAC_OK && !copy) st = tosac_diag_add(d, TOSAC_ERR_NOMEM, "%s: out of memory", label);
    if (copy) {
        fb_fill_segments(&w.fb);
        memcpy(copy, view, n);
    }
    writer_free(&w);
    if (st != TOSAC_OK) return st;
    *out = copy;
    *len = n;
    return TOSAC_OK;
}

tosac_status tosac_tosa_write_mem(const tosac_graph *g, uint8_t **out, size_t *len, tosac_diag *d)
{
    return write_mem_labelled(g, "tosa writer", out, len, d);
}

void tosac_buffer_free(uint8_t *buf, size_t len) { tosac_free(buf, len); }

typedef struct pieces {
    const fb_builder *b;
    const uint8_t *view;
    size_t len;
} pieces;

/* The finished buffer with each external payload written from where it lives. */
static bool fill_pieces(int fd, void *ctx)
{
    const pieces *pc = ctx;
    const fb_builder *b = pc->b;
    const uint8_t *view = pc->view;
    size_t len = pc->len, n, pos = 0;
    const fb_segment *segs = fb_segments(b, &n);
    for (size_t k = n; k-- > 0;) {
        size_t off = fb_segment_offset(b, &segs[k]);
        if (!tosac_write_all(fd, view + pos, off - pos) || !tosac_write_all(fd, segs[k].src, segs[k].len)) return false;
        pos = off + segs[k].len;
    }
    return tosac_write_all(fd, view + pos, len - pos);
}

tosac_status tosac_tosa_write_file(const tosac_graph *g, const char *path, tosac_diag *d)
{
    if (!g || !path) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_tosa_write_file: bad arguments");
    writer w;
    const uint8_t *buf = NULL;
    size_t len = 0;
    tosac_status st = build(&w, g, path, &buf, &len, d);
    if (st != TOSAC_OK) {
        writer_free(&w);
        return st;
    }

    /* no fsync: like compilers, rely on the atomic rename for "never a partial file" rather than
       paying a disk flush of hundreds of MB on every compile */
    pieces pc = {&w.fb, buf, len};
    st = tosac_outfile_write(path, fill_pieces, &pc, d);
    writer_free(&w);
    return st;
}
