/*
 * The compile driver (include/tosac/driver.h): options checked against the target, ONNX import and
 * the pass pipeline (tosac_onnx_compile), calibration data (calib.c), quantization with the I/O
 * options (tosac_quantize_report), and writing the program with its sidecar.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/clock.h"
#include "core/diag.h"
#include "core/hash.h"
#include "core/outfile.h"
#include "driver/driver_internal.h"
#include "tosac/tosa_file.h"
#include "tosac/validate.h"

/* The calibration generator's seed: fixed, so the same options give the same program. */
#define DRV_RANDOM_SEED 0x746f736163ull

struct tosac_compiled {
    tosac_onnx_model *model;
    tosac_graph *fp;      /* the FP program */
    tosac_graph *program; /* the quantized program, or fp */
    tosac_quant_iomap *io;
    tosac_quant_report *qrep;
    tosac_compile_report report;
    tosac_driver_times times;
    const tosac_target_info *device; /* a device target (static table entry), else NULL */
    tosac_artifact *artifact;        /* its partitioned program */
    bool *bound;                     /* per graph input of the model: made a constant */
    size_t n_bound;
};

tosac_driver_opts tosac_driver_opts_default(void)
{
    tosac_driver_opts o;
    memset(&o, 0, sizeof o);
    o.calib_method = TOSAC_QUANT_CALIB_PERCENTILE;
    return o;
}

/* What the target asks for, and whether the options fit it. */
typedef struct drv_plan {
    const char *target;
    uint32_t profiles, extensions, lowering;
    const tosac_target_info *device; /* Ethos-U / Cortex-M: quantize and partition */
    bool quant;                      /* the FP program is quantized */
} drv_plan;

static tosac_status plan(const tosac_driver_opts *o, drv_plan *p, tosac_diag *d)
{
    const char *target = p->target = o->target ? o->target : "TOSA-1.0+FP";
    tosac_target_info spec;
    const tosac_target_info *t = NULL;
    tosac_status s = tosac_target_lookup(target, &spec, &t, d);
    if (s != TOSAC_OK) return s;
    p->profiles = t->profiles;
    p->extensions = t->extensions;
    p->lowering = o->lowering_given ? o->lowering : t->lowering;
    p->device = t->device ? t : NULL; /* device rows are static; `spec` is not kept */
    bool data = o->n_calib_arrays || o->n_calib_sources, calib = data || o->calib_random;
    /* INT alone always quantizes; INT+FP when given calibration data (else it is the FP program
       with integer operators for the model's own integer computations) */
    p->quant = p->device || ((p->profiles & TOSAC_PROFILE_INT) && (!(p->profiles & TOSAC_PROFILE_FP) || calib));
    if (!p->quant && (o->io != TOSAC_DRIVER_IO_FLOAT || o->preserve_io || o->emit_qdq))
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                              "target %s: the I/O type, preserve-io-quantization and emit-qdq apply to quantized "
                              "programs (TOSA-1.0+INT, or +INT+FP with calibration data)",
                              target);
    if (o->a16w8 && (!p->quant || !(p->extensions & TOSAC_EXT_INT16)))
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                              "target %s: a16w8 makes int16 activations and INT48 accumulators, which need a quantized "
                              "target with the int16 extension (TOSA-1.0+INT+int16)",
                              target);
    if (!p->quant && (calib || o->calib_samples || o->per_tensor || o->lowering_given))
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                              "target %s: calibration data, the sample count, per-tensor weights and lowering choices "
                              "apply to quantized targets (TOSA-1.0+INT)",
                              target);
    if (data && o->calib_random)
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                              "--calibrate random cannot be mixed with files (random calibration samples and "
                              "calibration data)");
    if ((unsigned)o->calib_method > TOSAC_QUANT_CALIB_MSE || (unsigned)o->io > TOSAC_DRIVER_IO_UINT8)
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "unknown calibration method or I/O type");
    return TOSAC_OK;
}

