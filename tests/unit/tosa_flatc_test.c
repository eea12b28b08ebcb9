/*
 * Cross-check of the TOSA reader/writer against an independent flatbuffers implementation: the
 * flatc compiler (Debian flatbuffers-compiler) driven by our schema/tosa.fbs.
 *   1. Every graph we write (hand-built ones and the example graph of every (op, type row)) is
 *      decoded by `flatc --json` and the JSON is compared with the IR field by field.
 *   2. Hand-written JSON vectors (tests/data/json/NAME.json) are encoded by `flatc -b`, read with
 *      tosac_tosa_read_file and checked field by field; then our re-encoding, decoded by flatc,
 *      must give the same JSON as flatc's own encoding (up to our tensor-data padding and the
 *      empty vectors we always write).
 * flatc is required: without it this test fails.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness/op_graphs.h"
#include "harness/test.h"
#include "ir/graph.h"
#include "tosa/op_table.h"
#include "tosac/runtime.h"
#include "tosac/tosa_file.h"
#include "tosac/validate.h"

#define CHECKF(cond, ...)                                                     \
    do {                                                                      \
        t_checks++;                                                           \
        if (!(cond)) {                                                        \
            t_failures++;                                                     \
            fprintf(stderr, "%s:%d: %s failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
        }                                                                     \
    } while (0)

static char g_dir[64];
static const char *g_src;
static char g_schema[1024];

/* ------------------------------------------------------------------------------------------ */
/* A small JSON reader (the subset flatc prints: objects, arrays, strings, numbers, booleans)    */

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct jv {
    int t;
    bool b;
    char *s;      /* J_STR: decoded bytes (NUL-terminated, may contain NULs); J_NUM: the text */
    size_t slen;  /* J_STR length */
    struct jv **items;
    char **keys;  /* J_OBJ */
    size_t n;
} jv;

typedef struct jparser {
    const char *p;
    bool err;
} jparser;

static void jfree(jv *v)
{
    if (!v) return;
    for (size_t i = 0; i < v->n; i++) {
        jfree(v->items[i]);
        if (v->keys) free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->s);
    free(v);
}

