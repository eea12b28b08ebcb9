/*
 * The float <-> integer mapping of a quantized program's inputs and outputs, kept next to the model
 * as MODEL.tosa.quant.json (format in docs/QUANT.md) so users and `tosac run` find it:
 *   {"format": "tosac-quant-io", "version": 1,
 *    "inputs":  [{"name": "x", "dtype": "int8", "scale": 0.0123, "zero_point": -3, "shape": [1,3,8,8]}],
 *    (dtype "uint8": the tensor holds uint8 codes; "float32": the program quantizes itself, the
 *    entry records the int8 codes it uses inside)
 *    "outputs": [...]}
 * Scales are written with 17 significant digits so that they read back to the same double.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/arena.h"
#include "core/diag.h"
#include "core/fp.h"
#include "core/outfile.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "quant/quant_internal.h"
#include "tosac/quant.h"

void tosac_quant_iomap_free(tosac_quant_iomap *m)
{
    if (!m) return;
    tosac_quant_io *lists[3] = {m->inputs, m->outputs, m->tensors};
    uint32_t counts[3] = {m->n_inputs, m->n_outputs, m->n_tensors};
    for (int l = 0; l < 3; l++) {
        for (uint32_t k = 0; lists[l] && k < counts[l]; k++) free((char *)lists[l][k].name);
        free(lists[l]);
    }
    free(m);
}

static void write_list(tosac_strbuf *sb, const char *key, const tosac_quant_io *io, uint32_t n)
{
    tosac_strbuf_appendf(sb, "  \"%s\": [", key);
    for (uint32_t k = 0; k < n; k++) {
        tosac_strbuf_append(sb, k ? ",\n    {\"name\": " : "\n    {\"name\": ");
        tosac_strbuf_append_json_str(sb, io[k].name);
        tosac_strbuf_appendf(sb, ", \"dtype\": \"%s\", \"scale\": %.17g, \"zero_point\": %d, \"shape\": [",
                             tosac_quant_io_type_name(io[k].type), io[k].q.scale, (int)io[k].q.zero_point);
        for (int32_t r = 0; r < io[k].rank; r++) tosac_strbuf_appendf(sb, "%s%lld", r ? ", " : "", (long long)io[k].shape[r]);
        tosac_strbuf_append(sb, "]}");
    }
    tosac_strbuf_append(sb, n ? "\n  ]" : "]");
}

tosac_status tosac_quant_iomap_write(const tosac_quant_iomap *m, const char *path, tosac_diag *d)
{
    tosac_strbuf sb;
    tosac_strbuf_init(&sb);
    tosac_strbuf_append(&sb, "{\n  \"format\": \"tosac-quant-io\",\n  \"version\": 1,\n");
    if (m->program_bytes)
        tosac_strbuf_appendf(&sb, "  \"program\": {\"bytes\": %llu, \"fnv1a64\": \"%016llx\"},\n",
                             (unsigned long long)m->program_bytes, (unsigned long long)m->program_fnv1a64);
    write_list(&sb, "inputs", m->inputs, m->n_inputs);
    tosac_strbuf_append(&sb, ",\n");
    write_list(&sb, "outputs", m->outputs, m->n_outputs);
    tosac_strbuf_append(&sb, "\n}\n");
    return quant_write_text(&sb, path, "the quantization sidecar", d);
}

tosac_status quant_write_text(tosac_strbuf *sb, const char *path, const char *what, tosac_diag *d)
{
    char *text = tosac_strbuf_take(sb);
    if (!text) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    size_t len = strlen(text);
    tosac_status s = tosac_outfile_write_bytes(path, text, len, d);
    tosac_free(text, len + 1);
    if (s != TOSAC_OK) tosac_diag_add(d, s, "%s: %s not written", path, what);
    return s;
}

static tosac_status read_list(const tosac_json *root, const char *key, tosac_quant_io **out, uint32_t *n,
                              const char *path, tosac_diag *d)
{
    const tosac_json *a = tosac_json_get(root, key);
    if (!a || a->kind != TOSAC_JSON_ARRAY) return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: no \"%s\" list", path, key);
    *out = calloc(a->n ? a->n : 1, sizeof **out);
    if (!*out) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    *n = a->n;
    for (uint32_t k = 0; k < a->n; k++) {
        const tosac_json *e = a->items[k], *name = tosac_json_get(e, "name"), *dt = tosac_json_get(e, "dtype"),
                         *sc = tosac_json_get(e, "scale"), *zp = tosac_json_get(e, "zero_point"),
                         *sh = tosac_json_get(e, "shape");
        tosac_quant_io_type type = TOSAC_QUANT_IO_INT8;
        bool known = dt && dt->kind == TOSAC_JSON_STRING;
        if (known) {
            while (strcmp(dt->str, tosac_quant_io_type_name(type)) && type < TOSAC_QUANT_IO_INT32) type++;
            known = !strcmp(dt->str, tosac_quant_io_type_name(type));
        }
        /* the zero point is a code of the boundary type (FP32 boundaries: of the int8 codes inside;
           int16 is symmetric) */
        bool sym = type == TOSAC_QUANT_IO_INT16 || type == TOSAC_QUANT_IO_INT32;
        double zlo = type == TOSAC_QUANT_IO_UINT8 || sym ? 0 : -128, zhi = type == TOSAC_QUANT_IO_UINT8 ? 255 : sym ? 0 : 127;
        if (!name || name->kind != TOSAC_JSON_STRING || !known || !sc || sc->kind != TOSAC_JSON_NUMBER ||
            !(sc->num > 0) || !zp || zp->kind != TOSAC_JSON_NUMBER || zp->num < zlo || zp->num > zhi ||
            zp->num != (double)(int32_t)zp->num)
            return tosac_diag_add(d, TOSAC_ERR_FORMAT,
                                  "%s: %s[%u] needs name, dtype \"int8\", \"uint8\", \"float32\", \"int16\" or \"int32\", "
                                  "scale > 0 and a zero_point in that type's range (int16, int32: 0)",
                                  path, key, k);
        (*out)[k].type = type;
        size_t len = strlen(name->str) + 1;
        char *copy = malloc(len);
        if (!copy) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
        memcpy(copy, name->str, len);
        (*out)[k].name = copy;
        (*out)[k].q.scale = sc->num;
        (*out)[k].q.zero_point = (int32_t)zp->num;
        if (sh && sh->kind == TOSAC_JSON_ARRAY && sh->n <= 8) {
            (*out)[k].rank = (int32_t)sh->n;
            for (uint32_t r = 0; r < sh->n; r++) (*out)[k].shape[r] = sh->items[r]->kind == TOSAC_JSON_NUMBER ? (int64_t)sh->items[r]->num : 0;
        }
    }
    return TOSAC_OK;
}

