/*
 * TOSA flatbuffer reader: bytes -> graph IR (see include/tosac/tosa_file.h).
 *
 * Every byte access goes through the verifying reader of flatbuf.h. On top of its checks this file
 * bounds (a) the number of objects visited (fb_reader.budget) and (b) the number of file bytes
 * copied into the graph, so a file that shares sub-objects many times cannot make the reader
 * do or allocate more than a small multiple of its size.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#define TOSA_READ_MMAP 1
#endif

#include "core/alloc.h"
#include "core/diag.h"
#include "ir/graph.h"
#include "tosa/flatbuf.h"
#include "tosa/op_table.h"
#include "tosa/schema_ids.h"
#include "tosac/tosa_file.h"

#define DEFAULT_MAX_FILE ((uint64_t)4 << 30)
#define PATH_MAX_LEN 256

typedef struct reader {
    fb_reader fr;
    const char *file;
    tosac_diag *diag;
    size_t budget;     /* objects left (fb_reader.budget points here) */
    size_t copy_left;  /* file bytes that may still be copied into the graph */
    tosac_graph *g;
    tosac_value **ops; /* scratch for operand lists */
    size_t ops_cap;
} reader;

/* Object path for messages: "regions[0].blocks[1].operators[3].inputs[1]". */
typedef struct objpath {
    char s[PATH_MAX_LEN];
} objpath;

/* Appends `s` to out->s, truncating silently (paths only label messages). */
static void path_cat(objpath *out, size_t *n, const char *s)
{
    while (*s && *n + 1 < sizeof(out->s)) out->s[(*n)++] = *s++;
    out->s[*n] = 0;
}

static void path_sub(objpath *out, const objpath *parent, const char *field, int64_t idx)
{
    size_t n = 0;
    out->s[0] = 0;
    if (parent && parent->s[0]) {
        path_cat(out, &n, parent->s);
        path_cat(out, &n, ".");
    }
    path_cat(out, &n, field);
    if (idx >= 0) {
        char num[32];
        snprintf(num, sizeof(num), "[%lld]", (long long)idx);
        path_cat(out, &n, num);
    }
}

static tosac_status rd_err(reader *r, tosac_status code, const objpath *where, const char *fmt, ...)
    TOSAC_PRINTF(4, 5);

static tosac_status rd_err(reader *r, tosac_status code, const objpath *where, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (where && where->s[0]) return tosac_diag_add(r->diag, code, "%s: %s: %s", r->file, where->s, msg);
    return tosac_diag_add(r->diag, code, "%s: %s", r->file, msg);
}

static tosac_status nomem(reader *r, const objpath *where)
{
    return rd_err(r, TOSAC_ERR_NOMEM, where, "out of memory");
}

/* Accounts for `n` file bytes about to be copied into the graph. */
static tosac_status charge(reader *r, const objpath *where, uint64_t n)
{
    if (n > r->copy_left)
        return rd_err(r, TOSAC_ERR_NOMEM, where,
                      "the file's objects expand to more data than the file holds (shared objects?)");
    r->copy_left -= (size_t)n;
    return TOSAC_OK;
}

/*
 * A name-like string field: absent -> "" (or NULL when `absent_null`); embedded NUL bytes are
 * rejected because the IR keeps names as C strings. The result points into the file buffer.
 */
static tosac_status get_cstr(reader *r, const fb_table *t, unsigned id, const objpath *where, const char *what,
                             bool absent_null, const char **out)
{
    const char *s = NULL;
    uint32_t len = 0;
    tosac_status st = fb_get_string(t, id, &s, &len, where->s);
    if (st != TOSAC_OK) return st;
    if (!s) {
        *out = absent_null ? NULL : "";
        return TOSAC_OK;
    }
    if (strlen(s) != len) return rd_err(r, TOSAC_ERR_FORMAT, where, "%s contains a NUL byte", what);
    *out = s;
    return TOSAC_OK;
}

