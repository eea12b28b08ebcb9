/* NumPy .npy reading/writing and the TOSA tensor data conversions (see include/tosac/npy.h). */
#include "tosac/npy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/outfile.h"
#include "core/diag.h"
#include "core/fp.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64
#define SHAPE_TEXT_MAX (TOSAC_NPY_MAX_RANK * 22 + 8)

/* ------------------------------------------------------------------------------------------ */
/* descr strings                                                                              */

typedef struct npy_descr {
    char norm[8];   /* normalised spelling */
    char kind;      /* b i u f V */
    size_t size;    /* bytes per element */
    int swap;       /* data is big-endian and must be byte-swapped */
} npy_descr;

/* Parses a descr such as "<f4", "|b1", ">i2", "V2". Returns 0 for anything not handled. */
static int descr_parse(const char *s, size_t n, npy_descr *o)
{
    size_t i = 0;
    char order = '=';
    if (n > 0 && (s[0] == '<' || s[0] == '>' || s[0] == '|' || s[0] == '=')) order = s[i++];
    if (i >= n) return 0;
    const char kind = s[i++];
    if (i >= n || n - i > 1) return 0; /* exactly one size digit: every supported size is < 10 */
    if (s[i] < '1' || s[i] > '9') return 0;
    const size_t size = (size_t)(s[i] - '0');
    int ok;
    switch (kind) {
    case 'b': ok = size == 1; break;
    case 'i':
    case 'u': ok = size == 1 || size == 2 || size == 4 || size == 8; break;
    case 'f': ok = size == 2 || size == 4 || size == 8; break;
    case 'V': ok = size <= 8; break;
    default: ok = 0; break;
    }
    if (!ok) return 0;
    o->kind = kind;
    o->size = size;
    o->swap = order == '>' && size > 1 && kind != 'V';
    o->norm[0] = size == 1 ? '|' : '<';
    o->norm[1] = kind;
    o->norm[2] = (char)('0' + size);
    o->norm[3] = '\0';
    return 1;
}

/* ------------------------------------------------------------------------------------------ */
/* small helpers                                                                              */

static const char *nm(const char *name) { return name ? name : "<npy>"; }

/* "(2, 3)", "(4,)", "()" */
static void shape_text(char *buf, size_t cap, int rank, const int64_t *shape)
{
    size_t n = 0;
    int w = snprintf(buf, cap, "(");
    n = w > 0 ? (size_t)w : 0;
    for (int i = 0; i < rank && n < cap; i++) {
        w = snprintf(buf + n, cap - n, "%s%lld", i ? ", " : "", (long long)shape[i]);
        if (w < 0) break;
        n += (size_t)w;
    }
    if (n < cap) snprintf(buf + n, cap - n, "%s)", rank == 1 ? "," : "");
}

/* Product of dims; 0 if a dim is negative or the product (ignoring zero dims) overflows int64. */
static int shape_count(int rank, const int64_t *shape, int64_t *count)
{
    int64_t p = 1;
    int zero = 0;
    for (int i = 0; i < rank; i++) {
        if (shape[i] < 0) return 0;
        if (shape[i] == 0) {
            zero = 1;
            continue;
        }
        if (p > INT64_MAX / shape[i]) return 0;
        p *= shape[i];
    }
    *count = zero ? 0 : p;
    return 1;
}

