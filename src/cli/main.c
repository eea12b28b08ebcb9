/*
 * tosac: command-line entry point, command table and the helpers the sub-commands share.
 *
 *   tosac validate FILE [--profile P] [--ext LIST] [--level L] [-q]
 *   tosac inspect FILE [--json] [-o OUT]
 *   tosac print FILE [-o OUT]
 *   tosac run MODEL.tosa -i NAME=FILE.npy ... [-o DIR] [--profile] | tosac run --test_desc desc.json
 *   tosac emit-c MODEL.tosa -o DIR [--name NAME]
 *   tosac ops [--markdown]
 *   tosac targets [--json]
 *   tosac help [COMMAND] | tosac COMMAND --help | tosac --version
 *
 * Adding a command: write cli_<name>() and cli_<name>_help() in src/cli/cmd_<name>.c, declare them
 * in cli.h and add one row to k_commands below.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "tosac/tosa_file.h"

#ifndef TOSAC_VERSION_STRING
#define TOSAC_VERSION_STRING "0.1.0"
#endif

static const cli_command k_commands[] = {
    {"validate", "check a .tosa file against the TOSA 1.0 specification", cli_validate_help, cli_validate},
    {"inspect", "summarise a .tosa file: tensors, operators, totals (text or JSON)", cli_inspect_help, cli_inspect},
    {"print", "print a .tosa file as readable text", cli_print_help, cli_print},
    {"run", "run a .tosa program on .npy inputs (also the reference model's --test_desc interface)", cli_run_help,
     cli_run},
    {"compile", "compile an ONNX model to a TOSA 1.0 program (.onnx -> .tosa)", cli_compile_help, cli_compile},
    {"emit-c", "write a .tosa program as C for a microcontroller (no malloc, same kernels)", cli_emit_c_help,
     cli_emit_c},
    {"ops", "list the TOSA 1.0 operators, operands and type-support rows", cli_ops_help, cli_ops},
    {"targets", "list the deployment targets (Ethos-U, Cortex-M) and their settings", cli_targets_help, cli_targets},
};
#define N_COMMANDS (sizeof k_commands / sizeof k_commands[0])

static const cli_command *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (!strcmp(k_commands[i].name, name)) return &k_commands[i];
    return NULL;
}

static void main_help(FILE *out)
{
    fprintf(out,
            "usage: tosac COMMAND [ARGS...]\n"
            "       tosac help [COMMAND] | tosac COMMAND --help | tosac --version\n"
            "\n"
            "tosac %s: a TOSA 1.0 toolchain.\n"
            "\n"
            "commands:\n",
            TOSAC_VERSION_STRING);
    for (size_t i = 0; i < N_COMMANDS; i++) fprintf(out, "  %-10s %s\n", k_commands[i].name, k_commands[i].summary);
    fprintf(out,
            "\n"
            "exit status: 0 success; 1 tool failure (bad command line, unreadable or malformed file);\n"
            "2 (validate) the graph is invalid.\n");
}

/* ------------------------------------------------------------------------------------------- */
/* Shared helpers                                                                                */

bool cli_is(const char *arg, const char *a, const char *b) { return !strcmp(arg, a) || (b && !strcmp(arg, b)); }

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "tosac%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(run 'tosac %s%s' for usage)\n", cmd ? cmd : "", cmd ? " --help" : "help");
    return CLI_EXIT_FAILURE;
}

int cli_opt_value(const char *cmd, int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0) return 0;
    if (arg[n] == '=') {
        *value = arg + n + 1;
        return 1;
    }
    if (arg[n] != '\0') return 0;
    if (*i + 1 >= argc) {
        cli_usage_error(cmd, "option '%s' needs a value", name);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

int cli_parse_file_args(const char *cmd, int argc, char **argv, void (*help)(FILE *),
                        int (*opt)(void *ctx, int argc, char **argv, int *i), void *ctx, const char **path)
{
    bool opts_done = false;
    *path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!opts_done && arg[0] == '-' && arg[1]) {
            int m;
            if (!strcmp(arg, "--")) {
                opts_done = true;
            } else if (cli_is(arg, "--help", "-h")) {
                help(stdout);
                return CLI_EXIT_OK;
            } else if ((m = opt(ctx, argc, argv, &i)) < 0) {
                return CLI_EXIT_FAILURE;
            } else if (m == 0) {
                return cli_usage_error(cmd, "unknown option '%s'", arg);
            }
            continue;
        }
        if (*path) return cli_usage_error(cmd, "expected one FILE, got '%s' and '%s'", *path, arg);
        *path = arg;
    }
    if (!*path) return cli_usage_error(cmd, "missing FILE");
    return CLI_PARSED;
}

void cli_print_finding(const char *path, const char *kind, const char *msg)
{
    size_t n = strlen(path);
    if (!strncmp(msg, path, n) && msg[n] == ':' && msg[n + 1] == ' ') msg += n + 2;
    fprintf(stderr, "%s: %s: %s\n", path, kind, msg);
}

