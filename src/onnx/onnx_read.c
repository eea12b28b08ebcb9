/*
 * ONNX reader: .onnx bytes -> protobuf-c (generated from onnx.proto at build time) -> the checked,
 * protobuf-free view of include/tosac/onnx.h.
 *
 * Hostile files are bounded in three places before protobuf-c runs or allocates:
 *  - a nesting guard walks the length-delimited structure with protobuf-c's own descriptors (no
 *    values are decoded there) and rejects nesting deeper than max_depth, which would exhaust the
 *    stack in protobuf-c's recursive unpack, and a non-repeated message field given twice, which
 *    protobuf-c would merge at a cost quadratic in the file size;
 *  - protobuf-c allocates through a budgeted allocator (max_decode_bytes);
 *  - every size the file claims (dims products, external data lengths) is checked against the bytes
 *    that actually back it before anything is allocated for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/arena.h"
#include "core/diag.h"
#include "onnx.pb-c.h"
#include "onnx/onnx_model.h"
#include "tosac/onnx.h"

#define DEFAULT_MAX_FILE ((uint64_t)2 << 30)
#define DEFAULT_MAX_EXTERNAL ((uint64_t)16 << 30)
#define DEFAULT_MAX_NODES ((size_t)1000000)
#define DEFAULT_MAX_DEPTH ((size_t)100)
#define MAX_DEPTH_LIMIT ((size_t)1000)
#define MAX_ELEMENTS ((uint64_t)1 << 62)

/* ------------------------------------------------------------------------------------------------
 * Element types */

typedef struct elem_info {
    const char *name;
    unsigned size;
} elem_info;

static const elem_info ELEMS[] = {
    {"UNDEFINED", 0}, {"FLOAT", 4},      {"UINT8", 1},         {"INT8", 1},        {"UINT16", 2},
    {"INT16", 2},     {"INT32", 4},      {"INT64", 8},         {"STRING", 0},      {"BOOL", 1},
    {"FLOAT16", 2},   {"DOUBLE", 8},     {"UINT32", 4},        {"UINT64", 8},      {"COMPLEX64", 8},
    {"COMPLEX128", 16}, {"BFLOAT16", 2}, {"FLOAT8E4M3FN", 1},  {"FLOAT8E4M3FNUZ", 1}, {"FLOAT8E5M2", 1},
    {"FLOAT8E5M2FNUZ", 1}, {"UINT4", 0}, {"INT4", 0},          {"FLOAT4E2M1", 0},
};
#define N_ELEMS (sizeof(ELEMS) / sizeof(ELEMS[0]))

const char *tosac_onnx_elem_name(int32_t t)
{
    return t >= 0 && (size_t)t < N_ELEMS ? ELEMS[t].name : "?";
}

size_t tosac_onnx_elem_size(int32_t t)
{
    return t >= 0 && (size_t)t < N_ELEMS ? ELEMS[t].size : 0;
}

static int is_4bit(int32_t t)
{
    return t == TOSAC_ONNX_UINT4 || t == TOSAC_ONNX_INT4 || t == TOSAC_ONNX_FLOAT4E2M1;
}

/* ------------------------------------------------------------------------------------------------
 * Reader state and messages */

typedef struct rd {
    const char *file;
    const char *base_dir;
    tosac_diag *diag;
    tosac_arena *arena;
    onnx_model_impl *model; /* takes over decoded raw_data buffers */
    uint64_t max_external;
    const tosac_onnx_read_opts *opts;
    size_t max_nodes;
    size_t nodes_total;
    uint64_t ext_used;
} rd;

static tosac_status fail(rd *r, tosac_status code, const char *fmt, ...) TOSAC_PRINTF(3, 4);
static tosac_status fail(rd *r, tosac_status code, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tosac_diag_add(r->diag, code, "%s: %s", r->file, msg);
}

static tosac_status nomem(rd *r) { return fail(r, TOSAC_ERR_NOMEM, "out of memory"); }

/* Names in messages are cut to a printable prefix so a hostile name cannot flood the sink. */
typedef struct shown {
    char s[96];
} shown;

