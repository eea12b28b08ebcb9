/* Program lifecycle and the public accessors of include/tosac/runtime.h. */
#include <string.h>

#include "core/alloc.h"
#include "core/diag.h"
#include "ir/graph.h"
#include "runtime/program.h"

tosac_program_opts tosac_program_opts_default(void)
{
    tosac_program_opts o;
    memset(&o, 0, sizeof o);
    o.validate = tosac_validate_opts_default();
    return o;
}

tosac_status tosac_program_const_size(const tosac_graph *g, const tosac_program_opts *opts, size_t *bytes)
{
    if (!g || !bytes) return TOSAC_ERR_INVALID_ARG;
    tosac_program_opts def = tosac_program_opts_default();
    for (uint32_t r = 0; r < g->n_regions; r++)
        if (!g->regions[r]) return TOSAC_ERR_INVALID_ARG;
    return rt_const_size(g, opts ? opts : &def, bytes);
}

void tosac_program_destroy(tosac_program *p)
{
    if (!p) return;
    tosac_free(p->vals, p->cap_vals * sizeof(rt_val));
    tosac_free(p->insts, p->cap_insts * sizeof(rt_inst));
    tosac_free(p->ops, p->cap_ops * sizeof(rt_op));
    tosac_free(p->idx, p->cap_idx * sizeof(uint32_t));
    tosac_free(p->kt, p->cap_kt * sizeof(tosac_ktensor));
    tosac_free(p->copies, p->cap_copies * sizeof(rt_copy));
    tosac_free(p->vars, p->cap_vars * sizeof(rt_var));
    tosac_free(p->bufs, p->cap_bufs * sizeof(rt_buf));
    tosac_free(p->entries, p->cap_entries * sizeof(uint32_t));
    tosac_free((void *)p->in_ext, p->cap_in * sizeof(void *));
    tosac_free(p->out_ext, p->cap_out * sizeof(void *));
    tosac_free(p->out_direct, p->cap_out * sizeof(bool));
    tosac_free(p->consts_raw, p->consts_raw_size);
    tosac_free(p->var_raw, p->var_raw_size);
    tosac_free(p->arena_raw, p->arena_raw_size);
    tosac_free(p->prepared_raw, p->prepared_raw_size);
    rt_pool_destroy(p->pool);
    tosac_arena_deinit(&p->mem);
    tosac_free(p, sizeof *p);
}

/* Smallest largest-operator output (elements) for which a program starts threads: below it a
   parallel-for costs more than it saves, and compile-time folding and calibration programs of
   single small operators would start threads for nothing. ds_cnn (largest output 8000 elements,
   convolutions of 0.5M multiply-adds in 2 pixel blocks) runs in 0.043 ms on 2 threads against
   0.067 ms on one. */
#define RT_POOL_MIN_ELEMS 4096

/* The thread pool, before the plan (which gives every worker its own scratch). */
static tosac_status start_pool(tosac_program *p, const tosac_program_opts *o, tosac_diag *d)
{
    uint32_t want = o->threads ? o->threads : rt_pool_default_threads();
    int64_t largest = 0;
    for (uint32_t k = 0; k < p->n_ops; k++) {
        const rt_op *op = &p->ops[k];
        if (op->mode == M_KERNEL && op->n_out && p->kt[op->out_base].nelem > largest)
            largest = p->kt[op->out_base].nelem;
    }
    if (largest < RT_POOL_MIN_ELEMS) want = 1;
    if (rt_pool_create(want, &p->pool) != TOSAC_OK)
        return tosac_diag_add(d, TOSAC_ERR_NOMEM, "tosac_program_create: cannot start %u threads", (unsigned)want);
    p->workers = rt_pool_workers(p->pool);
    for (uint32_t k = 0; k < p->n_ops; k++)
        p->ops[k].call.par = (tosac_kparallel){p->pool ? rt_pool_run : NULL, p->pool, p->workers};
    return TOSAC_OK;
}

/* opts.observe: main-block tensors (the main instance's first values, in tensor order) that no
   fusion may hide (fuse.c) */