/* Element i of a vector of strings, as a C string. */
static tosac_status vec_cstr(reader *r, const fb_vec *v, uint32_t i, const objpath *where, const char **out)
{
    const char *s = NULL;
    uint32_t len = 0;
    tosac_status st = fb_vec_string(v, i, &s, &len, where->s);
    if (st != TOSAC_OK) return st;
    if (strlen(s) != len) return rd_err(r, TOSAC_ERR_FORMAT, where, "name contains a NUL byte");
    *out = s;
    return TOSAC_OK;
}

/* Resolves an operand or block I/O name to a value of `b` (a placeholder if undeclared). */
static tosac_status resolve(reader *r, tosac_block *b, const char *name, const objpath *where, tosac_value **out)
{
    tosac_value *v = tosac_block_find(b, name);
    if (!v) {
        tosac_status st = charge(r, where, strlen(name) + 1);
        if (st != TOSAC_OK) return st;
        v = tosac_block_get_or_placeholder(b, name);
        if (!v) return nomem(r, where);
    }
    *out = v;
    return TOSAC_OK;
}

/* Copies `n` bytes into the graph arena (a valid pointer even for n == 0). */
static tosac_status copy_bytes(reader *r, const objpath *where, const void *src, size_t n, const void **out)
{
    tosac_status st = charge(r, where, n);
    if (st != TOSAC_OK) return st;
    void *p = tosac_arena_memdup(&r->g->arena, src, n);
    if (!p) return nomem(r, where);
    *out = p;
    return TOSAC_OK;
}

/* Copies `n` bytes of constant data into v (graph arena). */
static tosac_status set_data(reader *r, tosac_value *v, const objpath *where, const void *src, size_t n)
{
    const void *copy = NULL;
    tosac_status st = copy_bytes(r, where, src, n, &copy);
    if (st != TOSAC_OK) return st;
    v->data = copy;
    v->data_len = n;
    return TOSAC_OK;
}

/* Copies the C string s into the graph arena. */
static tosac_status copy_cstr(reader *r, const objpath *where, const char *s, const char **out)
{
    const void *copy = NULL;
    tosac_status st = copy_bytes(r, where, s, strlen(s) + 1, &copy);
    if (st == TOSAC_OK) *out = copy;
    return st;
}

/* Length of tensor data without the writer's zero padding to a multiple of 8 (see header). */
static size_t unpadded_len(const tosac_value *v, const uint8_t *data, size_t len)
{
    if (v->is_unranked || len == 0 || len % 8 != 0) return len;
    int64_t n = tosac_value_nelem(v);
    size_t want;
    if (n < 0 || !tosac_dtype_storage_bytes(v->dtype, n, &want)) return len;
    if (want >= len || len - want >= 8) return len;
    for (size_t i = want; i < len; i++)
        if (data[i] != 0) return len;
    return want;
}

/* Adds shape value `name` of `count` elements to block b, with its constant data when present
   (count x int64 LE). An empty value may carry one 8-byte word: the official conformance generator
   writes the placeholder value 0 for RESHAPE to rank 0, and the reference model ignores it. */
static tosac_status add_shape_value(reader *r, tosac_block *b, const char *name, uint64_t count, const fb_vec *data,
                                    const objpath *where)
{
    bool has_data = data->pos != 0 && data->count > 0;
    if (has_data && (uint64_t)data->count != count * 8 && !(count == 0 && data->count == 8))
        return rd_err(r, TOSAC_ERR_FORMAT, where, "shape '%s' has %u data bytes, expected %llu (rank %llu x 8)",
                      name, (unsigned)data->count, (unsigned long long)count * 8, (unsigned long long)count);
    tosac_status st;
    if ((st = charge(r, where, strlen(name) + 1)) != TOSAC_OK) return st;
    tosac_value *v = tosac_block_add_shape(b, name, (uint32_t)count);
    if (!v) return nomem(r, where);
    if (has_data && count > 0 && (st = set_data(r, v, where, fb_vec_data(data), (size_t)count * 8)) != TOSAC_OK)
        return st;
    return TOSAC_OK;
}

