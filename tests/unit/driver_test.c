/*
 * The compile driver (include/tosac/driver.h) against the `tosac compile` command, which today is
 * its own path through the library: on examples/small_cnn.onnx the driver writes the same .tosa
 * bytes and the same sidecar as the command for the same options (FP, INT8 calibrated from a
 * directory and from in-memory arrays, INT+FP with float/uint8 I/O, NHWC I/O with a static shape,
 * a16w8, emit-qdq), and bad calibration data or options are errors that name the file, input
 * and reason.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/test.h"
#include "tosac/driver.h"
#include "tosac/npy.h"

#define MODEL "../examples/small_cnn.onnx" /* unit tests run in tests/ */
#define NELEM (3 * 16 * 16)                /* input x: 1x3x16x16 */
#define N_CALIB 3

static char g_dir[256], g_tosac[512];
static float g_calib[N_CALIB][NELEM];

static const char *tmp(const char *name)
{
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", g_dir, name);
    return buf[k];
}

/* The whole file, or NULL. */
static unsigned char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(len > 0 ? (size_t)len : 1);
    *n = buf && len >= 0 ? fread(buf, 1, (size_t)len, f) : 0;
    fclose(f);
    return buf;
}

static bool same_file(const char *a, const char *b)
{
    size_t na = 0, nb = 0;
    unsigned char *x = slurp(a, &na), *y = slurp(b, &nb);
    bool same = x && y && na == nb && na > 0 && !memcmp(x, y, na);
    if (!same) fprintf(stderr, "  %s (%zu bytes) and %s (%zu bytes) differ\n", a, na, b, nb);
    free(x);
    free(y);
    return same;
}

static int cli(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' compile %s >/dev/null 2>&1", g_tosac, args);
    return system(cmd);
}

static bool has_message(tosac_diag *d, const char *a, const char *b)
{
    for (size_t k = 0; k < tosac_diag_count(d); k++) {
        const char *m = tosac_diag_message(d, k, NULL);
        if (strstr(m, a) && (!b || strstr(m, b))) return true;
    }
    fprintf(stderr, "  no message with '%s' and '%s' among %zu:\n", a, b ? b : "", tosac_diag_count(d));
    for (size_t k = 0; k < tosac_diag_count(d); k++) fprintf(stderr, "    %s\n", tosac_diag_message(d, k, NULL));
    return false;
}

/* Compiles MODEL with `o` and writes OUT (+ sidecar); false (messages printed) on failure. */
static bool drive(const tosac_driver_opts *o, const char *out)
{
    tosac_diag *d = tosac_diag_create();
    tosac_compiled *c = NULL;
    bool ok = tosac_driver_compile_file(MODEL, o, &c, d) == TOSAC_OK && tosac_compiled_write(c, out, d) == TOSAC_OK;
    for (size_t k = 0; !ok && k < tosac_diag_count(d); k++) fprintf(stderr, "  %s\n", tosac_diag_message(d, k, NULL));
    tosac_compiled_destroy(c);
    tosac_diag_destroy(d);
    return ok;
}

static void test_fp_identical(void)
{
    char args[1024];
    snprintf(args, sizeof args, "%s -o %s", MODEL, tmp("cli_fp.tosa"));
    EXPECT_EQ_I(cli(args), 0);
    tosac_driver_opts o = tosac_driver_opts_default();
    EXPECT(drive(&o, tmp("drv_fp.tosa")));
    EXPECT(same_file(tmp("cli_fp.tosa"), tmp("drv_fp.tosa")));
    EXPECT(access(tmp("drv_fp.tosa.quant.json"), F_OK) != 0);

    /* from memory, with the FP graph and no I/O mapping */
    size_t n = 0;
    unsigned char *bytes = slurp(MODEL, &n);
    tosac_diag *d = tosac_diag_create();
    tosac_compiled *c = NULL;
    EXPECT(bytes && tosac_driver_compile_mem(bytes, n, "small_cnn", &o, &c, d) == TOSAC_OK);
    EXPECT(c && tosac_compiled_program(c) == tosac_compiled_fp_graph(c));
    EXPECT(c && !tosac_compiled_iomap(c) && !tosac_compiled_quant_report(c));
    EXPECT(c && tosac_compiled_report(c)->n_steps > 1);
    EXPECT(c && tosac_compiled_write(c, tmp("mem_fp.tosa"), d) == TOSAC_OK);
    EXPECT(same_file(tmp("cli_fp.tosa"), tmp("mem_fp.tosa")));
    tosac_compiled_destroy(c);
    tosac_diag_destroy(d);
    free(bytes);
}

