/*
 * The ONNX -> TOSA conversion context shared by src/onnx/convert.c and the converters
 * (src/onnx/cvt_*.c, one function per row of onnx_ops.def).
 *
 * Every ONNX value has a cvt_val: its TOSA element type (FP32 for the float types, INT32 for the
 * signed integer types, BOOL; see cvt_dtype_of), its
 * static shape and, when known at compile time, its data (kept host-side for folding: f for FP32,
 * i for INT32/BOOL). A constant gets a TOSA CONST only when an operator needs it as a tensor.
 */
#ifndef TOSAC_ONNX_CONVERT_H
#define TOSAC_ONNX_CONVERT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/arena.h"
#include "core/diag.h"
#include "ir/graph.h"
#include "tosac/compile.h"
#include "tosac/onnx.h"

/* No upper bound on an operator's input or output count (a variadic list, onnx_ops.def). */
#define ONNX_VARIADIC SIZE_MAX

/* Largest tensor rank of the compiled graph (TOSA level 8K); host constants may have more. */
#define CVT_MAX_RANK 6

typedef struct cvt_val {
    const char *name;
    tosac_value *v; /* NULL for a constant not yet materialised */
    tosac_dtype dt; /* FP32, INT32 or BOOL */
    int32_t onnx_elem;
    int rank;
    int64_t shape[TOSAC_MAX_RANK];
    int64_t numel;
    bool is_const;
    bool codes; /* QuantizeLinear's integer codes held as FP32 (cvt_quant.c): only DequantizeLinear reads them */
    const float *f; /* FP32 constants (read-only: may point into the ONNX model's own data) */
    int64_t *i; /* INT32 / BOOL constants (int64 ONNX values before the range check) */
    struct cvt_val *next;
} cvt_val;

typedef struct cvt_ctx {
    tosac_graph *g;
    tosac_block *b;
    tosac_arena arena;
    const tosac_onnx_model *m;
    const tosac_onnx_node *node; /* node being converted */
    int64_t opset;
    tosac_diag *d;
    uint32_t counter;
    bool oversize; /* a value was refused for its size (cvt_nomem then says so) */
    const tosac_onnx_attr *bad_attr; /* first attribute read with the wrong type (cvt_attr_*) */
    tosac_onnx_attr_type bad_attr_want;
    const tosac_compile_opts *opts;
    cvt_val *hash[1024];
} cvt_ctx;

/* Adds "node 'NAME' (OP): message" and returns `s`. */
tosac_status cvt_fail(cvt_ctx *c, tosac_status s, const char *fmt, ...) TOSAC_PRINTF(3, 4);
/* Not enough memory: reports and returns TOSAC_ERR_NOMEM. */
tosac_status cvt_nomem(cvt_ctx *c);

cvt_val *cvt_lookup(cvt_ctx *c, const char *name);
/* Input `i` of the current node, NULL when absent ("" or beyond n_inputs). */
cvt_val *cvt_in(cvt_ctx *c, size_t i);
/* Same, but a missing input is an error (reported). */
cvt_val *cvt_in_req(cvt_ctx *c, size_t i, tosac_status *s);
/* Binds output `i` of the current node to tensor v (shape/type copied from v). */
tosac_status cvt_set_out(cvt_ctx *c, size_t i, tosac_value *v);
/* Binds output `i` to constant data (copied): f for FP32, iv for INT32/BOOL. */
tosac_status cvt_set_out_const(cvt_ctx *c, size_t i, tosac_dtype dt, int rank, const int64_t *shape,
                               const float *f, const int64_t *iv);

/* A host constant value `name` (data copied, as cvt_set_out_const). */
tosac_status cvt_const_val(cvt_ctx *c, const char *name, tosac_dtype dt, int rank, const int64_t *shape,
                           const float *f, const int64_t *iv);