static uint32_t ld_u16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t ld_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void st_u16(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}
static void st_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static void byteswap_elems(uint8_t *p, size_t nbytes, size_t size)
{
    for (size_t off = 0; off + size <= nbytes; off += size) {
        for (size_t a = 0, b = size - 1; a < b; a++, b--) {
            uint8_t t = p[off + a];
            p[off + a] = p[off + b];
            p[off + b] = t;
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* header parsing                                                                             */

typedef struct npy_header {
    npy_descr descr;
    int fortran;
    int rank;
    int64_t shape[TOSAC_NPY_MAX_RANK];
    int64_t count;
    size_t nbytes;
} npy_header;

typedef struct cursor {
    const char *p, *end;
    const char *name;
    tosac_diag *d;
} cursor;

static void skip_ws(cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

/* A printable description of the byte at the cursor, for messages. */
static const char *at_text(const cursor *c, char *buf, size_t cap)
{
    if (c->p >= c->end) return "the end of the header";
    unsigned char ch = (unsigned char)*c->p;
    if (ch >= 0x20 && ch < 0x7F && ch != '\'')
        snprintf(buf, cap, "'%c'", (char)ch);
    else
        snprintf(buf, cap, "byte 0x%02X", ch);
    return buf;
}

static tosac_status expect_char(cursor *c, char ch, const char *context)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return TOSAC_OK;
    }
    char b[16];
    return tosac_diag_add(c->d, TOSAC_ERR_FORMAT, "%s: header: expected '%c' %s, found %s", nm(c->name), ch,
                          context, at_text(c, b, sizeof b));
}

/* A Python string literal without escapes ('...' or "..."), copied to buf (NUL-terminated). */
static tosac_status parse_string(cursor *c, const char *what, char *buf, size_t cap)
{
    skip_ws(c);
    char b[16];
    if (c->p >= c->end || (*c->p != '\'' && *c->p != '"'))
        return tosac_diag_add(c->d, TOSAC_ERR_FORMAT, "%s: header: expected a quoted string for %s, found %s",
                              nm(c->name), what, at_text(c, b, sizeof b));
    const char q = *c->p++;
    size_t n = 0;
    for (;;) {
        if (c->p >= c->end)
            return tosac_diag_add(c->d, TOSAC_ERR_FORMAT, "%s: header: unterminated string for %s", nm(c->name),
                                  what);
        unsigned char ch = (unsigned char)*c->p++;
        if (ch == (unsigned char)q) break;
        if (ch == '\\')
            return tosac_diag_add(c->d, TOSAC_ERR_FORMAT,
                                  "%s: header: escape sequences are not supported in %s", nm(c->name), what);
        if (ch < 0x20 || ch >= 0x7F)
            return tosac_diag_add(c->d, TOSAC_ERR_FORMAT, "%s: header: %s contains the non-printable byte 0x%02X",
                                  nm(c->name), what, ch);
        if (n + 1 >= cap)
            return tosac_diag_add(c->d, TOSAC_ERR_FORMAT, "%s: header: %s is too long (over %zu characters)",
                                  nm(c->name), what, cap - 1);
        buf[n++] = (char)ch;
    }
    buf[n] = '\0';
    return TOSAC_OK;
}

static tosac_status parse_descr_value(cursor *c, npy_header *h)
{
    skip_ws(c);
    if (c->p < c->end && *c->p == '[')
        return tosac_diag_add(c->d, TOSAC_ERR_UNSUPPORTED,
                              "%s: header: structured arrays ('descr' is a list of fields) are not supported",
                              nm(c->name));
    char s[32];
    tosac_status st = parse_string(c, "'descr'", s, sizeof s);
    if (st) return st;
    if (!descr_parse(s, strlen(s), &h->descr))
        return tosac_diag_add(c->d, TOSAC_ERR_UNSUPPORTED,
                              "%s: header: unsupported descr '%s' (supported: b1, i1/2/4/8, u1/2/4/8, f2/4/8, "
                              "V1..V8)",
                              nm(c->name), s);
    return TOSAC_OK;
}

static tosac_status parse_bool_value(cursor *c, npy_header *h)
{
    skip_ws(c);
    const char *s = c->p;
    while (c->p < c->end && ((*c->p >= 'A' && *c->p <= 'Z') || (*c->p >= 'a' && *c->p <= 'z'))) c->p++;
    size_t n = (size_t)(c->p - s);
    if (n == 4 && !memcmp(s, "True", 4)) {
        h->fortran = 1;
    } else if (n == 5 && !memcmp(s, "False", 5)) {
        h->fortran = 0;
    } else {
        c->p = s;
        char b[16];
        return tosac_diag_add(c->d, TOSAC_ERR_FORMAT, "%s: header: 'fortran_order' must be True or False, found %s",
                              nm(c->name), at_text(c, b, sizeof b));
    }
    return TOSAC_OK;
}

static tosac_status parse_shape_value(cursor *c, npy_header *h)
{
    tosac_status st = expect_char(c, '(', "to start the 'shape' tuple");
    if (st) return st;
    char b[16];
    int n = 0, comma = 0;
    skip_ws(c);
    if (c->p < c->end && *c->p == ')') {
        c->p++;
        h->rank = 0;
        return TOSAC_OK;
    }
    for (;;) {
        skip_ws(c);
        if (c->p < c->end && *c->p == '-')
            return tosac_diag_add(c->d, TOSAC_ERR_FORMAT, "%s: header: 'shape' entry %d is negative", nm(c->name),
                                  n);
        if (c->p >= c->end || *c->p < '0' || *c->p > '9')
            return tosac_diag_add(c->d, TOSAC_ERR_FORMAT, "%s: header: 'shape' entry %d is not an integer (found %s)",
                                  nm(c->name), n, at_text(c, b, sizeof b));
        uint64_t v = 0;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
            unsigned dig = (unsigned)(*c->p - '0');
            if (v > ((uint64_t)INT64_MAX - dig) / 10)
                return tosac_diag_add(c->d, TOSAC_ERR_FORMAT,
                                      "%s: header: 'shape' entry %d is too large (over 2^63-1)", nm(c->name), n);
            v = v * 10 + dig;
            c->p++;
        }
        if (c->p < c->end && (*c->p == 'L' || *c->p == 'l')) c->p++; /* Python 2 long suffix */
        if (c->p < c->end && ((*c->p >= 'A' && *c->p <= 'Z') || (*c->p >= 'a' && *c->p <= 'z') || *c->p == '.' ||
                              *c->p == '_'))
            return tosac_diag_add(c->d, TOSAC_ERR_FORMAT, "%s: header: 'shape' entry %d is not an integer (found %s)",
                                  nm(c->name), n, at_text(c, b, sizeof b));
        if (n < TOSAC_NPY_MAX_RANK) h->shape[n] = (int64_t)v;
        n++; /* bounded: the header is at most 1 MiB */
        skip_ws(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            comma = 1;
            skip_ws(c);
            if (c->p < c->end && *c->p == ')') {
                c->p++;
                break;
            }
            continue;
        }
        if (c->p < c->end && *c->p == ')') {
            c->p++;
            if (n == 1 && !comma)
                return tosac_diag_add(c->d, TOSAC_ERR_FORMAT,
                                      "%s: header: 'shape' (%lld) is not a tuple (a 1-tuple needs a trailing comma)",
                                      nm(c->name), (long long)h->shape[0]);
            break;
        }
        return tosac_diag_add(c->d, TOSAC_ERR_FORMAT, "%s: header: expected ',' or ')' after 'shape' entry %d, found %s",
                              nm(c->name), n - 1, at_text(c, b, sizeof b));
    }
    if (n > TOSAC_NPY_MAX_RANK)
        return tosac_diag_add(c->d, TOSAC_ERR_UNSUPPORTED, "%s: header: rank %d exceeds the maximum of %d",
                              nm(c->name), n, TOSAC_NPY_MAX_RANK);
    h->rank = n;
    return TOSAC_OK;
}

/* Parses the dict text `p[0..n)` into `h` and validates the shape. */
static tosac_status parse_dict(const char *p, size_t n, const char *name, npy_header *h, tosac_diag *d)
{
    cursor c = {p, p + n, name, d};
    int have_descr = 0, have_fortran = 0, have_shape = 0;
    tosac_status st = expect_char(&c, '{', "at the start of the header dict");
    if (st) return st;
    for (;;) {
        skip_ws(&c);
        if (c.p < c.end && *c.p == '}') {
            c.p++;
            break;
        }
        char key[32];
        st = parse_string(&c, "a key", key, sizeof key);
        if (st) return st;
        int *have;
        if (!strcmp(key, "descr"))
            have = &have_descr;
        else if (!strcmp(key, "fortran_order"))
            have = &have_fortran;
        else if (!strcmp(key, "shape"))
            have = &have_shape;
        else
            return tosac_diag_add(d, TOSAC_ERR_FORMAT,
                                  "%s: header: unexpected key '%s' (only 'descr', 'fortran_order', 'shape')",
                                  nm(name), key);
        if (*have) return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: header: duplicate key '%s'", nm(name), key);
        *have = 1;
        char ctx[48];
        snprintf(ctx, sizeof ctx, "after key '%s'", key);
        st = expect_char(&c, ':', ctx);
        if (st) return st;
        if (have == &have_descr)
            st = parse_descr_value(&c, h);
        else if (have == &have_fortran)
            st = parse_bool_value(&c, h);
        else
            st = parse_shape_value(&c, h);
        if (st) return st;
        skip_ws(&c);
        if (c.p < c.end && *c.p == ',') {
            c.p++;
            continue;
        }
        if (c.p < c.end && *c.p == '}') {
            c.p++;
            break;
        }
        char b[16];
        return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: header: expected ',' or '}' after the value of '%s', found %s",
                              nm(name), key, at_text(&c, b, sizeof b));
    }
    skip_ws(&c);
    if (c.p < c.end) {
        char b[16];
        return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: header: unexpected %s after the closing '}'", nm(name),
                              at_text(&c, b, sizeof b));
    }
    if (!have_descr) return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: header: missing key 'descr'", nm(name));
    if (!have_fortran) return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: header: missing key 'fortran_order'", nm(name));
    if (!have_shape) return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: header: missing key 'shape'", nm(name));
    if (h->fortran)
        return tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED,
                              "%s: fortran_order True (column-major data) is not supported; save a C-order array",
                              nm(name));
    char sh[SHAPE_TEXT_MAX];
    if (!shape_count(h->rank, h->shape, &h->count) ||
        !tosac_mul_size(h->descr.size, (size_t)h->count, &h->nbytes) || (uint64_t)h->count > SIZE_MAX) {
        shape_text(sh, sizeof sh, h->rank, h->shape);
        return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: header: shape %s has too many elements (size overflows)",
                              nm(name), sh);
    }
    return TOSAC_OK;
}

