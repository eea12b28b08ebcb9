/* tosac emit-c: a .tosa program as C for a microcontroller (src/emit/, docs/EMIT_C.md). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "emit/emit_c.h"

#define CMD "emit-c"

void cli_emit_c_help(FILE *out)
{
    fprintf(out,
            "usage: tosac emit-c MODEL.tosa|ARTIFACT -o DIR [--name NAME] [--isa portable|mve]\n"
            "\n"
            "Runs the runtime's create on the host (validate, build, fuse, plan, prepare, with the\n"
            "portable kernels) and writes the program as C11 into DIR (created if missing):\n"
            "  NAME.h       int NAME_invoke(const void *const in[], void *const out[], void *arena),\n"
            "               NAME_ARENA_SIZE, input/output counts, bytes, shapes, types (q-params from\n"
            "               MODEL.tosa.quant.json when it is there)\n"
            "  NAME.c       the constants and prepared constants as const arrays, the kernel calls\n"
            "  NAME.cmake   NAME_SOURCES (NAME.c and the kernel sources under ${TOSAC_ROOT}),\n"
            "               NAME_INCLUDE_DIRS, NAME_DEFINITIONS\n"
            "  sources.txt  the kernel sources, relative to the tosac source tree\n"
            "ARTIFACT, a directory of 'tosac compile --target ethos-...', gives every segment; NPU\n"
            "segment K is called through int NAME_npu_segment_K(in, out, arena), a weak function whose\n"
            "default runs the segment on the CPU (define it to drive the NPU).\n"
            "The device needs no allocator, stdio, reader, validator or planner: the kernels are the\n"
            "host's (src/kernels/), so the outputs are the bits 'tosac run' gives.\n"
            "\n"
            "options:\n"
            "  -o DIR        output directory (required)\n"
            "  --name NAME   C identifier of the API (default: the model's file name, made an identifier)\n"
            "  --isa I       kernels the constants are prepared for: portable (default; any C11\n"
            "                target, the host too) or mve (the Helium kernels of a Cortex-M55 build,\n"
            "                -mcpu=cortex-m55: int8 weights stay int8; such C runs only there)\n"
            "  -h, --help    show this text\n"
            "\n"
            "Prints the arena, its liveness lower bound and the flash bytes of the constants.\n"
            "exit status: 0 written; 1 failure (nothing is written).\n");
}

typedef struct emit_args {
    const char *out, *name, *isa;
} emit_args;

static int emit_opt(void *ctx, int argc, char **argv, int *i)
{
    emit_args *a = ctx;
    int m = cli_opt_value(CMD, argc, argv, i, "-o", &a->out);
    if (!m) m = cli_opt_value(CMD, argc, argv, i, "--name", &a->name);
    if (!m) m = cli_opt_value(CMD, argc, argv, i, "--isa", &a->isa);
    return m;
}

/* The file name of `path` without directory and extension, as a C identifier. */
static void default_name(const char *path, char *buf, size_t cap)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = 0;
    if (!isalpha((unsigned char)*base) && *base != '_' && n + 1 < cap) buf[n++] = 'm';
    for (const char *s = base; *s && *s != '.' && n + 1 < cap && n < 40; s++)
        buf[n++] = isalnum((unsigned char)*s) ? *s : '_';
    buf[n] = '\0';
}

static bool add_file(tosac_outset *os, const char *dir, const char *name, const char *ext, const char *text)
{
    char path[4096];
    int len = snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
    if (len <= 0 || (size_t)len >= sizeof path) {
        fprintf(stderr, "tosac emit-c: %s: path too long\n", dir);
        return false;
    }
    const char *wp = cli_out_add(os, path);
    tosac_diag *d = tosac_diag_create();
    tosac_status st = wp && d ? tosac_outfile_write_bytes(wp, text, strlen(text), d) : TOSAC_ERR_NOMEM;
    if (st != TOSAC_OK && d) cli_print_diag(path, d);
    tosac_diag_destroy(d);
    return st == TOSAC_OK;
}

