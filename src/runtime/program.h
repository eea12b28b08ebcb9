/*
 * Runtime internals shared by the steps program.c runs in this order, each using only the ones
 * before it:
 *   build.c    graph -> block instances, values, operators, constants, variables, kernel calls
 *   fuse.c     fused epilogues (a RESCALE / CLAMP run inside its producer's output loop) and
 *              chains (elementwise operators run together over blocks of rows)
 *   plan.c     kernels' prepared-constant and scratch sizes, lifetimes, in-place reuse, arena
 *              placement, prepared-constants layout
 *   prepare.c  kernels' prepare into the prepared-constants area
 *   exec.c     invoke
 * with pool.c (the thread pool behind every kernel call's parallel-for) used by plan.c (scratch
 * per worker) and exec.c,
 * and program.c (public accessors).
 *
 * Block instances. The main block is instance 0; every COND_IF / WHILE_LOOP operator gets its
 * own instance of each sub-block it runs, so a sub-block's values can be bound to that operator's
 * operands and planned with that call site's lifetimes (a sub-block used by two operators is
 * expanded twice; opts.max_ops bounds the expansion).
 *
 * Values (rt_val) of an instance are the block's tensors, then its shape values, then the names it
 * uses without declaring them (implicit captures of an enclosing block's values, resolved by name as
 * the validator does). A value's storage is one of:
 *   RV_ARENA  planned arena storage (offset from the plan), or a caller buffer it is redirected to
 *   RV_CONST  the constants buffer (or borrowed graph data)
 *   RV_VAR    the variables buffer
 *   RV_EXT    a caller buffer only (external_io graph inputs / outputs)
 *   RV_LINK   the storage of another value: sub-block inputs (bound to the operator's operands or
 *             the loop state), captures, COND_IF results produced directly into the operator's
 *             outputs
 *
 * Steps. Every instance and operator gets a range of steps in execution order: an instance opens
 * with a step for its inputs and closes with one for its outputs; a plain operator is one step; a
 * COND_IF / WHILE_LOOP spans a step, its sub-block instances (then, else / cond, body, laid out one
 * after the other) and a closing step. Lifetimes are step ranges; a value used inside a sub-block
 * but owned by an enclosing instance is kept live over the whole enclosing control-flow operator,
 * which makes the one-timeline plan valid for any number of loop iterations.
 */
#ifndef TOSAC_RUNTIME_PROGRAM_H
#define TOSAC_RUNTIME_PROGRAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/arena.h"
#include "kernels/k_epilogue.h"
#include "kernels/kernel.h"
#include "tosac/runtime.h"

#define RT_ALIGN TOSAC_PROGRAM_ALIGN
#define RT_DEFAULT_MAX_OPS 1048576u
#define RT_MAX_OPS_LIMIT (1u << 28)
/* Deepest control-flow nesting followed (the validator's MAX_NESTING is at most 256). */
#define RT_MAX_DEPTH 300
#define RT_NONE UINT32_MAX

enum rt_kind { RV_UNUSED = 0, RV_ARENA, RV_CONST, RV_VAR, RV_EXT, RV_LINK };

/* How the executor runs an operator. */
enum rt_mode {
    M_NOP = 0,   /* CONST, CONST_SHAPE, VARIABLE: nothing to do at run time */
    M_KERNEL,    /* tosac_kernel_for(op) */
    M_ALIAS,     /* RESHAPE / IDENTITY: nothing when planned in place, else the kernel */
    M_COPY,      /* in[0] -> out[0]: VARIABLE_READ, VARIABLE_WRITE, IDENTITY touching a variable */
    M_COPY_IN,   /* in[1] -> in[0]: VARIABLE_WRITE [var, value] -> [] */
    M_IF,
    M_WHILE
};

typedef struct rt_val {
    const char *name;      /* program-owned */
    const void *ir;        /* the tosac_value during create; NULL afterwards */
    uint32_t inst;         /* owning instance */
    uint8_t kind;          /* rt_kind */
    bool used;             /* operand, result, block input/output or copy end */
    bool observed;         /* in opts.observe: never the intermediate of a fusion */
    bool produced;         /* result of an operator of its instance */
    bool block_io;         /* input or output of its instance's block */
    bool unresolved;       /* a name that no enclosing block declares */
    bool f64;
    tosac_dtype dtype;
    int32_t rank;
    const int64_t *shape;  /* program-owned */
    int64_t nelem;
    size_t nbytes;         /* execution storage bytes */
    uint32_t link;         /* RV_LINK target */
    uint32_t var;          /* RV_VAR: variable index */
    size_t off;            /* RV_CONST: constants offset; RV_ARENA: arena offset (after plan) */
    const void *borrowed;  /* RV_CONST borrowed from the graph */
    uint32_t buf;          /* RV_ARENA: union-find parent, then plan buffer index */
    int32_t first, last;   /* lifetime in steps (first > last: never live) */
    const void *ext;       /* caller buffer (RV_EXT, or an RV_ARENA value redirected by a binding) */
    void *data;            /* resolved storage */
} rt_val;

