/*
 * Static memory plan.
 *
 * 0. Sizes: every kernel's prepare reports its prepared-constant and scratch bytes
 *    (kernels/kernel.h); the prepared constants are laid out one after the other (16-byte
 *    aligned) in their own area.
 * 1. Lifetimes: every arena value is live from the step of its producer (or its block's opening
 *    step for block inputs) to the last step that reads it (its block's closing step for block
 *    outputs). A value read inside a sub-block but owned by an enclosing instance is live over
 *    the whole enclosing COND_IF / WHILE_LOOP operator (all iterations), see program.h.
 * 2. In-place reuse: the result of an operator of an in-place family (rt_inplace_op) takes input
 *    0's storage when that input is an ordinary arena value of the same block that dies at this
 *    operator (not a block input or output, constant, variable or bound buffer) and both have the
 *    same element count and storage size (and, for elementwise kernels, the same shape). Values
 *    sharing storage form one buffer.
 *    (RESHAPE / IDENTITY of a constant take no storage at all: build.c makes them the constant.)
 * 3. Scratch: a kernel's scratch space is a buffer live during its operator only, one copy per
 *    worker of the thread pool (kernels/kernel.h tosac_kparallel). A fused
 *    epilogue's result is live from its producer on (fuse.c). A chain's root scratch also holds
 *    the chain's block buffers; a chain member's operands and scratch are live from its step to
 *    its root's, and from its producer's step when the chain is a producer's tail, until its
 *    consumer's step when it is a convolution's prologue (fuse.c: the chain's step_last).
 * 4. Placement (TFLite Micro's greedy planner): buffers sorted by size (largest first), each put at
 *    the lowest 16-byte aligned offset where it overlaps no already placed buffer whose lifetime
 *    overlaps its own (very large graphs: first fit in execution order, see place_online).
 * The lower bound reported is the largest total size of the buffers live at one step.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/diag.h"
#include "core/strbuf.h"
#include "runtime/program.h"

/*
 * THE list of operators whose result may share input 0's storage. RESHAPE and IDENTITY then need
 * no work at all (exec.c skips them); the elementwise kernel families support out == in[0]
 * (kernels/kernel.h).
 */
static bool rt_inplace_op(uint32_t op, bool *elementwise)
{
    tosac_kernel_fn f = tosac_kernel_for(op);
    *elementwise = f == tosac_kernel_unary || f == tosac_kernel_binary || f == tosac_kernel_select;
    return *elementwise || op == TOSAC_OP_RESHAPE || op == TOSAC_OP_IDENTITY;
}

static void extend(rt_val *v, int32_t a, int32_t b)
{
    if (a < v->first) v->first = a;
    if (b > v->last) v->last = b;
}

/* Value v is read or written by instance `inst` during steps [a, b]. */
static void use_at(tosac_program *p, uint32_t v, uint32_t inst, int32_t a, int32_t b)
{
    rt_val *x = &p->vals[rt_final_val(p, v)];
    if (x->kind != RV_ARENA) return;
    if (x->inst == inst) {
        extend(x, a, b);
        return;
    }
    /* owned by an enclosing instance: live over the control-flow operator of that instance whose
       sub-blocks contain `inst` */
    int32_t c = (int32_t)inst;
    while (c >= 0 && p->insts[c].parent != (int32_t)x->inst) c = p->insts[c].parent;
    if (c < 0) {
        extend(x, a, b);
        return;
    }
    const rt_op *op = &p->ops[p->insts[c].parent_op];
    extend(x, op->step, op->step_end);
}

static void use_copies(tosac_program *p, uint32_t base, uint32_t n, uint32_t inst, int32_t a, int32_t b)
{
    for (uint32_t i = 0; i < n; i++) {
        use_at(p, p->copies[base + i].src, inst, a, b);
        use_at(p, p->copies[base + i].dst, inst, a, b);
    }
}