static void jws(jparser *j)
{
    while (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t') j->p++;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Parses a string literal at j->p (which is '"'); returns malloc'd bytes and their count. */
static char *jstring(jparser *j, size_t *len)
{
    j->p++;
    size_t cap = 16, n = 0;
    char *out = malloc(cap);
    for (;;) {
        if (n + 5 > cap) out = realloc(out, cap *= 2);
        char c = *j->p++;
        if (c == '"') break;
        if (c == 0) {
            j->err = true;
            break;
        }
        if (c != '\\') {
            out[n++] = c;
            continue;
        }
        c = *j->p++;
        switch (c) {
        case 'n': out[n++] = '\n'; break;
        case 't': out[n++] = '\t'; break;
        case 'r': out[n++] = '\r'; break;
        case 'b': out[n++] = '\b'; break;
        case 'f': out[n++] = '\f'; break;
        case 'u': {
            unsigned cp = 0;
            for (int k = 0; k < 4; k++) {
                int h = hexval(*j->p);
                if (h < 0) {
                    j->err = true;
                    break;
                }
                cp = cp * 16 + (unsigned)h;
                j->p++;
            }
            if (cp < 0x80) {
                out[n++] = (char)cp;
            } else if (cp < 0x800) {
                out[n++] = (char)(0xC0 | (cp >> 6));
                out[n++] = (char)(0x80 | (cp & 0x3F));
            } else {
                out[n++] = (char)(0xE0 | (cp >> 12));
                out[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
                out[n++] = (char)(0x80 | (cp & 0x3F));
            }
            break;
        }
        case 0: j->err = true; break;
        default: out[n++] = c; break; /* \" \\ \/ */
        }
        if (j->err) break;
    }
    out[n] = 0;
    *len = n;
    return out;
}

static jv *jvalue(jparser *j, int depth)
{
    jws(j);
    jv *v = calloc(1, sizeof(*v));
    if (depth > 64) {
        j->err = true;
        return v;
    }
    char c = *j->p;
    if (c == '{' || c == '[') {
        bool obj = c == '{';
        v->t = obj ? J_OBJ : J_ARR;
        j->p++;
        size_t cap = 0;
        jws(j);
        if (*j->p == (obj ? '}' : ']')) {
            j->p++;
            return v;
        }
        for (;;) {
            jws(j);
            char *key = NULL;
            if (obj) {
                size_t kl;
                if (*j->p != '"') {
                    j->err = true;
                    return v;
                }
                key = jstring(j, &kl);
                jws(j);
                if (*j->p++ != ':') j->err = true;
            }
            if (v->n == cap) {
                cap = cap ? 2 * cap : 8;
                v->items = realloc(v->items, cap * sizeof(*v->items));
                if (obj) v->keys = realloc(v->keys, cap * sizeof(*v->keys));
            }
            if (obj) v->keys[v->n] = key;
            v->items[v->n++] = jvalue(j, depth + 1);
            if (j->err) return v;
            jws(j);
            if (*j->p == ',') {
                j->p++;
                continue;
            }
            if (*j->p == (obj ? '}' : ']')) {
                j->p++;
                return v;
            }
            j->err = true;
            return v;
        }
    }
    if (c == '"') {
        v->t = J_STR;
        v->s = jstring(j, &v->slen);
        return v;
    }
    if (!strncmp(j->p, "true", 4) || !strncmp(j->p, "false", 5)) {
        v->t = J_BOOL;
        v->b = *j->p == 't';
        j->p += v->b ? 4 : 5;
        return v;
    }
    if (!strncmp(j->p, "null", 4)) {
        j->p += 4;
        return v;
    }
    const char *start = j->p;
    while (*j->p == '-' || *j->p == '+' || *j->p == '.' || *j->p == 'e' || *j->p == 'E' ||
           (*j->p >= '0' && *j->p <= '9'))
        j->p++;
    if (j->p == start) {
        j->err = true;
        return v;
    }
    v->t = J_NUM;
    v->s = malloc((size_t)(j->p - start) + 1);
    memcpy(v->s, start, (size_t)(j->p - start));
    v->s[j->p - start] = 0;
    return v;
}

static jv *jparse_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t got;
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += got;
        if (cap - n - 1 == 0) buf = realloc(buf, cap *= 2);
    }
    fclose(f);
    buf[n] = 0;
    jparser j = {buf, false};
    jv *v = jvalue(&j, 0);
    jws(&j);
    if (j.err || *j.p) {
        fprintf(stderr, "%s: JSON parse error near offset %ld\n", path, (long)(j.p - buf));
        jfree(v);
        v = NULL;
    }
    free(buf);
    return v;
}

static jv *jget(const jv *o, const char *key)
{
    if (!o || o->t != J_OBJ) return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (!strcmp(o->keys[i], key)) return o->items[i];
    return NULL;
}

static jv *jat(const jv *a, size_t i) { return (a && a->t == J_ARR && i < a->n) ? a->items[i] : NULL; }
static size_t jlen(const jv *a) { return (a && a->t == J_ARR) ? a->n : 0; }

static bool jint(const jv *v, long long *out)
{
    if (!v || v->t != J_NUM) return false;
    char *end;
    errno = 0;
    long long x = strtoll(v->s, &end, 10);
    if (*end || errno) {
        unsigned long long u = strtoull(v->s, &end, 10);
        if (*end) return false;
        x = (long long)u;
    }
    *out = x;
    return true;
}

static bool jis_int(const jv *v, long long want)
{
    long long x;
    return jint(v, &x) && x == want;
}

static bool jis_str(const jv *v, const char *s, size_t len)
{
    return v && v->t == J_STR && v->slen == len && !memcmp(v->s, s, len);
}

static bool jis_cstr(const jv *v, const char *s) { return s && jis_str(v, s, strlen(s)); }

static bool jis_bool(const jv *v, bool b) { return v && v->t == J_BOOL && v->b == b; }

/* A JSON array of byte values equal to data[0..len) followed by zeros up to `padded` entries. */
static bool jis_bytes(const jv *a, const uint8_t *data, size_t len, size_t padded)
{
    if (!a || a->t != J_ARR || a->n != padded) return false;
    for (size_t i = 0; i < padded; i++)
        if (!jis_int(a->items[i], i < len ? data[i] : 0)) return false;
    return true;
}

/* ------------------------------------------------------------------------------------------ */
/* Running flatc                                                                                */

static void shell_quote(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    out[n++] = '\'';
    for (; *s && n + 6 < cap; s++) {
        if (*s == '\'') {
            memcpy(out + n, "'\\''", 4);
            n += 4;
        } else {
            out[n++] = *s;
        }
    }
    out[n++] = '\'';
    out[n] = 0;
}

/* Runs a command with output to <dir>/flatc.log; prints the log on failure. */
static bool run(const char *cmd)
{
    char full[8192], log[256];
    snprintf(log, sizeof log, "%s/flatc.log", g_dir);
    snprintf(full, sizeof full, "%s > '%s' 2>&1", cmd, log);
    int rc = system(full);
    if (rc != 0) {
        fprintf(stderr, "command failed (%d): %s\n", rc, cmd);
        FILE *f = fopen(log, "r");
        if (f) {
            char line[512];
            while (fgets(line, sizeof line, f)) fprintf(stderr, "  | %s", line);
            fclose(f);
        }
    }
    return rc == 0;
}

/* flatc --json of a binary file `tosa` (in g_dir, base name `base`): the parsed JSON or NULL. */
static jv *flatc_to_json(const char *tosa, const char *base)
{
    char qs[1100], qd[200], qf[600], cmd[4096], json[400];
    shell_quote(qs, sizeof qs, g_schema);
    shell_quote(qd, sizeof qd, g_dir);
    shell_quote(qf, sizeof qf, tosa);
    snprintf(cmd, sizeof cmd, "flatc --json --strict-json --defaults-json --raw-binary -o %s %s -- %s", qd, qs, qf);
    if (!run(cmd)) return NULL;
    snprintf(json, sizeof json, "%s/%s.json", g_dir, base);
    return jparse_file(json);
}

/* ------------------------------------------------------------------------------------------ */
/* IR versus flatc's JSON                                                                       */

static const char *const k_nan[] = {"UNKNOWN", "PROPAGATE", "IGNORE"};
static const char *const k_resize[] = {"UNKNOWN", "NEAREST", "BILINEAR"};
static const char *const k_round[] = {"UNKNOWN", "SINGLE_ROUND", "INEXACT_ROUND", "DOUBLE_ROUND"};

/* An enum field: its name when the value has one, else the number. */
static bool jis_enum(const jv *v, int64_t val, const char *const *names, size_t n)
{
    if (val >= 0 && (uint64_t)val < n) return jis_cstr(v, names[val]);
    return jis_int(v, val);
}

static bool jis_names(const jv *a, tosac_value *const *vals, uint32_t n)
{
    if (!a || a->t != J_ARR || a->n != n) return false;
    for (uint32_t i = 0; i < n; i++)
        if (!jis_cstr(a->items[i], vals[i]->name)) return false;
    return true;
}

static void check_attr_json(const tosac_node *n, uint32_t tag, const jv *attr, const char *ctx)
{
    for (unsigned id = 0; id < TOSAC_ATTR_MAX_FIELDS; id++) {
        const tosac_attr_desc *desc = tosac_op_attr_desc(tag, id);
        if (desc->kind == TOSAC_AK_NONE) continue;
        const tosac_attr_val *a = &n->attr[id];
        const jv *f = jget(attr, desc->name);
        int64_t iv = a->present ? a->i : 0;
        switch ((tosac_attr_kind)desc->kind) {
        case TOSAC_AK_I32: CHECKF(jis_int(f, iv), "%s: attribute %s", ctx, desc->name); break;
        case TOSAC_AK_BOOL: CHECKF(jis_bool(f, iv != 0), "%s: attribute %s", ctx, desc->name); break;
        case TOSAC_AK_DTYPE:
            CHECKF(iv >= 0 && iv < TOSAC_DTYPE_COUNT ? jis_cstr(f, tosac_dtype_name((tosac_dtype)iv)) : jis_int(f, iv),
                   "%s: attribute %s", ctx, desc->name);
            break;
        case TOSAC_AK_NAN: CHECKF(jis_enum(f, iv, k_nan, 3), "%s: attribute %s", ctx, desc->name); break;
        case TOSAC_AK_RESIZE: CHECKF(jis_enum(f, iv, k_resize, 3), "%s: attribute %s", ctx, desc->name); break;
        case TOSAC_AK_ROUND: CHECKF(jis_enum(f, iv, k_round, 4), "%s: attribute %s", ctx, desc->name); break;
        case TOSAC_AK_I32V:
            if (!a->present) {
                CHECKF(f == NULL, "%s: absent attribute %s printed", ctx, desc->name);
                break;
            }
            CHECKF(jlen(f) == a->len && f && f->t == J_ARR, "%s: attribute %s length", ctx, desc->name);
            for (uint32_t i = 0; i < a->len && i < jlen(f); i++)
                CHECKF(jis_int(jat(f, i), ((const int32_t *)a->data)[i]), "%s: attribute %s[%u]", ctx, desc->name,
                       (unsigned)i);
            break;
        case TOSAC_AK_BYTES:
        case TOSAC_AK_BYTES8:
            if (!a->present)
                CHECKF(f == NULL, "%s: absent attribute %s printed", ctx, desc->name);
            else
                CHECKF(jis_bytes(f, a->data, a->len, a->len), "%s: attribute %s", ctx, desc->name);
            break;
        case TOSAC_AK_STR:
            if (!a->present)
                CHECKF(f == NULL, "%s: absent attribute %s printed", ctx, desc->name);
            else
                CHECKF(jis_str(f, a->len ? a->data : "", a->len), "%s: attribute %s", ctx, desc->name);
            break;
        case TOSAC_AK_NONE: break;
        }
    }
    /* nothing else in the table */
    size_t expected = 0;
    for (size_t k = 0; attr && k < attr->n; k++)
        for (unsigned id = 0; id < TOSAC_ATTR_MAX_FIELDS; id++)
            if (tosac_op_attr_desc(tag, id)->name && !strcmp(tosac_op_attr_desc(tag, id)->name, attr->keys[k]))
                expected++;
    CHECKF(attr && expected == attr->n, "%s: unexpected attribute fields", ctx);
}

static void check_tensor_json(const tosac_value *v, const jv *t, const char *ctx)
{
    CHECKF(jis_cstr(jget(t, "name"), v->name), "%s: name", ctx);
    const jv *shape = jget(t, "shape");
    CHECKF(jlen(shape) == (size_t)v->rank && shape, "%s: rank", ctx);
    for (int32_t i = 0; i < v->rank && (size_t)i < jlen(shape); i++)
        CHECKF(jis_int(jat(shape, (size_t)i), v->shape[i]), "%s: dim %d", ctx, (int)i);
    CHECKF(jis_cstr(jget(t, "type"), tosac_dtype_name(v->dtype)), "%s: type", ctx);
    const jv *data = jget(t, "data");
    if (v->data)
        CHECKF(jis_bytes(data, v->data, v->data_len, (v->data_len + 7) & ~(size_t)7), "%s: data", ctx);
    else
        CHECKF(data == NULL, "%s: data printed", ctx);
    CHECKF(jis_bool(jget(t, "variable"), v->variable), "%s: variable", ctx);
    CHECKF(jis_bool(jget(t, "is_unranked"), v->is_unranked), "%s: is_unranked", ctx);
    if (v->variable_name)
        CHECKF(jis_cstr(jget(t, "variable_name"), v->variable_name), "%s: variable_name", ctx);
    else
        CHECKF(jget(t, "variable_name") == NULL, "%s: variable_name", ctx);
    CHECKF(jis_int(jget(t, "offset"), (long long)v->ext_offset), "%s: offset", ctx);
    CHECKF(jis_int(jget(t, "size"), (long long)v->ext_size), "%s: size", ctx);
}

static void check_block_json(const tosac_block *b, const jv *j, const char *ctx)
{
    char c[200];
    CHECKF(jis_cstr(jget(j, "name"), b->name), "%s: name", ctx);
    const jv *tensors = jget(j, "tensors"), *shapes = jget(j, "shapes"), *ops = jget(j, "operators");
    CHECKF(jlen(tensors) == b->n_tensors, "%s: tensor count", ctx);
    CHECKF(jlen(shapes) == b->n_shapes, "%s: shape count", ctx);
    CHECKF(jlen(ops) == b->n_nodes, "%s: operator count", ctx);
    CHECKF(jis_names(jget(j, "inputs"), b->inputs, b->n_inputs), "%s: inputs", ctx);
    CHECKF(jis_names(jget(j, "outputs"), b->outputs, b->n_outputs), "%s: outputs", ctx);
    for (uint32_t i = 0; i < b->n_tensors && i < jlen(tensors); i++) {
        snprintf(c, sizeof c, "%s.tensors[%u] '%s'", ctx, (unsigned)i, b->tensors[i]->name);
        check_tensor_json(b->tensors[i], jat(tensors, i), c);
    }
    for (uint32_t i = 0; i < b->n_shapes && i < jlen(shapes); i++) {
        const tosac_value *v = b->shapes[i];
        const jv *s = jat(shapes, i);
        snprintf(c, sizeof c, "%s.shapes[%u] '%s'", ctx, (unsigned)i, v->name);
        CHECKF(jis_cstr(jget(s, "name"), v->name), "%s: name", c);
        CHECKF(jis_int(jget(s, "rank"), v->shape[0]), "%s: rank", c);
        if (v->data)
            CHECKF(jis_bytes(jget(s, "data"), v->data, v->data_len, v->data_len), "%s: data", c);
        else
            CHECKF(jget(s, "data") == NULL, "%s: data printed", c);
    }
    for (uint32_t i = 0; i < b->n_nodes && i < jlen(ops); i++) {
        const tosac_node *n = b->nodes[i];
        const jv *o = jat(ops, i);
        snprintf(c, sizeof c, "%s.operators[%u] %s", ctx, (unsigned)i, tosac_op_name(n->op));
        CHECKF(jis_cstr(jget(o, "op"), tosac_op_name(n->op)), "%s: op", c);
        uint32_t tag = n->attr_type ? n->attr_type : n->op;
        char tname[64];
        snprintf(tname, sizeof tname, "%sAttribute", tosac_op_attr_table(tag));
        CHECKF(jis_cstr(jget(o, "attribute_type"), tname), "%s: attribute_type", c);
        const jv *attr = jget(o, "attribute");
        CHECKF(attr && attr->t == J_OBJ, "%s: attribute table", c);
        check_attr_json(n, tag, attr, c);
        CHECKF(jis_names(jget(o, "inputs"), n->inputs, n->n_inputs), "%s: inputs", c);
        CHECKF(jis_names(jget(o, "outputs"), n->outputs, n->n_outputs), "%s: outputs", c);
        if (n->location)
            CHECKF(jis_cstr(jget(jget(o, "location"), "text"), n->location), "%s: location", c);
        else
            CHECKF(jget(o, "location") == NULL, "%s: location printed", c);
    }
}

static void check_graph_json(const tosac_graph *g, const jv *j, const char *ctx)
{
    const jv *ver = jget(j, "version");
    CHECKF(jis_int(jget(ver, "_major"), g->ver_major) && jis_int(jget(ver, "_minor"), g->ver_minor) &&
               jis_int(jget(ver, "_patch"), g->ver_patch) && jis_bool(jget(ver, "_draft"), g->ver_draft),
           "%s: version", ctx);
    const jv *regions = jget(j, "regions");
    CHECKF(jlen(regions) == g->n_regions, "%s: region count", ctx);
    for (uint32_t r = 0; r < g->n_regions && r < jlen(regions); r++) {
        const tosac_region *reg = g->regions[r];
        const jv *jr = jat(regions, r);
        CHECKF(jis_cstr(jget(jr, "name"), reg->name), "%s: region %u name", ctx, (unsigned)r);
        const jv *blocks = jget(jr, "blocks");
        CHECKF(jlen(blocks) == reg->n_blocks, "%s: region %u block count", ctx, (unsigned)r);
        for (uint32_t i = 0; i < reg->n_blocks && i < jlen(blocks); i++) {
            char c[128];
            snprintf(c, sizeof c, "%s regions[%u].blocks[%u]", ctx, (unsigned)r, (unsigned)i);
            check_block_json(reg->blocks[i], jat(blocks, i), c);
        }
    }
}

/* Writes g as <dir>/<base>.tosa, decodes it with flatc and compares. Returns true if all held. */
static bool writer_vs_flatc(const tosac_graph *g, const char *base)
{
    int before = t_failures;
    char path[512];
    snprintf(path, sizeof path, "%s/%s.tosa", g_dir, base);
    tosac_diag *d = tosac_diag_create();
    tosac_status st = tosac_tosa_write_file(g, path, d);
    CHECKF(st == TOSAC_OK, "%s: write: %s", base, tosac_diag_count(d) ? tosac_diag_message(d, 0, NULL) : "");
    tosac_diag_destroy(d);
    if (st != TOSAC_OK) return false;
    jv *j = flatc_to_json(path, base);
    CHECKF(j != NULL, "%s: flatc could not decode our file", base);
    if (j) check_graph_json(g, j, base);
    jfree(j);
    return t_failures == before;
}

/* ------------------------------------------------------------------------------------------ */
/* Direction 1: our bytes, flatc's reading                                                      */

static tosac_graph *hand_graph(void)
{
    tosac_graph *g = tosac_graph_create();
    tosac_block *b = tosac_region_add_block(tosac_graph_add_region(g, "main"), "main");
    int64_t s[2] = {2, 3}, one[1] = {1}, four[1] = {4};
    tosac_value *x = tosac_block_add_tensor(b, "x", TOSAC_DTYPE_INT8, 2, s);
    tosac_value *y = tosac_block_add_tensor(b, "y", TOSAC_DTYPE_INT8, 2, s);
    tosac_node *n = tosac_block_add_node(b, TOSAC_OP_CLAMP, 1, &x, 1, &y);
    int8_t lo = -5, hi = 7;
    tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_min_val, &lo, 1);
    tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_max_val, &hi, 1);
    tosac_node_set_int(n, TOSAC_ATTR_CLAMP_nan_mode, TOSAC_NAN_IGNORE);
    tosac_value *z = tosac_block_add_tensor(b, "z", TOSAC_DTYPE_INT8, 2, s);
    tosac_node *m = tosac_block_add_node(b, TOSAC_OP_CUSTOM, 1, &y, 1, &z);
    static const char dom[] = "d\0x\x01\xc3\xa9"; /* NUL, control byte, UTF-8 e-acute */
    m->attr[TOSAC_ATTR_CUSTOM_domain_name] = (tosac_attr_val){true, 0, dom, 6};
    tosac_node_set_bytes(m, TOSAC_ATTR_CUSTOM_implementation_attrs, "\x00\xff\x10", 3);
    tosac_node_set_location(m, "tab\there \"q\" \\ /");
    uint8_t i4[2] = {0x21, 0x03};
    tosac_block_add_const(b, "c", TOSAC_DTYPE_INT4, 1, (int64_t[]){3}, i4, 2);
    int64_t sh[2] = {-1, 1ll << 40};
    tosac_block_add_const_shape(b, "sh", sh, 2);
    tosac_value *v = tosac_block_add_tensor(b, "v", TOSAC_DTYPE_BF16, 0, NULL);
    v->variable = true;
    v->variable_name = "var0";
    v->ext_offset = 1ull << 40;
    v->ext_size = 8;
    uint8_t q[4] = {1, 2, 3, 4};
    tosac_block_add_const(b, "q", TOSAC_DTYPE_INT8, 1, four, q, 4);
    tosac_value *am = tosac_block_add_tensor(b, "am", TOSAC_DTYPE_INT32, 1, one);
    tosac_node *ax = tosac_block_add_node(b, TOSAC_OP_ARGMAX, 1, &x, 1, &am);
    tosac_node_set_int(ax, TOSAC_ATTR_ARGMAX_axis, -7);
    tosac_node_set_int(ax, TOSAC_ATTR_ARGMAX_nan_mode, 9); /* no enum name: printed as a number */
    tosac_block_add_input(b, x);
    tosac_block_add_output(b, z);
    tosac_graph_set_version(g, 1, 0, 2, false);
    return g;
}

