/*
 * Program construction: expands the main block and the control-flow sub-blocks it reaches into
 * block instances (program.h), resolves every operand to a runtime value, binds sub-block inputs
 * and results to the control-flow operators, lays out and converts the constants, creates the
 * variables and prepares one kernel call per operator.
 *
 * The graph passed tosac_validate; the code still checks what it relies on (lists that must match,
 * names that must resolve) and fails with a message instead of crashing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/diag.h"
#include "core/strbuf.h"
#include "ir/graph.h"
#include "runtime/program.h"

#define CS_NONE SIZE_MAX
#define CS_BORROW (SIZE_MAX - 1)
#define CS_MARK (SIZE_MAX - 2)

typedef struct bctx {
    tosac_program *p;
    const tosac_graph *g;
    const tosac_program_opts *o;
    tosac_diag *d;
    uint32_t *roff;   /* region -> global index of its first block */
    uint32_t nblocks;
    uint32_t *voff;   /* global block -> first entry of cslot */
    size_t *cslot;    /* per (block, tensor/shape value): constants offset, CS_BORROW or CS_NONE */
    size_t nslots;
    uint32_t *uoff;   /* global block -> first entry of capture */
    const tosac_value **capture; /* per (block, undeclared name): the value it resolved to first */
    size_t ncaptures;
    size_t const_total;
    uint32_t max_ops;
    uint64_t max_vals; /* bound on values after expansion, derived from max_ops and the graph */
    int32_t step;
} bctx;

static const tosac_attr_val k_no_attrs[TOSAC_ATTR_MAX_FIELDS];

static const char *nm(const char *s) { return s ? s : "(null)"; }

#define GROW(arr, cap, need) tosac_grow((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* ------------------------------------------------------------------------------------------ */
/* Constants                                                                                     */

static bool host_little_endian(void)
{
    const uint16_t one = 1;
    uint8_t b;
    memcpy(&b, &one, 1);
    return b == 1;
}

/* Position of a declared value among the block's tensors, then shapes; -1 if it is not one. */
static int64_t decl_index(const tosac_block *b, const tosac_value *v)
{
    if (!v || v->block != b || !v->declared) return -1;
    if (v->is_shape) {
        if (v->index < b->n_shapes && b->shapes[v->index] == v) return (int64_t)b->n_tensors + v->index;
        return -1;
    }
    if (v->index < b->n_tensors && b->tensors[v->index] == v) return v->index;
    return -1;
}

/* Position among tensors, shapes, then undeclared names; -1 if v is not one of the block's. */
static int64_t any_index(const tosac_block *b, const tosac_value *v)
{
    if (!v || v->block != b) return -1;
    if (v->declared) return decl_index(b, v);
    if (v->index < b->n_undeclared && b->undeclared[v->index] == v)
        return (int64_t)b->n_tensors + b->n_shapes + v->index;
    return -1;
}

static bool value_nelem(const tosac_value *v, int64_t *n)
{
    if (v->rank < 0 || v->rank > TOSAC_MAX_RANK || (v->rank > 0 && !v->shape)) return false;
    *n = tosac_value_nelem(v);
    return *n >= 0;
}

static bool exec_bytes(tosac_dtype t, bool f64, int64_t nelem, size_t *bytes)
{
    size_t es = tosac_exec_elem_size(t, f64);
    return es && nelem >= 0 && tosac_mul_size((size_t)nelem, es, bytes);
}

static bool value_f64(const tosac_program_opts *o, tosac_dtype t) { return o->precise && rt_is_float(t); }

/* Constant data that may be used in place (opts.borrow_constants). */
static bool borrowable(const tosac_program_opts *o, const tosac_value *v, size_t bytes)
{
    if (!o->borrow_constants || !v->data || !host_little_endian()) return false;
    switch (v->dtype) {
    case TOSAC_DTYPE_INT8:
    case TOSAC_DTYPE_INT16:
    case TOSAC_DTYPE_INT32:
    case TOSAC_DTYPE_SHAPE: break;
    case TOSAC_DTYPE_FP32:
    case TOSAC_DTYPE_FP16:
    case TOSAC_DTYPE_BF16:
    case TOSAC_DTYPE_FP8E4M3:
    case TOSAC_DTYPE_FP8E5M2:
        if (o->precise) return false;
        break;
    default: return false;
    }
    size_t es = tosac_exec_elem_size(v->dtype, false);
    return v->data_len >= bytes && (uintptr_t)v->data % es == 0;
}

/*
 * Constants layout over every block of the graph (in graph order, so it does not depend on how
 * control flow is expanded): each CONST / CONST_SHAPE result and each variable with initial data
 * gets an aligned slot. voff/cslot are allocated here and freed by the caller.
 */
static tosac_status layout_constants(const tosac_graph *g, const tosac_program_opts *o, uint32_t **voff_out,
                                     size_t **cslot_out, size_t *nslots_out, size_t *total_out)
{
    size_t nblocks = 0, nslots = 0;
    for (uint32_t r = 0; r < g->n_regions; r++) {
        const tosac_region *reg = g->regions[r];
        if (!reg) continue;
        nblocks += reg->n_blocks;
        for (uint32_t bi = 0; bi < reg->n_blocks; bi++)
            if (reg->blocks[bi]) nslots += (size_t)reg->blocks[bi]->n_tensors + reg->blocks[bi]->n_shapes;
    }
    if (nblocks >= UINT32_MAX || nslots >= UINT32_MAX) return TOSAC_ERR_NOMEM;
    uint32_t *voff = tosac_calloc(nblocks + 1, sizeof(uint32_t));
    size_t *cslot = tosac_malloc((nslots + 1) * sizeof(size_t));
    if (!voff || !cslot) {
        tosac_free(voff, (nblocks + 1) * sizeof(uint32_t));
        tosac_free(cslot, (nslots + 1) * sizeof(size_t));
        return TOSAC_ERR_NOMEM;
    }
    for (size_t i = 0; i < nslots; i++) cslot[i] = CS_NONE;
    size_t total = 0, k = 0, gi = 0;
    tosac_status st = TOSAC_OK;
    for (uint32_t r = 0; r < g->n_regions && st == TOSAC_OK; r++) {
        const tosac_region *reg = g->regions[r];
        for (uint32_t bi = 0; reg && bi < reg->n_blocks; bi++, gi++) {
            const tosac_block *b = reg->blocks[bi];
            voff[gi] = (uint32_t)k;
            if (!b) continue;
            for (uint32_t ni = 0; ni < b->n_nodes; ni++) {
                const tosac_node *n = b->nodes[ni];
                if (!n || (n->op != TOSAC_OP_CONST && n->op != TOSAC_OP_CONST_SHAPE) || n->n_outputs < 1 ||
                    !n->outputs)
                    continue;
                int64_t x = decl_index(b, n->outputs[0]);
                if (x >= 0) cslot[k + (size_t)x] = CS_MARK;
            }
            uint32_t nv = b->n_tensors + b->n_shapes;
            for (uint32_t x = 0; x < nv; x++) {
                const tosac_value *v = x < b->n_tensors ? b->tensors[x] : b->shapes[x - b->n_tensors];
                if (!v) continue;
                if (v->variable && v->data) cslot[k + x] = CS_MARK;
                if (cslot[k + x] != CS_MARK) continue;
                int64_t ne;
                size_t bytes;
                if (!value_nelem(v, &ne) || !exec_bytes(v->dtype, value_f64(o, v->dtype), ne, &bytes)) {
                    st = TOSAC_ERR_NOMEM;
                    break;
                }
                if (borrowable(o, v, bytes)) {
                    cslot[k + x] = CS_BORROW;
                    continue;
                }
                cslot[k + x] = total;
                if (!tosac_add_size(total, rt_align(bytes), &total)) {
                    st = TOSAC_ERR_NOMEM;
                    break;
                }
            }
            k += nv;
        }
    }
    voff[gi] = (uint32_t)k;
    if (st != TOSAC_OK) {
        tosac_free(voff, (nblocks + 1) * sizeof(uint32_t));
        tosac_free(cslot, (nslots + 1) * sizeof(size_t));
        return st;
    }
    *voff_out = voff;
    *cslot_out = cslot;
    *nslots_out = nslots;
    *total_out = total;
    return TOSAC_OK;
}

