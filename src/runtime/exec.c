/*
 * The executor: resolves storage pointers after the arena or a binding changes, then runs the
 * operators of the main block in order, COND_IF / WHILE_LOOP by running their sub-block instances.
 * Nothing here allocates; errors are formatted into the program's fixed message buffer.
 */
#include <stdio.h>
#include <string.h>

#include "core/clock.h"
#include "core/diag.h"
#include "core/strbuf.h"
#include "runtime/program.h"

void rt_resolve(tosac_program *p)
{
    const rt_inst *m = &p->insts[0];
    for (uint32_t v = 0; v < p->n_vals; v++)
        if (p->vals[v].kind != RV_LINK) p->vals[v].ext = NULL;
    for (uint32_t i = 0; i < m->n_in; i++) {
        rt_val *x = &p->vals[p->idx[m->in_base + i]];
        if (p->in_ext[i] && (x->kind == RV_ARENA || x->kind == RV_EXT)) x->ext = p->in_ext[i];
    }
    for (uint32_t i = 0; i < m->n_out; i++)
        if (p->out_direct[i] && p->out_ext[i]) p->vals[p->idx[m->out_base + i]].ext = p->out_ext[i];
    for (uint32_t v = 0; v < p->n_vals; v++) {
        rt_val *x = &p->vals[v];
        switch (x->kind) {
        case RV_ARENA:
            x->data = x->ext ? (void *)(uintptr_t)x->ext : p->arena ? p->arena + x->off : NULL;
            break;
        case RV_CONST:
        case RV_VAR: x->data = rt_fixed_data(p, x); break;
        case RV_EXT: x->data = (void *)(uintptr_t)x->ext; break;
        default: x->data = NULL; break;
        }
    }
    for (uint32_t v = 0; v < p->n_vals; v++)
        if (p->vals[v].kind == RV_LINK) p->vals[v].data = p->vals[rt_final_val(p, v)].data;
    for (uint32_t j = 0; j < p->n_idx; j++) p->kt[j].data = p->vals[p->idx[j]].data;
    for (uint32_t k = 0; k < p->n_ops; k++) {
        rt_op *op = &p->ops[k];
        op->call.scratch = op->scratch_size && p->arena ? p->arena + op->scratch_off : NULL;
        op->call.scratch_size = op->scratch_size;
        op->call.prep = op->prep_size && p->prepared ? p->prepared + op->prep_off : NULL;
        op->call.prep_size = op->prep_size;
    }
    p->dirty = false;
}

static tosac_status fail(tosac_program *p, uint32_t op, tosac_status s, const char *why)
{
    rt_op_label(p, op, p->err, sizeof p->err);
    size_t len = strlen(p->err);
    if (!why) {
        switch (s) {
        case TOSAC_ERR_UNPREDICTABLE: why = "a REQUIRE condition does not hold (result UNPREDICTABLE)"; break;
        case TOSAC_ERR_TOSA_ERROR: why = "an ERROR_IF condition holds"; break;
        case TOSAC_ERR_UNSUPPORTED: why = "no kernel implements this operator for these types"; break;
        default: why = tosac_status_str(s); break;
        }
    }
    tosac_fixbuf_appendf(p->err, sizeof p->err, &len, ": %s", why);
    return s;
}

/* ------------------------------------------------------------------------------------------ */
/* Execution                                                                                     */

static void copy_val(tosac_program *p, uint32_t src, uint32_t dst)
{
    const rt_val *s = &p->vals[src], *d = &p->vals[dst];
    if (s->data == d->data || !s->data || !d->data) return;
    memmove(d->data, s->data, s->nbytes < d->nbytes ? s->nbytes : d->nbytes);
}

static void run_copies(tosac_program *p, uint32_t base, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) copy_val(p, p->copies[base + i].src, p->copies[base + i].dst);
}

static tosac_status run_inst(tosac_program *p, uint32_t ii);

static tosac_status run_tail(tosac_program *p, uint32_t k);
/* Whether the fused epilogues and chains run: not when an op callback reads every result (a
   callback without an observe list), then every operator runs one by one. */
static bool fusing(const tosac_program *p) { return !p->cb || p->observing; }
/* Whether a tail chain runs from its producer's epilogue: not with a callback, which then comes
   at the chain root's own step. */
static bool tails(const tosac_program *p) { return !p->cb; }

