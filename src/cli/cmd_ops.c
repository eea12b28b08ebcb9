/* `tosac ops`: the operator table tosac implements, as text or as the README's Markdown table. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "tosa/op_table.h"

#define CMD "ops"

void cli_ops_help(FILE *out)
{
    fprintf(out,
            "usage: tosac ops [--markdown]\n"
            "\n"
            "Lists the 75 TOSA 1.0 operators with their operands (flatbuffer order) and every\n"
            "type-support row with the profile and extensions it needs. --markdown prints the table\n"
            "that README.md carries.\n");
}

static void put_operands(const tosac_operand_desc *o, FILE *out)
{
    for (const char *sep = ""; o->name; o++, sep = ", ") {
        fprintf(out, "%s%s", sep, o->name);
        if (o->kind == TOSAC_OPND_CTC) fputs(" (const)", out);
        if (o->kind == TOSAC_OPND_SHAPE) fputs(" (shape)", out);
        if (o->kind == TOSAC_OPND_LIST) fputs("[]", out);
    }
}

/* "PRO-INT", "PRO-INT/PRO-FP", "PRO-FP+EXT-BF16+EXT-FP8E4M3" */
static void put_requirement(const tosac_type_row *r, FILE *out)
{
    bool any = false;
    if (r->profiles & TOSAC_PROFILE_INT) {
        fputs("PRO-INT", out);
        any = true;
    }
    if (r->profiles & TOSAC_PROFILE_FP) fprintf(out, "%sPRO-FP", any ? "/" : "");
    for (unsigned b = 0; b < TOSAC_EXT_COUNT; b++) {
        if (!(r->extensions & (1u << b))) continue;
        fputs("+EXT-", out);
        for (const char *p = tosac_ext_name(b); *p; p++) fputc(*p >= 'a' && *p <= 'z' ? *p - 32 : *p, out);
    }
}

static void put_rows(uint32_t op, FILE *out, const char *row_sep)
{
    unsigned n = 0;
    const tosac_type_row *rows = tosac_op_type_rows(op, &n);
    for (unsigned i = 0; i < n; i++) {
        /* rows sharing a requirement are printed after one label */
        bool same = i > 0 && rows[i].profiles == rows[i - 1].profiles && rows[i].extensions == rows[i - 1].extensions;
        if (!same) {
            if (i) fputs(row_sep, out);
            put_requirement(&rows[i], out);
            fputs(":", out);
        }
        fputs(" {", out);
        const char *sep = "";
        for (unsigned t = 0; t < 4; t++)
            if (rows[i].t[t] != TOSAC_DTYPE_UNKNOWN) {
                fprintf(out, "%s%s", sep, tosac_dtype_short_name((tosac_dtype)rows[i].t[t]));
                sep = ",";
            }
        fputs("}", out); /* control-flow and CUSTOM rows have no type columns: "{}" */
    }
}

/* What separates the parts of one operator's entry: the text listing puts the type rows on
   indented lines below the operands, the README table keeps everything in one row. */
typedef struct ops_layout {
    const char *after_inputs, *after_outputs, *row_sep, *end;
} ops_layout;

static const ops_layout k_text = {") -> (", ")\n      ", "\n      ", "\n"};
static const ops_layout k_markdown = {" | ", " | ", "; ", " |\n"};

int cli_ops(int argc, char **argv)
{
    bool markdown = false;
    for (int i = 1; i < argc; i++) {
        if (cli_is(argv[i], "--markdown", NULL)) {
            markdown = true;
        } else if (cli_is(argv[i], "-h", "--help")) {
            cli_ops_help(stdout);
            return CLI_EXIT_OK;
        } else {
            return cli_usage_error(CMD, "unknown argument '%s'", argv[i]);
        }
    }
    if (markdown) {
        puts("| # | operator | inputs | outputs | type rows (profile/extension: type columns) |");
        puts("|---|---|---|---|---|");
    }
    const ops_layout *l = markdown ? &k_markdown : &k_text;
    for (uint32_t op = 1; op < TOSAC_OP_COUNT; op++) {
        const tosac_op_info *info = tosac_op_info_get(op);
        if (markdown)
            printf("| %u | %s | ", (unsigned)op, info->name);
        else
            printf("%-3u %-22s (", (unsigned)op, info->name);
        put_operands(info->inputs, stdout);
        fputs(l->after_inputs, stdout);
        put_operands(info->outputs, stdout);
        fputs(l->after_outputs, stdout);
        put_rows(op, stdout, l->row_sep);
        fputs(l->end, stdout);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "tosac ops: cannot write to standard output\n");
        return CLI_EXIT_FAILURE;
    }
    return CLI_EXIT_OK;
}
