/*
 * tosac compile: lower an ONNX model to a TOSA 1.0 flatbuffer.
 *   tosac compile MODEL.onnx -o MODEL.tosa [--target TOSA-1.0+FP] [--input-shape NAME=DIMS]...
 *                 [--bind NAME=FILE.npy]... [--io-layout nchw|nhwc] [--dump-after PASS|all] [--report]
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli/cli.h"
#include "ir/graph.h"
#include "tosac/compile.h"
#include "tosac/npy.h"
#include "tosac/onnx.h"
#include "tosac/tosa_file.h"
#include "tosac/validate.h"

#define CMD "compile"
#define MAX_ITEMS 64

static const char *pass_list(void)
{
    static char buf[512];
    if (buf[0]) return buf;
    size_t n = 0;
    const char *const *names = tosac_compile_step_names();
    for (size_t k = 1; names[k] && n + 64 < sizeof buf; k++)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", k > 1 ? ", " : "", names[k]);
    return buf;
}

void cli_compile_help(FILE *out)
{
    fprintf(out,
            "usage: tosac compile MODEL.onnx -o MODEL.tosa [--target TOSA-1.0+FP] [--input-shape NAME=DIMS]...\n"
            "                     [--bind NAME=FILE.npy]... [--io-layout nchw|nhwc] [--dump-after PASS|all]\n"
            "                     [--verify-each] [--report]\n"
            "\n"
            "Converts an ONNX model into a TOSA 1.0 program (FP32 activations, int64 narrowed to int32)\n"
            "and validates it. The output file is written only when compilation succeeds.\n"
            "\n"
            "options:\n"
            "  -o, --output FILE         the .tosa file to write (required)\n"
            "  --target T                TOSA-1.0+FP (default), optionally with +INT (integer operators\n"
            "                            for the model's integer computations; nothing is quantized)\n"
            "                            and extensions: +bf16, +int16, +controlflow, ...; the program\n"
            "                            must be valid for exactly this target\n"
            "  --input-shape NAME=DIMS   static shape for graph input NAME, e.g. data=1x3x224x224\n"
            "                            (symbolic dimensions default to 1 otherwise)\n"
            "  --bind NAME=FILE.npy      make graph input NAME the constant stored in FILE.npy; needed\n"
            "                            when an input feeds a position TOSA wants constant (weights,\n"
            "                            shapes, axes, indices); the error message names such inputs\n"
            "  --io-layout L             nchw (default: the model's own layout) or nhwc: rank-4 graph\n"
            "                            inputs and outputs are NHWC, so no TRANSPOSE is left at the\n"
            "                            boundary of a CNN\n"
            "  --dump-after PASS|all     print the graph (text form) to stdout after that step: import,\n"
            "                            %s\n"
            "  --verify-each             validate the graph after every pass (always on in debug builds)\n"
            "  --report                  print a compile summary: op counts in and out, transposes,\n"
            "                            constants merged, IDENTITYs added and time per pass\n"
            "\n"
            "exit status: 0 success; 1 failure (errors name the file, node, op type and reason).\n",
            pass_list());
}

typedef struct compile_args {
    const char *out, *target, *io_layout, *dump_after;
    bool report, verify_each;
    const char *shape_arg[MAX_ITEMS], *bind_arg[MAX_ITEMS];
    int n_shapes, n_binds;
} compile_args;

static int compile_opt(void *ctx, int argc, char **argv, int *i)
{
    compile_args *a = ctx;
    const char *v;
    int m;
    if (cli_is(argv[*i], "--report", NULL)) {
        a->report = true;
        return 1;
    }
    if (cli_is(argv[*i], "--verify-each", NULL)) {
        a->verify_each = true;
        return 1;
    }
    if ((m = cli_opt_value(CMD, argc, argv, i, "--io-layout", &v)) != 0) {
        if (m > 0) a->io_layout = v;
        return m;
    }
    if ((m = cli_opt_value(CMD, argc, argv, i, "--dump-after", &v)) != 0) {
        if (m > 0) a->dump_after = v;
        return m;
    }
    if ((m = cli_opt_value(CMD, argc, argv, i, "-o", &v)) != 0 || (m = cli_opt_value(CMD, argc, argv, i, "--output", &v)) != 0) {
        if (m > 0) a->out = v;
        return m;
    }
    if ((m = cli_opt_value(CMD, argc, argv, i, "--target", &v)) != 0) {
        if (m > 0) a->target = v;
        return m;
    }
    if ((m = cli_opt_value(CMD, argc, argv, i, "--input-shape", &v)) != 0) {
        if (m < 0) return m;
        if (a->n_shapes >= MAX_ITEMS) return cli_usage_error(CMD, "too many --input-shape options"), -1;
        a->shape_arg[a->n_shapes++] = v;
        return 1;
    }
    if ((m = cli_opt_value(CMD, argc, argv, i, "--bind", &v)) != 0) {
        if (m < 0) return m;
        if (a->n_binds >= MAX_ITEMS) return cli_usage_error(CMD, "too many --bind options"), -1;
        a->bind_arg[a->n_binds++] = v;
        return 1;
    }
    return 0;
}

/* Splits "NAME=VALUE" (at the last '='); returns the name copy (malloc) and *value. */
static char *split_eq(const char *arg, const char **value)
{
    const char *eq = strrchr(arg, '=');
    if (!eq || eq == arg || !eq[1]) return NULL;
    char *name = malloc((size_t)(eq - arg) + 1);
    if (!name) return NULL;
    memcpy(name, arg, (size_t)(eq - arg));
    name[eq - arg] = '\0';
    *value = eq + 1;
    return name;
}

