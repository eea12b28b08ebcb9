/*
 * The `tosac` command: shared pieces of the sub-commands (src/cli/cmd_*.c) and the command table
 * in main.c. Only this layer prints or exits.
 *
 * Exit status of every command:
 *   0  success (for `validate`: the graph is valid)
 *   1  tool failure: bad command line, unreadable or malformed file, out of memory, output error
 *   2  `validate` only: the graph is invalid (an ERROR_IF rule or a level limit fails)
 */
#ifndef TOSAC_CLI_H
#define TOSAC_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "core/outfile.h"
#include "tosac/compile.h"
#include "tosac/npy.h"
#include "tosac/graph.h"
#include "tosac/quant.h"
#include "tosac/runtime.h"
#include "tosac/target.h"

enum { CLI_EXIT_OK = 0, CLI_EXIT_FAILURE = 1, CLI_EXIT_INVALID = 2 };
/* cli_parse_file_args(): the arguments are good, the command goes on (never an exit status). */
enum { CLI_PARSED = -1 };

typedef struct cli_command {
    const char *name;
    const char *summary;           /* one line for `tosac help` */
    void (*help)(FILE *out);       /* full usage text of the command */
    int (*run)(int argc, char **argv); /* argv[0] is the command name; returns the exit status */
} cli_command;

/* Sub-commands (one row each in main.c's table). */
int cli_validate(int argc, char **argv);
void cli_validate_help(FILE *out);
int cli_inspect(int argc, char **argv);
void cli_inspect_help(FILE *out);
int cli_print(int argc, char **argv);
void cli_print_help(FILE *out);
int cli_ops(int argc, char **argv);
int cli_run(int argc, char **argv);
void cli_run_help(FILE *out);
void cli_ops_help(FILE *out);
int cli_compile(int argc, char **argv); void cli_compile_help(FILE *out);
int cli_emit_c(int argc, char **argv);
void cli_emit_c_help(FILE *out);
int cli_targets(int argc, char **argv);
void cli_targets_help(FILE *out);

/* ---- option parsing (hand-written; "--opt value" and "--opt=value") ---- */

/* True if `arg` is one of the spellings `a` or `b` (b may be NULL). */
bool cli_is(const char *arg, const char *a, const char *b);
/*
 * Matches argv[*i] against the value option `name` ("--profile"): "--profile=V" or "--profile V"
 * (then *i advances past V). Returns 1 and sets *value on a match, 0 if argv[*i] is another
 * argument, -1 (after printing an error) if the value is missing.
 */
int cli_opt_value(const char *cmd, int argc, char **argv, int *i, const char *name, const char **value);
/*
 * The argument loop of the commands that take one FILE: options may precede or follow it until
 * "--"; -h/--help prints `help` to stdout. Every other option argv[*i] goes to `opt`, which returns
 * 1 if it took it (advancing *i past a value it consumed, see cli_opt_value), 0 if it is not one
 * of the command's options, -1 after printing an error. Returns CLI_PARSED with *path set, or the
 * exit status the command returns at once (after --help, or a usage error that was printed).
 */
int cli_parse_file_args(const char *cmd, int argc, char **argv, void (*help)(FILE *),
                        int (*opt)(void *ctx, int argc, char **argv, int *i), void *ctx, const char **path);
/* Prints "tosac CMD: MESSAGE" plus a hint to run --help to stderr; returns CLI_EXIT_FAILURE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- the model options of `compile` and `run` (model_opts.c): --input-shape, --bind ---- */

#define CLI_MAX_MODEL_OPTS 64
typedef struct cli_model_opts {
    const char *shape_arg[CLI_MAX_MODEL_OPTS], *bind_arg[CLI_MAX_MODEL_OPTS];
    int n_shapes, n_binds;
    /* what cli_model_opts_load made of them (n_shapes / n_binds entries) */
    tosac_compile_shape shapes[CLI_MAX_MODEL_OPTS];
    int64_t dims[CLI_MAX_MODEL_OPTS][TOSAC_MAX_RANK];
    tosac_compile_binding binds[CLI_MAX_MODEL_OPTS];
    tosac_npy arrays[CLI_MAX_MODEL_OPTS];
    char *names[2 * CLI_MAX_MODEL_OPTS];
    int n_arrays, n_names;
} cli_model_opts;