static tosac_status run_kernel(tosac_program *p, uint32_t k)
{
    rt_op *op = &p->ops[k];
    if (!op->fn) return fail(p, k, TOSAC_ERR_UNSUPPORTED, "no kernel for this operator");
    if ((op->tail != RT_NONE || op->pre != RT_NONE) && tails(p)) return run_tail(p, k);
    op->call.why = NULL;
    op->call.epi = op->has_epi && fusing(p) ? &op->epi : NULL;
    tosac_status s = op->fn(&op->call);
    return s == TOSAC_OK ? s : fail(p, k, s, op->call.why);
}

/*
 * Chains (program.h rt_chain): the root runs every member block by block. A block's operands are
 * [rows, cols] slices of full-shape values, [1, cols] / [1, 1] views of broadcast ones and the
 * worker's block buffers for intermediates; each kernel runs inline on it (no nested
 * parallel-for: the blocks are the parallel work), with its worker's copy of its scratch.
 *
 * A member whose REQUIRE fails stops its block. The operator reported is the first member, in
 * execution order, that failed on any block: the members before it never failed, so its operands
 * were exact and it fails one by one too, while every member before it succeeds one by one.
 */
typedef struct chain_task {
    tosac_program *p;
    const rt_chain *c;
    uint32_t bad[TOSAC_KMAX_WORKERS];   /* per worker: 1 + the first failing link, 0 if none */
    tosac_status st[TOSAC_KMAX_WORKERS];
    const char *why[TOSAC_KMAX_WORKERS];
} chain_task;

/* The operand of a link for rows [r0, r0 + nr): t is the full tensor, shp the view's dims. */
static void chain_view(tosac_ktensor *t, size_t code, int64_t r0, int64_t nr, int64_t cols, uint8_t *blk, int64_t *shp)
{
    if (code == RT_LINK_WHOLE) {
        if (t->rank == 0) return;
        shp[0] = 1, shp[1] = t->shape[t->rank - 1];
    } else {
        size_t e = tosac_exec_elem_size(t->dtype, t->f64);
        t->data = code == RT_LINK_SLICE ? (uint8_t *)t->data + (size_t)(r0 * cols) * e : blk + code;
        shp[0] = nr, shp[1] = cols;
        t->nelem = nr * cols;
    }
    t->rank = 2;
    t->shape = shp;
}

/* A strip member's operand j for the strip at element e = row * cols + col0 of the rows: *x and
   its stride (0: one value for every element). */
static inline const float *strip_operand(const tosac_ktensor *t, const rt_link *l, uint32_t j, uint8_t *blk, int64_t e,
                                         int64_t col0, int64_t *stride)
{
    *stride = 1;
    if (l->in[j] == RT_LINK_SLICE) return (const float *)t->data + e;
    if (l->in[j] != RT_LINK_WHOLE) return (const float *)(blk + l->in[j]);
    if (t->nelem == 1) {
        *stride = 0;
        return t->data;
    }
    return l->rep[j] != RT_LINK_KEEP ? (const float *)(blk + l->rep[j]) : (const float *)t->data + col0;
}

/* Every member on rows [r0, r0 + nr) strip by strip (rt_chain.strips): a strip goes through every
   member, each member's row function over the whole strip (the same elements and operations as
   its kernel on the block: the same bits), before the next strip. A strip is whole rows, or part
   of one row when a row is longer than a strip. The members cannot fail (tosac_kstrip_of). */
