/*
 * The tosac runtime: load -> verify -> build -> plan -> prepare -> invoke.
 *
 * tosac_program_create() validates a graph (tosac_validate), expands its entry block (block "main"
 * of the first region) and every COND_IF / WHILE_LOOP sub-block reachable from it, converts the
 * constants to execution storage, prepares one kernel call per operator (fusing a RESCALE /
 * CLAMP into the convolution or MATMUL before it), computes a static memory plan and runs the
 * kernels' prepare step (packed weights, requantization tables) into the prepared constants.
 * Everything is allocated there; tosac_program_invoke() never calls the allocator (only an error
 * message added to a non-NULL tosac_diag allocates, in the diag).
 *
 * Memory:
 *   - the ARENA holds every intermediate tensor, the graph inputs and outputs (unless bound to
 *     caller buffers) and kernel scratch, placed by a greedy-by-size planner over value lifetimes
 *     (TFLite Micro style). An input's slot is reused once the input is last read, so inputs are
 *     written (tosac_program_input_ptr, tosac_program_set_input_tosa) before every invoke; the
 *     outputs stay readable until the next invoke. The caller may supply the arena
 *     (tosac_program_set_arena).
 *   - the CONSTANTS buffer holds every CONST / CONST_SHAPE value and the initial values of the
 *     variables, converted to execution storage; the caller may supply it (opts.const_buffer).
 *   - the VARIABLES buffer holds the EXT-VARIABLE state; it persists across invocations.
 * The plan (src/runtime/plan.c): every operator of every block instance gets a step in execution
 * order (a COND_IF / WHILE_LOOP spans the steps of its sub-blocks, which each operator gets its
 * own copy of); a value lives from its producer to its last reader, and a value of an enclosing
 * block read inside a sub-block lives over the whole control-flow operator (all iterations).
 * RESHAPE, IDENTITY and the elementwise unary / binary / SELECT operators write in place into
 * input 0 when it dies there (RESHAPE and IDENTITY then cost nothing; of a constant, they are the
 * constant); sub-block inputs are the operator's operands, COND_IF results are produced straight
 * into the operator's outputs and the WHILE_LOOP state lives in its outputs. Buffers are placed
 * greedily, largest first, at the lowest 16-byte aligned offset free over their lifetime.
 * Execution storage is that of src/kernels/kernel.h: BOOL uint8 0/1, INT4 int8 (one per byte),
 * INT8/16/32 native, INT48 and SHAPE int64, FP32 float, FP16/BF16 uint16 bits, FP8 uint8 bits, all
 * host byte order; with opts.precise every floating-point tensor is stored as double.
 *
 * After create the program keeps no pointer into the graph (unless opts.borrow_constants): the
 * graph may be destroyed. A program is not safe for concurrent use; distinct programs are.
 */
#ifndef TOSAC_RUNTIME_H
#define TOSAC_RUNTIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tosac/dtype.h"
#include "tosac/graph.h"
#include "tosac/status.h"
#include "tosac/validate.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tosac_program tosac_program;

/** Alignment (bytes) required of a caller-supplied arena or constants buffer. */
#define TOSAC_PROGRAM_ALIGN 16

/** The WHILE_LOOP iteration cap when tosac_program_opts.max_iterations is 0. */
#define TOSAC_DEFAULT_MAX_ITERATIONS 10000000u

/** Kernel variants (tosac_program_opts.kernel_isa). */
typedef enum tosac_program_isa {
    TOSAC_PROGRAM_ISA_HOST = 0,
    TOSAC_PROGRAM_ISA_PORTABLE,
    TOSAC_PROGRAM_ISA_MVE
} tosac_program_isa;

