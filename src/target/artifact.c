/*
 * The partitioned artifact: a directory with manifest.json (format "tosac-artifact", version 1;
 * docs/TARGETS.md), one .tosa file per segment and the partition report; reading it back, and
 * running the segments in order.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/diag.h"
#include "core/json.h"
#include "core/strbuf.h"
#include "target/target_internal.h"
#include "tosac/runtime.h"
#include "tosac/tosa_file.h"
#include "tosac/validate.h"

#define FORMAT "tosac-artifact"
#define VERSION 1
#define MANIFEST "manifest.json"
#define PATH_CAP 4096

/* DIR/NAME into out (PATH_CAP bytes); false when it does not fit. */
static bool join(char *out, const char *dir, const char *name)
{
    int n = snprintf(out, PATH_CAP, "%s/%s", dir, name);
    return n > 0 && n < PATH_CAP;
}

tosac_artifact *artifact_new(void)
{
    tosac_artifact *a = calloc(1, sizeof *a);
    if (a) tosac_arena_init(&a->arena);
    return a;
}

void tosac_artifact_destroy(tosac_artifact *a)
{
    if (!a) return;
    for (uint32_t k = 0; a->segs && k < a->n_segments; k++) tosac_graph_destroy(a->segs[k].graph);
    tosac_arena_deinit(&a->arena);
    free(a);
}

const tosac_target_info *tosac_artifact_target(const tosac_artifact *a) { return &a->target; }
uint32_t tosac_artifact_input_count(const tosac_artifact *a) { return a->n_inputs; }
uint32_t tosac_artifact_output_count(const tosac_artifact *a) { return a->n_outputs; }
const tosac_artifact_tensor *tosac_artifact_input(const tosac_artifact *a, uint32_t i) { return i < a->n_inputs ? &a->inputs[i] : NULL; }
const tosac_artifact_tensor *tosac_artifact_output(const tosac_artifact *a, uint32_t i) { return i < a->n_outputs ? &a->outputs[i] : NULL; }
uint32_t tosac_artifact_segment_count(const tosac_artifact *a) { return a->n_segments; }
const tosac_artifact_segment *tosac_artifact_segment_at(const tosac_artifact *a, uint32_t i) { return i < a->n_segments ? &a->segs[i] : NULL; }
uint32_t tosac_artifact_op_count(const tosac_artifact *a) { return a->n_ops; }
const tosac_artifact_op *tosac_artifact_op_at(const tosac_artifact *a, uint32_t i) { return i < a->n_ops ? &a->ops[i] : NULL; }

size_t tosac_artifact_tensor_bytes(const tosac_artifact_tensor *t)
{
    int64_t n = 1;
    for (int32_t k = 0; k < t->rank && k < 6; k++) {
        if (t->shape[k] < 0 || (t->shape[k] && n > INT64_MAX / t->shape[k])) return 0; /* a hostile manifest */
        n *= t->shape[k];
    }
    size_t bytes = 0;
    return tosac_dtype_storage_bytes(t->dtype, n, &bytes) ? bytes : 0;
}

static tosac_program_opts segment_opts(const tosac_artifact_segment *sg)
{
    tosac_program_opts o = tosac_program_opts_default();
    o.validate.extensions = TOSAC_EXT_ALL & ~(uint32_t)TOSAC_EXT_DYNAMIC;
    o.validate.level = sg->npu ? TOSAC_LEVEL_8K : TOSAC_LEVEL_NONE;
    return o;
}

tosac_status artifact_measure(tosac_artifact *a, tosac_diag *d)
{
    for (uint32_t k = 0; k < a->n_segments; k++) {
        tosac_artifact_segment *sg = &a->segs[k];
        tosac_program_opts o = segment_opts(sg); /* constants copied: const_bytes counts them all */
        tosac_program *p = NULL;
        tosac_status s = tosac_program_create(sg->graph, &o, &p, d);
        if (s != TOSAC_OK) return tosac_diag_add(d, s, "%s: cannot plan the segment", sg->file);
        sg->arena_bytes = tosac_program_arena_size(p);
        sg->const_bytes = tosac_program_const_bytes(p);
        tosac_program_destroy(p);
    }
    return TOSAC_OK;
}