/* INT8 calibrated from a directory of three samples, from the same samples as arrays, and with
   the report on (which must not change the program) */
static void test_int8_identical(void)
{
    char args[1024];
    snprintf(args, sizeof args, "%s -o %s --target TOSA-1.0+INT --calibrate %s --calib-method mse", MODEL,
             tmp("cli_int.tosa"), tmp("calib"));
    EXPECT_EQ_I(cli(args), 0);
    tosac_driver_opts o = tosac_driver_opts_default();
    char dir[512];
    snprintf(dir, sizeof dir, "%s", tmp("calib")); /* tmp() reuses its buffers */
    const char *src[] = {dir};
    o.target = "TOSA-1.0+INT";
    o.calib_method = TOSAC_QUANT_CALIB_MSE;
    o.n_calib_sources = 1;
    o.calib_sources = src;
    EXPECT(drive(&o, tmp("drv_int.tosa")));
    EXPECT(same_file(tmp("cli_int.tosa"), tmp("drv_int.tosa")));
    EXPECT(same_file(tmp("cli_int.tosa.quant.json"), tmp("drv_int.tosa.quant.json")));

    tosac_driver_calib_array arrays[] = {{"x", &g_calib[0][0], NELEM}, {NULL, &g_calib[1][0], 2 * NELEM}};
    tosac_driver_opts a = tosac_driver_opts_default();
    a.target = "TOSA-1.0+INT";
    a.calib_method = TOSAC_QUANT_CALIB_MSE;
    a.n_calib_arrays = 2;
    a.calib_arrays = arrays;
    a.report = true;
    tosac_diag *d = tosac_diag_create();
    tosac_compiled *c = NULL;
    EXPECT(tosac_driver_compile_file(MODEL, &a, &c, d) == TOSAC_OK);
    const tosac_quant_report *r = c ? tosac_compiled_quant_report(c) : NULL;
    EXPECT(r && r->n_samples == N_CALIB && r->n_layers > 0);
    const tosac_quant_iomap *io = c ? tosac_compiled_iomap(c) : NULL;
    EXPECT(io && io->n_inputs == 1 && io->inputs[0].type == TOSAC_QUANT_IO_INT8 && !strcmp(io->inputs[0].name, "x"));
    EXPECT(c && tosac_compiled_program(c) != tosac_compiled_fp_graph(c));
    EXPECT(c && tosac_compiled_write(c, tmp("arr_int.tosa"), d) == TOSAC_OK);
    EXPECT(same_file(tmp("cli_int.tosa"), tmp("arr_int.tosa")));
    EXPECT(same_file(tmp("cli_int.tosa.quant.json"), tmp("arr_int.tosa.quant.json")));
    tosac_compiled_destroy(c);
    tosac_diag_destroy(d);

    /* read back and written again: the same pair */
    d = tosac_diag_create();
    c = NULL;
    EXPECT(tosac_compiled_read(tmp("cli_int.tosa"), &c, d) == TOSAC_OK);
    io = c ? tosac_compiled_iomap(c) : NULL;
    EXPECT(io && io->n_inputs == 1 && io->n_outputs == 1 && !strcmp(io->outputs[0].name, "y"));
    EXPECT(c && !tosac_compiled_fp_graph(c) && !tosac_compiled_onnx_model(c) && tosac_compiled_report(c)->n_steps == 0);
    EXPECT(c && tosac_compiled_write(c, tmp("again.tosa"), d) == TOSAC_OK);
    EXPECT(same_file(tmp("cli_int.tosa"), tmp("again.tosa")));
    EXPECT(same_file(tmp("cli_int.tosa.quant.json"), tmp("again.tosa.quant.json")));
    tosac_compiled_destroy(c);
    c = NULL;
    EXPECT(tosac_compiled_read(tmp("missing.tosa"), &c, d) != TOSAC_OK && !c && has_message(d, "missing.tosa", NULL));
    tosac_diag_destroy(d);

    /* a sample cap: the first two files only */
    snprintf(args, sizeof args, "%s -o %s --target TOSA-1.0+INT --calibrate %s --calib-samples 2 --per-tensor", MODEL,
             tmp("cli_cap.tosa"), tmp("calib"));
    EXPECT_EQ_I(cli(args), 0);
    o.calib_method = TOSAC_QUANT_CALIB_PERCENTILE;
    o.calib_samples = 2;
    o.per_tensor = true;
    EXPECT(drive(&o, tmp("drv_cap.tosa")));
    EXPECT(same_file(tmp("cli_cap.tosa"), tmp("drv_cap.tosa")));
    EXPECT(same_file(tmp("cli_cap.tosa.quant.json"), tmp("drv_cap.tosa.quant.json")));
}