static shown show(const char *name)
{
    shown o;
    size_t n = 0;
    if (!name) name = "";
    for (; *name && n + 4 < sizeof o.s; name++) {
        unsigned char c = (unsigned char)*name;
        o.s[n++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (*name) {
        o.s[n++] = '.';
        o.s[n++] = '.';
        o.s[n++] = '.';
    }
    o.s[n] = 0;
    return o;
}

static const char *dup_str(rd *r, const char *s)
{
    return tosac_arena_strdup(r->arena, s ? s : "");
}

/* Formats dims as "[2, 3, 4]" (truncated when long). */
static void dims_str(char *buf, size_t cap, const int64_t *dims, size_t n)
{
    size_t used = 0;
    buf[0] = 0;
    used += (size_t)snprintf(buf, cap, "[");
    for (size_t i = 0; i < n && used < cap; i++) {
        if (i == 8 && n > 9) {
            used += (size_t)snprintf(buf + used, cap - used, "..., %" PRId64, dims[n - 1]);
            break;
        }
        used += (size_t)snprintf(buf + used, cap - used, i ? ", %" PRId64 : "%" PRId64, dims[i]);
    }
    if (used < cap) snprintf(buf + used, cap - used, "]");
}

/* ------------------------------------------------------------------------------------------------
 * protobuf-c allocator with a budget */

typedef struct pb_budget {
    uint64_t left;
    int hit;
} pb_budget;

#define PB_HDR 16u

static void *pb_alloc(void *ud, size_t size)
{
    pb_budget *b = ud;
    size_t total;
    if (!tosac_add_size(size, PB_HDR, &total) || total > b->left) {
        b->hit = 1;
        return NULL;
    }
    unsigned char *p = tosac_malloc(total);
    if (!p) return NULL;
    memcpy(p, &total, sizeof total);
    b->left -= total;
    return p + PB_HDR;
}

/* The decoded raw_data bytes become the model's (no copy of what may be hundreds of MB of
   weights): the buffer leaves the message, so free_unpacked skips it, and is freed with the
   model. Without a model (never while reading) it is copied into the arena instead. */
static void *keep_raw_data(rd *r, ProtobufCBinaryData *bd)
{
    if (!r->model) return tosac_arena_memdup(r->arena, bd->data, bd->len);
    onnx_kept_buffer *k = tosac_arena_alloc(r->arena, sizeof *k);
    if (!k) return NULL;
    unsigned char *block = bd->data - PB_HDR;
    memcpy(&k->bytes, block, sizeof k->bytes);
    k->block = block;
    k->next = r->model->kept;
    r->model->kept = k;
    void *data = bd->data;
    bd->data = NULL;
    bd->len = 0;
    return data;
}

static void pb_free(void *ud, void *ptr)
{
    pb_budget *b = ud;
    if (!ptr) return;
    unsigned char *p = (unsigned char *)ptr - PB_HDR;
    size_t total;
    memcpy(&total, p, sizeof total);
    b->left += total;
    tosac_free(p, total);
}

/* ------------------------------------------------------------------------------------------------
 * Nesting guard (see the top of the file). It reads only tags and lengths. */

typedef struct guard_frame {
    const ProtobufCMessageDescriptor *desc;
    size_t end;
    uint64_t seen; /* non-repeated message fields met so far (by field index < 64) */
} guard_frame;

static int read_varint(const uint8_t *b, size_t end, size_t *pos, uint64_t *v)
{
    uint64_t x = 0;
    for (unsigned shift = 0; shift < 70; shift += 7) {
        if (*pos >= end) return 0;
        uint8_t c = b[(*pos)++];
        if (shift == 63 && c > 1) return 0;
        x |= (uint64_t)(c & 0x7f) << shift;
        if (!(c & 0x80)) {
            *v = x;
            return 1;
        }
    }
    return 0;
}

static tosac_status nesting_guard(rd *r, const uint8_t *b, size_t len, size_t max_depth)
{
    guard_frame *st = tosac_calloc(max_depth + 1, sizeof *st);
    if (!st) return nomem(r);
    tosac_status s = TOSAC_OK;
    size_t depth = 0, pos = 0;
    st[0].desc = &onnx__model_proto__descriptor;
    st[0].end = len;
    for (;;) {
        if (pos == st[depth].end) {
            if (depth == 0) break;
            depth--;
            continue;
        }
        uint64_t tag, v;
        size_t at = pos;
        if (!read_varint(b, st[depth].end, &pos, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff) {
            s = fail(r, TOSAC_ERR_FORMAT, "byte %zu: not a valid protobuf field tag", at);
            break;
        }
        size_t left = st[depth].end - pos;
        switch (tag & 7) {
        case 0:
            if (!read_varint(b, st[depth].end, &pos, &v)) s = TOSAC_ERR_INTERNAL;
            break;
        case 1:
            if (left < 8) s = TOSAC_ERR_INTERNAL;
            else pos += 8;
            break;
        case 5:
            if (left < 4) s = TOSAC_ERR_INTERNAL;
            else pos += 4;
            break;
        case 2: {
            if (!read_varint(b, st[depth].end, &pos, &v) || v > st[depth].end - pos) {
                s = TOSAC_ERR_INTERNAL;
                break;
            }
            const ProtobufCFieldDescriptor *fd =
                protobuf_c_message_descriptor_get_field(st[depth].desc, (unsigned)(tag >> 3));
            if (fd && fd->type == PROTOBUF_C_TYPE_MESSAGE) {
                if (fd->label != PROTOBUF_C_LABEL_REPEATED) {
                    size_t idx = (size_t)(fd - st[depth].desc->fields);
                    if (idx < 64) {
                        if (st[depth].seen & ((uint64_t)1 << idx)) {
                            s = fail(r, TOSAC_ERR_FORMAT,
                                     "byte %zu: field '%s' of %s appears twice (merging is not supported)", at,
                                     fd->name, st[depth].desc->name);
                            break;
                        }
                        st[depth].seen |= (uint64_t)1 << idx;
                    }
                }
                if (depth + 1 > max_depth) {
                    s = fail(r, TOSAC_ERR_FORMAT, "byte %zu: messages nested deeper than %zu levels (max_depth)",
                             at, max_depth);
                    break;
                }
                depth++;
                st[depth].desc = fd->descriptor;
                st[depth].end = pos + (size_t)v;
                st[depth].seen = 0;
            } else {
                pos += (size_t)v;
            }
            break;
        }
        default:
            s = TOSAC_ERR_INTERNAL;
            break;
        }
        if (s == TOSAC_ERR_INTERNAL) { /* truncated or unknown wire data: no message yet */
            s = fail(r, TOSAC_ERR_FORMAT, "byte %zu: malformed protobuf (truncated field or bad wire type)", at);
            break;
        }
        if (s != TOSAC_OK) break;
    }
    tosac_free(st, (max_depth + 1) * sizeof *st);
    return s;
}

/* ------------------------------------------------------------------------------------------------
 * Name tables (open addressing; keys are borrowed) */

typedef struct name_tab {
    const char **keys;
    int64_t *vals;
    size_t cap, n;
} name_tab;

static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h ^ (h >> 29);
}

static int tab_init(name_tab *t, size_t expect)
{
    size_t cap = 16;
    while (cap < expect * 2 + 16) {
        if (cap > SIZE_MAX / 4) return 0;
        cap *= 2;
    }
    t->keys = tosac_calloc(cap, sizeof *t->keys);
    t->vals = tosac_calloc(cap, sizeof *t->vals);
    t->cap = cap;
    t->n = 0;
    if (!t->keys || !t->vals) {
        tosac_free(t->keys, cap * sizeof *t->keys);
        tosac_free(t->vals, cap * sizeof *t->vals);
        t->keys = NULL;
        t->vals = NULL;
        t->cap = 0;
        return 0;
    }
    return 1;
}

static void tab_free(name_tab *t)
{
    tosac_free(t->keys, t->cap * sizeof *t->keys);
    tosac_free(t->vals, t->cap * sizeof *t->vals);
    t->keys = NULL;
    t->vals = NULL;
    t->cap = t->n = 0;
}

static int64_t *tab_find(const name_tab *t, const char *k)
{
    if (!t->cap) return NULL;
    size_t mask = t->cap - 1, i = (size_t)hash_str(k) & mask;
    while (t->keys[i]) {
        if (strcmp(t->keys[i], k) == 0) return &t->vals[i];
        i = (i + 1) & mask;
    }
    return NULL;
}

/* Inserts k -> v; returns 1 if inserted, 0 if present (*old set), -1 on memory failure. */
static int tab_put(name_tab *t, const char *k, int64_t v, int64_t *old)
{
    if ((t->n + 1) * 2 > t->cap) {
        name_tab nt;
        if (!tab_init(&nt, t->n + 1)) return -1;
        for (size_t i = 0; i < t->cap; i++)
            if (t->keys[i]) {
                size_t j = (size_t)hash_str(t->keys[i]) & (nt.cap - 1);
                while (nt.keys[j]) j = (j + 1) & (nt.cap - 1);
                nt.keys[j] = t->keys[i];
                nt.vals[j] = t->vals[i];
                nt.n++;
            }
        tab_free(t);
        *t = nt;
    }
    size_t mask = t->cap - 1, i = (size_t)hash_str(k) & mask;
    while (t->keys[i]) {
        if (strcmp(t->keys[i], k) == 0) {
            if (old) *old = t->vals[i];
            return 0;
        }
        i = (i + 1) & mask;
    }
    t->keys[i] = k;
    t->vals[i] = v;
    t->n++;
    return 1;
}

/* Values known in a graph: >= 0 node index (file order), or one of these. */
#define NAME_INITIALIZER (-1)
#define NAME_INPUT (-2)

typedef struct scope {
    const name_tab *tab;
    const struct scope *up;
} scope;

static int scope_has(const scope *sc, const char *k)
{
    for (; sc; sc = sc->up)
        if (tab_find(sc->tab, k)) return 1;
    return 0;
}

/* ------------------------------------------------------------------------------------------------
 * Tensors */

static int host_is_le(void)
{
    const uint16_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 1;
}

/* Brings a buffer of `n` native-order words of `w` bytes to little-endian (no-op on LE hosts). */
static void to_le(void *p, size_t nbytes, size_t w)
{
    if (host_is_le() || w < 2) return;
    unsigned char *b = p;
    for (size_t i = 0; i + w <= nbytes; i += w)
        for (size_t a = 0, z = w - 1; a < z; a++, z--) {
            unsigned char t = b[i + a];
            b[i + a] = b[i + z];
            b[i + z] = t;
        }
}

static void put_le(unsigned char *dst, uint64_t v, size_t w)
{
    for (size_t i = 0; i < w; i++) dst[i] = (unsigned char)(v >> (8 * i));
}

/* Component width for byte order: complex types swap each half. */
static size_t swap_width(int32_t t)
{
    size_t es = tosac_onnx_elem_size(t);
    if (t == TOSAC_ONNX_COMPLEX64 || t == TOSAC_ONNX_COMPLEX128) return es / 2;
    return es;
}

static tosac_status parse_u64(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!s || !*s) return TOSAC_ERR_FORMAT;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return TOSAC_ERR_FORMAT;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return TOSAC_ERR_FORMAT;
        v = v * 10 + d;
    }
    *out = v;
    return TOSAC_OK;
}

/* Checks a relative external-data location: no absolute path, no ".." component. */
static tosac_status check_location(rd *r, const char *what, const char *loc)
{
    if (!loc || !*loc) return fail(r, TOSAC_ERR_FORMAT, "%s: external data without a 'location'", what);
    if (loc[0] == '/' || loc[0] == '\\' || (loc[0] && loc[1] == ':'))
        return fail(r, TOSAC_ERR_FORMAT, "%s: external data location '%s' is an absolute path", what, show(loc).s);
    const char *p = loc;
    while (*p) {
        const char *e = p;
        while (*e && *e != '/' && *e != '\\') e++;
        if (e - p == 2 && p[0] == '.' && p[1] == '.')
            return fail(r, TOSAC_ERR_FORMAT, "%s: external data location '%s' escapes the model directory", what,
                        show(loc).s);
        p = *e ? e + 1 : e;
    }
    return TOSAC_OK;
}

/*
 * Opens external data `loc` (already checked: relative, no "..") inside the model's folder one
 * path component at a time, each with O_NOFOLLOW: a symbolic link anywhere on the way (to
 * /etc/passwd, or to a folder elsewhere) is refused instead of followed, so what is read is a file
 * inside the folder whatever the links say. The file is opened O_NONBLOCK so that a FIFO cannot
 * hang the reader; the caller checks it is a regular file on the descriptor. Returns the
 * descriptor, or -1 after recording the error in *s.
 */
