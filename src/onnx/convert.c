/* ONNX -> TOSA 1.0 conversion: context, helpers, dispatch by op type and opset (onnx_ops.def). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/fp.h"
#include "onnx/convert.h"
#include "ir/rewrite.h"
#include "tosac/runtime.h"
#include "tosac/validate.h"

typedef struct cvt_entry {
    const char *op_type;
    tosac_status (*fn)(cvt_ctx *c);
    int64_t lo, hi;
    size_t min_in, max_in, min_out, max_out;
} cvt_entry;

static const cvt_entry k_converters[] = {
#define ONNX_OP(op, sfx, lo, hi, in_lo, in_hi, out_lo, out_hi) {op, cvt_##sfx, lo, hi, in_lo, in_hi, out_lo, out_hi},
#include "onnx/onnx_ops.def"
#undef ONNX_OP
};
#define N_CONVERTERS (sizeof k_converters / sizeof k_converters[0])

static const char *attr_type_name(tosac_onnx_attr_type t)
{
    static const char *const names[] = {"UNDEFINED", "FLOAT",  "INT",     "STRING",        "TENSOR",
                                        "GRAPH",     "FLOATS", "INTS",    "STRINGS",       "TENSORS",
                                        "GRAPHS",    "SPARSE_TENSOR",     "SPARSE_TENSORS",
                                        "TYPE_PROTO", "TYPE_PROTOS"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "UNDEFINED";
}

/* Reports the attribute of the wrong type the current converter has read (cvt_attr_*), once. */
static tosac_status report_bad_attr(cvt_ctx *c)
{
    const tosac_onnx_attr *a = c->bad_attr;
    c->bad_attr = NULL;
    return tosac_diag_add(c->d, TOSAC_ERR_FORMAT, "node '%s' (%s): attribute '%s' has type %s, expected %s",
                          c->node->name, c->node->op_type, a->name, attr_type_name(a->type),
                          attr_type_name(c->bad_attr_want));
}

tosac_status cvt_fail(cvt_ctx *c, tosac_status s, const char *fmt, ...)
{
    /* the attribute of the wrong type first: it is the cause of what the converter reports */
    if (c->bad_attr) report_bad_attr(c);
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->node)
        tosac_diag_add(c->d, s, "node '%s' (%s): %s", c->node->name, c->node->op_type, msg);
    else
        tosac_diag_add(c->d, s, "%s", msg);
    return s;
}

tosac_status cvt_nomem(cvt_ctx *c)
{
    if (c->oversize)
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "a tensor would have more than %lld elements or a negative dimension",
                        (long long)CVT_MAX_ELEMS);
    return cvt_fail(c, TOSAC_ERR_NOMEM, "out of memory");
}

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u;
    while (*s) h = (h ^ (uint8_t)*s++) * 16777619u;
    return h;
}

cvt_val *cvt_lookup(cvt_ctx *c, const char *name)
{
    for (cvt_val *v = c->hash[hash_str(name) % 1024]; v; v = v->next)
        if (!strcmp(v->name, name)) return v;
    return NULL;
}

static cvt_val *new_val(cvt_ctx *c, const char *name, tosac_dtype dt, int rank, const int64_t *shape)
{
    /* every value the import makes passes here: bounding its size once keeps every later product
       of its dimensions in range (hostile models ask for 2^62-element tensors) */
    int64_t numel = cvt_numel(rank, shape);
    if (numel < 0 || numel > CVT_MAX_ELEMS) {
        c->oversize = true;
        return NULL;
    }
    cvt_val *v = tosac_arena_alloc(&c->arena, sizeof *v);
    if (!v) return NULL;
    memset(v, 0, sizeof *v);
    v->name = tosac_arena_strdup(&c->arena, name);
    if (!v->name) return NULL;
    v->dt = dt;
    v->rank = rank;
    v->numel = numel;
    for (int k = 0; k < rank; k++) v->shape[k] = shape[k];
    uint32_t h = hash_str(name) % 1024;
    v->next = c->hash[h];
    c->hash[h] = v;
    return v;
}

tosac_dtype cvt_dtype_of(int32_t e)
{
    switch (e) {
    case TOSAC_ONNX_FLOAT:
    case TOSAC_ONNX_DOUBLE:
    case TOSAC_ONNX_FLOAT16:
    case TOSAC_ONNX_BFLOAT16: return TOSAC_DTYPE_FP32;
    case TOSAC_ONNX_INT8:
    case TOSAC_ONNX_INT16:
    case TOSAC_ONNX_INT32:
    case TOSAC_ONNX_INT64: return TOSAC_DTYPE_INT32;
    case TOSAC_ONNX_BOOL: return TOSAC_DTYPE_BOOL;
    default: return TOSAC_DTYPE_UNKNOWN;
    }
}

tosac_dtype cvt_io_dtype(int32_t e)
{
    switch (e) {
    case TOSAC_ONNX_FLOAT16: return TOSAC_DTYPE_FP16;
    case TOSAC_ONNX_BFLOAT16: return TOSAC_DTYPE_BF16;
    case TOSAC_ONNX_INT8: return TOSAC_DTYPE_INT8;
    case TOSAC_ONNX_INT16: return TOSAC_DTYPE_INT16;
    default: return cvt_dtype_of(e);
    }
}

tosac_status cvt_decode(cvt_ctx *c, int32_t elem, const void *data, int64_t n, const float **f, int64_t **iv)
{
    tosac_dtype dt = cvt_dtype_of(elem);
    *f = NULL;
    *iv = NULL;
    if (dt == TOSAC_DTYPE_UNKNOWN)
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "element type %s is not supported", tosac_onnx_elem_name(elem));
    if (n < 0 || (uint64_t)n > SIZE_MAX / 8 - 1) return cvt_nomem(c);
    const uint8_t *p = data;
    size_t m = (size_t)n;
    if (dt == TOSAC_DTYPE_FP32) {
        /* little-endian float data (ONNX's encoding) that is suitably aligned is used where it
           is: weights are most of a model's bytes (the model outlives the compilation) */
        static const uint32_t one = 1;
        if (elem == TOSAC_ONNX_FLOAT && *(const uint8_t *)&one == 1 && ((uintptr_t)p & 3u) == 0) {
            *f = (const float *)data;
            return TOSAC_OK;
        }
        float *o = tosac_arena_alloc(&c->arena, m * 4 + 1);
        if (!o) return cvt_nomem(c);
        for (size_t k = 0; k < m; k++) {
            if (elem == TOSAC_ONNX_FLOAT) {
                memcpy(&o[k], p + 4 * k, 4);
            } else if (elem == TOSAC_ONNX_DOUBLE) {
                double x;
                memcpy(&x, p + 8 * k, 8);
                o[k] = tosac_fp64_to_fp32(x);
            } else {
                uint16_t h = (uint16_t)(p[2 * k] | p[2 * k + 1] << 8);
                o[k] = elem == TOSAC_ONNX_FLOAT16 ? tosac_fp16_to_fp32(h) : tosac_bf16_to_fp32(h);
            }
        }
        *f = o;
        return TOSAC_OK;
    }
    int64_t *o = tosac_arena_alloc(&c->arena, m * 8 + 1);
    if (!o) return cvt_nomem(c);
    for (size_t k = 0; k < m; k++) {
        switch (elem) {
        case TOSAC_ONNX_INT64: memcpy(&o[k], p + 8 * k, 8); break;
        case TOSAC_ONNX_INT32: {
            int32_t x;
            memcpy(&x, p + 4 * k, 4);
            o[k] = x;
            break;
        }
        case TOSAC_ONNX_INT16: {
            int16_t x;
            memcpy(&x, p + 2 * k, 2);
            o[k] = x;
            break;
        }
        case TOSAC_ONNX_INT8: o[k] = (int8_t)p[k]; break;
        default: o[k] = p[k] != 0; break; /* BOOL */
        }
    }
    *iv = o;
    return TOSAC_OK;
}