/* Option setters of the cases below (the driver side of the CLI flags). */
static void set_uint8(tosac_driver_opts *o) { o->io = TOSAC_DRIVER_IO_UINT8; }
static void set_preserve(tosac_driver_opts *o) { o->preserve_io = true; }
static void set_nhwc_int8(tosac_driver_opts *o)
{
    static const int64_t dims[] = {1, 3, 16, 16};
    static const tosac_compile_shape shape = {"x", 4, dims};
    o->io_nhwc = true;
    o->n_shapes = 1;
    o->shapes = &shape;
    o->io = TOSAC_DRIVER_IO_INT8;
}
static void set_a16w8(tosac_driver_opts *o) { o->a16w8 = true; }
static void set_nhwc(tosac_driver_opts *o) { o->io_nhwc = true; }

/* More options, each against the command with the same flags (random calibration: INT+FP takes
   float I/O inside the program by default, uint8 codes with io uint8; the QDQ ONNX of emit-qdq
   must match too) */
static void test_options_identical(void)
{
    static const struct {
        const char *name, *target, *flags;
        uint32_t random;
        void (*set)(tosac_driver_opts *o);
        bool qdq;
    } cases[] = {
        {"float", "TOSA-1.0+INT+FP", "", 4, NULL, false},
        {"uint8", "TOSA-1.0+INT+FP", "--io uint8", 4, set_uint8, false},
        {"preserve", "TOSA-1.0+INT+FP", "--preserve-io-quantization", 4, set_preserve, false},
        {"nhwc_int8", "TOSA-1.0+INT", "--io-layout nhwc --input-shape x=1x3x16x16 --io int8", 3, set_nhwc_int8, false},
        {"a16w8", "TOSA-1.0+INT+int16", "--a16w8", 2, set_a16w8, false},
        {"qdq", "TOSA-1.0+INT", "", 2, NULL, true},
        {"fp_nhwc", "TOSA-1.0+FP", "--io-layout nhwc", 0, set_nhwc, false},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char args[1536], a[64], b[64], qa[64], qb[64], qdq[512] = "", calib[64] = "";
        snprintf(a, sizeof a, "cli_%s.tosa", cases[k].name);
        snprintf(b, sizeof b, "drv_%s.tosa", cases[k].name);
        snprintf(qa, sizeof qa, "cli_%s.onnx", cases[k].name);
        snprintf(qb, sizeof qb, "drv_%s.onnx", cases[k].name);
        if (cases[k].qdq) snprintf(qdq, sizeof qdq, "--emit-qdq %s", tmp(qa));
        if (cases[k].random) snprintf(calib, sizeof calib, "--calibrate random --calib-samples %u", cases[k].random);
        snprintf(args, sizeof args, "%s -o %s --target %s %s %s %s", MODEL, tmp(a), cases[k].target, calib,
                 cases[k].flags, qdq);
        EXPECT_EQ_I(cli(args), 0);
        tosac_driver_opts o = tosac_driver_opts_default();
        char qdq_path[512];
        snprintf(qdq_path, sizeof qdq_path, "%s", tmp(qb));
        o.target = cases[k].target;
        o.calib_random = cases[k].random;
        if (cases[k].qdq) o.emit_qdq = qdq_path;
        if (cases[k].set) cases[k].set(&o);
        EXPECT(drive(&o, tmp(b)));
        EXPECT(same_file(tmp(a), tmp(b)));
        char sa[80], sb[80];
        snprintf(sa, sizeof sa, "%s.quant.json", a);
        snprintf(sb, sizeof sb, "%s.quant.json", b);
        if (cases[k].random) EXPECT(same_file(tmp(sa), tmp(sb)));
        else EXPECT(access(tmp(sa), F_OK) != 0 && access(tmp(sb), F_OK) != 0);
        if (cases[k].qdq) EXPECT(same_file(tmp(qa), tmp(qb)));
    }
}

