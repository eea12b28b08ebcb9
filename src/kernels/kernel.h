/*
 * Kernel interface. Kernels see plain data only (no IR), never allocate, never print; they assume
 * the graph passed tosac_validate (shapes, types and attributes are consistent) and check only
 * data-dependent REQUIREs (overflow, shift ranges, divide by zero, gather indices...).
 *
 * Execution storage of elements (the runtime converts file encodings at load time):
 *   BOOL uint8_t 0/1 · INT4 int8_t (one per byte, sign-extended) · INT8 int8_t · INT16 int16_t ·
 *   INT32 int32_t · INT48 int64_t (value within ±2^47) · SHAPE int64_t · FP32 float ·
 *   FP16 / BF16 uint16_t bit patterns · FP8E4M3 / FP8E5M2 uint8_t bit patterns.
 * In precise mode (the reference model's --precise_mode 1) every floating-point tensor is stored as
 * double instead (tosac_ktensor.f64) and computed in double.
 */
#ifndef TOSAC_KERNELS_KERNEL_H
#define TOSAC_KERNELS_KERNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tosac/dtype.h"
#include "tosac/ops.h"
#include "tosac/status.h"

/* Bytes of one element in execution storage (above); 8 for every FP type when f64. */
size_t tosac_exec_elem_size(tosac_dtype t, bool f64);

typedef struct tosac_ktensor {
    void *data;
    tosac_dtype dtype;
    bool f64;             /* FP data stored as double (precise mode) */
    int32_t rank;
    const int64_t *shape; /* rank entries */
    int64_t nelem;        /* product of shape (1 for rank 0) */
    bool constant;        /* a constant operand: data is valid already at prepare time and never
                             changes (CONST values, which the prepared bytes may be derived from) */
} tosac_ktensor;

/*
 * Parallel-for supplied by the runtime (kernels never create threads): runs fn(ctx, worker,
 * begin, end) over disjoint ranges covering [0, n), each range on one worker (worker < workers;
 * the call's scratch holds `workers` copies of tosac_kprep.scratch_size bytes, worker w's at
 * w * scratch_size). Ranges of one call may run concurrently, so a task writes only its own
 * outputs and its worker's scratch, and a kernel produces the same bits whatever the split
 * (tiles of outputs; a reduction is never split). NULL run: fn(ctx, 0, 0, n) inline.
 */
#define TOSAC_KMAX_WORKERS 64
typedef void (*tosac_ktask_fn)(void *ctx, uint32_t worker, size_t begin, size_t end);
typedef struct tosac_kparallel {
    void (*run)(void *pool, tosac_ktask_fn fn, void *ctx, size_t n);
    void *pool;
    uint32_t workers; /* 1..TOSAC_KMAX_WORKERS (0 is read as 1) */
} tosac_kparallel;

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__) && !defined(TOSAC_NO_SIMD)
#define TOSAC_KERNEL_X86 1 /* AVX2 / AVX-512 variants are compiled (CMake TOSAC_SIMD) */
#endif

/* Instruction-set variants (tosac_kernel_isa): the x86-64 levels, and Helium (Arm MVE) on a
   Cortex-M55 build (kernels/k_mve.h). MVE is not a level above AVX-512: families with Helium
   kernels run everything else as PORTABLE. Prepare honours MVE on any host (the packing is plain
   C), so a host can prepare constants for a Cortex-M; only an MVE build runs such a call. */
enum tosac_kisa { TOSAC_KISA_PORTABLE = 0, TOSAC_KISA_AVX2 = 1, TOSAC_KISA_AVX512 = 2, TOSAC_KISA_MVE = 3 };

struct tosac_kcall;

/* tosac_kcall.flags: FP32 CONV2D keeps the direct GEMM path (no Winograd, k_winograd.h;
   tosac_program_opts.conv_direct), whose bits are the TOSA order of operations; INT8 CONV2D too
   (its Winograd form is exact, so only the speed changes). */
#define TOSAC_KCALL_CONV_DIRECT 1u