/* Checks magic and version; gives the header's offset and length. `avail` bytes are at `b`. */
static tosac_status parse_preamble(const uint8_t *b, size_t avail, const char *name, size_t *hoff, size_t *hlen,
                                   tosac_diag *d)
{
    size_t cmp = avail < NPY_MAGIC_LEN ? avail : NPY_MAGIC_LEN;
    if (memcmp(b, NPY_MAGIC, cmp) != 0)
        return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: not a .npy file (bad magic)", nm(name));
    if (avail < 8)
        return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: truncated: %zu bytes, too short for a .npy preamble", nm(name),
                              avail);
    const unsigned major = b[6], minor = b[7];
    if (major < 1 || major > 3 || minor != 0)
        return tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED,
                              "%s: .npy format version %u.%u is not supported (1.0, 2.0 and 3.0 are)", nm(name), major,
                              minor);
    const size_t lensz = major == 1 ? 2 : 4;
    if (avail < 8 + lensz)
        return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: truncated: %zu bytes, too short for a .npy preamble", nm(name),
                              avail);
    const uint32_t len = major == 1 ? ld_u16(b + 8) : ld_u32(b + 8);
    if (len > TOSAC_NPY_MAX_HEADER)
        return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: header length %lu exceeds the limit of %u bytes", nm(name),
                              (unsigned long)len, (unsigned)TOSAC_NPY_MAX_HEADER);
    *hoff = 8 + lensz;
    *hlen = len;
    return TOSAC_OK;
}

