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

/* Input i / output i of the current node: NULL if out of range or only a placeholder for an
   undeclared name (validate.c reports those, so the family checks skip them). */
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

/* Marks a dim of an inferred shape that could not be computed. */
#define TOSAC_DIM_UNK INT64_MIN
/* Dim i of v, TOSAC_DIM_UNK when not available. */
int64_t tosac_dim(const tosac_value *v, int i);
/* Formats dims d[0..n) as "[1,2,3]" into buf (returns buf), "..." when truncated. With mark_unk,
   TOSAC_DIM_UNK is written "?": only inferred shapes use that marker, declared dims print as is. */
const char *tosac_dims_str(const int64_t *d, int32_t n, bool mark_unk, char *buf, size_t size);
/* True if v has a rank in 0..TOSAC_MAX_RANK and readable dims. */
bool tosac_rank_ok(const tosac_value *v);
/* s, or "(null)": value names may be absent in graphs built through the API. */
const char *tosac_nm(const char *s);
/* Overflow-checked int64 arithmetic: false on overflow (*r is then unchanged). */
bool tosac_checked_add(int64_t a, int64_t b, int64_t *r);
bool tosac_checked_sub(int64_t a, int64_t b, int64_t *r);
bool tosac_checked_mul(int64_t a, int64_t b, int64_t *r);
/* Value of a one-element FP constant is zero (either sign): 1 yes, 0 no, -1 no usable data. When
   bits is not NULL it receives the raw little-endian bit pattern. */
int tosac_fp_const_is_zero(const tosac_value *v, uint32_t *bits);
/* True if `row` needs no profile/extension beyond those enabled in `o`. */
bool tosac_row_available(const tosac_type_row *row, const tosac_validate_opts *o);

/* "8K" or "none", for level messages. */
const char *tosac_check_level_name(const tosac_check_ctx *c);
/* Requires rank `rank` (layout names the dims for the message). False when v is NULL, has another
   rank, or has no dims to read. */
bool tosac_check_need_rank(tosac_check_ctx *c, const tosac_value *v, const char *what, int32_t rank,
                           const char *layout);
/* Requires shape [1] (zero points, MUL shift, PAD pad_const); false when v is NULL or reported.
   `show_name` adds the value's name to the message: the elementwise and layout families name it,
   the tensor and quantization families name only the operand (tests pin both wordings). */
bool tosac_check_shape_one(tosac_check_ctx *c, const tosac_value *v, const char *what, bool show_name);
/* Output shape must equal the input shape; `in_name` is the operand named in the message. */
void tosac_check_same_shape(tosac_check_ctx *c, const tosac_value *in, const tosac_value *out, const char *in_name);
/* nan_mode attribute `id` must be PROPAGATE or IGNORE. `classify` says whether a bad value is
   UNKNOWN or out of range (tensor/quantization families); otherwise the message lists the valid
   codes (elementwise family). Tests pin both wordings. */
void tosac_check_nan_mode(tosac_check_ctx *c, unsigned id, bool classify);

/* Family checks, one per distinct `check` column of ops.def (a missing one is a link error). */
#define TOSAC_OP(E, num, A, chk, acc, ins, outs) void tosac_check_##chk(tosac_check_ctx *c);
#include "tosac/ops.def"
#undef TOSAC_OP

#endif