static tosac_status read_shape(reader *r, void *block, const fb_table *t, const objpath *where)
{
    tosac_status st;
    const char *name = NULL;
    if ((st = get_cstr(r, t, SHAPE_NAME, where, "shape name", false, &name)) != TOSAC_OK) return st;
    objpath p;
    uint32_t rank = 0;
    path_sub(&p, where, "rank", -1);
    if ((st = fb_get_u32(t, SHAPE_RANK, 0, &rank, NULL, p.s)) != TOSAC_OK) return st;
    fb_vec data;
    path_sub(&p, where, "data", -1);
    if ((st = fb_get_vector(t, SHAPE_DATA, 1, &data, p.s)) != TOSAC_OK) return st;
    return add_shape_value(r, block, name, rank, &data, &p);
}

/* A TosaTensor of type SHAPE: the encoding of shape values before TosaShape (serializers of early
   2025, e.g. the reference model's stateful LSTM example and conformance tests generated then). As
   the reference model holds shape values, shape [n] is a value of n elements; a rank-0 tensor is
   the empty value. It becomes a shape value like one read from TosaBasicBlock.shapes. */
static tosac_status read_shape_tensor(reader *r, tosac_block *b, const fb_table *t, const char *name, uint32_t rank,
                                      const int64_t *dims, const objpath *where)
{
    objpath p;
    path_sub(&p, where, "shape", -1);
    if (rank > 1 || (rank == 1 && dims[0] < 0))
        return rd_err(r, TOSAC_ERR_FORMAT, &p,
                      "tensor '%s' of type SHAPE must have shape [n] (a shape value of n elements) or []", name);
    tosac_status st;
    bool variable = false;
    path_sub(&p, where, "variable", -1);
    if ((st = fb_get_bool(t, TENSOR_VARIABLE, false, &variable, NULL, p.s)) != TOSAC_OK) return st;
    if (variable) return rd_err(r, TOSAC_ERR_FORMAT, &p, "tensor '%s' of type SHAPE cannot be a variable", name);
    fb_vec data;
    path_sub(&p, where, "data", -1);
    if ((st = fb_get_vector(t, TENSOR_DATA, 1, &data, p.s)) != TOSAC_OK) return st;
    return add_shape_value(r, b, name, rank ? (uint64_t)dims[0] : 0, &data, &p);
}