typedef struct rt_copy {
    uint32_t src, dst; /* values */
} rt_copy;

typedef struct rt_inst {
    const char *name;     /* block name, program-owned */
    const void *ir;       /* the tosac_block during create */
    uint32_t ri, gi;      /* region index, global block index (regions in order) */
    int32_t parent;       /* instance, -1 for main */
    int32_t parent_op;    /* operator running it, -1 for main */
    uint32_t depth;
    uint32_t val_base, n_vals;
    uint32_t op_base, n_ops;
    uint32_t in_base, n_in;    /* into idx: block inputs */
    uint32_t out_base, n_out;  /* into idx: block outputs */
    uint32_t copy_base, n_copy;/* copies run after the block (COND_IF results that are not
                                  produced in place) */
    int32_t step_begin, step_end;
} rt_inst;

typedef struct rt_op {
    uint32_t op;          /* tosac_op */
    uint32_t index;       /* in its block */
    uint32_t inst;
    uint8_t mode;         /* rt_mode */
    uint32_t in_base, n_in, out_base, n_out; /* into idx (and kt, which is parallel) */
    int32_t step, step_end;
    uint32_t sub[2];      /* COND_IF: then, else; WHILE_LOOP: cond, body instances */
    /* WHILE_LOOP: copies (into copies[]) at entry (inputs -> state), after each body run
       (stage: results that are loop inputs -> staging; commit: -> state) and at exit (state ->
       outputs); state values (into idx, n_out of them) */
    uint32_t state_base;
    uint32_t pre_base, n_pre, stage_base, n_stage, commit_base, n_commit, post_base, n_post;
    size_t scratch_size, scratch_off;
    uint32_t scratch_buf; /* plan buffer of the scratch space (RT_NONE if none) */
    size_t prep_size, prep_off; /* the kernel's prepared constants in p->prepared */
    /* fusion (fuse.c): a producer runs `epi` (has_epi) unless an op callback observes every
       result (no observe list); the RESCALE / CLAMP it absorbs then have fused_into = the producer
       and are skipped */
    bool has_epi;
    tosac_kepilogue epi;
    uint32_t fused_into;
    uint32_t fused_out;   /* has_epi: the value epi.out writes (live from this operator on) */
    uint32_t fused_last;  /* has_epi: the absorbed operator whose result that is (RT_NONE: a tail's
                             identity clamp, which absorbs none) */
    uint32_t chain;       /* the chain (fuse.c) this operator belongs to, RT_NONE if none */
    uint32_t tail;        /* the chain this fp32 producer runs from its epilogue (epi.post), RT_NONE */
    uint32_t pre;         /* the chain whose result this 1x1 CONV2D reads, which it runs row block by
                             row block before reading them (epi.pre), RT_NONE */
    tosac_kernel_fn fn;
    tosac_kcall call;
} rt_op;

/*
 * Chains (fuse.c, run by exec.c). A tree of elementwise operators of one instance whose
 * intermediate results have exactly one reader, inside the tree, all of the root's output shape,
 * seen as [rows, cols] (cols = the last dimension). Unless an op callback observes every result
 * (no observe list), the root runs the whole tree block by block (a block: whole rows), every operator's kernel on
 * the block's slice, intermediates in the worker's block buffers, blocks over the thread pool.
 * Every operand of a member is one of: rows of the block (an operand of the full shape),
 * the whole tensor seen as [1, cols] or [1, 1] (a broadcast), an intermediate (its offset in the
 * block buffer) or, for a non-data operand such as a RESCALE multiplier, the operand as it is.
 */