static int open_inside(rd *r, const char *what, const char *loc, const char *path, tosac_status *s)
{
    int dir = open(r->base_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) {
        *s = fail(r, TOSAC_ERR_IO, "%s: cannot open the model's folder '%s' for external data '%s': %s", what,
                  show(r->base_dir).s, show(loc).s, strerror(errno));
        return -1;
    }
    char comp[256];
    for (const char *p = loc;;) {
        const char *e = p;
        while (*e && *e != '/' && *e != '\\') e++;
        size_t n = (size_t)(e - p);
        bool last = !*e;
        if ((n == 0 || (n == 1 && *p == '.')) && !last) { /* "a//b", "./a" */
            p = e + 1;
            continue;
        }
        if (n == 0 || (n == 1 && *p == '.') || n >= sizeof comp) {
            close(dir);
            *s = fail(r, TOSAC_ERR_FORMAT, "%s: external data location '%s' does not name a file", what, show(loc).s);
            return -1;
        }
        memcpy(comp, p, n);
        comp[n] = '\0';
        int fd = openat(dir, comp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | (last ? O_NONBLOCK : O_DIRECTORY));
        int err = errno;
        struct stat lst;
        bool link = fd < 0 && fstatat(dir, comp, &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode);
        close(dir);
        if (fd < 0) {
            if (link)
                *s = fail(r, TOSAC_ERR_FORMAT,
                          "%s: external data file '%s' goes through the symbolic link '%s'; external data is read "
                          "only from files inside the model's folder, without following links",
                          what, show(path).s, show(comp).s);
            else
                *s = fail(r, TOSAC_ERR_IO, "%s: cannot open external data file '%s': %s", what, show(path).s,
                          strerror(err));
            return -1;
        }
        if (last) return fd;
        dir = fd;
        p = e + 1;
    }
}

static tosac_status read_external(rd *r, const Onnx__TensorProto *tp, const char *what, uint64_t nbytes,
                                  int32_t et, tosac_onnx_tensor *out)
{
    const char *loc = NULL, *off_s = NULL, *len_s = NULL;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = tp->external_data[i];
        if (!e || !e->key) continue;
        if (strcmp(e->key, "location") == 0) loc = e->value;
        else if (strcmp(e->key, "offset") == 0) off_s = e->value;
        else if (strcmp(e->key, "length") == 0) len_s = e->value;
    }
    if (et == TOSAC_ONNX_STRING)
        return fail(r, TOSAC_ERR_UNSUPPORTED, "%s: STRING tensors cannot use external data", what);
    tosac_status s = check_location(r, what, loc);
    if (s != TOSAC_OK) return s;
    if (!r->base_dir)
        return fail(r, TOSAC_ERR_UNSUPPORTED,
                    "%s: external data '%s' needs the model's directory (read from memory without base_dir)", what,
                    show(loc).s);
    uint64_t off = 0, elen = 0;
    if (off_s && parse_u64(off_s, &off) != TOSAC_OK)
        return fail(r, TOSAC_ERR_FORMAT, "%s: external data offset '%s' is not a number", what, show(off_s).s);
    if (len_s && parse_u64(len_s, &elen) != TOSAC_OK)
        return fail(r, TOSAC_ERR_FORMAT, "%s: external data length '%s' is not a number", what, show(len_s).s);

    size_t blen = strlen(r->base_dir), llen = strlen(loc), plen;
    if (!tosac_add_size(blen, llen, &plen) || !tosac_add_size(plen, 2, &plen)) return nomem(r);
    char *path = tosac_malloc(plen);
    if (!path) return nomem(r);
    snprintf(path, plen, "%s/%s", r->base_dir, loc);

    int fd = -1;
    if (r->opts && r->opts->on_external_file &&
        (s = r->opts->on_external_file(r->opts->user, path, r->diag)) != TOSAC_OK)
        goto done;
    fd = open_inside(r, what, loc, path, &s);
    struct stat stt;
    if (fd < 0) goto done;
    if (fstat(fd, &stt) != 0 || !S_ISREG(stt.st_mode)) {
        s = fail(r, TOSAC_ERR_IO, "%s: external data file '%s' is not a regular file", what, show(path).s);
        goto done;
    }
    uint64_t fsize = (uint64_t)stt.st_size;
    if (off > fsize) {
        s = fail(r, TOSAC_ERR_FORMAT, "%s: external data offset %" PRIu64 " is beyond the end of '%s' (%" PRIu64
                 " bytes)", what, off, show(loc).s, fsize);
        goto done;
    }
    if (!len_s) elen = nbytes;
    if (elen > fsize - off) {
        s = fail(r, TOSAC_ERR_FORMAT, "%s: external data in '%s' at offset %" PRIu64 " needs %" PRIu64
                 " bytes but the file has %" PRIu64, what, show(loc).s, off, elen, fsize);
        goto done;
    }
    if (elen != nbytes) {
        s = fail(r, TOSAC_ERR_FORMAT, "%s: external data in '%s' holds %" PRIu64 " bytes but the dims need %" PRIu64,
                 what, show(loc).s, elen, nbytes);
        goto done;
    }
    if (nbytes > r->max_external - r->ext_used) {
        s = fail(r, TOSAC_ERR_NOMEM, "%s: external data '%s' exceeds the limit of %" PRIu64
                 " bytes in all (max_external_bytes)", what, show(loc).s, r->max_external);
        goto done;
    }
    if (nbytes > SIZE_MAX) {
        s = nomem(r);
        goto done;
    }
    unsigned char *data = tosac_arena_alloc(r->arena, (size_t)nbytes);
    if (!data) {
        s = nomem(r);
        goto done;
    }
    size_t got = 0;
    while (got < nbytes) {
        size_t want = (size_t)nbytes - got;
        if (want > ((size_t)1 << 30)) want = (size_t)1 << 30;
        ssize_t n = pread(fd, data + got, want, (off_t)(off + got));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            s = fail(r, TOSAC_ERR_IO, "%s: reading external data file '%s' failed: %s", what, show(path).s,
                     n < 0 ? strerror(errno) : "unexpected end of file");
            goto done;
        }
        got += (size_t)n;
    }
    r->ext_used += nbytes;
    to_le(data, (size_t)nbytes, swap_width(et));
    out->data = nbytes ? data : NULL;
    out->external = 1;
done:
    if (fd >= 0) close(fd);
    tosac_free(path, plen);
    return s;
}

/* Which typed field is set, and whether it may hold `et`; returns the count it must have per element. */
static tosac_status decode_typed(rd *r, const Onnx__TensorProto *tp, const char *what, int32_t et, uint64_t numel,
                                 size_t nbytes, tosac_onnx_tensor *out)
{
    struct {
        const char *name;
        size_t n;
    } f[6] = {{"float_data", tp->n_float_data}, {"int32_data", tp->n_int32_data},
              {"string_data", tp->n_string_data}, {"int64_data", tp->n_int64_data},
              {"double_data", tp->n_double_data}, {"uint64_data", tp->n_uint64_data}};
    int which = -1, count = 0;
    for (int i = 0; i < 6; i++)
        if (f[i].n) {
            which = i;
            count++;
        }
    if (count > 1) return fail(r, TOSAC_ERR_FORMAT, "%s: several data fields are set", what);
    if (count == 0) {
        if (numel == 0) return TOSAC_OK;
        return fail(r, TOSAC_ERR_FORMAT, "%s: no data (dims need %" PRIu64 " elements)", what, numel);
    }
    int ok = 0;
    uint64_t per = 1;
    switch (which) {
    case 0: ok = et == TOSAC_ONNX_FLOAT || et == TOSAC_ONNX_COMPLEX64; per = et == TOSAC_ONNX_COMPLEX64 ? 2 : 1; break;
    case 1:
        ok = et == TOSAC_ONNX_INT32 || et == TOSAC_ONNX_INT16 || et == TOSAC_ONNX_UINT16 || et == TOSAC_ONNX_INT8 ||
             et == TOSAC_ONNX_UINT8 || et == TOSAC_ONNX_BOOL || et == TOSAC_ONNX_FLOAT16 ||
             et == TOSAC_ONNX_BFLOAT16 || (et >= TOSAC_ONNX_FLOAT8E4M3FN && et <= TOSAC_ONNX_FLOAT8E5M2FNUZ);
        break;
    case 2: ok = et == TOSAC_ONNX_STRING; break;
    case 3: ok = et == TOSAC_ONNX_INT64; break;
    case 4: ok = et == TOSAC_ONNX_DOUBLE || et == TOSAC_ONNX_COMPLEX128; per = et == TOSAC_ONNX_COMPLEX128 ? 2 : 1; break;
    default: ok = et == TOSAC_ONNX_UINT64 || et == TOSAC_ONNX_UINT32; break;
    }
    if (!ok) {
        if (which == 2)
            return fail(r, TOSAC_ERR_FORMAT, "%s: string_data cannot hold numeric %s elements", what,
                        tosac_onnx_elem_name(et));
        return fail(r, TOSAC_ERR_FORMAT, "%s: %s cannot hold %s elements", what, f[which].name,
                    tosac_onnx_elem_name(et));
    }
    size_t n = f[which].n;
    if (numel > UINT64_MAX / per || (uint64_t)n != numel * per) {
        char ds[160];
        dims_str(ds, sizeof ds, tp->dims, tp->n_dims);
        return fail(r, TOSAC_ERR_FORMAT, "%s: %s holds %zu values but dims %s of %s need %" PRIu64, what,
                    f[which].name, n, ds, tosac_onnx_elem_name(et), numel > UINT64_MAX / per ? numel : numel * per);
    }
    if (which == 2) {
        /* numel == n here, bounded by the file */
        const char **strs = tosac_arena_alloc(r->arena, n * sizeof *strs);
        size_t *lens = tosac_arena_alloc(r->arena, n * sizeof *lens);
        if (!strs || !lens) return nomem(r);
        for (size_t i = 0; i < n; i++) {
            const ProtobufCBinaryData *b = &tp->string_data[i];
            strs[i] = tosac_arena_strndup(r->arena, b->len ? (const char *)b->data : "", b->len);
            if (!strs[i]) return nomem(r);
            lens[i] = b->len;
        }
        out->strings = strs;
        out->string_lens = lens;
        return TOSAC_OK;
    }
    unsigned char *d = tosac_arena_alloc(r->arena, nbytes);
    if (!d) return nomem(r);
    size_t es = tosac_onnx_elem_size(et);
    switch (which) {
    case 0:
        for (size_t i = 0; i < n; i++) {
            uint32_t bits;
            memcpy(&bits, &tp->float_data[i], 4);
            put_le(d + 4 * i, bits, 4);
        }
        break;
    case 1:
        for (size_t i = 0; i < n; i++) put_le(d + es * i, (uint64_t)(uint32_t)tp->int32_data[i], es);
        break;
    case 3:
        for (size_t i = 0; i < n; i++) put_le(d + 8 * i, (uint64_t)tp->int64_data[i], 8);
        break;
    case 4:
        for (size_t i = 0; i < n; i++) {
            uint64_t bits;
            memcpy(&bits, &tp->double_data[i], 8);
            put_le(d + 8 * i, bits, 8);
        }
        break;
    default:
        for (size_t i = 0; i < n; i++) put_le(d + es * i, tp->uint64_data[i], es);
        break;
    }
    out->data = nbytes ? d : NULL;
    return TOSAC_OK;
}