/* The quant options for the FP program `fp` and the calibration data `c`. */
static tosac_quant_opts quant_opts(const tosac_driver_opts *o, const drv_plan *p, const drv_calib *c)
{
    tosac_quant_opts qo;
    memset(&qo, 0, sizeof qo);
    qo.n_samples = c->n_samples;
    qo.data = c->n_samples ? c->data : NULL;
    qo.n_random = o->calib_random;
    qo.seed = DRV_RANDOM_SEED;
    qo.progress = o->progress;
    qo.progress_user = o->progress_user;
    qo.method = o->calib_method;
    qo.per_tensor = o->per_tensor;
    qo.emit_qdq = o->emit_qdq;
    qo.a16w8 = o->a16w8;
    qo.lowering = p->lowering;
    qo.threads = o->threads;
    if (o->io == TOSAC_DRIVER_IO_UINT8) qo.io = TOSAC_QUANT_IO_UINT8;
    else if (o->io == TOSAC_DRIVER_IO_FLOAT && (p->profiles & TOSAC_PROFILE_FP) && !o->preserve_io && !o->a16w8)
        qo.io = TOSAC_QUANT_IO_FLOAT32;
    else qo.io = TOSAC_QUANT_IO_INT8;
    return qo;
}

/* The graph inputs a compile attempt needed as constants (tosac_compile_opts.on_need_const). */
typedef struct drv_needs {
    const tosac_onnx_graph *g;
    bool *need; /* per graph input */
} drv_needs;

static void on_need_const(void *user, const char *input)
{
    drv_needs *n = user;
    for (size_t k = 0; k < n->g->n_inputs; k++)
        if (!strcmp(n->g->inputs[k].name, input)) n->need[k] = true;
}

static int64_t input_index(const tosac_onnx_graph *g, const char *name)
{
    for (size_t k = 0; k < g->n_inputs; k++)
        if (!strcmp(g->inputs[k].name, name)) return (int64_t)k;
    return -1;
}

/* The shape a feed gives an input whose dims the model leaves open: the model's static dims and
   the value's for the symbolic ones (all of them for an input without a shape). False when the
   model's dims are all static, or the ranks differ (the run then reports the data's shape). */
static bool feed_shape(const tosac_onnx_value_info *vi, const tosac_npy *v, int64_t *dims, int *rank)
{
    const tosac_onnx_type *t = &vi->type;
    if (v->rank > TOSAC_MAX_RANK || (t->has_shape && t->rank != (size_t)v->rank)) return false;
    bool open = !t->has_shape;
    for (int j = 0; j < v->rank; j++) {
        bool sym = !t->has_shape || t->dims[j].value < 0;
        open |= sym;
        dims[j] = sym ? v->shape[j] : t->dims[j].value;
    }
    *rank = v->rank;
    return open;
}

static void copy_diag(tosac_diag *to, const tosac_diag *from)
{
    for (size_t k = 0; k < tosac_diag_count(from); k++) {
        tosac_status code = TOSAC_OK;
        const char *msg = tosac_diag_message(from, k, &code);
        tosac_diag_add(to, code, "%s", msg);
    }
}

/* tosac_onnx_compile with the feeds: feeds with an empty dimension are bound (a TOSA tensor has
   none), the others give the shapes of inputs with symbolic dims; when the compile fails needing
   fed inputs as constants, they are bound and the model compiled again. c->bound says which graph
   inputs ended up constant. */