#define RT_LINK_MAX_IN 5
#define RT_LINK_SLICE SIZE_MAX         /* the block's rows of a full-shape value */
#define RT_LINK_WHOLE (SIZE_MAX - 1)   /* a broadcast, as [1, last dimension] */
#define RT_LINK_KEEP (SIZE_MAX - 2)    /* not a data operand: unchanged */
typedef struct rt_link {
    uint32_t op;
    size_t in[RT_LINK_MAX_IN]; /* RT_LINK_SLICE / _WHOLE / _KEEP or a block-buffer offset */
    size_t out;                /* RT_LINK_SLICE for the root, else a block-buffer offset */
    tosac_kstrip strip;        /* the member as a strip function (k_epilogue.h; form 0: none) */
    size_t rep[2];             /* strips: block-buffer offset of a [1, cols] operand repeated over
                                  a strip's rows, RT_LINK_KEEP when the operand is read as it is */
} rt_link;

typedef struct rt_chain {
    uint32_t link_base, n_links; /* into p->links, in execution order; the last is the root */
    int64_t rows, cols, block_rows;
    bool strips;       /* every member runs strip by strip (rt_link.strip), all of them on one
                          strip of strip_rows x strip_cols elements before the next (exec.c) */
    int64_t strip_rows, strip_cols;
    int32_t step_last; /* the root's step: the members' operands and scratch live until it */
    uint32_t producer; /* RT_NONE, or the fp32 convolution whose epilogue runs the chain on each
                          block of rows it stores (fuse.c): operands, scratch and the root's result
                          then live from the producer's step */
    uint32_t consumer; /* RT_NONE, or the 1x1 fp32 CONV2D, the only reader of the root's result,
                          that runs the chain on each block of its input rows before reading them
                          (fuse.c): operands and scratch then live until the consumer's step */
    size_t blk_size; /* block-buffer bytes of one worker, after the root's kernel scratch (plan.c) */
    size_t blk_off;  /* offset of the block buffers in each worker's copy of the root's scratch */
} rt_chain;

typedef struct rt_var {
    const char *name;     /* variable_name or tensor name, program-owned */
    uint32_t val;         /* a value bound to it (type and shape) */
    size_t off, nbytes;   /* in the variables buffer */
    bool has_init;
    size_t init_off;      /* in the constants buffer */
    const void *init_borrowed;
} rt_var;

typedef struct rt_buf {
    size_t size, off;
    int32_t first, last;
} rt_buf;

struct tosac_program {
    tosac_arena mem; /* names, shapes, attributes */

    rt_val *vals;
    uint32_t n_vals;
    size_t cap_vals;
    rt_inst *insts;
    uint32_t n_insts;
    size_t cap_insts;
    rt_op *ops;
    uint32_t n_ops;
    size_t cap_ops;
    uint32_t *idx; /* operand / block-I/O / state value lists */
    uint32_t n_idx;
    size_t cap_idx;
    tosac_ktensor *kt; /* parallel to idx */
    size_t cap_kt;
    rt_copy *copies;
    uint32_t n_copies;
    size_t cap_copies;
    rt_var *vars;
    uint32_t n_vars;
    size_t cap_vars;

    /* plan */
    rt_buf *bufs;
    uint32_t n_bufs;
    size_t cap_bufs;
    uint32_t *entries; /* plan entries: value index, or op index | RT_ENTRY_SCRATCH */
    uint32_t n_entries;
    size_t cap_entries;
    int32_t n_steps;
    size_t arena_size, arena_lb;

    /* graph inputs / outputs of instance 0 */
    const void **in_ext;
    void **out_ext;
    bool *out_direct; /* output i may be produced straight into its bound buffer */
    size_t cap_in, cap_out;

    /* storage; *_raw / *_raw_size: the allocations behind the aligned pointers (NULL if none) */
    void *consts_raw, *var_raw, *arena_raw;
    size_t consts_raw_size, var_raw_size, arena_raw_size;
    uint8_t *consts;
    size_t const_size;
    bool own_consts;
    uint8_t *vardata;
    size_t var_size;
    uint8_t *arena;
    size_t arena_cap;
    bool own_arena;
    void *prepared_raw; /* prepared constants (tosac_program_prepared_size) */
    size_t prepared_raw_size, prepared_size;
    uint8_t *prepared;
    bool own_prepared;
    uint32_t isa; /* tosac_kisa of every kernel call */
    bool for_host; /* kernel_isa HOST: run here (chains); otherwise prepared for emitted C, which runs
                      operators one by one */
    rt_chain *chains; /* in p->mem */
    uint32_t n_chains;
    rt_link *links;   /* in p->mem */
    uint32_t n_links;
    struct rt_pool *pool; /* NULL: one worker */
    uint32_t workers;     /* of the pool (1 without one): every scratch space holds this many copies */