static tosac_status mark_observed(tosac_program *p, const tosac_program_opts *o, tosac_diag *d)
{
    if (!o->observe)
        return o->n_observe ? tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_program_create: n_observe without observe")
                            : TOSAC_OK;
    const tosac_block *b = p->insts[0].ir;
    for (uint32_t i = 0; i < o->n_observe; i++) {
        if (!b || o->observe[i] >= b->n_tensors)
            return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG,
                                  "tosac_program_create: observed value %u is not a tensor of the main block",
                                  (unsigned)o->observe[i]);
        p->vals[p->insts[0].val_base + o->observe[i]].observed = true;
    }
    p->observing = true;
    return TOSAC_OK;
}

tosac_status tosac_program_create(const tosac_graph *g, const tosac_program_opts *opts, tosac_program **out,
                                  tosac_diag *d)
{
    if (!g || !out) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_program_create: no graph or no result pointer");
    tosac_program_opts o = opts ? *opts : tosac_program_opts_default();
    tosac_status st = tosac_validate(g, &o.validate, d);
    if (st == TOSAC_ERR_TOSA_ERROR)
        return tosac_diag_add(d, st, "the graph is not valid TOSA (ERROR_IF); no program was created");
    if (st == TOSAC_ERR_UNPREDICTABLE)
        return tosac_diag_add(d, st, "the graph exceeds the level limits (UNPREDICTABLE); no program was created");
    if (st != TOSAC_OK) return st;

    tosac_program *p = tosac_calloc(1, sizeof *p);
    if (!p) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "tosac_program_create: out of memory");
    tosac_arena_init(&p->mem);
    p->precise = o.precise;
    p->external_io = o.external_io;
    p->max_iter = o.max_iterations ? o.max_iterations : TOSAC_DEFAULT_MAX_ITERATIONS;
    /* build -> fuse -> plan -> prepare: each step reads only what the ones before produced */
    if ((st = rt_build(p, g, &o, d)) != TOSAC_OK) goto fail;
    if ((st = mark_observed(p, &o, d)) != TOSAC_OK) goto fail;
    rt_fuse(p);
    if ((st = start_pool(p, &o, d)) != TOSAC_OK) goto fail;
    if ((st = rt_plan(p, d)) != TOSAC_OK) goto fail;
    if (o.max_memory) {
        size_t fixed = p->const_size + p->var_size; /* <= max_memory: checked in rt_build */
        if (p->prepared_size > o.max_memory - fixed || p->arena_size > o.max_memory - fixed - p->prepared_size) {
            st = tosac_diag_add(d, TOSAC_ERR_NOMEM, "the arena (%zu bytes) and prepared constants (%zu) exceed max_memory (%zu) with %zu bytes of constants and variables",
                                p->arena_size, p->prepared_size, o.max_memory, fixed);
            goto fail;
        }
    }
    if (!o.caller_prepared && p->prepared_size) {
        size_t n;
        if (!tosac_add_size(p->prepared_size, RT_ALIGN - 1, &n) || !(p->prepared_raw = tosac_malloc(n))) {
            st = tosac_diag_add(d, TOSAC_ERR_NOMEM, "tosac_program_create: cannot allocate %zu bytes of prepared constants",
                                p->prepared_size);
            goto fail;
        }
        p->prepared_raw_size = n;
        p->own_prepared = true;
        uint8_t *dst = (uint8_t *)(((uintptr_t)p->prepared_raw + (RT_ALIGN - 1)) & ~(uintptr_t)(RT_ALIGN - 1));
        if ((st = rt_prepare(p, dst, d)) != TOSAC_OK) goto fail;
    }
    if (!o.caller_arena && p->arena_size) {
        size_t n;
        if (!tosac_add_size(p->arena_size, RT_ALIGN - 1, &n) || !(p->arena_raw = tosac_malloc(n))) {
            st = tosac_diag_add(d, TOSAC_ERR_NOMEM, "tosac_program_create: cannot allocate the %zu-byte arena",
                                p->arena_size);
            goto fail;
        }
        p->arena_raw_size = n;
        p->arena = (uint8_t *)(((uintptr_t)p->arena_raw + (RT_ALIGN - 1)) & ~(uintptr_t)(RT_ALIGN - 1));
        p->arena_cap = p->arena_size;
        p->own_arena = true;
    }
    /* the program keeps nothing of the graph (borrowed constants aside) */
    for (uint32_t v = 0; v < p->n_vals; v++) p->vals[v].ir = NULL;
    for (uint32_t i = 0; i < p->n_insts; i++) p->insts[i].ir = NULL;
    p->dirty = true;
    *out = p;
    return TOSAC_OK;