/* ---- running --------------------------------------------------------------------------------- */

tosac_status tosac_artifact_run_segment(void *user, const tosac_artifact *a, uint32_t segment, const void *const *in,
                                        const size_t *in_n, void *const *out, const size_t *out_n, tosac_diag *d)
{
    (void)user;
    if (!a || segment >= a->n_segments) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "no segment %u", segment);
    const tosac_artifact_segment *sg = &a->segs[segment];
    tosac_program_opts o = segment_opts(sg);
    o.borrow_constants = true;
    tosac_program *p = NULL;
    tosac_status s = tosac_program_create(sg->graph, &o, &p, d);
    for (uint32_t k = 0; s == TOSAC_OK && k < sg->n_inputs; k++) {
        int32_t i = tosac_program_input_index(p, sg->inputs[k].name);
        s = i < 0 ? tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: no input '%s'", sg->file, sg->inputs[k].name)
                  : tosac_program_set_input_tosa(p, (uint32_t)i, in[k], in_n[k], d);
    }
    if (s == TOSAC_OK) s = tosac_program_invoke(p, d);
    for (uint32_t k = 0; s == TOSAC_OK && k < sg->n_outputs; k++) {
        int32_t i = tosac_program_output_index(p, sg->outputs[k].name);
        size_t got = 0;
        s = i < 0 ? tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: no output '%s'", sg->file, sg->outputs[k].name)
                  : tosac_program_get_output_tosa(p, (uint32_t)i, out[k], out_n[k], &got);
        if (s == TOSAC_OK && got != out_n[k])
            s = tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: output '%s' has %zu bytes, the manifest says %zu", sg->file,
                               sg->outputs[k].name, got, out_n[k]);
    }
    if (s != TOSAC_OK) tosac_diag_add(d, s, "%s: segment %u failed", sg->file, segment);
    tosac_program_destroy(p);
    return s;
}

tosac_status tosac_artifact_run(const tosac_artifact *a, const void *const *inputs, const size_t *in_n,
                                void *const *outputs, const size_t *out_n, tosac_segment_fn npu, tosac_segment_fn cpu,
                                void *user, tosac_diag *d)
{
    if (!a) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_artifact_run: NULL artifact");
    for (uint32_t k = 0; k < a->n_inputs; k++)
        if (in_n[k] != tosac_artifact_tensor_bytes(&a->inputs[k]))
            return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "input '%s': %zu bytes given, %zu expected", a->inputs[k].name,
                                  in_n[k], tosac_artifact_tensor_bytes(&a->inputs[k]));
    /* every segment output gets a buffer that lives until the run ends */
    void ***bufs = calloc(a->n_segments ? a->n_segments : 1, sizeof *bufs);
    tosac_status s = bufs ? TOSAC_OK : tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    for (uint32_t si = 0; s == TOSAC_OK && si < a->n_segments; si++) {
        const tosac_artifact_segment *sg = &a->segs[si];
        uint32_t ni = sg->n_inputs, no = sg->n_outputs;
        const void **in = calloc(ni ? ni : 1, sizeof *in);
        size_t *inb = calloc(ni ? ni : 1, sizeof *inb), *outb = calloc(no ? no : 1, sizeof *outb);
        bufs[si] = calloc(no ? no : 1, sizeof **bufs);
        if (!in || !inb || !outb || !bufs[si]) s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
        for (uint32_t k = 0; s == TOSAC_OK && k < ni; k++) {
            const tosac_artifact_tensor *t = &sg->inputs[k];
            inb[k] = tosac_artifact_tensor_bytes(t);
            in[k] = t->from_segment < 0 ? inputs[t->from_index] : bufs[t->from_segment][t->from_index];
        }
        for (uint32_t k = 0; s == TOSAC_OK && k < no; k++) {
            outb[k] = tosac_artifact_tensor_bytes(&sg->outputs[k]);
            if (!(bufs[si][k] = malloc(outb[k] ? outb[k] : 1))) s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
        }
        tosac_segment_fn fn = sg->npu ? npu : cpu;
        if (s == TOSAC_OK) s = (fn ? fn : tosac_artifact_run_segment)(user, a, si, in, inb, bufs[si], outb, d);
        free(in);
        free(inb);
        free(outb);
    }
    for (uint32_t k = 0; s == TOSAC_OK && k < a->n_outputs; k++) {
        const tosac_artifact_tensor *t = &a->outputs[k];
        size_t n = tosac_artifact_tensor_bytes(t);
        if (out_n[k] < n) s = tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "output '%s': %zu bytes needed", t->name, n);
        else memcpy(outputs[k], bufs[t->from_segment][t->from_index], n);
    }
    for (uint32_t si = 0; bufs && si < a->n_segments; si++) {
        for (uint32_t k = 0; bufs[si] && k < a->segs[si].n_outputs; k++) free(bufs[si][k]);
        free(bufs[si]);
    }
    free(bufs);
    return s;
}