static tosac_status compile_fed(tosac_compiled *c, const tosac_onnx_model *m, tosac_compile_opts *co,
                                const tosac_driver_opts *o, tosac_diag *d)
{
    const tosac_onnx_graph *g = m->graph;
    size_t nf = o->n_feeds, ni = g->n_inputs;
    c->n_bound = ni;
    c->bound = tosac_calloc(ni ? ni : 1, sizeof *c->bound);
    bool *need = tosac_calloc(ni ? ni : 1, sizeof *need);
    tosac_compile_binding *binds = tosac_calloc(o->n_bindings + nf + 1, sizeof *binds);
    tosac_compile_shape *shapes = tosac_calloc(o->n_shapes + nf + 1, sizeof *shapes);
    int64_t(*dims)[TOSAC_MAX_RANK] = tosac_calloc(nf + 1, sizeof *dims);
    tosac_status s = c->bound && need && binds && shapes && dims ? TOSAC_OK : tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < o->n_bindings && s == TOSAC_OK; k++) {
        int64_t i = input_index(g, o->bindings[k].name);
        if (i >= 0) c->bound[i] = true; /* an unknown name is the compile's error */
    }
    for (size_t f = 0; f < nf && s == TOSAC_OK; f++) {
        int64_t i = input_index(g, o->feeds[f].name);
        if (i < 0)
            s = tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "'%s' is not an input of the model", o->feeds[f].name);
        else if (o->feeds[f].value->count == 0)
            c->bound[i] = true;
    }
    drv_needs needs = {g, need};
    co->on_need_const = on_need_const;
    co->need_const_user = &needs;
    while (s == TOSAC_OK) {
        size_t nb = 0, ns = 0;
        for (size_t k = 0; k < o->n_bindings; k++) binds[nb++] = o->bindings[k];
        for (size_t k = 0; k < o->n_shapes; k++) shapes[ns++] = o->shapes[k];
        for (size_t f = 0; f < nf; f++) {
            int64_t i = input_index(g, o->feeds[f].name);
            bool named = false;
            for (size_t k = 0; k < o->n_bindings; k++) named |= !strcmp(o->bindings[k].name, o->feeds[f].name);
            if (c->bound[i] && !named) binds[nb++] = o->feeds[f];
            for (size_t k = 0; k < o->n_shapes; k++) named |= !strcmp(o->shapes[k].name, o->feeds[f].name);
            if (!c->bound[i] && !named && feed_shape(&g->inputs[i], o->feeds[f].value, dims[f], &shapes[ns].rank)) {
                shapes[ns].name = o->feeds[f].name;
                shapes[ns++].dims = dims[f];
            }
        }
        co->bindings = binds;
        co->n_bindings = nb;
        co->shapes = shapes;
        co->n_shapes = ns;
        memset(need, 0, ni * sizeof *need);
        memset(&c->report, 0, sizeof c->report);
        /* the messages of an attempt that binds more inputs are dropped: only the last one counts */
        tosac_diag *ad = nf ? tosac_diag_create() : d;
        if (!ad) {
            s = tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
            break;
        }
        s = tosac_onnx_compile(m, co, &c->fp, ad);
        bool again = false;
        for (size_t f = 0; f < nf && s != TOSAC_OK; f++) {
            int64_t i = input_index(g, o->feeds[f].name);
            if (need[i] && !c->bound[i]) again = c->bound[i] = true;
        }
        if (ad != d) {
            if (!again) copy_diag(d, ad);
            tosac_diag_destroy(ad);
        }
        if (!again) break;
        s = TOSAC_OK;
    }
    co->on_need_const = NULL;
    tosac_free(need, ni ? ni : 1);
    tosac_free(binds, (o->n_bindings + nf + 1) * sizeof *binds);
    tosac_free(shapes, (o->n_shapes + nf + 1) * sizeof *shapes);
    tosac_free(dims, (nf + 1) * sizeof *dims);
    return s;
}

/* Quantization that lost the signal is a warning, with or without --report: an output that is
   constant on the calibration data while the FP program's is not, an output or value whose SQNR
   against the FP program is below 10 dB (values: how many, and the first in graph order, where
   the loss starts). */
#define DRV_MIN_SQNR_DB 10.0
static void quant_warnings(const tosac_quant_report *r, const char *name, tosac_diag *d)
{
    for (uint32_t k = 0; k < r->n_outputs; k++) {
        const tosac_quant_output *o = &r->outputs[k];
        if (o->int_constant && !o->fp_constant)
            tosac_diag_add(d, TOSAC_OK,
                           "warning: %s: output '%s' of the quantized program is the constant %g on the %u calibration "
                           "sample(s) checked while the FP program's output varies: quantization lost it",
                           name, o->name, o->int_value, r->n_samples);
        else if (o->sqnr_db < DRV_MIN_SQNR_DB)
            tosac_diag_add(d, TOSAC_OK,
                           "warning: %s: output '%s' of the quantized program keeps %.2f dB SQNR against the FP "
                           "program on the calibration data (below %.0f dB)",
                           name, o->name, o->sqnr_db, DRV_MIN_SQNR_DB);
    }
    const tosac_quant_layer *first = NULL;
    uint32_t low = 0;
    for (uint32_t k = 0; k < r->n_layers; k++)
        if (r->layers[k].sqnr_db < DRV_MIN_SQNR_DB) {
            low++;
            if (!first || r->layers[k].index < first->index) first = &r->layers[k];
        }
    if (first)
        tosac_diag_add(d, TOSAC_OK,
                       "warning: %s: %u of %u quantized values keep less than %.0f dB SQNR against the FP program; "
                       "the first: '%s' (%s%s%s) at %.2f dB (--report lists them all)",
                       name, low, r->n_layers, DRV_MIN_SQNR_DB, first->name, first->op,
                       first->onnx_node ? ", ONNX node " : "", first->onnx_node ? first->onnx_node : "", first->sqnr_db);
}