cvt_val *cvt_in(cvt_ctx *c, size_t i)
{
    if (i >= c->node->n_inputs || !c->node->inputs[i][0]) return NULL;
    return cvt_lookup(c, c->node->inputs[i]);
}

cvt_val *cvt_in_req(cvt_ctx *c, size_t i, tosac_status *s)
{
    cvt_val *v = cvt_in(c, i);
    if (!v) {
        *s = cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input %zu is missing", i);
        return NULL;
    }
    if (v->dt == TOSAC_DTYPE_UNKNOWN) {
        *s = cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input '%s' has element type %s, which is not supported", v->name,
                      tosac_onnx_elem_name(v->onnx_elem));
        return NULL;
    }
    return v;
}

static int32_t onnx_elem_of(tosac_dtype dt)
{
    return dt == TOSAC_DTYPE_FP32 ? TOSAC_ONNX_FLOAT : dt == TOSAC_DTYPE_BOOL ? TOSAC_ONNX_BOOL : TOSAC_ONNX_INT32;
}

tosac_status cvt_set_out(cvt_ctx *c, size_t i, tosac_value *t)
{
    if (!t) return TOSAC_ERR_NOMEM;
    if (i >= c->node->n_outputs || !c->node->outputs[i][0]) return TOSAC_OK;
    cvt_val *v = new_val(c, c->node->outputs[i], t->dtype, t->rank, t->shape);
    if (!v) return cvt_nomem(c);
    v->v = t;
    v->onnx_elem = onnx_elem_of(t->dtype);
    return TOSAC_OK;
}

tosac_status cvt_set_out_const(cvt_ctx *c, size_t i, tosac_dtype dt, int rank, const int64_t *shape, const float *f,
                               const int64_t *iv)
{
    if (i >= c->node->n_outputs || !c->node->outputs[i][0]) return TOSAC_OK;
    return cvt_const_val(c, c->node->outputs[i], dt, rank, shape, f, iv);
}

tosac_status cvt_const_val(cvt_ctx *c, const char *name, tosac_dtype dt, int rank, const int64_t *shape, const float *f,
                           const int64_t *iv)
{
    cvt_val *v = new_val(c, name, dt, rank, shape);
    if (!v) return cvt_nomem(c);
    v->is_const = true;
    v->onnx_elem = onnx_elem_of(dt);
    size_t n = (size_t)v->numel;
    if (dt == TOSAC_DTYPE_FP32) {
        float *copy = tosac_arena_alloc(&c->arena, n * sizeof(float) + 1);
        if (!copy) return cvt_nomem(c);
        if (n) memcpy(copy, f, n * sizeof(float));
        v->f = copy;
    } else {
        v->i = tosac_arena_alloc(&c->arena, n * sizeof(int64_t) + 1);
        if (!v->i) return cvt_nomem(c);
        if (n) memcpy(v->i, iv, n * sizeof(int64_t));
    }
    return TOSAC_OK;
}

tosac_value *cvt_new(cvt_ctx *c, tosac_dtype dt, int rank, const int64_t *shape)
{
    char name[32];
    snprintf(name, sizeof name, "onnx_t%u", c->counter++);
    return tosac_block_add_tensor(c->b, name, dt, rank, shape);
}

static tosac_value *add_const(cvt_ctx *c, tosac_dtype dt, int rank, const int64_t *shape, const void *data,
                              size_t nbytes)
{
    char name[32];
    snprintf(name, sizeof name, "onnx_c%u", c->counter++);
    return tosac_block_add_const(c->b, name, dt, rank, shape, data, nbytes);
}

int64_t cvt_numel(int rank, const int64_t *shape)
{
    int64_t n = 1;
    for (int k = 0; k < rank; k++) {
        if (shape[k] < 0) return -1;
        if (shape[k] && n > INT64_MAX / shape[k]) return INT64_MAX;
        n *= shape[k];
    }
    return n;
}

tosac_value *cvt_const_f32(cvt_ctx *c, int rank, const int64_t *shape, const float *data)
{
    return add_const(c, TOSAC_DTYPE_FP32, rank, shape, data, (size_t)cvt_numel(rank, shape) * 4);
}

/* The arena of the graph being built (a scratch graph while a constant node is folded). */
float *cvt_const_buffer(cvt_ctx *c, size_t n)
{
    size_t bytes;
    if (!tosac_mul_size(n ? n : 1, sizeof(float), &bytes)) return NULL;
    return tosac_arena_alloc_uninit(&c->b->graph->arena, bytes);
}

tosac_value *cvt_const_f32_adopt(cvt_ctx *c, int rank, const int64_t *shape, const float *data)
{
    char name[32];
    snprintf(name, sizeof name, "onnx_c%u", c->counter++);
    return tosac_block_add_const_adopt(c->b, name, TOSAC_DTYPE_FP32, rank, shape, data,
                                       (size_t)cvt_numel(rank, shape) * 4);
}

tosac_value *cvt_const_i32(cvt_ctx *c, int rank, const int64_t *shape, const int32_t *data)
{
    return add_const(c, TOSAC_DTYPE_INT32, rank, shape, data, (size_t)cvt_numel(rank, shape) * 4);
}

tosac_value *cvt_const_scalar(cvt_ctx *c, tosac_dtype dt, int rank, double value)
{
    int64_t shape[TOSAC_MAX_RANK];
    for (int k = 0; k < rank; k++) shape[k] = 1;
    uint8_t buf[8];
    size_t n = 4;
    if (dt == TOSAC_DTYPE_FP32) {
        float f = (float)value;
        memcpy(buf, &f, 4);
    } else if (dt == TOSAC_DTYPE_INT32) {
        int32_t v = (int32_t)value;
        memcpy(buf, &v, 4);
    } else { /* INT8, BOOL */
        buf[0] = (uint8_t)(int8_t)value;
        n = 1;
    }
    return add_const(c, dt, rank, shape, buf, n);
}

tosac_value *cvt_zp(cvt_ctx *c, tosac_dtype dt) { return cvt_const_scalar(c, dt, 1, 0.0); }

tosac_value *cvt_shape_const(cvt_ctx *c, const int64_t *values, uint32_t count)
{
    char name[32];
    snprintf(name, sizeof name, "onnx_s%u", c->counter++);
    return tosac_block_add_const_shape(c->b, name, values, count);
}