static tosac_status check_header_fits(size_t hoff, size_t hlen, uint64_t total, const char *name, tosac_diag *d)
{
    if ((uint64_t)hoff + hlen > total)
        return tosac_diag_add(d, TOSAC_ERR_FORMAT,
                              "%s: truncated: header length %zu runs past the end of the file (%llu bytes)", nm(name),
                              hlen, (unsigned long long)total);
    return TOSAC_OK;
}

static tosac_status check_data_size(const npy_header *h, uint64_t have, const char *name, tosac_diag *d)
{
    if (have == h->nbytes) return TOSAC_OK;
    char sh[SHAPE_TEXT_MAX];
    shape_text(sh, sizeof sh, h->rank, h->shape);
    if (have < h->nbytes)
        return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: truncated: shape %s of '%s' needs %zu data bytes, file has %llu",
                              nm(name), sh, h->descr.norm, h->nbytes, (unsigned long long)have);
    return tosac_diag_add(d, TOSAC_ERR_FORMAT,
                          "%s: %llu bytes of trailing data after the array (shape %s of '%s' needs %zu)", nm(name),
                          (unsigned long long)(have - h->nbytes), sh, h->descr.norm, h->nbytes);
}

static void fill_out(tosac_npy *out, const npy_header *h, void *data)
{
    memset(out, 0, sizeof *out);
    memcpy(out->descr, h->descr.norm, sizeof out->descr);
    out->rank = h->rank;
    for (int i = 0; i < h->rank; i++) out->shape[i] = h->shape[i];
    out->count = h->count;
    out->elem_size = h->descr.size;
    out->data = data;
    out->nbytes = h->nbytes;
}

/* ------------------------------------------------------------------------------------------ */
/* reading                                                                                    */