static void our_files_decoded_by_flatc(void)
{
    tosac_graph *g = hand_graph();
    EXPECT(writer_vs_flatc(g, "hand"));
    tosac_graph_destroy(g);

    unsigned ok = 0, bad = 0, missing = 0;
    for (uint32_t op = 1; op < TOSAC_OP_COUNT; op++) {
        unsigned nrows = 0;
        tosac_op_type_rows(op, &nrows);
        for (unsigned row = 0; row < nrows; row++) {
            g = test_op_graph(op, row);
            if (!g) {
                missing++;
                continue;
            }
            char base[64];
            snprintf(base, sizeof base, "op_%s_%u", tosac_op_name(op), row);
            if (writer_vs_flatc(g, base))
                ok++;
            else
                bad++;
            tosac_graph_destroy(g);
        }
    }
    printf("flatc decoded %u (op,row) graphs written by tosac: %u matched, %u mismatched, %u missing\n", ok + bad, ok,
           bad, missing);
    EXPECT(ok > 0);
    EXPECT_EQ_I(bad, 0);
    EXPECT_EQ_I(missing, 0);
}

/* ------------------------------------------------------------------------------------------ */
/* Direction 2: flatc's bytes, our reading                                                      */

/* Encodes tests/data/json/<base>.json with flatc and reads the result; NULL on failure. */
static tosac_graph *flatc_encode_and_read(const char *base, char *bin, size_t bin_cap)
{
    char json[1100], qs[1100], qd[200], qj[1200], cmd[4096];
    snprintf(json, sizeof json, "%s/tests/data/json/%s.json", g_src, base);
    shell_quote(qs, sizeof qs, g_schema);
    shell_quote(qd, sizeof qd, g_dir);
    shell_quote(qj, sizeof qj, json);
    snprintf(cmd, sizeof cmd, "flatc -b -o %s %s %s", qd, qs, qj);
    if (!run(cmd)) return NULL;
    snprintf(bin, bin_cap, "%s/%s.tosa", g_dir, base);
    tosac_diag *d = tosac_diag_create();
    tosac_graph *g = NULL;
    tosac_status st = tosac_tosa_read_file(bin, NULL, &g, d);
    CHECKF(st == TOSAC_OK, "%s: %s", base, tosac_diag_count(d) ? tosac_diag_message(d, 0, NULL) : "");
    tosac_diag_destroy(d);
    return g;
}