static tosac_status kernel_sizes(tosac_program *p, tosac_diag *d)
{
    size_t total = 0;
    for (uint32_t k = 0; k < p->n_ops; k++) {
        rt_op *op = &p->ops[k];
        if (op->mode != M_KERNEL && op->mode != M_ALIAS) continue;
        tosac_kernel_prepare_fn pf = tosac_kernel_prepare_for(op->op);
        tosac_kprep sz = {0, 0, 0};
        op->call.epi = op->has_epi ? &op->epi : NULL;
        if (pf && pf(&op->call, &sz, NULL) != TOSAC_OK) {
            char label[256];
            rt_op_label(p, k, label, sizeof label);
            return tosac_diag_add(d, TOSAC_ERR_INTERNAL, "%s: the kernel cannot prepare this operator", label);
        }
        op->scratch_size = rt_align(sz.scratch_size); /* each worker's copy aligned */
        if (op->scratch_size < sz.scratch_size) return tosac_diag_add(d, TOSAC_ERR_NOMEM, "scratch space too large");
        rt_chain *ch = op->chain != RT_NONE ? &p->chains[op->chain] : NULL;
        if (ch && p->links[ch->link_base + ch->n_links - 1].op == k) { /* a root: its chain's block buffers */
            ch->blk_off = op->scratch_size;
            if (!tosac_add_size(op->scratch_size, ch->blk_size, &op->scratch_size))
                return tosac_diag_add(d, TOSAC_ERR_NOMEM, "scratch space too large");
        }
        op->prep_size = sz.const_size;
        op->prep_off = total;
        if (!tosac_add_size(total, rt_align(sz.const_size), &total) || rt_align(sz.const_size) < sz.const_size)
            return tosac_diag_add(d, TOSAC_ERR_NOMEM, "prepared constants too large");
    }
    p->prepared_size = total;
    return TOSAC_OK;
}

/* The last step at which op reads its operands and uses its scratch: a chain member's is its
   root's, which runs every member block by block (results are written at the operator's own
   step either way: the root's by the root, the others' only one by one). */
static int32_t op_last_read(const tosac_program *p, const rt_op *op)
{
    return op->chain != RT_NONE ? p->chains[op->chain].step_last : op->step_end;
}

/* The first step at which op reads its operands, writes its result or uses its scratch: a member
   of a tail chain (fuse.c) runs from its producer's epilogue. */
static int32_t op_first_use(const tosac_program *p, const rt_op *op)
{
    const uint32_t k = op->chain != RT_NONE ? p->chains[op->chain].producer : RT_NONE;
    return k != RT_NONE ? p->ops[k].step : op->step;
}

static void lifetimes(tosac_program *p)
{
    for (uint32_t i = 0; i < p->n_insts; i++) {
        const rt_inst *I = &p->insts[i];
        for (uint32_t j = 0; j < I->n_in; j++) use_at(p, p->idx[I->in_base + j], i, I->step_begin, I->step_begin);
        for (uint32_t j = 0; j < I->n_out; j++) use_at(p, p->idx[I->out_base + j], i, I->step_end, I->step_end);
        use_copies(p, I->copy_base, I->n_copy, i, I->step_end, I->step_end);
    }
    for (uint32_t k = 0; k < p->n_ops; k++) {
        const rt_op *op = &p->ops[k];
        const int32_t first = op_first_use(p, op);
        for (uint32_t j = 0; j < op->n_in; j++) use_at(p, p->idx[op->in_base + j], op->inst, first, op_last_read(p, op));
        for (uint32_t j = 0; j < op->n_out; j++) use_at(p, p->idx[op->out_base + j], op->inst, first, op->step_end);
        if (op->has_epi) use_at(p, op->fused_out, op->inst, op->step, op->step_end);
        if (op->mode != M_WHILE) continue;
        for (uint32_t j = 0; j < op->n_out; j++) use_at(p, p->idx[op->state_base + j], op->inst, op->step, op->step_end);
        use_copies(p, op->pre_base, op->n_pre, op->inst, op->step, op->step);
        use_copies(p, op->post_base, op->n_post, op->inst, op->step_end, op->step_end);
        const rt_inst *body = &p->insts[op->sub[1]];
        use_copies(p, op->stage_base, op->n_stage, op->sub[1], body->step_end, body->step_end);
        use_copies(p, op->commit_base, op->n_commit, op->sub[1], body->step_end, body->step_end);
    }
}

/* Union-find over values sharing storage. */
typedef struct group {
    uint32_t parent;
    int32_t first, last;
    size_t size;
} group;

static uint32_t find_root(group *g, uint32_t v)
{
    while (g[v].parent != v) {
        g[v].parent = g[g[v].parent].parent;
        v = g[v].parent;
    }
    return v;
}