tosac_status tosac_npy_read_mem(const void *buf, size_t len, const char *name, tosac_npy *out, tosac_diag *d)
{
    if (!out || (!buf && len))
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s: tosac_npy_read_mem: NULL argument", nm(name));
    static const uint8_t empty[1] = {0};
    const uint8_t *b = buf ? (const uint8_t *)buf : empty;
    size_t hoff = 0, hlen = 0;
    npy_header h;
    memset(&h, 0, sizeof h);
    tosac_status st = parse_preamble(b, len, name, &hoff, &hlen, d);
    if (!st) st = check_header_fits(hoff, hlen, len, name, d);
    if (!st) st = parse_dict((const char *)b + hoff, hlen, name, &h, d);
    if (!st) st = check_data_size(&h, len - hoff - hlen, name, d);
    if (st) return st;
    void *data = NULL;
    if (h.nbytes) {
        data = tosac_malloc(h.nbytes);
        if (!data)
            return tosac_diag_add(d, TOSAC_ERR_NOMEM, "%s: out of memory for %zu data bytes", nm(name), h.nbytes);
        memcpy(data, b + hoff + hlen, h.nbytes);
        if (h.descr.swap) byteswap_elems(data, h.nbytes, h.descr.size);
    }
    fill_out(out, &h, data);
    return TOSAC_OK;
}

/* Reads up to n bytes; returns the count (short only at EOF or on error). */
static size_t read_full(FILE *f, void *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        size_t r = fread((uint8_t *)p + got, 1, n - got, f);
        if (r == 0) break;
        got += r;
    }
    return got;
}

/* Non-seekable input (a pipe): slurp it, bounded only by what actually arrives. */
static tosac_status read_stream(FILE *f, const char *path, tosac_npy *out, tosac_diag *d)
{
    uint8_t *buf = NULL;
    size_t cap = 0, len = 0;
    for (;;) {
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : 65536;
            if (ncap < cap) {
                tosac_free(buf, cap);
                return tosac_diag_add(d, TOSAC_ERR_NOMEM, "%s: input too large", path);
            }
            uint8_t *nb = tosac_malloc(ncap);
            if (!nb) {
                tosac_free(buf, cap);
                return tosac_diag_add(d, TOSAC_ERR_NOMEM, "%s: out of memory reading the file", path);
            }
            if (len) memcpy(nb, buf, len);
            tosac_free(buf, cap);
            buf = nb;
            cap = ncap;
        }
        size_t r = fread(buf + len, 1, cap - len, f);
        if (r == 0) break;
        len += r;
    }
    tosac_status st;
    if (ferror(f))
        st = tosac_diag_add(d, TOSAC_ERR_IO, "%s: read error", path);
    else
        st = tosac_npy_read_mem(buf, len, path, out, d);
    tosac_free(buf, cap);
    return st;
}

tosac_status tosac_npy_read_file(const char *path, tosac_npy *out, tosac_diag *d)
{
    if (!path || !out) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_npy_read_file: NULL argument");
    FILE *f = fopen(path, "rb");
    if (!f) return tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size < 0) {
        tosac_status st = read_stream(f, path, out, d);
        fclose(f);
        return st;
    }
    const uint64_t total = (uint64_t)sb.st_size;
    uint8_t pre[12];
    size_t hoff = 0, hlen = 0;
    npy_header h;
    memset(&h, 0, sizeof h);
    uint8_t *hbuf = NULL, *data = NULL;
    size_t hend = 0;
    size_t got = read_full(f, pre, sizeof pre);
    tosac_status st = parse_preamble(pre, got, path, &hoff, &hlen, d);
    if (!st) st = check_header_fits(hoff, hlen, total, path, d);
    if (!st) {
        hend = hoff + hlen;
        hbuf = tosac_malloc(hend);
        if (!hbuf) st = tosac_diag_add(d, TOSAC_ERR_NOMEM, "%s: out of memory for the header", path);
    }
    if (!st && (fseek(f, 0, SEEK_SET) != 0 || read_full(f, hbuf, hend) != hend))
        st = tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot read the header", path);
    if (!st) st = parse_dict((const char *)hbuf + hoff, hlen, path, &h, d);
    if (!st) st = check_data_size(&h, total - hend, path, d);
    if (!st && h.nbytes) {
        data = tosac_malloc(h.nbytes);
        if (!data)
            st = tosac_diag_add(d, TOSAC_ERR_NOMEM, "%s: out of memory for %zu data bytes", path, h.nbytes);
        else if (read_full(f, data, h.nbytes) != h.nbytes)
            st = tosac_diag_add(d, TOSAC_ERR_IO, "%s: %s while reading the data", path,
                                ferror(f) ? "read error" : "file shrank");
    }
    if (!st && fgetc(f) != EOF) st = tosac_diag_add(d, TOSAC_ERR_IO, "%s: file grew while reading", path);
    fclose(f);
    tosac_free(hbuf, hend);
    if (st) {
        tosac_free(data, h.nbytes);
        return st;
    }
    if (h.descr.swap) byteswap_elems(data, h.nbytes, h.descr.size);
    fill_out(out, &h, data);
    return TOSAC_OK;
}

