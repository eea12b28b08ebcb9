/*
 * tosac run: execute a .tosa program on .npy inputs. Two spellings:
 *   tosac run MODEL.tosa -i NAME=FILE.npy ... [-o DIR] [--profile] [--repeat N] [--time]
 *   tosac run --test_desc desc.json [--tosa_file F] [--ifm_name a,b --ifm_file a.npy,b.npy]
 *             [--ofm_name ... --ofm_file ...] [--variable_name ... --variable_file ...]
 *             [--flatbuffer_dir D] [--output_dir D] [--precise_mode 1] [--tosa_level NONE|EIGHTK]
 * The second is the TOSA reference model's interface: exit 0 VALID, 1 UNPREDICTABLE, 2 ERROR.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <strings.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "core/alloc.h"
#include "core/arena.h"
#include "core/diag.h"
#include "core/encoding.h"
#include "core/hash.h"
#include "core/json.h"
#include "tosac/compile.h"
#include "tosac/driver.h"
#include "tosac/npy.h"
#include "tosac/quant.h"
#include "tosac/onnx.h"
#include "tosac/runtime.h"
#include "tosac/target.h"
#include "tosac/tosa_file.h"

#define CMD "run"
/* Graph status exit codes (reference model) and the tool-failure code of `run`. */
enum { RUN_VALID = 0, RUN_UNPREDICTABLE = 1, RUN_ERROR = 2, RUN_FAILURE = 3 };
#define MAX_LIST 256

void cli_run_help(FILE *out)
{
    fprintf(out,
            "usage: tosac run MODEL.tosa|MODEL.onnx -i NAME=FILE.npy ... [-o DIR] [--profile] [--repeat N] [--time]\n"
            "                 [--input-shape NAME=DIMS]... [--bind NAME=FILE.npy]...\n"
            "                 [--threads N] [--no-winograd]\n"
            "       tosac run --test_desc desc.json [reference-model options]\n"
            "\n"
            "Validates MODEL (an .onnx model is first compiled in memory, as `tosac compile` does, for\n"
            "TOSA-1.0+INT+FP with every extension but dynamic), plans its memory and runs it on the given\n"
            "inputs. An .onnx model's inputs that TOSA needs as constants (weights, shapes, axes, pads)\n"
            "are bound to their -i files, and dimensions the model leaves symbolic take the files'\n"
            "sizes. Input data is converted to the input's type (int64 ids to INT32, float64 to FP32,\n"
            "...); a value that does not fit is an error naming it. Outputs are written\n"
            "as DIR/<output name>.npy (with -o) or summarised on stdout. A quantized program's\n"
            "MODEL.tosa.quant.json sidecar (float in, dequantized float out) must be the one written\n"
            "with it: a sidecar of another program is refused. MODEL may also be an artifact\n"
            "directory ('tosac compile --target ethos-...'): its segments run in order, NPU ones on tosac's\n"
            "runtime, and inputs/outputs use the manifest's scales as a .quant.json sidecar would.\n"
            "\n"
            "options:\n"
            "  -i, --input NAME=FILE   .npy file for graph input NAME (every input needs one)\n"
            "  -o, --output-dir DIR    write every output as DIR/<name>.npy\n"
            "  --input-shape NAME=DIMS (.onnx) static shape for graph input NAME, as in 'tosac compile'\n"
            "  --bind NAME=FILE.npy    (.onnx) make graph input NAME the constant in FILE.npy, as in\n"
            "                          'tosac compile' (an -i file of an input that must be constant\n"
            "                          is bound without it)\n"
            "  --profile               print the time per operator and per operator type (operators run\n"
            "                          unfused; medians over the invokes after the first of N > 1)\n"
            "  --repeat N              invoke N times (inputs rewritten each time; for --profile)\n"
            "  --time                  print the median wall time of one invoke (the first of N > 1 is a\n"
            "                          warm-up and not counted) to stderr\n"
            "  --threads N             threads for large operators (default 0: one per processor; the\n"
            "                          results are the same for every N)\n"
            "  --no-winograd           FP32 3x3 convolutions keep the direct path (TOSA's order of\n"
            "                          operations) instead of Winograd F(2x2,3x3), and INT8 ones the\n"
            "                          direct GEMM (the same bits either way) (docs/RUNTIME.md)\n"
            "  --precise_mode 1        compute floating point in fp64; FP outputs are written as <f8\n"
            "  --max-iterations N      a WHILE_LOOP running more than N iterations stops the run with\n"
            "                          UNPREDICTABLE (default 10000000)\n"
            "  --tosa_level L          EIGHTK (default) or NONE: level limits checked before running\n"
            "\n"
            "reference-model interface (tosa_reference_model compatible):\n"
            "  --test_desc FILE        desc.json with tosa_file, ifm_name/ifm_file, ofm_name/ofm_file\n"
            "                          and optionally variable_name/variable_file\n"
            "  --tosa_file, --ifm_name, --ifm_file, --ofm_name, --ofm_file, --variable_name,\n"
            "  --variable_file         override the desc fields (comma-separated lists); with all of\n"
            "                          tosa_file/ifm_*/ofm_* given no desc.json is needed\n"
            "  --flatbuffer_dir D      where tosa_file and the input files are (default: desc's dir)\n"
            "  --output_dir D          where ofm files are written (default: desc's dir)\n"
            "  --initialize_variable_tensor_from_numpy 1\n"
            "                          load variable_file into the variables before running; otherwise\n"
            "                          their final values are written to variable_file after the run\n"
            "\n"
            "exit status: 0 VALID (outputs written); 1 UNPREDICTABLE (a REQUIRE or level check failed);\n"
            "2 ERROR (an ERROR_IF rule failed); 3 tool failure (bad command line, unreadable files).\n");
}

typedef struct strlist {
    const char *item[MAX_LIST];
    uint32_t n;
} strlist;