typedef struct tosac_program_opts {
    /** Profiles, extensions and level the graph is validated against before anything else. */
    tosac_validate_opts validate;
    /** Store and compute every floating-point tensor as double (the reference model's
        --precise_mode 1); outputs then read back as fp64. */
    bool precise;
    /** Constants whose TOSA encoding already is their execution storage (INT8/16/32, SHAPE, and
        the FP formats when not precise, on a little-endian host, suitably aligned) are used in
        place from the graph instead of being copied: the graph must then outlive the program. */
    bool borrow_constants;
    /** Do not allocate the arena in create: the caller must call tosac_program_set_arena before
        the first invoke. */
    bool caller_arena;
    /** Graph inputs and outputs take no arena space: the caller must bind every one of them
        (tosac_program_bind_input / bind_output) before invoke. */
    bool external_io;
    /** A WHILE_LOOP running more iterations than this fails with TOSAC_ERR_UNPREDICTABLE, like a
        level limit (0 = TOSAC_DEFAULT_MAX_ITERATIONS): a loop that never ends does not hang the
        caller. */
    uint64_t max_iterations;
    /** Optional caller storage for the constants: TOSAC_PROGRAM_ALIGN-aligned and at least
        tosac_program_const_size() bytes; it must outlive the program. NULL: create allocates. */
    void *const_buffer;
    size_t const_buffer_size;
    /** Bound on operator instances after control flow is expanded (each COND_IF / WHILE_LOOP
        gets its own copy of its sub-blocks); 0 = 1048576, at most 2^28. Values are bounded by
        8 per operator instance plus the graph's own. Protects against hostile graphs. */
    uint32_t max_ops;
    /** Bound on arena + constants + variables bytes (0 = none; caller buffers bound with
        external_io are not counted): create fails with TOSAC_ERR_NOMEM beyond it, checked
        before each of them is allocated. */
    size_t max_memory;
    /** Do not allocate the prepared constants in create: the caller must call
        tosac_program_set_prepared before the first invoke. */
    bool caller_prepared;
    /** The kernel variants the program is prepared for (prepared bytes, scratch sizes):
        TOSAC_PROGRAM_ISA_HOST (0) this CPU's best, _PORTABLE the portable C kernels, _MVE the
        Helium kernels of a Cortex-M55 build, prepared here for emitted C (`tosac emit-c
        --isa mve`): only an MVE build runs such a program. */
    tosac_program_isa kernel_isa;
    /** Threads that run the program's large operators, split into output tiles (the invoking
        thread is one of them): 0 = the number of online processors, 1 = none started. Results
        are the same bits for every count. A program too small to gain from threads gets none. */
    uint32_t threads;
    /** The values an op callback observes (tosac_program_set_op_callback): indices
        (tosac_value.index) of n_observe tensors of the main block. Without a list (NULL), an op
        callback makes every operator run one by one, each result readable in the callback. With
        one, the program runs fused as it does without a callback (epilogues, chains), except
        that no listed value is ever the intermediate of a fusion: each is written to its storage
        and the callback comes after the operator that produces it, where
        tosac_program_op_output reads it (the last operator a fused epilogue absorbs, such as
        the CLAMP after a convolution, is called back right after the convolution, with time 0).
        The callback is not called for the other operators a fusion absorbs, and results other
        than the listed ones need not hold their values in it. */
    const uint32_t *observe;
    uint32_t n_observe;
    /** FP32 convolutions always run the direct (im2col / GEMM) path, whose results follow the
        TOSA order of operations. By default (false) an FP32 3x3 CONV2D with stride and dilation 1
        of a suitable shape runs as Winograd F(2x2, 3x3) instead: faster, and within TOSA's
        DOT_PRODUCT error bound, but not the same bits (docs/RUNTIME.md). It also keeps INT8 3x3
        convolutions on the direct GEMM at the AVX2 level, whose exact Winograd form gives the same
        bits. */
    bool conv_direct;
} tosac_program_opts;

/** Validation defaults (tosac_validate_opts_default), every other field zero / false. */
tosac_program_opts tosac_program_opts_default(void);

/**
 * Bytes of the constants buffer that tosac_program_create(g, opts, ...) needs (0 if none). Pure
 * computation, no validation: meaningful for graphs that validate. NULL opts = defaults.
 */
tosac_status tosac_program_const_size(const tosac_graph *g, const tosac_program_opts *opts, size_t *bytes);

/**
 * Validates `g` and builds a program for its block "main" (first region).
 * @return TOSAC_OK; TOSAC_ERR_TOSA_ERROR when validation finds an ERROR_IF-class problem;
 *         TOSAC_ERR_UNPREDICTABLE when only level limits fail; TOSAC_ERR_NOMEM;
 *         TOSAC_ERR_UNSUPPORTED for what the runtime cannot run (constant data stored outside
 *         the flatbuffer, too many operator instances); TOSAC_ERR_INVALID_ARG for bad options.
 *         Every failure adds at least one message to `d`. `*out` is untouched on failure.
 */
