/*
 * tosac compile: lower an ONNX model to a TOSA 1.0 flatbuffer.
 *   tosac compile MODEL.onnx -o MODEL.tosa [--target TOSA-1.0+FP] [--input-shape NAME=DIMS]...
 *                 [--bind NAME=FILE.npy]... [--io-layout nchw|nhwc] [--dump-after PASS|all] [--report]
 *                 [--calibrate DIR|FILE.npy...|random] [--calib-samples N]
 *                 [--calib-method minmax|percentile|mse] [--per-tensor] [--report-json FILE] [--threads N]
 * With --target TOSA-1.0+INT (no +FP) the FP program is quantized to int8 (src/quant/,
 * docs/QUANT.md) and MODEL.tosa.quant.json records the float <-> int8 mapping of its I/O;
 * --report then also prints the per-layer SQNR of the INT program against the FP one.
 */
#include <unistd.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <sys/stat.h>

#include "cli/cli.h"
#include "core/alloc.h"
#include "core/clock.h"
#include "core/diag.h"
#include "core/hash.h"
#include "ir/graph.h"
#include "tosac/compile.h"
#include "tosac/driver.h"
#include "tosac/npy.h"
#include "tosac/onnx.h"
#include "tosac/quant.h"
#include "tosac/target.h"
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

/* The --lowering names, from the quantizer's table. */
static const char *lowering_list(void)
{
    static char buf[512];
    if (buf[0]) return buf;
    size_t n = 0;
    for (unsigned bit = 0; bit < 32 && n + 64 < sizeof buf; bit++)
        if (tosac_quant_lowering_name(1u << bit))
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", n ? ", " : "", tosac_quant_lowering_name(1u << bit));
    return buf;
}