void tosac_npy_free(tosac_npy *n)
{
    if (!n) return;
    tosac_free(n->data, n->nbytes);
    memset(n, 0, sizeof *n);
}

/* ------------------------------------------------------------------------------------------ */
/* writing                                                                                    */

typedef struct npy_out {
    const void *hdr, *data;
    size_t hn, dn;
} npy_out;

static bool fill_npy(int fd, void *ctx)
{
    const npy_out *o = ctx;
    return tosac_write_all(fd, o->hdr, o->hn) && (o->dn == 0 || tosac_write_all(fd, o->data, o->dn));
}

tosac_status tosac_npy_write_file(const char *path, const char *descr, int rank, const int64_t *shape,
                                  const void *data, size_t nbytes, tosac_diag *d)
{
    if (!path || !descr || (rank > 0 && !shape) || (nbytes && !data))
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s: tosac_npy_write_file: NULL argument",
                              path ? path : "<npy>");
    npy_descr nd;
    size_t dl = strnlen(descr, 8);
    if (dl >= 8 || !descr_parse(descr, dl, &nd))
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s: cannot write unsupported descr '%.8s'", path, descr);
    if (rank < 0 || rank > TOSAC_NPY_MAX_RANK)
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s: rank %d is outside 0..%d", path, rank,
                              TOSAC_NPY_MAX_RANK);
    int64_t count = 0;
    size_t need = 0;
    char sh[SHAPE_TEXT_MAX];
    shape_text(sh, sizeof sh, rank, shape);
    if (!shape_count(rank, shape, &count) || !tosac_mul_size((size_t)count, nd.size, &need) ||
        (uint64_t)count > SIZE_MAX)
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s: shape %s is invalid (negative or too large)", path, sh);
    if (need != nbytes)
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s: shape %s of '%s' needs %zu data bytes, %zu given", path,
                              sh, descr, need, nbytes);

    /* 10-byte preamble + dict + space padding + '\n', a multiple of 64 bytes in all. */
    char hdr[SHAPE_TEXT_MAX + 128 + NPY_ALIGN];
    int w = snprintf(hdr + 10, sizeof hdr - 10, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, sh);
    if (w < 0 || (size_t)w + 10 + 1 + NPY_ALIGN > sizeof hdr)
        return tosac_diag_add(d, TOSAC_ERR_INTERNAL, "%s: header does not fit", path);
    size_t total = 10 + (size_t)w + 1;
    size_t pad = (NPY_ALIGN - total % NPY_ALIGN) % NPY_ALIGN;
    memset(hdr + 10 + w, ' ', pad);
    total += pad;
    hdr[total - 1] = '\n';
    memcpy(hdr, NPY_MAGIC, NPY_MAGIC_LEN);
    hdr[6] = 1;
    hdr[7] = 0;
    st_u16((uint8_t *)hdr + 8, (uint32_t)(total - 10));
    npy_out o = {hdr, data, total, nbytes};
    return tosac_outfile_write(path, fill_npy, &o, d);
}

/* ------------------------------------------------------------------------------------------ */
/* TOSA conversions                                                                           */

static int descr_is(const tosac_npy *n, const char *s) { return strcmp(n->descr, s) == 0; }

/* Element i of an |i1 |u1 <i2 <u2 <i4 array, widened to int32 (as uint32 bits). */
static uint32_t load_widened(const tosac_npy *n, const uint8_t *p, int64_t i)
{
    size_t k = (size_t)i;
    switch (n->descr[1]) {
    case 'i':
        if (n->elem_size == 1) return ((uint32_t)p[k] ^ 0x80u) - 0x80u;
        if (n->elem_size == 2) return (ld_u16(p + 2 * k) ^ 0x8000u) - 0x8000u;
        return ld_u32(p + 4 * k);
    default: /* 'u' */
        if (n->elem_size == 1) return p[k];
        return ld_u16(p + 2 * k);
    }
}