static void chain_strips(tosac_program *p, const rt_chain *c, uint8_t *blk, int64_t r0, int64_t nr)
{
    const int64_t cols = c->cols, sr = c->strip_rows < nr ? c->strip_rows : nr;
    for (uint32_t i = 0; i < c->n_links; i++) { /* [1, cols] operands over the strip's rows */
        const rt_link *l = &p->links[c->link_base + i];
        for (uint32_t j = 0; j < 2; j++)
            for (int64_t r = 0; l->rep[j] != RT_LINK_KEEP && r < sr; r++)
                memcpy(blk + l->rep[j] + (size_t)(r * cols) * sizeof(float), p->kt[p->ops[l->op].in_base + j].data,
                       (size_t)cols * sizeof(float));
    }
    for (int64_t r = r0; r < r0 + nr; r += sr) {
        const int64_t m = r0 + nr - r < sr ? r0 + nr - r : sr;
        for (int64_t j0 = 0; j0 < cols; j0 += c->strip_cols) {
            const int64_t e = r * cols + j0, n = m > 1 ? m * cols : (cols - j0 < c->strip_cols ? cols - j0 : c->strip_cols);
            for (uint32_t i = 0; i < c->n_links; i++) {
                const rt_link *l = &p->links[c->link_base + i];
                if (l->strip.form == TOSAC_KSTRIP_FUSED) continue; /* run by the next link's row */
                const rt_op *op = &p->ops[l->op];
                const tosac_ktensor *in = &p->kt[op->in_base];
                int64_t sa, sb = 0;
                const float *a = strip_operand(in, l, 0, blk, e, j0, &sa), *b = NULL;
                if (l->strip.form != TOSAC_KSTRIP_UNARY && l->strip.form != TOSAC_KSTRIP_CLAMP) /* two operands */
                    b = strip_operand(in + 1, l, 1, blk, e, j0, &sb);
                float *o = l->out == RT_LINK_SLICE ? (float *)p->kt[op->out_base].data + e : (float *)(blk + l->out);
                tosac_kstrip_run(&l->strip, n, a, sa, b, sb, o);
            }
        }
    }
}

/* Every member on rows [r0, r0 + nr) (at most a block). */
static void chain_rows(chain_task *t, uint32_t worker, int64_t r0, int64_t nr)
{
    tosac_program *p = t->p;
    const rt_chain *c = t->c;
    const rt_op *root = &p->ops[p->links[c->link_base + c->n_links - 1].op];
    uint8_t *blk = c->blk_size ? (uint8_t *)root->call.scratch + (size_t)worker * root->scratch_size + c->blk_off : NULL;
    if (c->strips) {
        chain_strips(p, c, blk, r0, nr);
        return;
    }
    for (uint32_t i = 0; i < c->n_links; i++) {
        if (t->bad[worker] && t->bad[worker] <= i + 1) break; /* a failure no later link can precede */
        const rt_link *l = &p->links[c->link_base + i];
        const rt_op *op = &p->ops[l->op];
        tosac_ktensor in[RT_LINK_MAX_IN], out = p->kt[op->out_base];
        int64_t shp[RT_LINK_MAX_IN + 1][2];
        for (uint32_t j = 0; j < op->n_in; j++) {
            in[j] = p->kt[op->in_base + j];
            if (l->in[j] != RT_LINK_KEEP) chain_view(&in[j], l->in[j], r0, nr, c->cols, blk, shp[j]);
        }
        chain_view(&out, l->out, r0, nr, c->cols, blk, shp[RT_LINK_MAX_IN]);
        tosac_kcall kc = op->call;
        kc.in = in;
        kc.out = &out;
        kc.par = (tosac_kparallel){NULL, NULL, 1};
        kc.epi = NULL;
        kc.why = NULL;
        if (kc.scratch) kc.scratch = (uint8_t *)kc.scratch + (size_t)worker * op->scratch_size;
        tosac_status s = op->fn(&kc);
        if (s != TOSAC_OK) {
            if (!t->bad[worker] || i + 1 < t->bad[worker]) t->bad[worker] = i + 1, t->st[worker] = s, t->why[worker] = kc.why;
            break;
        }
    }
}

static void chain_blocks(void *ctx, uint32_t worker, size_t b0, size_t b1)
{
    chain_task *t = ctx;
    const rt_chain *c = t->c;
    for (size_t b = b0; b < b1; b++) {
        const int64_t r0 = (int64_t)b * c->block_rows;
        chain_rows(t, worker, r0, c->rows - r0 < c->block_rows ? c->rows - r0 : c->block_rows);
    }
}

/* A tail's epilogue hook (kernel.h tosac_kepilogue.post): rows the convolution has just stored,
   in pieces of at most a block; a prologue's (.pre): input rows the convolution is about to read. */
static void chain_hook(void *ctx, uint32_t worker, int64_t row0, int64_t nrows)
{
    chain_task *t = ctx;
    for (int64_t r = row0; r < row0 + nrows; r += t->c->block_rows)
        chain_rows(t, worker, r, row0 + nrows - r < t->c->block_rows ? row0 + nrows - r : t->c->block_rows);
}