/* ---- manifest -------------------------------------------------------------------------------- */

static void json_tensor(tosac_strbuf *sb, const tosac_artifact_tensor *t, bool with_from, bool model_io)
{
    tosac_strbuf_append(sb, "{\"name\": ");
    tosac_strbuf_append_json_str(sb, t->name);
    tosac_strbuf_appendf(sb, ", \"dtype\": \"%s\", \"shape\": [", tosac_dtype_name(t->dtype));
    for (int32_t k = 0; k < t->rank; k++) tosac_strbuf_appendf(sb, "%s%lld", k ? ", " : "", (long long)t->shape[k]);
    tosac_strbuf_append(sb, "]");
    if (model_io || t->has_q) tosac_strbuf_appendf(sb, ", \"io\": \"%s\"", tosac_quant_io_type_name(t->io));
    if (t->has_q) tosac_strbuf_appendf(sb, ", \"scale\": %.17g", t->q.scale);
    else tosac_strbuf_append(sb, ", \"scale\": null");
    if (t->has_zp) tosac_strbuf_appendf(sb, ", \"zero_point\": %d", (int)t->q.zero_point);
    else tosac_strbuf_append(sb, ", \"zero_point\": null");
    if (with_from) {
        if (t->from_segment < 0) tosac_strbuf_appendf(sb, ", \"from\": {\"model_input\": %u}", t->from_index);
        else tosac_strbuf_appendf(sb, ", \"from\": {\"segment\": %d, \"output\": %u}", t->from_segment, t->from_index);
    }
    tosac_strbuf_append(sb, "}");
}