/*
 * JSON equality of flatc's decoding of flatc's encoding (a) and of ours (b): equal except that our
 * tensor data may carry zero padding to a multiple of 8 and we always write empty vectors.
 */
static bool jequal(const jv *a, const jv *b, const char *key, char *where, size_t wcap)
{
    if (a->t != b->t) {
        snprintf(where, wcap, "%s: type", key);
        return false;
    }
    switch (a->t) {
    case J_NULL: return true;
    case J_BOOL:
        if (a->b != b->b) snprintf(where, wcap, "%s: %d vs %d", key, a->b, b->b);
        return a->b == b->b;
    case J_NUM:
    case J_STR:
        if (a->t == J_STR ? !jis_str(b, a->s, a->slen) : strcmp(a->s, b->s) != 0) {
            snprintf(where, wcap, "%s: '%s' vs '%s'", key, a->s, b->s);
            return false;
        }
        return true;
    case J_ARR: {
        bool is_data = !strcmp(key, "data");
        size_t n = a->n < b->n ? a->n : b->n;
        bool len_ok = a->n == b->n ||
                      (is_data && b->n > a->n && b->n == ((a->n + 7) & ~(size_t)7)); /* ours is padded */
        if (!len_ok) {
            snprintf(where, wcap, "%s: %zu vs %zu elements", key, a->n, b->n);
            return false;
        }
        for (size_t i = 0; i < n; i++)
            if (!jequal(a->items[i], b->items[i], key, where, wcap)) return false;
        for (size_t i = n; i < b->n; i++)
            if (!jis_int(b->items[i], 0)) {
                snprintf(where, wcap, "%s: non-zero padding", key);
                return false;
            }
        return true;
    }
    case J_OBJ:
        for (size_t i = 0; i < a->n; i++) {
            const jv *y = jget(b, a->keys[i]);
            if (!y) {
                if (a->items[i]->t == J_ARR && a->items[i]->n == 0) continue;
                snprintf(where, wcap, "%s: missing in ours", a->keys[i]);
                return false;
            }
            if (!jequal(a->items[i], y, a->keys[i], where, wcap)) return false;
        }
        for (size_t i = 0; i < b->n; i++) {
            if (jget(a, b->keys[i])) continue;
            if (b->items[i]->t == J_ARR && b->items[i]->n == 0) continue; /* empty vector we always write */
            snprintf(where, wcap, "%s: only in ours", b->keys[i]);
            return false;
        }
        return true;
    }
    return false;
}

