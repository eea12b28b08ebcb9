/*
 * C code generation for microcontrollers (`tosac emit-c`, docs/EMIT_C.md).
 *
 * The host runs the runtime's create (validate, build, fuse, plan, prepare) with the portable
 * kernels and writes what it decided as C11: the constants and the prepared bytes as const arrays,
 * an arena plan without the intermediates that fused epilogues never write, and the call sequence
 * of the kernels (src/kernels/, the same sources the host runs, so the results are the same bits).
 * The device compiles the generated file with the kernel sources it lists: no allocator, no stdio,
 * no reader, validator or planner.
 */
#ifndef TOSAC_EMIT_EMIT_C_H
#define TOSAC_EMIT_EMIT_C_H

#include <stddef.h>
#include <stdint.h>

#include "tosac/graph.h"
#include "tosac/quant.h"
#include "tosac/runtime.h"
#include "tosac/target.h"
#include "tosac/status.h"

typedef struct tosac_emit_c_opts {
    const char *name;             /* C identifier prefixing the API (NAME_invoke, NAME_ARENA_SIZE) */
    const char *source;           /* the model's path, for the banner (may be NULL) */
    const tosac_quant_iomap *qio; /* the program's .quant.json sidecar, or NULL: q-param macros */
    tosac_program_isa isa;        /* PORTABLE (any C11 target; HOST means it too) or MVE (the Helium
                                     kernels' prepared layouts: a Cortex-M55 build only) */
} tosac_emit_c_opts;

typedef struct tosac_emit_c_out {
    char *header;  /* NAME.h */
    char *source;  /* NAME.c */
    char *cmake;   /* NAME.cmake: NAME_SOURCES, NAME_INCLUDE_DIRS, NAME_DEFINITIONS */
    char *sources; /* sources.txt: the kernel sources, relative to the tosac source tree */
    size_t arena, arena_lower_bound;     /* the emitted plan and its liveness lower bound */
    size_t runtime_arena, runtime_lower_bound; /* what tosac_program_create plans */
    size_t const_bytes, prepared_bytes;  /* const arrays: constants, prepared bytes */
    size_t io_bytes;                     /* graph inputs and outputs (caller buffers) */
    uint32_t n_calls;                    /* kernel calls per invoke */
} tosac_emit_c_out;

/* Emits graph `g` (its block "main"); every failure adds a message to d naming the operator. */
tosac_status tosac_emit_c(const tosac_graph *g, const tosac_emit_c_opts *o, tosac_emit_c_out *out, tosac_diag *d);
/* Emits a segmented artifact (docs/TARGETS.md): every segment as above, chained through one arena;
   NPU segment K runs through the weak hook NAME_npu_segment_K, whose default runs it on the CPU. */
tosac_status tosac_emit_c_artifact(const tosac_artifact *a, const tosac_emit_c_opts *o, tosac_emit_c_out *out,
                                   tosac_diag *d);
void tosac_emit_c_out_free(tosac_emit_c_out *o);

#endif