tosac_status rt_const_size(const tosac_graph *g, const tosac_program_opts *o, size_t *bytes)
{
    uint32_t *voff;
    size_t *cslot, nslots, total;
    tosac_status st = layout_constants(g, o, &voff, &cslot, &nslots, &total);
    if (st != TOSAC_OK) return st;
    size_t nblocks = 0;
    for (uint32_t r = 0; r < g->n_regions; r++) nblocks += g->regions[r] ? g->regions[r]->n_blocks : 0;
    tosac_free(voff, (nblocks + 1) * sizeof(uint32_t));
    tosac_free(cslot, (nslots + 1) * sizeof(size_t));
    *bytes = total;
    return TOSAC_OK;
}

/* Converts every constant of the layout into the constants buffer. */
static tosac_status fill_constants(bctx *bc)
{
    const tosac_graph *g = bc->g;
    size_t k = 0;
    for (uint32_t r = 0; r < g->n_regions; r++) {
        const tosac_region *reg = g->regions[r];
        for (uint32_t bi = 0; reg && bi < reg->n_blocks; bi++) {
            const tosac_block *b = reg->blocks[bi];
            if (!b) continue;
            uint32_t nv = b->n_tensors + b->n_shapes;
            for (uint32_t x = 0; x < nv; x++, k++) {
                if (bc->cslot[k] == CS_NONE || bc->cslot[k] == CS_BORROW) continue;
                const tosac_value *v = x < b->n_tensors ? b->tensors[x] : b->shapes[x - b->n_tensors];
                int64_t ne = 0;
                size_t need = 0;
                if (!value_nelem(v, &ne) || !tosac_dtype_storage_bytes(v->dtype, ne, &need))
                    return tosac_diag_add(bc->d, TOSAC_ERR_INTERNAL, "constant '%s': size not computable", nm(v->name));
                if (!v->data && v->ext_size > 1)
                    return tosac_diag_add(bc->d, TOSAC_ERR_UNSUPPORTED,
                                          "block '%s': the data of constant '%s' is stored outside the flatbuffer (offset/size), which the runtime does not load",
                                          nm(b->name), nm(v->name));
                if (need == 0) continue; /* e.g. the empty shape of a reshape to rank 0: nothing to load */
                if (!v->data || v->data_len < need)
                    return tosac_diag_add(bc->d, TOSAC_ERR_TOSA_ERROR,
                                          "block '%s': constant '%s' has %zu data bytes, %s %lld elements need %zu",
                                          nm(b->name), nm(v->name), v->data ? v->data_len : (size_t)0,
                                          tosac_dtype_name(v->dtype), (long long)ne, need);
                rt_decode(v->dtype, value_f64(bc->o, v->dtype), false, v->data, ne, bc->p->consts + bc->cslot[k]);
            }
        }
    }
    return TOSAC_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Values                                                                                        */

static tosac_status nomem(bctx *bc) { return tosac_diag_add(bc->d, TOSAC_ERR_NOMEM, "tosac_program_create: out of memory"); }

static void val_init(rt_val *v, uint32_t inst)
{
    memset(v, 0, sizeof *v);
    v->inst = inst;
    v->link = RT_NONE;
    v->var = RT_NONE;
    v->buf = RT_NONE;
    v->first = INT32_MAX;
    v->last = -1;
}

/* The runtime value of IR value v as seen from instance `inst` (its own values, then those of the
   enclosing instances); RT_NONE if v belongs to none of them. */
static uint32_t val_of(const tosac_program *p, uint32_t inst, const tosac_value *v)
{
    if (!v) return RT_NONE;
    for (int32_t i = (int32_t)inst; i >= 0; i = p->insts[i].parent) {
        const tosac_block *b = p->insts[i].ir;
        if (v->block != b) continue;
        int64_t k = any_index(b, v);
        return k < 0 ? RT_NONE : p->insts[i].val_base + (uint32_t)k;
    }
    return RT_NONE;
}

static tosac_status set_type(bctx *bc, rt_val *rv, const tosac_value *v)
{
    int64_t ne;
    rv->dtype = v->dtype;
    rv->rank = v->rank;
    rv->f64 = value_f64(bc->o, v->dtype);
    if (!value_nelem(v, &ne) || !exec_bytes(v->dtype, rv->f64, ne, &rv->nbytes))
        return tosac_diag_add(bc->d, TOSAC_ERR_UNSUPPORTED, "tensor '%s' is too large or has no valid type or shape",
                              nm(v->name));
    rv->nelem = ne;
    if (v->rank > 0) {
        int64_t *sh = tosac_arena_memdup(&bc->p->mem, v->shape, (size_t)v->rank * sizeof(int64_t));
        if (!sh) return nomem(bc);
        rv->shape = sh;
    }
    return TOSAC_OK;
}

static void copy_type(rt_val *dst, const rt_val *src)
{
    dst->dtype = src->dtype;
    dst->rank = src->rank;
    dst->shape = src->shape;
    dst->nelem = src->nelem;
    dst->nbytes = src->nbytes;
    dst->f64 = src->f64;
}

/* Creates the values of instance `inst` (block gi). */
static tosac_status add_values(bctx *bc, uint32_t inst, uint32_t gi)
{
    tosac_program *p = bc->p;
    const tosac_block *b = p->insts[inst].ir;
    uint64_t n64 = (uint64_t)b->n_tensors + b->n_shapes + b->n_undeclared;
    if (n64 + p->n_vals > bc->max_vals)
        return tosac_diag_add(bc->d, TOSAC_ERR_UNSUPPORTED,
                              "the program expands to more than %llu values (sub-blocks are copied per control-flow operator; see max_ops)",
                              (unsigned long long)bc->max_vals);
    uint32_t n = (uint32_t)n64, base = p->n_vals;
    if (!GROW(p->vals, p->cap_vals, (size_t)base + n)) return nomem(bc);
    p->insts[inst].val_base = base;
    p->insts[inst].n_vals = n;
    p->n_vals = base + n;
    for (uint32_t k = 0; k < n; k++) val_init(&p->vals[base + k], inst);
    uint32_t nt = b->n_tensors, ns = b->n_shapes;
    for (uint32_t k = 0; k < n; k++) {
        rt_val *rv = &p->vals[base + k];
        const tosac_value *v = k < nt ? b->tensors[k] : k < nt + ns ? b->shapes[k - nt] : b->undeclared[k - nt - ns];
        if (!v) continue;
        rv->ir = v;
        if (!(rv->name = tosac_arena_strdup(&p->mem, nm(v->name)))) return nomem(bc);
        if (k >= nt + ns) {
            /* an implicit capture: the nearest enclosing block declaring the name */
            uint32_t target = RT_NONE;
            for (int32_t a = p->insts[inst].parent; a >= 0 && target == RT_NONE; a = p->insts[a].parent) {
                const tosac_value *o = v->name ? tosac_block_find(p->insts[a].ir, v->name) : NULL;
                if (o && o->declared) target = val_of(p, (uint32_t)a, o);
            }
            if (target == RT_NONE) {
                rv->unresolved = true;
                continue;
            }
            /* The validator checked the block with the enclosing blocks of its first use (the same
               depth-first order as here); every other instance must see the very same values. */
            const tosac_value **first = &bc->capture[bc->uoff[gi] + (k - nt - ns)];
            const tosac_value *tv = p->vals[target].ir;
            if (!*first) {
                *first = tv;
            } else if (*first != tv) {
                return tosac_diag_add(bc->d, TOSAC_ERR_UNSUPPORTED,
                                      "block '%s' is run from two places where '%s' names different values of enclosing blocks",
                                      nm(b->name), nm(v->name));
            }
            rv->kind = RV_LINK;
            rv->link = target;
            copy_type(rv, &p->vals[target]);
            continue;
        }
        if (v->is_unranked) continue; /* rejected by the validator when used */
        tosac_status st = set_type(bc, rv, v);
        if (st != TOSAC_OK) return st;
        size_t slot = bc->cslot[bc->voff[gi] + k];
        if (v->variable) {
            rv->kind = RV_VAR;
        } else if (slot != CS_NONE) {
            rv->kind = RV_CONST;
            if (slot == CS_BORROW)
                rv->borrowed = v->data;
            else
                rv->off = slot;
        }
    }
    return TOSAC_OK;
}

static tosac_status push_idx(bctx *bc, uint32_t v, uint32_t *at)
{
    tosac_program *p = bc->p;
    if (!GROW(p->idx, p->cap_idx, (size_t)p->n_idx + 1)) return nomem(bc);
    if (at) *at = p->n_idx;
    p->idx[p->n_idx++] = v;
    return TOSAC_OK;
}

static tosac_status push_copy(bctx *bc, uint32_t src, uint32_t dst)
{
    tosac_program *p = bc->p;
    if (!GROW(p->copies, p->cap_copies, (size_t)p->n_copies + 1)) return nomem(bc);
    p->copies[p->n_copies].src = src;
    p->copies[p->n_copies].dst = dst;
    p->n_copies++;
    p->vals[src].used = p->vals[dst].used = true;
    return TOSAC_OK;
}

/* A value the runtime adds (loop state, staging), of instance `inst`, typed like `like`. */
static tosac_status add_synthetic(bctx *bc, uint32_t inst, uint32_t like, const char *suffix, uint32_t *out)
{
    tosac_program *p = bc->p;
    if (!GROW(p->vals, p->cap_vals, (size_t)p->n_vals + 1)) return nomem(bc);
    rt_val *v = &p->vals[p->n_vals];
    val_init(v, inst);
    copy_type(v, &p->vals[like]);
    v->used = true;
    const char *base = p->vals[like].name ? p->vals[like].name : "(null)";
    size_t len = strlen(base) + strlen(suffix) + 1;
    char *name = tosac_arena_alloc(&p->mem, len);
    if (!name) return nomem(bc);
    snprintf(name, len, "%s%s", base, suffix);
    v->name = name;
    *out = p->n_vals++;
    return TOSAC_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Block instances                                                                               */

static tosac_status build_inst(bctx *bc, uint32_t ri, uint32_t bi, int32_t parent, int32_t parent_op, uint32_t depth,
                               uint32_t *out);

/* Resolves a COND_IF / WHILE_LOOP graph name as the validator does: a region (its first block),
   else a block of the current region. */
static bool find_sub(const bctx *bc, uint32_t cur_ri, const tosac_node *n, unsigned id, uint32_t *ri, uint32_t *bi)
{
    const tosac_attr_val *a = &n->attr[id];
    if (!a->present || !a->data || a->len == 0) return false;
    const char *s = a->data;
    size_t len = 0;
    while (len < a->len && s[len]) len++;
    const tosac_graph *g = bc->g;
    for (uint32_t r = 0; r < g->n_regions; r++) {
        const tosac_region *reg = g->regions[r];
        if (!reg || !reg->name || strlen(reg->name) != len || memcmp(reg->name, s, len)) continue;
        if (reg->n_blocks > 0 && reg->blocks[0]) {
            *ri = r;
            *bi = 0;
            return true;
        }
        break;
    }
    const tosac_region *cur = g->regions[cur_ri];
    for (uint32_t b = 0; b < cur->n_blocks; b++) {
        const tosac_block *blk = cur->blocks[b];
        if (blk && blk->name && strlen(blk->name) == len && !memcmp(blk->name, s, len)) {
            *ri = cur_ri;
            *bi = b;
            return true;
        }
    }
    return false;
}

static tosac_status op_error(bctx *bc, uint32_t inst, const tosac_node *n, tosac_status code, const char *fmt,
                             const char *arg)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, arg);
    return tosac_diag_add(bc->d, code, "block '%s' op %u (%s): %s", nm(bc->p->insts[inst].name), (unsigned)n->index,
                          tosac_op_name(n->op), msg);
}