static void in_place(tosac_program *p, group *g)
{
    for (uint32_t k = 0; k < p->n_ops; k++) {
        const rt_op *op = &p->ops[k];
        bool elementwise;
        if ((op->mode != M_KERNEL && op->mode != M_ALIAS) || op->n_in < 1 || op->n_out != 1 ||
            !rt_inplace_op(op->op, &elementwise))
            continue;
        /* (a chain's root may write over its input 0: the members that read it have read the
           block's rows by then, one by one or block by block; another member's input 0 lives
           on to the root) */
        const int32_t first = op_first_use(p, op), last = op->step;
        uint32_t a = p->idx[op->in_base], o = p->idx[op->out_base];
        const rt_val *A = &p->vals[a], *O = &p->vals[o];
        if (a == o || A->kind != RV_ARENA || O->kind != RV_ARENA || A->inst != op->inst || O->inst != op->inst ||
            A->block_io || O->first != first || A->nbytes != O->nbytes || A->nelem != O->nelem ||
            (elementwise && !rt_same_dims(A, O)))
            continue;
        uint32_t ra = find_root(g, a), ro = find_root(g, o);
        if (ra == ro || g[ra].last != last || g[ro].first != first) continue;
        g[ro].parent = ra;
        if (g[ro].last > g[ra].last) g[ra].last = g[ro].last;
        if (g[ro].first < g[ra].first) g[ra].first = g[ro].first;
        if (g[ro].size > g[ra].size) g[ra].size = g[ro].size;
    }
}

/* Placement order: size descending, then first step, then buffer index (deterministic). */
typedef struct okey {
    size_t size;
    int32_t first;
    uint32_t idx;
} okey;

/* Execution order: first use, then index. */
static int cmp_first(const void *pa, const void *pb)
{
    const okey *a = pa, *b = pb;
    if (a->first != b->first) return a->first < b->first ? -1 : 1;
    return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* Largest first, ties in execution order. */
static int cmp_okey(const void *pa, const void *pb)
{
    const okey *a = pa, *b = pb;
    if (a->size != b->size) return a->size > b->size ? -1 : 1;
    return cmp_first(pa, pb);
}

typedef struct span {
    size_t lo, hi;
} span;

static int cmp_span(const void *pa, const void *pb)
{
    const span *a = pa, *b = pb;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    return a->hi < b->hi ? -1 : a->hi > b->hi;
}

/* Greedy by size; returns false on size overflow. */
static bool place(tosac_program *p, okey *order, span *tmp)
{
    uint32_t n = p->n_bufs;
    for (uint32_t i = 0; i < n; i++) order[i] = (okey){p->bufs[i].size, p->bufs[i].first, i};
    qsort(order, n, sizeof(okey), cmp_okey);
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        rt_buf *b = &p->bufs[order[i].idx];
        uint32_t m = 0;
        for (uint32_t j = 0; j < i; j++) {
            const rt_buf *q = &p->bufs[order[j].idx];
            if (q->first <= b->last && b->first <= q->last) tmp[m++] = (span){q->off, q->off + q->size};
        }
        qsort(tmp, m, sizeof(span), cmp_span);
        size_t at = 0;
        for (uint32_t j = 0; j < m; j++) {
            if (tmp[j].lo >= at && tmp[j].lo - at >= b->size) break;
            if (tmp[j].hi > at) at = tmp[j].hi;
        }
        b->off = at;
        size_t end;
        if (!tosac_add_size(at, b->size, &end)) return false;
        if (end > total) total = end;
    }
    p->arena_size = total;
    return true;
}

/*
 * For very large graphs (more than RT_GREEDY_MAX_BUFS buffers) the greedy placement, quadratic in
 * the number of buffers, gives way to a first-fit in execution order over the buffers live at the
 * time (an offset-sorted array), whose cost grows with the number of simultaneously live buffers
 * only.
 */
#define RT_GREEDY_MAX_BUFS 16384u

typedef struct live {
    size_t lo, hi;
    int32_t last;
} live;

