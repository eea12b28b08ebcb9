/*
 * Static validation of a TOSA graph: the generic rules (graph structure, names, topological order,
 * operand counts and kinds, type-support rows with profiles/extensions, acc_type, rank/size/list
 * levels, control-flow references) and the dispatch to the per-family checks of check_*.c.
 *
 * Every message names where the problem is and which rule failed:
 *   "block 'main' op 3 (CONV2D) [x, w, b, izp, wzp -> y]: input_zp must be 0 for INT16 input"
 * ERROR_IF-class findings are reported with TOSAC_ERR_TOSA_ERROR, level findings with
 * TOSAC_ERR_UNPREDICTABLE and informational notes (dead operators) with TOSAC_OK.
 *
 * The validator must survive hostile IR: any operand may be NULL, undeclared, from another block or
 * of any rank; names may repeat; control flow may reference itself. All per-value bookkeeping lives
 * in arrays indexed by the value's position in its block, verified before use.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/encoding.h"
#include "core/strbuf.h"
#include "tosa/check.h"

#define PREFIX_MAX 512
#define MSG_MAX 2048
/* Control-flow recursion deeper than this is not followed (blocks left over are validated by the
   final sweep); it is above the largest MAX_NESTING (256) so the level check fires first. */
#define MAX_CF_DEPTH 300

/* ------------------------------------------------------------------------------------------ */
/* Options and level limits                                                                      */

tosac_validate_opts tosac_validate_opts_default(void)
{
    tosac_validate_opts o;
    o.profiles = TOSAC_PROFILE_INT | TOSAC_PROFILE_FP;
    /* EXT-DYNAMIC lifts the compile-time-constant rules; it must be asked for by name */
    o.extensions = TOSAC_EXT_ALL & ~(uint32_t)TOSAC_EXT_DYNAMIC;
    o.level = TOSAC_LEVEL_8K;
    return o;
}

static tosac_level_limits level_limits(tosac_level level)
{
    tosac_level_limits l;
    if (level == TOSAC_LEVEL_8K) {
        l.max_rank = 6;
        l.max_kernel = 8192;
        l.max_stride = 8192;
        l.max_scale = 256;
        l.max_log2_size = 31;
        l.max_nesting = 6;
        l.max_tensor_list = 64;
    } else {
        l.max_rank = 32;
        l.max_kernel = 2147483647;
        l.max_stride = 2147483647;
        l.max_scale = 2048;
        l.max_log2_size = 63;
        l.max_nesting = 256;
        l.max_tensor_list = 256;
    }
    return l;
}

/* ------------------------------------------------------------------------------------------ */
/* Message formatting                                                                            */

const char *tosac_nm(const char *s) { return s ? s : "(null)"; }

static void block_label(const tosac_graph *g, const tosac_block *b, char *buf, size_t size, size_t *len)
{
    if (!b) {
        tosac_fixbuf_appendf(buf, size, len, "graph");
        return;
    }
    if (g && g->n_regions > 0 && b->region && b->region != g->regions[0])
        tosac_fixbuf_appendf(buf, size, len, "region '%s' block '%s'", tosac_nm(b->region->name), tosac_nm(b->name));
    else
        tosac_fixbuf_appendf(buf, size, len, "block '%s'", tosac_nm(b->name));
}

static void value_list(char *buf, size_t size, size_t *len, tosac_value *const *vals, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        const tosac_value *v = vals ? vals[i] : NULL;
        tosac_fixbuf_appendf(buf, size, len, "%s%s", i ? ", " : "", v ? tosac_nm(v->name) : "(null)");
        if (*len + 1 >= size) return;
    }
}

static void ctx_prefix(const tosac_check_ctx *c, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    block_label(c->graph, c->block, buf, size, &len);
    const tosac_node *n = c->node;
    if (n) {
        tosac_fixbuf_appendf(buf, size, &len, " op %u (%s) [", (unsigned)n->index, tosac_op_name(n->op));
        value_list(buf, size, &len, n->inputs, n->inputs ? n->n_inputs : 0);
        tosac_fixbuf_appendf(buf, size, &len, "%s", n->n_inputs ? " -> " : "-> ");
        value_list(buf, size, &len, n->outputs, n->outputs ? n->n_outputs : 0);
        tosac_fixbuf_appendf(buf, size, &len, "]");
    }
}

static void ctx_vreport(tosac_check_ctx *c, tosac_status code, const char *fmt, va_list ap)
{
    char pre[PREFIX_MAX], msg[MSG_MAX];
    ctx_prefix(c, pre, sizeof pre);
    vsnprintf(msg, sizeof msg, fmt, ap);
    tosac_diag_add(c->diag, code, "%s: %s", pre, msg);
}

void tosac_check_error(tosac_check_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ctx_vreport(c, TOSAC_ERR_TOSA_ERROR, fmt, ap);
    va_end(ap);
    c->n_errors++;
}

void tosac_check_level(tosac_check_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ctx_vreport(c, TOSAC_ERR_UNPREDICTABLE, fmt, ap);
    va_end(ap);
    c->n_level++;
}