/* Binds sub-block input `c` to value `a` of the operator. */
static tosac_status pin_input(bctx *bc, uint32_t inst, const tosac_node *n, uint32_t c, uint32_t a)
{
    rt_val *v = &bc->p->vals[c];
    if (v->kind != RV_UNUSED)
        return op_error(bc, inst, n, TOSAC_ERR_UNSUPPORTED,
                        "sub-block input '%s' is a variable, a constant or listed twice; the runtime cannot bind it",
                        v->name);
    v->kind = RV_LINK;
    v->link = a;
    v->used = true;
    return TOSAC_OK;
}

static tosac_status bind_cond_if(bctx *bc, uint32_t inst, uint32_t oi, const tosac_node *n)
{
    tosac_program *p = bc->p;
    for (int k = 0; k < 2; k++) {
        rt_op *op = &p->ops[oi];
        uint32_t ci = op->sub[k];
        rt_inst *c = &p->insts[ci];
        if (op->n_in < 1 || c->n_in != op->n_in - 1 || c->n_out != op->n_out)
            return op_error(bc, inst, n, TOSAC_ERR_TOSA_ERROR, "%s block does not match the operand lists",
                            k ? "else" : "then");
        for (uint32_t j = 0; j < c->n_in; j++) {
            tosac_status st = pin_input(bc, inst, n, p->idx[c->in_base + j], p->idx[op->in_base + 1 + j]);
            if (st != TOSAC_OK) return st;
        }
        uint32_t copy_base = p->n_copies;
        for (uint32_t j = 0; j < c->n_out; j++) {
            uint32_t r = p->idx[c->out_base + j], x = p->idx[op->out_base + j];
            rt_val *rv = &p->vals[r];
            /* a result produced by an operator of the branch is produced in place into the
               operator's output; anything else is copied when the branch ends */
            if (rv->kind == RV_UNUSED && rv->produced && rv->inst == ci && p->vals[x].kind == RV_UNUSED) {
                rv->kind = RV_LINK;
                rv->link = x;
                continue;
            }
            tosac_status st = push_copy(bc, r, x);
            if (st != TOSAC_OK) return st;
        }
        c = &p->insts[ci];
        c->copy_base = copy_base;
        c->n_copy = p->n_copies - copy_base;
    }
    return TOSAC_OK;
}