fail:
    tosac_program_destroy(p);
    return st;
}

/* ---- memory plan ------------------------------------------------------------------------- */

size_t tosac_program_arena_size(const tosac_program *p) { return p ? p->arena_size : 0; }
uint32_t tosac_program_threads(const tosac_program *p) { return p ? p->workers : 0; }

void tosac_program_parallel_for(const tosac_program *p, tosac_task_fn fn, void *ctx, size_t n)
{
    if (p && p->pool) rt_pool_run(p->pool, fn, ctx, n);
    else if (n) fn(ctx, 0, 0, n);
}
size_t tosac_program_arena_lower_bound(const tosac_program *p) { return p ? p->arena_lb : 0; }
size_t tosac_program_const_bytes(const tosac_program *p) { return p ? p->const_size : 0; }
size_t tosac_program_variable_bytes(const tosac_program *p) { return p ? p->var_size : 0; }

tosac_status tosac_program_memory_needs(const tosac_program *p, tosac_program_memory *out)
{
    if (!p || !out) return TOSAC_ERR_INVALID_ARG;
    size_t book = sizeof *p + p->mem.reserved + p->cap_vals * sizeof(rt_val) + p->cap_insts * sizeof(rt_inst) +
                  p->cap_ops * sizeof(rt_op) + p->cap_idx * sizeof(uint32_t) + p->cap_kt * sizeof(tosac_ktensor) +
                  p->cap_copies * sizeof(rt_copy) + p->cap_vars * sizeof(rt_var) + p->cap_bufs * sizeof(rt_buf) +
                  p->cap_entries * sizeof(uint32_t) + p->cap_in * sizeof(void *) + p->cap_out * (sizeof(void *) + sizeof(bool));
    out->bookkeeping = book;
    out->heap = book + p->consts_raw_size + p->var_raw_size + p->arena_raw_size + p->prepared_raw_size;
    out->arena = p->arena_size;
    out->arena_lower_bound = p->arena_lb;
    out->constants = p->const_size;
    out->prepared = p->prepared_size;
    out->variables = p->var_size;
    return TOSAC_OK;
}

tosac_status tosac_program_set_arena(tosac_program *p, void *buf, size_t size)
{
    if (!p) return TOSAC_ERR_INVALID_ARG;
    if ((!buf && p->arena_size) || (buf && (size < p->arena_size || (uintptr_t)buf % RT_ALIGN)))
        return TOSAC_ERR_INVALID_ARG;
    if (p->own_arena) {
        tosac_free(p->arena_raw, p->arena_raw_size);
        p->arena_raw = NULL;
        p->arena_raw_size = 0;
        p->own_arena = false;
    }
    p->arena = buf;
    p->arena_cap = size;
    p->dirty = true;
    return TOSAC_OK;
}

size_t tosac_program_prepared_size(const tosac_program *p) { return p ? p->prepared_size : 0; }

tosac_status tosac_program_set_prepared(tosac_program *p, void *buf, size_t size, tosac_diag *d)
{
    if (!p || (!buf && p->prepared_size) || (buf && (size < p->prepared_size || (uintptr_t)buf % RT_ALIGN)))
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_program_set_prepared: a %d-byte aligned buffer of %zu bytes is needed",
                              RT_ALIGN, p ? p->prepared_size : (size_t)0);
    if (p->own_prepared) {
        tosac_free(p->prepared_raw, p->prepared_raw_size);
        p->prepared_raw = NULL;
        p->prepared_raw_size = 0;
        p->own_prepared = false;
    }
    p->prepared = NULL;
    return buf ? rt_prepare(p, buf, d) : TOSAC_OK;
}

