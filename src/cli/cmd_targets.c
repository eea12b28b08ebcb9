/*
 * tosac targets: the target table (src/target/targets.def).
 *   tosac targets [--json]
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "core/strbuf.h"
#include "tosac/target.h"

void cli_targets_help(FILE *out)
{
    fprintf(out,
            "usage: tosac targets [--json]\n"
            "\n"
            "Lists the deployment targets `tosac compile --target` accepts besides TOSA-1.0+... spec strings:\n"
            "their TOSA spec (as ExecuTorch derives it), operator rule set, NPU MACs, Vela system config and\n"
            "memory mode defaults. An Ethos-U or Cortex-M target quantizes to INT (--calibrate, or a QDQ\n"
            "model) and writes an artifact directory: NPU and CPU segments, manifest.json and the\n"
            "partition report (docs/TARGETS.md).\n"
            "\n"
            "options:\n"
            "  --json   one JSON document instead of the table\n");
}

static const char *rules_name(tosac_rule_set r) { return r == TOSAC_RULES_U55 ? "u55" : r == TOSAC_RULES_U85 ? "u85" : "none"; }

static void json_opt_str(tosac_strbuf *sb, const char *key, const char *v)
{
    tosac_strbuf_appendf(sb, ", \"%s\": ", key);
    if (v) tosac_strbuf_append_json_str(sb, v);
    else tosac_strbuf_append(sb, "null");
}

int cli_targets(int argc, char **argv)
{
    bool json = false;
    for (int i = 1; i < argc; i++) {
        if (cli_is(argv[i], "--json", NULL)) json = true;
        else if (cli_is(argv[i], "-h", "--help")) {
            cli_targets_help(stdout);
            return CLI_EXIT_OK;
        } else
            return cli_usage_error("targets", "unknown argument '%s'", argv[i]);
    }
    tosac_strbuf sb;
    tosac_strbuf_init(&sb);
    if (json) tosac_strbuf_append(&sb, "{\"targets\": [");
    else
        tosac_strbuf_appendf(&sb, "%-15s %-28s %-5s %5s  %-28s %-21s %s\n", "name", "TOSA spec", "rules", "MACs",
                             "Vela system config", "memory mode", "summary");
    for (uint32_t k = 0; k < tosac_target_count(); k++) {
        const tosac_target_info *t = tosac_target_at(k);
        if (json) {
            tosac_strbuf_append(&sb, k ? ",\n  {\"name\": " : "\n  {\"name\": ");
            tosac_strbuf_append_json_str(&sb, t->name);
            json_opt_str(&sb, "tosa_spec", t->tosa_spec);
            tosac_strbuf_appendf(&sb, ", \"rules\": \"%s\", \"macs\": %u", rules_name(t->rules), t->macs);
            json_opt_str(&sb, "accelerator_config", t->accelerator);
            json_opt_str(&sb, "system_config", t->system_config);
            json_opt_str(&sb, "memory_mode", t->memory_mode);
            tosac_strbuf_appendf(&sb, ", \"lowering\": %u", t->lowering);
            json_opt_str(&sb, "summary", t->summary);
            tosac_strbuf_append(&sb, "}");
        } else {
            tosac_strbuf_appendf(&sb, "%-15s %-28s %-5s %5u  %-28s %-21s %s\n", t->name, t->tosa_spec, rules_name(t->rules),
                                 t->macs, t->system_config ? t->system_config : "-", t->memory_mode ? t->memory_mode : "-",
                                 t->summary);
        }
    }
    if (json) tosac_strbuf_append(&sb, "\n]}\n");
    else
        tosac_strbuf_append(&sb, "TOSA-1.0+INT|FP[+ext...]  a plain TOSA program (one .tosa file, no partitioning)\n");
    char *text = tosac_strbuf_take(&sb);
    if (!text) {
        fprintf(stderr, "tosac targets: out of memory\n");
        return CLI_EXIT_FAILURE;
    }
    int rc = cli_write_output(NULL, NULL, text);
    tosac_string_free(text);
    return rc;
}