/* Decodes a TensorProto (initializer or TENSOR attribute); `what` names it in messages. */
static tosac_status decode_tensor(rd *r, const Onnx__TensorProto *tp, const char *what, tosac_onnx_tensor *out)
{
    memset(out, 0, sizeof *out);
    out->name = dup_str(r, tp->name);
    if (!out->name) return nomem(r);
    int32_t et = tp->has_data_type ? tp->data_type : 0;
    out->elem_type = et;
    if (et <= 0 || (size_t)et >= N_ELEMS)
        return fail(r, TOSAC_ERR_UNSUPPORTED, "%s: data type %d is not supported", what, (int)et);
    if (tp->segment) return fail(r, TOSAC_ERR_UNSUPPORTED, "%s: segmented tensors are not supported", what);
    uint64_t numel = 1;
    for (size_t i = 0; i < tp->n_dims; i++) {
        int64_t dv = tp->dims[i];
        if (dv < 0) return fail(r, TOSAC_ERR_FORMAT, "%s: negative dimension %" PRId64 " at axis %zu", what, dv, i);
        if (dv != 0 && numel > MAX_ELEMENTS / (uint64_t)dv) {
            char ds[160];
            dims_str(ds, sizeof ds, tp->dims, tp->n_dims);
            return fail(r, TOSAC_ERR_FORMAT, "%s: dims %s claim too many elements", what, ds);
        }
        numel *= (uint64_t)dv;
    }
    uint64_t nbytes64 = is_4bit(et) ? (numel + 1) / 2 : numel * tosac_onnx_elem_size(et); /* < 2^62 * 16? */
    if (!is_4bit(et) && tosac_onnx_elem_size(et) && numel > UINT64_MAX / tosac_onnx_elem_size(et))
        return fail(r, TOSAC_ERR_FORMAT, "%s: dims claim too many bytes", what);
    out->rank = tp->n_dims;
    out->numel = numel;
    if (tp->n_dims) {
        int64_t *dims = tosac_arena_memdup(r->arena, tp->dims, tp->n_dims * sizeof *dims);
        if (!dims) return nomem(r);
        out->dims = dims;
    }

    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        out->nbytes = nbytes64 <= SIZE_MAX ? (size_t)nbytes64 : 0;
        return read_external(r, tp, what, nbytes64, et, out);
    }
    if (tp->has_raw_data && (tp->raw_data.len || numel == 0 || et == TOSAC_ONNX_STRING)) {
        if (et == TOSAC_ONNX_STRING)
            return fail(r, TOSAC_ERR_FORMAT, "%s: STRING tensors cannot use raw_data", what);
        if ((uint64_t)tp->raw_data.len != nbytes64) {
            char ds[160];
            dims_str(ds, sizeof ds, tp->dims, tp->n_dims);
            return fail(r, TOSAC_ERR_FORMAT, "%s: raw_data holds %zu bytes but dims %s of %s need %" PRIu64, what,
                        tp->raw_data.len, ds, tosac_onnx_elem_name(et), nbytes64);
        }
        out->nbytes = tp->raw_data.len;
        if (tp->raw_data.len) {
            /* the read path sees the message as const, but it is our own decoded copy */
            void *d = keep_raw_data(r, (ProtobufCBinaryData *)(uintptr_t)&tp->raw_data);
            if (!d) return nomem(r);
            to_le(d, tp->raw_data.len, swap_width(et));
            out->data = d;
        }
        return TOSAC_OK;
    }
    if (is_4bit(et)) {
        if (numel == 0) return TOSAC_OK;
        return fail(r, TOSAC_ERR_UNSUPPORTED, "%s: %s tensors are only supported in raw_data", what,
                    tosac_onnx_elem_name(et));
    }
    /* typed fields are bounded by the file: nbytes fits once the count matched numel */
    size_t nb = 0;
    if (et != TOSAC_ONNX_STRING) {
        size_t cnt = tp->n_float_data + tp->n_int32_data + tp->n_int64_data + tp->n_double_data + tp->n_uint64_data;
        if (numel > (uint64_t)cnt && numel != 0) {
            /* let decode_typed produce the precise message without computing a huge size */
            return decode_typed(r, tp, what, et, numel, 0, out);
        }
        nb = (size_t)nbytes64;
    }
    out->nbytes = nb;
    return decode_typed(r, tp, what, et, numel, nb, out);
}

/* ------------------------------------------------------------------------------------------------
 * Types */

static tosac_status decode_type(rd *r, const Onnx__TypeProto *tp, const char *what, tosac_onnx_type *out)
{
    memset(out, 0, sizeof *out);
    out->elem_type = 0;
    if (!tp) return TOSAC_OK;
    const Onnx__TensorShapeProto *shape = NULL;
    switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
        out->kind = TOSAC_ONNX_TYPE_TENSOR;
        if (tp->tensor_type) {
            out->elem_type = tp->tensor_type->has_elem_type ? tp->tensor_type->elem_type : 0;
            shape = tp->tensor_type->shape;
        }
        break;
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
        out->kind = TOSAC_ONNX_TYPE_SPARSE_TENSOR;
        if (tp->sparse_tensor_type) {
            out->elem_type = tp->sparse_tensor_type->has_elem_type ? tp->sparse_tensor_type->elem_type : 0;
            shape = tp->sparse_tensor_type->shape;
        }
        break;
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
        out->kind = TOSAC_ONNX_TYPE_MAP;
        if (tp->map_type && tp->map_type->has_key_type) out->elem_type = tp->map_type->key_type;
        return TOSAC_OK;
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: {
        out->kind = tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE ? TOSAC_ONNX_TYPE_SEQUENCE
                                                                             : TOSAC_ONNX_TYPE_OPTIONAL;
        const Onnx__TypeProto *el = tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE
                                        ? (tp->sequence_type ? tp->sequence_type->elem_type : NULL)
                                        : (tp->optional_type ? tp->optional_type->elem_type : NULL);
        if (el && el->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && el->tensor_type) {
            out->elem_type = el->tensor_type->has_elem_type ? el->tensor_type->elem_type : 0;
            shape = el->tensor_type->shape;
        }
        break;
    }
    default:
        return TOSAC_OK;
    }
    if (!shape) return TOSAC_OK;
    out->has_shape = 1;
    out->rank = shape->n_dim;
    if (!shape->n_dim) return TOSAC_OK;
    tosac_onnx_dim *dims = tosac_arena_alloc(r->arena, shape->n_dim * sizeof *dims);
    if (!dims) return nomem(r);
    for (size_t i = 0; i < shape->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *dm = shape->dim[i];
        dims[i].value = -1;
        if (!dm) continue;
        if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
            /* the IR says dim_value is non-negative: a negative one is a broken model, not an
               unknown dimension (which is an unset dimension or a dim_param) */
            if (dm->dim_value < 0)
                return fail(r, TOSAC_ERR_FORMAT, "%s: dimension %zu is %" PRId64 "; ONNX dimensions are non-negative",
                            what, i, (int64_t)dm->dim_value);
            dims[i].value = dm->dim_value;
        } else if (dm->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dm->dim_param) {
            dims[i].param = tosac_arena_strdup(r->arena, dm->dim_param);
            if (!dims[i].param) return nomem(r);
        }
    }
    out->dims = dims;
    return TOSAC_OK;
}