/* Compiles with `o` expecting failure with a message holding a and b. */
static void expect_error(const tosac_driver_opts *o, tosac_status want, const char *a, const char *b)
{
    tosac_diag *d = tosac_diag_create();
    tosac_compiled *c = NULL;
    EXPECT_EQ_I(tosac_driver_compile_file(MODEL, o, &c, d), want);
    EXPECT(c == NULL);
    EXPECT(has_message(d, a, b));
    tosac_diag_destroy(d);
}

static void test_errors(void)
{
    tosac_driver_opts o = tosac_driver_opts_default();
    o.target = "TOSA-1.0+INT";
    expect_error(&o, TOSAC_ERR_INVALID_ARG, "needs calibration data", MODEL);

    /* NaN / Inf in a file: the file, the input and the position */
    float x[NELEM];
    memcpy(x, g_calib[0], sizeof x);
    x[7] = NAN;
    int64_t shape[] = {1, 3, 16, 16};
    EXPECT(tosac_npy_write_file(tmp("nan.npy"), "<f4", 4, shape, x, sizeof x, NULL) == TOSAC_OK);
    char path[512];
    snprintf(path, sizeof path, "%s", tmp("nan.npy"));
    const char *nan_src[] = {path};
    o.n_calib_sources = 1;
    o.calib_sources = nan_src;
    expect_error(&o, TOSAC_ERR_INVALID_ARG, "nan.npy: 1 of its 768 values for input 'x' are NaN or infinite", "NaN at sample 0, element 7");
    x[7] = -INFINITY;
    EXPECT(tosac_npy_write_file(tmp("calib/inf.npy"), "<f4", 4, shape, x, sizeof x, NULL) == TOSAC_OK);
    char dir[512];
    snprintf(dir, sizeof dir, "%s", tmp("calib"));
    const char *dir_src[] = {dir};
    o.calib_sources = dir_src;
    expect_error(&o, TOSAC_ERR_INVALID_ARG, "inf.npy: 1 of its 768 values for input 'x' are NaN or infinite", "-Inf");
    unlink(tmp("calib/inf.npy"));
    o.n_calib_sources = 0;
    tosac_driver_calib_array arr = {"x", x, NELEM};
    o.n_calib_arrays = 1;
    o.calib_arrays = &arr;
    expect_error(&o, TOSAC_ERR_INVALID_ARG, "calibration array 0: 1 of its 768 values for input 'x' are NaN or infinite", "-Inf");

    /* wrong type / size, unknown input, missing file */
    int32_t ints[NELEM] = {0};
    EXPECT(tosac_npy_write_file(tmp("int.npy"), "<i4", 4, shape, ints, sizeof ints, NULL) == TOSAC_OK);
    snprintf(path, sizeof path, "%s", tmp("int.npy"));
    const char *int_src[] = {path};
    o.n_calib_arrays = 0;
    o.n_calib_sources = 1;
    o.calib_sources = int_src;
    expect_error(&o, TOSAC_ERR_INVALID_ARG, "int.npy: calibration data for input 'x' must be float32", "<i4");
    const char *named[] = {"y=whatever.npy"};
    o.calib_sources = named;
    expect_error(&o, TOSAC_ERR_IO, "y=whatever.npy", NULL); /* one input: a plain (missing) path */
    arr.input = "y";
    o.n_calib_sources = 0;
    o.n_calib_arrays = 1;
    expect_error(&o, TOSAC_ERR_INVALID_ARG, "no input 'y'", "'x'");
    arr.input = "x";
    arr.count = NELEM - 1;
    expect_error(&o, TOSAC_ERR_INVALID_ARG, "positive multiple of 768", NULL);

    /* options that do not fit the target */
    tosac_driver_opts f = tosac_driver_opts_default();
    f.io = TOSAC_DRIVER_IO_UINT8;
    expect_error(&f, TOSAC_ERR_INVALID_ARG, "apply to quantized programs", NULL);
    f = tosac_driver_opts_default();
    f.calib_random = 4;
    expect_error(&f, TOSAC_ERR_INVALID_ARG, "apply to quantized targets", NULL);
    f.target = "TOSA-1.0+INT";
    f.a16w8 = true;
    expect_error(&f, TOSAC_ERR_INVALID_ARG, "int16 extension", NULL);
    f.a16w8 = false;
    f.n_calib_arrays = 1;
    f.calib_arrays = &arr;
    expect_error(&f, TOSAC_ERR_INVALID_ARG, "cannot be mixed", NULL);
    f = tosac_driver_opts_default();
    f.target = "TOSA-2.0";
    tosac_diag *d = tosac_diag_create();
    tosac_compiled *c = NULL;
    EXPECT(tosac_driver_compile_file(MODEL, &f, &c, d) != TOSAC_OK && tosac_diag_count(d) > 0);
    tosac_diag_destroy(d);
}