tosac_value *cvt_tensor(cvt_ctx *c, cvt_val *v, tosac_status *s)
{
    if (v->v) return v->v;
    size_t n = (size_t)v->numel;
    if (n == 0) {
        *s = cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "zero-size tensor '%s' is not supported", v->name);
        return NULL;
    }
    tosac_value *t = NULL;
    if (v->dt == TOSAC_DTYPE_FP32) {
        t = cvt_const_f32(c, v->rank, v->shape, v->f);
    } else if (v->dt == TOSAC_DTYPE_INT32 || v->dt == TOSAC_DTYPE_BOOL) {
        size_t esz = v->dt == TOSAC_DTYPE_BOOL ? 1 : 4;
        uint8_t *buf = tosac_arena_alloc(&c->arena, n * esz + 1);
        if (!buf) {
            *s = cvt_nomem(c);
            return NULL;
        }
        for (size_t k = 0; k < n; k++) {
            int64_t x = v->i[k];
            if (v->dt == TOSAC_DTYPE_BOOL) {
                buf[k] = x != 0;
            } else {
                if (x < INT32_MIN || x > INT32_MAX) {
                    *s = cvt_fail(c, TOSAC_ERR_UNSUPPORTED,
                                  "constant '%s' element %zu (%lld) does not fit in INT32", v->name, k, (long long)x);
                    return NULL;
                }
                int32_t y = (int32_t)x;
                memcpy(buf + 4 * k, &y, 4);
            }
        }
        t = add_const(c, v->dt, v->rank, v->shape, buf, n * esz);
    } else {
        *s = cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "value '%s' has element type %s, which is not supported", v->name,
                      tosac_onnx_elem_name(v->onnx_elem));
        return NULL;
    }
    if (!t) {
        *s = cvt_nomem(c);
        return NULL;
    }
    v->v = t;
    return t;
}

tosac_node *cvt_op(cvt_ctx *c, tosac_op op, uint32_t n_in, tosac_value *const *in, tosac_value *out)
{
    for (uint32_t k = 0; k < n_in; k++)
        if (!in[k]) return NULL;
    if (!out) return NULL;
    tosac_node *n = tosac_block_add_node(c->b, op, n_in, in, 1, &out);
    if (!n) return NULL;
    if (c->node && tosac_node_set_location(n, c->node->name) != TOSAC_OK) return NULL;
    /* ONNX propagates NaN */
    unsigned nan_id = op == TOSAC_OP_MAXIMUM   ? TOSAC_ATTR_MAXIMUM_nan_mode
                      : op == TOSAC_OP_MINIMUM ? TOSAC_ATTR_MINIMUM_nan_mode
                      : op == TOSAC_OP_CLAMP   ? TOSAC_ATTR_CLAMP_nan_mode
                      : op == TOSAC_OP_REDUCE_MAX ? TOSAC_ATTR_REDUCE_MAX_nan_mode
                      : op == TOSAC_OP_REDUCE_MIN ? TOSAC_ATTR_REDUCE_MIN_nan_mode
                      : op == TOSAC_OP_MAX_POOL2D ? TOSAC_ATTR_MAX_POOL2D_nan_mode
                                                  : 99u;
    if (nan_id != 99u && tosac_node_set_int(n, nan_id, 1) != TOSAC_OK) return NULL;
    return n;
}

tosac_value *cvt_mk_reshape(cvt_ctx *c, tosac_value *x, int rank, const int64_t *shape)
{
    if (!x) return NULL;
    tosac_value *out = cvt_new(c, x->dtype, rank, shape);
    tosac_value *in[2] = {x, cvt_shape_const(c, shape, (uint32_t)rank)};
    return cvt_op(c, TOSAC_OP_RESHAPE, 2, in, out) ? out : NULL;
}

tosac_value *cvt_mk_transpose(cvt_ctx *c, tosac_value *x, const int32_t *perm)
{
    if (!x) return NULL;
    int64_t shape[TOSAC_MAX_RANK];
    for (int k = 0; k < x->rank; k++) shape[k] = x->shape[perm[k]];
    tosac_value *out = cvt_new(c, x->dtype, x->rank, shape);
    tosac_node *n = cvt_op(c, TOSAC_OP_TRANSPOSE, 1, &x, out);
    if (!n || tosac_node_set_ints(n, TOSAC_ATTR_TRANSPOSE_perms, perm, (uint32_t)x->rank) != TOSAC_OK) return NULL;
    return out;
}

tosac_value *cvt_expand_rank(cvt_ctx *c, tosac_value *x, int rank)
{
    if (!x || x->rank >= rank) return x;
    int64_t shape[TOSAC_MAX_RANK];
    int pad = rank - x->rank;
    for (int k = 0; k < rank; k++) shape[k] = k < pad ? 1 : x->shape[k - pad];
    return cvt_mk_reshape(c, x, rank, shape);
}

tosac_value *cvt_unary(cvt_ctx *c, tosac_op op, tosac_value *x)
{
    if (!x) return NULL;
    tosac_value *out = cvt_new(c, x->dtype, x->rank, x->shape);
    if (op == TOSAC_OP_NEGATE) {
        tosac_value *in[3] = {x, NULL, NULL};
        in[1] = cvt_zp(c, x->dtype);
        in[2] = cvt_zp(c, x->dtype);
        return cvt_op(c, op, 3, in, out) ? out : NULL;
    }
    return cvt_op(c, op, 1, &x, out) ? out : NULL;
}

tosac_value *cvt_binary(cvt_ctx *c, tosac_op op, tosac_value *a, tosac_value *b, tosac_dtype out_dt)
{
    if (!a || !b) return NULL;
    int rank = a->rank > b->rank ? a->rank : b->rank;
    a = cvt_expand_rank(c, a, rank);
    b = cvt_expand_rank(c, b, rank);
    if (!a || !b) return NULL;
    int64_t shape[TOSAC_MAX_RANK];
    for (int k = 0; k < rank; k++) {
        int64_t x = a->shape[k], y = b->shape[k];
        if (x != y && x != 1 && y != 1) {
            cvt_fail(c, TOSAC_ERR_FORMAT, "operand shapes cannot be broadcast (dimension %d: %lld vs %lld)", k,
                     (long long)x, (long long)y);
            return NULL;
        }
        shape[k] = x == 1 ? y : x;
    }
    tosac_value *out = cvt_new(c, out_dt == TOSAC_DTYPE_UNKNOWN ? a->dtype : out_dt, rank, shape);
    if (op == TOSAC_OP_MUL) {
        tosac_value *in[3] = {a, b, cvt_const_scalar(c, TOSAC_DTYPE_INT8, 1, 0)};
        return cvt_op(c, op, 3, in, out) ? out : NULL;
    }
    tosac_value *in[2] = {a, b};
    return cvt_op(c, op, 2, in, out) ? out : NULL;
}

/* Attribute `name` of the current node when it has type `type`; NULL when absent. One of another
   type is remembered (c->bad_attr) and reported before the converter's first error, or by the
   dispatcher after it: ONNX's checker refuses it, and a default silently used in its place would
   compute something else. */
