/* tosac_onnx_compile: import (convert.c), the pass pipeline (src/passes/), final validation. */
#include <string.h>

#include "ir/rewrite.h"
#include "onnx/convert.h"
#include "passes/pass.h"
#include "tosac/validate.h"

tosac_status tosac_onnx_compile(const tosac_onnx_model *m, const tosac_compile_opts *o, tosac_graph **out,
                                tosac_diag *d)
{
    static const tosac_compile_opts k_default;
    if (!m || !out || !m->graph) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_onnx_compile: NULL argument");
    if (!o) o = &k_default;
    if (o->profiles && o->profiles != TOSAC_PROFILE_FP)
        return tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED, "only the TOSA-1.0+FP target is supported");
    if (o->dump_after) {
        bool known = !strcmp(o->dump_after, "all");
        for (const char *const *n = tosac_compile_step_names(); *n; n++) known |= !strcmp(*n, o->dump_after);
        if (!known) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "unknown pass '%s' for --dump-after", o->dump_after);
    }
    tosac_compile_report local;
    memset(&local, 0, sizeof local);
    pass_ctx pc = {.d = d, .o = o, .r = o->report ? o->report : &local};
    memset(pc.r, 0, sizeof *pc.r);
    double t0 = pass_now();
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
    if (s == TOSAC_OK) {
        *out = pc.g;
    } else {
        tosac_graph_destroy(pc.g);
    }
    return s;
}