/* "program": {"bytes": N, "fnv1a64": "16 hex digits"} (optional). */
static tosac_status read_program(const tosac_json *root, tosac_quant_iomap *m, const char *path, tosac_diag *d)
{
    const tosac_json *p = tosac_json_get(root, "program");
    if (!p) return TOSAC_OK;
    const tosac_json *n = tosac_json_get(p, "bytes"), *h = tosac_json_get(p, "fnv1a64");
    char *end = NULL;
    if (n && n->kind == TOSAC_JSON_NUMBER && n->num >= 1 && n->num <= 9007199254740992.0 && n->num == (double)(uint64_t)n->num &&
        h && h->kind == TOSAC_JSON_STRING && strlen(h->str) == 16 && strspn(h->str, "0123456789abcdefABCDEF") == 16) {
        m->program_fnv1a64 = strtoull(h->str, &end, 16);
        m->program_bytes = (uint64_t)n->num;
    }
    if (!end || *end)
        return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: \"program\" needs \"bytes\" (a positive count) and \"fnv1a64\" (16 hex digits)", path);
    return TOSAC_OK;
}

tosac_status tosac_quant_iomap_read(const char *path, tosac_quant_iomap **out, tosac_diag *d)
{
    FILE *f = fopen(path, "rb");
    if (!f) return tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot open", path);
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len + 4096 > cap) {
            if (cap > (1u << 24)) break; /* a sidecar is small; refuse absurd files */
            char *t = realloc(text, cap = cap * 2 + 8192);
            if (!t) {
                free(text);
                fclose(f);
                return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
            }
            text = t;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    fclose(f);
    tosac_arena arena;
    tosac_arena_init(&arena);
    tosac_json *root = NULL;
    tosac_status s = tosac_json_parse(text ? text : "", len, path, &arena, &root, d);
    tosac_quant_iomap *m = NULL;
    if (s == TOSAC_OK) {
        const tosac_json *fmt = tosac_json_get(root, "format");
        if (!fmt || fmt->kind != TOSAC_JSON_STRING || strcmp(fmt->str, "tosac-quant-io"))
            s = tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: not a tosac quantization sidecar (\"format\")", path);
    }
    if (s == TOSAC_OK && !(m = calloc(1, sizeof *m))) s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    if (s == TOSAC_OK) s = read_program(root, m, path, d);
    if (s == TOSAC_OK) s = read_list(root, "inputs", &m->inputs, &m->n_inputs, path, d);
    if (s == TOSAC_OK) s = read_list(root, "outputs", &m->outputs, &m->n_outputs, path, d);
    tosac_arena_deinit(&arena);
    free(text);
    if (s != TOSAC_OK) {
        tosac_quant_iomap_free(m);
        return s;
    }
    *out = m;
    return TOSAC_OK;
}