static tosac_status read_tensor(reader *r, void *block, const fb_table *t, const objpath *where)
{
    tosac_block *b = block;
    tosac_status st;
    const char *name = NULL;
    if ((st = get_cstr(r, t, TENSOR_NAME, where, "tensor name", false, &name)) != TOSAC_OK) return st;
    objpath p;
    path_sub(&p, where, "shape", -1);
    fb_vec shp;
    if ((st = fb_get_vector(t, TENSOR_SHAPE, 4, &shp, p.s)) != TOSAC_OK) return st;
    if (shp.count > TOSAC_MAX_RANK)
        return rd_err(r, TOSAC_ERR_FORMAT, &p, "tensor '%s' has rank %u, more than the maximum %d", name,
                      (unsigned)shp.count, TOSAC_MAX_RANK);
    int64_t dims[TOSAC_MAX_RANK];
    for (uint32_t i = 0; i < shp.count; i++) dims[i] = fb_vec_i32(&shp, i);
    uint32_t type = 0;
    path_sub(&p, where, "type", -1);
    if ((st = fb_get_u32(t, TENSOR_TYPE, 0, &type, NULL, p.s)) != TOSAC_OK) return st;
    if (type >= TOSAC_DTYPE_COUNT)
        return rd_err(r, TOSAC_ERR_FORMAT, &p, "tensor '%s' has unknown DType %u", name, (unsigned)type);
    if (type == TOSAC_DTYPE_SHAPE) return read_shape_tensor(r, b, t, name, shp.count, dims, where);
    if ((st = charge(r, where, strlen(name) + 1 + 4 * (uint64_t)shp.count)) != TOSAC_OK) return st;
    tosac_value *v = tosac_block_add_tensor(b, name, (tosac_dtype)type, (int)shp.count, dims);
    if (!v) return nomem(r, where);

    bool flag = false;
    path_sub(&p, where, "variable", -1);
    if ((st = fb_get_bool(t, TENSOR_VARIABLE, false, &flag, NULL, p.s)) != TOSAC_OK) return st;
    v->variable = flag;
    path_sub(&p, where, "is_unranked", -1);
    if ((st = fb_get_bool(t, TENSOR_UNRANKED, false, &flag, NULL, p.s)) != TOSAC_OK) return st;
    v->is_unranked = flag;
    path_sub(&p, where, "variable_name", -1);
    const char *vn = NULL;
    if ((st = get_cstr(r, t, TENSOR_VARNAME, &p, "variable_name", true, &vn)) != TOSAC_OK) return st;
    /* the reference serializer writes "" for ordinary tensors */
    if (vn && *vn && (st = copy_cstr(r, &p, vn, &v->variable_name)) != TOSAC_OK) return st;
    path_sub(&p, where, "offset", -1);
    if ((st = fb_get_u64(t, TENSOR_OFFSET, 0, &v->ext_offset, NULL, p.s)) != TOSAC_OK) return st;
    path_sub(&p, where, "size", -1);
    if ((st = fb_get_u64(t, TENSOR_SIZE, 0, &v->ext_size, NULL, p.s)) != TOSAC_OK) return st;

    path_sub(&p, where, "data", -1);
    fb_vec data;
    if ((st = fb_get_vector(t, TENSOR_DATA, 1, &data, p.s)) != TOSAC_OK) return st;
    if (data.pos != 0 && data.count > 0) { /* an empty vector (reference serializer) means no data */
        const uint8_t *src = fb_vec_data(&data);
        if ((st = set_data(r, v, &p, src, unpadded_len(v, src, data.count))) != TOSAC_OK) return st;
    }
    return TOSAC_OK;
}

/* Decodes the fields of the attribute table of union tag `tag` (an op number) into n->attr. */
static tosac_status read_attrs(reader *r, tosac_node *n, uint32_t tag, const fb_table *at, const objpath *where)
{
    tosac_status st;
    for (unsigned id = 0; id < TOSAC_ATTR_MAX_FIELDS; id++) {
        const tosac_attr_desc *desc = tosac_op_attr_desc(tag, id);
        if (desc->kind == TOSAC_AK_NONE) continue;
        objpath p;
        path_sub(&p, where, desc->name, -1);
        tosac_attr_val *a = &n->attr[id];
        switch ((tosac_attr_kind)desc->kind) {
        case TOSAC_AK_I32: {
            int32_t v = 0;
            if ((st = fb_get_i32(at, id, 0, &v, &a->present, p.s)) != TOSAC_OK) return st;
            a->i = v;
            break;
        }
        case TOSAC_AK_BOOL: {
            bool v = false;
            if ((st = fb_get_bool(at, id, false, &v, &a->present, p.s)) != TOSAC_OK) return st;
            a->i = v ? 1 : 0;
            break;
        }
        case TOSAC_AK_DTYPE:
        case TOSAC_AK_NAN:
        case TOSAC_AK_RESIZE:
        case TOSAC_AK_ROUND: {
            uint32_t v = 0;
            if ((st = fb_get_u32(at, id, 0, &v, &a->present, p.s)) != TOSAC_OK) return st;
            a->i = v;
            break;
        }
        case TOSAC_AK_I32V: {
            fb_vec v;
            if ((st = fb_get_vector(at, id, 4, &v, p.s)) != TOSAC_OK) return st;
            if (v.pos == 0) break;
            a->present = true;
            a->len = v.count;
            if (v.count) {
                if ((st = charge(r, &p, 4 * (uint64_t)v.count)) != TOSAC_OK) return st;
                int32_t *d = tosac_arena_alloc(&r->g->arena, (size_t)v.count * sizeof(int32_t));
                if (!d) return nomem(r, &p);
                for (uint32_t i = 0; i < v.count; i++) d[i] = fb_vec_i32(&v, i);
                a->data = d;
            }
            break;
        }
        case TOSAC_AK_BYTES:
        case TOSAC_AK_BYTES8: {
            fb_vec v;
            if ((st = fb_get_vector(at, id, 1, &v, p.s)) != TOSAC_OK) return st;
            if (v.pos == 0) break;
            a->present = true;
            a->len = v.count;
            if (v.count && (st = copy_bytes(r, &p, fb_vec_data(&v), v.count, &a->data)) != TOSAC_OK) return st;
            break;
        }
        case TOSAC_AK_STR: {
            const char *s = NULL;
            uint32_t len = 0;
            if ((st = fb_get_string(at, id, &s, &len, p.s)) != TOSAC_OK) return st;
            if (!s) break;
            a->present = true;
            a->len = len;
            /* bytes and the terminating NUL; embedded NULs are kept (the length is stored) */
            if ((st = copy_bytes(r, &p, s, (size_t)len + 1, &a->data)) != TOSAC_OK) return st;
            break;
        }
        case TOSAC_AK_NONE:
            break;
        }
    }
    return TOSAC_OK;
}