tosac_status tosac_program_create(const tosac_graph *g, const tosac_program_opts *opts, tosac_program **out,
                                  tosac_diag *d);
/** Frees the program and everything it allocated (not caller-supplied buffers). NULL-safe. */
void tosac_program_destroy(tosac_program *p);
/** Threads the program runs on (tosac_program_opts.threads as granted: 1 when it started none). */
uint32_t tosac_program_threads(const tosac_program *p);

/* ---- memory plan --------------------------------------------------------------------------- */

/** Arena bytes the plan needs (a multiple of TOSAC_PROGRAM_ALIGN; may be 0). */
size_t tosac_program_arena_size(const tosac_program *p);
/**
 * Lower bound for any placement of the planned buffers: the largest sum of sizes of buffers live
 * at the same step (over every step, sub-blocks included).
 */
size_t tosac_program_arena_lower_bound(const tosac_program *p);
/** Bytes of the constants buffer and of the variables buffer. */
size_t tosac_program_const_bytes(const tosac_program *p);
size_t tosac_program_variable_bytes(const tosac_program *p);
/** What a program needs, for sizing a device's heap and RAM (tosac_program_memory_needs). */
typedef struct tosac_program_memory {
    size_t heap;              /**< bytes the program holds from the allocator (tosac_set_allocator):
                                   its bookkeeping plus those of the buffers below it allocated */
    size_t bookkeeping;       /**< of which the program's own tables (operators, values, names,
                                   shapes, plan), with the CMake TOSAC_ARENA_CHUNK chunking */
    size_t arena;             /**< the arena the plan needs (tosac_program_arena_size) */
    size_t arena_lower_bound; /**< tosac_program_arena_lower_bound */
    size_t constants;         /**< constants buffer (tosac_program_const_bytes) */
    size_t prepared;          /**< prepared constants (tosac_program_prepared_size) */
    size_t variables;         /**< variables buffer */
} tosac_program_memory;
/**
 * Fills *out (create's transient planning buffers are freed before it returns and are not
 * counted; a counting allocator measures them). TOSAC_ERR_INVALID_ARG for NULL arguments.
 */
tosac_status tosac_program_memory_needs(const tosac_program *p, tosac_program_memory *out);
/**
 * Uses `buf` (TOSAC_PROGRAM_ALIGN-aligned, `size` >= arena size) as the arena from now on; an
 * arena allocated by create is freed. Input data written before is not carried over.
 * NULL with size 0 is accepted only when the arena size is 0.
 */
tosac_status tosac_program_set_arena(tosac_program *p, void *buf, size_t size);

/**
 * Prepared constants: what the kernels derive once from the constants (packed weight panels,
 * per-channel requantization tables), in their own area of tosac_program_prepared_size() bytes.
 * Create fills an area it allocates unless opts.caller_prepared; tosac_program_set_prepared runs
 * the kernels' prepare into `buf` (TOSAC_PROGRAM_ALIGN-aligned, at least that size, outliving the
 * program or the next call) and uses it from then on; an area create allocated is freed.
 * The bytes are a pure function of the graph, the options and the CPU's instruction-set level.
 */
size_t tosac_program_prepared_size(const tosac_program *p);
tosac_status tosac_program_set_prepared(tosac_program *p, void *buf, size_t size, tosac_diag *d);
/** The prepared constants in use (NULL if none yet). */
const void *tosac_program_prepared(const tosac_program *p);
/**
 * Uses `buf`, the prepared constants of another program created from the same graph with the same
 * options except threads (tosac_program_prepared of it), without preparing again: programs that
 * run the same graph side by side (calibration, one sample per thread) share one copy. `buf` is
 * only read and must outlive p; an area create allocated is freed. `size` must be p's
 * tosac_program_prepared_size.
 */
tosac_status tosac_program_share_prepared(tosac_program *p, const void *buf, size_t size, tosac_diag *d);

