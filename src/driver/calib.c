/*
 * Calibration data for the quantizer: in-memory arrays, .npy files and directories of .npy files,
 * each attributed to one graph input, gathered into the sample layout of tosac_quant_opts.
 * Directories are read in name order so that the samples, and the program, do not depend on the
 * file system. A value that is not finite would make every range it touches meaningless, so it is
 * an error naming its source.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "core/diag.h"
#include "driver/driver_internal.h"
#include "tosac/npy.h"

/* The samples of n that input i takes (it stops at the cap). */
static size_t samples_taken(const drv_calib_input *in, size_t n, size_t cap)
{
    return in->n >= cap ? 0 : cap - in->n < n ? cap - in->n : n;
}

/* A NaN or infinity would make every range built from it meaningless: an error naming `what`. */
static tosac_status check_finite(const drv_calib *c, uint32_t i, const tosac_block *b, const float *x, size_t n,
                                 const char *what, tosac_diag *d)
{
    size_t nelem = (size_t)c->in[i].nelem, bad = 0, first = 0;
    for (size_t k = 0; k < n * nelem; k++)
        if (!isfinite(x[k]) && !bad++) first = k;
    if (bad)
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                              "%s: %zu of its %zu values for input '%s' are NaN or infinite (the first: %s at sample "
                              "%zu, element %zu); calibration data must be finite",
                              what, bad, n * nelem, b->inputs[i]->name,
                              isnan(x[first]) ? "NaN" : x[first] > 0 ? "+Inf" : "-Inf", first / nelem, first % nelem);
    return TOSAC_OK;
}

/* Appends up to `n` samples of input i (stopping at the cap); `what` names the source. */
static tosac_status append(drv_calib *c, uint32_t i, const tosac_block *b, const float *x, size_t n, size_t cap,
                           const char *what, tosac_diag *d)
{
    drv_calib_input *in = &c->in[i];
    size_t take = samples_taken(in, n, cap), nelem = (size_t)in->nelem;
    tosac_status s = check_finite(c, i, b, x, n, what, d);
    if (s != TOSAC_OK || !take) return s;
    if (!tosac_grow((void **)&in->buf, &in->cap, in->n + take, nelem * sizeof(float)))
        return tosac_diag_add(d, TOSAC_ERR_NOMEM, "%s: out of memory holding the calibration data of input '%s'", what,
                              b->inputs[i]->name);
    memcpy(in->buf + in->n * nelem, x, take * nelem * sizeof(float));
    in->n += take;
    return TOSAC_OK;
}

/* The signed integer .npy data of an INT32 input (token ids) as floats, which hold every id below
   2^24 exactly: NULL when `npy` is not such data. */
static float *int_as_float(const tosac_npy *npy, const tosac_block *b, uint32_t i)
{
    const char *dt = npy->descr;
    if (b->inputs[i]->dtype != TOSAC_DTYPE_INT32 ||
        (strcmp(dt, "<i8") && strcmp(dt, "<i4") && strcmp(dt, "<i2") && strcmp(dt, "|i1")))
        return NULL;
    float *x = tosac_malloc((size_t)npy->count * sizeof *x);
    for (int64_t k = 0; x && k < npy->count; k++) {
        int64_t v = 0;
        const uint8_t *p = (const uint8_t *)npy->data + (size_t)k * npy->elem_size;
        for (size_t j = 0; j < npy->elem_size; j++) v |= (int64_t)p[j] << (8 * j);
        if (npy->elem_size < 8 && (v >> (8 * npy->elem_size - 1)) & 1) v -= (int64_t)1 << (8 * npy->elem_size);
        x[k] = (float)v;
    }
    return x;
}