/* Resolves the names of a [string] field into r->ops[first ...]. */
static tosac_status read_operands(reader *r, tosac_block *b, const fb_vec *v, size_t first, const objpath *where,
                                  const char *field)
{
    for (uint32_t i = 0; i < v->count; i++) {
        objpath p;
        path_sub(&p, where, field, i);
        const char *name = NULL;
        tosac_status st = vec_cstr(r, v, i, &p, &name);
        if (st != TOSAC_OK) return st;
        if ((st = resolve(r, b, name, &p, &r->ops[first + i])) != TOSAC_OK) return st;
    }
    return TOSAC_OK;
}

static tosac_status read_operator(reader *r, void *block, const fb_table *t, const objpath *where)
{
    tosac_block *b = block;
    tosac_status st;
    objpath p;
    uint32_t op = 0;
    uint8_t tag = 0;
    path_sub(&p, where, "op", -1);
    if ((st = fb_get_u32(t, OPR_OP, 0, &op, NULL, p.s)) != TOSAC_OK) return st;
    path_sub(&p, where, "attribute_type", -1);
    if ((st = fb_get_u8(t, OPR_ATTR_TYPE, 0, &tag, NULL, p.s)) != TOSAC_OK) return st;
    if (tag != 0 && !tosac_op_valid(tag))
        return rd_err(r, TOSAC_ERR_FORMAT, &p, "unknown attribute type tag %u (operator %u)", (unsigned)tag,
                      (unsigned)op);
    fb_table at;
    bool has_attr = false;
    objpath ap;
    path_sub(&ap, where, "attribute", -1);
    if (tag != 0 && (st = fb_get_table(t, OPR_ATTR, &at, &has_attr, ap.s)) != TOSAC_OK) return st;

    fb_vec in, out;
    path_sub(&p, where, "inputs", -1);
    if ((st = fb_get_vector(t, OPR_INPUTS, 4, &in, p.s)) != TOSAC_OK) return st;
    path_sub(&p, where, "outputs", -1);
    if ((st = fb_get_vector(t, OPR_OUTPUTS, 4, &out, p.s)) != TOSAC_OK) return st;
    /* both counts are bounded by the file size (4 bytes per element) */
    size_t total = (size_t)in.count + out.count;
    if (!tosac_grow((void **)&r->ops, &r->ops_cap, total ? total : 1, sizeof(*r->ops))) return nomem(r, where);
    if ((st = read_operands(r, b, &in, 0, where, "inputs")) != TOSAC_OK) return st;
    if ((st = read_operands(r, b, &out, in.count, where, "outputs")) != TOSAC_OK) return st;

    tosac_node *n = tosac_block_add_node(b, TOSAC_OP_UNKNOWN, in.count, r->ops, out.count, r->ops + in.count);
    if (!n) return nomem(r, where);
    n->op = op; /* kept raw, even if unknown: the validator reports it */
    n->attr_type = tag;
    if (has_attr && (st = read_attrs(r, n, tag, &at, &ap)) != TOSAC_OK) return st;

    fb_table loc;
    bool has_loc = false;
    path_sub(&p, where, "location", -1);
    if ((st = fb_get_table(t, OPR_LOCATION, &loc, &has_loc, p.s)) != TOSAC_OK) return st;
    if (has_loc) {
        const char *text = NULL;
        objpath q;
        path_sub(&q, &p, "text", -1);
        if ((st = get_cstr(r, &loc, LOC_TEXT, &q, "location text", true, &text)) != TOSAC_OK) return st;
        if (text && (st = copy_cstr(r, &q, text, &n->location)) != TOSAC_OK) return st;
    }
    return TOSAC_OK;
}

