/*
 * The compiler pass manager. Passes rewrite the main block of a TOSA graph in place (using
 * src/ir/rewrite.h) and report how many rewrites they made; the manager times them, compacts the
 * graph, re-validates it when asked (always in builds without NDEBUG) and calls the dump hook.
 */
#ifndef TOSAC_PASSES_PASS_H
#define TOSAC_PASSES_PASS_H

#include "core/clock.h"
#include "core/diag.h"
#include "ir/graph.h"
#include "tosac/compile.h"

typedef struct pass_ctx {
    tosac_graph *g;
    tosac_block *b; /* the main block */
    tosac_diag *d;
    const tosac_compile_opts *o;
    tosac_compile_report *r; /* never NULL inside a pass */
    uint32_t changes;        /* the running pass adds its rewrites here */
} pass_ctx;

#define PASS(name, fn, doc) tosac_status fn(pass_ctx *pc);
#include "passes/passes.def"
#undef PASS

/* Records one step in the report and handles compaction, verification and dumping. `t0` is the
   step's start (tosac_now_ms(), core/clock.h). */
tosac_status pass_step_done(pass_ctx *pc, const char *name, double t0);
/* Validates the graph; findings become "internal error: WHEN: ..." (a converter or pass bug). */
tosac_status pass_verify(pass_ctx *pc, const char *when);
/* Runs every pass of passes.def in order. */
tosac_status pass_run_all(pass_ctx *pc);
/* Number of live operators with the given op. */
uint32_t pass_count_op(const tosac_block *b, tosac_op op);

#endif