bool tosac_quant_io_holds_codes(const tosac_quant_io *q, tosac_dtype t)
{
    return q && q->type != TOSAC_QUANT_IO_FLOAT32 &&
           t == (q->type == TOSAC_QUANT_IO_INT16 ? TOSAC_DTYPE_INT16 : TOSAC_DTYPE_INT8);
}

/* "d0,d1,...": a shape for messages. */
static void shape_text(char *buf, size_t size, int rank, const int64_t *shape)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int k = 0; k < rank && at < size - 24; k++)
        at += (size_t)snprintf(buf + at, size - at, "%s%lld", k ? "," : "", (long long)shape[k]);
}

/* Element k of a numeric array: an integer (*iv; *big for a uint64 beyond INT64_MAX) or, for
   float data, *fv (*is_float). False for types without a numeric value (void, bfloat16 bits). */
static bool npy_value(const tosac_npy *a, size_t k, int64_t *iv, double *fv, bool *is_float, bool *big)
{
    const uint8_t *p = (const uint8_t *)a->data + k * a->elem_size;
    uint64_t u = 0;
    for (size_t b = 0; b < a->elem_size; b++) u |= (uint64_t)p[b] << (8 * b);
    unsigned bits = (unsigned)(8 * a->elem_size);
    *is_float = *big = false;
    switch (a->descr[1]) {
    case 'b': *iv = u != 0; return true;
    case 'u': *big = u > INT64_MAX; *iv = (int64_t)(u & INT64_MAX); return true;
    case 'i': *iv = bits < 64 && (u >> (bits - 1)) ? (int64_t)(u - (1ull << bits)) : (int64_t)u; return true;
    case 'f':
        *is_float = true;
        if (bits == 16) *fv = tosac_fp16_to_fp32((uint16_t)u);
        else if (bits == 32) *fv = tosac_fp32_from_bits((uint32_t)u);
        else memcpy(fv, &u, sizeof *fv);
        return true;
    default: return false;
    }
}

/* Converts data of another element type than the input's (int64 token ids for an INT32 input,
   float64 for FP32, ints for floats, ...) into an array tosac_npy_to_tosa takes as it is (<i4, <f4
   or |u1 into *out), checking that every value fits: one that does not is an error naming the data,
   the element and the value. *out stays empty when the data needs no conversion. */