/* Reads block I/O names (field `id`) and appends them with `add`. */
static tosac_status read_block_io(reader *r, tosac_block *b, const fb_table *t, unsigned id, const objpath *where,
                                  const char *field, tosac_status (*add)(tosac_block *, tosac_value *))
{
    objpath p;
    path_sub(&p, where, field, -1);
    fb_vec v;
    tosac_status st = fb_get_vector(t, id, 4, &v, p.s);
    if (st != TOSAC_OK) return st;
    for (uint32_t i = 0; i < v.count; i++) {
        path_sub(&p, where, field, i);
        const char *name = NULL;
        tosac_value *val = NULL;
        if ((st = vec_cstr(r, &v, i, &p, &name)) != TOSAC_OK) return st;
        if ((st = resolve(r, b, name, &p, &val)) != TOSAC_OK) return st;
        if (add(b, val) != TOSAC_OK) return nomem(r, &p);
    }
    return TOSAC_OK;
}

/* Reads one table into `parent`, the IR object that receives it (graph, region or block). */
typedef tosac_status (*table_reader)(reader *r, void *parent, const fb_table *t, const objpath *where);

/* Reads the tables of vector field `id`, calling `fn` on each element. */
static tosac_status read_table_vec(reader *r, void *parent, const fb_table *t, unsigned id, const objpath *where,
                                   const char *field, table_reader fn)
{
    objpath p;
    path_sub(&p, where, field, -1);
    fb_vec v;
    tosac_status st = fb_get_vector(t, id, 4, &v, p.s);
    if (st != TOSAC_OK) return st;
    for (uint32_t i = 0; i < v.count; i++) {
        fb_table e;
        path_sub(&p, where, field, i);
        if ((st = fb_vec_table(&v, i, &e, p.s)) != TOSAC_OK) return st;
        if ((st = fn(r, parent, &e, &p)) != TOSAC_OK) return st;
    }
    return TOSAC_OK;
}

static tosac_status read_block(reader *r, void *region, const fb_table *t, const objpath *where)
{
    tosac_status st;
    const char *name = NULL;
    if ((st = get_cstr(r, t, BLOCK_NAME, where, "block name", false, &name)) != TOSAC_OK) return st;
    if ((st = charge(r, where, strlen(name) + 1)) != TOSAC_OK) return st;
    tosac_block *b = tosac_region_add_block(region, name);
    if (!b) return nomem(r, where);
    /* declarations first, so that operands and block I/O resolve to them */
    if ((st = read_table_vec(r, b, t, BLOCK_TENSORS, where, "tensors", read_tensor)) != TOSAC_OK) return st;
    if ((st = read_table_vec(r, b, t, BLOCK_SHAPES, where, "shapes", read_shape)) != TOSAC_OK) return st;
    if ((st = read_block_io(r, b, t, BLOCK_INPUTS, where, "inputs", tosac_block_add_input)) != TOSAC_OK) return st;
    if ((st = read_block_io(r, b, t, BLOCK_OUTPUTS, where, "outputs", tosac_block_add_output)) != TOSAC_OK)
        return st;
    return read_table_vec(r, b, t, BLOCK_OPERATORS, where, "operators", read_operator);
}