tosac_status tosac_npy_to_tosa(const tosac_npy *n, tosac_dtype t, const char *name, uint8_t **bytes,
                               size_t *nbytes, tosac_diag *d)
{
    if (!n || !bytes || !nbytes || (n->nbytes && !n->data))
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s: tosac_npy_to_tosa: NULL argument", nm(name));
    if (!tosac_dtype_valid((uint32_t)t))
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s: invalid TOSA dtype %d", nm(name), (int)t);
    size_t need_in = 0;
    if (n->count < 0 || !tosac_mul_size((size_t)n->count, n->elem_size, &need_in) || need_in != n->nbytes)
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s: inconsistent tosac_npy (count/nbytes)", nm(name));

    const char *accepted;
    int ok;
    switch (t) {
    case TOSAC_DTYPE_FP32: accepted = "<f4"; ok = descr_is(n, "<f4"); break;
    case TOSAC_DTYPE_FP16: accepted = "<f2, <f4"; ok = descr_is(n, "<f2") || descr_is(n, "<f4"); break;
    case TOSAC_DTYPE_BF16: accepted = "<V2, <f4"; ok = descr_is(n, "<V2") || descr_is(n, "<f4"); break;
    case TOSAC_DTYPE_FP8E4M3:
    case TOSAC_DTYPE_FP8E5M2: accepted = "<V1/|V1, |u1"; ok = descr_is(n, "|V1") || descr_is(n, "|u1"); break;
    case TOSAC_DTYPE_BOOL: accepted = "|b1, |u1"; ok = descr_is(n, "|b1") || descr_is(n, "|u1"); break;
    case TOSAC_DTYPE_INT4:
    case TOSAC_DTYPE_INT8:
    case TOSAC_DTYPE_INT16:
    case TOSAC_DTYPE_INT32:
        accepted = "|i1, |u1, <i2, <u2, <i4";
        ok = descr_is(n, "|i1") || descr_is(n, "|u1") || descr_is(n, "<i2") || descr_is(n, "<u2") ||
             descr_is(n, "<i4");
        break;
    case TOSAC_DTYPE_INT48:
    case TOSAC_DTYPE_SHAPE: accepted = "<i8"; ok = descr_is(n, "<i8"); break;
    default: accepted = ""; ok = 0; break;
    }
    if (!ok)
        return tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED, "%s: descr '%s' cannot be used for a %s tensor (accepted: %s)",
                              nm(name), n->descr, tosac_dtype_name(t), accepted);

    size_t outn = 0;
    if (!tosac_dtype_storage_bytes(t, n->count, &outn))
        return tosac_diag_add(d, TOSAC_ERR_NOMEM, "%s: %lld elements of %s do not fit in memory", nm(name),
                              (long long)n->count, tosac_dtype_name(t));
    uint8_t *o = NULL;
    if (outn) {
        o = tosac_malloc(outn);
        if (!o) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "%s: out of memory for %zu bytes", nm(name), outn);
    }
    const uint8_t *p = n->data;
    const size_t cnt = (size_t)n->count;
    switch (t) {
    case TOSAC_DTYPE_FP16:
    case TOSAC_DTYPE_BF16:
        if (n->elem_size == 4) {
            for (size_t i = 0; i < cnt; i++) {
                float f = tosac_fp32_from_bits(ld_u32(p + 4 * i));
                st_u16(o + 2 * i, t == TOSAC_DTYPE_FP16 ? tosac_fp32_to_fp16(f) : tosac_fp32_to_bf16(f));
            }
        } else if (outn) {
            memcpy(o, p, outn);
        }
        break;
    case TOSAC_DTYPE_BOOL:
        for (size_t i = 0; i < cnt; i++) o[i] = p[i] ? 1 : 0;
        break;
    case TOSAC_DTYPE_INT4:
        if (outn) memset(o, 0, outn);
        for (size_t i = 0; i < cnt; i++) {
            uint8_t nib = (uint8_t)(load_widened(n, p, (int64_t)i) & 0xFu);
            o[i / 2] |= (uint8_t)(i % 2 ? nib << 4 : nib);
        }
        break;
    case TOSAC_DTYPE_INT8:
        for (size_t i = 0; i < cnt; i++) o[i] = (uint8_t)load_widened(n, p, (int64_t)i);
        break;
    case TOSAC_DTYPE_INT16:
        for (size_t i = 0; i < cnt; i++) st_u16(o + 2 * i, load_widened(n, p, (int64_t)i));
        break;
    case TOSAC_DTYPE_INT32:
        for (size_t i = 0; i < cnt; i++) st_u32(o + 4 * i, load_widened(n, p, (int64_t)i));
        break;
    case TOSAC_DTYPE_INT48:
        for (size_t i = 0; i < cnt; i++) memcpy(o + 6 * i, p + 8 * i, 6);
        break;
    default: /* FP32, FP8, SHAPE: the same bytes */
        if (outn) memcpy(o, p, outn);
        break;
    }
    *bytes = o;
    *nbytes = outn;
    return TOSAC_OK;
}