/* flatc's binary and our re-encoding of the graph read from it decode to the same JSON. */
static void same_json_as_flatc(const tosac_graph *g, const char *bin, const char *base)
{
    char ours_base[96], ours[512], where[256] = "";
    snprintf(ours_base, sizeof ours_base, "%s_tosac", base);
    snprintf(ours, sizeof ours, "%s/%s.tosa", g_dir, ours_base);
    EXPECT(tosac_tosa_write_file(g, ours, NULL) == TOSAC_OK);
    jv *a = flatc_to_json(bin, base);
    jv *b = flatc_to_json(ours, ours_base);
    CHECKF(a && b && jequal(a, b, "", where, sizeof where), "%s: flatc JSON of our re-encoding differs at %s", base,
           where);
    if (b) check_graph_json(g, b, ours_base);
    jfree(a);
    jfree(b);
}

static const tosac_value *tensor(const tosac_block *b, uint32_t i) { return i < b->n_tensors ? b->tensors[i] : NULL; }

static bool dims_are(const tosac_value *v, int rank, const int64_t *d)
{
    if (!v || v->rank != rank) return false;
    for (int i = 0; i < rank; i++)
        if (v->shape[i] != d[i]) return false;
    return true;
}

static bool data_is(const tosac_value *v, const void *bytes, size_t n)
{
    return v && v->data && v->data_len == n && !memcmp(v->data, bytes, n);
}

static bool ints_are(const tosac_attr_val *a, const int32_t *v, uint32_t n)
{
    return a->present && a->len == n && (n == 0 || !memcmp(a->data, v, n * sizeof(int32_t)));
}

static bool names_are(tosac_value *const *vals, uint32_t n, const char *const *names, uint32_t m)
{
    if (n != m) return false;
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(vals[i]->name, names[i])) return false;
    return true;
}

#define NAMES(...) (const char *const[]){__VA_ARGS__}, (uint32_t)(sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))

