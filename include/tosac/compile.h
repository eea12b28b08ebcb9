/*
 * ONNX -> TOSA 1.0 compilation (the front end of `tosac compile`).
 *
 * tosac_onnx_compile() lowers a model read by tosac_onnx_read_* into a TOSA graph (one region,
 * block "main") for the TOSA-1.0+FP target: one converter per ONNX op type (src/onnx/onnx_ops.def,
 * each with the default-domain opset range it handles), FP32 activations, int64 values narrowed to
 * INT32 (a constant that does not fit is an error naming the node). The ONNX NCHW layout is kept;
 * layout-sensitive TOSA ops get TRANSPOSEs around them. Static shapes come from the graph inputs,
 * from opts->shapes (symbolic dims default to 1) and from opts->bindings, which turn a graph input
 * into a constant (TOSA shapes, axes, weights and indices must be compile-time constants).
 * Every error appends "node 'NAME' (OpType): reason" (or "input 'NAME': reason") to `d`.
 *
 * After import the graph goes through the pass pipeline (src/passes/passes.def): layout
 * (NHWC, transposes sunk and cancelled), constant folding, conv scale/bias folding (BatchNorm),
 * constant deduplication, dead-code elimination and output fan-out; `tosac compile --report`
 * prints what each did.
 */
#ifndef TOSAC_COMPILE_H
#define TOSAC_COMPILE_H

#include <stddef.h>
#include <stdint.h>

#include "tosac/graph.h"
#include "tosac/npy.h"
#include "tosac/onnx.h"
#include "tosac/status.h"
#include "tosac/validate.h" /* TOSAC_PROFILE_* and TOSAC_EXT_* for tosac_compile_opts */

#ifdef __cplusplus
extern "C" {
#endif

/** A static shape for a graph input (overrides the model's dims, symbolic or not). */
typedef struct tosac_compile_shape {
    const char *name;
    int rank;
    const int64_t *dims;
} tosac_compile_shape;

/** A graph input bound to constant data (its shape and element type come from the array). */
typedef struct tosac_compile_binding {
    const char *name;
    const tosac_npy *value;
} tosac_compile_binding;

/** What compilation did, filled when tosac_compile_opts.report is set. */
#define TOSAC_COMPILE_MAX_STEPS 24
typedef struct tosac_compile_step {
    const char *name;  /**< "import" or a pass name (static string) */
    double ms;         /**< wall time */
    uint32_t ops;      /**< operators in the graph afterwards */
    uint32_t changes;  /**< rewrites the step made (pass specific: nodes removed, constants merged, ...) */
} tosac_compile_step;

typedef struct tosac_compile_report {
    uint32_t n_steps;
    tosac_compile_step steps[TOSAC_COMPILE_MAX_STEPS];
    uint32_t transposes_imported;  /**< TRANSPOSEs right after import (layout changes around NHWC ops + the model's own) */
    uint32_t transposes_final;     /**< TRANSPOSEs in the final graph */
    uint32_t consts_merged;        /**< equal constants folded into one */
    uint64_t dedup_bytes_saved;    /**< constant bytes no longer stored */
    uint32_t identities_added;     /**< IDENTITY operators giving repeated outputs their own tensor */
} tosac_compile_report;

/** Called after a step with the graph as it stands (for --dump-after). */
typedef void (*tosac_compile_dump_fn)(void *ctx, const char *step, const tosac_graph *g);

typedef struct tosac_compile_opts {
    /** The target: TOSAC_PROFILE_* (0 = FP) and TOSAC_EXT_* masks. The program must be valid for
        exactly these (TOSAC_ERR_UNSUPPORTED naming the rule otherwise). PRO-INT next to PRO-FP lets
        integer computations of the model (indices, int64 arithmetic) use PRO-INT operators;
        nothing is quantized. PRO-INT alone (quantization) is not supported yet. */
    uint32_t profiles;
    uint32_t extensions;
    size_t n_shapes;
    const tosac_compile_shape *shapes;
    size_t n_bindings;
    const tosac_compile_binding *bindings;
    /** Rank-4 graph inputs and outputs in NHWC (the model's NCHW dims permuted) instead of the
        model's own layout: no boundary TRANSPOSE remains for CNNs. */
    bool io_nhwc;
    /** Re-validate the graph after every step (always on in builds without NDEBUG). */
    bool verify_each;
    tosac_compile_report *report;     /**< optional */
    const char *dump_after;           /**< a step name or "all"; needs dump */
    tosac_compile_dump_fn dump;
    void *dump_ctx;
    /** Optional: told of every graph input the compile failed to find constant where TOSA needs a
        constant (the inputs its "--bind NAME=FILE.npy" hints name), so that a caller holding their
        values binds them and compiles again (tosac_driver_opts.feeds). */
    void (*on_need_const)(void *user, const char *input);
    void *need_const_user;
} tosac_compile_opts;

/**
 * Parses a target string "TOSA-1.0+FP[+INT][+ext...]" (case-insensitive; extensions by their
 * tosac_ext_from_name names, "fp16" accepted as part of PRO-FP) into profile and extension masks.
 * @return TOSAC_OK, or TOSAC_ERR_INVALID_ARG with a message in `d`.
 */
tosac_status tosac_target_parse(const char *target, uint32_t *profiles, uint32_t *extensions, tosac_diag *d);

/** Names of the steps in pipeline order ("import" first), NULL-terminated. */
const char *const *tosac_compile_step_names(void);

/**
 * Compiles `m` into a new TOSA graph that passes tosac_validate for the target.
 * @return TOSAC_OK; TOSAC_ERR_UNSUPPORTED for an op, opset, type or attribute the converters do
 *         not handle; TOSAC_ERR_INVALID_ARG for bad options (unknown input name, mismatching
 *         binding); TOSAC_ERR_FORMAT for inconsistent models; TOSAC_ERR_NOMEM; TOSAC_ERR_INTERNAL
 *         when the produced graph does not validate (a converter bug; the message names the op).
 *         `*out` is untouched on failure.
 */
tosac_status tosac_onnx_compile(const tosac_onnx_model *m, const tosac_compile_opts *o, tosac_graph **out,
                                tosac_diag *d);

#ifdef __cplusplus
}
#endif
#endif