static const tosac_onnx_attr *attr_typed(cvt_ctx *c, const char *name, tosac_onnx_attr_type type)
{
    const tosac_onnx_attr *a = tosac_onnx_find_attr(c->node, name);
    if (!a || a->type == type) return a;
    if (!c->bad_attr) {
        c->bad_attr = a;
        c->bad_attr_want = type;
    }
    return NULL;
}

int64_t cvt_attr_i(cvt_ctx *c, const char *name, int64_t def)
{
    const tosac_onnx_attr *a = attr_typed(c, name, TOSAC_ONNX_ATTR_INT);
    return a ? a->i : def;
}

float cvt_attr_f(cvt_ctx *c, const char *name, float def)
{
    const tosac_onnx_attr *a = attr_typed(c, name, TOSAC_ONNX_ATTR_FLOAT);
    return a ? a->f : def;
}

const char *cvt_attr_s(cvt_ctx *c, const char *name, const char *def)
{
    const tosac_onnx_attr *a = attr_typed(c, name, TOSAC_ONNX_ATTR_STRING);
    return a ? a->s : def;
}

const int64_t *cvt_attr_ints(cvt_ctx *c, const char *name, size_t *n)
{
    const tosac_onnx_attr *a = attr_typed(c, name, TOSAC_ONNX_ATTR_INTS);
    *n = a ? a->n : 0;
    return a ? a->ints : NULL;
}

static bool hint_has(const char *hint, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = hint; (p = strstr(p, " --bind ")) != NULL; p += 8)
        if (!strncmp(p + 8, name, n) && p[8 + n] == '=') return true;
    return false;
}

/* Appends to hint the graph inputs that are not constants and that value `name` is computed from
   (walking producers backwards through the main graph, subgraph references included, at most
   `budget` steps); count is how many were found so far. */
static void depends_on(cvt_ctx *c, const char *name, char *hint, size_t size, int *count, int *budget)
{
    const tosac_onnx_graph *g = c->m->graph;
    if (--*budget < 0) return;
    for (size_t k = 0; k < g->n_inputs; k++)
        if (!strcmp(g->inputs[k].name, name)) {
            cvt_val *v = cvt_lookup(c, name);
            if ((v && v->is_const) || hint_has(hint, name)) return;
            if (c->opts->on_need_const) c->opts->on_need_const(c->opts->need_const_user, name);
            size_t len = strlen(hint);
            if (*count < 8 && len + strlen(name) + 32 < size)
                snprintf(hint + len, size - len, " --bind %s=FILE.npy", name);
            ++*count;
            return;
        }
    for (size_t k = 0; k < g->n_nodes; k++) {
        const tosac_onnx_node *n = &g->nodes[k];
        bool produces = false;
        for (size_t j = 0; j < n->n_outputs; j++) produces |= !strcmp(n->outputs[j], name);
        if (!produces) continue;
        for (size_t j = 0; j < n->n_inputs; j++)
            if (n->inputs[j][0]) depends_on(c, n->inputs[j], hint, size, count, budget);
        for (size_t j = 0; j < n->n_attrs; j++) {
            const tosac_onnx_attr *a = &n->attrs[j];
            size_t ng = a->type == TOSAC_ONNX_ATTR_GRAPH ? 1 : a->type == TOSAC_ONNX_ATTR_GRAPHS ? a->n : 0;
            for (size_t q = 0; q < ng; q++) {
                const tosac_onnx_graph *sg = a->type == TOSAC_ONNX_ATTR_GRAPH ? a->g : a->graphs[q];
                for (size_t r = 0; sg && r < sg->n_outer_refs; r++) depends_on(c, sg->outer_refs[r], hint, size, count, budget);
            }
        }
        return;
    }
}

tosac_status cvt_need_const(cvt_ctx *c, const cvt_val *v, const char *what)
{
    char hint[400] = "";
    int count = 0, budget = 2048;
    depends_on(c, v->name, hint, sizeof hint, &count, &budget);
    if (count == 0)
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input '%s' must be %s, and it is not known at compile time", v->name, what);
    bool self = false;
    for (size_t k = 0; k < c->m->graph->n_inputs; k++) self |= !strcmp(c->m->graph->inputs[k].name, v->name);
    if (self) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input '%s' must be %s (bind it with%s)", v->name, what, hint);
    return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input '%s' must be %s (it is computed from graph inputs: bind them with%s)",
                    v->name, what, hint);
}

tosac_status cvt_const_ints(cvt_ctx *c, size_t i, const int64_t **vals, int64_t *n)
{
    cvt_val *v = cvt_in(c, i);
    if (!v) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input %zu is missing", i);
    if (!v->is_const || !v->i) return cvt_need_const(c, v, "a constant integer tensor");
    *vals = v->i;
    *n = v->numel;
    return TOSAC_OK;
}

tosac_status cvt_axis(cvt_ctx *c, int64_t a, int r, int *out)
{
    if (a < -r || a >= (r ? r : 1)) return cvt_fail(c, TOSAC_ERR_FORMAT, "axis %lld out of range for rank %d", (long long)a, r);
    *out = (int)(a < 0 ? a + r : a);
    return TOSAC_OK;
}

/* ---- helpers shared by the converters -------------------------------------------------------- */

tosac_value *cvt_in_tensor(cvt_ctx *c, size_t i, tosac_status *s)
{
    cvt_val *v = cvt_in_req(c, i, s);
    return v ? cvt_tensor(c, v, s) : NULL;
}

tosac_value *cvt_select(cvt_ctx *c, tosac_value *p, tosac_value *a, tosac_value *b, tosac_status *s)
{
    if (!p || !a || !b) return NULL;
    int rank = p->rank;
    if (a->rank > rank) rank = a->rank;
    if (b->rank > rank) rank = b->rank;
    p = cvt_expand_rank(c, p, rank);
    a = cvt_expand_rank(c, a, rank);
    b = cvt_expand_rank(c, b, rank);
    if (!p || !a || !b) {
        *s = cvt_nomem(c);
        return NULL;
    }
    int64_t shape[TOSAC_MAX_RANK];
    tosac_value *in[3] = {p, a, b};
    for (int k = 0; k < rank; k++) {
        int64_t d = 1;
        for (int j = 0; j < 3; j++) {
            int64_t e = in[j]->shape[k];
            if (e != 1) {
                if (d != 1 && d != e) {
                    *s = cvt_fail(c, TOSAC_ERR_FORMAT, "operand shapes cannot be broadcast");
                    return NULL;
                }
                d = e;
            }
        }
        shape[k] = d;
    }
    tosac_value *out = cvt_new(c, a->dtype, rank, shape);
    return cvt_op(c, TOSAC_OP_SELECT, 3, in, out) ? out : NULL;
}

tosac_value *cvt_wrap_index(cvt_ctx *c, tosac_value *idx, int64_t k, tosac_status *s)
{
    if (!idx) return NULL;
    tosac_value *neg = cvt_binary(c, TOSAC_OP_GREATER, cvt_const_scalar(c, TOSAC_DTYPE_INT32, idx->rank, 0), idx,
                                  TOSAC_DTYPE_BOOL);
    tosac_value *up = cvt_binary(c, TOSAC_OP_ADD, idx, cvt_const_scalar(c, TOSAC_DTYPE_INT32, idx->rank, (double)k),
                                 TOSAC_DTYPE_UNKNOWN);
    return cvt_select(c, neg, up, idx, s);
}