typedef struct run_args {
    const char *model, *desc, *out_dir, *flatbuffer_dir;
    strlist ifm_name, ifm_file, ofm_name, ofm_file, var_name, var_file;
    bool have_ifm_name, have_ifm_file, have_ofm_name, have_ofm_file, have_var_name, have_var_file;
    bool profile, precise, init_vars, time, no_winograd;
    tosac_level level;
    long repeat;
    uint32_t threads;
    uint64_t max_iterations;
    cli_model_opts mopts; /* --input-shape, --bind (an .onnx MODEL) */
    tosac_arena arena; /* strings split from comma lists and read from desc.json */
} run_args;

static int fail(const char *fmt, const char *a, const char *b)
{
    fprintf(stderr, "tosac run: ");
    fprintf(stderr, fmt, a, b ? b : "");
    fputc('\n', stderr);
    return RUN_FAILURE;
}

/* Splits "a,b,c" into the list (appending). */
static bool split_list(run_args *a, const char *s, strlist *l)
{
    const char *p = s;
    for (;;) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (l->n >= MAX_LIST) return false;
        char *item = tosac_arena_strndup(&a->arena, p, n);
        if (!item) return false;
        l->item[l->n++] = item;
        if (!end) return true;
        p = end + 1;
    }
}

static bool parse_flag01(const char *v, bool *out)
{
    if (!strcmp(v, "1") || !strcmp(v, "true")) *out = true;
    else if (!strcmp(v, "0") || !strcmp(v, "false")) *out = false;
    else return false;
    return true;
}

/* Applies one "--name value" option; returns -1 to go on, or an exit status. */
static int set_value(run_args *a, const char *name, const char *v)
{
    static const struct {
        const char *name;
        size_t list, have; /* offsets of the strlist and its flag in run_args */
    } lists[] = {
        {"--ifm_name", offsetof(run_args, ifm_name), offsetof(run_args, have_ifm_name)},
        {"--ifm_file", offsetof(run_args, ifm_file), offsetof(run_args, have_ifm_file)},
        {"--ofm_name", offsetof(run_args, ofm_name), offsetof(run_args, have_ofm_name)},
        {"--ofm_file", offsetof(run_args, ofm_file), offsetof(run_args, have_ofm_file)},
        {"--variable_name", offsetof(run_args, var_name), offsetof(run_args, have_var_name)},
        {"--variable_file", offsetof(run_args, var_file), offsetof(run_args, have_var_file)},
    };
    for (size_t k = 0; k < sizeof lists / sizeof lists[0]; k++) {
        if (strcmp(name, lists[k].name)) continue;
        strlist *l = (strlist *)((char *)a + lists[k].list);
        *(bool *)((char *)a + lists[k].have) = true;
        l->n = 0;
        if (!split_list(a, v, l)) return fail("%s: too many entries or out of memory%s", name, NULL);
        return -1;
    }
    if (!strcmp(name, "-i") || !strcmp(name, "--input")) {
        const char *eq = strchr(v, '=');
        if (!eq || eq == v || !eq[1]) return fail("-i expects NAME=FILE.npy, got '%s'%s", v, NULL);
        if (a->ifm_name.n >= MAX_LIST) return fail("too many inputs%s%s", "", NULL);
        const char *n = tosac_arena_strndup(&a->arena, v, (size_t)(eq - v));
        if (!n) return fail("out of memory%s%s", "", NULL);
        a->ifm_name.item[a->ifm_name.n++] = n;
        a->ifm_file.item[a->ifm_file.n++] = eq + 1;
    } else if (!strcmp(name, "-o") || !strcmp(name, "--output-dir") || !strcmp(name, "--output_dir")) {
        a->out_dir = v;
    } else if (!strcmp(name, "--test_desc")) {
        a->desc = v;
    } else if (!strcmp(name, "--tosa_file")) {
        a->model = v;
    } else if (!strcmp(name, "--flatbuffer_dir")) {
        a->flatbuffer_dir = v;
    } else if (!strcmp(name, "--precise_mode") || !strcmp(name, "-p")) {
        if (!parse_flag01(v, &a->precise)) return fail("--precise_mode expects 0 or 1, got '%s'%s", v, NULL);
    } else if (!strcmp(name, "--initialize_variable_tensor_from_numpy")) {
        if (!parse_flag01(v, &a->init_vars)) return fail("%s expects 0 or 1, got '%s'", name, v);
    } else if (!strcmp(name, "--tosa_level")) {
        if (!strcasecmp(v, "EIGHTK") || !strcasecmp(v, "8K")) a->level = TOSAC_LEVEL_8K;
        else if (!strcasecmp(v, "NONE")) a->level = TOSAC_LEVEL_NONE;
        else return fail("--tosa_level expects EIGHTK or NONE, got '%s'%s", v, NULL);
    } else if (!strcmp(name, "--max-iterations")) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(v, &end, 10);
        if (*end || !*v || v[0] == '-' || errno || n == 0)
            return fail("--max-iterations expects a positive count, got '%s'%s", v, NULL);
        a->max_iterations = n;
    } else if (!strcmp(name, "--threads")) {
        char *end;
        long n = strtol(v, &end, 10);
        if (*end || !*v || n < 0 || n > 64) return fail("--threads expects 0..64, got '%s'%s", v, NULL);
        a->threads = (uint32_t)n;
    } else if (!strcmp(name, "--repeat")) {
        char *end;
        a->repeat = strtol(v, &end, 10);
        if (*end || a->repeat < 1 || a->repeat > 1000000) return fail("--repeat expects 1..1000000, got '%s'%s", v, NULL);
    }
    return -1;
}