/* A .npy file of input i: float32 (integer types for an INT32 input), one sample or a batch. */
static tosac_status load_file(drv_calib *c, uint32_t i, const tosac_block *b, const char *path, size_t cap,
                              tosac_diag *d)
{
    tosac_npy npy;
    const tosac_driver_opts *o = c->opts;
    tosac_status s = o && o->on_input ? o->on_input(o->on_input_user, path, d) : TOSAC_OK;
    if (s == TOSAC_OK) s = tosac_npy_read_file(path, &npy, d);
    if (s != TOSAC_OK) return s;
    int64_t nelem = c->in[i].nelem;
    float *ix = npy.count > 0 && npy.count % nelem == 0 ? int_as_float(&npy, b, i) : NULL;
    if (ix) {
        s = append(c, i, b, ix, (size_t)(npy.count / nelem), cap, path, d);
        tosac_free(ix, (size_t)npy.count * sizeof *ix);
    } else if (strcmp(npy.descr, "<f4") || npy.count <= 0 || npy.count % nelem) {
        s = tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                           "%s: calibration data for input '%s' must be float32 (an INT32 input: signed integers) with a positive multiple of the "
                           "input's %" PRId64 " elements (one sample, or a batch), but holds %s with %" PRId64
                           " elements",
                           path, b->inputs[i]->name, nelem, npy.descr, npy.count);
    } else if (!c->in[i].buf && ((uintptr_t)npy.data & (_Alignof(float) - 1)) == 0) {
        /* the input's first source: its samples stay in the buffer they were read into (a batch
           of a large input is megabytes: a copy would fault in as many fresh pages) */
        size_t n = (size_t)(npy.count / nelem);
        s = check_finite(c, i, b, npy.data, n, path, d);
        if (s == TOSAC_OK) {
            c->in[i].buf = npy.data;
            c->in[i].n = samples_taken(&c->in[i], n, cap);
            c->in[i].cap = n;
            npy.data = NULL, npy.nbytes = 0;
        }
    } else {
        size_t n = (size_t)(npy.count / nelem);
        float *x = tosac_malloc(npy.nbytes);
        if (!x) s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "%s: out of memory", path);
        else {
            memcpy(x, npy.data, npy.nbytes); /* not aligned for float (a caller's allocator) */
            s = append(c, i, b, x, n, cap, path, d);
            tosac_free(x, npy.nbytes);
        }
    }
    tosac_npy_free(&npy);
    return s;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Every .npy file in `dir`, in name order, until the cap. */
static tosac_status load_dir(drv_calib *c, uint32_t i, const tosac_block *b, const char *dir, size_t cap,
                             tosac_diag *d)
{
    DIR *dp = opendir(dir);
    if (!dp)
        return tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot read the calibration directory of input '%s': %s", dir,
                              b->inputs[i]->name, strerror(errno));
    char **names = NULL;
    size_t n = 0, names_cap = 0;
    tosac_status s = TOSAC_OK;
    struct dirent *e;
    while (s == TOSAC_OK && (e = readdir(dp)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".npy")) continue;
        size_t plen = strlen(dir) + len + 2;
        char *p = tosac_grow((void **)&names, &names_cap, n + 1, sizeof *names) ? tosac_malloc(plen) : NULL;
        if (!p) s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "%s: out of memory listing the directory", dir);
        else {
            snprintf(p, plen, "%s/%s", dir, e->d_name);
            names[n++] = p;
        }
    }
    closedir(dp);
    if (s == TOSAC_OK && !n)
        s = tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s: no .npy files for the calibration of input '%s'", dir,
                           b->inputs[i]->name);
    if (s == TOSAC_OK) qsort(names, n, sizeof *names, cmp_str);
    for (size_t k = 0; k < n; k++) {
        if (s == TOSAC_OK && c->in[i].n < cap) s = load_file(c, i, b, names[k], cap, d);
        tosac_free(names[k], strlen(names[k]) + 1);
    }
    tosac_free(names, names_cap * sizeof *names);
    return s;
}

/* The input a source or array names: `name` (len bytes; NULL for none) or the only input. */
static tosac_status find_input(const tosac_block *b, const char *name, size_t len, const char *what, uint32_t *out,
                               tosac_diag *d)
{
    for (uint32_t i = 0; name && i < b->n_inputs; i++)
        if (strlen(b->inputs[i]->name) == len && !strncmp(b->inputs[i]->name, name, len)) {
            *out = i;
            return TOSAC_OK;
        }
    if (!name && b->n_inputs == 1) {
        *out = 0;
        return TOSAC_OK;
    }
    char list[512];
    size_t at = 0;
    list[0] = '\0';
    for (uint32_t i = 0; i < b->n_inputs && at + 4 < sizeof list; i++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s'%s'", i ? ", " : "", b->inputs[i]->name);
    if (name)
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s: the model has no input '%.*s' (inputs: %s)", what, (int)len,
                              name, list);
    return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                          "%s: this model has %" PRIu32 " inputs (%s): name the input each calibration source is for: "
                          "give NAME=DIR|FILE.npy for each of them (or --calibrate random)",
                          what, b->n_inputs, list);
}