static bool place_online(tosac_program *p, okey *order, live *act)
{
    uint32_t n = p->n_bufs, na = 0;
    for (uint32_t i = 0; i < n; i++) order[i] = (okey){p->bufs[i].size, p->bufs[i].first, i};
    qsort(order, n, sizeof(okey), cmp_first);
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        rt_buf *b = &p->bufs[order[i].idx];
        uint32_t k = 0;
        for (uint32_t j = 0; j < na; j++)
            if (act[j].last >= b->first) act[k++] = act[j];
        na = k;
        size_t at = 0;
        uint32_t pos = 0;
        for (; pos < na; pos++) {
            if (act[pos].lo >= at && act[pos].lo - at >= b->size) break;
            if (act[pos].hi > at) at = act[pos].hi;
        }
        size_t end;
        if (!tosac_add_size(at, b->size, &end)) return false;
        b->off = at;
        if (end > total) total = end;
        memmove(&act[pos + 1], &act[pos], (size_t)(na - pos) * sizeof(live));
        act[pos] = (live){at, end, b->last};
        na++;
    }
    p->arena_size = total;
    return true;
}

static size_t lower_bound(const tosac_program *p, int64_t *diff)
{
    int32_t ns = p->n_steps;
    for (int32_t s = 0; s <= ns; s++) diff[s] = 0;
    for (uint32_t i = 0; i < p->n_bufs; i++) {
        const rt_buf *b = &p->bufs[i];
        diff[b->first] += (int64_t)b->size;
        diff[b->last + 1] -= (int64_t)b->size;
    }
    int64_t cur = 0, best = 0;
    for (int32_t s = 0; s < ns; s++) {
        cur += diff[s];
        if (cur > best) best = cur;
    }
    return (size_t)best;
}

tosac_status rt_plan(tosac_program *p, tosac_diag *d)
{
    tosac_status st = TOSAC_OK;
    uint32_t nv = p->n_vals, nb = 0, ne = 0;
    size_t gsize = ((size_t)nv + 1) * sizeof(group), bsize = ((size_t)nv + 1) * sizeof(uint32_t);
    size_t dsize = ((size_t)p->n_steps + 2) * sizeof(int64_t), osize = 0, tsize = 0;
    okey *order = NULL;
    span *tmp = NULL;
    int64_t *diff = NULL;
    if ((st = kernel_sizes(p, d)) != TOSAC_OK) return st;
    lifetimes(p);
    group *g = tosac_malloc(gsize);
    uint32_t *bufof = tosac_malloc(bsize);
    if (!g || !bufof) goto oom;
    for (uint32_t v = 0; v < nv; v++) {
        rt_val *x = &p->vals[v];
        if (x->kind == RV_ARENA && x->first > x->last) x->kind = RV_UNUSED; /* never live */
        g[v] = (group){v, x->first, x->last, x->nbytes ? x->nbytes : 1};
        bufof[v] = RT_NONE;
    }
    in_place(p, g);

    /* buffers: one per storage group, one per scratch space */
    for (uint32_t v = 0; v < nv; v++)
        if (p->vals[v].kind == RV_ARENA) {
            ne++;
            if (find_root(g, v) == v) nb++;
        }
    for (uint32_t k = 0; k < p->n_ops; k++)
        if (p->ops[k].scratch_size) nb++, ne++;
    osize = (nb ? nb : 1) * sizeof(okey);
    tsize = (nb ? nb : 1) * (sizeof(span) > sizeof(live) ? sizeof(span) : sizeof(live));
    p->bufs = tosac_calloc(nb ? nb : 1, sizeof(rt_buf));
    p->cap_bufs = p->bufs ? (nb ? nb : 1) : 0;
    p->entries = tosac_calloc(ne ? ne : 1, sizeof(uint32_t));
    p->cap_entries = p->entries ? (ne ? ne : 1) : 0;
    order = tosac_malloc(osize);
    tmp = tosac_malloc(tsize);
    diff = tosac_malloc(dsize);
    if (!p->bufs || !p->entries || !order || !tmp || !diff) goto oom;
    for (uint32_t v = 0; v < nv; v++) {
        if (p->vals[v].kind != RV_ARENA) continue;
        uint32_t r = find_root(g, v);
        if (bufof[r] == RT_NONE) {
            bufof[r] = p->n_bufs;
            rt_buf *b = &p->bufs[p->n_bufs++];
            b->size = rt_align(g[r].size);
            b->first = g[r].first;
            b->last = g[r].last;
            if (b->size < g[r].size) {
                st = tosac_diag_add(d, TOSAC_ERR_NOMEM, "tensor '%s' is too large", p->vals[v].name);
                goto out;
            }
        }
        p->vals[v].buf = bufof[r];
        p->entries[p->n_entries++] = v;
    }
    for (uint32_t k = 0; k < p->n_ops; k++) {
        rt_op *op = &p->ops[k];
        if (!op->scratch_size) continue;
        op->scratch_buf = p->n_bufs;
        rt_buf *b = &p->bufs[p->n_bufs++];
        if (!tosac_mul_size(op->scratch_size, p->workers ? p->workers : 1, &b->size)) {
            st = tosac_diag_add(d, TOSAC_ERR_NOMEM, "scratch space too large");
            goto out;
        }
        b->first = op_first_use(p, op);
        b->last = op_last_read(p, op);
        p->entries[p->n_entries++] = k | RT_ENTRY_SCRATCH;
    }
    if (nb > RT_GREEDY_MAX_BUFS ? !place_online(p, order, (live *)tmp) : !place(p, order, tmp)) {
        st = tosac_diag_add(d, TOSAC_ERR_NOMEM, "the arena size overflows");
        goto out;
    }
    p->arena_lb = lower_bound(p, diff);
    for (uint32_t v = 0; v < nv; v++)
        if (p->vals[v].kind == RV_ARENA) p->vals[v].off = p->bufs[p->vals[v].buf].off;
    for (uint32_t k = 0; k < p->n_ops; k++)
        if (p->ops[k].scratch_buf != RT_NONE) p->ops[k].scratch_off = p->bufs[p->ops[k].scratch_buf].off;
    goto out;
oom:
    st = tosac_diag_add(d, TOSAC_ERR_NOMEM, "tosac_program_create: out of memory while planning");
out:
    tosac_free(g, gsize);
    tosac_free(bufof, bsize);
    tosac_free(order, osize);
    tosac_free(tmp, tsize);
    tosac_free(diff, dsize);
    return st;
}