void cli_compile_help(FILE *out)
{
    fprintf(out,
            "usage: tosac compile MODEL.onnx -o MODEL.tosa [--target TOSA-1.0+FP] [--input-shape NAME=DIMS]...\n"
            "                     [--bind NAME=FILE.npy]... [--io-layout nchw|nhwc] [--dump-after PASS|all]\n"
            "                     [--verify-each] [--report]\n"
            "                     [--calibrate DIR|FILE.npy...|random] [--calib-samples N]\n"
            "                     [--calib-method minmax|percentile|mse] [--per-tensor] [--a16w8] [--lowering LIST] [--report-json FILE]\n"
            "                     [--threads N]\n"
            "                     [--io float|int8|uint8] [--preserve-io-quantization] [--emit-qdq FILE.onnx]\n"
            "       tosac compile MODEL.onnx -o DIR --target ethos-u55-128|... --calibrate ... [--report]\n"
            "                     [--report-dot FILE.dot] [--vela PATH]\n"
            "\n"
            "Converts an ONNX model into a TOSA 1.0 program (FP32 activations, int64 narrowed to int32)\n"
            "and validates it. Every output (the program, its sidecar, --report-json, --emit-qdq) is\n"
            "written to a temporary file and put in place only when all of them succeed; an output that\n"
            "is an input, a directory or a non-regular file is refused (a character device such as\n"
            "/dev/null is written in place, without a sidecar).\n"
            "\n"
            "options:\n"
            "  -o, --output FILE         the .tosa file to write (required)\n"
            "  --target T                TOSA-1.0+FP (default), optionally with +INT (integer operators\n"
            "                            for the model's integer computations; nothing is quantized);\n"
            "                            TOSA-1.0+INT quantizes to int8 (needs --calibrate unless the\n"
            "                            model is QDQ: then its own scales are used; writes\n"
            "                            MODEL.tosa.quant.json with the I/O scales, docs/QUANT.md), as\n"
            "                            does TOSA-1.0+INT+FP with --calibrate (float I/O inside)\n"
            "                            and extensions: +bf16, +int16, +controlflow, ...; the program\n"
            "                            must be valid for exactly this target; or a device from\n"
            "                            'tosac targets' (ethos-u55-128, ethos-u85-256, cortex-m55, ...):\n"
            "                            quantizes (--calibrate or a QDQ model), splits the program into\n"
            "                            NPU and CPU segments and writes the directory MODEL: segments,\n"
            "                            manifest.json, partition_report.txt/.json (docs/TARGETS.md);\n"
            "                            with -o FILE.tosa: the whole program lowered for the device,\n"
            "                            not partitioned (and FILE.tosa.quant.json)\n"
            "  --report-dot FILE         (device targets) the partition as a DOT graph, NPU/CPU coloured\n"
            "  --vela PATH               (Ethos-U) run this Vela on every NPU segment with ExecuTorch's\n"
            "                            flags; its outputs stay in the artifact\n"
            "  --input-shape NAME=DIMS   static shape for graph input NAME, e.g. data=1x3x224x224\n"
            "                            (positive dims; symbolic dimensions not set are taken as 1,\n"
            "                            with a note naming them)\n"
            "  --bind NAME=FILE.npy      make graph input NAME the constant stored in FILE.npy; needed\n"
            "                            when an input feeds a position TOSA wants constant (weights,\n"
            "                            shapes, axes, indices); the error message names such inputs\n"
            "  --io-layout L             nchw (default: the model's own layout) or nhwc: rank-4 graph\n"
            "                            inputs and outputs are NHWC, so no TRANSPOSE is left at the\n"
            "                            boundary of a CNN\n"
            "  --dump-after PASS|all     print the graph (text form) to stdout after that step: import,\n"
            "                            %s\n"
            "  --verify-each             validate the graph after every pass (always on in debug builds)\n"
            "  --calibrate SRC...        calibration data for +INT: .npy files (one sample each, or a\n"
            "                            batch with a leading sample dimension), directories of .npy\n"
            "                            files (sorted by name), or 'random' (seeded normal inputs);\n"
            "                            several inputs: NAME=DIR|FILE.npy for each\n"
            "  --calib-samples N         use at most N samples (random: exactly N, default 16)\n"
            "  --threads N               threads of the calibration runs (default 0: one per processor;\n"
            "                            the program is the same bytes for every N)\n"
            "  --calib-method M          how activation ranges are chosen: percentile (default: the\n"
            "                            0.01th..99.99th percentiles), mse (the clipping range with\n"
            "                            the least quantization error) or minmax (observed range)\n"
            "  --per-tensor              one weight scale per tensor instead of per output channel\n"
            "  --a16w8                   int16 activations, int8 weights, INT48 accumulators (needs a\n"
            "                            target with +int16, e.g. TOSA-1.0+INT+int16)\n"
            "  --lowering LIST           target lowering choices for the integer program (docs/QUANT.md,\n"
            "                            \"Target lowering\"), comma-separated: all, none, %s\n"
            "  --report                  print a compile summary: op counts in and out, transposes,\n"
            "                            constants merged, IDENTITYs added and time per pass; with\n"
            "                            +INT also the SQNR (dB) of every quantized value, INT vs FP\n"
            "                            on the calibration data, worst first; for a device target\n"
            "                            also the partition report\n"
            "  --report-json FILE        write that SQNR report as JSON (+INT)\n"
            "  --io T                    quantized program I/O: float (default: INT8 tensors whose float\n"
            "                            scale/zero point are in the sidecar; with +INT+FP the\n"
            "                            quantize/dequantize are FP operators in the program and its I/O\n"
            "                            is FP32), int8, or uint8 (INT8 tensors holding uint8 codes,\n"
            "                            converted by RESCALEs with the unsigned flags)\n"
            "  --preserve-io-quantization  with +INT+FP and --io float: keep the I/O quantization out of\n"
            "                            the program (INT8 I/O + sidecar), as on an INT-only target\n"
            "  --emit-qdq FILE.onnx      also write the quantized program's FP graph as ONNX with the\n"
            "                            chosen scales/zero points as QuantizeLinear/DequantizeLinear\n"
            "\n"
            "exit status: 0 success; 1 failure (errors name the file, node, op type and reason).\n",
            pass_list(), lowering_list());
}

typedef struct compile_args {
    const char *out, *target, *io_layout, *dump_after, *report_json, *calib_method, *io, *emit_qdq, *lowering_arg,
        *report_dot, *vela;
    bool report, verify_each, per_tensor, preserve_io, a16w8;
    cli_model_opts model; /* --input-shape, --bind */
    const char *calib_arg[MAX_ITEMS];
    int n_calib;
    long calib_samples;
    long threads; /* 0: one per processor */
} compile_args;

