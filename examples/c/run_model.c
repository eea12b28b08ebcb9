/*
 * A C application using the installed tosac libraries: runs a model on .npy inputs and writes its
 * outputs as .npy files.
 *
 *   run_model MODEL.tosa|MODEL.onnx OUT_DIR IN0.npy [IN1.npy ...]
 *
 * Built against libtosac_rt (runtime only: .tosa programs) it needs no ONNX support; built with
 * -DWITH_ONNX against libtosac it also compiles an .onnx model (TOSA-1.0+FP) in memory first.
 * Inputs are given in the program's input order. See docs/INSTALL.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tosac/npy.h"
#include "tosac/runtime.h"
#include "tosac/tosa_file.h"
#ifdef WITH_ONNX
#include "tosac/compile.h"
#endif

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static tosac_status load(const char *path, tosac_graph **g, tosac_diag *d)
{
    if (!ends_with(path, ".onnx")) return tosac_tosa_read_file(path, NULL, g, d);
#ifdef WITH_ONNX
    tosac_onnx_model *m = NULL;
    tosac_status s = tosac_onnx_read_file(path, NULL, &m, d);
    if (s != TOSAC_OK) return s;
    tosac_compile_opts o;
    memset(&o, 0, sizeof o);
    o.profiles = TOSAC_PROFILE_FP;
    s = tosac_onnx_compile(m, &o, g, d);
    tosac_onnx_model_destroy(m);
    return s;
#else
    fprintf(stderr, "%s: this build runs .tosa programs only (libtosac_rt)\n", path);
    return TOSAC_ERR_UNSUPPORTED;
#endif
}

static tosac_status run(int argc, char **argv, tosac_diag *d)
{
    tosac_graph *g = NULL;
    tosac_program *p = NULL;
    tosac_status s = load(argv[1], &g, d);
    if (s == TOSAC_OK) {
        tosac_program_opts po = tosac_program_opts_default();
        s = tosac_program_create(g, &po, &p, d);
    }
    if (s == TOSAC_OK && tosac_program_input_count(p) != (uint32_t)(argc - 3)) {
        fprintf(stderr, "%s has %u inputs, %d given\n", argv[1], tosac_program_input_count(p), argc - 3);
        s = TOSAC_ERR_INVALID_ARG;
    }
    for (uint32_t i = 0; s == TOSAC_OK && i < tosac_program_input_count(p); i++) {
        tosac_tensor_info info;
        tosac_npy a;
        uint8_t *bytes = NULL;
        size_t n = 0;
        s = tosac_program_input_info(p, i, &info);
        if (s == TOSAC_OK) s = tosac_npy_read_file(argv[3 + i], &a, d);
        if (s != TOSAC_OK) break;
        s = tosac_npy_to_tosa(&a, info.dtype, argv[3 + i], &bytes, &n, d);
        if (s == TOSAC_OK) s = tosac_program_set_input_tosa(p, i, bytes, n, d);
        tosac_free(bytes, n);
        tosac_npy_free(&a);
    }
    if (s == TOSAC_OK) s = tosac_program_invoke(p, d);
    for (uint32_t i = 0; s == TOSAC_OK && i < tosac_program_output_count(p); i++) {
        tosac_tensor_info info;
        size_t n = 0;
        s = tosac_program_output_info(p, i, &info);
        uint8_t *buf = s == TOSAC_OK ? malloc(info.tosa_bytes ? info.tosa_bytes : 1) : NULL;
        if (s == TOSAC_OK && !buf) s = TOSAC_ERR_NOMEM;
        if (s == TOSAC_OK) s = tosac_program_get_output_tosa(p, i, buf, info.tosa_bytes, &n);
        char path[4096];
        if (s == TOSAC_OK && snprintf(path, sizeof path, "%s/%s.npy", argv[2], info.name) >= (int)sizeof path)
            s = TOSAC_ERR_INVALID_ARG;
        if (s == TOSAC_OK) s = tosac_npy_write_tosa(path, info.dtype, info.rank, info.shape, buf, n, d);
        if (s == TOSAC_OK) printf("%s: %lld elements -> %s\n", info.name, (long long)info.nelem, path);
        free(buf);
    }
    tosac_program_destroy(p);
    tosac_graph_destroy(g);
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODEL.tosa|MODEL.onnx OUT_DIR IN0.npy [IN1.npy ...]\n", argv[0]);
        return 2;
    }
    tosac_diag *d = tosac_diag_create();
    if (!d) return 1;
    tosac_status s = run(argc, argv, d);
    for (size_t i = 0; i < tosac_diag_count(d); i++) fprintf(stderr, "%s\n", tosac_diag_message(d, i, NULL));
    tosac_diag_destroy(d);
    return s == TOSAC_OK ? 0 : 1;
}