/* An FP program written over a quantized one takes the quantized one's sidecar away. */
static void test_stale_sidecar(void)
{
    tosac_driver_opts o = tosac_driver_opts_default();
    o.target = "TOSA-1.0+INT";
    o.calib_random = 2;
    EXPECT(drive(&o, tmp("over.tosa")));
    EXPECT(access(tmp("over.tosa.quant.json"), F_OK) == 0);
    o = tosac_driver_opts_default();
    EXPECT(drive(&o, tmp("over.tosa")));
    EXPECT(access(tmp("over.tosa.quant.json"), F_OK) != 0);
    EXPECT(same_file(tmp("over.tosa"), tmp("cli_fp.tosa")));
}

int main(void)
{
    const char *build = getenv("TOSAC_BUILD_DIR");
    if (!build) {
        fprintf(stderr, "driver_test: TOSAC_BUILD_DIR is not set (run through ctest)\n");
        return 1;
    }
    snprintf(g_tosac, sizeof g_tosac, "%s/tosac", build);
    snprintf(g_dir, sizeof g_dir, "/tmp/tosac_driver_test.XXXXXX");
    if (!mkdtemp(g_dir) || mkdir(tmp("calib"), 0777) != 0) {
        perror("driver_test: temporary directory");
        return 1;
    }
    /* three deterministic samples, written in name order */
    uint32_t r = 12345;
    for (int s = 0; s < N_CALIB; s++) {
        for (int k = 0; k < NELEM; k++) {
            r = r * 1664525u + 1013904223u;
            g_calib[s][k] = (float)((double)(r >> 8) / (1 << 24) * 4.0 - 2.0);
        }
        int64_t shape[] = {1, 3, 16, 16};
        char name[32];
        snprintf(name, sizeof name, "calib/s%d.npy", s);
        if (tosac_npy_write_file(tmp(name), "<f4", 4, shape, g_calib[s], sizeof g_calib[s], NULL) != TOSAC_OK) return 1;
    }
    RUN(test_fp_identical);
    RUN(test_int8_identical);
    RUN(test_options_identical);
    RUN(test_errors);
    RUN(test_stale_sidecar);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    if (!t_failures && system(cmd) != 0) fprintf(stderr, "driver_test: could not remove %s\n", g_dir);
    return test_summary();
}