/*
 * A fused epilogue (chosen by the runtime at create): the producer's result goes through its
 * consumers straight into `out`, element for element what running the operators one after the
 * other stores (the intermediate tensors are never written):
 *   int32 producers (conv family, MATMUL): the consumer RESCALE `rescale` (its prepared tables),
 *     int32 input, channels = the producer's last dimension, to a signed type, then the clamp
 *     [lo, hi] (the RESCALE output range, narrowed by a following CLAMP);
 *   fp32 producers (conv family): rescale NULL, the CLAMP [flo, fhi] with nan_mode IGNORE or not
 *     (tosac_clamp_f32_row) after the bias; then, with `post`, once the rows [row0, row0 + nrows)
 *     of `out` seen as [rows, last dimension] are stored (every channel), post(post_ctx, worker,
 *     row0, nrows) from the task that stored them (k_epilogue.h tosac_epilogue_post): the runtime
 *     runs the elementwise chain reading the result on those rows while they are in cache;
 *     with `pre`, a convolution whose input rows are its output rows (1x1, stride 1, unpadded:
 *     row = pixel) calls pre(pre_ctx, worker, row0, nrows) before a task reads the input rows
 *     [row0, row0 + nrows) (k_epilogue.h tosac_epilogue_pre): the runtime computes them there,
 *     from the elementwise chain whose result the input is (an SE block's channel scale).
 */
typedef struct tosac_kepilogue {
    const struct tosac_kcall *rescale;
    const struct tosac_ktensor *out;
    int32_t lo, hi;
    float flo, fhi;
    bool fignore;
    void (*post)(void *ctx, uint32_t worker, int64_t row0, int64_t nrows);
    void *post_ctx;
    void (*pre)(void *ctx, uint32_t worker, int64_t row0, int64_t nrows);
    void *pre_ctx;
} tosac_kepilogue;

typedef struct tosac_kcall {
    uint32_t op;                /* tosac_op */
    uint32_t n_in, n_out;
    const tosac_ktensor *in;    /* operands in ops.def order, constants included (shape values are
                                   SHAPE tensors of rank 1) */
    const tosac_ktensor *out;
    const tosac_attr_val *attr; /* [TOSAC_ATTR_MAX_FIELDS], indexed by flatbuffer field id */
    void *scratch;              /* tosac_kprep.scratch_size bytes, 16-byte aligned, uninitialised */
    size_t scratch_size;
    const void *prep;           /* tosac_kprep.const_size bytes the prepare step wrote (NULL when 0) */
    size_t prep_size;
    const tosac_kepilogue *epi; /* fused epilogue, NULL if none (kernels that accept one: conv
                                   family, MATMUL with int32 results) */
    tosac_kparallel par;
    uint32_t isa;               /* tosac_kisa: the variant picked once at create */
    uint32_t flags;             /* TOSAC_KCALL_* choices of the program (tosac_program_opts), 0 by
                                   default; prepare reads them (the prepared bytes record what it chose) */
    const char *why;            /* set by a kernel that fails: a static explanation of the rule */
} tosac_kcall;

/*
 * The kernel ABI: one pair per validator family of ops.def (the `check` column).
 *
 * tosac_kernel_<family>_prepare(c, sizes, dst) is a pure function of the call's shapes, types,
 * attributes, epilogue, isa and constant operands (tosac_ktensor.constant; the data of the other
 * operands is not read). With dst == NULL it only fills *sizes: the bytes of prepared constants
 * (packed weight panels, per-channel tables) and of scratch it needs. Otherwise dst holds
 * sizes->const_size bytes (16-byte aligned) and it writes the prepared constants there. The runtime
 * calls it once per operator at create (and for emitted C on the host: the bytes become const
 * arrays), then passes them as c->prep to every run; a run never packs what prepare could have.
 * The bytes may depend on c->isa (panel layouts), never the results. It returns TOSAC_OK, or
 * TOSAC_ERR_INTERNAL for a call the family cannot handle; data-dependent REQUIREs of constants
 * (a negative multiplier...) are not prepare's to report: the run reports them.
 *
 * tosac_kernel_<family>(c) runs the op (switching on c->op and the dtypes) and returns TOSAC_OK,
 * TOSAC_ERR_UNPREDICTABLE (a REQUIRE failed), TOSAC_ERR_TOSA_ERROR (a data-dependent ERROR_IF) or
 * TOSAC_ERR_UNSUPPORTED. It never allocates, prints or blocks.
 * Outputs never alias inputs unless the runtime's planner says so: only elementwise families whose
 * output has the same shape and element size as input 0 may be run in place (out[0].data ==
 * in[0].data), and they must support it.
 */
