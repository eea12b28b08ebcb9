/*
 * The partitioned artifact on the command line (docs/TARGETS.md): `tosac compile --target
 * ethos-u55-128` writes it (and optionally runs Vela on its NPU segments), `tosac run`, `tosac
 * inspect` and `tosac validate` accept its directory in place of a .tosa file.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/alloc.h"
#include "core/diag.h"
#include "tosac/inspect.h"
#include "tosac/target.h"

static tosac_artifact *read_artifact(const char *dir)
{
    tosac_diag *d = tosac_diag_create();
    tosac_artifact *a = NULL;
    if (d && tosac_artifact_read(dir, &a, d) != TOSAC_OK) a = NULL;
    if (!a) {
        if (d) cli_print_diag(dir, d);
        else fprintf(stderr, "tosac: out of memory\n");
    }
    tosac_diag_destroy(d);
    return a;
}

int cli_artifact_inspect(const char *dir, bool json, const char *out)
{
    tosac_artifact *a = read_artifact(dir);
    if (!a) return CLI_EXIT_FAILURE;
    char *head = json ? tosac_artifact_manifest_json(a) : tosac_artifact_report_text(a);
    size_t cap = head ? strlen(head) + 64 : 0;
    char **parts = calloc(a ? tosac_artifact_segment_count(a) + 1 : 1, sizeof *parts);
    bool ok = head && parts;
    for (uint32_t k = 0; ok && k < tosac_artifact_segment_count(a); k++) {
        const tosac_artifact_segment *sg = tosac_artifact_segment_at(a, k);
        parts[k] = json ? tosac_inspect_json(sg->graph) : tosac_inspect_text(sg->graph);
        ok = parts[k] != NULL;
        if (ok) cap += strlen(parts[k]) + strlen(sg->file) + 64;
    }
    char *text = ok ? malloc(cap) : NULL;
    int rc = CLI_EXIT_FAILURE;
    if (text) {
        size_t n = 0;
        /* JSON: {"artifact": manifest, "segments": [inspect documents]} */
        n += (size_t)snprintf(text + n, cap - n, json ? "{\"artifact\": %s, \"segments\": [" : "%s", head);
        for (uint32_t k = 0; k < tosac_artifact_segment_count(a); k++) {
            const tosac_artifact_segment *sg = tosac_artifact_segment_at(a, k);
            if (json) n += (size_t)snprintf(text + n, cap - n, "%s%s", k ? ",\n" : "", parts[k]);
            else n += (size_t)snprintf(text + n, cap - n, "\n==== segment %u: %s (%s) ====\n%s", k, sg->file,
                                       sg->npu ? "NPU" : "CPU", parts[k]);
        }
        if (json) snprintf(text + n, cap - n, "]}\n");
        rc = cli_write_output(dir, out, text);
    } else {
        fprintf(stderr, "tosac inspect: out of memory\n");
    }
    free(text);
    for (uint32_t k = 0; parts && k < tosac_artifact_segment_count(a); k++) tosac_string_free(parts[k]);
    free(parts);
    tosac_string_free(head);
    tosac_artifact_destroy(a);
    return rc;
}

int cli_artifact_validate(const char *dir, bool quiet)
{
    tosac_artifact *a = read_artifact(dir);
    if (!a) return CLI_EXIT_FAILURE;
    tosac_diag *d = tosac_diag_create();
    tosac_status s = d ? tosac_artifact_validate(a, d) : TOSAC_ERR_NOMEM;
    if (d) cli_print_diag(dir, d);
    uint32_t npu = 0;
    for (uint32_t k = 0; k < tosac_artifact_segment_count(a); k++) npu += tosac_artifact_segment_at(a, k)->npu;
    if (s == TOSAC_OK && !quiet)
        printf("%s: valid artifact for %s: %u segment(s), %u NPU segment(s) PRO-INT 8K within every %s rule\n", dir,
               tosac_artifact_target(a)->name, tosac_artifact_segment_count(a), npu,
               tosac_artifact_target(a)->rules == TOSAC_RULES_U85 ? "U85" : "U55");
    tosac_diag_destroy(d);
    tosac_artifact_destroy(a);
    return s == TOSAC_OK ? CLI_EXIT_OK : s == TOSAC_ERR_TOSA_ERROR ? CLI_EXIT_INVALID : CLI_EXIT_FAILURE;
}

/* The runtime-style description of an artifact tensor and its model I/O q-params. */
static void tensor_info(const tosac_artifact_tensor *t, tosac_tensor_info *info, tosac_quant_io *q)
{
    memset(info, 0, sizeof *info);
    info->name = t->name;
    info->dtype = t->dtype;
    info->rank = t->rank;
    info->shape = t->shape;
    info->nbytes = info->tosa_bytes = tosac_artifact_tensor_bytes(t);
    unsigned bits = tosac_dtype_bits(t->dtype);
    info->nelem = bits >= 8 ? (int64_t)(info->nbytes / (bits / 8)) : (int64_t)info->nbytes;
    memset(q, 0, sizeof *q);
    q->name = t->name;
    q->type = t->io;
    q->q = t->q;
    q->rank = t->rank;
}

