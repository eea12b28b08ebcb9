/* tosac validate: static checks of a .tosa file (ERROR_IF rules, profiles, extensions, levels). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cli/cli.h"
#include "tosac/target.h"
#include "tosac/validate.h"

#define CMD "validate"

void cli_validate_help(FILE *out)
{
    fprintf(out,
            "usage: tosac validate FILE [--profile P] [--ext LIST] [--level L] [-q]\n"
            "\n"
            "Checks FILE against the TOSA 1.0 specification: file structure, operand counts, types and\n"
            "ranks, every statically checkable ERROR_IF rule, the selected profiles and extensions, and\n"
            "the level limits. FILE may also be an artifact directory of 'tosac compile --target\n"
            "ethos-...': every NPU segment must then be PRO-INT level 8K within every rule of the target,\n"
            "every CPU segment valid TOSA, every segment input wired to an earlier output.\n"
            "\n"
            "options:\n"
            "  --profile P   INT, FP or INT+FP (default INT+FP). With --profile and no --ext, no\n"
            "                extension is enabled.\n"
            "  --ext LIST    comma-separated extensions, 'all' or 'none' (default: all but dynamic,\n"
            "                which lifts the compile-time-constant rules and must be named). Extensions:\n"
            "               ");
    for (unsigned bit = 0; bit < TOSAC_EXT_COUNT; bit++) fprintf(out, "%s%s", bit ? "," : " ", tosac_ext_name(bit));
    fprintf(out,
            "\n"
            "  --level L     8K or none (default 8K)\n"
            "  -q, --quiet   print only the findings: no notes, no summary line\n"
            "  -h, --help    show this text\n"
            "\n"
            "Each finding goes to stderr as 'FILE: error: ...', 'FILE: unpredictable: ...' (a failed\n"
            "level check) or 'FILE: note: ...'. The summary line 'FILE: valid (...)' or\n"
            "'FILE: invalid: N errors' goes to stdout.\n"
            "\n"
            "exit status:\n"
            "  0  the graph is valid\n"
            "  1  the file cannot be read or is malformed, or the command line is wrong\n"
            "  2  the graph is invalid (an ERROR_IF rule fails or a level limit is exceeded)\n");
}

static bool parse_profile(const char *s, uint32_t *out)
{
    uint32_t m = 0;
    char buf[32];
    size_t n = strlen(s);
    if (n == 0 || n >= sizeof buf) return false;
    memcpy(buf, s, n + 1);
    for (char *tok = buf, *next; tok; tok = next) {
        next = strchr(tok, '+');
        if (next) *next++ = '\0';
        if (!strncasecmp(tok, "pro-", 4)) tok += 4;
        if (!strcasecmp(tok, "int"))
            m |= TOSAC_PROFILE_INT;
        else if (!strcasecmp(tok, "fp"))
            m |= TOSAC_PROFILE_FP;
        else
            return false;
    }
    *out = m;
    return true;
}

/* Parses "int16,bf16", "all" or "none"; on an unknown name reports it and returns false. */
static bool parse_ext(const char *s, uint32_t *out)
{
    if (!strcasecmp(s, "all")) {
        *out = TOSAC_EXT_ALL;
        return true;
    }
    if (!strcasecmp(s, "none") || !*s) {
        *out = 0;
        return true;
    }
    uint32_t m = 0;
    const char *p = s;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        char name[32];
        if (n >= 4 && !strncasecmp(p, "ext-", 4)) {
            p += 4;
            n -= 4;
        }
        if (n == 0 || n >= sizeof name) {
            cli_usage_error(CMD, "bad extension list '%s'", s);
            return false;
        }
        for (size_t i = 0; i < n; i++) name[i] = (char)tolower((unsigned char)p[i]);
        name[n] = '\0';
        uint32_t bit = tosac_ext_from_name(name);
        if (!bit) {
            cli_usage_error(CMD, "unknown extension '%s' (known: see 'tosac validate --help')", name);
            return false;
        }
        m |= bit;
        p += n;
        if (*p == ',') p++;
    }
    *out = m;
    return true;
}

static bool parse_level(const char *s, tosac_level *out)
{
    if (!strcasecmp(s, "8k") || !strcasecmp(s, "eightk")) {
        *out = TOSAC_LEVEL_8K;
        return true;
    }
    if (!strcasecmp(s, "none")) {
        *out = TOSAC_LEVEL_NONE;
        return true;
    }
    return false;
}

static const char *profile_str(uint32_t p)
{
    switch (p & (TOSAC_PROFILE_INT | TOSAC_PROFILE_FP)) {
    case TOSAC_PROFILE_INT: return "INT";
    case TOSAC_PROFILE_FP: return "FP";
    case TOSAC_PROFILE_INT | TOSAC_PROFILE_FP: return "INT+FP";
    default: return "none";
    }
}