char *tosac_artifact_manifest_json(const tosac_artifact *a)
{
    const tosac_target_info *t = &a->target;
    tosac_strbuf sb;
    tosac_strbuf_init(&sb);
    tosac_strbuf_appendf(&sb, "{\n  \"format\": \"%s\",\n  \"version\": %d,\n  \"target\": {\"name\": ", FORMAT, VERSION);
    tosac_strbuf_append_json_str(&sb, t->name);
    tosac_strbuf_append(&sb, ", \"tosa_spec\": ");
    tosac_strbuf_append_json_str(&sb, t->tosa_spec);
    tosac_strbuf_appendf(&sb, ", \"rules\": \"%s\", \"macs\": %u",
                         t->rules == TOSAC_RULES_U55 ? "u55" : t->rules == TOSAC_RULES_U85 ? "u85" : "none", t->macs);
    const char *vela[3][2] = {{"accelerator_config", t->accelerator}, {"system_config", t->system_config},
                              {"memory_mode", t->memory_mode}};
    for (int k = 0; k < 3; k++) {
        tosac_strbuf_appendf(&sb, ", \"%s\": ", vela[k][0]);
        if (vela[k][1]) tosac_strbuf_append_json_str(&sb, vela[k][1]);
        else tosac_strbuf_append(&sb, "null");
    }
    tosac_strbuf_appendf(&sb, ", \"lowering\": %u},\n  \"inputs\": [", t->lowering);
    for (uint32_t k = 0; k < a->n_inputs; k++) {
        tosac_strbuf_append(&sb, k ? ",\n    " : "\n    ");
        json_tensor(&sb, &a->inputs[k], false, true);
    }
    tosac_strbuf_append(&sb, a->n_inputs ? "\n  ],\n  \"outputs\": [" : "],\n  \"outputs\": [");
    for (uint32_t k = 0; k < a->n_outputs; k++) {
        tosac_strbuf_append(&sb, k ? ",\n    " : "\n    ");
        json_tensor(&sb, &a->outputs[k], true, true);
    }
    tosac_strbuf_append(&sb, a->n_outputs ? "\n  ],\n  \"segments\": [" : "],\n  \"segments\": [");
    for (uint32_t si = 0; si < a->n_segments; si++) {
        const tosac_artifact_segment *sg = &a->segs[si];
        tosac_strbuf_append(&sb, si ? ",\n    {\"file\": " : "\n    {\"file\": ");
        tosac_strbuf_append_json_str(&sb, sg->file);
        tosac_strbuf_appendf(&sb, ", \"runs_on\": \"%s\", \"operators\": %u, \"arena_bytes\": %llu, \"constant_bytes\": %llu,",
                             sg->npu ? "npu" : "cpu", sg->n_ops, (unsigned long long)sg->arena_bytes,
                             (unsigned long long)sg->const_bytes);
        tosac_strbuf_append(&sb, "\n     \"inputs\": [");
        for (uint32_t k = 0; k < sg->n_inputs; k++) {
            tosac_strbuf_append(&sb, k ? ",\n       " : "\n       ");
            json_tensor(&sb, &sg->inputs[k], true, false);
        }
        tosac_strbuf_append(&sb, "],\n     \"outputs\": [");
        for (uint32_t k = 0; k < sg->n_outputs; k++) {
            tosac_strbuf_append(&sb, k ? ",\n       " : "\n       ");
            json_tensor(&sb, &sg->outputs[k], false, false);
        }
        tosac_strbuf_append(&sb, "]}");
    }
    tosac_strbuf_append(&sb, a->n_segments ? "\n  ]\n}\n" : "]\n}\n");
    return tosac_strbuf_take(&sb);
}

static tosac_status write_text(const char *dir, const char *name, const char *text, tosac_diag *d)
{
    char path[PATH_CAP];
    if (!join(path, dir, name)) return tosac_diag_add(d, TOSAC_ERR_IO, "%s/%s: path too long", dir, name);
    if (!text) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    FILE *f = fopen(path, "wb");
    size_t n = strlen(text);
    bool ok = f && fwrite(text, 1, n, f) == n;
    if (f && fclose(f) != 0) ok = false;
    return ok ? TOSAC_OK : tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
}

bool tosac_artifact_is_dir(const char *path)
{
    char m[PATH_CAP];
    struct stat st;
    if (!path || stat(path, &st) != 0 || !S_ISDIR(st.st_mode) || !join(m, path, MANIFEST)) return false;
    return stat(m, &st) == 0 && S_ISREG(st.st_mode);
}