static tosac_status bind_while(bctx *bc, uint32_t inst, uint32_t oi, const tosac_node *n)
{
    tosac_program *p = bc->p;
    tosac_status st;
    uint32_t cnt = p->ops[oi].n_in;
    if (p->ops[oi].n_out != cnt) return op_error(bc, inst, n, TOSAC_ERR_TOSA_ERROR, "%s", "input and output lists differ");
    const rt_inst *cond = &p->insts[p->ops[oi].sub[0]], *body = &p->insts[p->ops[oi].sub[1]];
    if (cond->n_in != cnt || cond->n_out != 1 || body->n_in != cnt || body->n_out != cnt)
        return op_error(bc, inst, n, TOSAC_ERR_TOSA_ERROR, "%s", "cond/body blocks do not match the loop-carried list");
    /* loop state: the outputs themselves when they are plain tensors */
    uint32_t state_base = p->n_idx;
    for (uint32_t j = 0; j < cnt; j++) {
        uint32_t x = p->idx[p->ops[oi].out_base + j], s = x;
        if (p->vals[x].kind != RV_UNUSED && (st = add_synthetic(bc, inst, x, ".state", &s)) != TOSAC_OK) return st;
        if ((st = push_idx(bc, s, NULL)) != TOSAC_OK) return st;
    }
    p->ops[oi].state_base = state_base;
    p->ops[oi].pre_base = p->n_copies;
    for (uint32_t j = 0; j < cnt; j++)
        if ((st = push_copy(bc, p->idx[p->ops[oi].in_base + j], p->idx[state_base + j])) != TOSAC_OK) return st;
    p->ops[oi].n_pre = cnt;
    for (int k = 0; k < 2; k++) {
        const rt_inst *c = &p->insts[p->ops[oi].sub[k]];
        uint32_t c_in = c->in_base;
        for (uint32_t j = 0; j < cnt; j++)
            if ((st = pin_input(bc, inst, n, p->idx[c_in + j], p->idx[state_base + j])) != TOSAC_OK) return st;
    }
    /* body results: a result that is one of the loop inputs (another state value) goes through a
       staging buffer so that permutations of the state are committed correctly */
    uint32_t body_i = p->ops[oi].sub[1];
    p->ops[oi].stage_base = p->n_copies;
    for (uint32_t j = 0; j < cnt; j++) {
        uint32_t o = p->idx[p->insts[body_i].out_base + j], f = rt_final_val(p, o);
        bool is_state = false;
        for (uint32_t m = 0; m < cnt && !is_state; m++) is_state = m != j && f == p->idx[state_base + m];
        if (!is_state) continue;
        uint32_t s;
        if ((st = add_synthetic(bc, body_i, o, ".stage", &s)) != TOSAC_OK) return st;
        if ((st = push_copy(bc, o, s)) != TOSAC_OK) return st;
    }
    p->ops[oi].n_stage = p->n_copies - p->ops[oi].stage_base;
    p->ops[oi].commit_base = p->n_copies;
    uint32_t staged = p->ops[oi].stage_base;
    for (uint32_t j = 0; j < cnt; j++) {
        uint32_t o = p->idx[p->insts[body_i].out_base + j], f = rt_final_val(p, o), s = p->idx[state_base + j];
        if (f == s) continue;
        uint32_t src = o;
        if (staged < p->ops[oi].stage_base + p->ops[oi].n_stage && p->copies[staged].src == o) {
            bool is_state = false;
            for (uint32_t m = 0; m < cnt && !is_state; m++) is_state = m != j && f == p->idx[state_base + m];
            if (is_state) src = p->copies[staged++].dst;
        }
        if ((st = push_copy(bc, src, s)) != TOSAC_OK) return st;
    }
    p->ops[oi].n_commit = p->n_copies - p->ops[oi].commit_base;
    p->ops[oi].post_base = p->n_copies;
    for (uint32_t j = 0; j < cnt; j++) {
        uint32_t s = p->idx[state_base + j], x = p->idx[p->ops[oi].out_base + j];
        if (s != x && (st = push_copy(bc, s, x)) != TOSAC_OK) return st;
    }
    p->ops[oi].n_post = p->n_copies - p->ops[oi].post_base;
    return TOSAC_OK;
}

static bool touches_variable(const tosac_node *n)
{
    for (uint32_t i = 0; i < n->n_inputs; i++)
        if (n->inputs[i] && n->inputs[i]->variable) return true;
    for (uint32_t i = 0; i < n->n_outputs; i++)
        if (n->outputs[i] && n->outputs[i]->variable) return true;
    return false;
}