const void *tosac_program_prepared(const tosac_program *p) { return p ? p->prepared : NULL; }

tosac_status tosac_program_share_prepared(tosac_program *p, const void *buf, size_t size, tosac_diag *d)
{
    if (!p || !buf || size != p->prepared_size || (uintptr_t)buf % RT_ALIGN)
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_program_share_prepared: the %zu prepared bytes of a "
                              "program of the same graph and options are needed", p ? p->prepared_size : (size_t)0);
    if (p->own_prepared) {
        tosac_free(p->prepared_raw, p->prepared_raw_size);
        p->prepared_raw = NULL;
        p->prepared_raw_size = 0;
        p->own_prepared = false;
    }
    p->prepared = (uint8_t *)(uintptr_t)buf; /* the kernels only read it */
    p->dirty = true;
    return TOSAC_OK;
}

/* ---- tensors ----------------------------------------------------------------------------- */

static void fill_info(const tosac_program *p, uint32_t v, const char *name, tosac_tensor_info *out)
{
    const rt_val *x = &p->vals[v];
    tosac_tensor_info r;
    r.name = name ? name : x->name;
    r.dtype = x->dtype;
    r.f64 = x->f64;
    r.rank = x->rank;
    r.shape = x->shape;
    r.nelem = x->nelem;
    r.nbytes = x->nbytes;
    if (!rt_tosa_bytes(x->dtype, x->f64, x->nelem, &r.tosa_bytes)) r.tosa_bytes = 0;
    *out = r;
}

static uint32_t in_val(const tosac_program *p, uint32_t i) { return p->idx[p->insts[0].in_base + i]; }
static uint32_t out_val(const tosac_program *p, uint32_t i) { return p->idx[p->insts[0].out_base + i]; }

uint32_t tosac_program_input_count(const tosac_program *p) { return p ? p->insts[0].n_in : 0; }
uint32_t tosac_program_output_count(const tosac_program *p) { return p ? p->insts[0].n_out : 0; }

tosac_status tosac_program_input_info(const tosac_program *p, uint32_t i, tosac_tensor_info *out)
{
    if (!p || !out || i >= p->insts[0].n_in) return TOSAC_ERR_INVALID_ARG;
    fill_info(p, in_val(p, i), NULL, out);
    return TOSAC_OK;
}

tosac_status tosac_program_output_info(const tosac_program *p, uint32_t i, tosac_tensor_info *out)
{
    if (!p || !out || i >= p->insts[0].n_out) return TOSAC_ERR_INVALID_ARG;
    fill_info(p, out_val(p, i), NULL, out);
    return TOSAC_OK;
}

int32_t tosac_program_input_index(const tosac_program *p, const char *name)
{
    for (uint32_t i = 0; p && name && i < p->insts[0].n_in; i++)
        if (!strcmp(p->vals[in_val(p, i)].name, name)) return (int32_t)i;
    return -1;
}

int32_t tosac_program_output_index(const tosac_program *p, const char *name)
{
    for (uint32_t i = 0; p && name && i < p->insts[0].n_out; i++)
        if (!strcmp(p->vals[out_val(p, i)].name, name)) return (int32_t)i;
    return -1;
}

/* The program's own storage of value v (not a binding); NULL if it has none. */
static void *own_storage(const tosac_program *p, uint32_t v)
{
    const rt_val *x = &p->vals[rt_final_val(p, v)];
    switch (x->kind) {
    case RV_ARENA: return p->arena ? p->arena + x->off : NULL;
    case RV_VAR:
    case RV_CONST: return rt_fixed_data(p, x);
    default: return NULL;
    }
}