tosac_graph *cli_read_graph(const char *path, bool quiet)
{
    tosac_diag *d = tosac_diag_create();
    if (!d) {
        fprintf(stderr, "tosac: out of memory\n");
        return NULL;
    }
    tosac_graph *g = NULL;
    tosac_status s = tosac_tosa_read_file(path, NULL, &g, d);
    if (s != TOSAC_OK) g = NULL;
    size_t n = tosac_diag_count(d), errors = 0;
    for (size_t i = 0; i < n; i++) {
        tosac_status code = TOSAC_OK;
        const char *msg = tosac_diag_message(d, i, &code);
        if (code != TOSAC_OK) errors++;
        if (code == TOSAC_OK && quiet) continue;
        cli_print_finding(path, code == TOSAC_OK ? "note" : "error", msg);
    }
    if (tosac_diag_dropped(d)) fprintf(stderr, "%s: note: %zu more messages not shown\n", path, tosac_diag_dropped(d));
    if (!g && !errors) cli_print_finding(path, "error", tosac_status_str(s));
    tosac_diag_destroy(d);
    return g;
}

void cli_print_diag(const char *path, tosac_diag *d)
{
    for (size_t i = 0; i < tosac_diag_count(d); i++) {
        tosac_status code = TOSAC_OK;
        const char *msg = tosac_diag_message(d, i, &code);
        /* a note the library marks as a warning (quantization that lost the signal) */
        bool warn = code == TOSAC_OK && !strncmp(msg, "warning: ", 9);
        cli_print_finding(path, code != TOSAC_OK ? "error" : warn ? "warning" : "note", warn ? msg + 9 : msg);
    }
    tosac_diag_clear(d);
}

tosac_outset *cli_outset_create(void)
{
    tosac_outset *s = tosac_outset_create();
    if (!s) fprintf(stderr, "tosac: out of memory\n");
    return s;
}

/* Prints what an output-set call said (messages name their file: PATH is not repeated). */
static bool out_report(const char *path, tosac_diag *d, tosac_status st)
{
    if (!d) fprintf(stderr, "tosac: out of memory\n");
    else cli_print_diag(path, d);
    tosac_diag_destroy(d);
    return st == TOSAC_OK;
}

bool cli_out_input(tosac_outset *s, const char *path)
{
    tosac_diag *d = tosac_diag_create();
    return out_report(path, d, d ? tosac_outset_add_input(s, path, d) : TOSAC_ERR_NOMEM);
}

const char *cli_out_add(tosac_outset *s, const char *path)
{
    const char *wp = NULL;
    tosac_diag *d = tosac_diag_create();
    return out_report(path, d, d ? tosac_outset_add(s, path, &wp, d) : TOSAC_ERR_NOMEM) ? wp : NULL;
}

bool cli_out_commit(tosac_outset *s)
{
    tosac_diag *d = tosac_diag_create();
    tosac_status st = d ? tosac_outset_commit(s, d) : TOSAC_ERR_NOMEM;
    for (size_t i = 0; d && i < tosac_diag_count(d); i++) fprintf(stderr, "tosac: error: %s\n", tosac_diag_message(d, i, NULL));
    if (d) tosac_diag_clear(d);
    return out_report("tosac", d, st);
}

tosac_status cli_external_input(void *set, const char *path, tosac_diag *d)
{
    return tosac_outset_add_input(set, path, d);
}

int cli_write_output(const char *in_path, const char *out_path, const char *text)
{
    size_t len = strlen(text);
    if (!out_path) {
        if (fwrite(text, 1, len, stdout) != len) {
            fprintf(stderr, "tosac: cannot write to standard output: %s\n", strerror(errno));
            return CLI_EXIT_FAILURE;
        }
        return CLI_EXIT_OK;
    }
    tosac_outset *s = cli_outset_create();
    tosac_diag *d = tosac_diag_create();
    const char *wp = NULL;
    bool ok = s && d && (!in_path || cli_out_input(s, in_path)) && (wp = cli_out_add(s, out_path)) != NULL;
    if (ok && tosac_outfile_write_bytes(wp, text, len, d) != TOSAC_OK) ok = false;
    if (d) cli_print_diag(out_path, d);
    ok = ok && cli_out_commit(s);
    tosac_diag_destroy(d);
    tosac_outset_destroy(s);
    return ok ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
}

/* ------------------------------------------------------------------------------------------- */

static int run_help(int argc, char **argv)
{
    if (argc <= 2) {
        main_help(stdout);
        return CLI_EXIT_OK;
    }
    if (argc > 3) return cli_usage_error("help", "expected at most one command name");
    const cli_command *c = find_command(argv[2]);
    if (!c) return cli_usage_error(NULL, "unknown command '%s'", argv[2]);
    c->help(stdout);
    return CLI_EXIT_OK;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        main_help(stderr);
        return CLI_EXIT_FAILURE;
    }
    const char *cmd = argv[1];
    if (cli_is(cmd, "--version", NULL)) {
        printf("tosac %s (TOSA 1.0)\n", TOSAC_VERSION_STRING);
        return CLI_EXIT_OK;
    }
    if (cli_is(cmd, "help", "--help") || cli_is(cmd, "-h", NULL)) return run_help(argc, argv);
    if (cmd[0] == '-') return cli_usage_error(NULL, "unknown option '%s'", cmd);
    const cli_command *c = find_command(cmd);
    if (!c) return cli_usage_error(NULL, "unknown command '%s'", cmd);
    return c->run(argc - 1, argv + 1);
}

int main(int argc, char **argv)
{
    tosac_outfile_catch_signals();
    int rc = dispatch(argc, argv);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "tosac: cannot write to standard output: %s\n", strerror(errno));
        if (rc == CLI_EXIT_OK) rc = CLI_EXIT_FAILURE;
    }
    return rc;
}