static void check_note(tosac_check_ctx *c, const char *fmt, ...) TOSAC_PRINTF(2, 3);
static void check_note(tosac_check_ctx *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ctx_vreport(c, TOSAC_OK, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------------------------------ */
/* Helpers shared with the family checks (check.h)                                               */

const tosac_value *tosac_check_in(const tosac_check_ctx *c, uint32_t i)
{
    if (!c || !c->node || !c->node->inputs || i >= c->node->n_inputs) return NULL;
    const tosac_value *v = c->node->inputs[i];
    return v && v->declared ? v : NULL;
}

const tosac_value *tosac_check_out(const tosac_check_ctx *c, uint32_t i)
{
    if (!c || !c->node || !c->node->outputs || i >= c->node->n_outputs) return NULL;
    const tosac_value *v = c->node->outputs[i];
    return v && v->declared ? v : NULL;
}

int64_t tosac_check_attr_int(const tosac_check_ctx *c, unsigned id, int64_t def)
{
    if (!c || !c->node || id >= TOSAC_ATTR_MAX_FIELDS || !c->node->attr[id].present) return def;
    return c->node->attr[id].i;
}

const int32_t *tosac_check_attr_ints(const tosac_check_ctx *c, unsigned id, uint32_t *count)
{
    *count = 0;
    if (!c || !c->node || id >= TOSAC_ATTR_MAX_FIELDS) return NULL;
    const tosac_attr_val *a = &c->node->attr[id];
    if (tosac_op_attr_kind(c->node->op, id) != TOSAC_AK_I32V) return NULL;
    if (!a->present || !a->data || a->len == 0) return NULL;
    *count = a->len;
    return (const int32_t *)a->data;
}

int64_t tosac_check_nelem(const tosac_value *v)
{
    if (!tosac_rank_ok(v)) return -1;
    int64_t n = 1;
    for (int32_t i = 0; i < v->rank; i++) {
        int64_t d = v->shape[i];
        if (d < 0) return -1;
        if (d != 0 && n > INT64_MAX / d) return -1;
        n *= d;
    }
    return n;
}

bool tosac_same_shape(const tosac_value *a, const tosac_value *b)
{
    if (!a || !b || a->rank != b->rank || a->rank < 0) return false;
    if (a->rank == 0) return true;
    if (!a->shape || !b->shape) return false;
    for (int32_t i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i]) return false;
    return true;
}

const char *tosac_dims_str(const int64_t *d, int32_t n, bool mark_unk, char *buf, size_t size)
{
    if (!buf || size == 0) return "";
    size_t len = 0;
    buf[0] = '\0';
    tosac_fixbuf_appendf(buf, size, &len, "[");
    for (int32_t i = 0; i < n; i++) {
        if (mark_unk && d[i] == TOSAC_DIM_UNK)
            tosac_fixbuf_appendf(buf, size, &len, "%s?", i ? "," : "");
        else
            tosac_fixbuf_appendf(buf, size, &len, "%s%lld", i ? "," : "", (long long)d[i]);
    }
    tosac_fixbuf_appendf(buf, size, &len, "]");
    return buf;
}

const char *tosac_shape_str(const tosac_value *v, char *buf, size_t size)
{
    if (!buf || size == 0) return "";
    if (!v || v->rank < 0 || (v->rank > 0 && !v->shape)) {
        size_t len = 0;
        buf[0] = '\0';
        tosac_fixbuf_appendf(buf, size, &len, "?");
        return buf;
    }
    return tosac_dims_str(v->shape, v->rank, false, buf, size);
}

int64_t tosac_dim(const tosac_value *v, int i)
{
    if (!v || !v->shape || i < 0 || i >= v->rank) return TOSAC_DIM_UNK;
    return v->shape[i];
}

bool tosac_rank_ok(const tosac_value *v)
{
    return v && v->rank >= 0 && v->rank <= TOSAC_MAX_RANK && (v->rank == 0 || v->shape);
}

bool tosac_checked_add(int64_t a, int64_t b, int64_t *r)
{
    if ((b > 0 && a > INT64_MAX - b) || (b < 0 && a < INT64_MIN - b)) return false;
    *r = a + b;
    return true;
}

bool tosac_checked_sub(int64_t a, int64_t b, int64_t *r)
{
    if ((b < 0 && a > INT64_MAX + b) || (b > 0 && a < INT64_MIN + b)) return false;
    *r = a - b;
    return true;
}

bool tosac_checked_mul(int64_t a, int64_t b, int64_t *r)
{
    if (a == 0 || b == 0) {
        *r = 0;
        return true;
    }
    if (a > 0) {
        if (b > 0 ? a > INT64_MAX / b : b < INT64_MIN / a) return false;
    } else {
        if (b > 0 ? a < INT64_MIN / b : b < INT64_MAX / a) return false;
    }
    *r = a * b;
    return true;
}

int tosac_fp_const_is_zero(const tosac_value *v, uint32_t *bits)
{
    unsigned bytes = tosac_dtype_bits(v->dtype) / 8;
    if (!v->data || bytes == 0 || bytes > 4 || v->data_len < bytes) return -1;
    uint32_t b = 0;
    for (unsigned k = 0; k < bytes; k++) b |= (uint32_t)v->data[k] << (8 * k);
    if (bits) *bits = b;
    return (b & ~(1u << (8 * bytes - 1))) == 0;
}

const char *tosac_check_level_name(const tosac_check_ctx *c)
{
    if (!c->opts) return "?";
    return c->opts->level == TOSAC_LEVEL_8K ? "8K" : "none";
}

bool tosac_check_need_rank(tosac_check_ctx *c, const tosac_value *v, const char *what, int32_t rank,
                           const char *layout)
{
    if (!v) return false;
    if (v->rank != rank) {
        tosac_check_error(c, "%s must have rank %d %s, has rank %d", what, (int)rank, layout, (int)v->rank);
        return false;
    }
    return rank == 0 || v->shape != NULL;
}

bool tosac_check_shape_one(tosac_check_ctx *c, const tosac_value *v, const char *what, bool show_name)
{
    if (!v) return false;
    if (v->rank == 1 && v->shape && v->shape[0] == 1) return true;
    char buf[192];
    if (show_name)
        tosac_check_error(c, "%s '%s' must have shape [1] (exactly one element), has shape %s", what,
                          tosac_nm(v->name), tosac_shape_str(v, buf, sizeof buf));
    else
        tosac_check_error(c, "%s must have shape [1] (exactly one element), has shape %s", what,
                          tosac_shape_str(v, buf, sizeof buf));
    return false;
}

void tosac_check_same_shape(tosac_check_ctx *c, const tosac_value *in, const tosac_value *out, const char *in_name)
{
    if (!in || !out || tosac_same_shape(in, out)) return;
    char a[192], b[192];
    tosac_check_error(c, "output shape %s must equal the %s shape %s", tosac_shape_str(out, a, sizeof a), in_name,
                      tosac_shape_str(in, b, sizeof b));
}

void tosac_check_nan_mode(tosac_check_ctx *c, unsigned id, bool classify)
{
    int64_t m = tosac_check_attr_int(c, id, TOSAC_NAN_UNKNOWN);
    if (m == TOSAC_NAN_PROPAGATE || m == TOSAC_NAN_IGNORE) return;
    if (classify)
        tosac_check_error(c, "nan_mode %s (%lld) is not a valid NaN propagation mode (PROPAGATE or IGNORE)",
                          m == TOSAC_NAN_UNKNOWN ? "UNKNOWN" : "out of range", (long long)m);
    else
        tosac_check_error(c, "nan_mode %lld is not a valid NaN propagation mode (PROPAGATE 1 or IGNORE 2)",
                          (long long)m);
}

bool tosac_const_get_i64(const tosac_value *v, int64_t idx, int64_t *out)
{
    if (!v || !out || !v->data || idx < 0) return false;
    int64_t n = tosac_check_nelem(v);
    if (n < 0 || idx >= n) return false;
    return tosac_encoded_int(v->dtype, v->data, v->data_len, (uint64_t)idx, out);
}

/* ------------------------------------------------------------------------------------------ */
/* Validation state                                                                              */

typedef struct name_ix {
    const char *name;
    uint32_t group; /* region index for block names, 0 for region names */
    uint32_t idx;
} name_ix;

typedef struct vstate {
    tosac_check_ctx c;
    const tosac_graph *g;
    uint8_t *bstate;   /* per block (global index): 0 unvisited, 1 being validated, 2 done */
    uint32_t *roff;    /* global index of region r's first block */
    name_ix *rnames;   /* regions sorted by (name, index) */
    name_ix *bnames;   /* blocks sorted by (region, name, index) */
    uint32_t nblocks;
    bool oom;
} vstate;

enum { BS_NEW = 0, BS_ACTIVE = 1, BS_DONE = 2 };

static int cmp_name_ix(const void *pa, const void *pb)
{
    const name_ix *a = pa, *b = pb;
    if (a->group != b->group) return a->group < b->group ? -1 : 1;
    int r = strcmp(tosac_nm(a->name), tosac_nm(b->name));
    if (r) return r;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* First entry with (group, name) in a sorted array, or NULL. */
static const name_ix *find_ix(const name_ix *arr, uint32_t n, uint32_t group, const char *name)
{
    uint32_t lo = 0, hi = n;
    name_ix key = {name, group, 0};
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (cmp_name_ix(&arr[mid], &key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < n && arr[lo].group == group && !strcmp(tosac_nm(arr[lo].name), name)) return &arr[lo];
    return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Per-block value bookkeeping                                                                   */

enum { VF_CONSUMED = 1, VF_BLOCK_IN = 2, VF_BLOCK_OUT = 4 };

/*
 * A block being validated. Control-flow sub-blocks see the values of the blocks that (directly or
 * indirectly) invoke them: the reference serializer lets a WHILE_LOOP body name a constant of the
 * enclosing block without declaring it (the reader keeps such names as undeclared placeholders),
 * so `parent` links the chain and `cur` is the operator being validated in each block.
 */
typedef struct bctx {
    const tosac_block *b;
    uint32_t ri, bi;
    size_t nvals;
    int64_t *prod;  /* producing node index, -1 if none */
    uint8_t *flags; /* VF_* */
    struct bctx *parent;
    int64_t cur;
} bctx;

/* Index of v in the block's value arrays (tensors, then shapes, then undeclared), or -1 when v is
   NULL or not one of this block's values. */
static int64_t vidx(const tosac_block *b, const tosac_value *v)
{
    if (!v || v->block != b) return -1;
    size_t nt = b->n_tensors, ns = b->n_shapes;
    if (!v->declared) {
        if (v->index < b->n_undeclared && b->undeclared && b->undeclared[v->index] == v)
            return (int64_t)(nt + ns + v->index);
        return -1;
    }
    if (v->is_shape) {
        if (v->index < b->n_shapes && b->shapes && b->shapes[v->index] == v) return (int64_t)(nt + v->index);
        return -1;
    }
    if (v->index < b->n_tensors && b->tensors && b->tensors[v->index] == v) return (int64_t)v->index;
    return -1;
}

/* The block context (bc itself or an enclosing one) that owns v, with v's index there. */
static bctx *owner_of(bctx *bc, const tosac_value *v, int64_t *k)
{
    for (bctx *p = bc; p; p = p->parent) {
        *k = vidx(p->b, v);
        if (*k >= 0) return p;
    }
    return NULL;
}

/* A declared value of an enclosing block named like the undeclared placeholder v. */
static tosac_value *outer_value(const bctx *bc, const tosac_value *v)
{
    if (!v || v->declared || !v->name) return NULL;
    for (const bctx *p = bc->parent; p; p = p->parent) {
        tosac_value *o = tosac_block_find(p->b, v->name);
        if (o && o->declared) return o;
    }
    return NULL;
}

/* ------------------------------------------------------------------------------------------ */
/* Graph-level and block-level structure                                                         */

static void check_version(vstate *s)
{
    const tosac_graph *g = s->g;
    bool ok = g->ver_major == 1 && (g->ver_minor == 0 || (g->ver_minor == 1 && g->ver_draft));
    if (!ok) {
        s->c.block = NULL;
        s->c.node = NULL;
        tosac_check_error(&s->c,
                          "unsupported TOSA version %d.%d.%d%s (accepted: 1.0.x and 1.1.x drafts)",
                          (int)g->ver_major, (int)g->ver_minor, (int)g->ver_patch, g->ver_draft ? " draft" : "");
    } else if (g->ver_minor != 0 || g->ver_draft) {
        tosac_diag_add(s->c.diag, TOSAC_OK, "file declares TOSA %d.%d.%d%s; it is checked against the 1.0 rules",
                       (int)g->ver_major, (int)g->ver_minor, (int)g->ver_patch, g->ver_draft ? " (draft)" : "");
    }
}

/* Builds the region/block indexes and reports empty or duplicate region and block names. */
static bool build_indexes(vstate *s)
{
    const tosac_graph *g = s->g;
    s->c.block = NULL;
    s->c.node = NULL;
    size_t total = 0;
    for (uint32_t r = 0; r < g->n_regions; r++) {
        const tosac_region *reg = g->regions[r];
        total += reg ? reg->n_blocks : 0;
    }
    if (total > UINT32_MAX - 1) return false;
    s->nblocks = (uint32_t)total;
    s->roff = tosac_calloc(g->n_regions + 1u, sizeof(uint32_t));
    s->bstate = tosac_calloc(total + 1, 1);
    s->rnames = tosac_calloc(g->n_regions + 1u, sizeof(name_ix));
    s->bnames = tosac_calloc(total + 1, sizeof(name_ix));
    if (!s->roff || !s->bstate || !s->rnames || !s->bnames) return false;
    uint32_t k = 0;
    for (uint32_t r = 0; r < g->n_regions; r++) {
        const tosac_region *reg = g->regions[r];
        s->roff[r] = k;
        s->rnames[r] = (name_ix){reg ? reg->name : NULL, 0, r};
        for (uint32_t bi = 0; reg && bi < reg->n_blocks; bi++, k++)
            s->bnames[k] = (name_ix){reg->blocks[bi] ? reg->blocks[bi]->name : NULL, r, bi};
    }
    qsort(s->rnames, g->n_regions, sizeof(name_ix), cmp_name_ix);
    qsort(s->bnames, total, sizeof(name_ix), cmp_name_ix);
    for (uint32_t r = 0; r < g->n_regions; r++) {
        const name_ix *a = &s->rnames[r];
        if (!a->name || !a->name[0])
            tosac_check_error(&s->c, "region %u has an empty name", (unsigned)a->idx);
        else if (r > 0 && !strcmp(tosac_nm(s->rnames[r - 1].name), a->name))
            tosac_check_error(&s->c, "region name '%s' is used by regions %u and %u (region names must be unique)",
                              a->name, (unsigned)s->rnames[r - 1].idx, (unsigned)a->idx);
    }
    for (uint32_t i = 0; i < total; i++) {
        const name_ix *a = &s->bnames[i];
        const tosac_region *reg = g->regions[a->group];
        if (!a->name || !a->name[0])
            tosac_check_error(&s->c, "region '%s' block %u has an empty name", tosac_nm(reg->name), (unsigned)a->idx);
        else if (i > 0 && s->bnames[i - 1].group == a->group && !strcmp(tosac_nm(s->bnames[i - 1].name), a->name))
            tosac_check_error(&s->c,
                              "region '%s' has two blocks named '%s' (blocks %u and %u; block names must be "
                              "unique within a region)",
                              tosac_nm(reg->name), a->name, (unsigned)s->bnames[i - 1].idx, (unsigned)a->idx);
    }
    return true;
}

/* Presence and name of declaration i (`what`: "tensor" or "shape value"); false when missing. */
static bool check_decl_name(tosac_check_ctx *c, const tosac_block *b, const tosac_value *v, uint32_t i,
                            const char *what)
{
    if (!v) {
        tosac_check_error(c, "%s %u is missing", what, (unsigned)i);
        return false;
    }
    if (!v->name || !v->name[0])
        tosac_check_error(c, "%s %u has an empty name", what, (unsigned)i);
    else if (tosac_block_find(b, v->name) != v)
        tosac_check_error(c, "tensor or shape name '%s' is declared more than once", v->name);
    return true;
}

/* Declarations: names, element types, ranks and dims of every tensor and shape value. */
static void check_declarations(vstate *s, const tosac_block *b)
{
    tosac_check_ctx *c = &s->c;
    for (uint32_t i = 0; i < b->n_tensors; i++) {
        const tosac_value *v = b->tensors[i];
        if (!check_decl_name(c, b, v, i, "tensor")) continue;
        if (!tosac_dtype_valid((uint32_t)v->dtype))
            tosac_check_error(c, "tensor '%s' has no valid element type (DType %d)", tosac_nm(v->name), (int)v->dtype);
        if (v->is_unranked) {
            tosac_check_error(c, "tensor '%s' is unranked; unranked tensors are not supported by TOSA 1.0 static graphs",
                              tosac_nm(v->name));
            continue;
        }
        if (!tosac_rank_ok(v)) {
            tosac_check_error(c, "tensor '%s' has an invalid rank %d", tosac_nm(v->name), (int)v->rank);
            continue;
        }
        for (int32_t d = 0; d < v->rank; d++)
            if (v->shape[d] < 1)
                tosac_check_error(c, "dimension %d of '%s' is %lld (dimensions must be >= 1)", (int)d,
                                  tosac_nm(v->name), (long long)v->shape[d]);
    }
    for (uint32_t i = 0; i < b->n_shapes; i++) {
        const tosac_value *v = b->shapes[i];
        if (!check_decl_name(c, b, v, i, "shape value")) continue;
        if (v->rank != 1 || !v->shape || v->shape[0] < 0)
            tosac_check_error(c, "shape value '%s' has an invalid element count", tosac_nm(v->name));
    }
}

/* Level rules on the tensors that are operands or results (used) of the block. */
static void check_value_levels(vstate *s, const bctx *bc)
{
    tosac_check_ctx *c = &s->c;
    const tosac_block *b = bc->b;
    for (uint32_t i = 0; i < b->n_tensors; i++) {
        const tosac_value *v = b->tensors[i];
        if (!v || (!bc->flags[i] && bc->prod[i] < 0) || v->is_unranked) continue;
        /* ERROR, not the UNPREDICTABLE of a LEVEL_CHECK: the official conformance suite's WrongRank
           tests (rank-7 operands at level 8K) expect it, the reference model failing graph load for
           ranks its operators are not defined for (docs/CONFORMANCE.md, "Readings of the spec") */
        if (v->rank > c->lim.max_rank)
            tosac_check_error(c, "tensor '%s' has rank %d > MAX_RANK %lld", tosac_nm(v->name), (int)v->rank,
                              (long long)c->lim.max_rank);
        int64_t n = tosac_check_nelem(v);
        unsigned bits = tosac_dtype_bits(v->dtype);
        if (bits == 0) continue;
        uint64_t elem = bits < 8 ? 1 : bits / 8;
        bool too_big;
        if (n < 0) {
            too_big = v->rank <= TOSAC_MAX_RANK && v->shape != NULL; /* element count overflows int64 */
            for (int32_t d = 0; too_big && d < v->rank; d++)
                if (v->shape[d] < 0) too_big = false;
        } else if (c->lim.max_log2_size >= 64) {
            too_big = false;
        } else {
            uint64_t limit = (uint64_t)1 << c->lim.max_log2_size;
            too_big = (uint64_t)n > (limit - 1) / elem;
        }
        if (too_big)
            tosac_check_level(c, "tensor '%s' (%s) occupies 2^%lld bytes or more (tensor size must be < 2^MAX_LOG2_SIZE)",
                              tosac_nm(v->name), tosac_dtype_name(v->dtype), (long long)c->lim.max_log2_size);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Type-support rows                                                                             */

static const tosac_operand_desc *in_desc(const tosac_op_info *info, uint32_t i)
{
    if (info->n_inputs == 0) return NULL;
    if (info->input_list && i + 1 >= info->n_inputs) return &info->inputs[info->n_inputs - 1];
    return i < info->n_inputs ? &info->inputs[i] : NULL;
}

static const tosac_operand_desc *out_desc(const tosac_op_info *info, uint32_t i)
{
    if (info->n_outputs == 0) return NULL;
    if (info->output_list && i + 1 >= info->n_outputs) return &info->outputs[info->n_outputs - 1];
    return i < info->n_outputs ? &info->outputs[i] : NULL;
}

/* Element type that operand descriptor `d` requires under `row`; UNKNOWN = any. */
static tosac_dtype want_dtype(const tosac_check_ctx *c, const tosac_type_row *row, const tosac_operand_desc *d)
{
    if (d->kind == TOSAC_OPND_SHAPE) return TOSAC_DTYPE_UNKNOWN;
    switch (d->tv) {
    case TOSAC_TV_T0:
    case TOSAC_TV_T1:
    case TOSAC_TV_T2:
    case TOSAC_TV_T3: return (tosac_dtype)row->t[d->tv];
    case TOSAC_TV_TB: return TOSAC_DTYPE_BOOL;
    case TOSAC_TV_TI8: return TOSAC_DTYPE_INT8;
    case TOSAC_TV_TI32: return TOSAC_DTYPE_INT32;
    case TOSAC_TV_TMUL:
        return tosac_check_attr_int(c, TOSAC_ATTR_RESCALE_scale32, 0) ? TOSAC_DTYPE_INT32 : TOSAC_DTYPE_INT16;
    default: return TOSAC_DTYPE_UNKNOWN;
    }
}

static bool row_matches(const tosac_check_ctx *c, const tosac_type_row *row)
{
    const tosac_node *n = c->node;
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        tosac_dtype w = want_dtype(c, row, in_desc(c->info, i));
        if (w != TOSAC_DTYPE_UNKNOWN && n->inputs[i]->dtype != w) return false;
    }
    for (uint32_t i = 0; i < n->n_outputs; i++) {
        tosac_dtype w = want_dtype(c, row, out_desc(c->info, i));
        if (w != TOSAC_DTYPE_UNKNOWN && n->outputs[i]->dtype != w) return false;
    }
    return true;
}

bool tosac_row_available(const tosac_type_row *row, const tosac_validate_opts *o)
{
    return (row->profiles & o->profiles) != 0 && (row->extensions & ~o->extensions) == 0;
}

static void row_str(const tosac_type_row *row, bool schema_names, char *buf, size_t size, size_t *len)
{
    tosac_fixbuf_appendf(buf, size, len, "(");
    bool first = true;
    for (int k = 0; k < 4; k++) {
        if (row->t[k] == TOSAC_DTYPE_UNKNOWN) continue;
        tosac_dtype t = (tosac_dtype)row->t[k];
        tosac_fixbuf_appendf(buf, size, len, "%s%s", first ? "" : schema_names ? ", " : ",",
               schema_names ? tosac_dtype_name(t) : tosac_dtype_short_name(t));
        first = false;
    }
    tosac_fixbuf_appendf(buf, size, len, ")");
}

/* What `row` needs beyond `o`: "EXT-INT16, which is not enabled", "PRO-FP, EXT-BF16 and EXT-FP8E4M3,
   which are not enabled". */
static void requirement_str(const tosac_type_row *row, const tosac_validate_opts *o, char *buf, size_t size)
{
    const char *items[1 + TOSAC_EXT_COUNT];
    char ext[TOSAC_EXT_COUNT][24];
    int n = 0;
    if (!(row->profiles & o->profiles)) {
        if ((row->profiles & TOSAC_PROFILE_INT) && (row->profiles & TOSAC_PROFILE_FP))
            items[n++] = "PRO-INT or PRO-FP";
        else
            items[n++] = (row->profiles & TOSAC_PROFILE_INT) ? "PRO-INT" : "PRO-FP";
    }
    uint32_t missing = row->extensions & ~o->extensions;
    for (unsigned bit = 0; bit < TOSAC_EXT_COUNT; bit++) {
        if (!(missing & (1u << bit))) continue;
        const char *e = tosac_ext_name(bit);
        size_t k = 0;
        memcpy(ext[bit], "EXT-", 4);
        for (; e[k] && k + 5 < sizeof ext[bit]; k++)
            ext[bit][4 + k] = (char)(e[k] >= 'a' && e[k] <= 'z' ? e[k] - 'a' + 'A' : e[k]);
        ext[bit][4 + k] = '\0';
        items[n++] = ext[bit];
    }
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        tosac_fixbuf_appendf(buf, size, &len, "%s%s", i == 0 ? "" : i == n - 1 ? " and " : ", ", items[i]);
    tosac_fixbuf_appendf(buf, size, &len, n > 1 ? ", which are not enabled" : ", which is not enabled");
}

static unsigned acc_attr_id(uint32_t op)
{
    for (unsigned id = 0; id < TOSAC_ATTR_MAX_FIELDS; id++) {
        const char *fname = tosac_op_attr_name(op, id);
        if (fname && !strcmp(fname, "acc_type")) return id;
    }
    return TOSAC_ATTR_MAX_FIELDS;
}

/* Chooses the type-support row; reports and returns false when there is none. */
static bool match_type_row(tosac_check_ctx *c)
{
    unsigned nrows = 0;
    const tosac_type_row *rows = tosac_op_type_rows(c->node->op, &nrows);
    const tosac_node *n = c->node;
    if (n->op >= TOSAC_OP_VARIABLE && n->op <= TOSAC_OP_VARIABLE_READ && rows) {
        /* no operand descriptor binds the element type: tosac_check_variable picks the row from the
           variable tensor and checks profile/extension itself */
        c->row = &rows[0];
        return true;
    }
    char buf[MSG_MAX];
    size_t len = 0;
    const tosac_type_row *first_match = NULL, *first_acc = NULL, *chosen = NULL;
    int acc_tv = c->info->acc_tv;
    unsigned acc_id = acc_tv >= 0 ? acc_attr_id(n->op) : TOSAC_ATTR_MAX_FIELDS;
    int64_t acc = acc_id < TOSAC_ATTR_MAX_FIELDS ? tosac_check_attr_int(c, acc_id, TOSAC_DTYPE_UNKNOWN) : 0;
    for (unsigned r = 0; rows && r < nrows; r++) {
        if (!row_matches(c, &rows[r])) continue;
        if (!first_match) first_match = &rows[r];
        if (acc_tv >= 0 && acc_tv < 4 && rows[r].t[acc_tv] != acc) continue;
        if (!first_acc) first_acc = &rows[r];
        if (tosac_row_available(&rows[r], c->opts)) {
            chosen = &rows[r];
            break;
        }
    }
    if (chosen) {
        c->row = chosen;
        return true;
    }
    if (!first_match) {
        tosac_fixbuf_appendf(buf, sizeof buf, &len, "no type-support row of %s accepts (", tosac_op_name(n->op));
        for (uint32_t i = 0; i < n->n_inputs; i++)
            tosac_fixbuf_appendf(buf, sizeof buf, &len, "%s%s", i ? ", " : "", tosac_dtype_name(n->inputs[i]->dtype));
        tosac_fixbuf_appendf(buf, sizeof buf, &len, "%s", n->n_inputs ? " -> " : "-> ");
        for (uint32_t i = 0; i < n->n_outputs; i++)
            tosac_fixbuf_appendf(buf, sizeof buf, &len, "%s%s", i ? ", " : "", tosac_dtype_name(n->outputs[i]->dtype));
        tosac_fixbuf_appendf(buf, sizeof buf, &len, "); rows:");
        for (unsigned r = 0; r < nrows; r++) {
            tosac_fixbuf_appendf(buf, sizeof buf, &len, " ");
            row_str(&rows[r], false, buf, sizeof buf, &len);
        }
        tosac_check_error(c, "%s", buf);
        return false;
    }
    if (!first_acc) {
        tosac_fixbuf_appendf(buf, sizeof buf, &len, "acc_type %s (%lld) does not match the operand types; allowed:",
               tosac_dtype_valid((uint32_t)acc) ? tosac_dtype_name((tosac_dtype)acc) : "UNKNOWN", (long long)acc);
        for (unsigned r = 0; r < nrows; r++)
            if (row_matches(c, &rows[r]) && acc_tv >= 0 && acc_tv < 4)
                tosac_fixbuf_appendf(buf, sizeof buf, &len, " %s", tosac_dtype_name((tosac_dtype)rows[r].t[acc_tv]));
        tosac_check_error(c, "%s", buf);
        return false;
    }
    char req[256];
    requirement_str(first_acc, c->opts, req, sizeof req);
    tosac_fixbuf_appendf(buf, sizeof buf, &len, "%s", tosac_op_name(n->op));
    bool has_types = false;
    for (int k = 0; k < 4; k++) has_types |= first_acc->t[k] != TOSAC_DTYPE_UNKNOWN;
    if (has_types) {
        tosac_fixbuf_appendf(buf, sizeof buf, &len, " with ");
        row_str(first_acc, true, buf, sizeof buf, &len);
    }
    tosac_fixbuf_appendf(buf, sizeof buf, &len, " requires %s", req);
    tosac_check_error(c, "%s", buf);
    return false;
}

/* ------------------------------------------------------------------------------------------ */
/* Per-operator generic checks                                                                   */

static const char *kind_name(uint8_t kind)
{
    switch (kind) {
    case TOSAC_OPND_CTC: return "compile-time-constant tensor";
    case TOSAC_OPND_SHAPE: return "shape value";
    default: return "tensor";
    }
}

/* Attribute union tag: must equal the op, 0 only for attribute-less ops; IDENTITY may carry the
   VariableRead/VariableWrite tags when it reads or writes a variable tensor (the reference
   model's serialization of variable accesses). */
static bool check_attr_tag(tosac_check_ctx *c)
{
    const tosac_node *n = c->node;
    if (n->attr_type == n->op) return true;
    if (n->attr_type == 0 && tosac_op_attr_count(n->op) == 0) return true;
    if (n->op == TOSAC_OP_IDENTITY &&
        (n->attr_type == TOSAC_OP_VARIABLE_READ || n->attr_type == TOSAC_OP_VARIABLE_WRITE)) {
        for (uint32_t i = 0; n->inputs && i < n->n_inputs; i++)
            if (n->inputs[i] && n->inputs[i]->variable) return true;
        for (uint32_t i = 0; n->outputs && i < n->n_outputs; i++)
            if (n->outputs[i] && n->outputs[i]->variable) return true;
    }
    if (n->attr_type == 0)
        tosac_check_error(c, "attribute union tag is NONE (0), expected %u (%sAttribute)", (unsigned)n->op,
                          tosac_op_attr_table(n->op));
    else if (!tosac_op_valid(n->attr_type))
        tosac_check_error(c, "attribute union tag %u is unknown, expected %u (%sAttribute)", (unsigned)n->attr_type,
                          (unsigned)n->op, tosac_op_attr_table(n->op));
    else
        tosac_check_error(c, "attribute union tag %u (%sAttribute) does not match the operator, expected %u (%sAttribute)",
                          (unsigned)n->attr_type, tosac_op_attr_table(n->attr_type), (unsigned)n->op,
                          tosac_op_attr_table(n->op));
    return false;
}

static bool check_counts(tosac_check_ctx *c)
{
    const tosac_node *n = c->node;
    const tosac_op_info *info = c->info;
    bool ok = true;
    uint32_t fixed_in = info->input_list ? info->n_inputs - 1u : info->n_inputs;
    uint32_t min_in = fixed_in + (n->op == TOSAC_OP_CONCAT ? 1u : 0u);
    if (info->input_list ? n->n_inputs < min_in : n->n_inputs != fixed_in) {
        tosac_check_error(c, "has %u inputs, expected %s%u", (unsigned)n->n_inputs, info->input_list ? "at least " : "",
                          (unsigned)min_in);
        ok = false;
    }
    uint32_t fixed_out = info->output_list ? info->n_outputs - 1u : info->n_outputs;
    if (info->output_list ? n->n_outputs < fixed_out : n->n_outputs != fixed_out) {
        tosac_check_error(c, "has %u outputs, expected %s%u", (unsigned)n->n_outputs, info->output_list ? "at least " : "",
                          (unsigned)fixed_out);
        ok = false;
    }
    if ((n->n_inputs && !n->inputs) || (n->n_outputs && !n->outputs)) {
        tosac_check_error(c, "operand list is missing");
        ok = false;
    }
    return ok;
}

/* Operand existence and kinds (tensor / constant tensor / shape value). */
static bool check_kinds(tosac_check_ctx *c, bctx *bc)
{
    const tosac_node *n = c->node;
    const tosac_block *b = c->block;
    bool dynamic = (c->opts->extensions & TOSAC_EXT_DYNAMIC) != 0;
    bool ok = true;
    for (uint32_t side = 0; side < 2; side++) {
        uint32_t cnt = side ? n->n_outputs : n->n_inputs;
        tosac_value *const *vals = side ? n->outputs : n->inputs;
        const char *what = side ? "output" : "input";
        for (uint32_t i = 0; vals && i < cnt; i++) {
            const tosac_value *v = vals[i];
            const tosac_operand_desc *d = side ? out_desc(c->info, i) : in_desc(c->info, i);
            const char *dn = d ? d->name : "?";
            if (!v) {
                tosac_check_error(c, "%s %u (%s) is missing", what, (unsigned)i, dn);
                ok = false;
                continue;
            }
            int64_t k;
            bctx *ob = owner_of(bc, v, &k);
            if (!ob || !v->declared || (side && ob != bc)) {
                tosac_check_error(c, "%s '%s' is not a tensor or shape of %s '%s'", what, tosac_nm(v->name),
                                  "block", tosac_nm(b->name));
                ok = false;
                continue;
            }
            if (!d) continue;
            bool want_shape = d->kind == TOSAC_OPND_SHAPE || (side && n->op == TOSAC_OP_CONST_SHAPE);
            if (want_shape && !v->is_shape) {
                tosac_check_error(c, "%s '%s' (%s) must be a shape value, not a tensor", what, tosac_nm(v->name), dn);
                ok = false;
                continue;
            }
            if (!want_shape && v->is_shape) {
                tosac_check_error(c, "%s '%s' (%s) must be a tensor, not a shape value", what, tosac_nm(v->name), dn);
                ok = false;
                continue;
            }
            if (side || dynamic || (d->kind != TOSAC_OPND_CTC && d->kind != TOSAC_OPND_SHAPE)) continue;
            const tosac_node *p = ob->prod[k] >= 0 ? ob->b->nodes[ob->prod[k]] : NULL;
            uint32_t want_op = d->kind == TOSAC_OPND_CTC ? TOSAC_OP_CONST : TOSAC_OP_CONST_SHAPE;
            if (!p || p->op != want_op) {
                const char *why = p ? tosac_op_name(p->op) : (ob->flags[k] & VF_BLOCK_IN) ? "" : NULL;
                tosac_check_error(c, "input '%s' (%s) must be a %s produced by %s unless EXT-DYNAMIC is enabled (%s%s)",
                                  tosac_nm(v->name), dn, kind_name(d->kind), tosac_op_name(want_op),
                                  p ? "it is produced by " : why ? "it is a block input" : "it has no producer",
                                  p ? why : "");
                ok = false;
            }
        }
    }
    return ok;
}

static void check_list_levels(tosac_check_ctx *c)
{
    const tosac_node *n = c->node;
    const tosac_op_info *info = c->info;
    if (n->op >= TOSAC_OP_VARIABLE && n->op <= TOSAC_OP_VARIABLE_READ) return; /* operand conventions, not lists */
    if (info->input_list) {
        uint32_t k = n->n_inputs - (info->n_inputs - 1u);
        LEVEL_CHECK(c, (int64_t)k <= c->lim.max_tensor_list, "input list %s has %u tensors > MAX_TENSOR_LIST_SIZE %lld",
                    info->inputs[info->n_inputs - 1].name, (unsigned)k, (long long)c->lim.max_tensor_list);
    }
    if (info->output_list) {
        uint32_t k = n->n_outputs - (info->n_outputs - 1u);
        LEVEL_CHECK(c, (int64_t)k <= c->lim.max_tensor_list, "output list %s has %u tensors > MAX_TENSOR_LIST_SIZE %lld",
                    info->outputs[info->n_outputs - 1].name, (unsigned)k, (long long)c->lim.max_tensor_list);
    }
}

/* Every input must be a block input, a variable or the result of an earlier operator; a value of
   an enclosing block must be available when the control-flow operator runs. */
static void check_order(tosac_check_ctx *c, bctx *bc)
{
    const tosac_node *n = c->node;
    for (uint32_t i = 0; n->inputs && i < n->n_inputs; i++) {
        const tosac_value *v = n->inputs[i];
        int64_t k;
        bctx *ob = owner_of(bc, v, &k);
        if (!ob || !v->declared) continue; /* reported by check_kinds */
        if (ob != bc) ob->flags[k] |= VF_CONSUMED;
        if ((ob->flags[k] & VF_BLOCK_IN) || v->variable) continue;
        int64_t p = ob->prod[k];
        if (ob != bc) {
            if (p < 0)
                tosac_check_error(c, "input '%s' of enclosing block '%s' is neither a block input nor produced by any operator",
                                  tosac_nm(v->name), tosac_nm(ob->b->name));
            else if (p >= ob->cur)
                tosac_check_error(c, "input '%s' of enclosing block '%s' is produced by op %lld, after the control-flow operator op %lld that runs this block",
                                  tosac_nm(v->name), tosac_nm(ob->b->name), (long long)p, (long long)ob->cur);
        } else if (p < 0) {
            tosac_check_error(c, "input '%s' is neither a block input nor produced by any operator", tosac_nm(v->name));
        } else if (p >= (int64_t)n->index) {
            tosac_check_error(c, "input '%s' is used before it is produced by op %lld (operators must be in topological order)",
                              tosac_nm(v->name), (long long)p);
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Control flow                                                                                  */

static void validate_block(vstate *s, uint32_t ri, uint32_t bi, int nesting, bctx *parent);

/* Resolves a COND_IF/WHILE_LOOP graph name: a region (its first block) first, else a block of the
   current region. */
static bool resolve_graph(vstate *s, uint32_t cur_ri, const char *name, uint32_t *ri, uint32_t *bi,
                          bool *empty_region)
{
    *empty_region = false;
    const name_ix *r = find_ix(s->rnames, s->g->n_regions, 0, name);
    if (r) {
        const tosac_region *reg = s->g->regions[r->idx];
        if (reg && reg->n_blocks > 0 && reg->blocks[0]) {
            *ri = r->idx;
            *bi = 0;
            return true;
        }
        *empty_region = true;
    }
    const name_ix *bl = find_ix(s->bnames, s->nblocks, cur_ri, name);
    if (bl && s->g->regions[cur_ri]->blocks[bl->idx]) {
        *ri = cur_ri;
        *bi = bl->idx;
        return true;
    }
    return false;
}

static const char *sig_str(const tosac_value *v, char *buf, size_t size)
{
    char sh[128];
    snprintf(buf, size, "%s %s", v ? tosac_dtype_name(v->dtype) : "?", tosac_shape_str(v, sh, sizeof sh));
    return buf;
}

static bool same_sig(const tosac_value *a, const tosac_value *b)
{
    return a && b && a->dtype == b->dtype && a->is_shape == b->is_shape && tosac_same_shape(a, b);
}

/* Operator list [first, first+count) against a block's input or output list. */
static void match_list(tosac_check_ctx *c, const char *graph_attr, const tosac_block *sub, bool sub_inputs,
                       tosac_value *const *ops, uint32_t count, const char *list_name)
{
    uint32_t sn = sub_inputs ? sub->n_inputs : sub->n_outputs;
    tosac_value *const *sv = sub_inputs ? sub->inputs : sub->outputs;
    const char *sw = sub_inputs ? "inputs" : "outputs";
    if (sn != count) {
        tosac_check_error(c, "%s block '%s' has %u %s but %s has %u tensors", graph_attr, tosac_nm(sub->name),
                          (unsigned)sn, sw, list_name, (unsigned)count);
        return;
    }
    for (uint32_t i = 0; i < count; i++) {
        const tosac_value *a = ops[i], *b = sv ? sv[i] : NULL;
        if (!a) continue;
        if (!same_sig(a, b)) {
            char x[192], y[192];
            tosac_check_error(c, "%s[%u] '%s' (%s) does not match %s block '%s' %s[%u] '%s' (%s)", list_name,
                              (unsigned)i, tosac_nm(a->name), sig_str(a, x, sizeof x), graph_attr, tosac_nm(sub->name),
                              sub_inputs ? "input" : "output", (unsigned)i, b ? tosac_nm(b->name) : "?",
                              sig_str(b, y, sizeof y));
        }
    }
}

/* Copy of string attribute `id` (NULL if absent or empty); the caller frees it with tosac_free. */
static char *attr_string(const tosac_node *n, unsigned id, size_t *size)
{
    const tosac_attr_val *a = &n->attr[id];
    *size = 0;
    if (tosac_op_attr_kind(n->op, id) != TOSAC_AK_STR || !a->present || !a->data || a->len == 0) return NULL;
    const char *src = a->data;
    size_t len = a->len;
    const char *nul = memchr(src, '\0', len);
    if (nul) len = (size_t)(nul - src);
    if (len == 0) return NULL;
    char *p = tosac_malloc(len + 1);
    if (!p) return NULL;
    memcpy(p, src, len);
    p[len] = '\0';
    *size = len + 1;
    return p;
}

/* Resolves, checks and (recursively) validates the sub-graphs of a COND_IF or WHILE_LOOP. */
static void check_control_flow(vstate *s, bctx *bc, int nesting)
{
    tosac_check_ctx *c = &s->c;
    const tosac_node *n = c->node;
    bool is_if = n->op == TOSAC_OP_COND_IF;
    const char *attr_names[2] = {is_if ? "then_graph" : "cond_graph", is_if ? "else_graph" : "body_graph"};
    uint32_t ris[2], bis[2];
    bool found[2] = {false, false};
    char *names[2];
    size_t sizes[2];
    for (int k = 0; k < 2; k++) {
        names[k] = attr_string(n, (unsigned)k, &sizes[k]);
        if (!names[k]) {
            tosac_check_error(c, "%s is not set", attr_names[k]);
            continue;
        }
        bool empty = false;
        found[k] = resolve_graph(s, bc->ri, names[k], &ris[k], &bis[k], &empty);
        if (!found[k])
            tosac_check_error(c, "%s '%s' names no region%s and no block of region '%s'", attr_names[k], names[k],
                              empty ? " with blocks" : "", tosac_nm(s->g->regions[bc->ri]->name));
    }
    for (int k = 0; k < 2; k++) {
        if (!found[k]) continue;
        const tosac_block *sub = s->g->regions[ris[k]]->blocks[bis[k]];
        if (is_if) {
            if (n->n_inputs >= 1) match_list(c, attr_names[k], sub, true, n->inputs + 1, n->n_inputs - 1, "input_list");
            match_list(c, attr_names[k], sub, false, n->outputs, n->n_outputs, "output_list");
        } else if (k == 0) {
            match_list(c, attr_names[k], sub, true, n->inputs, n->n_inputs, "input_list");
            if (sub->n_outputs != 1) {
                tosac_check_error(c, "cond_graph block '%s' has %u outputs; it must have exactly one BOOL output",
                                  tosac_nm(sub->name), (unsigned)sub->n_outputs);
            } else {
                const tosac_value *o = sub->outputs ? sub->outputs[0] : NULL;
                if (!o || o->dtype != TOSAC_DTYPE_BOOL || tosac_check_nelem(o) != 1) {
                    char x[192];
                    tosac_check_error(c, "cond_graph block '%s' output '%s' (%s) must be a BOOL tensor with one element",
                                      tosac_nm(sub->name), o ? tosac_nm(o->name) : "?", sig_str(o, x, sizeof x));
                }
            }
        } else {
            match_list(c, attr_names[k], sub, true, n->inputs, n->n_inputs, "input_list");
            match_list(c, attr_names[k], sub, false, n->inputs, n->n_inputs, "input_list");
        }
    }
    /* Recursion into the referenced blocks (each block is validated once). */
    for (int k = 0; k < 2; k++) {
        if (!found[k] || (k == 1 && found[0] && ris[0] == ris[1] && bis[0] == bis[1])) continue;
        uint32_t gi = s->roff[ris[k]] + bis[k];
        const tosac_block *sub = s->g->regions[ris[k]]->blocks[bis[k]];
        if (s->bstate[gi] == BS_ACTIVE) {
            tosac_check_error(c, "%s '%s' refers back to block '%s', which is already being executed (recursive control flow is not allowed)",
                              attr_names[k], names[k], tosac_nm(sub->name));
            continue;
        }
        if (s->bstate[gi] != BS_NEW || nesting + 1 > MAX_CF_DEPTH) continue;
        tosac_check_ctx saved = *c;
        validate_block(s, ris[k], bis[k], nesting + 1, bc);
        saved.n_errors = c->n_errors;
        saved.n_level = c->n_level;
        *c = saved;
    }
    tosac_free(names[0], sizes[0]);
    tosac_free(names[1], sizes[1]);
}

/* ------------------------------------------------------------------------------------------ */
/* Family dispatch                                                                               */

typedef void (*check_fn)(tosac_check_ctx *);

static const check_fn k_checks[TOSAC_OP_COUNT] = {
#define TOSAC_OP(E, num, A, chk, acc, ins, outs) [num] = tosac_check_##chk,
#include "tosac/ops.def"
#undef TOSAC_OP
};

/* ------------------------------------------------------------------------------------------ */
/* Blocks                                                                                        */

static bool writes_state(const tosac_node *n)
{
    if (n->op == TOSAC_OP_VARIABLE || n->op == TOSAC_OP_VARIABLE_WRITE || n->op == TOSAC_OP_CUSTOM) return true;
    for (uint32_t i = 0; n->outputs && i < n->n_outputs; i++)
        if (n->outputs[i] && n->outputs[i]->variable) return true;
    return false;
}

/* Sets `flags` on the values of the block's input or output list (`what`: "input", "output"). */
static void scan_block_io(tosac_check_ctx *c, bctx *bc, tosac_value *const *list, uint32_t n, const char *what,
                          uint8_t flags)
{
    for (uint32_t i = 0; i < n; i++) {
        const tosac_value *v = list ? list[i] : NULL;
        int64_t k = vidx(bc->b, v);
        if (k < 0 || !v->declared) {
            tosac_check_error(c, "block %s '%s' is not a tensor of the block", what, v ? tosac_nm(v->name) : "(null)");
            continue;
        }
        if (v->is_shape)
            tosac_check_error(c, "block %s '%s' is a shape value; block %ss must be tensors", what, tosac_nm(v->name),
                              what);
        bc->flags[k] |= flags;
    }
}

/* Producers, consumers and block input/output flags; reports values produced twice and block I/O
   problems. */
static void scan_block(vstate *s, bctx *bc)
{
    tosac_check_ctx *c = &s->c;
    const tosac_block *b = bc->b;
    for (size_t k = 0; k < bc->nvals; k++) bc->prod[k] = -1;
    scan_block_io(c, bc, b->inputs, b->n_inputs, "input", VF_BLOCK_IN);
    scan_block_io(c, bc, b->outputs, b->n_outputs, "output", VF_BLOCK_OUT | VF_CONSUMED);
    for (uint32_t ni = 0; ni < b->n_nodes; ni++) {
        const tosac_node *n = b->nodes[ni];
        if (!n) continue;
        c->node = n;
        for (uint32_t i = 0; n->inputs && i < n->n_inputs; i++) {
            int64_t k = vidx(b, n->inputs[i]);
            if (k >= 0) bc->flags[k] |= VF_CONSUMED;
        }
        for (uint32_t i = 0; n->outputs && i < n->n_outputs; i++) {
            const tosac_value *v = n->outputs[i];
            int64_t k = vidx(b, v);
            if (k < 0 || !v->declared) continue;
            if (bc->flags[k] & VF_BLOCK_IN)
                tosac_check_error(c, "output '%s' is a block input and cannot be produced by an operator",
                                  tosac_nm(v->name));
            if (bc->prod[k] < 0) {
                bc->prod[k] = ni;
                continue;
            }
            const tosac_node *first = b->nodes[bc->prod[k]];
            if (!v->variable)
                tosac_check_error(c, "output '%s' is already produced by op %lld (every value has one producer)",
                                  tosac_nm(v->name), (long long)bc->prod[k]);
            else if (n->op == TOSAC_OP_VARIABLE && first->op == TOSAC_OP_VARIABLE)
                tosac_check_error(c, "variable '%s' is declared twice (also by op %lld)", tosac_nm(v->name),
                                  (long long)bc->prod[k]);
        }
    }
    c->node = NULL;
    for (uint32_t i = 0; i < b->n_outputs; i++) {
        const tosac_value *v = b->outputs ? b->outputs[i] : NULL;
        int64_t k = vidx(b, v);
        if (k < 0 || !v->declared) continue;
        if (!(bc->flags[k] & VF_BLOCK_IN) && bc->prod[k] < 0 && !v->variable)
            tosac_check_error(c, "block output '%s' is not reachable: it is neither a block input nor produced by any operator",
                              tosac_nm(v->name));
    }
}

static void validate_node_view(vstate *s, bctx *bc, const tosac_node *n, int nesting)
{
    tosac_check_ctx *c = &s->c;
    c->node = n;
    bool ok = check_attr_tag(c);
    if (!check_counts(c)) ok = false;
    if (!check_kinds(c, bc)) ok = false;
    check_order(c, bc);
    if (!ok) return;
    check_list_levels(c);
    if (!match_type_row(c)) return;
    c->nesting = nesting;
    k_checks[n->op](c);
    if (n->op == TOSAC_OP_COND_IF || n->op == TOSAC_OP_WHILE_LOOP) check_control_flow(s, bc, nesting);
}

static void validate_node(vstate *s, bctx *bc, const tosac_node *n, int nesting)
{
    tosac_check_ctx *c = &s->c;
    c->node = n;
    c->row = NULL;
    c->info = NULL;
    if (!tosac_op_valid(n->op)) {
        tosac_check_error(c, "unknown operator number %u", (unsigned)n->op);
        return;
    }
    c->info = tosac_op_info_get(n->op);
    /* Inputs naming values of enclosing blocks are checked as those values (a view of the node). */
    bool outer = false;
    for (uint32_t i = 0; n->inputs && i < n->n_inputs && bc->parent && !outer; i++)
        outer = outer_value(bc, n->inputs[i]) != NULL;
    if (!outer) {
        validate_node_view(s, bc, n, nesting);
        return;
    }
    size_t bytes = (size_t)n->n_inputs * sizeof(tosac_value *);
    tosac_value **ins = tosac_malloc(bytes);
    if (!ins) {
        s->oom = true;
        return;
    }
    for (uint32_t i = 0; i < n->n_inputs; i++) {
        tosac_value *o = outer_value(bc, n->inputs[i]);
        ins[i] = o ? o : n->inputs[i];
    }
    tosac_node view = *n;
    view.inputs = ins;
    validate_node_view(s, bc, &view, nesting);
    c->node = n;
    tosac_free(ins, bytes);
}

static void validate_block(vstate *s, uint32_t ri, uint32_t bi, int nesting, bctx *parent)
{
    tosac_check_ctx *c = &s->c;
    const tosac_block *b = s->g->regions[ri]->blocks[bi];
    uint32_t gi = s->roff[ri] + bi;
    s->bstate[gi] = BS_ACTIVE;
    c->block = b;
    c->node = NULL;
    c->nesting = nesting;
    if (!b) {
        tosac_check_error(c, "region '%s' block %u is missing", tosac_nm(s->g->regions[ri]->name), (unsigned)bi);
        s->bstate[gi] = BS_DONE;
        return;
    }
    check_declarations(s, b);
    bctx bc = {b, ri, bi, 0, NULL, NULL, parent, -1};
    bc.nvals = (size_t)b->n_tensors + b->n_shapes + b->n_undeclared;
    bc.prod = tosac_malloc((bc.nvals + 1) * sizeof(int64_t));
    bc.flags = tosac_calloc(bc.nvals + 1, 1);
    if (!bc.prod || !bc.flags) {
        s->oom = true;
        tosac_free(bc.prod, (bc.nvals + 1) * sizeof(int64_t));
        tosac_free(bc.flags, bc.nvals + 1);
        s->bstate[gi] = BS_DONE;
        return;
    }
    scan_block(s, &bc);
    check_value_levels(s, &bc);
    for (uint32_t ni = 0; ni < b->n_nodes; ni++) {
        const tosac_node *n = b->nodes[ni];
        c->block = b;
        c->node = NULL;
        bc.cur = ni;
        if (!n) {
            tosac_check_error(c, "operator %u is missing", (unsigned)ni);
            continue;
        }
        validate_node(s, &bc, n, nesting);
    }
    /* Dead operators: no result is consumed, is a block output or holds state. */
    c->block = b;
    for (uint32_t ni = 0; ni < b->n_nodes; ni++) {
        const tosac_node *n = b->nodes[ni];
        if (!n || !n->outputs || n->n_outputs == 0 || writes_state(n)) continue;
        bool used = false;
        for (uint32_t i = 0; i < n->n_outputs && !used; i++) {
            int64_t k = vidx(b, n->outputs[i]);
            used = k < 0 || (bc.flags[k] & VF_CONSUMED);
        }
        if (!used) {
            c->node = n;
            check_note(c, "no result of this operator is used (dead operator)");
        }
    }
    c->node = NULL;
    tosac_free(bc.prod, (bc.nvals + 1) * sizeof(int64_t));
    tosac_free(bc.flags, bc.nvals + 1);
    s->bstate[gi] = BS_DONE;
}

/* The spec does not say that a graph needs outputs; tosac reads one whose entry block has none and
   writes no variable as an error (it computes nothing: an ONNX graph without outputs, a file cut
   short), as `tosac compile` refuses to write one (docs/CONFORMANCE.md). */
static void check_has_effect(vstate *s, const tosac_block *main_b)
{
    if (main_b->n_outputs) return;
    for (uint32_t r = 0; r < s->g->n_regions; r++)
        for (uint32_t bi = 0; bi < s->g->regions[r]->n_blocks; bi++) {
            const tosac_block *b = s->g->regions[r]->blocks[bi];
            for (uint32_t ni = 0; b && ni < b->n_nodes; ni++)
                if (b->nodes[ni] && b->nodes[ni]->op != TOSAC_OP_VARIABLE && writes_state(b->nodes[ni])) return;
        }
    s->c.block = main_b;
    s->c.node = NULL;
    tosac_check_error(&s->c, "the graph has no outputs and writes no variable: it computes nothing");
}

/* ------------------------------------------------------------------------------------------ */
/* Entry point                                                                                   */

tosac_status tosac_validate(const tosac_graph *g, const tosac_validate_opts *opts, tosac_diag *d)
{
    if (!g) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_validate: no graph");
    tosac_validate_opts def = tosac_validate_opts_default();
    if (!opts) opts = &def;
    if (opts->level != TOSAC_LEVEL_NONE && opts->level != TOSAC_LEVEL_8K)
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_validate: unknown level %d", (int)opts->level);
    if (!(opts->profiles & (TOSAC_PROFILE_INT | TOSAC_PROFILE_FP)))
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_validate: no profile selected (PRO-INT and/or PRO-FP)");

    vstate s;
    memset(&s, 0, sizeof s);
    s.g = g;
    s.c.opts = opts;
    s.c.lim = level_limits(opts->level);
    s.c.diag = d;
    s.c.graph = g;

    check_version(&s);
    if (g->n_regions == 0 || !g->regions) {
        tosac_check_error(&s.c, "the graph has no regions (the first region must hold block 'main')");
    } else {
        bool built = true;
        for (uint32_t r = 0; r < g->n_regions; r++)
            if (!g->regions[r]) {
                tosac_check_error(&s.c, "region %u is missing", (unsigned)r);
                built = false;
            }
        if (built && !build_indexes(&s)) s.oom = true;
        if (built && !s.oom) {
            const name_ix *m = find_ix(s.bnames, s.nblocks, 0, "main");
            if (!m || !g->regions[0]->blocks[m->idx]) {
                s.c.block = NULL;
                s.c.node = NULL;
                tosac_check_error(&s.c, "the first region '%s' has no block 'main' (the entry point)",
                                  tosac_nm(g->regions[0]->name));
            } else {
                validate_block(&s, 0, m->idx, 0, NULL);
                check_has_effect(&s, g->regions[0]->blocks[m->idx]);
            }
            for (uint32_t r = 0; r < g->n_regions && !s.oom; r++)
                for (uint32_t bi = 0; bi < g->regions[r]->n_blocks && !s.oom; bi++)
                    if (s.bstate[s.roff[r] + bi] == BS_NEW) validate_block(&s, r, bi, 0, NULL);
        }
    }
    tosac_free(s.roff, (g->n_regions + 1u) * sizeof(uint32_t));
    tosac_free(s.bstate, (size_t)s.nblocks + 1);
    tosac_free(s.rnames, (g->n_regions + 1u) * sizeof(name_ix));
    tosac_free(s.bnames, ((size_t)s.nblocks + 1) * sizeof(name_ix));
    if (s.oom) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "tosac_validate: out of memory");
    if (s.c.n_errors) return TOSAC_ERR_TOSA_ERROR;
    if (s.c.n_level) return TOSAC_ERR_UNPREDICTABLE;
    return TOSAC_OK;
}