/* Options taking one string value, stored as given. */
static const struct {
    const char *name;
    size_t field;
} k_string_opts[] = {
    {"-o", offsetof(compile_args, out)},
    {"--output", offsetof(compile_args, out)},
    {"--target", offsetof(compile_args, target)},
    {"--io-layout", offsetof(compile_args, io_layout)},
    {"--dump-after", offsetof(compile_args, dump_after)},
    {"--report-json", offsetof(compile_args, report_json)},
    {"--calib-method", offsetof(compile_args, calib_method)},
    {"--io", offsetof(compile_args, io)},
    {"--emit-qdq", offsetof(compile_args, emit_qdq)},
    {"--lowering", offsetof(compile_args, lowering_arg)},
    {"--report-dot", offsetof(compile_args, report_dot)},
    {"--vela", offsetof(compile_args, vela)},
};

/* Options without a value. */
static const struct {
    const char *name;
    size_t field;
} k_bool_opts[] = {
    {"--report", offsetof(compile_args, report)},
    {"--verify-each", offsetof(compile_args, verify_each)},
    {"--per-tensor", offsetof(compile_args, per_tensor)},
    {"--preserve-io-quantization", offsetof(compile_args, preserve_io)},
    {"--a16w8", offsetof(compile_args, a16w8)},
};