tosac_status cvt_finish(cvt_ctx *c, tosac_value *out, tosac_status s)
{
    if (out) return cvt_set_out(c, 0, out);
    return s != TOSAC_OK ? s : cvt_nomem(c);
}

tosac_status cvt_need_type(cvt_ctx *c, const tosac_value *x, bool fp, bool i32, bool b)
{
    tosac_dtype t = x->dtype;
    if ((t == TOSAC_DTYPE_FP32 && fp) || (t == TOSAC_DTYPE_INT32 && i32) || (t == TOSAC_DTYPE_BOOL && b)) return TOSAC_OK;
    return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "element type %s is not supported here", tosac_dtype_name(t));
}

tosac_status cvt_axes_arg(cvt_ctx *c, int64_t from_opset, const int64_t **axes, int64_t *n)
{
    if (c->opset < from_opset) {
        size_t na;
        *axes = cvt_attr_ints(c, "axes", &na);
        *n = (int64_t)na;
        return TOSAC_OK;
    }
    if (!cvt_in(c, 1)) {
        *axes = NULL;
        *n = 0;
        return TOSAC_OK;
    }
    return cvt_const_ints(c, 1, axes, n);
}

tosac_value *cvt_reduce_axis(cvt_ctx *c, tosac_op op, tosac_value *x, int axis)
{
    if (!x) return NULL;
    int64_t shape[TOSAC_MAX_RANK];
    memcpy(shape, x->shape, (size_t)x->rank * sizeof *shape);
    shape[axis] = 1;
    tosac_value *out = cvt_new(c, x->dtype, x->rank, shape);
    tosac_node *n = cvt_op(c, op, 1, &x, out);
    unsigned id = op == TOSAC_OP_REDUCE_MAX       ? TOSAC_ATTR_REDUCE_MAX_axis
                : op == TOSAC_OP_REDUCE_MIN       ? TOSAC_ATTR_REDUCE_MIN_axis
                : op == TOSAC_OP_REDUCE_PRODUCT   ? TOSAC_ATTR_REDUCE_PRODUCT_axis
                                                  : TOSAC_ATTR_REDUCE_SUM_axis;
    if (!n || tosac_node_set_int(n, id, axis) != TOSAC_OK) return NULL;
    return out;
}

tosac_value *cvt_clamp(cvt_ctx *c, tosac_value *x, float lo, float hi)
{
    if (!x) return NULL;
    if (x->dtype == TOSAC_DTYPE_INT32) { /* TOSA 1.0 has no INT32 CLAMP */
        if (lo > (float)INT32_MIN)
            x = cvt_binary(c, TOSAC_OP_MAXIMUM, x, cvt_const_scalar(c, x->dtype, x->rank, ceil(lo)), TOSAC_DTYPE_UNKNOWN);
        if (hi < (float)INT32_MAX)
            x = cvt_binary(c, TOSAC_OP_MINIMUM, x, cvt_const_scalar(c, x->dtype, x->rank, floor(hi)), TOSAC_DTYPE_UNKNOWN);
        return x;
    }
    tosac_value *out = cvt_new(c, x->dtype, x->rank, x->shape);
    tosac_node *n = cvt_op(c, TOSAC_OP_CLAMP, 1, &x, out);
    if (!n) return NULL;
    uint8_t a[4], b[4];
    memcpy(a, &lo, 4);
    memcpy(b, &hi, 4);
    if (tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_min_val, a, 4) != TOSAC_OK ||
        tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_max_val, b, 4) != TOSAC_OK)
        return NULL;
    return out;
}

tosac_status cvt_bias_f32(cvt_ctx *c, size_t i, int64_t m, tosac_value **bias)
{
    tosac_status s = TOSAC_OK;
    cvt_val *bv = cvt_in(c, i);
    if (bv) {
        *bias = cvt_tensor(c, bv, &s);
        return *bias ? TOSAC_OK : s;
    }
    float *z = tosac_arena_alloc(&c->arena, (size_t)m * 4 + 1);
    if (!z) return cvt_nomem(c);
    memset(z, 0, (size_t)m * 4);
    *bias = cvt_const_f32(c, 1, &m, z);
    return TOSAC_OK;
}

/* ---- model level ---------------------------------------------------------------------------- */

static tosac_status add_const_val(cvt_ctx *c, const char *name, int32_t elem, int rank, const int64_t *dims,
                                  const void *data)
{
    if (rank > TOSAC_MAX_RANK) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "constant '%s': rank %d too large", name, rank);
    tosac_dtype dt = cvt_dtype_of(elem);
    cvt_val *v = new_val(c, name, dt, rank, dims);
    if (!v) return cvt_nomem(c);
    v->is_const = true;
    v->onnx_elem = elem;
    /* a constant of an unsupported type stays undecoded: only a converter that uses it fails */
    if (dt == TOSAC_DTYPE_UNKNOWN) return TOSAC_OK;
    return cvt_decode(c, elem, data, v->numel, &v->f, &v->i);
}

static tosac_status bind_input(cvt_ctx *c, const tosac_onnx_value_info *vi, const tosac_npy *a)
{
    static const struct {
        const char *descr;
        int32_t elem;
    } k_types[] = {{"<f4", TOSAC_ONNX_FLOAT}, {"<f8", TOSAC_ONNX_DOUBLE}, {"<f2", TOSAC_ONNX_FLOAT16},
                   {"<i8", TOSAC_ONNX_INT64}, {"<i4", TOSAC_ONNX_INT32}, {"<i2", TOSAC_ONNX_INT16},
                   {"|i1", TOSAC_ONNX_INT8},  {"|b1", TOSAC_ONNX_BOOL}};
    int32_t elem = vi->type.elem_type, want = TOSAC_ONNX_UNDEFINED;
    for (size_t k = 0; k < sizeof k_types / sizeof k_types[0]; k++)
        if (!strcmp(a->descr, k_types[k].descr)) want = k_types[k].elem;
    if (want == TOSAC_ONNX_UNDEFINED)
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input '%s': bound array type %s is not supported", vi->name, a->descr);
    /* integer widths are interchangeable (the values are range-checked when they become INT32) */
    if (elem != want && !(cvt_dtype_of(elem) == TOSAC_DTYPE_INT32 && cvt_dtype_of(want) == TOSAC_DTYPE_INT32))
        return cvt_fail(c, TOSAC_ERR_INVALID_ARG, "input '%s': bound array type %s does not match the input type %s",
                        vi->name, a->descr, tosac_onnx_elem_name(elem));
    return add_const_val(c, vi->name, want, a->rank, a->shape, a->data);
}