/* Compiles the model `m` (taken over: freed on failure) into *out. */
static tosac_status drive(tosac_onnx_model *m, const char *name, const tosac_driver_opts *o, const drv_plan *p,
                          double read_ms, tosac_compiled **out, tosac_diag *d)
{
    tosac_compiled *c = tosac_calloc(1, sizeof *c);
    if (!c) {
        tosac_onnx_model_destroy(m);
        return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    }
    c->model = m;
    c->times.read_ms = read_ms;
    tosac_compile_opts co = {
        /* quantization starts from the FP program (integer operators allowed for the model's own
           integer computations) */
        .profiles = p->quant ? TOSAC_PROFILE_FP | TOSAC_PROFILE_INT : p->profiles,
        .extensions = p->extensions,
        .n_shapes = o->n_shapes,
        .shapes = o->shapes,
        .n_bindings = o->n_bindings,
        .bindings = o->bindings,
        .io_nhwc = o->io_nhwc,
        .verify_each = o->verify_each,
        .report = &c->report,
        .dump_after = o->dump_after,
        .dump = o->dump,
        .dump_ctx = o->dump_ctx,
    };
    double t = tosac_now_ms();
    tosac_status s = compile_fed(c, m, &co, o, d);
    c->times.compile_ms = tosac_now_ms() - t;
    if (s == TOSAC_OK) c->program = c->fp;
    bool calib = o->n_calib_arrays || o->n_calib_sources || o->calib_random;
    if (s == TOSAC_OK && p->quant && !calib && !tosac_quant_has_qdq(c->fp)) /* a QDQ model brings its own scales */
        s = tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                           "%s: target %s quantizes the model to int8 and needs calibration data: representative "
                           "inputs (arrays, .npy files or directories: --calibrate DIR|FILE.npy...), or seeded random "
                           "samples (--calibrate random)",
                           name, p->target);
    if (s == TOSAC_OK && p->quant) {
        t = tosac_now_ms();
        drv_calib cal;
        s = drv_calib_load(c->fp->regions[0]->blocks[0], o, &cal, d);
        tosac_quant_opts qo = quant_opts(o, p, &cal);
        /* the warnings need the report; without --report two samples do (each one more FP and
           INT run: two add about a sixth to a quantized compile of resnet18 on 16 samples) */
        qo.report_samples = o->report ? 0 : 2;
        tosac_graph *q = NULL;
        if (s == TOSAC_OK) s = tosac_quantize_report(c->fp, &qo, &q, &c->io, &c->qrep, d);
        if (s == TOSAC_OK) c->program = q;
        if (s == TOSAC_OK && c->qrep) quant_warnings(c->qrep, name, d);
        if (!o->report) {
            tosac_quant_report_free(c->qrep);
            c->qrep = NULL;
        }
        drv_calib_free(&cal);
        c->times.quantize_ms = tosac_now_ms() - t;
    }
    c->device = p->device;
    if (s == TOSAC_OK && p->device) s = tosac_artifact_partition(c->program, c->io, p->device, &c->artifact, d);
    if (s != TOSAC_OK) {
        tosac_compiled_destroy(c);
        return s;
    }
    *out = c;
    return TOSAC_OK;
}

tosac_status tosac_driver_compile_file(const char *path, const tosac_driver_opts *o, tosac_compiled **out,
                                       tosac_diag *d)
{
    if (!path || !o || !out) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_driver_compile_file: NULL argument");
    drv_plan p;
    tosac_status s = plan(o, &p, d);
    if (s != TOSAC_OK) return s;
    tosac_onnx_model *m = NULL;
    double t = tosac_now_ms();
    tosac_onnx_read_opts ro;
    memset(&ro, 0, sizeof ro);
    ro.on_external_file = o->on_input;
    ro.user = o->on_input_user;
    s = tosac_onnx_read_file(path, &ro, &m, d);
    if (s != TOSAC_OK) return s;
    return drive(m, path, o, &p, tosac_now_ms() - t, out, d);
}

tosac_status tosac_driver_compile_mem(const void *onnx, size_t len, const char *name, const tosac_driver_opts *o,
                                      tosac_compiled **out, tosac_diag *d)
{
    if (!onnx || !o || !out) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_driver_compile_mem: NULL argument");
    if (!name) name = "<memory>";
    drv_plan p;
    tosac_status s = plan(o, &p, d);
    if (s != TOSAC_OK) return s;
    tosac_onnx_model *m = NULL;
    double t = tosac_now_ms();
    s = tosac_onnx_read_mem(onnx, len, name, NULL, NULL, &m, d);
    if (s != TOSAC_OK) return s;
    return drive(m, name, o, &p, tosac_now_ms() - t, out, d);
}