/** One planned buffer user, for debugging and tests (tosac_program_plan_entry). */
typedef struct tosac_plan_entry {
    const char *name;  /**< value name, or "scratch" for a kernel's scratch buffer */
    const char *block; /**< block of the value / of the operator */
    uint32_t op;       /**< scratch: operator index (tosac_program_op_info); else UINT32_MAX */
    size_t offset;     /**< in the arena */
    size_t size;       /**< bytes reserved (multiple of TOSAC_PROGRAM_ALIGN) */
    int32_t first;     /**< first step the storage is live (steps number every operator of every
                            block instance in execution order) */
    int32_t last;      /**< last live step, inclusive */
    uint32_t buffer;   /**< entries with equal buffer share storage (in-place reuse) */
} tosac_plan_entry;

uint32_t tosac_program_plan_count(const tosac_program *p);
tosac_status tosac_program_plan_entry(const tosac_program *p, uint32_t i, tosac_plan_entry *out);
/** Text dump of the plan (sizes, then every value: where it lives and when); free with
    tosac_string_free. NULL on allocation failure. */
char *tosac_program_dump_plan(const tosac_program *p);

/* ---- inputs, outputs, variables ------------------------------------------------------------ */

typedef struct tosac_tensor_info {
    const char *name;     /**< program-owned */
    tosac_dtype dtype;
    bool f64;             /**< stored as double (precise mode, floating-point type) */
    int32_t rank;
    const int64_t *shape; /**< program-owned, rank entries */
    int64_t nelem;
    size_t nbytes;        /**< execution storage bytes */
    size_t tosa_bytes;    /**< bytes of the TOSA data encoding (TOSA.md A.6, no padding) that the
                               *_tosa functions use; for f64 tensors: 8 per element (fp64 LE) */
} tosac_tensor_info;

uint32_t tosac_program_input_count(const tosac_program *p);
uint32_t tosac_program_output_count(const tosac_program *p);
tosac_status tosac_program_input_info(const tosac_program *p, uint32_t i, tosac_tensor_info *out);
tosac_status tosac_program_output_info(const tosac_program *p, uint32_t i, tosac_tensor_info *out);
/** Position of the input / output named `name`, -1 if none. */
int32_t tosac_program_input_index(const tosac_program *p, const char *name);
int32_t tosac_program_output_index(const tosac_program *p, const char *name);

/**
 * Where to write input i (execution storage, nbytes) before each invoke: the program's own slot
 * (in the arena, reused by other values during invoke). NULL when the program has none
 * (external_io, no arena yet). While the input is bound the slot is not read.
 */
void *tosac_program_input_ptr(tosac_program *p, uint32_t i);
/** Where output i is after invoke (the bound buffer if bound). NULL when not available. */
const void *tosac_program_output_ptr(const tosac_program *p, uint32_t i);
/**
 * Reads input i from `buf` (execution storage, nbytes, aligned for its element type) instead of
 * the program's slot, until rebound; NULL unbinds. The runtime never writes through it. The
 * buffer must stay valid during every invoke.
 */
tosac_status tosac_program_bind_input(tosac_program *p, uint32_t i, const void *buf);
/** Produces output i into `buf` (nbytes, aligned) from now on; NULL unbinds. */
tosac_status tosac_program_bind_output(tosac_program *p, uint32_t i, void *buf);
/**
 * Converts `n` bytes of TOSA data encoding (what tosac_npy_to_tosa produces; for f64 inputs also
 * accepted: fp64 LE) into input i's own slot and unbinds it. TOSAC_ERR_INVALID_ARG on a size
 * mismatch or when the input has no slot.
 */
tosac_status tosac_program_set_input_tosa(tosac_program *p, uint32_t i, const void *bytes, size_t n,
                                          tosac_diag *d);
/**
 * Writes output i as TOSA data encoding (info.tosa_bytes bytes; fp64 LE for f64 tensors) into
 * `buf` and its size into *n (n may be NULL). buf NULL: only *n is set. TOSAC_ERR_INVALID_ARG
 * when cap is too small.
 */
tosac_status tosac_program_get_output_tosa(const tosac_program *p, uint32_t i, void *buf, size_t cap, size_t *n);

/**
 * Variables (EXT-VARIABLE): one per distinct name (TosaTensor.variable_name, else the tensor
 * name), created at create time from the tensor's initial data or zero, kept across invocations.
 */