static tosac_status add_graph_input(cvt_ctx *c, const tosac_onnx_value_info *vi, const tosac_compile_opts *o)
{
    for (size_t k = 0; k < o->n_bindings; k++)
        if (!strcmp(o->bindings[k].name, vi->name)) return bind_input(c, vi, o->bindings[k].value);
    if (vi->type.kind != TOSAC_ONNX_TYPE_TENSOR)
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input '%s': only tensor inputs are supported", vi->name);
    tosac_dtype dt = cvt_dtype_of(vi->type.elem_type);
    if (dt == TOSAC_DTYPE_UNKNOWN)
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input '%s': element type %s is not supported", vi->name,
                        tosac_onnx_elem_name(vi->type.elem_type));
    int64_t shape[TOSAC_MAX_RANK];
    int rank = -1;
    for (size_t k = 0; k < o->n_shapes; k++)
        if (!strcmp(o->shapes[k].name, vi->name)) {
            rank = o->shapes[k].rank;
            if (rank < 0 || rank > TOSAC_MAX_RANK)
                return cvt_fail(c, TOSAC_ERR_INVALID_ARG, "input '%s': bad --input-shape rank", vi->name);
            for (int j = 0; j < rank; j++) {
                shape[j] = o->shapes[k].dims[j];
                if (shape[j] <= 0)
                    return cvt_fail(c, TOSAC_ERR_INVALID_ARG,
                                    "input '%s': --input-shape dimension %d is %lld; dimensions are positive",
                                    vi->name, j, (long long)shape[j]);
            }
        }
    if (rank < 0) {
        if (!vi->type.has_shape)
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input '%s': rank unknown (give --input-shape %s=DIMS)",
                            vi->name, vi->name);
        if (vi->type.rank > TOSAC_MAX_RANK)
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input '%s': rank too large", vi->name);
        rank = (int)vi->type.rank;
        for (int j = 0; j < rank; j++) {
            shape[j] = vi->type.dims[j].value < 0 ? 1 : vi->type.dims[j].value;
            /* a program has static shapes: say which dimension was chosen, and how to choose */
            if (vi->type.dims[j].value < 0)
                tosac_diag_add(c->d, TOSAC_OK,
                               "input '%s': dimension %d is %s%s%s; it is taken as 1 (set it with --input-shape %s=DIMS)",
                               vi->name, j, vi->type.dims[j].param ? "symbolic ('" : "unknown",
                               vi->type.dims[j].param ? vi->type.dims[j].param : "",
                               vi->type.dims[j].param ? "')" : "", vi->name);
        }
    }
    if (rank > CVT_MAX_RANK)
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "input '%s': rank %d is beyond TOSA level 8K's %d", vi->name, rank,
                        CVT_MAX_RANK);
    /* TOSA has no zero-size tensors; an empty array is fully known, so binding it makes it a
       (host-side) constant */
    for (int j = 0; j < rank; j++)
        if (shape[j] == 0) {
            if (o->on_need_const) o->on_need_const(o->need_const_user, vi->name);
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED,
                            "input '%s' has no elements, which a TOSA tensor cannot have (bind it with --bind %s=FILE.npy)",
                            vi->name, vi->name);
        }
    /* the input keeps its ONNX width (FP16, BF16, INT8, INT16); the graph computes in FP32 / INT32 */
    tosac_dtype io = cvt_io_dtype(vi->type.elem_type);
    tosac_value *t = tosac_block_add_tensor(c->b, vi->name, io, rank, shape);
    if (!t || tosac_block_add_input(c->b, t) != TOSAC_OK) return cvt_nomem(c);
    cvt_val *v = new_val(c, vi->name, dt, rank, shape);
    if (!v) return cvt_nomem(c);
    v->onnx_elem = vi->type.elem_type;
    v->v = t;
    if (io != dt) {
        v->v = cvt_new(c, dt, rank, shape);
        if (!cvt_op(c, TOSAC_OP_CAST, 1, &t, v->v)) return cvt_nomem(c);
    }
    return TOSAC_OK;
}

/* Graph outputs of a narrower ONNX type (FP16, BF16, INT8, INT16) are CAST back from the FP32 /
   INT32 the graph computes in; a DOUBLE output stays FP32. */
static tosac_status narrow_outputs(cvt_ctx *c, const tosac_onnx_graph *g)
{
    for (size_t k = 0; k < g->n_outputs; k++) {
        const tosac_onnx_type *ty = &g->outputs[k].type;
        cvt_val *v = cvt_lookup(c, g->outputs[k].name);
        if (!v || ty->kind != TOSAC_ONNX_TYPE_TENSOR || cvt_dtype_of(ty->elem_type) != v->dt) continue;
        tosac_dtype io = cvt_io_dtype(ty->elem_type);
        if (io == v->dt) continue;
        tosac_status s = TOSAC_OK;
        tosac_value *x = cvt_tensor(c, v, &s);
        if (!x) return s;
        tosac_value *y = cvt_new(c, io, x->rank, x->shape);
        if (!cvt_op(c, TOSAC_OP_CAST, 1, &x, y)) return cvt_nomem(c);
        v->v = y;
        v->dt = io;
        v->is_const = false;
    }
    return TOSAC_OK;
}

/* ---- subgraphs -------------------------------------------------------------------------------- */

cvt_val *cvt_alias(cvt_ctx *c, const char *name, const cvt_val *src)
{
    cvt_val *v = new_val(c, name, src->dt, src->rank, src->shape);
    if (!v) return NULL;
    v->v = src->v;
    v->onnx_elem = src->onnx_elem;
    v->is_const = src->is_const;
    v->f = src->f;
    v->i = src->i;
    return v;
}

static tosac_status convert_node(cvt_ctx *c, const tosac_onnx_node *n);

tosac_status cvt_subgraph(cvt_ctx *c, const tosac_onnx_graph *g)
{
    const tosac_onnx_node *node = c->node;
    tosac_status s = TOSAC_OK;
    for (size_t k = 0; k < g->n_initializers && s == TOSAC_OK; k++) {
        const tosac_onnx_tensor *t = &g->initializers[k];
        s = t->rank > TOSAC_MAX_RANK ? cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "initializer '%s': rank too large", t->name)
                                     : add_const_val(c, t->name, t->elem_type, (int)t->rank, t->dims, t->data);
    }
    for (size_t k = 0; k < g->n_nodes && s == TOSAC_OK; k++) s = convert_node(c, &g->nodes[k]);
    c->node = node;
    return s;
}

/* ---- host-side folding ------------------------------------------------------------------------ */

/* Bound on the elements a node folded at import time may read or produce (beyond it the node's
   operators stay in the graph). */
#define FOLD_MAX_ELEMS (INT64_C(1) << 22)

/* A node whose inputs are all host constants (and that has no subgraph) can be folded. */
static bool foldable(cvt_ctx *c, const tosac_onnx_node *n)
{
    bool any = false;
    int64_t total = 0;
    for (size_t k = 0; k < n->n_inputs; k++) {
        if (!n->inputs[k][0]) continue;
        cvt_val *v = cvt_lookup(c, n->inputs[k]);
        if (!v || !v->is_const || (!v->f && !v->i)) return false;
        total += v->numel;
        any = true;
    }
    for (size_t k = 0; k < n->n_attrs; k++)
        if (n->attrs[k].type == TOSAC_ONNX_ATTR_GRAPH || n->attrs[k].type == TOSAC_ONNX_ATTR_GRAPHS) return false;
    return any && total <= FOLD_MAX_ELEMS;
}

