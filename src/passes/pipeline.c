/* The pass manager: runs passes.def in order (see pass.h). */
#include <stdio.h>
#include <string.h>

#include "ir/rewrite.h"
#include "passes/pass.h"
#include "tosa/op_table.h"
#include "tosac/validate.h"

static const char *const k_step_names[] = {
    "import",
#define PASS(name, fn, doc) #name,
#include "passes/passes.def"
#undef PASS
    NULL,
};

const char *const *tosac_compile_step_names(void) { return k_step_names; }

uint32_t pass_count_op(const tosac_block *b, tosac_op op)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < b->n_nodes; i++) n += !b->nodes[i]->dead && b->nodes[i]->op == (uint32_t)op;
    return n;
}

tosac_status pass_verify(pass_ctx *pc, const char *name)
{
    tosac_validate_opts vo = tosac_validate_opts_default();
    tosac_diag *vd = tosac_diag_create();
    if (!vd) return tosac_diag_add(pc->d, TOSAC_ERR_NOMEM, "out of memory");
    tosac_status s = TOSAC_OK;
    if (tosac_validate(pc->g, &vo, vd) != TOSAC_OK) {
        for (size_t k = 0; k < tosac_diag_count(vd); k++) {
            tosac_status code = TOSAC_OK;
            const char *msg = tosac_diag_message(vd, k, &code);
            if (code != TOSAC_OK) tosac_diag_add(pc->d, TOSAC_ERR_INTERNAL, "internal error: %s: %s", name, msg);
        }
        s = TOSAC_ERR_INTERNAL;
    }
    tosac_diag_destroy(vd);
    return s;
}

tosac_status pass_step_done(pass_ctx *pc, const char *name, double t0)
{
    tosac_status s = ir_compact(pc->b);
    if (s != TOSAC_OK)
        return tosac_diag_add(pc->d, s, s == TOSAC_ERR_NOMEM ? "out of memory" : "internal error: %s left a cycle",
                              name);
    tosac_compile_report *r = pc->r;
    if (r->n_steps < TOSAC_COMPILE_MAX_STEPS) {
        tosac_compile_step *st = &r->steps[r->n_steps++];
        st->name = name;
        st->ms = tosac_now_ms() - t0;
        st->ops = pc->b->n_nodes;
        st->changes = pc->changes;
    }
    pc->changes = 0;
    bool verify_each = pc->o->verify_each;
#ifndef NDEBUG
    verify_each = true;
#endif
    if (verify_each) {
        char when[64];
        snprintf(when, sizeof when, "after %s", name);
        if ((s = pass_verify(pc, when)) != TOSAC_OK) return s;
    }
    const char *want = pc->o->dump_after;
    if (pc->o->dump && want && (!strcmp(want, "all") || !strcmp(want, name))) pc->o->dump(pc->o->dump_ctx, name, pc->g);
    return TOSAC_OK;
}

static bool count_fits(uint32_t n, uint8_t entries, bool list)
{
    return list ? n + 1 >= entries : n == entries;
}

/* Every operator has the operand and result counts of its op table row: the passes index them
   (a CONV2D's bias is inputs[2]) without checking. The converters build them so; a bug there is
   reported here rather than read out of bounds. */
static tosac_status check_operand_counts(pass_ctx *pc)
{
    for (uint32_t r = 0; r < pc->g->n_regions; r++)
        for (uint32_t bi = 0; bi < pc->g->regions[r]->n_blocks; bi++) {
            const tosac_block *b = pc->g->regions[r]->blocks[bi];
            for (uint32_t i = 0; i < b->n_nodes; i++) {
                const tosac_node *n = b->nodes[i];
                const tosac_op_info *info = tosac_op_info_get(n->op);
                if (info && count_fits(n->n_inputs, info->n_inputs, info->input_list) &&
                    count_fits(n->n_outputs, info->n_outputs, info->output_list))
                    continue;
                return tosac_diag_add(pc->d, TOSAC_ERR_INTERNAL,
                                      "internal error: import made operator %u of block '%s' (%s, node '%s') with "
                                      "%u inputs and %u outputs",
                                      (unsigned)i, b->name, info ? info->name : "unknown op",
                                      n->location ? n->location : "", (unsigned)n->n_inputs, (unsigned)n->n_outputs);
            }
        }
    return TOSAC_OK;
}

tosac_status pass_run_all(pass_ctx *pc)
{
    tosac_status s = check_operand_counts(pc);
#define PASS(name, fn, doc)                                                                                          \
    if (s == TOSAC_OK) {                                                                                             \
        double t0 = tosac_now_ms();                                                                                      \
        pc->changes = 0;                                                                                             \
        s = fn(pc);                                                                                                  \
        if (s == TOSAC_OK) s = pass_step_done(pc, #name, t0);                                                        \
    }
#include "passes/passes.def"
#undef PASS
    return s;
}