uint32_t tosac_program_variable_count(const tosac_program *p);
tosac_status tosac_program_variable_info(const tosac_program *p, uint32_t i, tosac_tensor_info *out);
/** Matches the variable name or the name of any tensor bound to it; -1 if none. */
int32_t tosac_program_variable_index(const tosac_program *p, const char *name);
/** The variable's storage (execution storage, info.nbytes): read or write it between invokes. */
void *tosac_program_variable_ptr(tosac_program *p, uint32_t i);
/** Sets / reads a variable in TOSA data encoding, as set_input_tosa / get_output_tosa do. */
tosac_status tosac_program_variable_set_tosa(tosac_program *p, uint32_t i, const void *bytes, size_t n,
                                             tosac_diag *d);
tosac_status tosac_program_variable_get_tosa(const tosac_program *p, uint32_t i, void *buf, size_t cap,
                                             size_t *n);
/** Restores every variable to its initial value. */
void tosac_program_variables_reset(tosac_program *p);

/* ---- execution ----------------------------------------------------------------------------- */

/**
 * Runs the program once. A failing operator stops the run and is reported as
 *   "op 12 (INTDIV) [a, b -> c]: <why>"
 * (operators of sub-blocks as "op 3 (WHILE_LOOP) > block 'body' op 1 (ADD) [...]: <why>"); the
 * result is TOSAC_ERR_UNPREDICTABLE for a failed REQUIRE (or max_iterations),
 * TOSAC_ERR_TOSA_ERROR for a data-dependent ERROR_IF, TOSAC_ERR_UNSUPPORTED for a kernel that
 * does not handle the operator, TOSAC_ERR_INVALID_ARG when no arena is set or an external input
 * or output is not bound. The message is also kept in tosac_program_last_error.
 */
tosac_status tosac_program_invoke(tosac_program *p, tosac_diag *d);
/** Message of the last failed invoke ("" if none); valid until the next invoke. */
const char *tosac_program_last_error(const tosac_program *p);

/**
 * Called after each operator with its index (tosac_program_op_info), its tosac_op number and its
 * wall time in nanoseconds (CLOCK_MONOTONIC; read only while a callback is set). COND_IF and
 * WHILE_LOOP are reported after their sub-blocks, with the time of the whole construct.
 */
typedef void (*tosac_op_callback)(void *user, uint32_t op_index, uint32_t op, uint64_t ns);
void tosac_program_set_op_callback(tosac_program *p, tosac_op_callback fn, void *user);

/**
 * Work of the caller's own between operators (calibration statistics of the value just computed,
 * inside the op callback) on the program's threads: fn(ctx, worker, begin, end) runs over ranges
 * covering [0, n) once, worker < tosac_program_threads(p), the calling thread among the workers;
 * returns when every range is done. Not while the program runs on another thread. Which worker
 * runs which range varies from call to call: results must not depend on it.
 */
typedef void (*tosac_task_fn)(void *ctx, uint32_t worker, size_t begin, size_t end);
void tosac_program_parallel_for(const tosac_program *p, tosac_task_fn fn, void *ctx, size_t n);

/** Operator instances: the main block's operators first (index = position in the block). */
typedef struct tosac_op_desc {
    uint32_t op;       /**< tosac_op */
    uint32_t index;    /**< position in its block */
    const char *block; /**< block name */
    uint32_t depth;    /**< 0 in the main block, +1 per enclosing control-flow operator */
    int32_t parent;    /**< the COND_IF / WHILE_LOOP instance running the block, -1 for main */
} tosac_op_desc;

uint32_t tosac_program_op_count(const tosac_program *p);
/**
 * Output k of operator instance i: its description and a pointer to its execution storage
 * (layout as tosac_tensor_info says: FP32 as float, f64 as double, ...). The contents are that
 * operator's result only while its storage is live: inside the op callback for instance i (how
 * calibration observes every value), or after invoke for values nothing overwrote.
 */
tosac_status tosac_program_op_output(const tosac_program *p, uint32_t i, uint32_t k, tosac_tensor_info *info,
                                     const void **data);
tosac_status tosac_program_op_info(const tosac_program *p, uint32_t i, tosac_op_desc *out);

#ifdef __cplusplus
}
#endif
#endif