static tosac_status read_region(reader *r, void *graph, const fb_table *t, const objpath *where)
{
    tosac_status st;
    const char *name = NULL;
    if ((st = get_cstr(r, t, REGION_NAME, where, "region name", false, &name)) != TOSAC_OK) return st;
    if ((st = charge(r, where, strlen(name) + 1)) != TOSAC_OK) return st;
    tosac_region *reg = tosac_graph_add_region(graph, name);
    if (!reg) return nomem(r, where);
    return read_table_vec(r, reg, t, REGION_BLOCKS, where, "blocks", read_block);
}

/* Printable form of the 4 identifier bytes. */
static void ident_text(const uint8_t *id, char out[17])
{
    size_t k = 0;
    for (int i = 0; i < 4; i++) {
        uint8_t c = id[i];
        if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
            out[k++] = (char)c;
        } else {
            snprintf(out + k, 5, "\\x%02x", c);
            k += 4;
        }
    }
    out[k] = 0;
}

static tosac_status read_graph(reader *r)
{
    tosac_status st;
    fb_table root;
    if ((st = fb_root(&r->fr, NULL, &root)) != TOSAC_OK) return st;

    fb_table ver;
    bool has_ver = false;
    objpath p;
    path_sub(&p, NULL, "version", -1);
    if ((st = fb_get_table(&root, GRAPH_VERSION, &ver, &has_ver, p.s)) != TOSAC_OK) return st;
    if (!has_ver) return rd_err(r, TOSAC_ERR_FORMAT, NULL, "missing required TosaGraph.version table");
    int32_t major = -1, minor = -1, patch = -1;
    bool draft = true;
    if ((st = fb_get_i32(&ver, VER_MAJOR, -1, &major, NULL, "version._major")) != TOSAC_OK) return st;
    if ((st = fb_get_i32(&ver, VER_MINOR, -1, &minor, NULL, "version._minor")) != TOSAC_OK) return st;
    if ((st = fb_get_i32(&ver, VER_PATCH, -1, &patch, NULL, "version._patch")) != TOSAC_OK) return st;
    if ((st = fb_get_bool(&ver, VER_DRAFT, true, &draft, NULL, "version._draft")) != TOSAC_OK) return st;
    if (major != 1)
        return rd_err(r, TOSAC_ERR_UNSUPPORTED, NULL,
                      "unsupported TOSA version %d.%d.%d%s (tosac reads TOSA 1.x files: 1.0 final or draft, "
                      "1.1 drafts)",
                      (int)major, (int)minor, (int)patch, draft ? " draft" : "");

    r->g = tosac_graph_create();
    if (!r->g) return nomem(r, NULL);
    tosac_graph_set_version(r->g, major, minor, patch, draft);

    if ((st = read_table_vec(r, r->g, &root, GRAPH_REGIONS, NULL, "regions", read_region)) != TOSAC_OK) return st;
    tosac_graph_link(r->g);
    return TOSAC_OK;
}

tosac_status tosac_tosa_read_mem(const void *buf, size_t len, const char *name, const tosac_read_opts *opts,
                                 tosac_graph **out, tosac_diag *d)
{
    if (!out || (!buf && len)) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_tosa_read_mem: bad arguments");
    reader r;
    memset(&r, 0, sizeof(r));
    r.file = name ? name : "<memory>";
    r.diag = d;
    uint64_t max_file = (opts && opts->max_file_bytes) ? (uint64_t)opts->max_file_bytes : DEFAULT_MAX_FILE;
    if ((uint64_t)len > max_file)
        return rd_err(&r, TOSAC_ERR_NOMEM, NULL, "file of %llu bytes is over the limit of %llu bytes",
                      (unsigned long long)len, (unsigned long long)max_file);
    const uint8_t *bytes = buf;
    if (len < 8)
        return rd_err(&r, TOSAC_ERR_FORMAT, NULL, "not a TOSA flatbuffer (file is only %llu bytes)",
                      (unsigned long long)len);
    if (memcmp(bytes + 4, "TOSA", 4) != 0) {
        char id[17];
        ident_text(bytes + 4, id);
        return rd_err(&r, TOSAC_ERR_FORMAT, NULL, "not a TOSA flatbuffer (file identifier is '%s', expected 'TOSA')",
                      id);
    }
    r.budget = (opts && opts->max_objects) ? opts->max_objects : len / 4 + 64;
    r.copy_left = len > (SIZE_MAX - 4096) / 2 ? SIZE_MAX : 2 * len + 4096;
    r.fr.buf = bytes;
    r.fr.len = len;
    r.fr.diag = d;
    r.fr.file = r.file;
    r.fr.budget = &r.budget;

    tosac_status st = read_graph(&r);
    tosac_free(r.ops, r.ops_cap * sizeof(*r.ops));
    if (st != TOSAC_OK) {
        tosac_graph_destroy(r.g);
        return st;
    }
    *out = r.g;
    return TOSAC_OK;
}

