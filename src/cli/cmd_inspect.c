/* tosac inspect / tosac print: describe a .tosa file on stdout (or in a file given with -o). */
#include <stdio.h>

#include "cli/cli.h"
#include "tosac/target.h"
#include "tosac/inspect.h"

void cli_inspect_help(FILE *out)
{
    fprintf(out,
            "usage: tosac inspect FILE [--json] [-o OUT]\n"
            "\n"
            "Summarises FILE: per region and block the inputs, outputs, tensors (type, shape, constant\n"
            "bytes, small constant values, variable flags), shape values and operators (operands and\n"
            "attributes), then totals: operators, tensors, parameter bytes and operator counts by type.\n"
            "An artifact directory ('tosac compile --target ethos-...') gives its manifest and segments.\n"
            "\n"
            "options:\n"
            "  --json            print one JSON document instead (keys: version, regions[].blocks[]\n"
            "                    {name, inputs, outputs, tensors, shapes, operators, undeclared}, totals;\n"
            "                    see include/tosac/inspect.h)\n"
            "  -o, --output OUT  write to OUT instead of stdout (not created if FILE cannot be read)\n"
            "  -h, --help        show this text\n"
            "\n"
            "exit status: 0 success; 1 the file cannot be read or is malformed, or bad command line.\n");
}

void cli_print_help(FILE *out)
{
    fprintf(out,
            "usage: tosac print FILE [-o OUT]\n"
            "\n"
            "Prints FILE as readable, deterministic text: one line per operator,\n"
            "  %%out = CONV2D(%%in, %%w, %%b, %%izp, %%wzp) {pad = [1,1,1,1], ...} : INT32[1,16,16,8]\n"
            "with small constants (up to 16 elements) shown with their values.\n"
            "\n"
            "options:\n"
            "  -o, --output OUT  write to OUT instead of stdout (not created if FILE cannot be read)\n"
            "  -h, --help        show this text\n"
            "\n"
            "exit status: 0 success; 1 the file cannot be read or is malformed, or bad command line.\n");
}

typedef struct describe_args {
    const char *cmd;
    bool allow_json, json;
    const char *out;
} describe_args;

static int describe_opt(void *ctx, int argc, char **argv, int *i)
{
    describe_args *a = ctx;
    if (a->allow_json && cli_is(argv[*i], "--json", NULL)) {
        a->json = true;
        return 1;
    }
    int m = cli_opt_value(a->cmd, argc, argv, i, "-o", &a->out);
    return m ? m : cli_opt_value(a->cmd, argc, argv, i, "--output", &a->out);
}

/* Shared by inspect and print. */
static int run(const char *cmd, void (*help)(FILE *), bool allow_json, int argc, char **argv)
{
    describe_args a = {.cmd = cmd, .allow_json = allow_json};
    const char *path;
    int rc = cli_parse_file_args(cmd, argc, argv, help, describe_opt, &a, &path);
    if (rc != CLI_PARSED) return rc;
    if (a.out && !*a.out) return cli_usage_error(cmd, "empty output file name");

    if (allow_json && tosac_artifact_is_dir(path)) return cli_artifact_inspect(path, a.json, a.out);
    tosac_graph *g = cli_read_graph(path, false);
    if (!g) return CLI_EXIT_FAILURE;
    char *text = !allow_json ? tosac_graph_print(g) : a.json ? tosac_inspect_json(g) : tosac_inspect_text(g);
    tosac_graph_destroy(g);
    if (!text) {
        fprintf(stderr, "tosac %s: out of memory\n", cmd);
        return CLI_EXIT_FAILURE;
    }
    rc = cli_write_output(path, a.out, text);
    tosac_string_free(text);
    return rc;
}

int cli_inspect(int argc, char **argv) { return run("inspect", cli_inspect_help, true, argc, argv); }

int cli_print(int argc, char **argv) { return run("print", cli_print_help, false, argc, argv); }