static tosac_status convert_elems(const tosac_npy *a, const tosac_tensor_info *info, const char *label, const char *what,
                                  tosac_npy *out, tosac_diag *d)
{
    memset(out, 0, sizeof *out);
    tosac_dtype t = info->dtype;
    const char *dc = a->descr;
    int ibits = t == TOSAC_DTYPE_INT4 ? 4 : t == TOSAC_DTYPE_INT8 ? 8 : t == TOSAC_DTYPE_INT16 ? 16
              : t == TOSAC_DTYPE_INT32 ? 32 : 0;
    bool fp = t == TOSAC_DTYPE_FP32 || t == TOSAC_DTYPE_FP16 || t == TOSAC_DTYPE_BF16;
    /* what tosac_npy_to_tosa takes without loss */
    if ((fp && !strcmp(dc, "<f4") && t != TOSAC_DTYPE_FP16) || (t == TOSAC_DTYPE_FP16 && !strcmp(dc, "<f2")) ||
        (t == TOSAC_DTYPE_BF16 && !strcmp(dc, "<V2")) ||
        (t == TOSAC_DTYPE_BOOL && (!strcmp(dc, "|b1") || !strcmp(dc, "|u1"))) || (!fp && !ibits && t != TOSAC_DTYPE_BOOL) ||
        !strchr("biuf", dc[1]))
        return TOSAC_OK;
    /* integers: the type's range; unsigned data may also hold the unsigned codes of its width (a
       TOSA INT8 tensor holds uint8 codes for RESCALE's unsigned flags) */
    double lo = ibits ? -ldexp(1, ibits - 1) : t == TOSAC_DTYPE_BOOL ? 0 : -FLT_MAX,
           hi = ibits ? (dc[1] == 'u' ? ldexp(1, ibits) : ldexp(1, ibits - 1)) - 1 : t == TOSAC_DTYPE_BOOL ? 1 : FLT_MAX;
    if (t == TOSAC_DTYPE_FP16) lo = -(hi = 65504.0);
    const char *odescr = ibits ? "<i4" : t == TOSAC_DTYPE_BOOL ? "|u1" : "<f4";
    size_t osize = t == TOSAC_DTYPE_BOOL ? 1 : 4, n = (size_t)a->count;
    uint8_t *o = tosac_malloc(n ? n * osize : 1);
    if (!o) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < n; k++) {
        int64_t iv = 0;
        double fv = 0;
        bool is_float, big;
        npy_value(a, k, &iv, &fv, &is_float, &big);
        double v = is_float ? fv : (double)iv;
        /* NaN and infinities stay what they are in float types; elsewhere, and finite values beyond
           a float type's largest, are an error, as are fractions for integer types */
        bool bad = big || (is_float && isnan(fv) && !fp) || (!(is_float && isinf(fv) && fp) && (v < lo || v > hi)) ||
                   (is_float && !fp && fv != floor(fv));
        if (bad) {
            char val[64], where[200];
            if (is_float) snprintf(val, sizeof val, "%.10g", fv);
            else if (big) snprintf(val, sizeof val, "%" PRIu64, (uint64_t)iv + (uint64_t)INT64_MAX + 1u);
            else snprintf(val, sizeof val, "%" PRId64, iv);
            size_t idx[TOSAC_NPY_MAX_RANK], rest = k, at = 0;
            for (int r = a->rank - 1; r >= 0; r--) {
                idx[r] = rest % (size_t)a->shape[r];
                rest /= (size_t)a->shape[r];
            }
            where[0] = '\0';
            for (int r = 0; r < a->rank && at + 24 < sizeof where; r++)
                at += (size_t)snprintf(where + at, sizeof where - at, "%s%zu", r ? "," : "", idx[r]);
            tosac_free(o, n ? n * osize : 1);
            return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                                  "%s: element %zu (index [%s]) is %s, which the %s's type %s cannot hold (%s data "
                                  "converts to %s only %s)",
                                  label, k, where, val, what, tosac_dtype_name(t), dc,
                                  tosac_dtype_name(t),
                                  ibits ? "for integral values in its range" : t == TOSAC_DTYPE_BOOL ? "for 0 and 1"
                                                                                                    : "within its range");
        }
        if (ibits) {
            uint32_t u = (uint32_t)(int64_t)v;
            memcpy(o + 4 * k, &u, 4);
        } else if (t == TOSAC_DTYPE_BOOL) {
            o[k] = v != 0;
        } else {
            float f = (float)v;
            memcpy(o + 4 * k, &f, 4);
        }
    }
    memcpy(out->descr, odescr, 4);
    out->rank = a->rank;
    memcpy(out->shape, a->shape, sizeof out->shape);
    out->count = a->count;
    out->elem_size = osize;
    out->data = o;
    out->nbytes = n * osize;
    return TOSAC_OK;
}