tosac_status tosac_tosa_read_file(const char *path, const tosac_read_opts *opts, tosac_graph **out, tosac_diag *d)
{
    if (!path || !out) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_tosa_read_file: bad arguments");
    uint64_t max_file = (opts && opts->max_file_bytes) ? (uint64_t)opts->max_file_bytes : DEFAULT_MAX_FILE;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot stat: %s", path, strerror(e));
    }
    if (S_ISDIR(sb.st_mode)) {
        close(fd);
        return tosac_diag_add(d, TOSAC_ERR_IO, "%s: is a directory", path);
    }
    if (S_ISREG(sb.st_mode) && (sb.st_size < 0 || (uint64_t)sb.st_size > max_file)) {
        close(fd);
        return tosac_diag_add(d, TOSAC_ERR_NOMEM, "%s: file of %llu bytes is over the limit of %llu bytes", path,
                              (unsigned long long)sb.st_size, (unsigned long long)max_file);
    }
#ifdef TOSA_READ_MMAP
    /* A regular file is mapped rather than copied into a buffer of its size: the graph copies
       what it keeps, so a read() would be one more pass over (and fresh pages for) every weight. */
    if (S_ISREG(sb.st_mode) && sb.st_size > 0) {
        void *map = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
            close(fd);
            tosac_status st = tosac_tosa_read_mem(map, (size_t)sb.st_size, path, opts, out, d);
            munmap(map, (size_t)sb.st_size);
            return st;
        }
    }
#endif
    /* Otherwise read in one allocation of the file's size, or growing up to the limit. */
    size_t cap = S_ISREG(sb.st_mode) ? (size_t)sb.st_size + 1 : 65536;
    uint8_t *buf = tosac_malloc(cap);
    size_t len = 0;
    tosac_status st = TOSAC_OK;
    if (!buf) st = tosac_diag_add(d, TOSAC_ERR_NOMEM, "%s: out of memory", path);
    while (st == TOSAC_OK) {
        if (len == cap) {
            if ((uint64_t)len > max_file) {
                st = tosac_diag_add(d, TOSAC_ERR_NOMEM, "%s: file is over the limit of %llu bytes", path,
                                    (unsigned long long)max_file);
                break;
            }
            size_t ncap = cap * 2;
            uint8_t *nb = ncap > cap ? tosac_malloc(ncap) : NULL;
            if (!nb) {
                st = tosac_diag_add(d, TOSAC_ERR_NOMEM, "%s: out of memory", path);
                break;
            }
            memcpy(nb, buf, len);
            tosac_free(buf, cap);
            buf = nb;
            cap = ncap;
        }
        ssize_t got = read(fd, buf + len, cap - len);
        if (got < 0) {
            if (errno == EINTR) continue;
            st = tosac_diag_add(d, TOSAC_ERR_IO, "%s: read error: %s", path, strerror(errno));
            break;
        }
        if (got == 0) break;
        len += (size_t)got;
    }
    close(fd);
    if (st == TOSAC_OK) st = tosac_tosa_read_mem(buf, len, path, opts, out, d);
    tosac_free(buf, cap);
    return st;
}