/* ------------------------------------------------------------------------------------------ */
/* Inspection                                                                                    */

uint32_t tosac_program_plan_count(const tosac_program *p) { return p ? p->n_entries : 0; }

tosac_status tosac_program_plan_entry(const tosac_program *p, uint32_t i, tosac_plan_entry *out)
{
    if (!p || !out || i >= p->n_entries) return TOSAC_ERR_INVALID_ARG;
    uint32_t e = p->entries[i];
    tosac_plan_entry r;
    if (e & RT_ENTRY_SCRATCH) {
        const rt_op *op = &p->ops[e & ~RT_ENTRY_SCRATCH];
        const rt_buf *b = &p->bufs[op->scratch_buf];
        r.name = "scratch";
        r.block = p->insts[op->inst].name;
        r.op = e & ~RT_ENTRY_SCRATCH;
        r.offset = b->off;
        r.size = b->size;
        r.first = b->first;
        r.last = b->last;
        r.buffer = op->scratch_buf;
    } else {
        const rt_val *v = &p->vals[e];
        const rt_buf *b = &p->bufs[v->buf];
        r.name = v->name;
        r.block = p->insts[v->inst].name;
        r.op = UINT32_MAX;
        r.offset = b->off;
        r.size = b->size;
        r.first = v->first;
        r.last = v->last;
        r.buffer = v->buf;
    }
    *out = r;
    return TOSAC_OK;
}

static void dump_val(tosac_strbuf *sb, const tosac_program *p, uint32_t v)
{
    const rt_val *x = &p->vals[v];
    char dims[160];
    size_t len = 0;
    dims[0] = '\0';
    for (int32_t i = 0; i < x->rank && len + 24 < sizeof dims; i++)
        len += (size_t)snprintf(dims + len, sizeof dims - len, "%s%lld", i ? "," : "", (long long)x->shape[i]);
    tosac_strbuf_appendf(sb, "  %s: '%s' %s%s [%s] %zu bytes", p->insts[x->inst].name, x->name,
                         tosac_dtype_name(x->dtype), x->f64 ? " (f64)" : "", dims, x->nbytes);
}