static void print_ext(uint32_t e)
{
    if (e == 0) {
        fputs("none", stdout);
    } else if ((e & TOSAC_EXT_ALL) == TOSAC_EXT_ALL) {
        fputs("all", stdout);
    } else if ((e & TOSAC_EXT_ALL) == (TOSAC_EXT_ALL & ~(uint32_t)TOSAC_EXT_DYNAMIC)) {
        fputs("all but dynamic", stdout);
    } else {
        const char *sep = "";
        for (unsigned bit = 0; bit < TOSAC_EXT_COUNT; bit++)
            if (e & (1u << bit)) {
                printf("%s%s", sep, tosac_ext_name(bit));
                sep = ",";
            }
    }
}

typedef struct validate_args {
    bool quiet;
    const char *profile, *ext, *level;
} validate_args;

static int validate_opt(void *ctx, int argc, char **argv, int *i)
{
    validate_args *a = ctx;
    if (cli_is(argv[*i], "-q", "--quiet")) {
        a->quiet = true;
        return 1;
    }
    int m = cli_opt_value(CMD, argc, argv, i, "--profile", &a->profile);
    if (!m) m = cli_opt_value(CMD, argc, argv, i, "--ext", &a->ext);
    if (!m) m = cli_opt_value(CMD, argc, argv, i, "--level", &a->level);
    return m;
}

int cli_validate(int argc, char **argv)
{
    validate_args a = {0};
    const char *path;
    int rc = cli_parse_file_args(CMD, argc, argv, cli_validate_help, validate_opt, &a, &path);
    if (rc != CLI_PARSED) return rc;

    tosac_validate_opts opts = tosac_validate_opts_default();
    if (a.profile) {
        if (!parse_profile(a.profile, &opts.profiles))
            return cli_usage_error(CMD, "bad --profile '%s' (expected INT, FP or INT+FP)", a.profile);
        opts.extensions = 0;
    }
    if (a.ext && !parse_ext(a.ext, &opts.extensions)) return CLI_EXIT_FAILURE;
    if (a.level && !parse_level(a.level, &opts.level))
        return cli_usage_error(CMD, "bad --level '%s' (expected 8K or none)", a.level);

    if (tosac_artifact_is_dir(path)) return cli_artifact_validate(path, a.quiet); /* docs/TARGETS.md */
    tosac_graph *g = cli_read_graph(path, a.quiet);
    if (!g) return CLI_EXIT_FAILURE;
    tosac_diag *d = tosac_diag_create();
    if (!d) {
        tosac_graph_destroy(g);
        fprintf(stderr, "tosac: out of memory\n");
        return CLI_EXIT_FAILURE;
    }
    tosac_status s = tosac_validate(g, &opts, d);
    size_t n_err = 0, n_unpred = 0, n = tosac_diag_count(d);
    for (size_t i = 0; i < n; i++) {
        tosac_status code = TOSAC_OK;
        const char *msg = tosac_diag_message(d, i, &code);
        if (code == TOSAC_OK) {
            if (!a.quiet) cli_print_finding(path, "note", msg);
        } else if (code == TOSAC_ERR_UNPREDICTABLE) {
            n_unpred++;
            cli_print_finding(path, "unpredictable", msg);
        } else {
            n_err++;
            cli_print_finding(path, "error", msg);
        }
    }
    size_t dropped = tosac_diag_dropped(d);
    if (dropped) fprintf(stderr, "%s: note: %zu more findings not shown\n", path, dropped);
    tosac_diag_destroy(d);
    tosac_graph_destroy(g);

    if (s == TOSAC_OK) {
        if (!a.quiet) {
            printf("%s: valid (profile %s, extensions ", path, profile_str(opts.profiles));
            print_ext(opts.extensions);
            printf(", level %s)\n", opts.level == TOSAC_LEVEL_8K ? "8K" : "none");
        }
        rc = CLI_EXIT_OK;
    } else if (s == TOSAC_ERR_TOSA_ERROR || s == TOSAC_ERR_UNPREDICTABLE) {
        if (!a.quiet) {
            printf("%s: invalid: %zu error%s", path, n_err, n_err == 1 ? "" : "s");
            if (n_unpred) printf(", %zu level finding%s", n_unpred, n_unpred == 1 ? "" : "s");
            if (dropped) printf(" (+%zu not shown)", dropped);
            printf("\n");
        }
        rc = CLI_EXIT_INVALID;
    } else {
        fprintf(stderr, "%s: error: validation failed: %s\n", path, tosac_status_str(s));
        rc = CLI_EXIT_FAILURE;
    }
    return rc;
}