int cli_artifact_run(const char *dir, uint32_t n, const char *const *names, const char *const *files, const char *out_dir)
{
    tosac_artifact *a = read_artifact(dir);
    if (!a) return 3;
    uint32_t ni = tosac_artifact_input_count(a), no = tosac_artifact_output_count(a);
    uint8_t **in = calloc(ni ? ni : 1, sizeof *in), **outb = calloc(no ? no : 1, sizeof *outb);
    size_t *in_n = calloc(ni ? ni : 1, sizeof *in_n), *out_n = calloc(no ? no : 1, sizeof *out_n);
    tosac_diag *d = tosac_diag_create();
    int rc = 3;
    if (!in || !outb || !in_n || !out_n || !d) {
        fprintf(stderr, "tosac run: out of memory\n");
        goto done;
    }
    for (uint32_t k = 0; k < n; k++) {
        bool found = false;
        for (uint32_t i = 0; i < ni && !found; i++) found = !strcmp(tosac_artifact_input(a, i)->name, names[k]);
        if (!found) {
            fprintf(stderr, "tosac run: '%s' is not an input of %s\n", names[k], dir);
            goto done;
        }
    }
    for (uint32_t i = 0; i < ni; i++) {
        const tosac_artifact_tensor *t = tosac_artifact_input(a, i);
        uint32_t k = 0;
        while (k < n && strcmp(names[k], t->name)) k++;
        if (k == n) {
            fprintf(stderr, "tosac run: no file for input '%s': give -i %s=FILE.npy\n", t->name, t->name);
            goto done;
        }
        tosac_tensor_info info;
        tosac_quant_io q;
        tensor_info(t, &info, &q);
        if (!cli_run_load_npy(files[k], &info, t->has_q ? &q : NULL, &in[i], &in_n[i], d)) {
            cli_print_diag(files[k], d);
            goto done;
        }
    }
    for (uint32_t k = 0; k < no; k++) {
        out_n[k] = tosac_artifact_tensor_bytes(tosac_artifact_output(a, k));
        if (!(outb[k] = malloc(out_n[k] ? out_n[k] : 1))) {
            fprintf(stderr, "tosac run: out of memory\n");
            goto done;
        }
    }
    tosac_status s = tosac_artifact_run(a, (const void *const *)in, in_n, (void *const *)outb, out_n, NULL, NULL, NULL, d);
    if (s != TOSAC_OK) {
        cli_print_diag(dir, d);
        rc = s == TOSAC_ERR_UNPREDICTABLE ? 1 : s == TOSAC_ERR_TOSA_ERROR ? 2 : 3;
        goto done;
    }
    if (out_dir) {
        struct stat st;
        if (stat(out_dir, &st) != 0 && mkdir(out_dir, 0777) != 0) {
            fprintf(stderr, "tosac run: %s: cannot create the output directory\n", out_dir);
            goto done;
        }
    }
    for (uint32_t k = 0; k < no; k++) {
        const tosac_artifact_tensor *t = tosac_artifact_output(a, k);
        tosac_tensor_info info;
        tosac_quant_io q;
        tensor_info(t, &info, &q);
        if (!out_dir) {
            cli_run_print_summary(&info, outb[k], out_n[k], t->has_q ? &q : NULL);
            continue;
        }
        char path[4096];
        int len = snprintf(path, sizeof path, "%s/%s.npy", out_dir, t->name);
        for (char *c = path + strlen(out_dir) + 1; len > 0 && (size_t)len < sizeof path && *c; c++)
            if (*c == '/' || *c == '\\') *c = '_';
        if (len <= 0 || (size_t)len >= sizeof path || !cli_run_write_npy(path, &info, outb[k], out_n[k], t->has_q ? &q : NULL, d)) {
            cli_print_diag(path, d);
            goto done;
        }
    }
    rc = 0;
done:
    for (uint32_t i = 0; in && i < ni; i++) tosac_free(in[i], in_n[i]);
    for (uint32_t k = 0; outb && k < no; k++) free(outb[k]);
    free(in);
    free(in_n);
    free(outb);
    free(out_n);
    tosac_diag_destroy(d);
    tosac_artifact_destroy(a);
    return rc;
}

/* Runs `vela` on one NPU segment with ExecuTorch's flags (ETHOS_U.md §1), its output files in the
   artifact directory and what it prints in SEGMENT.vela.log. */
