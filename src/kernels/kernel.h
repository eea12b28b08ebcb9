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
} tosac_ktensor;

typedef struct tosac_kcall {
    uint32_t op;                /* tosac_op */
    uint32_t n_in, n_out;
    const tosac_ktensor *in;    /* operands in ops.def order, constants included (shape values are
                                   SHAPE tensors of rank 1) */
    const tosac_ktensor *out;
    const tosac_attr_val *attr; /* [TOSAC_ATTR_MAX_FIELDS], indexed by flatbuffer field id */
    void *scratch;              /* tosac_kernel_scratch_size() bytes, 16-byte aligned, uninitialised */
    size_t scratch_size;
    const char *why;            /* set by a kernel that fails: a static explanation of the rule */
} tosac_kcall;

/*
 * One pair per validator family of ops.def (the `check` column): tosac_kernel_<family>() runs the
 * op (switching on c->op and the dtypes) and returns TOSAC_OK, TOSAC_ERR_UNPREDICTABLE (a REQUIRE
 * failed), TOSAC_ERR_TOSA_ERROR (a data-dependent ERROR_IF) or TOSAC_ERR_UNSUPPORTED; and
 * tosac_kernel_<family>_scratch() the scratch bytes it needs (0 for most).
 * Outputs never alias inputs unless the runtime's planner says so: only elementwise families whose
 * output has the same shape and element size as input 0 may be run in place (out[0].data ==
 * in[0].data), and they must support it.
 */
#define TOSAC_OP(E, num, A, chk, acc, ins, outs)                 \
    tosac_status tosac_kernel_##chk(tosac_kcall *c);            \
    size_t tosac_kernel_##chk##_scratch(const tosac_kcall *c);
#include "tosac/ops.def"
#undef TOSAC_OP

/* Defines the scratch function of a family that needs no scratch memory. */
#define TOSAC_KERNEL_NO_SCRATCH(chk)                                   \
    size_t tosac_kernel_##chk##_scratch(const tosac_kcall *c)         \
    {                                                                  \
        (void)c;                                                       \
        return 0;                                                      \
    }

typedef tosac_status (*tosac_kernel_fn)(tosac_kcall *c);
typedef size_t (*tosac_kernel_scratch_fn)(const tosac_kcall *c);

/* Dispatch by op number (NULL for invalid numbers). */
tosac_kernel_fn tosac_kernel_for(uint32_t op);
tosac_kernel_scratch_fn tosac_kernel_scratch_for(uint32_t op);

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