static bool parse_dims(const char *s, int64_t *dims, int *rank)
{
    *rank = 0;
    if (!strcmp(s, "scalar")) return true;
    for (;;) {
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (end == s || errno || v < 0 || v > INT32_MAX || *rank >= TOSAC_MAX_RANK) return false;
        dims[(*rank)++] = v;
        if (!*end) return true;
        if (*end != 'x' && *end != 'X' && *end != ',') return false;
        s = end + 1;
    }
}

static void print_diag(const char *path, tosac_diag *d)
{
    for (size_t k = 0; k < tosac_diag_count(d); k++) {
        tosac_status code = TOSAC_OK;
        const char *msg = tosac_diag_message(d, k, &code);
        cli_print_finding(path, code == TOSAC_OK ? "note" : "error", msg);
    }
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void dump_graph(void *ctx, const char *step, const tosac_graph *g)
{
    (void)ctx;
    char *text = tosac_graph_print(g);
    printf("// ---- after %s ----\n%s", step, text ? text : "(out of memory)\n");
    tosac_string_free(text);
}

/* Op type counts of the ONNX graph ("in") and of the TOSA program ("out"), then the steps. */
static void print_report(const char *path, const char *out_path, const tosac_onnx_model *m, const tosac_graph *g,
                         const tosac_compile_report *r)
{
    const tosac_onnx_graph *og = m->graph;
    const tosac_block *b = g->regions[0]->blocks[0];
    printf("%s -> %s\n", path, out_path);
    printf("in:  %zu ONNX nodes, %zu initializers\n", og->n_nodes, og->n_initializers);
    for (size_t k = 0; k < og->n_nodes; k++) {
        bool seen = false;
        for (size_t j = 0; j < k && !seen; j++) seen = !strcmp(og->nodes[j].op_type, og->nodes[k].op_type);
        if (seen) continue;
        unsigned cnt = 0;
        for (size_t j = k; j < og->n_nodes; j++) cnt += !strcmp(og->nodes[j].op_type, og->nodes[k].op_type);
        printf("  %-22s %u\n", og->nodes[k].op_type, cnt);
    }
    printf("out: %u TOSA operators, %u tensors, %u inputs, %u outputs\n", b->n_nodes, b->n_tensors, b->n_inputs,
           b->n_outputs);
    unsigned counts[TOSAC_OP_COUNT] = {0};
    for (uint32_t k = 0; k < b->n_nodes; k++)
        if (b->nodes[k]->op < TOSAC_OP_COUNT) counts[b->nodes[k]->op]++;
    for (unsigned k = 0; k < TOSAC_OP_COUNT; k++)
        if (counts[k]) printf("  %-22s %u\n", tosac_op_name(k), counts[k]);
    printf("transposes: %u after import, %u in the program\n", r->transposes_imported, r->transposes_final);
    printf("constants merged: %u (%llu bytes saved)\n", r->consts_merged, (unsigned long long)r->dedup_bytes_saved);
    printf("identities for repeated outputs: %u\n", r->identities_added);
    printf("%-20s %10s %8s %8s\n", "step", "ms", "ops", "changes");
    double total = 0;
    for (uint32_t k = 0; k < r->n_steps; k++) {
        printf("%-20s %10.3f %8u %8u\n", r->steps[k].name, r->steps[k].ms, r->steps[k].ops, r->steps[k].changes);
        total += r->steps[k].ms;
    }
    printf("%-20s %10.3f\n", "total", total);
}

int cli_compile(int argc, char **argv)
{
    compile_args a;
    memset(&a, 0, sizeof a);
    const char *path;
    int rc = cli_parse_file_args(CMD, argc, argv, cli_compile_help, compile_opt, &a, &path);
    if (rc != CLI_PARSED) return rc;
    if (!a.out) return cli_usage_error(CMD, "missing -o MODEL.tosa");
    uint32_t profiles = TOSAC_PROFILE_FP, extensions = 0;
    if (a.target) {
        tosac_diag *td = tosac_diag_create();
        tosac_status ts = td ? tosac_target_parse(a.target, &profiles, &extensions, td) : TOSAC_ERR_NOMEM;
        const char *msg = td && tosac_diag_count(td) ? tosac_diag_message(td, 0, NULL) : "out of memory";
        int bad = ts != TOSAC_OK ? cli_usage_error(CMD, "%s", msg) : 0;
        tosac_diag_destroy(td);
        if (bad) return bad;
    }
    if (a.io_layout && strcasecmp(a.io_layout, "nchw") && strcasecmp(a.io_layout, "nhwc"))
        return cli_usage_error(CMD, "unknown --io-layout '%s' (nchw or nhwc)", a.io_layout);
    if (a.dump_after) {
        bool known = !strcmp(a.dump_after, "all");
        for (const char *const *n = tosac_compile_step_names(); *n; n++) known |= !strcmp(*n, a.dump_after);
        if (!known) return cli_usage_error(CMD, "unknown pass '%s' for --dump-after (all, import, %s)", a.dump_after, pass_list());
    }

    tosac_compile_shape shapes[MAX_ITEMS];
    int64_t dims[MAX_ITEMS][TOSAC_MAX_RANK];
    tosac_compile_binding binds[MAX_ITEMS];
    tosac_npy arrays[MAX_ITEMS];
    char *names[2 * MAX_ITEMS];
    int n_names = 0, n_arrays = 0;
    memset(arrays, 0, sizeof arrays);
    tosac_diag *d = tosac_diag_create();
    tosac_onnx_model *m = NULL;
    tosac_graph *g = NULL;
    rc = CLI_EXIT_FAILURE;
    if (!d) {
        fprintf(stderr, "tosac: out of memory\n");
        return CLI_EXIT_FAILURE;
    }
    for (int k = 0; k < a.n_shapes; k++) {
        const char *v;
        char *name = split_eq(a.shape_arg[k], &v);
        if (!name || !parse_dims(v, dims[k], &shapes[k].rank)) {
            free(name);
            cli_usage_error(CMD, "bad --input-shape '%s' (expected NAME=1x3x224x224)", a.shape_arg[k]);
            goto out;
        }
        names[n_names++] = name;
        shapes[k].name = name;
        shapes[k].dims = dims[k];
    }
    for (int k = 0; k < a.n_binds; k++) {
        const char *v;
        char *name = split_eq(a.bind_arg[k], &v);
        if (!name) {
            cli_usage_error(CMD, "bad --bind '%s' (expected NAME=FILE.npy)", a.bind_arg[k]);
            goto out;
        }
        names[n_names++] = name;
        if (tosac_npy_read_file(v, &arrays[k], d) != TOSAC_OK) {
            print_diag(v, d);
            goto out;
        }
        n_arrays = k + 1;
        binds[k].name = name;
        binds[k].value = &arrays[k];
    }
    double t_read = now_ms();
    if (tosac_onnx_read_file(path, NULL, &m, d) != TOSAC_OK) {
        print_diag(path, d);
        goto out;
    }
    t_read = now_ms() - t_read;
    tosac_compile_report report;
    tosac_compile_opts o = {
        .profiles = profiles,
        .extensions = extensions,
        .n_shapes = (size_t)a.n_shapes,
        .shapes = shapes,
        .n_bindings = (size_t)a.n_binds,
        .bindings = binds,
        .io_nhwc = a.io_layout && !strcasecmp(a.io_layout, "nhwc"),
        .verify_each = a.verify_each,
        .report = &report,
        .dump_after = a.dump_after,
        .dump = dump_graph,
    };
    tosac_status s = tosac_onnx_compile(m, &o, &g, d);
    print_diag(path, d);
    if (s != TOSAC_OK) {
        if (!tosac_diag_count(d)) cli_print_finding(path, "error", tosac_status_str(s));
        goto out;
    }
    tosac_diag_clear(d);
    double t_write = now_ms();
    if (tosac_tosa_write_file(g, a.out, d) != TOSAC_OK) {
        print_diag(a.out, d);
        goto out;
    }
    t_write = now_ms() - t_write;
    if (a.report) {
        print_report(path, a.out, m, g, &report);
        printf("%-20s %10.3f\n%-20s %10.3f\n", "read ONNX", t_read, "write TOSA", t_write);
    }
    rc = CLI_EXIT_OK;
out:
    tosac_graph_destroy(g);
    tosac_onnx_model_destroy(m);
    for (int k = 0; k < n_arrays; k++) tosac_npy_free(&arrays[k]);
    for (int k = 0; k < n_names; k++) free(names[k]);
    tosac_diag_destroy(d);
    return rc;
}