static tosac_status decode_vi(rd *r, const Onnx__ValueInfoProto *vi, const char *kind, const char *gname,
                              tosac_onnx_value_info *out)
{
    char what[256];
    if (!vi || !vi->name || !*vi->name)
        return fail(r, TOSAC_ERR_FORMAT, "graph '%s': %s without a name", show(gname).s, kind);
    snprintf(what, sizeof what, "graph '%s' %s '%s'", show(gname).s, kind, show(vi->name).s);
    out->name = tosac_arena_strdup(r->arena, vi->name);
    if (!out->name) return nomem(r);
    return decode_type(r, vi->type, what, &out->type);
}

/* ------------------------------------------------------------------------------------------------
 * Graphs */

/* A growable array of const char * on the tosac heap. */
typedef struct strvec {
    const char **v;
    size_t n, cap;
} strvec;

static int strvec_push(strvec *sv, const char *s)
{
    if (!tosac_grow((void **)&sv->v, &sv->cap, sv->n + 1, sizeof *sv->v)) return 0;
    sv->v[sv->n++] = s;
    return 1;
}

static void strvec_free(strvec *sv)
{
    tosac_free(sv->v, sv->cap * sizeof *sv->v);
    sv->v = NULL;
    sv->n = sv->cap = 0;
}

typedef struct graph_ctx {
    const char *gname;
    name_tab tab;      /* local names */
    name_tab free_tab; /* outer references already recorded */
    strvec free_list;
    size_t *preds; /* per edge: producer node index */
    size_t n_edges, cap_edges;
    size_t *pred_start; /* per node: first edge (edges are appended in node order) */
} graph_ctx;

static tosac_status read_graph(rd *r, const Onnx__GraphProto *gp, const scope *outer,
                               const tosac_onnx_graph *parent, tosac_onnx_graph **out);

/* Records that the node being processed depends on `name` (an input or a subgraph's outer ref). */
static tosac_status use_name(rd *r, graph_ctx *gc, const scope *outer, const char *name, const char *nodewhat,
                             const char *role)
{
    int64_t *v = tab_find(&gc->tab, name);
    if (v) {
        if (*v >= 0) {
            if (!tosac_grow((void **)&gc->preds, &gc->cap_edges, gc->n_edges + 1, sizeof *gc->preds))
                return nomem(r);
            gc->preds[gc->n_edges++] = (size_t)*v;
        }
        return TOSAC_OK;
    }
    if (scope_has(outer, name)) {
        int ins = tab_put(&gc->free_tab, name, 0, NULL);
        if (ins < 0) return nomem(r);
        if (ins == 1 && !strvec_push(&gc->free_list, name)) return nomem(r);
        return TOSAC_OK;
    }
    return fail(r, TOSAC_ERR_FORMAT, "%s: %s '%s' is not defined", nodewhat, role, show(name).s);
}

static tosac_status decode_attr(rd *r, const Onnx__AttributeProto *ap, const char *nodewhat, graph_ctx *gc,
                                const scope *outer, const scope *here, const tosac_onnx_graph *self,
                                tosac_onnx_attr *out)
{
    char what[512];
    if (!ap || !ap->name || !*ap->name) return fail(r, TOSAC_ERR_FORMAT, "%s: attribute without a name", nodewhat);
    snprintf(what, sizeof what, "%s attribute '%s'", nodewhat, show(ap->name).s);
    out->name = tosac_arena_strdup(r->arena, ap->name);
    if (!out->name) return nomem(r);
    if (ap->ref_attr_name && !(out->ref_attr_name = tosac_arena_strdup(r->arena, ap->ref_attr_name)))
        return nomem(r);
    int t = ap->has_type ? (int)ap->type : 0;
    if (t == 0) { /* files before IR 3 sometimes left the type out: infer it from the value set */
        if (ap->has_f) t = TOSAC_ONNX_ATTR_FLOAT;
        else if (ap->has_i) t = TOSAC_ONNX_ATTR_INT;
        else if (ap->has_s) t = TOSAC_ONNX_ATTR_STRING;
        else if (ap->t) t = TOSAC_ONNX_ATTR_TENSOR;
        else if (ap->g) t = TOSAC_ONNX_ATTR_GRAPH;
        else if (ap->n_floats) t = TOSAC_ONNX_ATTR_FLOATS;
        else if (ap->n_ints) t = TOSAC_ONNX_ATTR_INTS;
        else if (ap->n_strings) t = TOSAC_ONNX_ATTR_STRINGS;
        else if (ap->n_tensors) t = TOSAC_ONNX_ATTR_TENSORS;
        else if (ap->n_graphs) t = TOSAC_ONNX_ATTR_GRAPHS;
        else return fail(r, TOSAC_ERR_FORMAT, "%s: no type and no value", what);
    }
    out->type = (tosac_onnx_attr_type)t;
    switch (t) {
    case TOSAC_ONNX_ATTR_FLOAT: out->f = ap->f; break;
    case TOSAC_ONNX_ATTR_INT: out->i = ap->i; break;
    case TOSAC_ONNX_ATTR_STRING:
        out->s_len = ap->s.len;
        out->s = tosac_arena_strndup(r->arena, ap->s.len ? (const char *)ap->s.data : "", ap->s.len);
        if (!out->s) return nomem(r);
        break;
    case TOSAC_ONNX_ATTR_TENSOR: {
        if (!ap->t) return fail(r, TOSAC_ERR_FORMAT, "%s: TENSOR attribute without a tensor", what);
        tosac_onnx_tensor *tt = tosac_arena_alloc(r->arena, sizeof *tt);
        if (!tt) return nomem(r);
        tosac_status s = decode_tensor(r, ap->t, what, tt);
        if (s != TOSAC_OK) return s;
        out->t = tt;
        break;
    }
    case TOSAC_ONNX_ATTR_FLOATS:
        out->n = ap->n_floats;
        if (ap->n_floats && !(out->floats = tosac_arena_memdup(r->arena, ap->floats, ap->n_floats * sizeof(float))))
            return nomem(r);
        break;
    case TOSAC_ONNX_ATTR_INTS:
        out->n = ap->n_ints;
        if (ap->n_ints && !(out->ints = tosac_arena_memdup(r->arena, ap->ints, ap->n_ints * sizeof(int64_t))))
            return nomem(r);
        break;
    case TOSAC_ONNX_ATTR_STRINGS: {
        out->n = ap->n_strings;
        if (!ap->n_strings) break;
        const char **ss = tosac_arena_alloc(r->arena, ap->n_strings * sizeof *ss);
        size_t *ls = tosac_arena_alloc(r->arena, ap->n_strings * sizeof *ls);
        if (!ss || !ls) return nomem(r);
        for (size_t i = 0; i < ap->n_strings; i++) {
            ls[i] = ap->strings[i].len;
            ss[i] = tosac_arena_strndup(r->arena, ls[i] ? (const char *)ap->strings[i].data : "", ls[i]);
            if (!ss[i]) return nomem(r);
        }
        out->strings = ss;
        out->string_lens = ls;
        break;
    }
    case TOSAC_ONNX_ATTR_TENSORS: {
        out->n = ap->n_tensors;
        if (!ap->n_tensors) break;
        tosac_onnx_tensor *ts = tosac_arena_alloc(r->arena, ap->n_tensors * sizeof *ts);
        if (!ts) return nomem(r);
        for (size_t i = 0; i < ap->n_tensors; i++) {
            char w2[560];
            snprintf(w2, sizeof w2, "%s tensor %zu", what, i);
            if (!ap->tensors[i]) return fail(r, TOSAC_ERR_FORMAT, "%s: missing", w2);
            tosac_status s = decode_tensor(r, ap->tensors[i], w2, &ts[i]);
            if (s != TOSAC_OK) return s;
        }
        out->tensors = ts;
        break;
    }
    case TOSAC_ONNX_ATTR_GRAPH:
    case TOSAC_ONNX_ATTR_GRAPHS: {
        size_t n = t == TOSAC_ONNX_ATTR_GRAPH ? 1 : ap->n_graphs;
        Onnx__GraphProto *const *src = t == TOSAC_ONNX_ATTR_GRAPH ? &ap->g : ap->graphs;
        if (t == TOSAC_ONNX_ATTR_GRAPH && !ap->g)
            return fail(r, TOSAC_ERR_FORMAT, "%s: GRAPH attribute without a graph", what);
        if (!n) break;
        const tosac_onnx_graph **gs = tosac_arena_alloc(r->arena, n * sizeof *gs);
        if (!gs) return nomem(r);
        for (size_t i = 0; i < n; i++) {
            if (!src[i]) return fail(r, TOSAC_ERR_FORMAT, "%s: missing graph", what);
            tosac_onnx_graph *sub = NULL;
            tosac_status s = read_graph(r, src[i], here, self, &sub);
            if (s != TOSAC_OK) return s;
            gs[i] = sub;
            /* the subgraph's outer references are implicit inputs of this node */
            for (size_t k = 0; k < sub->n_outer_refs; k++) {
                s = use_name(r, gc, outer, sub->outer_refs[k], nodewhat, "value used by a subgraph");
                if (s != TOSAC_OK) return s;
            }
        }
        if (t == TOSAC_ONNX_ATTR_GRAPH) out->g = gs[0];
        else {
            out->graphs = gs;
            out->n = n;
        }
        break;
    }
    case TOSAC_ONNX_ATTR_SPARSE_TENSOR:
    case TOSAC_ONNX_ATTR_SPARSE_TENSORS:
    case TOSAC_ONNX_ATTR_TYPE_PROTO:
    case TOSAC_ONNX_ATTR_TYPE_PROTOS:
        break; /* kept by type only; converters reject what they need */
    default:
        return fail(r, TOSAC_ERR_FORMAT, "%s: unknown attribute type %d", what, t);
    }
    return TOSAC_OK;
}