tosac_status drv_calib_load(const tosac_block *b, const tosac_driver_opts *o, drv_calib *c, tosac_diag *d)
{
    memset(c, 0, sizeof *c);
    c->opts = o;
    if (!o->n_calib_arrays && !o->n_calib_sources) return TOSAC_OK;
    size_t cap = o->calib_samples ? o->calib_samples : SIZE_MAX;
    c->n_inputs = b->n_inputs;
    c->in = tosac_calloc(b->n_inputs ? b->n_inputs : 1, sizeof *c->in);
    if (!c->in) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    for (uint32_t i = 0; i < b->n_inputs; i++) {
        c->in[i].nelem = tosac_value_nelem(b->inputs[i]);
        if (c->in[i].nelem <= 0)
            return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "input '%s' has no elements to calibrate",
                                  b->inputs[i]->name);
    }
    tosac_status s = TOSAC_OK;
    for (size_t k = 0; k < o->n_calib_arrays && s == TOSAC_OK; k++) {
        const tosac_driver_calib_array *a = &o->calib_arrays[k];
        char what[48];
        snprintf(what, sizeof what, "calibration array %zu", k);
        uint32_t i = 0;
        s = find_input(b, a->input, a->input ? strlen(a->input) : 0, what, &i, d);
        if (s != TOSAC_OK) break;
        if (!a->data || !a->count || a->count % (size_t)c->in[i].nelem)
            s = tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                               "%s: input '%s' takes a positive multiple of %" PRId64 " floats per array, got %zu", what,
                               b->inputs[i]->name, c->in[i].nelem, a->data ? a->count : 0);
        else
            s = append(c, i, b, a->data, a->count / (size_t)c->in[i].nelem, cap, what, d);
    }
    for (size_t k = 0; k < o->n_calib_sources && s == TOSAC_OK; k++) {
        const char *src = o->calib_sources[k], *eq = strchr(src, '=');
        uint32_t i = 0;
        /* NAME=SOURCE when NAME is an input; a one-input model also takes plain paths, which may
           hold a '=' */
        bool named = false;
        for (uint32_t j = 0; eq && j < b->n_inputs && !named; j++)
            if (strlen(b->inputs[j]->name) == (size_t)(eq - src) && !strncmp(b->inputs[j]->name, src, (size_t)(eq - src)))
                i = j, named = true;
        if (named) src = eq + 1;
        else if ((s = find_input(b, NULL, 0, src, &i, d)) != TOSAC_OK) break;
        struct stat st;
        if (stat(src, &st) == 0 && S_ISDIR(st.st_mode)) s = load_dir(c, i, b, src, cap, d);
        else s = load_file(c, i, b, src, cap, d);
    }
    /* samples pair up by position */
    for (uint32_t i = 0; i < b->n_inputs && s == TOSAC_OK; i++)
        if (c->in[i].n != c->in[0].n || !c->in[i].n)
            s = tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                               "calibration: input '%s' has %zu sample(s) but '%s' has %zu; every input needs the same "
                               "number",
                               b->inputs[i]->name, c->in[i].n, b->inputs[0]->name, c->in[0].n);
    if (s == TOSAC_OK && b->n_inputs && c->in[0].n > UINT32_MAX)
        s = tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "calibration: more than %" PRIu32 " samples", UINT32_MAX);
    if (s == TOSAC_OK && b->n_inputs) {
        c->n_samples = (uint32_t)c->in[0].n;
        c->data = tosac_calloc((size_t)c->n_samples * b->n_inputs, sizeof *c->data);
        if (!c->data) s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
        for (uint32_t k = 0; c->data && k < c->n_samples; k++)
            for (uint32_t i = 0; i < b->n_inputs; i++)
                c->data[(size_t)k * b->n_inputs + i] = c->in[i].buf + (size_t)k * (size_t)c->in[i].nelem;
    }
    return s;
}

void drv_calib_free(drv_calib *c)
{
    for (uint32_t i = 0; c->in && i < c->n_inputs; i++)
        tosac_free(c->in[i].buf, c->in[i].cap * (size_t)c->in[i].nelem * sizeof(float));
    tosac_free(c->in, (c->n_inputs ? c->n_inputs : 1) * sizeof *c->in);
    tosac_free(c->data, (size_t)c->n_samples * c->n_inputs * sizeof *c->data);
    memset(c, 0, sizeof *c);
}