/* Removes a directory holding only files (an artifact: nothing nested). */
static void remove_flat_dir(const char *dir)
{
    DIR *dp = opendir(dir);
    if (dp) {
        struct dirent *e;
        char p[PATH_CAP];
        while ((e = readdir(dp)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            if (join(p, dir, e->d_name)) remove(p);
        }
        closedir(dp);
    }
    rmdir(dir);
}

/* ---- Vela's estimates ------------------------------------------------------------------------ */

/* Column `name` of a one-row CSV (its header line and value line) as a number >= 0; false when
   absent or not a number. */
static bool csv_number(const char *header, const char *row, const char *name, double *out)
{
    size_t nl = strlen(name), col = 0;
    for (const char *p = header;; col++) {
        size_t len = strcspn(p, ",\r\n");
        if (len == nl && !strncmp(p, name, nl)) break;
        if (p[len] != ',') return false;
        p += len + 1;
    }
    const char *v = row;
    for (size_t k = 0; k < col; k++) {
        size_t len = strcspn(v, ",\r\n");
        if (v[len] != ',') return false;
        v += len + 1;
    }
    char *end;
    double x = strtod(v, &end);
    if (end == v || (*end && !strchr(",\r\n", *end)) || !(x >= 0 && x < 1e18)) return false;
    *out = x;
    return true;
}

/* The estimate in the summary Vela writes for NPU segment sg into dir: SEGMENT_summary_<system
   config>.csv, a header line and one row with inference_time (seconds) and cycles_total among its
   columns. None when absent or unreadable. */
static void read_estimate(tosac_artifact_segment *sg, const tosac_target_info *t, const char *dir)
{
    sg->has_estimate = false;
    sg->est_ms = 0;
    sg->est_cycles = 0;
    if (!sg->npu || !t->system_config) return;
    const char *dot = strrchr(sg->file, '.');
    int base = dot ? (int)(dot - sg->file) : (int)strlen(sg->file);
    char name[PATH_CAP], path[PATH_CAP];
    int n = snprintf(name, sizeof name, "%.*s_summary_%s.csv", base, sg->file, t->system_config);
    if (n <= 0 || n >= PATH_CAP || !join(path, dir, name)) return;
    FILE *f = fopen(path, "rb");
    if (!f) return;
    enum { LINE = 16384 }; /* Vela's header is about 1.2 KB */
    char *header = malloc(2 * LINE), *row = header ? header + LINE : NULL;
    bool ok = header && fgets(header, LINE, f) && fgets(row, LINE, f);
    fclose(f);
    double sec, cycles;
    if (ok && csv_number(header, row, "inference_time", &sec) && csv_number(header, row, "cycles_total", &cycles)) {
        sg->has_estimate = true;
        sg->est_ms = sec * 1000.0;
        sg->est_cycles = (uint64_t)llround(cycles);
    }
    free(header);
}

static bool is_previous_artifact(const char *dir)
{
    tosac_artifact *old = NULL;
    bool ok = tosac_artifact_read(dir, &old, NULL) == TOSAC_OK;
    tosac_artifact_destroy(old);
    return ok;
}

tosac_status tosac_artifact_write(const tosac_artifact *a, const char *dir, tosac_diag *d)
{
    return tosac_artifact_write_with(a, dir, NULL, NULL, d);
}

tosac_status tosac_artifact_write_with(const tosac_artifact *a, const char *dir, tosac_artifact_finish_fn finish,
                                       void *user, tosac_diag *d)
{
    struct stat st;
    if (!a || !dir || !*dir) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_artifact_write: no directory");
    bool replace = lstat(dir, &st) == 0;
    if (replace && (!S_ISDIR(st.st_mode) || !is_previous_artifact(dir)))
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                              "%s: exists and is not a previous tosac artifact (a directory with a valid %s): not "
                              "replaced",
                              dir, MANIFEST);
    char tmp[PATH_CAP], old[PATH_CAP];
    int nt = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", dir, (long)getpid());
    int no = snprintf(old, sizeof old, "%s.old.%ld", dir, (long)getpid());
    if (nt <= 0 || nt >= PATH_CAP || no <= 0 || no >= PATH_CAP)
        return tosac_diag_add(d, TOSAC_ERR_IO, "%s: path too long", dir);
    remove_flat_dir(tmp);
    if (mkdir(tmp, 0777) != 0) return tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot create: %s", tmp, strerror(errno));
    tosac_status s = TOSAC_OK;
    for (uint32_t k = 0; s == TOSAC_OK && k < a->n_segments; k++) {
        char p[PATH_CAP];
        s = join(p, tmp, a->segs[k].file) ? tosac_tosa_write_file(a->segs[k].graph, p, d)
                                          : tosac_diag_add(d, TOSAC_ERR_IO, "%s: path too long", tmp);
    }
    char *texts[3] = {NULL, NULL, NULL};
    const char *names[3] = {MANIFEST, "partition_report.txt", "partition_report.json"};
    if (s == TOSAC_OK) {
        texts[0] = tosac_artifact_manifest_json(a);
        s = write_text(tmp, names[0], texts[0], d);
    }
    if (s == TOSAC_OK && finish) s = finish(user, a, tmp, d);
    /* the report, with the estimates of the Vela summaries the finishing step left (none else) */
    tosac_artifact view = *a;
    view.segs = s == TOSAC_OK ? malloc((a->n_segments ? a->n_segments : 1) * sizeof *view.segs) : NULL;
    if (s == TOSAC_OK && !view.segs) s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    for (uint32_t k = 0; s == TOSAC_OK && k < a->n_segments; k++) {
        view.segs[k] = a->segs[k];
        read_estimate(&view.segs[k], &a->target, tmp);
    }
    if (s == TOSAC_OK) {
        texts[1] = tosac_artifact_report_text(&view);
        texts[2] = tosac_artifact_report_json(&view);
    }
    for (int k = 1; s == TOSAC_OK && k < 3; k++) s = write_text(tmp, names[k], texts[k], d);
    for (int k = 0; k < 3; k++) tosac_string_free(texts[k]);
    free(view.segs);
    if (s == TOSAC_OK && replace && rename(dir, old) != 0)
        s = tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot move the previous artifact aside: %s", dir, strerror(errno));
    if (s == TOSAC_OK && rename(tmp, dir) != 0) {
        s = tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot rename %s into place: %s", dir, tmp, strerror(errno));
        if (replace) rename(old, dir);
    }
    if (s != TOSAC_OK) remove_flat_dir(tmp);
    else if (replace) remove_flat_dir(old);
    return s;
}