static bool run_vela(const char *vela, const tosac_target_info *t, const char *dir, const char *file)
{
    char seg[4096], log[4096], acc[256], sys[256], mem[256], outd[4200];
    int n1 = snprintf(seg, sizeof seg, "%s/%s", dir, file), n2 = snprintf(log, sizeof log, "%s/%s.vela.log", dir, file);
    if (n1 <= 0 || (size_t)n1 >= sizeof seg || n2 <= 0 || (size_t)n2 >= sizeof log) return false;
    snprintf(acc, sizeof acc, "--accelerator-config=%s", t->accelerator);
    snprintf(sys, sizeof sys, "--system-config=%s", t->system_config);
    snprintf(mem, sizeof mem, "--memory-mode=%s", t->memory_mode);
    snprintf(outd, sizeof outd, "--output-dir=%s", dir);
    char cfg[] = "--config=Arm/vela.ini", fmt[] = "--output-format=raw";
    char *args[] = {(char *)vela, acc, cfg, fmt, sys, mem, outd, seg, NULL};
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) return false;
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execv(vela, args);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return false;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The artifact's finishing step with --vela: every NPU segment through Vela in the temporary
   directory, so that a failing Vela leaves no artifact behind. */
typedef struct vela_job {
    const char *vela;
    const tosac_target_info *t;
} vela_job;

static tosac_status vela_all(void *user, const tosac_artifact *a, const char *tmp, tosac_diag *d)
{
    const vela_job *j = user;
    for (uint32_t k = 0; k < tosac_artifact_segment_count(a); k++) {
        const tosac_artifact_segment *sg = tosac_artifact_segment_at(a, k);
        if (!sg->npu || run_vela(j->vela, j->t, tmp, sg->file)) continue;
        char log[4200];
        snprintf(log, sizeof log, "%s/%s.vela.log", tmp, sg->file);
        FILE *f = fopen(log, "rb");
        char line[512];
        while (f && fgets(line, sizeof line, f)) fprintf(stderr, "vela: %s", line);
        if (f) fclose(f);
        return tosac_diag_add(d, TOSAC_ERR_IO, "Vela (%s) failed on %s (its output is above); no artifact written",
                              j->vela, sg->file);
    }
    return TOSAC_OK;
}

static int write_dot(const tosac_artifact *a, const char *path)
{
    char *dot = tosac_artifact_report_dot(a);
    if (!dot) {
        fprintf(stderr, "tosac compile: out of memory\n");
        return CLI_EXIT_FAILURE;
    }
    int rc = cli_write_output(NULL, path, dot);
    tosac_string_free(dot);
    return rc;
}

/* Vela's estimate of every NPU segment of the artifact just written (read back from its summaries). */
static int print_estimates(const char *dir)
{
    tosac_diag *d = tosac_diag_create();
    tosac_artifact *a = NULL;
    if (!d || tosac_artifact_read(dir, &a, d) != TOSAC_OK) {
        if (d) cli_print_diag(dir, d);
        tosac_diag_destroy(d);
        return CLI_EXIT_FAILURE;
    }
    for (uint32_t k = 0; k < tosac_artifact_segment_count(a); k++) {
        const tosac_artifact_segment *sg = tosac_artifact_segment_at(a, k);
        if (!sg->npu) continue;
        if (sg->has_estimate)
            printf("%s: Vela's estimate %.3f ms, %llu cycles\n", sg->file, sg->est_ms, (unsigned long long)sg->est_cycles);
        else
            printf("%s: Vela left no summary (no estimate)\n", sg->file);
    }
    tosac_artifact_destroy(a);
    tosac_diag_destroy(d);
    return CLI_EXIT_OK;
}

/* The partition report as written into the artifact (with Vela's estimates when it ran). */
static int print_report(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/partition_report.txt", dir);
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "tosac compile: %s: cannot open: %s\n", path, strerror(errno));
        return CLI_EXIT_FAILURE;
    }
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, stdout);
    fclose(f);
    return CLI_EXIT_OK;
}

int cli_artifact_write(const tosac_artifact *a, const char *out, bool report, const char *dot, const char *vela)
{
    if (vela && access(vela, X_OK) != 0) {
        fprintf(stderr, "tosac compile: --vela %s: not an executable file (%s); Vela is optional: leave --vela out to "
                        "write the artifact without its command streams\n",
                vela, strerror(errno));
        return CLI_EXIT_FAILURE;
    }
    tosac_diag *d = tosac_diag_create();
    int rc = CLI_EXIT_FAILURE;
    if (!d) {
        fprintf(stderr, "tosac: out of memory\n");
        return rc;
    }
    vela_job job = {vela, tosac_artifact_target(a)};
    if (tosac_artifact_write_with(a, out, vela ? vela_all : NULL, &job, d) != TOSAC_OK) {
        cli_print_diag(out, d);
        goto done;
    }
    if (vela && print_estimates(out) != CLI_EXIT_OK) goto done;
    if (report && print_report(out) != CLI_EXIT_OK) goto done;
    if (dot && write_dot(a, dot) != CLI_EXIT_OK) goto done;
    rc = CLI_EXIT_OK;
done:
    tosac_diag_destroy(d);
    return rc;
}