typedef struct tosac_kprep {
    size_t const_size;   /* prepared constant bytes */
    size_t scratch_size; /* scratch bytes of one worker */
    uint32_t unread;     /* what a run given these prepared bytes never reads (0: everything may be
                            read): bit j for constant operand in[j]'s data (weights packed into
                            the prepared bytes), TOSAC_KPREP_UNREAD_EPI for the fused RESCALE's
                            prepared bytes and constant operands (its tables folded in). Emitted C
                            (`tosac emit-c`) leaves those out of the flash. */
} tosac_kprep;
#define TOSAC_KPREP_UNREAD_EPI 0x80000000u

#define TOSAC_OP(E, num, A, chk, acc, ins, outs)                                              \
    tosac_status tosac_kernel_##chk(tosac_kcall *c);                                         \
    tosac_status tosac_kernel_##chk##_prepare(const tosac_kcall *c, tosac_kprep *sizes, void *dst);
#include "tosac/ops.def"
#undef TOSAC_OP

/* Defines the prepare function of a family with no prepared constants and the scratch that
   scratch_fn(c) reports. */
#define TOSAC_KERNEL_PREPARE_SCRATCH(chk, scratch_fn)                                         \
    tosac_status tosac_kernel_##chk##_prepare(const tosac_kcall *c, tosac_kprep *sizes, void *dst) \
    {                                                                                         \
        (void)dst;                                                                            \
        sizes->const_size = 0;                                                                \
        sizes->scratch_size = scratch_fn(c);                                                  \
        return TOSAC_OK;                                                                      \
    }
static inline size_t tosac_kernel_no_scratch(const tosac_kcall *c)
{
    (void)c;
    return 0;
}
/* A family that needs neither prepared constants nor scratch. */
#define TOSAC_KERNEL_NO_PREPARE(chk) TOSAC_KERNEL_PREPARE_SCRATCH(chk, tosac_kernel_no_scratch)

typedef tosac_status (*tosac_kernel_fn)(tosac_kcall *c);
typedef tosac_status (*tosac_kernel_prepare_fn)(const tosac_kcall *c, tosac_kprep *sizes, void *dst);

/* Dispatch by op number (NULL for invalid numbers). */
tosac_kernel_fn tosac_kernel_for(uint32_t op);
tosac_kernel_prepare_fn tosac_kernel_prepare_for(uint32_t op);

/* The best variant this CPU runs (tosac_kisa), capped by tosac_kernel_limit_isa; the runtime reads
   it once per program at create. */
uint32_t tosac_kernel_isa(void);
/* Test hook: caps tosac_kernel_isa() at `level` (results are identical at every level). Not
   thread-safe; tests only. */
void tosac_kernel_limit_isa(uint32_t level);

/* Runs fn over [0, n) through c->par (or directly when the runtime supplies none). */
static inline void tosac_kparallel_for(const tosac_kcall *c, tosac_ktask_fn fn, void *ctx, size_t n)
{
    if (c->par.run && c->par.workers > 1)
        c->par.run(c->par.pool, fn, ctx, n);
    else if (n)
        fn(ctx, 0, 0, n);
}
/* Workers a parallel-for of this call may use (for choosing how finely to split). */
static inline uint32_t tosac_kworkers(const tosac_kcall *c)
{
    return c->par.run && c->par.workers > 1 ? c->par.workers : 1u;
}

/* Attribute helpers (absent field -> default). */
static inline int64_t tosac_kattr_int(const tosac_kcall *c, unsigned id, int64_t def)
{
    return c->attr[id].present ? c->attr[id].i : def;
}
static inline const int32_t *tosac_kattr_ints(const tosac_kcall *c, unsigned id)
{
    return (const int32_t *)c->attr[id].data;
}

/* Fails the call with a static explanation. */
static inline tosac_status tosac_kfail(tosac_kcall *c, tosac_status s, const char *why)
{
    c->why = why;
    return s;
}

#endif