/* Where value v is at this moment: its binding, else its own storage. */
static const void *storage_now(const tosac_program *p, uint32_t v)
{
    uint32_t f = rt_final_val(p, v);
    const rt_inst *m = &p->insts[0];
    for (uint32_t i = 0; i < m->n_in; i++)
        if (in_val(p, i) == f && p->in_ext[i] && (p->vals[f].kind == RV_ARENA || p->vals[f].kind == RV_EXT))
            return p->in_ext[i];
    for (uint32_t i = 0; i < m->n_out; i++)
        if (out_val(p, i) == f && p->out_direct[i] && p->out_ext[i]) return p->out_ext[i];
    return own_storage(p, f);
}

void *tosac_program_input_ptr(tosac_program *p, uint32_t i)
{
    if (!p || i >= p->insts[0].n_in) return NULL;
    const rt_val *x = &p->vals[in_val(p, i)];
    if (x->kind != RV_ARENA && x->kind != RV_VAR) return NULL;
    return own_storage(p, in_val(p, i));
}

const void *tosac_program_output_ptr(const tosac_program *p, uint32_t i)
{
    if (!p || i >= p->insts[0].n_out) return NULL;
    if (p->out_ext[i]) return p->out_ext[i];
    return storage_now(p, out_val(p, i));
}

tosac_status tosac_program_bind_input(tosac_program *p, uint32_t i, const void *buf)
{
    if (!p || i >= p->insts[0].n_in) return TOSAC_ERR_INVALID_ARG;
    uint8_t kind = p->vals[in_val(p, i)].kind;
    if (buf && kind != RV_ARENA && kind != RV_EXT) return TOSAC_ERR_UNSUPPORTED;
    p->in_ext[i] = buf;
    p->dirty = true;
    return TOSAC_OK;
}

tosac_status tosac_program_bind_output(tosac_program *p, uint32_t i, void *buf)
{
    if (!p || i >= p->insts[0].n_out) return TOSAC_ERR_INVALID_ARG;
    p->out_ext[i] = buf;
    p->dirty = true;
    return TOSAC_OK;
}

/* Decodes n bytes of TOSA encoding (or fp64 for f64 tensors) into dst. */
static tosac_status decode_into(const rt_val *x, const void *bytes, size_t n, void *dst, const char *what,
                                tosac_diag *d)
{
    size_t plain = 0, wide = 0;
    bool ok_plain = tosac_dtype_storage_bytes(x->dtype, x->nelem, &plain);
    bool ok_wide = x->f64 && rt_tosa_bytes(x->dtype, true, x->nelem, &wide);
    if (!bytes && n) return TOSAC_ERR_INVALID_ARG;
    if (ok_wide && n == wide) {
        rt_decode(x->dtype, x->f64, true, bytes, x->nelem, dst);
        return TOSAC_OK;
    }
    if (!ok_plain || n != plain)
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "%s '%s' (%s, %lld elements) needs %zu bytes of TOSA data, got %zu",
                              what, x->name, tosac_dtype_name(x->dtype), (long long)x->nelem, plain, n);
    rt_decode(x->dtype, x->f64, false, bytes, x->nelem, dst);
    return TOSAC_OK;
}

static tosac_status encode_from(const rt_val *x, const void *src, void *buf, size_t cap, size_t *n)
{
    size_t need;
    if (!src || !rt_tosa_bytes(x->dtype, x->f64, x->nelem, &need)) return TOSAC_ERR_INVALID_ARG;
    if (n) *n = need;
    if (!buf) return TOSAC_OK; /* size query */
    if (cap < need) return TOSAC_ERR_INVALID_ARG;
    rt_encode(x->dtype, x->f64, src, x->nelem, buf);
    return TOSAC_OK;
}

tosac_status tosac_program_set_input_tosa(tosac_program *p, uint32_t i, const void *bytes, size_t n, tosac_diag *d)
{
    if (!p || i >= p->insts[0].n_in) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "input %u does not exist", (unsigned)i);
    const rt_val *x = &p->vals[in_val(p, i)];
    void *dst = tosac_program_input_ptr(p, i);
    if (!dst)
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "input '%s' has no storage of its own (external_io or no arena)",
                              x->name);
    tosac_status st = decode_into(x, bytes, n, dst, "input", d);
    if (st == TOSAC_OK && p->in_ext[i]) {
        p->in_ext[i] = NULL;
        p->dirty = true;
    }
    return st;
}