static void unlink_val(cvt_ctx *c, cvt_val *v)
{
    for (cvt_val **p = &c->hash[hash_str(v->name) % 1024]; *p; p = &(*p)->next)
        if (*p == v) {
            *p = v->next;
            return;
        }
}

/* Runs the scratch block `b` and turns the outputs vals[0..n) (tensors of b) into host constants;
   false when it cannot (nothing changed then). */
static bool eval_scratch(cvt_ctx *c, tosac_graph *g, tosac_block *b, cvt_val **vals, size_t n)
{
    int64_t total = 0;
    for (size_t k = 0; k < n; k++) {
        total += vals[k]->numel;
        bool dup = false;
        for (size_t j = 0; j < k; j++) dup |= vals[j]->v == vals[k]->v;
        if (!dup && tosac_block_add_output(b, vals[k]->v) != TOSAC_OK) return false;
    }
    if (total > FOLD_MAX_ELEMS) return false;
    tosac_graph_link(g);
    tosac_diag *d = tosac_diag_create();
    tosac_program *p = NULL;
    tosac_program_opts po = tosac_program_opts_default();
    bool ok = d && tosac_program_create(g, &po, &p, d) == TOSAC_OK && tosac_program_invoke(p, d) == TOSAC_OK;
    void **data = tosac_arena_alloc(&c->arena, n * sizeof *data + 1);
    ok = ok && data;
    for (size_t k = 0; ok && k < n; k++) {
        cvt_val *v = vals[k];
        int32_t i = tosac_program_output_index(p, v->v->name);
        size_t esz = v->dt == TOSAC_DTYPE_BOOL ? 1 : 4, len = 0;
        uint8_t *buf = tosac_arena_alloc(&c->arena, (size_t)v->numel * esz + 1);
        ok = i >= 0 && buf &&
             tosac_program_get_output_tosa(p, (uint32_t)i, buf, (size_t)v->numel * esz, &len) == TOSAC_OK &&
             len == (size_t)v->numel * esz;
        data[k] = buf;
    }
    for (size_t k = 0; ok && k < n; k++) {
        cvt_val *v = vals[k];
        const float *f = NULL;
        int64_t *iv = NULL;
        if (cvt_decode(c, v->dt == TOSAC_DTYPE_FP32 ? TOSAC_ONNX_FLOAT : v->dt == TOSAC_DTYPE_BOOL ? TOSAC_ONNX_BOOL
                                                                                                    : TOSAC_ONNX_INT32,
                       data[k], v->numel, &f, &iv) != TOSAC_OK) {
            ok = false;
            break;
        }
        v->f = f;
        v->i = iv;
    }
    if (ok)
        for (size_t k = 0; k < n; k++) {
            vals[k]->v = NULL;
            vals[k]->is_const = true;
        }
    tosac_program_destroy(p);
    tosac_diag_destroy(d);
    return ok;
}

/* Converts node n, whose inputs are all host constants, into a scratch graph and evaluates what it
   emits with the runtime, so that its outputs become host constants too (shape arithmetic written
   with ordinary ONNX ops, e.g. Sub on a Shape, folds like Shape itself). *done is false when the
   node must be converted normally instead (nothing has changed then). */
static tosac_status fold_node(cvt_ctx *c, const cvt_entry *e, const tosac_onnx_node *n, bool *done)
{
    *done = false;
    tosac_graph *g = tosac_graph_create();
    tosac_region *r = g ? tosac_graph_add_region(g, "main") : NULL;
    tosac_block *b = r ? tosac_region_add_block(r, "main") : NULL;
    tosac_value **saved = tosac_arena_alloc(&c->arena, n->n_inputs * sizeof *saved + 1);
    if (!b || !saved) {
        tosac_graph_destroy(g);
        return TOSAC_OK;
    }
    /* the inputs are seen as host data only; what the converter materialises lives in the scratch */
    for (size_t k = 0; k < n->n_inputs; k++) {
        cvt_val *v = n->inputs[k][0] ? cvt_lookup(c, n->inputs[k]) : NULL;
        saved[k] = v ? v->v : NULL;
        if (v) v->v = NULL;
    }
    tosac_block *main_b = c->b;
    c->b = b;
    tosac_status s = e->fn(c);
    c->b = main_b;
    for (size_t k = n->n_inputs; k-- > 0;)
        if (n->inputs[k][0]) cvt_lookup(c, n->inputs[k])->v = saved[k];
    if (s != TOSAC_OK) {
        tosac_graph_destroy(g);
        *done = true;
        return s;
    }
    cvt_val **vals = tosac_arena_alloc(&c->arena, n->n_outputs * sizeof *vals + 1);
    size_t nv = 0;
    bool ok = vals != NULL;
    for (size_t k = 0; ok && k < n->n_outputs; k++) {
        cvt_val *v = n->outputs[k][0] ? cvt_lookup(c, n->outputs[k]) : NULL;
        if (!v || !v->v) continue;
        ok = v->v->block == b && v->dt != TOSAC_DTYPE_UNKNOWN;
        vals[nv++] = v;
    }
    if (ok && (nv == 0 || eval_scratch(c, g, b, vals, nv))) {
        tosac_graph_destroy(g);
        *done = true;
        return TOSAC_OK;
    }
    /* not evaluable: forget the outputs, the caller converts the node into the graph */
    for (size_t k = 0; k < n->n_outputs; k++) {
        cvt_val *v = n->outputs[k][0] ? cvt_lookup(c, n->outputs[k]) : NULL;
        if (v) unlink_val(c, v);
    }
    tosac_graph_destroy(g);
    return TOSAC_OK;
}

/* The node's input or output list (what: "input" / "output") against the row's counts: the
   required positions present and named, no more positions than the operator has. */
static tosac_status check_arity(cvt_ctx *c, const char *what, const char *const *names, size_t n, size_t lo, size_t hi)
{
    if (n < lo || n > hi) {
        if (lo == hi) return cvt_fail(c, TOSAC_ERR_FORMAT, "needs %zu %s%s, has %zu", lo, what, lo == 1 ? "" : "s", n);
        if (n < lo)
            return cvt_fail(c, TOSAC_ERR_FORMAT, "needs at least %zu %s%s, has %zu", lo, what, lo == 1 ? "" : "s", n);
        return cvt_fail(c, TOSAC_ERR_FORMAT, "needs at most %zu %ss, has %zu", hi, what, n);
    }
    for (size_t k = 0; k < lo; k++)
        if (!names[k][0]) return cvt_fail(c, TOSAC_ERR_FORMAT, "%s %zu is required but its name is empty", what, k);
    return TOSAC_OK;
}