/* ---- reading --------------------------------------------------------------------------------- */

static bool json_int(const tosac_json *o, const char *key, int64_t lo, int64_t hi, int64_t *out)
{
    const tosac_json *v = tosac_json_get(o, key);
    if (!v || v->kind != TOSAC_JSON_NUMBER || v->num != floor(v->num) || v->num < (double)lo || v->num > (double)hi)
        return false;
    *out = (int64_t)v->num;
    return true;
}

static const char *json_str(const tosac_json *o, const char *key)
{
    const tosac_json *v = tosac_json_get(o, key);
    return v && v->kind == TOSAC_JSON_STRING ? v->str : NULL;
}

static tosac_status read_tensor(tosac_artifact *a, const tosac_json *e, tosac_artifact_tensor *t, bool with_from,
                                const char *where, tosac_diag *d)
{
    memset(t, 0, sizeof *t);
    const char *name = json_str(e, "name"), *dt = json_str(e, "dtype"), *io = json_str(e, "io");
    const tosac_json *sh = tosac_json_get(e, "shape"), *sc = tosac_json_get(e, "scale");
    int64_t zp = 0;
    if (!name || !dt || !tosac_dtype_from_name(dt, &t->dtype) || !sh || sh->kind != TOSAC_JSON_ARRAY || sh->n > 6)
        return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: a tensor needs a name, a dtype and a shape of rank <= 6", where);
    t->name = tosac_arena_strdup(&a->arena, name);
    if (!t->name) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    t->rank = (int32_t)sh->n;
    for (uint32_t k = 0; k < sh->n; k++) {
        const tosac_json *x = sh->items[k];
        if (x->kind != TOSAC_JSON_NUMBER || x->num < 0 || x->num > 2147483647.0 || x->num != floor(x->num))
            return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: tensor '%s': bad shape", where, name);
        t->shape[k] = (int64_t)x->num;
    }
    t->io = t->dtype == TOSAC_DTYPE_INT16 ? TOSAC_QUANT_IO_INT16 : TOSAC_QUANT_IO_INT8;
    if (io) {
        bool known = false;
        for (int k = TOSAC_QUANT_IO_INT8; k <= TOSAC_QUANT_IO_INT16; k++)
            if (!strcmp(io, tosac_quant_io_type_name((tosac_quant_io_type)k))) t->io = (tosac_quant_io_type)k, known = true;
        if (!known) return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: tensor '%s': unknown io '%s'", where, name, io);
    }
    const tosac_json *zj = tosac_json_get(e, "zero_point");
    if (zj && zj->kind != TOSAC_JSON_NULL) {
        if (!json_int(e, "zero_point", -65536, 65535, &zp))
            return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: tensor '%s': bad zero_point", where, name);
        t->has_zp = true;
        t->q.zero_point = (int32_t)zp;
    }
    if (sc && sc->kind != TOSAC_JSON_NULL) {
        if (sc->kind != TOSAC_JSON_NUMBER || !(sc->num > 0) || !t->has_zp)
            return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: tensor '%s': bad scale (or no zero_point)", where, name);
        t->has_q = true;
        t->q.scale = sc->num;
    }
    t->from_segment = -1;
    if (with_from) {
        const tosac_json *f = tosac_json_get(e, "from");
        int64_t v = 0;
        if (f && json_int(f, "model_input", 0, INT32_MAX, &v)) {
            t->from_index = (uint32_t)v;
        } else if (f && json_int(f, "segment", 0, INT32_MAX, &v)) {
            t->from_segment = (int32_t)v;
            if (!json_int(f, "output", 0, INT32_MAX, &v))
                return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: tensor '%s': \"from\" needs \"output\"", where, name);
            t->from_index = (uint32_t)v;
        } else {
            return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: tensor '%s': no \"from\" (model_input or segment/output)",
                                  where, name);
        }
    }
    return TOSAC_OK;
}

