/*
 * Validator internals shared by the per-family check files (check_*.c). validate.c performs the
 * generic checks (structure, operand counts and kinds, type-support rows, profile/extension,
 * rank levels) and then calls tosac_check_<family>(ctx) named by the op's `check` column in
 * ops.def. A family check reads operand shapes and constant values and reports every failed
 * ERROR_IF / level rule through the helpers below; it must never crash on hostile graphs
 * (operands may have any rank, absent constant data, or wrong element counts).
 */
#ifndef TOSAC_TOSA_CHECK_H
#define TOSAC_TOSA_CHECK_H

#include "core/diag.h"
#include "ir/graph.h"
#include "tosa/op_table.h"
#include "tosac/validate.h"

typedef struct tosac_level_limits {
    int64_t max_rank, max_kernel, max_stride, max_scale, max_log2_size, max_nesting, max_tensor_list;
} tosac_level_limits;

typedef struct tosac_check_ctx {
    const tosac_validate_opts *opts;
    tosac_level_limits lim;
    tosac_diag *diag;
    const tosac_graph *graph;
    const tosac_block *block;
    const tosac_node *node;
    const tosac_op_info *info;
    const tosac_type_row *row; /* the matched type-support row (never NULL inside a family check) */
    int nesting;               /* control-flow depth of `block` */
    unsigned n_errors;         /* ERROR_IF-class findings */
    unsigned n_level;          /* level findings (UNPREDICTABLE) */
} tosac_check_ctx;

/* Reports an ERROR_IF failure of the current node: the message is prefixed with the block, op
   index, op name and operand names. */
void tosac_check_error(tosac_check_ctx *c, const char *fmt, ...) TOSAC_PRINTF(2, 3);
/* Reports a failed level check (graph result UNPREDICTABLE). */
void tosac_check_level(tosac_check_ctx *c, const char *fmt, ...) TOSAC_PRINTF(2, 3);

#define ERROR_IF(c, cond, ...)                            \
    do {                                                  \
        if (cond) tosac_check_error((c), __VA_ARGS__);    \
    } while (0)
#define LEVEL_CHECK(c, cond, ...)                         \
    do {                                                  \
        if (!(cond)) tosac_check_level((c), __VA_ARGS__); \
    } while (0)

/* Input i / output i of the current node (NULL if out of range). */
const tosac_value *tosac_check_in(const tosac_check_ctx *c, uint32_t i);
const tosac_value *tosac_check_out(const tosac_check_ctx *c, uint32_t i);
/* Attribute helpers: value of an int-like field (schema default `def` when absent); an I32V field
   as pointer+count (count 0 when absent). */
int64_t tosac_check_attr_int(const tosac_check_ctx *c, unsigned id, int64_t def);
const int32_t *tosac_check_attr_ints(const tosac_check_ctx *c, unsigned id, uint32_t *count);
/* Reads element `idx` of a constant tensor (integer/bool types, INT4/INT48 decoded) or shape value
   as int64. Returns false if the value has no constant data or idx is out of range. */
bool tosac_const_get_i64(const tosac_value *v, int64_t idx, int64_t *out);
/* Number of elements (product of dims, 1 for rank 0), -1 if not computable. */
int64_t tosac_check_nelem(const tosac_value *v);
/* True if both values have identical rank and dims. */
bool tosac_same_shape(const tosac_value *a, const tosac_value *b);
/* Formats a shape as "[1,2,3]" into buf (returns buf). */
const char *tosac_shape_str(const tosac_value *v, char *buf, size_t size);

/* Family checks, one per distinct `check` column of ops.def (a missing one is a link error). */
#define TOSAC_OP(E, num, A, chk, acc, ins, outs) void tosac_check_##chk(tosac_check_ctx *c);
#include "tosac/ops.def"
#undef TOSAC_OP

#endif