static tosac_status convert_node(cvt_ctx *c, const tosac_onnx_node *n)
{
    c->node = n;
    const cvt_entry *e = NULL;
    bool known = false;
    if (!n->domain[0])
        for (size_t k = 0; k < N_CONVERTERS; k++)
            if (!strcmp(k_converters[k].op_type, n->op_type)) {
                known = true;
                if (c->opset >= k_converters[k].lo && c->opset <= k_converters[k].hi) e = &k_converters[k];
            }
    if (!e) {
        if (n->domain[0])
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "no converter for domain '%s'", n->domain);
        return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "no converter for opset %lld%s", (long long)c->opset,
                        known ? "" : " (op type not supported)");
    }
    tosac_status s = check_arity(c, "input", n->inputs, n->n_inputs, e->min_in, e->max_in);
    if (s == TOSAC_OK) s = check_arity(c, "output", n->outputs, n->n_outputs, e->min_out, e->max_out);
    if (s != TOSAC_OK) return s;
    if (strcmp(n->op_type, "DequantizeLinear"))
        for (size_t k = 0; k < n->n_inputs; k++) {
            const cvt_val *v = n->inputs[k][0] ? cvt_lookup(c, n->inputs[k]) : NULL;
            if (v && v->codes)
                return cvt_fail(c, TOSAC_ERR_UNSUPPORTED,
                                "input '%s' is QuantizeLinear output, which only DequantizeLinear may read here",
                                v->name);
        }
    bool done = false;
    uint32_t first = c->b->n_tensors;
    s = foldable(c, n) ? fold_node(c, e, n, &done) : TOSAC_OK;
    if (!done && s == TOSAC_OK) s = e->fn(c);
    if (c->bad_attr) return report_bad_attr(c);
    if (s != TOSAC_OK) {
        if (tosac_diag_count(c->d) == 0 && c->d) cvt_fail(c, s, "conversion failed (%s)", tosac_status_str(s));
        return s;
    }
    for (uint32_t k = first; k < c->b->n_tensors; k++)
        if (c->b->tensors[k]->rank > CVT_MAX_RANK)
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "needs a tensor of rank %d (TOSA level 8K allows at most %d)",
                            (int)c->b->tensors[k]->rank, CVT_MAX_RANK);
    for (size_t k = 0; k < n->n_outputs; k++)
        if (n->outputs[k][0] && !cvt_lookup(c, n->outputs[k]))
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "output %zu ('%s') is not produced by the converter", k,
                            n->outputs[k]);
    return TOSAC_OK;
}

static tosac_status convert_graph(cvt_ctx *c, const tosac_compile_opts *o)
{
    const tosac_onnx_graph *g = c->m->graph;
    tosac_status s;
    for (size_t k = 0; k < o->n_bindings; k++) {
        bool found = false;
        for (size_t j = 0; j < g->n_inputs; j++) found |= !strcmp(g->inputs[j].name, o->bindings[k].name);
        if (!found)
            return cvt_fail(c, TOSAC_ERR_INVALID_ARG, "--bind %s: the model has no graph input of that name",
                            o->bindings[k].name);
    }
    for (size_t k = 0; k < o->n_shapes; k++) {
        bool found = false;
        for (size_t j = 0; j < g->n_inputs; j++) found |= !strcmp(g->inputs[j].name, o->shapes[k].name);
        if (!found)
            return cvt_fail(c, TOSAC_ERR_INVALID_ARG, "--input-shape %s: the model has no graph input of that name",
                            o->shapes[k].name);
    }
    for (size_t k = 0; k < g->n_initializers; k++) {
        const tosac_onnx_tensor *t = &g->initializers[k];
        if (t->rank > TOSAC_MAX_RANK) return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "initializer '%s': rank too large", t->name);
        if ((s = add_const_val(c, t->name, t->elem_type, (int)t->rank, t->dims, t->data)) != TOSAC_OK) return s;
    }
    for (size_t k = 0; k < g->n_inputs; k++)
        if ((s = add_graph_input(c, &g->inputs[k], o)) != TOSAC_OK) return s;
    for (size_t k = 0; k < g->n_nodes; k++)
        if ((s = convert_node(c, &g->nodes[k])) != TOSAC_OK) return s;
    c->node = NULL;
    if ((s = narrow_outputs(c, g)) != TOSAC_OK) return s;
    tosac_graph_link(c->g);
    for (size_t k = 0; k < g->n_outputs; k++) {
        const char *name = g->outputs[k].name;
        cvt_val *v = cvt_lookup(c, name);
        if (!v) return cvt_fail(c, TOSAC_ERR_FORMAT, "graph output '%s' is not produced", name);
        if (v->codes)
            return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "graph output '%s' is quantized data (QuantizeLinear output)", name);
        tosac_value *src = cvt_tensor(c, v, &s);
        if (!src) return s;
        /* An operator result takes the output's name; a graph input, a constant or a value already
           in an earlier slot gets its own tensor through an IDENTITY (the output-fanout pass then
           applies the one-tensor-per-slot rule to the final graph). */
        bool reuse = src->producer && src->producer->op != TOSAC_OP_CONST && src->producer->op != TOSAC_OP_CONST_SHAPE;
        for (uint32_t j = 0; j < c->b->n_outputs; j++) reuse &= c->b->outputs[j] != src;
        for (uint32_t j = 0; j < c->b->n_inputs; j++) reuse &= c->b->inputs[j] != src;
        tosac_value *out = src;
        if (reuse) {
            tosac_value *clash = tosac_block_find(c->b, name);
            if (clash && clash != src) return cvt_fail(c, TOSAC_ERR_FORMAT, "graph output '%s': name already used", name);
            if ((s = ir_rename(c->b, src, name)) != TOSAC_OK) return s == TOSAC_ERR_NOMEM ? cvt_nomem(c) : s;
        } else {
            if (!strcmp(src->name, name)) /* a graph input used as output: copy under a new name is impossible */
                return cvt_fail(c, TOSAC_ERR_UNSUPPORTED, "graph output '%s' is a graph input", name);
            out = tosac_block_add_tensor(c->b, name, src->dtype, src->rank, src->shape);
            if (!out || !cvt_op(c, TOSAC_OP_IDENTITY, 1, &src, out)) return cvt_nomem(c);
        }
        if (tosac_block_add_output(c->b, out) != TOSAC_OK) return cvt_nomem(c);
    }
    return TOSAC_OK;
}

tosac_status cvt_import(const tosac_onnx_model *m, const tosac_compile_opts *o, tosac_graph **out, tosac_diag *d)
{
    if (m->graph->n_outputs == 0)
        return tosac_diag_add(d, TOSAC_ERR_FORMAT, "graph '%s' has no outputs: there is nothing to compute",
                              m->graph->name ? m->graph->name : "");
    cvt_ctx *c = tosac_calloc(1, sizeof *c);
    if (!c) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    tosac_arena_init(&c->arena);
    c->m = m;
    c->d = d;
    c->opts = o;
    c->opset = m->opset;
    c->g = tosac_graph_create();
    tosac_region *r = c->g ? tosac_graph_add_region(c->g, "main") : NULL;
    c->b = r ? tosac_region_add_block(r, "main") : NULL;
    tosac_status s = c->b ? convert_graph(c, o) : tosac_diag_add(d, TOSAC_ERR_NOMEM, "out of memory");
    if (s == TOSAC_OK) {
        tosac_graph_link(c->g);
        *out = c->g;
    } else {
        tosac_graph_destroy(c->g);
    }
    tosac_arena_deinit(&c->arena);
    tosac_free(c, sizeof *c);
    return s;
}