tosac_status tosac_program_get_output_tosa(const tosac_program *p, uint32_t i, void *buf, size_t cap, size_t *n)
{
    if (!p || i >= p->insts[0].n_out) return TOSAC_ERR_INVALID_ARG;
    return encode_from(&p->vals[out_val(p, i)], tosac_program_output_ptr(p, i), buf, cap, n);
}

/* ---- variables --------------------------------------------------------------------------- */

uint32_t tosac_program_variable_count(const tosac_program *p) { return p ? p->n_vars : 0; }

tosac_status tosac_program_variable_info(const tosac_program *p, uint32_t i, tosac_tensor_info *out)
{
    if (!p || !out || i >= p->n_vars) return TOSAC_ERR_INVALID_ARG;
    fill_info(p, p->vars[i].val, p->vars[i].name, out);
    return TOSAC_OK;
}

int32_t tosac_program_variable_index(const tosac_program *p, const char *name)
{
    if (!p || !name) return -1;
    for (uint32_t i = 0; i < p->n_vars; i++)
        if (!strcmp(p->vars[i].name, name)) return (int32_t)i;
    for (uint32_t v = 0; v < p->n_vals; v++)
        if (p->vals[v].kind == RV_VAR && !strcmp(p->vals[v].name, name)) return (int32_t)p->vals[v].var;
    return -1;
}

void *tosac_program_variable_ptr(tosac_program *p, uint32_t i)
{
    if (!p || i >= p->n_vars) return NULL;
    return p->vardata + p->vars[i].off;
}

tosac_status tosac_program_variable_set_tosa(tosac_program *p, uint32_t i, const void *bytes, size_t n, tosac_diag *d)
{
    if (!p || i >= p->n_vars) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "variable %u does not exist", (unsigned)i);
    return decode_into(&p->vals[p->vars[i].val], bytes, n, p->vardata + p->vars[i].off, "variable", d);
}

tosac_status tosac_program_variable_get_tosa(const tosac_program *p, uint32_t i, void *buf, size_t cap, size_t *n)
{
    if (!p || i >= p->n_vars) return TOSAC_ERR_INVALID_ARG;
    return encode_from(&p->vals[p->vars[i].val], p->vardata + p->vars[i].off, buf, cap, n);
}

void tosac_program_variables_reset(tosac_program *p)
{
    if (!p) return;
    for (uint32_t i = 0; i < p->n_vars; i++) {
        const rt_var *v = &p->vars[i];
        uint8_t *dst = p->vardata + v->off;
        if (!v->has_init)
            memset(dst, 0, v->nbytes);
        else
            memcpy(dst, v->init_borrowed ? v->init_borrowed : p->consts + v->init_off, v->nbytes);
    }
}

/* ---- operators --------------------------------------------------------------------------- */

void tosac_program_set_op_callback(tosac_program *p, tosac_op_callback fn, void *user)
{
    if (!p) return;
    p->cb = fn;
    p->cb_user = user;
}

uint32_t tosac_program_op_count(const tosac_program *p) { return p ? p->n_ops : 0; }

tosac_status tosac_program_op_output(const tosac_program *p, uint32_t i, uint32_t k, tosac_tensor_info *info,
                                     const void **data)
{
    if (!p || !info || !data || i >= p->n_ops || k >= p->ops[i].n_out) return TOSAC_ERR_INVALID_ARG;
    uint32_t j = p->ops[i].out_base + k;
    fill_info(p, p->idx[j], NULL, info);
    *data = p->kt[j].data;
    return TOSAC_OK;
}

tosac_status tosac_program_op_info(const tosac_program *p, uint32_t i, tosac_op_desc *out)
{
    if (!p || !out || i >= p->n_ops) return TOSAC_ERR_INVALID_ARG;
    const rt_op *op = &p->ops[i];
    const rt_inst *I = &p->insts[op->inst];
    out->op = op->op;
    out->index = op->index;
    out->block = I->name;
    out->depth = I->depth;
    out->parent = I->parent_op;
    return TOSAC_OK;
}