/* Min-heap of node indices (smallest file index first: the sort keeps file order where it can). */
static void heap_push(size_t *h, size_t *n, size_t v)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h[p] <= v) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = v;
}

static size_t heap_pop(size_t *h, size_t *n)
{
    size_t top = h[0], v = h[--(*n)], i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1] < h[c]) c++;
        if (v <= h[c]) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = v;
    return top;
}

/* Topological order of the nodes into `order`; a cycle is an error naming one of its nodes. */
static tosac_status topo_sort(rd *r, graph_ctx *gc, const tosac_onnx_node *nodes, size_t n, size_t *order)
{
    tosac_status s = TOSAC_OK;
    size_t *indeg = tosac_calloc(n + 1, sizeof(size_t));
    size_t *succ_start = tosac_calloc(n + 1, sizeof(size_t));
    size_t *succ = tosac_calloc(gc->n_edges + 1, sizeof(size_t));
    size_t *fill = tosac_calloc(n + 1, sizeof(size_t));
    size_t *heap = tosac_calloc(n + 1, sizeof(size_t));
    if (!indeg || !succ_start || !succ || !fill || !heap) {
        s = nomem(r);
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        indeg[i] = gc->pred_start[i + 1] - gc->pred_start[i];
        for (size_t e = gc->pred_start[i]; e < gc->pred_start[i + 1]; e++) succ_start[gc->preds[e] + 1]++;
    }
    for (size_t i = 0; i < n; i++) succ_start[i + 1] += succ_start[i];
    for (size_t i = 0; i < n; i++)
        for (size_t e = gc->pred_start[i]; e < gc->pred_start[i + 1]; e++) {
            size_t p = gc->preds[e];
            succ[succ_start[p] + fill[p]++] = i;
        }
    size_t hn = 0, done_n = 0;
    for (size_t i = 0; i < n; i++)
        if (indeg[i] == 0) heap_push(heap, &hn, i);
    while (hn) {
        size_t v = heap_pop(heap, &hn);
        order[done_n++] = v;
        for (size_t e = succ_start[v]; e < succ_start[v + 1]; e++)
            if (--indeg[succ[e]] == 0) heap_push(heap, &hn, succ[e]);
    }
    if (done_n < n) {
        /* walk back along unfinished producers: after n steps we are on a cycle */
        size_t v = 0;
        while (indeg[v] == 0) v++;
        for (size_t step = 0; step < n; step++) {
            for (size_t e = gc->pred_start[v]; e < gc->pred_start[v + 1]; e++)
                if (indeg[gc->preds[e]] != 0) {
                    v = gc->preds[e];
                    break;
                }
        }
        s = fail(r, TOSAC_ERR_FORMAT, "graph '%s': the nodes form a cycle through node '%s' (%s)", show(gc->gname).s,
                 show(nodes[v].name).s, show(nodes[v].op_type).s);
    }
done:
    tosac_free(indeg, (n + 1) * sizeof(size_t));
    tosac_free(succ_start, (n + 1) * sizeof(size_t));
    tosac_free(succ, (gc->n_edges + 1) * sizeof(size_t));
    tosac_free(fill, (n + 1) * sizeof(size_t));
    tosac_free(heap, (n + 1) * sizeof(size_t));
    return s;
}