/* The TOSA tensor of a value (materialising constants; int64 data is range-checked). */
tosac_value *cvt_tensor(cvt_ctx *c, cvt_val *v, tosac_status *s);
/* A new intermediate tensor with a fresh name. */
tosac_value *cvt_new(cvt_ctx *c, tosac_dtype dt, int rank, const int64_t *shape);
/* Appends op(in...) -> out; NULL on allocation failure. */
tosac_node *cvt_op(cvt_ctx *c, tosac_op op, uint32_t n_in, tosac_value *const *in, tosac_value *out);
/* Constants. */
tosac_value *cvt_const_f32(cvt_ctx *c, int rank, const int64_t *shape, const float *data);
/* Room for n floats in the graph's own arena (not zeroed), for constants computed at import... */
float *cvt_const_buffer(cvt_ctx *c, size_t n);
/* ...and the constant made of (part of) such a buffer, without a copy. */
tosac_value *cvt_const_f32_adopt(cvt_ctx *c, int rank, const int64_t *shape, const float *data);
tosac_value *cvt_const_i32(cvt_ctx *c, int rank, const int64_t *shape, const int32_t *data);
tosac_value *cvt_const_scalar(cvt_ctx *c, tosac_dtype dt, int rank, double value); /* shape all 1 */
tosac_value *cvt_zp(cvt_ctx *c, tosac_dtype dt); /* zero point: shape [1], value 0 */
tosac_value *cvt_shape_const(cvt_ctx *c, const int64_t *values, uint32_t count);

/* Data-layout helpers (return NULL on failure after reporting). */
tosac_value *cvt_mk_reshape(cvt_ctx *c, tosac_value *x, int rank, const int64_t *shape);
tosac_value *cvt_mk_transpose(cvt_ctx *c, tosac_value *x, const int32_t *perm);
/* SLICE of x: start and size per axis (x's rank). */
tosac_value *cvt_mk_slice(cvt_ctx *c, tosac_value *x, const int64_t *start, const int64_t *size);
/* CONCAT of n tensors along `axis`, at most 64 operands per CONCAT (TOSA level 8K's tensor list
   size); parts[] is used as scratch. */
tosac_value *cvt_concat_axis(cvt_ctx *c, tosac_value **parts, int64_t n, int axis);
/* Reshape x to `rank` by prepending 1s (numpy broadcasting); x itself if already of that rank. */
tosac_value *cvt_expand_rank(cvt_ctx *c, tosac_value *x, int rank);
/* Unary op producing the same shape and type. */
tosac_value *cvt_unary(cvt_ctx *c, tosac_op op, tosac_value *x);
/* Binary op with numpy broadcasting: output shape in the result; out_dt UNKNOWN = input type.
   MUL gets its shift operand. Reports an error for incompatible shapes. */
tosac_value *cvt_binary(cvt_ctx *c, tosac_op op, tosac_value *a, tosac_value *b, tosac_dtype out_dt);

/* Attributes (the default when absent; one of another type is an error, reported after the converter). */
int64_t cvt_attr_i(cvt_ctx *c, const char *name, int64_t def);
float cvt_attr_f(cvt_ctx *c, const char *name, float def);
const char *cvt_attr_s(cvt_ctx *c, const char *name, const char *def);
/* INTS attribute: count in *n (0 and NULL when absent). */
const int64_t *cvt_attr_ints(cvt_ctx *c, const char *name, size_t *n);

/* Error "input 'X' must be <what>" for a value not known at compile time, with the --bind options
   of the graph inputs it is computed from (the node-test runner binds them and retries). */
tosac_status cvt_need_const(cvt_ctx *c, const cvt_val *v, const char *what);
/* Constant integer contents of input i (error "must be a constant" when not known). */
tosac_status cvt_const_ints(cvt_ctx *c, size_t i, const int64_t **vals, int64_t *n);
/* Normalises axis a of rank r into [0, r); error when out of range. */
tosac_status cvt_axis(cvt_ctx *c, int64_t a, int r, int *out);
/* TOSA type a value of an ONNX elem type is computed in: FP32 for FLOAT, DOUBLE (demoted), FLOAT16
   and BFLOAT16; INT32 for INT8/16/32/64; BOOL; UNKNOWN when not supported (unsigned types). */
tosac_dtype cvt_dtype_of(int32_t onnx_elem);
/* TOSA type of a graph input or output of that ONNX type: FP16, BF16, INT8 and INT16 keep their
   width at the graph boundary (CAST to and from cvt_dtype_of inside); else cvt_dtype_of. */