static tosac_status read_list(tosac_artifact *a, const tosac_json *o, const char *key, tosac_artifact_tensor **out,
                              uint32_t *n, bool with_from, const char *where, tosac_diag *d)
{
    const tosac_json *l = tosac_json_get(o, key);
    if (!l || l->kind != TOSAC_JSON_ARRAY) return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: no \"%s\" list", where, key);
    *n = l->n;
    *out = tosac_arena_alloc(&a->arena, (l->n ? l->n : 1) * sizeof **out);
    if (!*out) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    for (uint32_t k = 0; k < l->n; k++) {
        tosac_status s = read_tensor(a, l->items[k], &(*out)[k], with_from, where, d);
        if (s != TOSAC_OK) return s;
    }
    return TOSAC_OK;
}

/* The segment file name: a plain name inside the directory. */
static bool plain_name(const char *s) { return s && *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, ".."); }

tosac_status tosac_artifact_read(const char *dir, tosac_artifact **out, tosac_diag *d)
{
    char path[PATH_CAP];
    if (!dir || !out) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_artifact_read: NULL argument");
    if (!join(path, dir, MANIFEST)) return tosac_diag_add(d, TOSAC_ERR_IO, "%s: path too long", dir);
    FILE *f = fopen(path, "rb");
    if (!f) return tosac_diag_add(d, TOSAC_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0;
    bool ok = true;
    for (;;) {
        if (len + 4096 > cap) {
            if (cap > (16u << 20)) { /* a manifest is small */
                ok = false;
                break;
            }
            char *t = realloc(text, cap = cap * 2 + 8192);
            if (!t) {
                ok = false;
                break;
            }
            text = t;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    fclose(f);
    if (!ok) {
        free(text);
        return tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: larger than 16 MiB or out of memory", path);
    }
    tosac_artifact *a = artifact_new();
    tosac_json *root = NULL;
    tosac_status s = a ? tosac_json_parse(text ? text : "", len, path, &a->arena, &root, d)
                       : tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    free(text);
    int64_t ver = 0;
    const tosac_json *tg = NULL, *segs = NULL;
    if (s == TOSAC_OK) {
        const char *fmt = json_str(root, "format");
        tg = tosac_json_get(root, "target");
        segs = tosac_json_get(root, "segments");
        if (!fmt || strcmp(fmt, FORMAT) || !json_int(root, "version", 0, 1000, &ver) || ver != VERSION)
            s = tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: not a %s version %d manifest", path, FORMAT, VERSION);
        else if (!tg || tg->kind != TOSAC_JSON_OBJECT || !json_str(tg, "name") || !segs || segs->kind != TOSAC_JSON_ARRAY)
            s = tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: needs \"target\" {name} and a \"segments\" list", path);
    }
    if (s == TOSAC_OK) {
        const tosac_target_info *ti = NULL;
        char *name = tosac_arena_strdup(&a->arena, json_str(tg, "name"));
        s = name ? tosac_target_lookup(name, &a->target, &ti, d) : tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
        if (s == TOSAC_OK) a->target = *ti;
    }
    if (s == TOSAC_OK) s = read_list(a, root, "inputs", &a->inputs, &a->n_inputs, false, path, d);
    if (s == TOSAC_OK) s = read_list(a, root, "outputs", &a->outputs, &a->n_outputs, true, path, d);
    if (s == TOSAC_OK) {
        a->n_segments = 0;
        a->segs = tosac_arena_alloc(&a->arena, (segs->n ? segs->n : 1) * sizeof *a->segs);
        if (!a->segs) s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    }
    for (uint32_t k = 0; s == TOSAC_OK && k < segs->n; k++) {
        const tosac_json *e = segs->items[k];
        tosac_artifact_segment *sg = &a->segs[k];
        memset(sg, 0, sizeof *sg);
        a->n_segments = k + 1;
        const char *file = json_str(e, "file"), *on = json_str(e, "runs_on");
        if (!plain_name(file) || !on || (strcmp(on, "npu") && strcmp(on, "cpu"))) {
            s = tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: segment %u needs a plain \"file\" name and \"runs_on\" npu|cpu",
                               path, k);
            break;
        }
        sg->file = tosac_arena_strdup(&a->arena, file);
        sg->npu = !strcmp(on, "npu");
        int64_t v;
        if (json_int(e, "arena_bytes", 0, INT64_MAX / 2, &v)) sg->arena_bytes = (uint64_t)v;
        if (json_int(e, "constant_bytes", 0, INT64_MAX / 2, &v)) sg->const_bytes = (uint64_t)v;
        s = read_list(a, e, "inputs", &sg->inputs, &sg->n_inputs, true, path, d);
        if (s == TOSAC_OK) s = read_list(a, e, "outputs", &sg->outputs, &sg->n_outputs, false, path, d);
        if (s != TOSAC_OK) break;
        char sp[PATH_CAP];
        s = join(sp, dir, file) ? tosac_tosa_read_file(sp, NULL, &sg->graph, d)
                                : tosac_diag_add(d, TOSAC_ERR_IO, "%s: path too long", dir);
        if (s == TOSAC_OK && (sg->graph->n_regions < 1 || sg->graph->regions[0]->n_blocks < 1))
            s = tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: no main block", sp);
        if (s == TOSAC_OK) {
            const tosac_block *b = sg->graph->regions[0]->blocks[0];
            for (uint32_t j = 0; j < b->n_nodes; j++)
                sg->n_ops += b->nodes[j]->op != TOSAC_OP_CONST && b->nodes[j]->op != TOSAC_OP_CONST_SHAPE;
            read_estimate(sg, &a->target, dir);
        }
    }
    /* references must point backwards and exist before anything runs */
    for (uint32_t k = 0; s == TOSAC_OK && k < a->n_segments; k++)
        for (uint32_t j = 0; s == TOSAC_OK && j < a->segs[k].n_inputs; j++) {
            const tosac_artifact_tensor *t = &a->segs[k].inputs[j];
            bool good = t->from_segment < 0 ? t->from_index < a->n_inputs
                                            : (uint32_t)t->from_segment < k && t->from_index < a->segs[t->from_segment].n_outputs;
            if (!good) s = tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: segment %u input '%s' comes from nowhere", path, k, t->name);
        }
    for (uint32_t k = 0; s == TOSAC_OK && k < a->n_outputs; k++) {
        const tosac_artifact_tensor *t = &a->outputs[k];
        if (t->from_segment < 0 || (uint32_t)t->from_segment >= a->n_segments ||
            t->from_index >= a->segs[t->from_segment].n_outputs)
            s = tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: model output '%s' comes from no segment output", path, t->name);
    }
    if (s != TOSAC_OK) {
        tosac_artifact_destroy(a);
        return s;
    }
    *out = a;
    return TOSAC_OK;
}