static tosac_status read_graph_body(rd *r, const Onnx__GraphProto *gp, const scope *outer, graph_ctx *gc,
                                    tosac_onnx_graph *g)
{
    tosac_status s;
    const char *gname = g->name;
    size_t nn = gp->n_node;
    if (nn > r->max_nodes - r->nodes_total)
        return fail(r, TOSAC_ERR_NOMEM, "graph '%s': more than %zu nodes in all (max_nodes)", show(gname).s,
                    r->max_nodes);
    r->nodes_total += nn;
    size_t expect = gp->n_initializer + gp->n_input;
    for (size_t i = 0; i < nn; i++)
        if (gp->node[i]) expect += gp->node[i]->n_output;
    if (!tab_init(&gc->tab, expect) || !tab_init(&gc->free_tab, 8)) return nomem(r);

    /* initializers and graph inputs */
    if (gp->n_initializer) {
        tosac_onnx_tensor *inits = tosac_arena_alloc(r->arena, gp->n_initializer * sizeof *inits);
        if (!inits) return nomem(r);
        for (size_t i = 0; i < gp->n_initializer; i++) {
            const Onnx__TensorProto *tp = gp->initializer[i];
            if (!tp || !tp->name || !*tp->name)
                return fail(r, TOSAC_ERR_FORMAT, "graph '%s': initializer %zu has no name", show(gname).s, i);
            char what[256];
            snprintf(what, sizeof what, "graph '%s' initializer '%s'", show(gname).s, show(tp->name).s);
            int ins = tab_put(&gc->tab, tp->name, NAME_INITIALIZER, NULL);
            if (ins < 0) return nomem(r);
            if (ins == 0) return fail(r, TOSAC_ERR_FORMAT, "%s: duplicate initializer name", what);
            s = decode_tensor(r, tp, what, &inits[i]);
            if (s != TOSAC_OK) return s;
        }
        g->initializers = inits;
        g->n_initializers = gp->n_initializer;
    }
    if (gp->n_input) {
        tosac_onnx_value_info *ins_v = tosac_arena_alloc(r->arena, gp->n_input * sizeof *ins_v);
        if (!ins_v) return nomem(r);
        size_t k = 0;
        for (size_t i = 0; i < gp->n_input; i++) {
            const Onnx__ValueInfoProto *vi = gp->input[i];
            if (!vi || !vi->name || !*vi->name)
                return fail(r, TOSAC_ERR_FORMAT, "graph '%s': input %zu has no name", show(gname).s, i);
            int64_t old = 0;
            int ins = tab_put(&gc->tab, vi->name, NAME_INPUT, &old);
            if (ins < 0) return nomem(r);
            if (ins == 0 && old == NAME_INPUT)
                return fail(r, TOSAC_ERR_FORMAT, "graph '%s': input '%s' is declared twice", show(gname).s,
                            show(vi->name).s);
            if (ins == 0) continue; /* an initializer listed as input (IR < 4 style): not a real input */
            s = decode_vi(r, vi, "input", gname, &ins_v[k]);
            if (s != TOSAC_OK) return s;
            k++;
        }
        g->inputs = ins_v;
        g->n_inputs = k;
    }

    /* node outputs */
    tosac_onnx_node *nodes = nn ? tosac_arena_alloc(r->arena, nn * sizeof *nodes) : NULL;
    if (nn && !nodes) return nomem(r);
    for (size_t i = 0; i < nn; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        tosac_onnx_node *nd = &nodes[i];
        if (!np || !np->op_type || !*np->op_type)
            return fail(r, TOSAC_ERR_FORMAT, "graph '%s': node %zu has no op_type", show(gname).s, i);
        nd->index = i;
        nd->op_type = tosac_arena_strdup(r->arena, np->op_type);
        if (!nd->op_type) return nomem(r);
        if (np->name && *np->name) {
            nd->name = tosac_arena_strdup(r->arena, np->name);
        } else {
            size_t l = strlen(np->op_type) + 24;
            char *nm = tosac_arena_alloc(r->arena, l);
            if (nm) snprintf(nm, l, "%s_%zu", np->op_type, i);
            nd->name = nm;
        }
        if (!nd->name) return nomem(r);
        const char *dom = np->domain ? np->domain : "";
        if (strcmp(dom, "ai.onnx") == 0) dom = "";
        if (!(nd->domain = tosac_arena_strdup(r->arena, dom))) return nomem(r);
        for (size_t o = 0; o < np->n_output; o++) {
            const char *on = np->output[o] ? np->output[o] : "";
            if (!*on) continue;
            int64_t old = 0;
            int ins = tab_put(&gc->tab, on, (int64_t)i, &old);
            if (ins < 0) return nomem(r);
            if (ins == 0) {
                if (old >= 0)
                    return fail(r, TOSAC_ERR_FORMAT,
                                "graph '%s' node '%s' (%s): output '%s' is already produced by node '%s'",
                                show(gname).s, show(nd->name).s, show(nd->op_type).s, show(on).s,
                                show(nodes[old].name).s);
                return fail(r, TOSAC_ERR_FORMAT, "graph '%s' node '%s' (%s): output '%s' duplicates a graph %s",
                            show(gname).s, show(nd->name).s, show(nd->op_type).s, show(on).s,
                            old == NAME_INPUT ? "input" : "initializer");
            }
        }
    }
    g->nodes = nodes;
    g->n_nodes = nn;

    /* node inputs, attributes, dependencies */
    scope here = {&gc->tab, outer};
    gc->pred_start = tosac_calloc(nn + 1, sizeof(size_t));
    if (!gc->pred_start) return nomem(r);
    for (size_t i = 0; i < nn; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        tosac_onnx_node *nd = &nodes[i];
        char nodewhat[320];
        snprintf(nodewhat, sizeof nodewhat, "graph '%s' node '%s' (%s)", show(gname).s, show(nd->name).s,
                 show(nd->op_type).s);
        gc->pred_start[i] = gc->n_edges;
        const char **ins = np->n_input ? tosac_arena_alloc(r->arena, np->n_input * sizeof *ins) : NULL;
        const char **outs = np->n_output ? tosac_arena_alloc(r->arena, np->n_output * sizeof *outs) : NULL;
        if ((np->n_input && !ins) || (np->n_output && !outs)) return nomem(r);
        for (size_t k = 0; k < np->n_input; k++) {
            const char *in = np->input[k] ? np->input[k] : "";
            if (!(ins[k] = tosac_arena_strdup(r->arena, in))) return nomem(r);
            if (!*in) continue;
            s = use_name(r, gc, outer, in, nodewhat, "input");
            if (s != TOSAC_OK) return s;
        }
        for (size_t k = 0; k < np->n_output; k++)
            if (!(outs[k] = tosac_arena_strdup(r->arena, np->output[k] ? np->output[k] : ""))) return nomem(r);
        nd->inputs = ins;
        nd->outputs = outs;
        nd->n_inputs = np->n_input;
        nd->n_outputs = np->n_output;
        if (np->n_attribute) {
            tosac_onnx_attr *attrs = tosac_arena_alloc(r->arena, np->n_attribute * sizeof *attrs);
            if (!attrs) return nomem(r);
            for (size_t k = 0; k < np->n_attribute; k++) {
                s = decode_attr(r, np->attribute[k], nodewhat, gc, outer, &here, g, &attrs[k]);
                if (s != TOSAC_OK) return s;
                for (size_t j = 0; j < k; j++)
                    if (strcmp(attrs[j].name, attrs[k].name) == 0)
                        return fail(r, TOSAC_ERR_FORMAT, "%s: attribute '%s' is given twice", nodewhat,
                                    show(attrs[k].name).s);
            }
            nd->attrs = attrs;
            nd->n_attrs = np->n_attribute;
        }
    }
    gc->pred_start[nn] = gc->n_edges;

    /* graph outputs */
    if (gp->n_output) {
        tosac_onnx_value_info *outs = tosac_arena_alloc(r->arena, gp->n_output * sizeof *outs);
        if (!outs) return nomem(r);
        for (size_t i = 0; i < gp->n_output; i++) {
            s = decode_vi(r, gp->output[i], "output", gname, &outs[i]);
            if (s != TOSAC_OK) return s;
            const char *on = outs[i].name;
            if (tab_find(&gc->tab, on)) continue;
            if (!scope_has(outer, on))
                return fail(r, TOSAC_ERR_FORMAT, "graph '%s': output '%s' is not defined by any node, input or initializer",
                            show(gname).s, show(on).s);
            int ins = tab_put(&gc->free_tab, on, 0, NULL);
            if (ins < 0) return nomem(r);
            if (ins == 1 && !strvec_push(&gc->free_list, on)) return nomem(r);
        }
        g->outputs = outs;
        g->n_outputs = gp->n_output;
    }
    if (gp->n_value_info) {
        tosac_onnx_value_info *vis = tosac_arena_alloc(r->arena, gp->n_value_info * sizeof *vis);
        if (!vis) return nomem(r);
        for (size_t i = 0; i < gp->n_value_info; i++) {
            s = decode_vi(r, gp->value_info[i], "value_info", gname, &vis[i]);
            if (s != TOSAC_OK) return s;
        }
        g->value_info = vis;
        g->n_value_info = gp->n_value_info;
    }
    if (gc->free_list.n) {
        const char **refs = tosac_arena_alloc(r->arena, gc->free_list.n * sizeof *refs);
        if (!refs) return nomem(r);
        for (size_t i = 0; i < gc->free_list.n; i++)
            if (!(refs[i] = tosac_arena_strdup(r->arena, gc->free_list.v[i]))) return nomem(r);
        g->outer_refs = refs;
        g->n_outer_refs = gc->free_list.n;
    }

    /* topological order */
    if (nn) {
        size_t *order = tosac_calloc(nn, sizeof *order);
        if (!order) return nomem(r);
        s = topo_sort(r, gc, nodes, nn, order);
        if (s == TOSAC_OK) {
            tosac_onnx_node *sorted = tosac_arena_alloc(r->arena, nn * sizeof *sorted);
            if (!sorted) s = nomem(r);
            else {
                for (size_t i = 0; i < nn; i++) sorted[i] = nodes[order[i]];
                g->nodes = sorted;
            }
        }
        tosac_free(order, nn * sizeof *order);
        if (s != TOSAC_OK) return s;
    }
    return TOSAC_OK;
}

static tosac_status read_graph(rd *r, const Onnx__GraphProto *gp, const scope *outer,
                               const tosac_onnx_graph *parent, tosac_onnx_graph **out)
{
    tosac_onnx_graph *g = tosac_arena_alloc(r->arena, sizeof *g);
    if (!g) return nomem(r);
    g->parent = parent;
    g->name = dup_str(r, gp->name);
    if (!g->name) return nomem(r);
    graph_ctx gc;
    memset(&gc, 0, sizeof gc);
    gc.gname = g->name;
    tosac_status s = read_graph_body(r, gp, outer, &gc, g);
    tab_free(&gc.tab);
    tab_free(&gc.free_tab);
    strvec_free(&gc.free_list);
    tosac_free(gc.preds, gc.cap_edges * sizeof *gc.preds);
    tosac_free(gc.pred_start, (gp->n_node + 1) * sizeof(size_t));
    if (s == TOSAC_OK) *out = g;
    return s;
}

/* ------------------------------------------------------------------------------------------------
 * Model */

/* A node of `g` or its subgraphs in the default domain, or NULL. Subgraph nesting is bounded by
 * the nesting guard. */
static const tosac_onnx_node *find_default_domain_node(const tosac_onnx_graph *g)
{
    for (size_t i = 0; i < g->n_nodes; i++) {
        const tosac_onnx_node *nd = &g->nodes[i];
        if (!*nd->domain) return nd;
        for (size_t k = 0; k < nd->n_attrs; k++) {
            const tosac_onnx_attr *a = &nd->attrs[k];
            const tosac_onnx_node *f = NULL;
            if (a->type == TOSAC_ONNX_ATTR_GRAPH && a->g) f = find_default_domain_node(a->g);
            for (size_t j = 0; !f && a->type == TOSAC_ONNX_ATTR_GRAPHS && j < a->n; j++)
                f = find_default_domain_node(a->graphs[j]);
            if (f) return f;
        }
    }
    return NULL;
}