static uint8_t op_mode(const tosac_node *n)
{
    switch (n->op) {
    case TOSAC_OP_CONST:
    case TOSAC_OP_CONST_SHAPE:
    case TOSAC_OP_VARIABLE: return M_NOP;
    case TOSAC_OP_VARIABLE_READ: return n->n_inputs >= 1 && n->n_outputs >= 1 ? M_COPY : M_NOP;
    case TOSAC_OP_VARIABLE_WRITE:
        if (n->n_inputs == 2 && n->n_outputs == 0) return M_COPY_IN;
        return n->n_inputs >= 1 && n->n_outputs >= 1 ? M_COPY : M_NOP;
    case TOSAC_OP_IDENTITY: return touches_variable(n) ? M_COPY : M_ALIAS;
    case TOSAC_OP_RESHAPE: return M_ALIAS;
    case TOSAC_OP_COND_IF: return M_IF;
    case TOSAC_OP_WHILE_LOOP: return M_WHILE;
    default: return M_KERNEL;
    }
}

/* Program-owned copy of the node's attributes (the kernels read them at run time). */
static tosac_status copy_attrs(bctx *bc, const tosac_node *n, const tosac_attr_val **out)
{
    bool any = false;
    for (unsigned id = 0; id < TOSAC_ATTR_MAX_FIELDS; id++) any |= n->attr[id].present;
    if (!any) {
        *out = k_no_attrs;
        return TOSAC_OK;
    }
    tosac_attr_val *a = tosac_arena_alloc(&bc->p->mem, sizeof(tosac_attr_val) * TOSAC_ATTR_MAX_FIELDS);
    if (!a) return nomem(bc);
    for (unsigned id = 0; id < TOSAC_ATTR_MAX_FIELDS; id++) {
        a[id] = n->attr[id];
        if (!a[id].present || !a[id].data) continue;
        size_t bytes = a[id].len;
        switch (tosac_op_attr_kind(n->op, id)) {
        case TOSAC_AK_I32V: bytes = (size_t)a[id].len * sizeof(int32_t); break;
        case TOSAC_AK_STR: bytes = (size_t)a[id].len + 1; break;
        default: break;
        }
        void *d = tosac_arena_memdup(&bc->p->mem, a[id].data, bytes);
        if (!d) return nomem(bc);
        a[id].data = d;
    }
    *out = a;
    return TOSAC_OK;
}

static tosac_status add_operands(bctx *bc, uint32_t inst, const tosac_node *n, bool outputs, uint32_t *base)
{
    tosac_program *p = bc->p;
    uint32_t cnt = outputs ? n->n_outputs : n->n_inputs;
    tosac_value *const *list = outputs ? n->outputs : n->inputs;
    *base = p->n_idx;
    for (uint32_t i = 0; i < cnt; i++) {
        const tosac_value *v = list ? list[i] : NULL;
        uint32_t rv = val_of(p, inst, v);
        if (rv == RT_NONE || p->vals[rv].unresolved || !p->vals[rv].ir)
            return op_error(bc, inst, n, TOSAC_ERR_TOSA_ERROR,
                            "operand '%s' is neither a value of the block nor of an enclosing block",
                            v ? nm(v->name) : "(null)");
        if (outputs) {
            if (p->vals[rv].inst != inst)
                return op_error(bc, inst, n, TOSAC_ERR_TOSA_ERROR, "result '%s' is not a value of the block",
                                nm(v->name));
            p->vals[rv].produced = true;
        }
        p->vals[rv].used = true;
        tosac_status st = push_idx(bc, rv, NULL);
        if (st != TOSAC_OK) return st;
    }
    return TOSAC_OK;
}

static tosac_status add_block_io(bctx *bc, uint32_t inst, bool outputs)
{
    tosac_program *p = bc->p;
    const tosac_block *b = p->insts[inst].ir;
    uint32_t cnt = outputs ? b->n_outputs : b->n_inputs;
    tosac_value *const *list = outputs ? b->outputs : b->inputs;
    uint32_t base = p->n_idx;
    for (uint32_t i = 0; i < cnt; i++) {
        const tosac_value *v = list ? list[i] : NULL;
        int64_t k = decl_index(b, v);
        if (k < 0)
            return tosac_diag_add(bc->d, TOSAC_ERR_TOSA_ERROR, "block '%s' %s '%s' is not a tensor of the block",
                                  nm(b->name), outputs ? "output" : "input", v ? nm(v->name) : "(null)");
        uint32_t rv = p->insts[inst].val_base + (uint32_t)k;
        p->vals[rv].used = p->vals[rv].block_io = true;
        tosac_status st = push_idx(bc, rv, NULL);
        if (st != TOSAC_OK) return st;
    }
    if (outputs) {
        p->insts[inst].out_base = base;
        p->insts[inst].n_out = cnt;
    } else {
        p->insts[inst].in_base = base;
        p->insts[inst].n_in = cnt;
    }
    return TOSAC_OK;
}