static void json_conv2d_i8(void)
{
    char bin[512];
    tosac_graph *g = flatc_encode_and_read("conv2d_i8", bin, sizeof bin);
    EXPECT(g != NULL);
    if (!g) return;
    EXPECT(g->ver_major == 1 && g->ver_minor == 0 && g->ver_patch == 0 && !g->ver_draft);
    EXPECT(g->n_regions == 1 && g->regions[0]->n_blocks == 1);
    const tosac_block *b = g->regions[0]->blocks[0];
    EXPECT_STREQ(g->regions[0]->name, "main");
    EXPECT_STREQ(b->name, "main");
    EXPECT_EQ_I(b->n_tensors, 6);
    EXPECT_EQ_I(b->n_shapes, 0); /* the JSON has no "shapes" (older 1.0 writers) */
    EXPECT_EQ_I(b->n_undeclared, 0);
    EXPECT_EQ_I(b->n_nodes, 5);
    EXPECT(names_are(b->inputs, b->n_inputs, NAMES("input")));
    EXPECT(names_are(b->outputs, b->n_outputs, NAMES("output")));
    EXPECT(dims_are(tensor(b, 0), 4, (int64_t[]){1, 3, 4, 2}) && tensor(b, 0)->dtype == TOSAC_DTYPE_INT8 &&
           tensor(b, 0)->data == NULL);
    EXPECT(dims_are(tensor(b, 1), 4, (int64_t[]){3, 1, 1, 2}));
    EXPECT(data_is(tensor(b, 1), "\x01\xff\x02\xfe\x7f\x80", 6));
    EXPECT(tensor(b, 2)->dtype == TOSAC_DTYPE_INT32);
    EXPECT(data_is(tensor(b, 2), "\x64\0\0\0\x9c\xff\xff\xff\0\0\0\x80", 12));
    EXPECT(data_is(tensor(b, 3), "\xfd", 1));
    EXPECT(data_is(tensor(b, 4), "\0", 1));
    EXPECT(dims_are(tensor(b, 5), 4, (int64_t[]){1, 4, 2, 3}) && tensor(b, 5)->dtype == TOSAC_DTYPE_INT32);
    for (uint32_t i = 0; i < 4; i++) {
        EXPECT_EQ_I(b->nodes[i]->op, TOSAC_OP_CONST);
        EXPECT_EQ_I(b->nodes[i]->attr_type, TOSAC_OP_CONST);
        EXPECT(b->nodes[i]->n_inputs == 0 && b->nodes[i]->n_outputs == 1);
        EXPECT(b->nodes[i]->outputs[0] == b->tensors[i + 1]);
        EXPECT(b->tensors[i + 1]->producer == b->nodes[i]);
    }
    const tosac_node *c = b->nodes[4];
    EXPECT_EQ_I(c->op, TOSAC_OP_CONV2D);
    EXPECT_EQ_I(c->attr_type, TOSAC_OP_CONV2D);
    EXPECT(names_are(c->inputs, c->n_inputs, NAMES("input", "weight", "bias", "input_zp", "weight_zp")));
    EXPECT(c->inputs[1] == b->tensors[1]);
    EXPECT(names_are(c->outputs, c->n_outputs, NAMES("output")));
    EXPECT(ints_are(&c->attr[TOSAC_ATTR_CONV2D_pad], (int32_t[]){1, 0, 0, 1}, 4));
    EXPECT(ints_are(&c->attr[TOSAC_ATTR_CONV2D_stride], (int32_t[]){1, 2}, 2));
    EXPECT(ints_are(&c->attr[TOSAC_ATTR_CONV2D_dilation], (int32_t[]){1, 1}, 2));
    EXPECT(!c->attr[TOSAC_ATTR_CONV2D_local_bound].present); /* flatc omits default scalars */
    EXPECT(c->attr[TOSAC_ATTR_CONV2D_acc_type].present && c->attr[TOSAC_ATTR_CONV2D_acc_type].i == TOSAC_DTYPE_INT32);
    EXPECT_STREQ(c->location, "model.onnx:/conv1/Conv");
    EXPECT(b->tensors[5]->producer == c);
    same_json_as_flatc(g, bin, "conv2d_i8");
    tosac_graph_destroy(g);
}

static void json_shape_reshape(void)
{
    char bin[512];
    tosac_graph *g = flatc_encode_and_read("shape_reshape", bin, sizeof bin);
    EXPECT(g != NULL);
    if (!g) return;
    /* "_draft": true is the schema default, so flatc leaves it out: absent means draft */
    EXPECT(g->ver_major == 1 && g->ver_minor == 0 && g->ver_patch == 1 && g->ver_draft);
    const tosac_block *b = g->regions[0]->blocks[0];
    EXPECT_EQ_I(b->n_tensors, 2);
    EXPECT_EQ_I(b->n_shapes, 2);
    const tosac_value *s = b->shapes[0];
    EXPECT(s->is_shape && s->dtype == TOSAC_DTYPE_SHAPE && s->declared);
    EXPECT_STREQ(s->name, "new_shape");
    EXPECT(s->rank == 1 && s->shape[0] == 3);
    EXPECT(data_is(s, "\3\0\0\0\0\0\0\0\1\0\0\0\0\0\0\0\2\0\0\0\0\0\0\0", 24));
    EXPECT(s->producer == b->nodes[0]);
    const tosac_value *e = b->shapes[1];
    EXPECT_STREQ(e->name, "empty_shape");
    EXPECT(e->shape[0] == 0 && e->data == NULL);
    EXPECT(tensor(b, 0)->dtype == TOSAC_DTYPE_FP16 && dims_are(tensor(b, 1), 3, (int64_t[]){3, 1, 2}));
    EXPECT_EQ_I(b->nodes[0]->op, TOSAC_OP_CONST_SHAPE);
    EXPECT(b->nodes[0]->n_inputs == 0); /* "inputs" absent */
    const tosac_node *r = b->nodes[1];
    EXPECT_EQ_I(r->op, TOSAC_OP_RESHAPE);
    EXPECT(r->n_inputs == 2 && r->inputs[1] == s && r->inputs[0] == b->tensors[0]);
    EXPECT(r->location == NULL);
    same_json_as_flatc(g, bin, "shape_reshape");
    tosac_graph_destroy(g);
}

static void json_clamp_fp32(void)
{
    char bin[512];
    tosac_graph *g = flatc_encode_and_read("clamp_fp32", bin, sizeof bin);
    EXPECT(g != NULL);
    if (!g) return;
    EXPECT(g->ver_major == 1 && g->ver_minor == 1 && g->ver_patch == 0 && g->ver_draft);
    const tosac_block *b = g->regions[0]->blocks[0];
    EXPECT_EQ_I(b->n_shapes, 0);
    EXPECT_EQ_I(b->n_nodes, 1);
    const tosac_node *c = b->nodes[0];
    EXPECT_EQ_I(c->op, TOSAC_OP_CLAMP);
    const tosac_attr_val *mn = &c->attr[TOSAC_ATTR_CLAMP_min_val], *mx = &c->attr[TOSAC_ATTR_CLAMP_max_val];
    float lo, hi;
    EXPECT(mn->present && mn->len == 4 && mx->present && mx->len == 4);
    if (mn->len == 4 && mx->len == 4) {
        uint32_t lu = 0, hu = 0;
        for (int i = 3; i >= 0; i--) {
            lu = (lu << 8) | ((const uint8_t *)mn->data)[i];
            hu = (hu << 8) | ((const uint8_t *)mx->data)[i];
        }
        memcpy(&lo, &lu, 4);
        memcpy(&hi, &hu, 4);
        EXPECT(lo == -1.0f && hi == 6.0f);
    }
    EXPECT(c->attr[TOSAC_ATTR_CLAMP_nan_mode].present && c->attr[TOSAC_ATTR_CLAMP_nan_mode].i == TOSAC_NAN_IGNORE);
    EXPECT(tensor(b, 0)->dtype == TOSAC_DTYPE_FP32 && dims_are(tensor(b, 0), 2, (int64_t[]){1, 7}));
    same_json_as_flatc(g, bin, "clamp_fp32");
    tosac_graph_destroy(g);
}