    bool precise, external_io, dirty;
    bool observing; /* opts.observe given: an op callback does not stop fusion (exec.c) */
    uint64_t max_iter;
    tosac_op_callback cb;
    void *cb_user;
    char err[768];
};

#define RT_ENTRY_SCRATCH 0x80000000u

static inline size_t rt_align(size_t n) { return (n + (RT_ALIGN - 1)) & ~(size_t)(RT_ALIGN - 1); }

/* Whether two values have the same dimensions (not necessarily the same type). */
static inline bool rt_same_dims(const rt_val *a, const rt_val *b)
{
    if (a->rank != b->rank) return false;
    for (int32_t i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i]) return false;
    return true;
}

/* The value a chain of RV_LINK aliases ends at (v itself when it is not a link); the guard bounds a
   malformed cycle. */
static inline uint32_t rt_final_val(const tosac_program *p, uint32_t v)
{
    for (int guard = 0; p->vals[v].kind == RV_LINK && guard < 4 * RT_MAX_DEPTH + 8; guard++) v = p->vals[v].link;
    return v;
}

/* Storage of a constant or variable value: borrowed from the graph, or inside the program's
   buffers, which are NULL when they would be empty (a rank-0 reshape's empty shape). */
static inline void *rt_fixed_data(const tosac_program *p, const rt_val *x)
{
    if (x->kind == RV_CONST) {
        if (x->borrowed) return (void *)(uintptr_t)x->borrowed;
        return p->consts ? p->consts + x->off : NULL;
    }
    if (x->kind == RV_VAR) return p->vardata ? p->vardata + p->vars[x->var].off : NULL;
    return NULL;
}

/* pool.c: the thread pool (kernels/kernel.h tosac_kparallel). */
typedef struct rt_pool rt_pool;
/* The number of online processors (1 without TOSAC_THREADS), at most TOSAC_KMAX_WORKERS. */
uint32_t rt_pool_default_threads(void);
/* A pool of `workers` workers (the caller and workers - 1 threads); NULL for one worker. */
tosac_status rt_pool_create(uint32_t workers, rt_pool **out);
void rt_pool_destroy(rt_pool *pl);
uint32_t rt_pool_workers(const rt_pool *pl);
/* tosac_kparallel.run */
void rt_pool_run(void *pool, tosac_ktask_fn fn, void *ctx, size_t n);

/* build.c: instances, values, operators, constants, variables (p->vals etc.). */
tosac_status rt_build(tosac_program *p, const tosac_graph *g, const tosac_program_opts *o, tosac_diag *d);
/* Constants layout shared with tosac_program_const_size. */
tosac_status rt_const_size(const tosac_graph *g, const tosac_program_opts *o, size_t *bytes);

/* "op 3 (WHILE_LOOP) > block 'body' op 1 (ADD) [a, b -> c]" into buf (build.c). */
void rt_op_label(const tosac_program *p, uint32_t op, char *buf, size_t size);

/* fuse.c: marks fused producer / consumer pairs (rt_op.has_epi, fused_into), then groups chains
   (p->chains, rt_op.chain). */
void rt_fuse(tosac_program *p);
/* Test hook: programs created after rt_fuse_chains_off(true) have no chains and no SLICE views
   (their operators run one by one, for comparing). Not thread-safe; tests and benchmarks only. */
void rt_fuse_chains_off(bool off);

/* plan.c: kernel sizes, lifetimes, in-place reuse, buffers, placement (p->bufs, entries,
   arena_size), prepared-constants offsets (prepared_size). */
tosac_status rt_plan(tosac_program *p, tosac_diag *d);

/* prepare.c: runs every kernel's prepare into `dst` (p->prepared_size bytes, aligned). */
tosac_status rt_prepare(tosac_program *p, uint8_t *dst, tosac_diag *d);

/* exec.c */
void rt_resolve(tosac_program *p);

/* convert.c: TOSA data encoding <-> execution storage. */
bool rt_is_float(tosac_dtype t);
/* Bytes of the encoding the *_tosa functions use (fp64 when f64 and a float type). */
bool rt_tosa_bytes(tosac_dtype t, bool f64, int64_t nelem, size_t *out);
/* From TOSA encoding of t (src_f64: fp64 LE instead, only for float types) into storage. */
void rt_decode(tosac_dtype t, bool f64, bool src_f64, const uint8_t *src, int64_t nelem, void *dst);
/* From storage into the *_tosa encoding. */
void rt_encode(tosac_dtype t, bool f64, const void *src, int64_t nelem, uint8_t *dst);

#endif