/* The member to report: the first in execution order that failed on any block (OK: none). */
static tosac_status chain_end(tosac_program *p, const chain_task *t)
{
    uint32_t w0 = 0;
    for (uint32_t w = 0; w < p->workers && w < TOSAC_KMAX_WORKERS; w++)
        if (t->bad[w] && (!t->bad[w0] || t->bad[w] < t->bad[w0])) w0 = w;
    if (!t->bad[w0]) return TOSAC_OK;
    return fail(p, p->links[t->c->link_base + t->bad[w0] - 1].op, t->st[w0], t->why[w0]);
}

static tosac_status run_chain(tosac_program *p, const rt_chain *c)
{
    chain_task t;
    memset(&t, 0, sizeof t);
    t.p = p, t.c = c;
    size_t n = ((size_t)c->rows + (size_t)c->block_rows - 1) / (size_t)c->block_rows;
    rt_pool_run(p->pool, chain_blocks, &t, n);
    return chain_end(p, &t);
}

/* A convolution that runs its prologue chain on the input rows it is about to read and its tail
   chain on the rows it stores (fuse.c). Failures in program order: the prologue's first failing
   member (every member comes before the convolution), the convolution, the tail's. */
static tosac_status run_tail(tosac_program *p, uint32_t k)
{
    rt_op *op = &p->ops[k];
    chain_task pre, post;
    memset(&pre, 0, sizeof pre);
    memset(&post, 0, sizeof post);
    pre.p = post.p = p;
    if (op->pre != RT_NONE) pre.c = &p->chains[op->pre], op->epi.pre = chain_hook, op->epi.pre_ctx = &pre;
    if (op->tail != RT_NONE) post.c = &p->chains[op->tail], op->epi.post = chain_hook, op->epi.post_ctx = &post;
    op->call.why = NULL;
    op->call.epi = &op->epi;
    tosac_status s = op->fn(&op->call);
    op->epi.post = op->epi.pre = NULL, op->epi.post_ctx = op->epi.pre_ctx = NULL;
    tosac_status e = pre.c ? chain_end(p, &pre) : TOSAC_OK;
    if (e != TOSAC_OK) return e;
    if (s != TOSAC_OK) return fail(p, k, s, op->call.why);
    return post.c ? chain_end(p, &post) : TOSAC_OK;
}

static tosac_status run_while(tosac_program *p, uint32_t k)
{
    const rt_op *op = &p->ops[k];
    const rt_inst *cond = &p->insts[op->sub[0]];
    run_copies(p, op->pre_base, op->n_pre);
    for (uint64_t iter = 0;; iter++) {
        tosac_status s = run_inst(p, op->sub[0]);
        if (s != TOSAC_OK) return s;
        const uint8_t *c = p->vals[p->idx[cond->out_base]].data;
        if (!c || !*c) break;
        if (iter >= p->max_iter) {
            char why[96];
            snprintf(why, sizeof why, "the loop did not end within max_iterations (%llu iterations)",
                     (unsigned long long)p->max_iter);
            return fail(p, k, TOSAC_ERR_UNPREDICTABLE, why);
        }
        if ((s = run_inst(p, op->sub[1])) != TOSAC_OK) return s;
        run_copies(p, op->stage_base, op->n_stage);
        run_copies(p, op->commit_base, op->n_commit);
    }
    run_copies(p, op->post_base, op->n_post);
    return TOSAC_OK;
}

/* Whether operator k runs at its own step: not when its producer's epilogue or its chain's root
   runs it. */
static bool runs_alone(const tosac_program *p, uint32_t k)
{
    const rt_op *op = &p->ops[k];
    if (!fusing(p)) return true;
    if (op->fused_into != RT_NONE) return false;
    if (op->chain == RT_NONE) return true;
    const rt_chain *c = &p->chains[op->chain];
    if (p->links[c->link_base + c->n_links - 1].op != k) return false;
    return (c->producer == RT_NONE && c->consumer == RT_NONE) || !tails(p);
}

