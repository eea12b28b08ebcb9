/* tosac_onnx_compile: import (convert.c), the pass pipeline (src/passes/), final validation. */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "ir/rewrite.h"
#include "onnx/convert.h"
#include "passes/pass.h"
#include "tosac/validate.h"

/* The program is valid TOSA (pass_verify); now it must also fit the target's profiles and
   extensions. What does not is the model's need, not a bug: UNSUPPORTED with the rule. */
static tosac_status check_target(pass_ctx *pc)
{
    tosac_validate_opts vo = tosac_validate_opts_default();
    vo.profiles = pc->o->profiles ? pc->o->profiles : TOSAC_PROFILE_FP;
    vo.extensions = pc->o->extensions;
    tosac_diag *vd = tosac_diag_create();
    if (!vd) return tosac_diag_add(pc->d, TOSAC_ERR_NOMEM, "out of memory");
    tosac_status s = TOSAC_OK;
    if (tosac_validate(pc->g, &vo, vd) != TOSAC_OK) {
        for (size_t k = 0; k < tosac_diag_count(vd); k++) {
            tosac_status code = TOSAC_OK;
            const char *msg = tosac_diag_message(vd, k, &code);
            if (code != TOSAC_OK) tosac_diag_add(pc->d, TOSAC_ERR_UNSUPPORTED, "not valid for the target: %s", msg);
        }
        s = tosac_diag_add(pc->d, TOSAC_ERR_UNSUPPORTED,
                           "the program needs more than the target allows (e.g. --target TOSA-1.0+INT+FP for "
                           "integer operators, +bf16, +controlflow)");
    }
    tosac_diag_destroy(vd);
    return s;
}

tosac_status tosac_target_parse(const char *target, uint32_t *profiles, uint32_t *extensions, tosac_diag *d)
{
    static const char prefix[] = "TOSA-1.0";
    *profiles = 0;
    *extensions = 0;
    if (!target || strncasecmp(target, prefix, sizeof prefix - 1) != 0)
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "target '%s' does not start with %s", target ? target : "",
                              prefix);
    const char *p = target + sizeof prefix - 1;
    while (*p) {
        if (*p != '+') return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "target '%s': expected '+' at '%s'", target, p);
        const char *e = strchr(p + 1, '+');
        size_t n = e ? (size_t)(e - p - 1) : strlen(p + 1);
        char item[32];
        if (n == 0 || n >= sizeof item)
            return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "target '%s': empty or overlong item", target);
        for (size_t k = 0; k < n; k++) item[k] = (char)tolower((unsigned char)p[1 + k]);
        item[n] = '\0';
        uint32_t ext = tosac_ext_from_name(item);
        if (!strcmp(item, "fp")) *profiles |= TOSAC_PROFILE_FP;
        else if (!strcmp(item, "int")) *profiles |= TOSAC_PROFILE_INT;
        else if (!strcmp(item, "fp16")) *profiles |= 0; /* FP16 is part of PRO-FP in TOSA 1.0 */
        else if (ext) *extensions |= ext;
        else return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "target '%s': unknown profile or extension '%s'", target, item);
        p += 1 + n;
    }
    if (!*profiles) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "target '%s' names no profile (+FP, +INT)", target);
    return TOSAC_OK;
}

tosac_status tosac_onnx_compile(const tosac_onnx_model *m, const tosac_compile_opts *o, tosac_graph **out,
                                tosac_diag *d)
{
    static const tosac_compile_opts k_default;
    if (!m || !out || !m->graph) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_onnx_compile: NULL argument");
    if (!o) o = &k_default;
    if (o->profiles && !(o->profiles & TOSAC_PROFILE_FP))
        return tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED,
                              "targets without PRO-FP need quantization, which is not supported yet");
    if (o->dump_after) {
        bool known = !strcmp(o->dump_after, "all");
        for (const char *const *n = tosac_compile_step_names(); *n; n++) known |= !strcmp(*n, o->dump_after);
        if (!known) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "unknown pass '%s' for --dump-after", o->dump_after);
    }
    tosac_compile_report local;
    memset(&local, 0, sizeof local);
    pass_ctx pc = {.d = d, .o = o, .r = o->report ? o->report : &local};
    memset(pc.r, 0, sizeof *pc.r);
    double t0 = tosac_now_ms();
    tosac_status s = cvt_import(m, o, &pc.g, d);
    if (s != TOSAC_OK) return s;
    pc.b = pc.g->regions[0]->blocks[0];
    pc.r->transposes_imported = pass_count_op(pc.b, TOSAC_OP_TRANSPOSE);
    s = pass_step_done(&pc, "import", t0);
    if (s == TOSAC_OK) s = pass_run_all(&pc);
    if (s == TOSAC_OK) {
        pc.r->transposes_final = pass_count_op(pc.b, TOSAC_OP_TRANSPOSE);
        /* the final check always runs: a converter or pass bug must not produce an invalid file */
        s = pass_verify(&pc, "compiled graph");
    }
    if (s == TOSAC_OK) s = check_target(&pc);
    if (s == TOSAC_OK) {
        *out = pc.g;
    } else {
        tosac_graph_destroy(pc.g);
    }
    return s;
}