static int compile_opt(void *ctx, int argc, char **argv, int *i)
{
    compile_args *a = ctx;
    const char *v;
    int m;
    for (size_t k = 0; k < sizeof k_string_opts / sizeof k_string_opts[0]; k++)
        if ((m = cli_opt_value(CMD, argc, argv, i, k_string_opts[k].name, &v)) != 0) {
            if (m > 0) memcpy((char *)a + k_string_opts[k].field, &v, sizeof v);
            return m;
        }
    for (size_t k = 0; k < sizeof k_bool_opts / sizeof k_bool_opts[0]; k++)
        if (cli_is(argv[*i], k_bool_opts[k].name, NULL)) {
            *(bool *)((char *)a + k_bool_opts[k].field) = true;
            return 1;
        }
    if ((m = cli_model_opt(CMD, &a->model, argc, argv, i)) != 0) return m;
    if ((m = cli_opt_value(CMD, argc, argv, i, "--calib-samples", &v)) != 0) {
        if (m < 0) return m;
        char *end;
        a->calib_samples = strtol(v, &end, 10);
        if (*end || a->calib_samples <= 0 || a->calib_samples > 1000000)
            return cli_usage_error(CMD, "bad --calib-samples '%s' (a positive count)", v), -1;
        return 1;
    }
    if ((m = cli_opt_value(CMD, argc, argv, i, "--threads", &v)) != 0) {
        if (m < 0) return m;
        char *end;
        a->threads = strtol(v, &end, 10);
        if (*end || !*v || a->threads < 0 || a->threads > 64)
            return cli_usage_error(CMD, "bad --threads '%s' (0..64)", v), -1;
        return 1;
    }
    if ((m = cli_opt_value(CMD, argc, argv, i, "--calibrate", &v)) != 0) {
        if (m < 0) return m;
        /* one value, then every following argument that names a .npy file */
        for (;;) {
            if (a->n_calib >= MAX_ITEMS) return cli_usage_error(CMD, "too many --calibrate sources"), -1;
            a->calib_arg[a->n_calib++] = v;
            size_t len = *i + 1 < argc ? strlen(argv[*i + 1]) : 0;
            if (len < 5 || strcmp(argv[*i + 1] + len - 4, ".npy")) break;
            v = argv[++*i];
        }
        return 1;
    }
    return 0;
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


/* The files a compile writes: the write paths given by its output set (NULL: not written). */
typedef struct compile_outs {
    tosac_outset *set;
    const char *program, *sidecar, *report_json, *qdq;
} compile_outs;

static void progress_bar(void *user, uint32_t done, uint32_t total)
{
    (void)user;
    int width = 30, fill = (int)((uint64_t)done * (uint64_t)width / (total ? total : 1));
    fprintf(stderr, "\rcalibrating [%.*s%*s] %u/%u", fill, "##############################", width - fill, "", done, total);
    if (done == total) fputc('\n', stderr);
    fflush(stderr);
}

/* The SQNR report: a table, worst layer first (the order tosac_quantize_report gives). */
static void print_sqnr(const tosac_quant_report *r, tosac_quant_calib_method method, bool per_tensor)
{
    printf("quantization: %s activations, %s weights, %u calibration sample(s)\n", tosac_quant_calib_method_name(method),
           per_tensor ? "per-tensor" : "per-channel", r->n_samples);
    printf("output SQNR %.2f dB\n", r->output_sqnr_db);
    printf("%-4s %9s  %-5s %-14s %-12s %s\n", "rank", "SQNR dB", "form", "op", "scale", "value (ONNX node)");
    for (uint32_t k = 0; k < r->n_layers; k++) {
        const tosac_quant_layer *L = &r->layers[k];
        printf("%-4u %9.2f  %-5s %-14s %-12.5g %s", k + 1, L->sqnr_db, L->int32 ? "i32" : L->int16 ? "i16" : "i8", L->op, L->q.scale, L->name);
        if (L->onnx_node) printf(" (%s)", L->onnx_node);
        putchar('\n');
    }
}

/* --target: a device from the target table (its profiles, extensions and lowering) or a
   TOSA-1.0+... spec string. Returns CLI_PARSED, or CLI_EXIT_FAILURE after a usage error. */
static int lookup_target(compile_args *a, uint32_t *profiles, uint32_t *extensions, const tosac_target_info **dev)
{
    static tosac_target_info spec;
    const tosac_target_info *t = NULL;
    tosac_diag *td = tosac_diag_create();
    tosac_status ts = td ? tosac_target_lookup(a->target, &spec, &t, td) : TOSAC_ERR_NOMEM;
    const char *msg = td && tosac_diag_count(td) ? tosac_diag_message(td, 0, NULL) : "out of memory";
    int rc = ts != TOSAC_OK ? cli_usage_error(CMD, "%s", msg) : CLI_PARSED;
    tosac_diag_destroy(td);
    if (rc != CLI_PARSED) return rc;
    *profiles = t->profiles;
    *extensions = t->extensions;
    *dev = t->device ? t : NULL;
    return CLI_PARSED;
}

int cli_compile(int argc, char **argv)
{
#ifdef __GLIBC__
    /* A compile allocates and frees buffers of megabytes again and again (the model and its
       copies, program arenas, calibration statistics, the report's integer copies): freed memory
       stays in the heap for the next one instead of going back to the kernel, whose fresh pages
       would each fault and be cleared again (docs/QUANT.md, compile time). */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
    compile_args a;
    memset(&a, 0, sizeof a);
    const char *path;
    int rc = cli_parse_file_args(CMD, argc, argv, cli_compile_help, compile_opt, &a, &path);
    if (rc != CLI_PARSED) return rc;
    if (!a.out) return cli_usage_error(CMD, "missing -o MODEL.tosa");
    uint32_t profiles = TOSAC_PROFILE_FP, extensions = 0;
    const tosac_target_info *dev = NULL; /* an Ethos-U / Cortex-M target: quantize and partition */
    if (a.target && lookup_target(&a, &profiles, &extensions, &dev) != CLI_PARSED) return CLI_EXIT_FAILURE;
    /* INT alone always quantizes; INT+FP when given calibration data (else it is the FP program
       with integer operators for the model's own integer computations) */
    bool quant = dev || ((profiles & TOSAC_PROFILE_INT) && (!(profiles & TOSAC_PROFILE_FP) || a.n_calib));
    /* -o FILE.tosa with a device target: the whole program lowered for it, not partitioned */
    size_t out_len = strlen(a.out);
    bool artifact = dev && !(out_len > 5 && !strcmp(a.out + out_len - 5, ".tosa"));
    if (!artifact && (a.report_dot || a.vela))
        return cli_usage_error(CMD, "--report-dot and --vela need an Ethos-U or Cortex-M target and an artifact "
                                    "directory as output (see 'tosac targets')");
    if (a.vela && !dev->macs) return cli_usage_error(CMD, "--vela needs an Ethos-U target: %s has no NPU", dev->name);
    if (a.io && strcmp(a.io, "float") && strcmp(a.io, "int8") && strcmp(a.io, "uint8"))
        return cli_usage_error(CMD, "unknown --io '%s' (float, int8 or uint8)", a.io);
    if (!quant && (a.io || a.preserve_io || a.emit_qdq))
        return cli_usage_error(CMD, "--io, --preserve-io-quantization and --emit-qdq apply to quantized programs (--target "
                                    "TOSA-1.0+INT, or +INT+FP with --calibrate)");
    if (a.a16w8 && (!quant || !(extensions & TOSAC_EXT_INT16)))
        return cli_usage_error(CMD, "--a16w8 makes int16 activations and INT48 accumulators, which need the int16 "
                                    "extension: use --target TOSA-1.0+INT+int16 (got %s)", a.target ? a.target : "the FP default");
    uint32_t lowering = 0;
    const char *bad;
    size_t bad_len;
    if (a.lowering_arg && !tosac_quant_lowering_parse(a.lowering_arg, &lowering, &bad, &bad_len))
        return cli_usage_error(CMD, "unknown --lowering choice '%.*s' (all, none or a name from docs/QUANT.md)",
                               (int)bad_len, bad);
    if (!quant && (a.n_calib || a.calib_samples || a.calib_method || a.per_tensor || a.report_json || a.lowering_arg ||
                   a.threads))
        return cli_usage_error(CMD, "--calibrate, --calib-samples, --calib-method, --per-tensor, --report-json, "
                                    "--lowering and --threads apply to --target TOSA-1.0+INT only");
    tosac_quant_calib_method method = TOSAC_QUANT_CALIB_PERCENTILE;
    if (a.calib_method && !tosac_quant_calib_method_parse(a.calib_method, &method))
        return cli_usage_error(CMD, "unknown --calib-method '%s' (minmax, percentile or mse)", a.calib_method);
    if (a.io_layout && strcasecmp(a.io_layout, "nchw") && strcasecmp(a.io_layout, "nhwc"))
        return cli_usage_error(CMD, "unknown --io-layout '%s' (nchw or nhwc)", a.io_layout);
    if (a.dump_after) {
        bool known = !strcmp(a.dump_after, "all");
        for (const char *const *n = tosac_compile_step_names(); *n; n++) known |= !strcmp(*n, a.dump_after);
        if (!known) return cli_usage_error(CMD, "unknown pass '%s' for --dump-after (all, import, %s)", a.dump_after, pass_list());
    }

    tosac_diag *d = tosac_diag_create();
    tosac_compiled *c = NULL;
    compile_outs outs = {0};
    size_t side_len = strlen(a.out) + sizeof ".quant.json";
    char *side = malloc(side_len);
    rc = CLI_EXIT_FAILURE;
    if (!d || !side || !(outs.set = cli_outset_create())) {
        fprintf(stderr, "tosac: out of memory\n");
        goto out;
    }
    /* every output is checked, and its temporary made, before any work */
    snprintf(side, side_len, "%s.quant.json", a.out);
    /* an artifact directory is written to a temporary directory and renamed by its writer */
    if (!cli_out_input(outs.set, path) || (!artifact && !(outs.program = cli_out_add(outs.set, a.out)))) goto out;
    /* the sidecar goes next to a program in a file (not a device such as /dev/null, written in
       place; not an artifact, whose manifest holds the q-params); one left from an earlier
       quantized program there is removed with the commit */
    bool program_in_file = !artifact && strcmp(outs.program, a.out) != 0;
    if (program_in_file && quant && !(outs.sidecar = cli_out_add(outs.set, side))) goto out;
    if (program_in_file && !quant && tosac_outset_add_stale(outs.set, side, d) != TOSAC_OK) {
        cli_print_diag(side, d);
        goto out;
    }
    if (a.report_json && !(outs.report_json = cli_out_add(outs.set, a.report_json))) goto out;
    if (a.emit_qdq && !(outs.qdq = cli_out_add(outs.set, a.emit_qdq))) goto out;
    if (!cli_model_opts_load(CMD, &a.model, outs.set, d)) goto out;
    /* everything from reading the model to the quantized (and, for a device, partitioned) program
       is the library's one compile entry (include/tosac/driver.h); the command parses, checks
       its outputs, writes and reports */
    const char *sources[MAX_ITEMS];
    tosac_driver_opts o = tosac_driver_opts_default();
    o.target = a.target;
    o.n_shapes = (size_t)a.model.n_shapes;
    o.shapes = a.model.shapes;
    o.n_bindings = (size_t)a.model.n_binds;
    o.bindings = a.model.binds;
    o.io_nhwc = a.io_layout && !strcasecmp(a.io_layout, "nhwc");
    o.verify_each = a.verify_each;
    o.dump_after = a.dump_after;
    o.dump = dump_graph;
    bool random = false;
    for (int k = 0; k < a.n_calib; k++) {
        if (!strcmp(a.calib_arg[k], "random")) random = true;
        else sources[o.n_calib_sources++] = a.calib_arg[k];
    }
    o.calib_sources = sources;
    /* --calib-samples caps the files' samples, or counts the random ones */
    if (random) o.calib_random = (uint32_t)(a.calib_samples > 0 ? a.calib_samples : 16);
    else o.calib_samples = (uint32_t)(a.calib_samples > 0 ? a.calib_samples : 0);
    o.calib_method = method;
    o.threads = (uint32_t)a.threads;
    o.per_tensor = a.per_tensor;
    o.a16w8 = a.a16w8;
    o.io = !a.io || !strcmp(a.io, "float") ? TOSAC_DRIVER_IO_FLOAT
           : !strcmp(a.io, "uint8")        ? TOSAC_DRIVER_IO_UINT8
                                           : TOSAC_DRIVER_IO_INT8;
    o.preserve_io = a.preserve_io;
    o.lowering_given = a.lowering_arg != NULL;
    o.lowering = lowering;
    o.emit_qdq = outs.qdq;
    o.report = a.report || a.report_json;
    if (isatty(STDERR_FILENO)) o.progress = progress_bar;
    o.on_input = cli_external_input;
    o.on_input_user = outs.set;
    if (tosac_driver_compile_file(path, &o, &c, d) != TOSAC_OK) {
        cli_print_diag(path, d);
        goto out;
    }
    cli_print_diag(path, d); /* notes */
    const tosac_graph *g = tosac_compiled_program(c);
    const tosac_quant_report *qrep = tosac_compiled_quant_report(c);
    if (outs.report_json && qrep && tosac_quant_report_write_json(qrep, outs.report_json, d) != TOSAC_OK) {
        cli_print_diag(a.report_json, d);
        goto out;
    }
    double t_write = tosac_now_ms();
    if (artifact) { /* the artifact directory (docs/TARGETS.md), written and renamed by itself */
        if (cli_artifact_write(tosac_compiled_artifact(c), a.out, a.report, a.report_dot, a.vela) != CLI_EXIT_OK)
            goto out;
    } else if (tosac_tosa_write_file(g, outs.program, d) != TOSAC_OK) {
        cli_print_diag(a.out, d);
        goto out;
    }
    /* the sidecar names its program by the bytes just written (docs/QUANT.md) */
    if (outs.sidecar) {
        tosac_quant_iomap io = *tosac_compiled_iomap(c);
        if (tosac_hash_file(outs.program, &io.program_fnv1a64, &io.program_bytes, d) != TOSAC_OK ||
            tosac_quant_iomap_write(&io, outs.sidecar, d) != TOSAC_OK) {
            cli_print_diag(side, d);
            goto out;
        }
    }
    if (!cli_out_commit(outs.set)) goto out;
    t_write = tosac_now_ms() - t_write;
    if (a.report) {
        const tosac_driver_times *t = tosac_compiled_times(c);
        print_report(path, a.out, tosac_compiled_onnx_model(c), g, tosac_compiled_report(c));
        printf("%-20s %10.3f\n%-20s %10.3f\n", "read ONNX", t->read_ms, "write TOSA", t_write);
        if (quant) printf("%-20s %10.3f\n", "quantize", t->quantize_ms);
        if (qrep) print_sqnr(qrep, method, a.per_tensor);
    }
    rc = CLI_EXIT_OK;
out:
    tosac_outset_destroy(outs.set); /* removes every output's temporary unless committed */
    free(side);
    tosac_compiled_destroy(c);
    cli_model_opts_free(&a.model);
    tosac_diag_destroy(d);
    return rc;
}