static tosac_status run_op(tosac_program *p, uint32_t k)
{
    const rt_op *op = &p->ops[k];
    if (!runs_alone(p, k)) return TOSAC_OK; /* its producer or its chain's root runs it */
    if (op->chain != RT_NONE && fusing(p)) { /* the chain's root */
        const rt_chain *c = &p->chains[op->chain];
        if (c->n_links > 1 || (p->workers > 1 && c->rows > c->block_rows)) return run_chain(p, c);
        /* a chain of one on one worker, or of one block (a small one kept for a tail or prologue
           it did not get): nothing to gain from blocks */
    }
    switch (op->mode) {
    case M_NOP: return TOSAC_OK;
    case M_ALIAS:
        if (p->kt[op->in_base].data == p->kt[op->out_base].data) return TOSAC_OK;
        return run_kernel(p, k);
    case M_KERNEL: return run_kernel(p, k);
    case M_COPY: copy_val(p, p->idx[op->in_base], p->idx[op->out_base]); return TOSAC_OK;
    case M_COPY_IN: copy_val(p, p->idx[op->in_base + 1], p->idx[op->in_base]); return TOSAC_OK;
    case M_IF: {
        const uint8_t *c = p->kt[op->in_base].data;
        return run_inst(p, op->sub[c && *c ? 0 : 1]);
    }
    case M_WHILE: return run_while(p, k);
    default: return fail(p, k, TOSAC_ERR_INTERNAL, "unknown execution mode");
    }
}

static tosac_status run_inst(tosac_program *p, uint32_t ii)
{
    const rt_inst *I = &p->insts[ii];
    for (uint32_t k = I->op_base; k < I->op_base + I->n_ops; k++) {
        uint64_t t0 = p->cb ? tosac_now_ns() : 0;
        tosac_status s = run_op(p, k);
        if (s != TOSAC_OK) return s;
        if (p->cb && runs_alone(p, k)) {
            uint64_t t1 = tosac_now_ns();
            p->cb(p->cb_user, k, p->ops[k].op, t1 > t0 ? t1 - t0 : 0);
            /* a fused epilogue has made the last absorbed operator's result: reported now */
            const rt_op *op = &p->ops[k];
            if (op->has_epi && op->fused_last != RT_NONE && p->observing) p->cb(p->cb_user, op->fused_last, p->ops[op->fused_last].op, 0);
        }
    }
    run_copies(p, I->copy_base, I->n_copy);
    return TOSAC_OK;
}

static tosac_status invoke_fail(tosac_program *p, tosac_diag *d, tosac_status s, const char *fmt, const char *arg)
{
    snprintf(p->err, sizeof p->err, fmt, arg);
    tosac_diag_add(d, s, "%s", p->err);
    return s;
}

tosac_status tosac_program_invoke(tosac_program *p, tosac_diag *d)
{
    if (!p) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_program_invoke: no program");
    p->err[0] = '\0';
    if (p->arena_size && !p->arena)
        return invoke_fail(p, d, TOSAC_ERR_INVALID_ARG, "%s", "no arena: call tosac_program_set_arena first");
    if (p->prepared_size && !p->prepared)
        return invoke_fail(p, d, TOSAC_ERR_INVALID_ARG, "%s",
                           "no prepared constants: call tosac_program_set_prepared first");
    if (p->dirty) rt_resolve(p);
    const rt_inst *m = &p->insts[0];
    for (uint32_t i = 0; i < m->n_in; i++) {
        const rt_val *x = &p->vals[p->idx[m->in_base + i]];
        if (x->kind == RV_EXT && !x->data)
            return invoke_fail(p, d, TOSAC_ERR_INVALID_ARG, "input '%s' is not bound (external_io)", x->name);
    }
    for (uint32_t i = 0; i < m->n_out; i++) {
        const rt_val *x = &p->vals[p->idx[m->out_base + i]];
        if (p->external_io && !p->out_ext[i])
            return invoke_fail(p, d, TOSAC_ERR_INVALID_ARG, "output '%s' is not bound (external_io)", x->name);
    }
    tosac_status s = run_inst(p, 0);
    if (s != TOSAC_OK) {
        tosac_diag_add(d, s, "%s", p->err);
        return s;
    }
    for (uint32_t i = 0; i < m->n_out; i++) {
        const rt_val *x = &p->vals[p->idx[m->out_base + i]];
        if (p->out_ext[i] && x->data && x->data != p->out_ext[i]) memmove(p->out_ext[i], x->data, x->nbytes);
    }
    return TOSAC_OK;
}

const char *tosac_program_last_error(const tosac_program *p) { return p ? p->err : ""; }