const tosac_graph *tosac_compiled_program(const tosac_compiled *c) { return c ? c->program : NULL; }
const tosac_graph *tosac_compiled_fp_graph(const tosac_compiled *c) { return c ? c->fp : NULL; }
const tosac_quant_iomap *tosac_compiled_iomap(const tosac_compiled *c) { return c ? c->io : NULL; }
const tosac_quant_report *tosac_compiled_quant_report(const tosac_compiled *c) { return c ? c->qrep : NULL; }
const tosac_compile_report *tosac_compiled_report(const tosac_compiled *c) { return c ? &c->report : NULL; }
const tosac_onnx_model *tosac_compiled_onnx_model(const tosac_compiled *c) { return c ? c->model : NULL; }
const tosac_driver_times *tosac_compiled_times(const tosac_compiled *c) { return c ? &c->times : NULL; }
const tosac_artifact *tosac_compiled_artifact(const tosac_compiled *c) { return c ? c->artifact : NULL; }
const tosac_target_info *tosac_compiled_device(const tosac_compiled *c) { return c ? c->device : NULL; }

bool tosac_compiled_bound(const tosac_compiled *c, const char *name)
{
    if (!c || !c->model || !name) return false;
    int64_t i = input_index(c->model->graph, name);
    return i >= 0 && (size_t)i < c->n_bound && c->bound[i];
}

tosac_status tosac_compiled_write(const tosac_compiled *c, const char *path, tosac_diag *d)
{
    if (!c || !path) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_compiled_write: NULL argument");
    /* the same rules as every tosac output (core/outfile.h): temporaries renamed together only
       when both files are complete; the sidecar names the program by its bytes (docs/QUANT.md) */
    size_t len = strlen(path) + sizeof ".quant.json";
    char *side = tosac_malloc(len);
    tosac_outset *set = tosac_outset_create();
    tosac_status s = side && set ? TOSAC_OK : tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    const char *wp = NULL, *wside = NULL;
    if (s == TOSAC_OK) {
        snprintf(side, len, "%s.quant.json", path);
        s = tosac_outset_add(set, path, &wp, d);
    }
    /* a device (/dev/null) is written in place and gets no sidecar; an FP program removes the
       sidecar of an earlier quantized one at the same path */
    bool in_file = s == TOSAC_OK && strcmp(wp, path) != 0;
    if (in_file && c->io) s = tosac_outset_add(set, side, &wside, d);
    else if (in_file) s = tosac_outset_add_stale(set, side, d);
    if (s == TOSAC_OK) s = tosac_tosa_write_file(c->program, wp, d);
    if (s == TOSAC_OK && wside) {
        tosac_quant_iomap io = *c->io;
        s = tosac_hash_file(wp, &io.program_fnv1a64, &io.program_bytes, d);
        if (s == TOSAC_OK) s = tosac_quant_iomap_write(&io, wside, d);
    }
    if (s == TOSAC_OK) s = tosac_outset_commit(set, d);
    tosac_outset_destroy(set); /* removes the temporaries unless committed */
    if (side) tosac_free(side, len);
    return s;
}

tosac_status tosac_compiled_read(const char *path, tosac_compiled **out, tosac_diag *d)
{
    if (!path || !out) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_compiled_read: NULL argument");
    size_t len = strlen(path) + sizeof ".quant.json";
    char *side = tosac_malloc(len);
    tosac_compiled *c = tosac_calloc(1, sizeof *c);
    tosac_status s = side && c ? TOSAC_OK : tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    if (s == TOSAC_OK) s = tosac_tosa_read_file(path, NULL, &c->program, d);
    struct stat st;
    if (s == TOSAC_OK) snprintf(side, len, "%s.quant.json", path);
    if (s == TOSAC_OK && stat(side, &st) == 0) s = tosac_quant_iomap_read(side, &c->io, d);
    tosac_free(side, len);
    if (s != TOSAC_OK) {
        tosac_compiled_destroy(c);
        return s;
    }
    *out = c;
    return TOSAC_OK;
}

void tosac_compiled_destroy(tosac_compiled *c)
{
    if (!c) return;
    if (c->program != c->fp) tosac_graph_destroy(c->program);
    tosac_graph_destroy(c->fp);
    tosac_quant_iomap_free(c->io);
    tosac_quant_report_free(c->qrep);
    tosac_artifact_destroy(c->artifact);
    tosac_onnx_model_destroy(c->model);
    if (c->bound) tosac_free(c->bound, c->n_bound ? c->n_bound : 1);
    tosac_free(c, sizeof *c);
}