/* Returns -1 when the arguments are fine, or an exit status (help printed or bad usage). */
static int parse_args(run_args *a, int argc, char **argv)
{
    static const char *const k_values[] = {
        "-i", "--input", "-o", "--output-dir", "--output_dir", "--test_desc", "--tosa_file", "--flatbuffer_dir",
        "--precise_mode", "-p", "--tosa_level", "--repeat", "--threads", "--max-iterations", "--initialize_variable_tensor_from_numpy",
        "--ifm_name", "--ifm_file", "--ofm_name", "--ofm_file", "--variable_name", "--variable_file",
    };
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (cli_is(arg, "-h", "--help")) {
            cli_run_help(stdout);
            return RUN_VALID;
        }
        if (cli_is(arg, "--profile", NULL)) {
            a->profile = true;
            continue;
        }
        if (cli_is(arg, "--time", NULL)) {
            a->time = true;
            continue;
        }
        if (cli_is(arg, "--no-winograd", NULL)) {
            a->no_winograd = true;
            continue;
        }
        int mo = cli_model_opt(CMD, &a->mopts, argc, argv, &i);
        if (mo < 0) return RUN_FAILURE;
        if (mo > 0) continue;
        bool matched = false;
        for (size_t k = 0; k < sizeof k_values / sizeof k_values[0] && !matched; k++) {
            const char *v = NULL;
            int m = cli_opt_value(CMD, argc, argv, &i, k_values[k], &v);
            if (m < 0) return RUN_FAILURE;
            if (m == 0) continue;
            matched = true;
            int rc = set_value(a, k_values[k], v);
            if (rc >= 0) return rc;
        }
        if (matched) continue;
        if (arg[0] == '-' && arg[1]) return fail("unknown option '%s' (run 'tosac run --help')%s", arg, NULL);
        if (a->model) return fail("expected one MODEL, got '%s' and '%s'", a->model, arg);
        a->model = arg;
    }
    return -1;
}

/* ------------------------------------------------------------------------------------------- */
/* desc.json and paths                                                                           */

static char *read_text(const char *path, size_t limit, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n + 4096 + 1 > cap) {
            size_t ncap = cap ? cap * 2 : 8192;
            if (ncap > limit + 1) ncap = limit + 1;
            if (ncap <= n + 1) break; /* over the limit */
            char *nb = realloc(buf, ncap);
            if (!nb) break;
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0) break;
    }
    bool ok = !ferror(f) && feof(f);
    fclose(f);
    if (!ok) {
        free(buf);
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

/* Fills an unset list from the desc's array of strings. */
static int desc_list(run_args *a, const tosac_json *desc, const char *key, strlist *l, bool have, const char *path)
{
    if (have) return -1;
    const tosac_json *v = tosac_json_get(desc, key);
    if (!v) return -1;
    if (v->kind != TOSAC_JSON_ARRAY || v->n > MAX_LIST) return fail("%s: '%s' must be a list of strings", path, key);
    l->n = 0;
    for (uint32_t i = 0; i < v->n; i++) {
        if (v->items[i]->kind != TOSAC_JSON_STRING) return fail("%s: '%s' must be a list of strings", path, key);
        l->item[l->n++] = v->items[i]->str;
    }
    (void)a;
    return -1;
}

static int load_desc(run_args *a)
{
    size_t len = 0;
    char *text = read_text(a->desc, 16u << 20, &len);
    if (!text) return fail("%s: cannot read (missing, unreadable or larger than 16 MiB): %s", a->desc, strerror(errno));
    tosac_diag *d = tosac_diag_create();
    tosac_json *desc = NULL;
    tosac_status st = tosac_json_parse(text, len, a->desc, &a->arena, &desc, d);
    free(text);
    if (st != TOSAC_OK) {
        for (size_t i = 0; i < tosac_diag_count(d); i++) fprintf(stderr, "%s\n", tosac_diag_message(d, i, NULL));
        tosac_diag_destroy(d);
        return RUN_FAILURE;
    }
    tosac_diag_destroy(d);
    if (desc->kind != TOSAC_JSON_OBJECT) return fail("%s: the test description must be a JSON object%s", a->desc, NULL);
    if (!a->model) {
        const tosac_json *t = tosac_json_get(desc, "tosa_file");
        if (!t || t->kind != TOSAC_JSON_STRING) return fail("%s: 'tosa_file' (a string) is missing%s", a->desc, NULL);
        a->model = t->str;
    }
    int rc;
    if ((rc = desc_list(a, desc, "ifm_name", &a->ifm_name, a->have_ifm_name, a->desc)) >= 0) return rc;
    if ((rc = desc_list(a, desc, "ifm_file", &a->ifm_file, a->have_ifm_file, a->desc)) >= 0) return rc;
    if ((rc = desc_list(a, desc, "ofm_name", &a->ofm_name, a->have_ofm_name, a->desc)) >= 0) return rc;
    if ((rc = desc_list(a, desc, "ofm_file", &a->ofm_file, a->have_ofm_file, a->desc)) >= 0) return rc;
    if ((rc = desc_list(a, desc, "variable_name", &a->var_name, a->have_var_name, a->desc)) >= 0) return rc;
    if ((rc = desc_list(a, desc, "variable_file", &a->var_file, a->have_var_file, a->desc)) >= 0) return rc;
    return -1;
}

/* dir/name unless name is absolute or dir is NULL/empty; arena-allocated. */
static const char *join(run_args *a, const char *dir, const char *name)
{
    if (!dir || !*dir || name[0] == '/') return name;
    size_t n = strlen(dir) + strlen(name) + 2;
    char *s = tosac_arena_alloc(&a->arena, n);
    if (s) snprintf(s, n, "%s/%s", dir, name);
    return s ? s : name;
}

static const char *dirname_of(run_args *a, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash) return ".";
    if (slash == path) return "/";
    return tosac_arena_strndup(&a->arena, path, (size_t)(slash - path));
}

/* ------------------------------------------------------------------------------------------- */
/* Running                                                                                       */

/* --profile: each operator's time in every counted invoke (the first of several is a warm-up:
   cold caches, first-touch pages, sleeping threads), one row per recorded invoke; with more than
   PROFILE_ROWS counted invokes every stride-th is recorded. An operator inside a loop adds up. */