tosac_status tosac_quant_input_bytes(const tosac_npy *npy, const tosac_tensor_info *info, const tosac_quant_io *q,
                                     const char *label, const char *what, uint8_t **bytes, size_t *n, size_t *nans,
                                     tosac_diag *d)
{
    /* shapes must agree up to size-1 dimensions ([] for [1], [3] for [1,3]); equal element counts
       alone would let NCHW data into an NHWC input unnoticed */
    bool ok = npy->count == info->nelem;
    int ia = 0, ib = 0;
    while (ok) {
        while (ia < npy->rank && npy->shape[ia] == 1) ia++;
        while (ib < info->rank && info->shape[ib] == 1) ib++;
        if (ia == npy->rank || ib == info->rank) break;
        ok = npy->shape[ia++] == info->shape[ib++];
    }
    if (!ok) {
        char want[160], got[160];
        shape_text(want, sizeof want, info->rank, info->shape);
        shape_text(got, sizeof got, npy->rank, npy->shape);
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s: has shape [%s] but the %s has shape [%s]", label, got, what,
                              want);
    }
    bool codes = tosac_quant_io_holds_codes(q, info->dtype);
    if (codes && (!strcmp(npy->descr, "<f4") || !strcmp(npy->descr, "<f8"))) {
        *n = (size_t)npy->count * (q->type == TOSAC_QUANT_IO_INT16 ? 2 : 1);
        if (!(*bytes = tosac_malloc(*n ? *n : 1))) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
        *nans += tosac_quant_io_quantize(q->type, q->q, npy->data, !strcmp(npy->descr, "<f8"), (size_t)npy->count,
                                         *bytes);
        return TOSAC_OK;
    }
    if (codes && info->dtype == TOSAC_DTYPE_INT8 && (!strcmp(npy->descr, "|i1") || !strcmp(npy->descr, "|u1"))) {
        /* codes are taken as they are, but their signedness must be the sidecar's: uint8 data in
           an int8 input (or the reverse) would be read 128 off */
        if ((q->type == TOSAC_QUANT_IO_UINT8) != !strcmp(npy->descr, "|u1"))
            return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                                  "%s: the %s takes %s codes (see the program's .quant.json) or float data, but the "
                                  "data holds %s",
                                  label, what, tosac_quant_io_type_name(q->type),
                                  npy->descr[1] == 'u' ? "uint8" : "int8");
        *n = (size_t)npy->count;
        if (!(*bytes = tosac_malloc(*n ? *n : 1))) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
        memcpy(*bytes, npy->data, *n);
        return TOSAC_OK;
    }
    if (info->f64 && !strcmp(npy->descr, "<f8")) { /* precise mode: the runtime takes fp64 as it is */
        *n = npy->nbytes;
        if (!(*bytes = tosac_malloc(*n ? *n : 1))) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
        if (*n) memcpy(*bytes, npy->data, *n);
        return TOSAC_OK;
    }
    tosac_npy conv;
    tosac_status s = convert_elems(npy, info, label, what, &conv, d);
    if (s == TOSAC_OK) s = tosac_npy_to_tosa(conv.data ? &conv : npy, info->dtype, label, bytes, n, d);
    if (conv.data) tosac_free(conv.data, conv.nbytes ? conv.nbytes : 1);
    return s;
}