tosac_status tosac_npy_write_tosa(const char *path, tosac_dtype t, int rank, const int64_t *shape,
                                  const uint8_t *bytes, size_t nbytes, tosac_diag *d)
{
    if (!path || (rank > 0 && !shape) || (nbytes && !bytes))
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s: tosac_npy_write_tosa: NULL argument",
                              path ? path : "<npy>");
    if (!tosac_dtype_valid((uint32_t)t))
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s: invalid TOSA dtype %d", path, (int)t);
    if (rank < 0 || rank > TOSAC_NPY_MAX_RANK)
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s: rank %d is outside 0..%d", path, rank,
                              TOSAC_NPY_MAX_RANK);
    int64_t count = 0;
    size_t need = 0;
    char sh[SHAPE_TEXT_MAX];
    shape_text(sh, sizeof sh, rank, shape);
    if (!shape_count(rank, shape, &count) || !tosac_dtype_storage_bytes(t, count, &need))
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s: shape %s is invalid (negative or too large)", path, sh);
    /* Accept the TosaTensor.data zero padding up to a multiple of 8 bytes. */
    if (nbytes < need || nbytes - need > (8 - need % 8) % 8)
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s: %s tensor of shape %s needs %zu data bytes, %zu given",
                              path, tosac_dtype_name(t), sh, need, nbytes);

    const char *descr;
    size_t esize;
    switch (t) {
    case TOSAC_DTYPE_BOOL: descr = "|b1"; esize = 1; break;
    case TOSAC_DTYPE_INT4:
    case TOSAC_DTYPE_INT8: descr = "|i1"; esize = 1; break;
    case TOSAC_DTYPE_INT16: descr = "<i2"; esize = 2; break;
    case TOSAC_DTYPE_INT32: descr = "<i4"; esize = 4; break;
    case TOSAC_DTYPE_INT48:
    case TOSAC_DTYPE_SHAPE: descr = "<i8"; esize = 8; break;
    case TOSAC_DTYPE_FP32: descr = "<f4"; esize = 4; break;
    case TOSAC_DTYPE_FP16: descr = "<f2"; esize = 2; break;
    case TOSAC_DTYPE_BF16: descr = "<V2"; esize = 2; break;
    case TOSAC_DTYPE_FP8E4M3: descr = "<V1"; esize = 1; break;
    default: /* FP8E5M2 */ descr = "|u1"; esize = 1; break;
    }
    if (t != TOSAC_DTYPE_INT4 && t != TOSAC_DTYPE_INT48 && t != TOSAC_DTYPE_BOOL)
        return tosac_npy_write_file(path, descr, rank, shape, bytes, need, d);

    size_t outn = 0;
    if (!tosac_mul_size((size_t)count, esize, &outn))
        return tosac_diag_add(d, TOSAC_ERR_NOMEM, "%s: shape %s is too large", path, sh);
    uint8_t *o = NULL;
    if (outn) {
        o = tosac_malloc(outn);
        if (!o) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "%s: out of memory for %zu bytes", path, outn);
    }
    const size_t cnt = (size_t)count;
    if (t == TOSAC_DTYPE_BOOL) {
        for (size_t i = 0; i < cnt; i++) o[i] = bytes[i] ? 1 : 0;
    } else if (t == TOSAC_DTYPE_INT4) {
        for (size_t i = 0; i < cnt; i++) {
            uint8_t nib = (uint8_t)((i % 2 ? bytes[i / 2] >> 4 : bytes[i / 2]) & 0xFu);
            o[i] = (uint8_t)(nib & 0x8u ? nib | 0xF0u : nib); /* sign-extend the nibble */
        }
    } else { /* INT48: sign-extend bit 47 */
        for (size_t i = 0; i < cnt; i++) {
            memcpy(o + 8 * i, bytes + 6 * i, 6);
            uint8_t ext = bytes[6 * i + 5] & 0x80u ? 0xFF : 0x00;
            o[8 * i + 6] = ext;
            o[8 * i + 7] = ext;
        }
    }
    tosac_status st = tosac_npy_write_file(path, descr, rank, shape, o, outn, d);
    tosac_free(o, outn);
    return st;
}