#define PROFILE_ROWS 1000
typedef struct op_times {
    uint64_t *ns; /* [rows][n] */
    uint32_t n;
    long rows, stride, first;
    uint64_t *row; /* the current invoke's row, NULL when it is not recorded */
} op_times;

static void on_op(void *user, uint32_t op_index, uint32_t op, uint64_t ns)
{
    op_times *t = user;
    (void)op;
    if (t->row && op_index < t->n) t->row[op_index] += ns;
}

static int status_exit(tosac_status s)
{
    switch (s) {
    case TOSAC_OK: return RUN_VALID;
    case TOSAC_ERR_UNPREDICTABLE: return RUN_UNPREDICTABLE;
    case TOSAC_ERR_TOSA_ERROR: return RUN_ERROR;
    default: return RUN_FAILURE;
    }
}

static void print_diag(const char *path, tosac_diag *d, const char *kind)
{
    for (size_t i = 0; i < tosac_diag_count(d); i++) {
        tosac_status code = TOSAC_OK;
        const char *m = tosac_diag_message(d, i, &code);
        cli_print_finding(path, code == TOSAC_OK ? "note" : kind, m);
    }
    tosac_diag_clear(d);
}

static void print_graph_result(int rc)
{
    static const char *const names[] = {"VALID", "UNPREDICTABLE", "ERROR"};
    if (rc >= RUN_VALID && rc <= RUN_ERROR) fprintf(stderr, "Graph result: %s.\n", names[rc]);
}

/* The codes of a quantized program's boundary tensor (TOSA encoding, little-endian): entry type
   `q->type` (uint8 codes live in INT8 tensors, docs/QUANT.md). */
static int32_t get_code(const tosac_quant_io *q, const uint8_t *bytes, size_t k)
{
    switch (q->type) {
    case TOSAC_QUANT_IO_UINT8: return bytes[k];
    case TOSAC_QUANT_IO_INT16: return (int16_t)(uint16_t)(bytes[2 * k] | bytes[2 * k + 1] << 8);
    default: return (int8_t)bytes[k];
    }
}

static size_t code_bytes(const tosac_quant_io *q) { return q->type == TOSAC_QUANT_IO_INT16 ? 2 : 1; }

/* Reads FILE.npy for a tensor of `info` and converts it to TOSA encoding (caller frees); `q`: the
   input's entry in a quantization sidecar, or NULL. */
static bool load_npy(const char *path, const char *what, const tosac_tensor_info *info, const tosac_quant_io *q,
                     uint8_t **bytes, size_t *n, tosac_diag *d)
{
    tosac_npy npy;
    if (tosac_npy_read_file(path, &npy, d) != TOSAC_OK) return false;
    size_t nans = 0;
    char label[4200];
    snprintf(label, sizeof label, "%s for %s '%s'", path, what, info->name);
    bool ok = tosac_quant_input_bytes(&npy, info, q, label, what, bytes, n, &nans, d) == TOSAC_OK;
    /* the program cannot tell a NaN from a real value once quantized: say so */
    if (ok && nans) {
        int32_t lo, hi;
        tosac_quant_io_range(q->type, &lo, &hi);
        fprintf(stderr,
                "%s: warning: %zu of its %lld values for %s '%s' are NaN; they became the zero point %d "
                "(the code of 0.0)\n",
                path, nans, (long long)npy.count, what, info->name, tosac_quant_quantize(NAN, q->q, lo, hi));
    }
    tosac_npy_free(&npy);
    return ok;
}

static bool write_npy(const char *path, const tosac_tensor_info *info, const uint8_t *bytes, size_t n,
                      const tosac_quant_io *q, tosac_diag *d)
{
    if (tosac_quant_io_holds_codes(q, info->dtype)) { /* dequantized float32 */
        n /= code_bytes(q);
        float *f = tosac_malloc(n ? n * sizeof *f : 1);
        if (!f) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory"), false;
        for (size_t k = 0; k < n; k++)
            f[k] = (float)tosac_quant_dequantize(get_code(q, bytes, k), q->q);
        bool ok = tosac_npy_write_file(path, "<f4", info->rank, info->shape, f, n * sizeof *f, d) == TOSAC_OK;
        tosac_free(f, n ? n * sizeof *f : 1);
        return ok;
    }
    if (info->f64)
        return tosac_npy_write_file(path, "<f8", info->rank, info->shape, bytes, n, d) == TOSAC_OK;
    return tosac_npy_write_tosa(path, info->dtype, info->rank, info->shape, bytes, n, d) == TOSAC_OK;
}

/* A short "INT8[1,4] = [1, 2, ...]" line for outputs not written to files; a quantized program's
   output (`q`, its sidecar entry) is shown dequantized, as the .npy files are written. */
static void print_summary(const tosac_tensor_info *info, const uint8_t *bytes, size_t n, const tosac_quant_io *q)
{
    if (tosac_quant_io_holds_codes(q, info->dtype)) {
        printf("%s: FP32[", info->name);
        for (int32_t k = 0; k < info->rank; k++) printf("%s%" PRId64, k ? "," : "", info->shape[k]);
        printf("] (%s codes dequantized) = [", tosac_quant_io_type_name(q->type));
        int64_t show = info->nelem < 8 ? info->nelem : 8;
        for (int64_t i = 0; i < show && (size_t)i < n / code_bytes(q); i++)
            printf("%s%.6g", i ? ", " : "", tosac_quant_dequantize(get_code(q, bytes, (size_t)i), q->q));
        printf("%s]\n", info->nelem > show ? ", ..." : "");
        return;
    }
    printf("%s: %s[", info->name, info->f64 ? "FP64" : tosac_dtype_name(info->dtype));
    for (int32_t k = 0; k < info->rank; k++) printf("%s%" PRId64, k ? "," : "", info->shape[k]);
    printf("] = [");
    int64_t show = info->nelem < 8 ? info->nelem : 8;
    for (int64_t i = 0; i < show; i++) {
        int64_t iv;
        double fv;
        if (info->f64) {
            memcpy(&fv, bytes + 8 * i, 8);
            printf("%s%.9g", i ? ", " : "", fv);
        } else if (tosac_encoded_fp(info->dtype, bytes, n, (uint64_t)i, &fv)) {
            printf("%s%.9g", i ? ", " : "", fv);
        } else if (tosac_encoded_int(info->dtype, bytes, n, (uint64_t)i, &iv)) {
            printf("%s%" PRId64, i ? ", " : "", iv);
        }
    }
    printf("%s]\n", info->nelem > show ? ", ..." : "");
}