/* Takes argv[*i] when it is --input-shape or --bind (as cli_opt_value: 1 taken, 0 another
   argument, -1 after printing an error). */
int cli_model_opt(const char *cmd, cli_model_opts *m, int argc, char **argv, int *i);
/* Parses the shapes (positive dims) and reads the bound arrays (each file an input of `set`);
   false after printing why. */
bool cli_model_opts_load(const char *cmd, cli_model_opts *m, tosac_outset *set, tosac_diag *d);
void cli_model_opts_free(cli_model_opts *m);

/* ---- shared actions ---- */

/*
 * Reads a .tosa file. On failure prints the reader's diagnostics as "PATH: error: ..." lines to
 * stderr and returns NULL; on success prints the reader's notes (unless quiet) and returns the graph.
 */
tosac_graph *cli_read_graph(const char *path, bool quiet);
/* Prints one diagnostic line "PATH: KIND: MESSAGE" to stderr; a MESSAGE that already starts with
   "PATH: " is not prefixed twice. */
void cli_print_finding(const char *path, const char *kind, const char *msg);
/*
 * Output files (src/core/outfile.h): every file a command writes goes through one output set, so
 * that an output that is an input, a directory or a non-regular file is refused, and all outputs
 * appear together only when the command succeeded. These wrappers print the reason
 * ("PATH: error: ...") and return false / NULL on failure.
 */
tosac_outset *cli_outset_create(void);
bool cli_out_input(tosac_outset *s, const char *path);
/* The path the output's writer writes to (see tosac_outset_add), or NULL. */
const char *cli_out_add(tosac_outset *s, const char *path);
bool cli_out_commit(tosac_outset *s);
/* tosac_onnx_read_opts.on_external_file for a set (`user`): a model's external data files are
   inputs of the command. */
tosac_status cli_external_input(void *set, const char *path, tosac_diag *d);
/* Prints every message of d as "PATH: error|note: MESSAGE" (see cli_print_finding), then clears d. */
void cli_print_diag(const char *path, tosac_diag *d);
/*
 * Writes `text` to `out_path`, or to stdout when out_path is NULL; `in_path` is the file the text
 * was made from (never overwritten). Returns CLI_EXIT_OK or CLI_EXIT_FAILURE (after printing why).
 */
int cli_write_output(const char *in_path, const char *out_path, const char *text);

/* ---- the partitioned artifact (artifact.c; docs/TARGETS.md) ---- */

/* Writes the partitioned program `a` (tosac_compiled_artifact) as the artifact directory `out`,
   runs Vela on its NPU segments (vela: its path, or NULL), prints the partition report (report)
   and writes the DOT picture (dot: a path, or NULL). */
int cli_artifact_write(const tosac_artifact *a, const char *out, bool report, const char *dot, const char *vela);
int cli_artifact_inspect(const char *dir, bool json, const char *out);
int cli_artifact_validate(const char *dir, bool quiet);
/* Runs an artifact on .npy inputs (names[k] from files[k]); outputs to out_dir or summarised.
   Returns `tosac run`'s exit codes. */
int cli_artifact_run(const char *dir, uint32_t n, const char *const *names, const char *const *files, const char *out_dir);
/* `tosac run`'s .npy handling (cmd_run.c), shared with the artifact runner: q is the tensor's
   float <-> code mapping or NULL. */
bool cli_run_load_npy(const char *path, const tosac_tensor_info *info, const tosac_quant_io *q,
                      uint8_t **bytes, size_t *n, tosac_diag *d);
bool cli_run_write_npy(const char *path, const tosac_tensor_info *info, const uint8_t *bytes, size_t n,
                       const tosac_quant_io *q, tosac_diag *d);
/* A .quant.json sidecar `side` is used only with the program it was written for: the size and hash
   it records must be `model`'s (cmd_run.c; docs/QUANT.md). False after adding the reason to d. */
bool cli_sidecar_matches(const char *side, const char *model, const tosac_quant_iomap *q, tosac_diag *d);
void cli_run_print_summary(const tosac_tensor_info *info, const uint8_t *bytes, size_t n,
                           const tosac_quant_io *q);

#endif