int cli_emit_c(int argc, char **argv)
{
    emit_args a = {0};
    const char *path;
    int rc = cli_parse_file_args(CMD, argc, argv, cli_emit_c_help, emit_opt, &a, &path);
    if (rc != CLI_PARSED) return rc;
    if (!a.out) return cli_usage_error(CMD, "no output directory (-o DIR)");
    tosac_program_isa isa = TOSAC_PROGRAM_ISA_PORTABLE;
    if (a.isa && !strcmp(a.isa, "mve"))
        isa = TOSAC_PROGRAM_ISA_MVE;
    else if (a.isa && strcmp(a.isa, "portable"))
        return cli_usage_error(CMD, "bad --isa '%s' (expected portable or mve)", a.isa);
    char name[64];
    if (a.name)
        snprintf(name, sizeof name, "%s", a.name);
    else
        default_name(path, name, sizeof name);

    tosac_outset *os = cli_outset_create();
    if (!os || !cli_out_input(os, path)) {
        tosac_outset_destroy(os);
        return CLI_EXIT_FAILURE;
    }
    rc = CLI_EXIT_FAILURE;
    tosac_quant_iomap *qio = NULL;
    tosac_emit_c_out out = {0};
    tosac_diag *d = tosac_diag_create();
    if (!d) goto done;
    if (tosac_artifact_is_dir(path)) { /* a segmented artifact (docs/TARGETS.md): q-params from its manifest */
        tosac_artifact *art = NULL;
        tosac_emit_c_opts ao = {name, path, NULL, isa};
        tosac_status ast = tosac_artifact_read(path, &art, d);
        if (ast == TOSAC_OK) ast = tosac_emit_c_artifact(art, &ao, &out, d);
        tosac_artifact_destroy(art);
        if (ast != TOSAC_OK) {
            cli_print_diag(path, d);
            goto done;
        }
        goto write;
    }
    tosac_graph *g = cli_read_graph(path, true);
    if (!g) goto done;
    /* the quantization sidecar of the program gives the I/O q-params */
    char side[4096];
    struct stat st;
    if (snprintf(side, sizeof side, "%s.quant.json", path) < (int)sizeof side && stat(side, &st) == 0 &&
        (!cli_out_input(os, side) || tosac_quant_iomap_read(side, &qio, d) != TOSAC_OK ||
         !cli_sidecar_matches(side, path, qio, d))) {
        cli_print_diag(side, d);
        goto done;
    }
    tosac_emit_c_opts o = {name, path, qio, isa};
    tosac_status est = tosac_emit_c(g, &o, &out, d);
    tosac_graph_destroy(g);
    if (est != TOSAC_OK) {
        cli_print_diag(path, d);
        goto done;
    }
write:
    if (stat(a.out, &st) != 0 && mkdir(a.out, 0777) != 0) {
        fprintf(stderr, "tosac emit-c: %s: cannot create the directory: %s\n", a.out, strerror(errno));
        goto done;
    }
    if (!add_file(os, a.out, name, ".h", out.header) || !add_file(os, a.out, name, ".c", out.source) ||
        !add_file(os, a.out, name, ".cmake", out.cmake) || !add_file(os, a.out, "sources", ".txt", out.sources) ||
        !cli_out_commit(os))
        goto done;
    printf("%s: %s/%s.{h,c,cmake}, %u kernel calls\n", path, a.out, name, (unsigned)out.n_calls);
    printf("arena %zu bytes, liveness lower bound %zu (+%.2f%%); the runtime plans %zu (lower bound %zu)\n", out.arena,
           out.arena_lower_bound,
           out.arena_lower_bound ? 100.0 * ((double)out.arena / (double)out.arena_lower_bound - 1.0) : 0.0,
           out.runtime_arena, out.runtime_lower_bound);
    printf("flash: constants %zu bytes, prepared constants %zu bytes; inputs and outputs %zu bytes\n", out.const_bytes,
           out.prepared_bytes, out.io_bytes);
    rc = CLI_EXIT_OK;
done:
    tosac_emit_c_out_free(&out);
    tosac_quant_iomap_free(qio);
    tosac_diag_destroy(d);
    tosac_outset_destroy(os);
    return rc;
}