char *tosac_program_dump_plan(const tosac_program *p)
{
    if (!p) return NULL;
    tosac_strbuf sb;
    tosac_strbuf_init(&sb);
    tosac_strbuf_appendf(&sb,
                         "arena %zu bytes (lower bound %zu), %u buffers, %d steps; constants %zu bytes; variables %zu bytes\n",
                         p->arena_size, p->arena_lb, (unsigned)p->n_bufs, (int)p->n_steps, p->const_size, p->var_size);
    for (uint32_t b = 0; b < p->n_bufs; b++) {
        const rt_buf *x = &p->bufs[b];
        tosac_strbuf_appendf(&sb, "buffer %u: [%zu, %zu) steps %d..%d\n", (unsigned)b, x->off, x->off + x->size,
                             (int)x->first, (int)x->last);
        for (uint32_t e = 0; e < p->n_entries; e++) {
            uint32_t id = p->entries[e];
            if (id & RT_ENTRY_SCRATCH) {
                const rt_op *op = &p->ops[id & ~RT_ENTRY_SCRATCH];
                if (op->scratch_buf != b) continue;
                char label[256];
                rt_op_label(p, id & ~RT_ENTRY_SCRATCH, label, sizeof label);
                tosac_strbuf_appendf(&sb, "  scratch of %s, %zu bytes\n", label, op->scratch_size);
            } else if (p->vals[id].buf == b) {
                dump_val(&sb, p, id);
                tosac_strbuf_appendf(&sb, ", steps %d..%d\n", (int)p->vals[id].first, (int)p->vals[id].last);
            }
        }
    }
    for (uint32_t c = 0; c < p->n_chains; c++) {
        const rt_chain *ch = &p->chains[c];
        tosac_strbuf_appendf(&sb, "chain %u: [%lld, %lld] in blocks of %lld rows, %zu block-buffer bytes per worker:",
                             (unsigned)c, (long long)ch->rows, (long long)ch->cols, (long long)ch->block_rows, ch->blk_size);
        if (ch->strips)
            tosac_strbuf_appendf(&sb, " in strips of %lld x %lld,", (long long)ch->strip_rows, (long long)ch->strip_cols);
        if (ch->producer != RT_NONE)
            tosac_strbuf_appendf(&sb, " from the epilogue of %u (%s):", (unsigned)ch->producer,
                                 tosac_op_name(p->ops[ch->producer].op));
        if (ch->consumer != RT_NONE)
            tosac_strbuf_appendf(&sb, " before the input rows of %u (%s):", (unsigned)ch->consumer,
                                 tosac_op_name(p->ops[ch->consumer].op));
        for (uint32_t i = 0; i < ch->n_links; i++) {
            uint32_t k = p->links[ch->link_base + i].op;
            tosac_strbuf_appendf(&sb, " %u (%s)%s", (unsigned)k, tosac_op_name(p->ops[k].op),
                                 p->links[ch->link_base + i].strip.form == TOSAC_KSTRIP_FUSED ? " in one row with" : "");
        }
        tosac_strbuf_append(&sb, "\n");
    }
    for (uint32_t k = 0; k < p->n_ops; k++)
        if (p->ops[k].op == TOSAC_OP_SLICE && p->ops[k].fused_into != RT_NONE)
            tosac_strbuf_appendf(&sb, "view: %u (SLICE) read in place by %u (%s)\n", (unsigned)k, (unsigned)p->ops[k].fused_into,
                                 tosac_op_name(p->ops[p->ops[k].fused_into].op));
    tosac_strbuf_append(&sb, "not in the arena:\n");
    for (uint32_t v = 0; v < p->n_vals; v++) {
        const rt_val *x = &p->vals[v];
        switch (x->kind) {
        case RV_CONST:
            dump_val(&sb, p, v);
            if (x->borrowed)
                tosac_strbuf_append(&sb, ": constant, borrowed from the graph\n");
            else
                tosac_strbuf_appendf(&sb, ": constant at +%zu\n", x->off);
            break;
        case RV_VAR:
            dump_val(&sb, p, v);
            tosac_strbuf_appendf(&sb, ": variable '%s' at +%zu\n", p->vars[x->var].name, p->vars[x->var].off);
            break;
        case RV_EXT:
            dump_val(&sb, p, v);
            tosac_strbuf_append(&sb, ": caller buffer\n");
            break;
        case RV_LINK: {
            uint32_t f = rt_final_val(p, v);
            dump_val(&sb, p, v);
            tosac_strbuf_appendf(&sb, ": storage of %s: '%s'\n", p->insts[p->vals[f].inst].name, p->vals[f].name);
            break;
        }
        default: break;
        }
    }
    return tosac_strbuf_take(&sb);
}
