/* The target table (targets.def) and target lookup. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/diag.h"
#include "tosac/compile.h"
#include "tosac/target.h"
#include "tosac/validate.h"

static const tosac_target_info k_targets[] = {
#define TARGET(name, spec, prof, ext, rules, macs, sys, mem, lower, summary) \
    {name, spec, prof, ext, rules, true, macs, (macs) ? name : NULL, sys, mem, lower, summary},
#include "target/targets.def"
#undef TARGET
};
#define N_TARGETS (sizeof k_targets / sizeof k_targets[0])

uint32_t tosac_target_count(void) { return (uint32_t)N_TARGETS; }
const tosac_target_info *tosac_target_at(uint32_t i) { return i < N_TARGETS ? &k_targets[i] : NULL; }

tosac_status tosac_target_lookup(const char *name, tosac_target_info *buf, const tosac_target_info **out,
                                 tosac_diag *d)
{
    if (!name || !buf || !out) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_target_lookup: NULL argument");
    for (size_t k = 0; k < N_TARGETS; k++)
        if (!strcasecmp(k_targets[k].name, name)) {
            *out = &k_targets[k];
            return TOSAC_OK;
        }
    if (strncasecmp(name, "TOSA-", 5) != 0) {
        char list[512];
        size_t n = 0;
        list[0] = '\0';
        for (size_t k = 0; k < N_TARGETS && n + 32 < sizeof list; k++)
            n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", k ? ", " : "", k_targets[k].name);
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "unknown target '%s' (%s, or TOSA-1.0+FP|INT[+ext...]; see 'tosac targets')",
                              name, list);
    }
    memset(buf, 0, sizeof *buf);
    tosac_status s = tosac_target_parse(name, &buf->profiles, &buf->extensions, d);
    if (s != TOSAC_OK) return s;
    buf->name = name;
    buf->tosa_spec = name;
    buf->rules = TOSAC_RULES_NONE;
    buf->summary = "a TOSA 1.0 program (one .tosa file)";
    *out = buf;
    return TOSAC_OK;
}