tosac_dtype cvt_io_dtype(int32_t onnx_elem);
/* Host view of n little-endian elements of ONNX type elem: *f for the float types (FP32 values;
   `data` itself when it already is aligned FLOAT, else an arena copy), *iv for the integer types
   and BOOL (arena); error for unsupported types. */
tosac_status cvt_decode(cvt_ctx *c, int32_t elem, const void *data, int64_t n, const float **f, int64_t **iv);

/* Largest tensor the import makes (elements); bigger ones are refused with a clear error. */
#define CVT_MAX_ELEMS (INT64_C(1) << 31)

/* Shared converter helpers. */
/* Element count of a shape (1 for rank 0); INT64_MAX when it overflows, -1 for a negative dim. */
int64_t cvt_numel(int rank, const int64_t *shape);
/* Input i as a TOSA tensor (a missing input is an error); NULL with *s set on failure. */
tosac_value *cvt_in_tensor(cvt_ctx *c, size_t i, tosac_status *s);
/* INT32 indices into an axis of k elements with the negative ones counted from the end (ONNX):
   SELECT(idx < 0, idx + k, idx); NULL on failure (reported, *s set where known). */
tosac_value *cvt_wrap_index(cvt_ctx *c, tosac_value *idx, int64_t k, tosac_status *s);
/* Binds output 0 to out; when out is NULL returns s, or reports out of memory when s is TOSAC_OK. */
tosac_status cvt_finish(cvt_ctx *c, tosac_value *out, tosac_status s);
/* SELECT(p, a, b) with numpy broadcasting of the three operands; NULL on failure, with *s set to
   the reported status (FORMAT for shapes that cannot be broadcast, NOMEM). */
tosac_value *cvt_select(cvt_ctx *c, tosac_value *p, tosac_value *a, tosac_value *b, tosac_status *s);
/* Error "element type T is not supported here" unless x is FP32 (fp), INT32 (i32) or BOOL (b). */
tosac_status cvt_need_type(cvt_ctx *c, const tosac_value *x, bool fp, bool i32, bool b);
/* An "axes" list: the INTS attribute before opset from_opset, the optional constant input 1 from
   then on (NULL / 0 when absent). */
tosac_status cvt_axes_arg(cvt_ctx *c, int64_t from_opset, const int64_t **axes, int64_t *n);
/* REDUCE_SUM / MAX / MIN / PRODUCT of x over one axis, keeping it as 1; NULL for a NULL x or on failure. */
tosac_value *cvt_reduce_axis(cvt_ctx *c, tosac_op op, tosac_value *x, int axis);
/* CLAMP(x, lo, hi) for FP32; MAXIMUM / MINIMUM with the bounds (rounded inward) for INT32, which
   TOSA 1.0's CLAMP does not take; NULL for a NULL x or on failure. */
tosac_value *cvt_clamp(cvt_ctx *c, tosac_value *x, float lo, float hi);
/* Bias input i when present, else an FP32 zero vector of m elements. */
tosac_status cvt_bias_f32(cvt_ctx *c, size_t i, int64_t m, tosac_value **bias);

/* Subgraphs (If / Loop bodies). A new value `name` standing for src (same tensor or host data). */
cvt_val *cvt_alias(cvt_ctx *c, const char *name, const cvt_val *src);
/* Converts the initializers and nodes of subgraph g into the current block c->b (its inputs and
   outer references must already have values); c->node is kept. */
tosac_status cvt_subgraph(cvt_ctx *c, const tosac_onnx_graph *g);

/* Imports m as a TOSA graph in the model's layout (ONNX semantics, static shapes, constants folded
   host-side as they are met); the graph is not validated yet (tosac_onnx_compile runs the passes
   and the validator). */
tosac_status cvt_import(const tosac_onnx_model *m, const tosac_compile_opts *o, tosac_graph **out, tosac_diag *d);

#define ONNX_OP(op, sfx, lo, hi, in_lo, in_hi, out_lo, out_hi) tosac_status cvt_##sfx(cvt_ctx *c);
#include "onnx/onnx_ops.def"
#undef ONNX_OP
/* Unit-step Slice (cvt_tensor.c), the common case of the Slice converter cvt_slice_steps. */
tosac_status cvt_slice(cvt_ctx *c);

#endif