static void json_cond_if(void)
{
    char bin[512];
    tosac_graph *g = flatc_encode_and_read("cond_if", bin, sizeof bin);
    EXPECT(g != NULL);
    if (!g) return;
    EXPECT_EQ_I(g->n_regions, 3);
    if (g->n_regions != 3) {
        tosac_graph_destroy(g);
        return;
    }
    EXPECT_STREQ(g->regions[0]->name, "main");
    EXPECT_STREQ(g->regions[1]->name, "then_region");
    EXPECT_STREQ(g->regions[2]->name, "else_region");
    const tosac_block *m = g->regions[0]->blocks[0];
    const tosac_node *ci = m->nodes[0];
    EXPECT_EQ_I(ci->op, TOSAC_OP_COND_IF);
    const tosac_attr_val *t = &ci->attr[TOSAC_ATTR_COND_IF_then_graph], *e = &ci->attr[TOSAC_ATTR_COND_IF_else_graph];
    EXPECT(t->present && t->len == 11 && !strcmp(t->data, "then_region"));
    EXPECT(e->present && e->len == 11 && !strcmp(e->data, "else_region"));
    EXPECT(names_are(ci->inputs, ci->n_inputs, NAMES("cond", "a", "b")));
    EXPECT(tensor(m, 0)->dtype == TOSAC_DTYPE_BOOL);
    EXPECT(names_are(m->inputs, m->n_inputs, NAMES("cond", "a", "b")));
    const tosac_block *tb = g->regions[1]->blocks[0], *eb = g->regions[2]->blocks[0];
    EXPECT_STREQ(tb->name, "then_bb");
    EXPECT_STREQ(eb->name, "else_bb");
    EXPECT_EQ_I(tb->nodes[0]->op, TOSAC_OP_ADD);
    EXPECT_EQ_I(eb->nodes[0]->op, TOSAC_OP_SUB);
    /* values are per block: the "a" of each block is its own */
    EXPECT(tb->nodes[0]->inputs[0] == tb->tensors[0] && tb->tensors[0] != m->tensors[1]);
    EXPECT(names_are(eb->outputs, eb->n_outputs, NAMES("r")));
    same_json_as_flatc(g, bin, "cond_if");
    tosac_graph_destroy(g);
}

static void json_custom_variable(void)
{
    char bin[512];
    tosac_graph *g = flatc_encode_and_read("custom_variable", bin, sizeof bin);
    EXPECT(g != NULL);
    if (!g) return;
    const tosac_block *b = g->regions[0]->blocks[0];
    const tosac_node *cu = b->nodes[0];
    EXPECT_EQ_I(cu->op, TOSAC_OP_CUSTOM);
    const tosac_attr_val *on = &cu->attr[TOSAC_ATTR_CUSTOM_operator_name];
    const tosac_attr_val *dn = &cu->attr[TOSAC_ATTR_CUSTOM_domain_name];
    const tosac_attr_val *ia = &cu->attr[TOSAC_ATTR_CUSTOM_implementation_attrs];
    EXPECT(on->present && !strcmp(on->data, "acme.fused_gelu") && on->len == 15);
    EXPECT(dn->present && !strcmp(dn->data, "com.acme"));
    EXPECT(ia->present && ia->len == 5 && !memcmp(ia->data, "\1\2\3\0\377", 5));
    EXPECT_STREQ(cu->location, "");
    /* "not_declared" and the RESCALE constants are used but never declared: placeholders */
    EXPECT(cu->n_inputs == 2 && !cu->inputs[1]->declared && !strcmp(cu->inputs[1]->name, "not_declared"));
    EXPECT_EQ_I(b->n_undeclared, 5);
    const tosac_node *rs = b->nodes[1];
    EXPECT_EQ_I(rs->op, TOSAC_OP_RESCALE);
    EXPECT(rs->attr[TOSAC_ATTR_RESCALE_scale32].present && rs->attr[TOSAC_ATTR_RESCALE_scale32].i == 1);
    EXPECT(rs->attr[TOSAC_ATTR_RESCALE_rounding_mode].i == TOSAC_ROUND_DOUBLE);
    EXPECT(!rs->attr[TOSAC_ATTR_RESCALE_per_channel].present);
    EXPECT(rs->attr[TOSAC_ATTR_RESCALE_input_unsigned].present && rs->attr[TOSAC_ATTR_RESCALE_input_unsigned].i == 1);
    EXPECT(!rs->attr[TOSAC_ATTR_RESCALE_output_unsigned].present);
    const tosac_node *am = b->nodes[2];
    EXPECT(am->attr[TOSAC_ATTR_ARGMAX_axis].present && am->attr[TOSAC_ATTR_ARGMAX_axis].i == -2);
    EXPECT(am->attr[TOSAC_ATTR_ARGMAX_nan_mode].i == TOSAC_NAN_PROPAGATE);
    EXPECT(tensor(b, 3)->rank == 0);
    const tosac_value *st = tensor(b, 4);
    EXPECT(st->variable && !strcmp(st->variable_name, "lstm.h0") && st->ext_offset == (1ull << 40) &&
           st->ext_size == 4096);
    EXPECT(st->dtype == TOSAC_DTYPE_INT4 && data_is(st, "\x21\x43", 2));
    const tosac_value *dy = tensor(b, 5);
    EXPECT(dy->is_unranked && dy->rank == 0 && !dy->variable && dy->variable_name == NULL);
    same_json_as_flatc(g, bin, "custom_variable");
    tosac_graph_destroy(g);
}

/* Every committed vector is covered by a test above. */
/* ------------------------------------------------------------------------------------------ */
/* Encodings of the official serializer (issue 11): vectors made with flatc, expected values   */
/* from the operators' definitions                                                             */

/* The shape value `name` of block b read as `count` int64 values. */
static bool shape_value_is(const tosac_block *b, const char *name, uint32_t count, const int64_t *vals)
{
    for (uint32_t i = 0; i < b->n_shapes; i++) {
        const tosac_value *v = b->shapes[i];
        if (strcmp(v->name, name)) continue;
        if (!v->is_shape || v->rank != 1 || v->shape[0] != count) return false;
        if (count == 0) return v->data == NULL;
        if (!v->data || v->data_len != (size_t)count * 8) return false;
        for (uint32_t k = 0; k < count; k++) {
            uint64_t u = 0;
            for (int j = 7; j >= 0; j--) u = (u << 8) | v->data[k * 8 + (uint32_t)j];
            if ((int64_t)u != vals[k]) return false;
        }
        return true;
    }
    return false;
}