static tosac_status build_inst(bctx *bc, uint32_t ri, uint32_t bi, int32_t parent, int32_t parent_op, uint32_t depth,
                               uint32_t *out)
{
    tosac_program *p = bc->p;
    const tosac_block *b = bc->g->regions[ri]->blocks[bi];
    tosac_status st;
    if (depth > RT_MAX_DEPTH)
        return tosac_diag_add(bc->d, TOSAC_ERR_UNSUPPORTED, "block '%s': control flow nested deeper than %d",
                              nm(b->name), RT_MAX_DEPTH);
    for (int32_t a = parent; a >= 0; a = p->insts[a].parent)
        if (p->insts[a].ir == b)
            return tosac_diag_add(bc->d, TOSAC_ERR_TOSA_ERROR, "block '%s' runs itself (recursive control flow)",
                                  nm(b->name));
    if (!GROW(p->insts, p->cap_insts, (size_t)p->n_insts + 1)) return nomem(bc);
    uint32_t ii = p->n_insts++;
    rt_inst *I = &p->insts[ii];
    memset(I, 0, sizeof *I);
    I->ir = b;
    I->ri = ri;
    I->gi = bc->roff[ri] + bi;
    I->parent = parent;
    I->parent_op = parent_op;
    I->depth = depth;
    if (!(I->name = tosac_arena_strdup(&p->mem, nm(b->name)))) return nomem(bc);
    I->step_begin = bc->step++;
    if ((st = add_values(bc, ii, p->insts[ii].gi)) != TOSAC_OK) return st;
    if ((st = add_block_io(bc, ii, false)) != TOSAC_OK || (st = add_block_io(bc, ii, true)) != TOSAC_OK) return st;

    uint32_t nn = b->n_nodes;
    if ((uint64_t)p->n_ops + nn > bc->max_ops)
        return tosac_diag_add(bc->d, TOSAC_ERR_UNSUPPORTED,
                              "the program expands to more than %u operator instances (max_ops)", (unsigned)bc->max_ops);
    if (!GROW(p->ops, p->cap_ops, (size_t)p->n_ops + nn)) return nomem(bc);
    uint32_t op_base = p->n_ops;
    p->n_ops += nn;
    p->insts[ii].op_base = op_base;
    p->insts[ii].n_ops = nn;
    for (uint32_t k = 0; k < nn; k++) {
        const tosac_node *n = b->nodes[k];
        uint32_t oi = op_base + k;
        memset(&p->ops[oi], 0, sizeof(rt_op));
        p->ops[oi].scratch_buf = RT_NONE;
        p->ops[oi].fused_into = p->ops[oi].fused_out = RT_NONE;
        p->ops[oi].sub[0] = p->ops[oi].sub[1] = RT_NONE;
        if (!n) return tosac_diag_add(bc->d, TOSAC_ERR_TOSA_ERROR, "block '%s': operator %lu is missing", nm(b->name), (unsigned long)k);
        p->ops[oi].op = n->op;
        p->ops[oi].index = k;
        p->ops[oi].inst = ii;
        p->ops[oi].mode = op_mode(n);
        p->ops[oi].fn = tosac_kernel_for(n->op);
        uint32_t in_base, out_base;
        if ((st = add_operands(bc, ii, n, false, &in_base)) != TOSAC_OK) return st;
        if ((st = add_operands(bc, ii, n, true, &out_base)) != TOSAC_OK) return st;
        const tosac_attr_val *attrs = k_no_attrs;
        if ((st = copy_attrs(bc, n, &attrs)) != TOSAC_OK) return st;
        rt_op *op = &p->ops[oi];
        op->in_base = in_base;
        op->n_in = n->n_inputs;
        op->out_base = out_base;
        op->n_out = n->n_outputs;
        op->call.op = n->op;
        op->call.n_in = n->n_inputs;
        op->call.n_out = n->n_outputs;
        op->call.attr = attrs;
        op->step = bc->step++;
        if (op->mode == M_IF || op->mode == M_WHILE) {
            uint32_t sri[2], sbi[2];
            static const char *const if_names[2] = {"then_graph", "else_graph"};
            static const char *const loop_names[2] = {"cond_graph", "body_graph"};
            for (unsigned s = 0; s < 2; s++) {
                const char *an = op->mode == M_IF ? if_names[s] : loop_names[s];
                if (!find_sub(bc, ri, n, s, &sri[s], &sbi[s]))
                    return op_error(bc, ii, n, TOSAC_ERR_TOSA_ERROR, "%s names no region or block", an);
            }
            bool is_if = p->ops[oi].mode == M_IF;
            for (unsigned s = 0; s < 2; s++) {
                uint32_t child;
                if ((st = build_inst(bc, sri[s], sbi[s], (int32_t)ii, (int32_t)oi, depth + 1, &child)) != TOSAC_OK)
                    return st;
                p->ops[oi].sub[s] = child;
            }
            st = is_if ? bind_cond_if(bc, ii, oi, n) : bind_while(bc, ii, oi, n);
            if (st != TOSAC_OK) return st;
            bc->step++; /* closing step: results and loop state copied out */
        }
        p->ops[oi].step_end = bc->step - 1;
    }
    p->insts[ii].step_end = bc->step++;
    *out = ii;
    return TOSAC_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Variables                                                                                     */

typedef struct var_key {
    const char *key;
    uint32_t val;
} var_key;

static int cmp_var_key(const void *pa, const void *pb)
{
    const var_key *a = pa, *b = pb;
    int r = strcmp(a->key, b->key);
    if (r) return r;
    return a->val < b->val ? -1 : a->val > b->val;
}

/* One variable per distinct name; every RV_VAR value is bound to one. */
static tosac_status build_variables(bctx *bc)
{
    tosac_program *p = bc->p;
    uint32_t n = 0;
    for (uint32_t v = 0; v < p->n_vals; v++) n += p->vals[v].kind == RV_VAR;
    if (n == 0) return TOSAC_OK;
    var_key *keys = tosac_malloc((size_t)n * sizeof(var_key));
    if (!keys) return nomem(bc);
    uint32_t k = 0;
    for (uint32_t v = 0; v < p->n_vals; v++) {
        if (p->vals[v].kind != RV_VAR) continue;
        const tosac_value *iv = p->vals[v].ir;
        keys[k].key = iv->variable_name && iv->variable_name[0] ? iv->variable_name : nm(iv->name);
        keys[k].val = v;
        k++;
    }
    qsort(keys, n, sizeof(var_key), cmp_var_key);
    tosac_status st = TOSAC_OK;
    size_t off = 0;
    for (uint32_t i = 0; i < n && st == TOSAC_OK;) {
        uint32_t j = i;
        while (j < n && !strcmp(keys[j].key, keys[i].key)) j++;
        if (!GROW(p->vars, p->cap_vars, (size_t)p->n_vars + 1)) {
            st = nomem(bc);
            break;
        }
        rt_var *var = &p->vars[p->n_vars];
        memset(var, 0, sizeof *var);
        /* the lowest value index is the one of the outermost instance */
        uint32_t rep = keys[i].val;
        for (uint32_t m = i; m < j; m++) rep = keys[m].val < rep ? keys[m].val : rep;
        var->val = rep;
        if (!(var->name = tosac_arena_strdup(&p->mem, keys[i].key))) {
            st = nomem(bc);
            break;
        }
        var->nbytes = p->vals[rep].nbytes;
        var->off = off;
        for (uint32_t m = i; m < j && st == TOSAC_OK; m++) {
            rt_val *rv = &p->vals[keys[m].val];
            if (rv->dtype != p->vals[rep].dtype || !rt_same_dims(rv, &p->vals[rep]))
                st = tosac_diag_add(bc->d, TOSAC_ERR_TOSA_ERROR,
                                    "variable '%s' is declared with different types or shapes ('%s' in block '%s', '%s' in block '%s')",
                                    var->name, p->vals[rep].name, p->insts[p->vals[rep].inst].name, rv->name,
                                    p->insts[rv->inst].name);
            rv->var = p->n_vars;
            if (var->has_init) continue;
            const tosac_value *iv = rv->ir;
            int64_t x = decl_index(p->insts[rv->inst].ir, iv);
            size_t slot = x >= 0 ? bc->cslot[bc->voff[p->insts[rv->inst].gi] + (size_t)x] : CS_NONE;
            if (slot == CS_NONE) continue;
            var->has_init = true;
            if (slot == CS_BORROW)
                var->init_borrowed = iv->data;
            else
                var->init_off = slot;
        }
        if (!tosac_add_size(off, rt_align(var->nbytes), &off)) st = tosac_diag_add(bc->d, TOSAC_ERR_NOMEM, "variables too large");
        p->n_vars++;
        i = j;
    }
    tosac_free(keys, (size_t)n * sizeof(var_key));
    p->var_size = off;
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Entry point                                                                                   */

static void *alloc_aligned(size_t size, void **raw, size_t *raw_size)
{
    size_t n;
    if (!tosac_add_size(size, RT_ALIGN - 1, &n)) return NULL;
    void *r = tosac_malloc(n);
    if (!r) return NULL;
    *raw = r;
    *raw_size = n;
    uintptr_t a = ((uintptr_t)r + (RT_ALIGN - 1)) & ~(uintptr_t)(RT_ALIGN - 1);
    return (void *)a;
}

/* Final storage kinds: RESHAPE / IDENTITY of a constant is that constant (no copy, no arena);
   graph inputs/outputs; every other used value in the arena. */
static tosac_status finish_kinds(bctx *bc)
{
    tosac_program *p = bc->p;
    for (uint32_t k = 0; k < p->n_ops; k++) {
        const rt_op *op = &p->ops[k];
        if (op->mode != M_ALIAS || op->n_in < 1 || op->n_out != 1) continue;
        uint32_t f = rt_final_val(p, p->idx[op->in_base]);
        rt_val *o = &p->vals[p->idx[op->out_base]];
        if (p->vals[f].kind == RV_CONST && o->kind == RV_UNUSED && o->inst == op->inst &&
            p->vals[f].nbytes == o->nbytes) {
            o->kind = RV_LINK;
            o->link = f;
        }
    }
    const rt_inst *m = &p->insts[0];
    size_t nin = m->n_in ? m->n_in : 1, nout = m->n_out ? m->n_out : 1;
    p->cap_in = nin;
    p->cap_out = nout;
    p->in_ext = tosac_calloc(nin, sizeof(void *));
    p->out_ext = tosac_calloc(nout, sizeof(void *));
    p->out_direct = tosac_calloc(nout, sizeof(bool));
    if (!p->in_ext || !p->out_ext || !p->out_direct) return nomem(bc);
    for (uint32_t i = 0; i < m->n_in; i++) {
        rt_val *v = &p->vals[p->idx[m->in_base + i]];
        if (bc->o->external_io && v->kind == RV_UNUSED) v->kind = RV_EXT;
    }
    for (uint32_t i = 0; i < m->n_out; i++) {
        uint32_t vi = p->idx[m->out_base + i];
        rt_val *v = &p->vals[vi];
        bool first = true;
        for (uint32_t j = 0; j < i; j++) first &= p->idx[m->out_base + j] != vi;
        bool is_input = false;
        for (uint32_t j = 0; j < m->n_in; j++) is_input |= p->idx[m->in_base + j] == vi;
        p->out_direct[i] = first && !is_input && v->produced && v->inst == 0 &&
                           (v->kind == RV_UNUSED || v->kind == RV_ARENA);
        if (bc->o->external_io && p->out_direct[i]) v->kind = RV_EXT;
    }
    for (uint32_t v = 0; v < p->n_vals; v++)
        if (p->vals[v].kind == RV_UNUSED && p->vals[v].used && !p->vals[v].unresolved) p->vals[v].kind = RV_ARENA;
    return TOSAC_OK;
}

/* Kernel tensors and calls (constants and variables already have their data). */
static tosac_status prepare_calls(bctx *bc)
{
    tosac_program *p = bc->p;
    p->kt = tosac_calloc(p->n_idx ? p->n_idx : 1, sizeof(tosac_ktensor));
    if (!p->kt) return nomem(bc);
    p->cap_kt = p->n_idx ? p->n_idx : 1;
    for (uint32_t v = 0; v < p->n_vals; v++)
        if (p->vals[v].kind == RV_CONST || p->vals[v].kind == RV_VAR) p->vals[v].data = rt_fixed_data(p, &p->vals[v]);
    for (uint32_t v = 0; v < p->n_vals; v++)
        if (p->vals[v].kind == RV_LINK) p->vals[v].data = p->vals[rt_final_val(p, v)].data;
    for (uint32_t j = 0; j < p->n_idx; j++) {
        const rt_val *rv = &p->vals[p->idx[j]];
        tosac_ktensor *t = &p->kt[j];
        t->data = rv->data;
        t->dtype = rv->dtype;
        t->f64 = rv->f64;
        t->rank = rv->rank;
        t->shape = rv->shape;
        t->nelem = rv->nelem;
    }
    for (uint32_t j = 0; j < p->n_idx; j++) p->kt[j].constant = p->vals[rt_final_val(p, p->idx[j])].kind == RV_CONST;
    switch (bc->o->kernel_isa) {
    case TOSAC_PROGRAM_ISA_PORTABLE: p->isa = TOSAC_KISA_PORTABLE; break;
    case TOSAC_PROGRAM_ISA_MVE: p->isa = TOSAC_KISA_MVE; break;
    default: p->isa = tosac_kernel_isa(); break;
    }
    p->for_host = bc->o->kernel_isa == TOSAC_PROGRAM_ISA_HOST;
    for (uint32_t k = 0; k < p->n_ops; k++) {
        rt_op *op = &p->ops[k];
        op->call.in = p->kt + op->in_base;
        op->call.out = p->kt + op->out_base;
        op->call.isa = p->isa;
        op->call.flags = bc->o->conv_direct ? TOSAC_KCALL_CONV_DIRECT : 0u;
    }
    return TOSAC_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Messages                                                                                      */

void rt_op_label(const tosac_program *p, uint32_t op, char *buf, size_t size)
{
    if (!size) return;
    size_t len = 0;
    buf[0] = '\0';
    /* the chain of control-flow operators leading to `op`, outermost first */
    enum { MAXC = 32 };
    uint32_t chain[MAXC];
    int n = 0;
    bool elided = false;
    for (int32_t k = (int32_t)op; k >= 0; k = p->insts[p->ops[k].inst].parent_op) {
        if (n == MAXC) {
            elided = true;
            break;
        }
        chain[n++] = (uint32_t)k;
    }
    if (elided) tosac_fixbuf_appendf(buf, size, &len, "... > ");
    for (int i = n - 1; i >= 0; i--) {
        const rt_op *o = &p->ops[chain[i]];
        const rt_inst *I = &p->insts[o->inst];
        if (I->parent >= 0 || (elided && i == n - 1)) tosac_fixbuf_appendf(buf, size, &len, "block '%s' ", I->name);
        tosac_fixbuf_appendf(buf, size, &len, "op %u (%s)", (unsigned)o->index, tosac_op_name(o->op));
        if (i) tosac_fixbuf_appendf(buf, size, &len, " > ");
    }
    const rt_op *o = &p->ops[op];
    tosac_fixbuf_appendf(buf, size, &len, " [");
    for (uint32_t i = 0; i < o->n_in; i++)
        tosac_fixbuf_appendf(buf, size, &len, "%s%s", i ? ", " : "", p->vals[p->idx[o->in_base + i]].name);
    tosac_fixbuf_appendf(buf, size, &len, "%s", o->n_in ? " -> " : "-> ");
    for (uint32_t i = 0; i < o->n_out; i++)
        tosac_fixbuf_appendf(buf, size, &len, "%s%s", i ? ", " : "", p->vals[p->idx[o->out_base + i]].name);
    tosac_fixbuf_appendf(buf, size, &len, "]");
}


tosac_status rt_build(tosac_program *p, const tosac_graph *g, const tosac_program_opts *o, tosac_diag *d)
{
    bctx bc;
    memset(&bc, 0, sizeof bc);
    bc.p = p;
    bc.g = g;
    bc.o = o;
    bc.d = d;
    bc.max_ops = o->max_ops ? o->max_ops : RT_DEFAULT_MAX_OPS;
    if (bc.max_ops > RT_MAX_OPS_LIMIT) bc.max_ops = RT_MAX_OPS_LIMIT; /* steps stay within int32 */
    tosac_status st = TOSAC_OK;
    if (g->n_regions == 0 || !g->regions[0]) return tosac_diag_add(d, TOSAC_ERR_TOSA_ERROR, "the graph has no regions");
    for (uint32_t r = 0; r < g->n_regions; r++)
        if (!g->regions[r]) return tosac_diag_add(d, TOSAC_ERR_TOSA_ERROR, "region %u is missing", (unsigned)r);
    bc.roff = tosac_calloc((size_t)g->n_regions + 1, sizeof(uint32_t));
    if (!bc.roff) return nomem(&bc);
    for (uint32_t r = 0; r < g->n_regions; r++) bc.roff[r + 1] = bc.roff[r] + g->regions[r]->n_blocks;
    bc.nblocks = bc.roff[g->n_regions];
    bc.uoff = tosac_calloc((size_t)bc.nblocks + 1, sizeof(uint32_t));
    if (!bc.uoff) {
        st = nomem(&bc);
        goto done;
    }
    for (uint32_t r = 0, gi = 0; r < g->n_regions; r++)
        for (uint32_t bi = 0; bi < g->regions[r]->n_blocks; bi++, gi++) {
            const tosac_block *b = g->regions[r]->blocks[bi];
            size_t next = (size_t)bc.uoff[gi] + (b ? b->n_undeclared : 0);
            if (next >= UINT32_MAX) {
                st = tosac_diag_add(d, TOSAC_ERR_UNSUPPORTED, "too many undeclared names");
                goto done;
            }
            bc.uoff[gi + 1] = (uint32_t)next;
        }
    bc.ncaptures = bc.uoff[bc.nblocks];
    bc.capture = tosac_calloc(bc.ncaptures + 1, sizeof(*bc.capture));
    if (!bc.capture) {
        st = nomem(&bc);
        goto done;
    }
    st = layout_constants(g, o, &bc.voff, &bc.cslot, &bc.nslots, &bc.const_total);
    if (st != TOSAC_OK) {
        if (st == TOSAC_ERR_NOMEM) nomem(&bc);
        goto done;
    }
    /* every operator instance adds a handful of values; the graph's own values come once */
    bc.max_vals = (uint64_t)bc.max_ops * 8 + bc.nslots + bc.ncaptures;
    if (bc.max_vals > UINT32_MAX / 2) bc.max_vals = UINT32_MAX / 2;
    /* entry: block "main" of the first region, else its first block */
    const tosac_region *r0 = g->regions[0];
    uint32_t mbi = RT_NONE;
    for (uint32_t bi = 0; bi < r0->n_blocks && mbi == RT_NONE; bi++)
        if (r0->blocks[bi] && r0->blocks[bi]->name && !strcmp(r0->blocks[bi]->name, "main")) mbi = bi;
    if (mbi == RT_NONE && r0->n_blocks > 0 && r0->blocks[0]) mbi = 0;
    if (mbi == RT_NONE) {
        st = tosac_diag_add(d, TOSAC_ERR_TOSA_ERROR, "the first region has no block 'main'");
        goto done;
    }
    uint32_t main_inst;
    if ((st = build_inst(&bc, 0, mbi, -1, -1, 0, &main_inst)) != TOSAC_OK) goto done;
    p->n_steps = bc.step;
    if ((st = build_variables(&bc)) != TOSAC_OK) goto done;

    /* storage for constants and variables */
    p->const_size = bc.const_total;
    if (o->max_memory && (bc.const_total > o->max_memory || p->var_size > o->max_memory - bc.const_total)) {
        st = tosac_diag_add(d, TOSAC_ERR_NOMEM, "constants (%zu bytes) and variables (%zu bytes) exceed max_memory (%zu)",
                            bc.const_total, p->var_size, o->max_memory);
        goto done;
    }
    if (o->const_buffer) {
        if (o->const_buffer_size < bc.const_total || (uintptr_t)o->const_buffer % RT_ALIGN) {
            st = tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                                "const_buffer must be %d-byte aligned and hold %zu bytes (has %zu)", RT_ALIGN,
                                bc.const_total, o->const_buffer_size);
            goto done;
        }
        p->consts = o->const_buffer;
    } else if (bc.const_total) {
        p->consts = alloc_aligned(bc.const_total, &p->consts_raw, &p->consts_raw_size);
        if (!p->consts) {
            st = nomem(&bc);
            goto done;
        }
        p->own_consts = true;
    }
    if (p->var_size) {
        p->vardata = alloc_aligned(p->var_size, &p->var_raw, &p->var_raw_size);
        if (!p->vardata) {
            st = nomem(&bc);
            goto done;
        }
    }
    if ((st = fill_constants(&bc)) != TOSAC_OK) goto done;
    tosac_program_variables_reset(p);
    if ((st = finish_kinds(&bc)) != TOSAC_OK) goto done;
    st = prepare_calls(&bc);
done:
    tosac_free(bc.roff, ((size_t)g->n_regions + 1) * sizeof(uint32_t));
    tosac_free(bc.uoff, ((size_t)bc.nblocks + 1) * sizeof(uint32_t));
    tosac_free((void *)bc.capture, (bc.ncaptures + 1) * sizeof(*bc.capture));
    tosac_free(bc.voff, ((size_t)bc.nblocks + 1) * sizeof(uint32_t));
    tosac_free(bc.cslot, (bc.nslots + 1) * sizeof(size_t));
    return st;
}