static int cmp_double(const void *pa, const void *pb)
{
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

static double median_sorted(const double *v, long n)
{
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Per operator, the median of its recorded invokes' times; per type the sum of those; the total
   is the median of the recorded invokes' sums. Microseconds. */
static bool print_profile(const tosac_program *p, const op_times *t)
{
    double *v = malloc((size_t)t->rows * sizeof *v), *med = calloc(t->n ? t->n : 1, sizeof *med);
    if (!v || !med) {
        free(v);
        free(med);
        return false;
    }
    double by_type[TOSAC_OP_COUNT] = {0}, sum = 0;
    uint32_t count[TOSAC_OP_COUNT] = {0};
    for (uint32_t i = 0; i < t->n; i++) {
        tosac_op_desc od;
        if (tosac_program_op_info(p, i, &od) != TOSAC_OK || od.op >= TOSAC_OP_COUNT) continue;
        for (long r = 0; r < t->rows; r++) v[r] = (double)t->ns[(size_t)r * t->n + i] / 1e3;
        qsort(v, (size_t)t->rows, sizeof *v, cmp_double);
        med[i] = median_sorted(v, t->rows);
        sum += med[i];
        by_type[od.op] += med[i];
        count[od.op]++;
    }
    for (long r = 0; r < t->rows; r++) {
        uint64_t ns = 0;
        for (uint32_t i = 0; i < t->n; i++) ns += t->ns[(size_t)r * t->n + i];
        v[r] = (double)ns / 1e3;
    }
    qsort(v, (size_t)t->rows, sizeof *v, cmp_double);
    double total = median_sorted(v, t->rows);
    printf("\nper operator (us per invoke, median of %ld invoke%s%s):\n  %5s  %-22s %-12s %10s %6s\n", t->rows,
           t->rows == 1 ? "" : "s", t->first ? " after a warm-up" : "", "index", "op", "block", "time", "%");
    for (uint32_t i = 0; i < t->n; i++) {
        tosac_op_desc od;
        if (tosac_program_op_info(p, i, &od) != TOSAC_OK) continue;
        if (od.op == TOSAC_OP_CONST || od.op == TOSAC_OP_CONST_SHAPE) continue;
        printf("  %5u  %-22s %-12s %10.2f %5.1f%%\n", od.index, tosac_op_name(od.op), od.block, med[i],
               sum > 0 ? 100.0 * med[i] / sum : 0.0);
    }
    printf("\nper operator type (sums of the medians):\n  %-22s %6s %10s %6s\n", "op", "count", "time", "%");
    for (;;) { /* largest first */
        uint32_t best = 0;
        for (uint32_t op = 1; op < TOSAC_OP_COUNT; op++)
            if (count[op] && (!best || by_type[op] > by_type[best])) best = op;
        if (!best) break;
        printf("  %-22s %6u %10.2f %5.1f%%\n", tosac_op_name(best), count[best], by_type[best],
               sum > 0 ? 100.0 * by_type[best] / sum : 0.0);
        count[best] = 0;
    }
    printf("\ntotal: %.2f us per invoke (median; the operators' medians add up to %.2f)\n", total, sum);
    free(v);
    free(med);
    return true;
}

/* Output or variable i in the TOSA encoding, through one of the runtime's two-call getters (size,
   then bytes): a malloc'd buffer of *n bytes, or NULL when out of memory. */
typedef tosac_status (*get_tosa_fn)(const tosac_program *p, uint32_t i, void *buf, size_t cap, size_t *n);
static uint8_t *fetch_tosa(const tosac_program *p, uint32_t i, get_tosa_fn get, size_t *n)
{
    *n = 0;
    get(p, i, NULL, 0, n);
    uint8_t *buf = malloc(*n ? *n : 1);
    if (buf) get(p, i, buf, *n, n);
    return buf;
}

static bool is_onnx(const char *path)
{
    size_t n = strlen(path);
    return n >= 5 && !strcmp(path + n - 5, ".onnx");
}

/* Every extension but dynamic shapes: an .onnx model runs without a deployment target. */
static const char *run_target(void)
{
    static char buf[256];
    if (buf[0]) return buf;
    size_t n = (size_t)snprintf(buf, sizeof buf, "TOSA-1.0+INT+FP");
#define TOSAC_X(E, name)                                                                          \
    if (TOSAC_EXT_##E != TOSAC_EXT_DYNAMIC && n < sizeof buf)                                     \
        n += (size_t)snprintf(buf + n, sizeof buf - n, "+%s", name);
    TOSAC_EXTENSIONS(TOSAC_X)
#undef TOSAC_X
    return buf;
}

/*
 * An .onnx MODEL compiled in memory (tosac_driver_compile_file, as `tosac compile` does) with the
 * --input-shape/--bind options and the -i files as feeds: inputs that must be constant are bound
 * to their files, symbolic dims take the files' sizes. Returns the compiled model (the caller
 * runs tosac_compiled_program and skips the -i files of bound inputs), or NULL after printing why.
 */
static tosac_compiled *compile_onnx(run_args *a, const char *path, const char *in_dir, tosac_outset *os)
{
    tosac_diag *d = tosac_diag_create();
    uint32_t nf = a->ifm_name.n;
    tosac_npy *arrays = calloc(nf ? nf : 1, sizeof *arrays);
    tosac_compile_binding *feeds = calloc(nf ? nf : 1, sizeof *feeds);
    tosac_compiled *c = NULL;
    bool ok = d && arrays && feeds;
    if (!ok) fprintf(stderr, "tosac run: out of memory\n");
    if (ok) ok = cli_model_opts_load(CMD, &a->mopts, os, d);
    for (uint32_t k = 0; k < nf && ok; k++) {
        const char *file = join(a, in_dir, a->ifm_file.item[k]);
        ok = cli_out_input(os, file) && tosac_npy_read_file(file, &arrays[k], d) == TOSAC_OK;
        if (!ok) print_diag(file, d, "error");
        feeds[k].name = a->ifm_name.item[k];
        feeds[k].value = &arrays[k];
    }
    if (ok) {
        tosac_driver_opts o = tosac_driver_opts_default();
        o.target = run_target();
        o.n_shapes = (size_t)a->mopts.n_shapes;
        o.shapes = a->mopts.shapes;
        o.n_bindings = (size_t)a->mopts.n_binds;
        o.bindings = a->mopts.binds;
        o.n_feeds = nf;
        o.feeds = feeds;
        o.on_input = cli_external_input;
        o.on_input_user = os;
        tosac_status st = tosac_driver_compile_file(path, &o, &c, d);
        print_diag(path, d, st == TOSAC_OK ? "note" : "error");
        if (st != TOSAC_OK) {
            c = NULL;
            fprintf(stderr, "tosac run: %s: not compiled, nothing was run\n", path);
        }
    }
    for (uint32_t k = 0; arrays && k < nf; k++) tosac_npy_free(&arrays[k]);
    free(arrays);
    free(feeds);
    tosac_diag_destroy(d);
    return c;
}

/* The entry for `name` in a sidecar list, or NULL. */
static const tosac_quant_io *find_io(const tosac_quant_io *list, uint32_t n, const char *name)
{
    for (uint32_t k = 0; k < n; k++)
        if (!strcmp(list[k].name, name)) return &list[k];
    return NULL;
}

/* A sidecar is used only with the program it was written for: the size and hash it records must be
   the model file's (docs/QUANT.md). */
bool cli_sidecar_matches(const char *side, const char *model, const tosac_quant_iomap *q, tosac_diag *d)
{
    uint64_t h = 0, n = 0;
    if (tosac_hash_file(model, &h, &n, d) != TOSAC_OK) return false;
    if (!q->program_bytes)
        return !tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                               "%s: the sidecar does not record its program (written by an older tosac): compile the "
                               "model again",
                               side);
    if (q->program_bytes != n || q->program_fnv1a64 != h)
        return !tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                               "%s: the sidecar belongs to another program: it records a %llu-byte program with FNV-1a "
                               "%016llx, but %s has %llu bytes and FNV-1a %016llx; compile the model again (or remove "
                               "the stale sidecar)",
                               side, (unsigned long long)q->program_bytes, (unsigned long long)q->program_fnv1a64, model,
                               (unsigned long long)n, (unsigned long long)h);
    return true;
}

static int run_program(run_args *a, bool refmode)
{
    const char *base = a->desc ? dirname_of(a, a->desc) : NULL;
    const char *in_dir = refmode ? (a->flatbuffer_dir ? a->flatbuffer_dir : base) : NULL;
    const char *out_dir = refmode ? (a->out_dir ? a->out_dir : base) : a->out_dir;
    const char *model = join(a, in_dir, a->model);
    if (a->ifm_name.n != a->ifm_file.n) return fail("%s: ifm_name and ifm_file differ in length%s", a->desc ? a->desc : "tosac run", NULL);
    if (a->ofm_name.n != a->ofm_file.n) return fail("%s: ofm_name and ofm_file differ in length%s", a->desc ? a->desc : "tosac run", NULL);
    if (a->var_name.n != a->var_file.n) return fail("%s: variable_name and variable_file differ in length%s", a->desc ? a->desc : "tosac run", NULL);
    /* a second file for the same input would be ignored */
    for (uint32_t k = 0; k < a->ifm_name.n; k++)
        for (uint32_t j = 0; j < k; j++)
            if (!strcmp(a->ifm_name.item[j], a->ifm_name.item[k]))
                return fail("input '%s' is given twice (again with '%s')", a->ifm_name.item[k], a->ifm_file.item[k]);
    if (!refmode && tosac_artifact_is_dir(model)) /* a partitioned artifact (docs/TARGETS.md) */
        return cli_artifact_run(model, a->ifm_name.n, a->ifm_name.item, a->ifm_file.item, out_dir);
    if (out_dir && !refmode) {
        /* -o DIR is created when missing (one level, like mkdir): the parent must exist */
        struct stat st;
        if (stat(out_dir, &st) != 0 && mkdir(out_dir, 0777) != 0)
            return fail("%s: cannot create the output directory: %s", out_dir, strerror(errno));
        if (stat(out_dir, &st) != 0 || !S_ISDIR(st.st_mode)) return fail("%s: not a directory%s", out_dir, NULL);
    }

    /* every file written goes through one output set: none is an input, all appear together */
    tosac_outset *os = cli_outset_create();
    if (!os || !cli_out_input(os, model) || (a->desc && !cli_out_input(os, a->desc))) {
        tosac_outset_destroy(os);
        return RUN_FAILURE;
    }
    if (!is_onnx(model) && (a->mopts.n_shapes || a->mopts.n_binds)) {
        tosac_outset_destroy(os);
        return fail("%s: --input-shape and --bind apply to .onnx models (a .tosa program has its shapes and "
                    "constants)%s", model, NULL);
    }
    tosac_compiled *compiled = is_onnx(model) ? compile_onnx(a, model, in_dir, os) : NULL;
    tosac_graph *g = is_onnx(model) ? NULL : cli_read_graph(model, false);
    const tosac_graph *prog = compiled ? tosac_compiled_program(compiled) : g;
    if (!prog) {
        tosac_outset_destroy(os);
        return RUN_FAILURE;
    }
    tosac_diag *d = tosac_diag_create();
    /* MODEL.tosa.quant.json next to a quantized model: float in, float out (model spelling only;
       the reference-model spelling stays literal) */
    tosac_quant_iomap *qio = NULL;
    if (!refmode && d) {
        size_t len = strlen(model) + 12;
        char *side = tosac_arena_alloc(&a->arena, len);
        struct stat sst;
        if (side) snprintf(side, len, "%s.quant.json", model);
        if (side && stat(side, &sst) == 0 &&
            (!cli_out_input(os, side) || tosac_quant_iomap_read(side, &qio, d) != TOSAC_OK ||
             !cli_sidecar_matches(side, model, qio, d))) {
            print_diag(side, d, "error");
            tosac_graph_destroy(g);
            tosac_compiled_destroy(compiled);
            tosac_diag_destroy(d);
            tosac_quant_iomap_free(qio);
            tosac_outset_destroy(os);
            return RUN_FAILURE;
        }
    }
    tosac_program_opts opts = tosac_program_opts_default();
    /* like the reference model: every profile and extension, level checks only when asked */
    opts.validate.extensions = TOSAC_EXT_ALL;
    opts.validate.level = a->level;
    opts.precise = a->precise;
    opts.max_iterations = a->max_iterations;
    opts.threads = a->threads;
    opts.conv_direct = a->no_winograd;
    tosac_program *p = NULL;
    tosac_status st = tosac_program_create(prog, &opts, &p, d);
    tosac_graph_destroy(g);
    int rc = RUN_FAILURE;
    uint8_t **in_bytes = NULL;
    size_t *in_len = NULL;
    uint32_t n_in = 0;
    op_times times = {0};
    long repeat = a->repeat > 0 ? a->repeat : 1;
    if (st != TOSAC_OK) {
        print_diag(model, d, "error");
        rc = status_exit(st);
        print_graph_result(rc);
        goto done;
    }
    n_in = tosac_program_input_count(p);
    in_bytes = calloc(n_in ? n_in : 1, sizeof *in_bytes);
    in_len = calloc(n_in ? n_in : 1, sizeof *in_len);
    if (!in_bytes || !in_len) goto oom;
    for (uint32_t k = 0; k < a->ifm_name.n; k++)
        if (tosac_program_input_index(p, a->ifm_name.item[k]) < 0 && !tosac_compiled_bound(compiled, a->ifm_name.item[k])) {
            fprintf(stderr, "tosac run: '%s' is not an input of %s (inputs:", a->ifm_name.item[k], model);
            for (uint32_t i = 0; i < n_in; i++) {
                tosac_tensor_info info;
                if (tosac_program_input_info(p, i, &info) == TOSAC_OK) fprintf(stderr, " %s", info.name);
            }
            fprintf(stderr, ")\n");
            goto done;
        }
    for (uint32_t i = 0; i < n_in; i++) {
        tosac_tensor_info info;
        tosac_program_input_info(p, i, &info);
        uint32_t k = 0;
        while (k < a->ifm_name.n && strcmp(a->ifm_name.item[k], info.name)) k++;
        if (k == a->ifm_name.n) {
            fprintf(stderr, "tosac run: no file for input '%s' (%s, %" PRId64 " elements): give -i %s=FILE.npy\n",
                    info.name, tosac_dtype_name(info.dtype), info.nelem, info.name);
            goto done;
        }
        const char *path = join(a, in_dir, a->ifm_file.item[k]);
        const tosac_quant_io *q = qio ? find_io(qio->inputs, qio->n_inputs, info.name) : NULL;
        if (!cli_out_input(os, path)) goto done;
        if (!load_npy(path, "input", &info, q, &in_bytes[i], &in_len[i], d)) {
            print_diag(path, d, "error");
            goto done;
        }
    }
    for (uint32_t k = 0; k < a->var_name.n && a->init_vars; k++) {
        int32_t v = tosac_program_variable_index(p, a->var_name.item[k]);
        tosac_tensor_info info;
        uint8_t *bytes = NULL;
        size_t n = 0;
        const char *path = join(a, in_dir, a->var_file.item[k]);
        if (v < 0 || tosac_program_variable_info(p, (uint32_t)v, &info) != TOSAC_OK) {
            fail("'%s' is not a variable of %s", a->var_name.item[k], model);
            goto done;
        }
        if (!cli_out_input(os, path)) goto done;
        bool ok = load_npy(path, "variable", &info, NULL, &bytes, &n, d) &&
                  tosac_program_variable_set_tosa(p, (uint32_t)v, bytes, n, d) == TOSAC_OK;
        tosac_free(bytes, n);
        if (!ok) {
            print_diag(path, d, "error");
            goto done;
        }
    }
    if (a->profile) {
        long counted = a->repeat > 1 ? a->repeat - 1 : 1;
        times.n = tosac_program_op_count(p);
        times.first = a->repeat > 1 ? 1 : 0;
        times.stride = (counted + PROFILE_ROWS - 1) / PROFILE_ROWS;
        times.rows = (counted + times.stride - 1) / times.stride;
        times.ns = calloc((size_t)times.rows * (times.n ? times.n : 1), sizeof *times.ns);
        if (!times.ns) goto oom;
        tosac_program_set_op_callback(p, on_op, &times);
    }
    double *inv_ms = a->time ? calloc((size_t)repeat, sizeof *inv_ms) : NULL;
    if (a->time && !inv_ms) goto oom;
    for (long r = 0; r < repeat && st == TOSAC_OK; r++) {
        for (uint32_t i = 0; i < n_in && st == TOSAC_OK; i++) st = tosac_program_set_input_tosa(p, i, in_bytes[i], in_len[i], d);
        long c = r - times.first;
        times.row = times.ns && c >= 0 && c % times.stride == 0 ? times.ns + (size_t)(c / times.stride) * times.n : NULL;
        struct timespec t0, t1;
        if (inv_ms) clock_gettime(CLOCK_MONOTONIC, &t0);
        if (st == TOSAC_OK) st = tosac_program_invoke(p, d);
        if (inv_ms) {
            clock_gettime(CLOCK_MONOTONIC, &t1);
            inv_ms[r] = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        }
    }
    if (inv_ms && st == TOSAC_OK) {
        long first = repeat > 1 ? 1 : 0, n = repeat - first;
        qsort(inv_ms + first, (size_t)n, sizeof *inv_ms, cmp_double);
        double med = median_sorted(inv_ms + first, n);
        fprintf(stderr, "invoke: median %.4f ms, min %.4f ms over %ld invoke%s on %u thread%s\n", med, inv_ms[first], n,
                n == 1 ? "" : "s", tosac_program_threads(p), tosac_program_threads(p) == 1 ? "" : "s");
    }
    free(inv_ms);
    if (st != TOSAC_OK) {
        print_diag(model, d, st == TOSAC_ERR_UNPREDICTABLE ? "unpredictable" : "error");
        rc = status_exit(st);
        print_graph_result(rc);
        goto done;
    }

    /* outputs: the ofm lists (reference-model style), else every output */
    uint32_t n_out = refmode ? a->ofm_name.n : tosac_program_output_count(p);
    for (uint32_t k = 0; k < n_out; k++) {
        int32_t o = refmode ? tosac_program_output_index(p, a->ofm_name.item[k]) : (int32_t)k;
        tosac_tensor_info info;
        if (o < 0 || tosac_program_output_info(p, (uint32_t)o, &info) != TOSAC_OK) {
            fail("'%s' is not an output of %s", a->ofm_name.item[k], model);
            goto done;
        }
        size_t n;
        uint8_t *buf = fetch_tosa(p, (uint32_t)o, tosac_program_get_output_tosa, &n);
        if (!buf) goto oom;
        bool ok = true;
        if (refmode || out_dir) {
            const char *file = refmode ? a->ofm_file.item[k] : NULL;
            if (!file) { /* DIR/<name>.npy with path separators in the name replaced */
                size_t len = strlen(info.name) + 5;
                char *f = tosac_arena_alloc(&a->arena, len);
                if (f) {
                    snprintf(f, len, "%s.npy", info.name);
                    for (char *c = f; *c; c++)
                        if (*c == '/' || *c == '\\') *c = '_';
                }
                file = f ? f : "output.npy";
            }
            const char *path = join(a, out_dir, file), *wp = cli_out_add(os, path);
            ok = wp && write_npy(wp, &info, buf, n, qio ? find_io(qio->outputs, qio->n_outputs, info.name) : NULL, d);
            if (!ok) print_diag(path, d, "error");
        } else {
            print_summary(&info, buf, n, qio ? find_io(qio->outputs, qio->n_outputs, info.name) : NULL);
        }
        free(buf);
        if (!ok) goto done;
    }
    for (uint32_t k = 0; k < a->var_name.n && !a->init_vars; k++) {
        int32_t v = tosac_program_variable_index(p, a->var_name.item[k]);
        tosac_tensor_info info;
        if (v < 0 || tosac_program_variable_info(p, (uint32_t)v, &info) != TOSAC_OK) {
            fail("'%s' is not a variable of %s", a->var_name.item[k], model);
            goto done;
        }
        size_t n;
        uint8_t *buf = fetch_tosa(p, (uint32_t)v, tosac_program_variable_get_tosa, &n);
        if (!buf) goto oom;
        const char *path = join(a, out_dir, a->var_file.item[k]), *wp = cli_out_add(os, path);
        bool ok = wp && write_npy(wp, &info, buf, n, NULL, d);
        free(buf);
        if (!ok) {
            print_diag(path, d, "error");
            goto done;
        }
    }
    if (!cli_out_commit(os)) goto done;
    if (a->profile && !print_profile(p, &times)) goto oom;
    rc = RUN_VALID;
    goto done;
oom:
    fprintf(stderr, "tosac run: out of memory\n");
    rc = RUN_FAILURE;
done:
    for (uint32_t i = 0; in_bytes && i < n_in; i++) tosac_free(in_bytes[i], in_len[i]);
    free(in_bytes);
    free(in_len);
    free(times.ns);
    tosac_program_destroy(p);
    tosac_compiled_destroy(compiled);
    tosac_diag_destroy(d);
    tosac_quant_iomap_free(qio);
    tosac_outset_destroy(os);
    return rc;
}

int cli_run(int argc, char **argv)
{
    run_args a;
    memset(&a, 0, sizeof a);
    tosac_arena_init(&a.arena);
    a.level = TOSAC_LEVEL_NONE;
    int rc = parse_args(&a, argc, argv);
    if (rc < 0 && a.desc) rc = load_desc(&a);
    if (rc < 0) {
        bool refmode = a.desc || a.have_ifm_name || a.have_ifm_file || a.have_ofm_name || a.have_ofm_file;
        if (!a.model)
            rc = fail("missing MODEL (or --test_desc desc.json); run 'tosac run --help'%s%s", "", NULL);
        else
            rc = run_program(&a, refmode);
    }
    cli_model_opts_free(&a.mopts);
    tosac_arena_deinit(&a.arena);
    return rc;
}

/* The artifact runner (artifact.c) reads and writes .npy files as `tosac run` does. */
bool cli_run_load_npy(const char *path, const tosac_tensor_info *info, const tosac_quant_io *q, uint8_t **bytes,
                      size_t *n, tosac_diag *d)
{
    return load_npy(path, "input", info, q, bytes, n, d);
}

bool cli_run_write_npy(const char *path, const tosac_tensor_info *info, const uint8_t *bytes, size_t n,
                       const tosac_quant_io *q, tosac_diag *d)
{
    return write_npy(path, info, bytes, n, q, d);
}

void cli_run_print_summary(const tosac_tensor_info *info, const uint8_t *bytes, size_t n, const tosac_quant_io *q)
{
    print_summary(info, bytes, n, q);
}