/* Creates and runs a program of g, whose int32 inputs are filled with 1, 2, 3, ... */
static tosac_program *run_counting(const tosac_graph *g)
{
    tosac_diag *d = tosac_diag_create();
    tosac_program *p = NULL;
    tosac_status st = tosac_program_create(g, NULL, &p, d);
    CHECKF(st == TOSAC_OK, "create: %s", tosac_diag_count(d) ? tosac_diag_message(d, 0, NULL) : "");
    for (uint32_t i = 0; p && i < tosac_program_input_count(p); i++) {
        tosac_tensor_info ti;
        if (tosac_program_input_info(p, i, &ti) != TOSAC_OK) continue;
        int32_t *in = tosac_program_input_ptr(p, i);
        for (int64_t k = 0; in && k < ti.nelem; k++) in[k] = (int32_t)(k + 1);
    }
    if (p && tosac_program_invoke(p, d) != TOSAC_OK) {
        CHECKF(false, "invoke: %s", tosac_diag_count(d) ? tosac_diag_message(d, 0, NULL) : "");
        tosac_program_destroy(p);
        p = NULL;
    }
    tosac_diag_destroy(d);
    return p;
}

static bool output_is(tosac_program *p, const char *name, const int32_t *want, size_t n)
{
    int32_t i = tosac_program_output_index(p, name);
    const int32_t *y = i >= 0 ? tosac_program_output_ptr(p, (uint32_t)i) : NULL;
    return y && !memcmp(y, want, n * sizeof *want);
}

/* Shape operands stored as TosaTensors of type SHAPE (serializers before TosaShape, e.g. the
   reference model's stateful LSTM example): read as shape values, valid, and run. */
static void json_shape_tensors(void)
{
    char bin[512];
    tosac_graph *g = flatc_encode_and_read("shape_tensors", bin, sizeof bin);
    EXPECT(g != NULL);
    if (!g) return;
    const tosac_block *b = g->regions[0]->blocks[0];
    EXPECT_EQ_I(b->n_tensors, 6); /* x, z and the four results */
    EXPECT_EQ_I(b->n_shapes, 5);
    EXPECT(shape_value_is(b, "new_shape", 3, (int64_t[]){3, 1, 2}));
    EXPECT(shape_value_is(b, "start", 2, (int64_t[]){0, 1}));
    EXPECT(shape_value_is(b, "size", 2, (int64_t[]){2, 2}));
    EXPECT(shape_value_is(b, "multiples", 2, (int64_t[]){1, 2}));
    EXPECT(shape_value_is(b, "empty", 0, NULL)); /* a rank-0 SHAPE tensor with its 8-byte word */
    tosac_diag *d = tosac_diag_create();
    EXPECT_EQ_I(tosac_validate(g, NULL, d), TOSAC_OK);
    tosac_diag_destroy(d);
    tosac_program *p = run_counting(g);
    if (p) {
        /* x = [[1,2,3],[4,5,6]], z = [1] */
        EXPECT(output_is(p, "y_reshape", (int32_t[]){1, 2, 3, 4, 5, 6}, 6));
        EXPECT(output_is(p, "y_slice", (int32_t[]){2, 3, 5, 6}, 4));
        EXPECT(output_is(p, "y_tile", (int32_t[]){1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}, 12));
        EXPECT(output_is(p, "y_scalar", (int32_t[]){1}, 1));
        tosac_program_destroy(p);
    }
    tosac_graph_destroy(g);
}

/* A rank-0 TosaShape with 8 data bytes (the conformance generator's RESHAPE to rank 0). */
static void json_shape_empty_padded(void)
{
    char bin[512];
    tosac_graph *g = flatc_encode_and_read("shape_empty_padded", bin, sizeof bin);
    EXPECT(g != NULL);
    if (!g) return;
    EXPECT(shape_value_is(g->regions[0]->blocks[0], "empty", 0, NULL));
    tosac_diag *d = tosac_diag_create();
    EXPECT_EQ_I(tosac_validate(g, NULL, d), TOSAC_OK);
    tosac_diag_destroy(d);
    tosac_graph_destroy(g);
}

/* A rank-7 operand at level 8K is an ERROR (the official WrongRank tests), fine at level none. */
static void json_rank7(void)
{
    char bin[512];
    tosac_graph *g = flatc_encode_and_read("rank7_reduce_sum", bin, sizeof bin);
    EXPECT(g != NULL);
    if (!g) return;
    tosac_diag *d = tosac_diag_create();
    EXPECT_EQ_I(tosac_validate(g, NULL, d), TOSAC_ERR_TOSA_ERROR);
    bool named = false;
    for (size_t i = 0; i < tosac_diag_count(d); i++)
        named |= strstr(tosac_diag_message(d, i, NULL), "tensor 'x' has rank 7 > MAX_RANK 6") != NULL;
    EXPECT(named);
    tosac_validate_opts none = tosac_validate_opts_default();
    none.level = TOSAC_LEVEL_NONE;
    tosac_diag_clear(d);
    EXPECT_EQ_I(tosac_validate(g, &none, d), TOSAC_OK);
    tosac_diag_destroy(d);
    tosac_graph_destroy(g);
}

static void json_vectors_listed(void)
{
    char cmd[1200], qd[1100];
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/tests/data/json", g_src);
    shell_quote(qd, sizeof qd, dir);
    snprintf(cmd, sizeof cmd, "test \"$(ls %s | grep -c '\\.json$')\" = 8", qd);
    CHECKF(system(cmd) == 0, "tests/data/json holds a vector this test does not check");
}

int main(void)
{
    g_src = getenv("TOSAC_SOURCE_DIR");
    if (!g_src || !*g_src) g_src = "..";
    snprintf(g_schema, sizeof g_schema, "%s/schema/tosa.fbs", g_src);
    if (system("flatc --version > /dev/null 2>&1") != 0) {
        fprintf(stderr, "flatc not found: install flatbuffers-compiler\n");
        printf("0 passed, 1 failed\n");
        return 1;
    }
    snprintf(g_dir, sizeof g_dir, "/tmp/tosac_flatc_XXXXXX");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(our_files_decoded_by_flatc);
    RUN(json_conv2d_i8);
    RUN(json_shape_reshape);
    RUN(json_clamp_fp32);
    RUN(json_cond_if);
    RUN(json_custom_variable);
    RUN(json_shape_tensors);
    RUN(json_shape_empty_padded);
    RUN(json_rank7);
    RUN(json_vectors_listed);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (t_failures == 0 && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", g_dir);
    if (t_failures) fprintf(stderr, "files kept in %s\n", g_dir);
    return test_summary();
}