static tosac_status read_model(rd *r, const Onnx__ModelProto *mp, tosac_onnx_model *m)
{
    if (!mp->has_ir_version) return fail(r, TOSAC_ERR_FORMAT, "not an ONNX model (no ir_version)");
    m->ir_version = mp->ir_version;
    if (mp->ir_version < TOSAC_ONNX_MIN_IR || mp->ir_version > TOSAC_ONNX_MAX_IR)
        return fail(r, TOSAC_ERR_UNSUPPORTED, "IR version %" PRId64 " is not supported (accepted: %d to %d)",
                    mp->ir_version, TOSAC_ONNX_MIN_IR, TOSAC_ONNX_MAX_IR);
    int have_default = 0;
    tosac_onnx_opset *ops = mp->n_opset_import ? tosac_arena_alloc(r->arena, mp->n_opset_import * sizeof *ops) : NULL;
    if (mp->n_opset_import && !ops) return nomem(r);
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *op = mp->opset_import[i];
        const char *dom = op && op->domain ? op->domain : "";
        if (strcmp(dom, "ai.onnx") == 0) dom = "";
        ops[i].domain = tosac_arena_strdup(r->arena, dom);
        if (!ops[i].domain) return nomem(r);
        ops[i].version = op && op->has_version ? op->version : 0;
        if (!*dom && !have_default) {
            have_default = 1;
            m->opset = ops[i].version;
        }
    }
    m->opsets = ops;
    m->n_opsets = mp->n_opset_import;
    if (have_default && (m->opset < TOSAC_ONNX_MIN_OPSET || m->opset > TOSAC_ONNX_MAX_OPSET))
        return fail(r, TOSAC_ERR_UNSUPPORTED,
                    "opset version %" PRId64 " of the default domain is not supported (accepted: %d to %d)", m->opset,
                    TOSAC_ONNX_MIN_OPSET, TOSAC_ONNX_MAX_OPSET);
    if (!(m->producer_name = dup_str(r, mp->producer_name)) ||
        !(m->producer_version = dup_str(r, mp->producer_version)) || !(m->domain = dup_str(r, mp->domain)))
        return nomem(r);
    m->model_version = mp->has_model_version ? mp->model_version : 0;
    m->n_functions = mp->n_functions;
    if (!mp->graph) return fail(r, TOSAC_ERR_FORMAT, "the model has no graph");
    tosac_onnx_graph *g = NULL;
    tosac_status s = read_graph(r, mp->graph, NULL, NULL, &g);
    if (s != TOSAC_OK) return s;
    if (!have_default) {
        /* allowed only when no node needs it (e.g. training-domain models) */
        const tosac_onnx_node *nd = find_default_domain_node(g);
        if (nd)
            return fail(r, TOSAC_ERR_FORMAT, "node '%s' (%s) uses the default domain but the model imports no opset "
                        "for it", show(nd->name).s, show(nd->op_type).s);
    }
    m->graph = g;
    m->total_nodes = r->nodes_total;
    return TOSAC_OK;
}

tosac_status tosac_onnx_read_mem(const void *buf, size_t len, const char *name, const char *base_dir,
                                 const tosac_onnx_read_opts *opts, tosac_onnx_model **out, tosac_diag *d)
{
    rd r;
    memset(&r, 0, sizeof r);
    r.file = name ? name : "<memory>";
    r.diag = d;
    r.base_dir = base_dir;
    if (!out || (!buf && len)) return fail(&r, TOSAC_ERR_INVALID_ARG, "tosac_onnx_read_mem: NULL argument");
    uint64_t max_file = opts && opts->max_file_bytes ? opts->max_file_bytes : DEFAULT_MAX_FILE;
    r.max_external = opts && opts->max_external_bytes ? opts->max_external_bytes : DEFAULT_MAX_EXTERNAL;
    r.opts = opts;
    r.max_nodes = opts && opts->max_nodes ? opts->max_nodes : DEFAULT_MAX_NODES;
    size_t max_depth = opts && opts->max_depth ? opts->max_depth : DEFAULT_MAX_DEPTH;
    if (max_depth > MAX_DEPTH_LIMIT) max_depth = MAX_DEPTH_LIMIT;
    uint64_t budget = opts && opts->max_decode_bytes ? opts->max_decode_bytes
                                                     : ((uint64_t)len * 64 + ((uint64_t)64 << 20));
    if ((uint64_t)len > max_file)
        return fail(&r, TOSAC_ERR_NOMEM, "the file has %zu bytes, above the limit of %" PRIu64 " (max_file_bytes)",
                    len, max_file);
    if (len == 0) return fail(&r, TOSAC_ERR_FORMAT, "empty file (not an ONNX model)");

    tosac_status s = nesting_guard(&r, buf, len, max_depth);
    if (s != TOSAC_OK) return s;

    pb_budget pb = {budget, 0};
    ProtobufCAllocator alloc = {pb_alloc, pb_free, &pb};
    Onnx__ModelProto *mp = onnx__model_proto__unpack(&alloc, len, buf);
    if (!mp) {
        if (pb.hit)
            return fail(&r, TOSAC_ERR_NOMEM, "decoding needs more than %" PRIu64 " bytes of memory (max_decode_bytes)",
                        budget);
        return fail(&r, TOSAC_ERR_FORMAT, "not a valid ONNX protobuf (protobuf-c could not decode it)");
    }

    onnx_model_impl *mi = tosac_calloc(1, sizeof *mi);
    if (!mi) {
        onnx__model_proto__free_unpacked(mp, &alloc);
        return nomem(&r);
    }
    tosac_arena_init(&mi->arena);
    r.arena = &mi->arena;
    r.model = mi;
    s = read_model(&r, mp, &mi->pub);
    onnx__model_proto__free_unpacked(mp, &alloc);
    if (s != TOSAC_OK) {
        tosac_onnx_model_destroy(&mi->pub);
        return s;
    }
    *out = &mi->pub;
    return TOSAC_OK;
}

tosac_status tosac_onnx_read_file(const char *path, const tosac_onnx_read_opts *opts, tosac_onnx_model **out,
                                  tosac_diag *d)
{
    if (!path || !out) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_onnx_read_file: NULL argument");
    uint64_t max_file = opts && opts->max_file_bytes ? opts->max_file_bytes : DEFAULT_MAX_FILE;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return tosac_diag_add(d, TOSAC_ERR_IO, "%s: not a regular file", path);
    }
    if ((uint64_t)st.st_size > max_file || (uint64_t)st.st_size > SIZE_MAX) {
        close(fd);
        return tosac_diag_add(d, TOSAC_ERR_NOMEM,
                              "%s: the file has %" PRIu64 " bytes, above the limit of %" PRIu64 " (max_file_bytes)",
                              path, (uint64_t)st.st_size, max_file);
    }
    size_t len = (size_t)st.st_size;
    /* directory of the model, for external data */
    size_t plen = strlen(path) + 1;
    char *dir = tosac_malloc(plen + 1);
    if (!dir) {
        close(fd);
        return tosac_diag_add(d, TOSAC_ERR_NOMEM, "%s: out of memory", path);
    }
    memcpy(dir, path, plen);
    char *slash = strrchr(dir, '/');
    if (slash == dir) slash[1] = 0;
    else if (slash) *slash = 0;
    else memcpy(dir, ".", 2);

    tosac_status s;
    void *map = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    if (map != MAP_FAILED) {
        s = tosac_onnx_read_mem(map, len, path, dir, opts, out, d);
        munmap(map, len);
    } else {
        unsigned char *buf = tosac_malloc(len ? len : 1);
        size_t got = 0;
        s = buf ? TOSAC_OK : tosac_diag_add(d, TOSAC_ERR_NOMEM, "%s: out of memory", path);
        while (s == TOSAC_OK && got < len) {
            ssize_t n = read(fd, buf + got, len - got);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) s = tosac_diag_add(d, TOSAC_ERR_IO, "%s: read failed", path);
            else got += (size_t)n;
        }
        if (s == TOSAC_OK) s = tosac_onnx_read_mem(buf, len, path, dir, opts, out, d);
        tosac_free(buf, len ? len : 1);
    }
    close(fd);
    tosac_free(dir, plen + 1);
    return s;
}

void tosac_onnx_model_destroy(tosac_onnx_model *m)
{
    if (!m) return;
    onnx_model_impl *mi = (onnx_model_impl *)m;
    for (onnx_kept_buffer *k = mi->kept; k; k = k->next) tosac_free(k->block, k->bytes);
    tosac_arena_deinit(&mi->arena);
    tosac_free(mi, sizeof *mi);
}

const tosac_onnx_tensor *tosac_onnx_find_initializer(const tosac_onnx_graph *g, const char *name)
{
    if (!g || !name) return NULL;
    for (size_t i = 0; i < g->n_initializers; i++)
        if (strcmp(g->initializers[i].name, name) == 0) return &g->initializers[i];
    return NULL;
}

const tosac_onnx_attr *tosac_onnx_find_attr(const tosac_onnx_node *n, const char *name)
{
    if (!n || !name) return NULL;
    for (size_t i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].name, name) == 0) return &n->attrs[i];
    return NULL;
}
