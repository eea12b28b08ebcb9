/*
 * Fused epilogues, chosen once at create. A RESCALE that is the only reader of the int32 result of
 * a CONV2D / CONV3D / DEPTHWISE_CONV2D / TRANSPOSE_CONV2D / MATMUL (and a CLAMP that is the only
 * reader of that RESCALE's result), or a CLAMP that is the only reader of the fp32 result of a
 * convolution, runs inside the producer's output loop (kernels/k_epilogue.h), so the intermediate
 * tensor is never written: the producer gets rt_op.epi and the absorbed operators fused_into. The
 * results are the bits the operators give one by one.
 *
 * Chains (program.h rt_chain), grouped after the epilogues: trees of elementwise operators whose
 * intermediate results never reach memory, run block by block over the thread pool (exec.c). A
 * single large elementwise operator is a chain of one (it gets the pool). Every kernel of these
 * families computes each output element from the same elements of its operands, so running it on
 * a block of whole rows gives the bits of the whole call; the channel is the last dimension, so
 * per-channel RESCALE tables and [1.., C] broadcasts work on any block of rows. A chain may run
 * inside a convolution: from its epilogue on the rows it stores (tails) or before it reads its
 * input rows (prologues). Before all of these, SLICE views let a convolution read a SLICE's input
 * in place of its result (below).
 *
 * The memory plan still gives the intermediate values storage: with an op callback set (which
 * promises every operator's result, tosac_program_op_output) the executor runs the operators one
 * by one, unless the program has an observe list (opts.observe): then only a listed value is
 * promised, and none is made an intermediate here (rt_val.observed). The fused result is live from the producer's step on, and everything a chain reads or
 * writes over the chain's steps (plan.c).
 */
#include <math.h>
#include <string.h>

#include "core/alloc.h"
#include "kernels/k_epilogue.h"
#include "kernels/kutil.h"
#include "runtime/program.h"

/* The only operator reading value v, if v is an ordinary arena value of its instance read by
   exactly one operand of one operator and by nothing else (block output, copy, capture). */
static uint32_t sole_reader(const tosac_program *p, uint32_t v, const uint32_t *readers)
{
    const rt_val *x = &p->vals[v];
    if (x->kind != RV_ARENA || x->block_io || readers[v] == RT_NONE) return RT_NONE;
    return readers[v];
}

/* Elements of a chain block (rounded to whole rows): the block's intermediates stay in the
   core's L2 cache, and a block's kernel calls cost little next to its work. */
#define RT_CHAIN_BLOCK 8192
/* Elements of a strip (rounded to whole rows when a row is shorter): a chain of fp32 members
   with strip forms runs each strip through every member (exec.c), so its intermediates and
   repeated broadcast rows stay in the core's L1 cache. */
#define RT_CHAIN_STRIP 1024
/* A lone operator becomes a chain of one (for the pool) from this many elements on. */
#define RT_CHAIN_MIN_ELEMS (2 * RT_CHAIN_BLOCK)

/* Operands of op that a chain slices (the rest, such as RESCALE's multiplier or a TABLE, are
   passed whole); 0 for an operator no chain may hold. */
static uint32_t chain_data_operands(const rt_op *op)
{
    tosac_kernel_fn f = op->fn;
    uint32_t n = f == tosac_kernel_unary || f == tosac_kernel_clamp || f == tosac_kernel_table || f == tosac_kernel_rescale ? 1
                 : f == tosac_kernel_binary ? 2
                 : f == tosac_kernel_select ? 3
                                            : 0;
    if (op->mode != M_KERNEL || op->n_out != 1 || op->n_in < n || op->n_in > RT_LINK_MAX_IN || op->has_epi ||
        op->fused_into != RT_NONE)
        return 0;
    return n;
}

/* A value a block of rows of `out` can read: the full shape, or [1.., C] / all ones / rank 0. */
static bool row_sliceable(const rt_val *x, const rt_val *out)
{
    if (rt_same_dims(x, out) || x->rank == 0) return true;
    if (x->rank != out->rank) return false;
    for (int32_t i = 0; i + 1 < x->rank; i++)
        if (x->shape[i] != 1) return false;
    return x->shape[x->rank - 1] == 1 || x->shape[x->rank - 1] == out->shape[out->rank - 1];
}

/* An operator a chain may hold: an elementwise kernel whose result has rank >= 1 and ordinary
   storage, and whose data operands are constants, arena values or caller buffers (not variables,
   not captures) a block of rows can read. */
static bool chain_member(const tosac_program *p, const rt_op *op)
{
    uint32_t nd = chain_data_operands(op);
    if (!nd) return false;
    const rt_val *o = &p->vals[p->idx[op->out_base]];
    if (o->rank < 1 || o->nelem < 1 || (o->kind != RV_ARENA && o->kind != RV_EXT)) return false;
    for (uint32_t j = 0; j < nd; j++) {
        const rt_val *x = &p->vals[p->idx[op->in_base + j]];
        if ((x->kind != RV_ARENA && x->kind != RV_CONST && x->kind != RV_EXT) || !row_sliceable(x, o)) return false;
    }
    return true;
}

static bool chains_off;
void rt_fuse_chains_off(bool off) { chains_off = off; }

/* Groups the chains: parent[k] is the member of the same chain reading op k's result (RT_NONE for
   a root), root[k] the chain's root. */
static void make_chains(tosac_program *p, const uint32_t *readers, uint32_t *parent, uint32_t *root, uint32_t *size)
{
    for (uint32_t k = 0; k < p->n_ops; k++) parent[k] = RT_NONE, size[k] = 0;
    if (!p->for_host || chains_off) return;
    for (uint32_t k = 0; k < p->n_ops; k++) {
        const rt_op *op = &p->ops[k];
        if (!chain_member(p, op)) continue;
        uint32_t x = p->idx[op->out_base];
        uint32_t r = sole_reader(p, x, readers);
        if (r == RT_NONE || r <= k || p->ops[r].inst != op->inst || !chain_member(p, &p->ops[r]) || p->vals[x].observed)
            continue;
        const rt_op *rop = &p->ops[r];
        uint32_t nd = chain_data_operands(rop), j = 0;
        while (j < nd && p->idx[rop->in_base + j] != x) j++;
        if (j < nd && rt_same_dims(&p->vals[x], &p->vals[p->idx[rop->out_base]])) parent[k] = r;
    }
    /* a reader comes after its producer: roots are known when their members are reached */
    for (uint32_t k = p->n_ops; k-- > 0;) {
        root[k] = parent[k] == RT_NONE ? k : root[parent[k]];
        if (chain_member(p, &p->ops[k])) size[root[k]]++;
    }
}

/* The operator that writes value v at run time: its producer, or the convolution whose epilogue
   absorbed that producer (RT_NONE: a constant, an instance input, a capture). */
static uint32_t writer_of(const tosac_program *p, const uint32_t *prod, uint32_t v)
{
    uint32_t k = prod[v];
    return k != RT_NONE && p->ops[k].fused_into != RT_NONE ? p->ops[k].fused_into : k;
}

static bool is_conv(uint32_t op)
{
    return op == TOSAC_OP_CONV2D || op == TOSAC_OP_CONV3D || op == TOSAC_OP_DEPTHWISE_CONV2D || op == TOSAC_OP_TRANSPOSE_CONV2D;
}

/* Whether operator k reads, as rows, the fp32 result of a convolution (a tail candidate, below). */
static bool reads_conv(const tosac_program *p, const uint32_t *prod, uint32_t k)
{
    const rt_op *op = &p->ops[k];
    const rt_val *o = &p->vals[p->idx[op->out_base]];
    for (uint32_t j = 0; j < chain_data_operands(op); j++) {
        uint32_t v = p->idx[op->in_base + j], w = writer_of(p, prod, v);
        if (w != RT_NONE && is_conv(p->ops[w].op) && p->vals[v].dtype == TOSAC_DTYPE_FP32 && rt_same_dims(&p->vals[v], o))
            return true;
    }
    return false;
}

/* Whether operator r is a CONV2D whose input rows are its output rows (1x1, stride 1, unpadded,
   the input's size: k_conv.c then reads input row p for output row p only, in the task computing
   it) reading the fp32 value y as its input and nowhere else. */
static bool rows_conv(const tosac_program *p, uint32_t r, uint32_t y)
{
    const rt_op *cv = &p->ops[r];
    if (cv->op != TOSAC_OP_CONV2D || cv->mode != M_KERNEL || cv->n_out != 1 || cv->n_in < 2 || p->idx[cv->in_base] != y)
        return false;
    const tosac_kcall *c = &cv->call;
    const tosac_ktensor *in = &c->in[0], *w = &c->in[1], *out = &c->out[0];
    if (in->rank != 4 || w->rank != 4 || out->rank != 4 || in->dtype != TOSAC_DTYPE_FP32 || in->f64 || out->dtype != TOSAC_DTYPE_FP32 ||
        out->f64 || w->shape[1] != 1 || w->shape[2] != 1 || in->shape[1] != out->shape[1] || in->shape[2] != out->shape[2])
        return false;
    for (uint32_t i = 0; i < 4; i++)
        if (tosac_kattr_at(c, TOSAC_ATTR_CONV2D_pad, i, 0) != 0 || (i < 2 && tosac_kattr_at(c, TOSAC_ATTR_CONV2D_stride, i, 1) != 1)) return false;
    return true;
}

/* A chain is worth running as one: two members or more, one large operator, or one that may run
   from a convolution's epilogue (a residual ADD of a few thousand elements: its pass over the
   convolution's result is what a tail saves, at any size) or before a convolution reads its rows
   (an SE block's channel scale, below). */
static bool chain_kept(const tosac_program *p, const uint32_t *readers, const uint32_t *prod, const uint32_t *root,
                       const uint32_t *size, uint32_t k)
{
    const uint32_t y = p->idx[p->ops[k].out_base], r = sole_reader(p, y, readers);
    return root[k] == k && (size[k] > 1 || (size[k] == 1 && (p->vals[y].nelem >= RT_CHAIN_MIN_ELEMS || reads_conv(p, prod, k) ||
                                                               (r != RT_NONE && rows_conv(p, r, y)))));
}

/* The scalar a member reads as operand j: a one-element fp32 constant (false otherwise). */
static bool strip_scalar(const tosac_program *p, const rt_link *l, uint32_t j, float *k)
{
    const tosac_ktensor *t = &p->kt[p->ops[l->op].in_base + j];
    if (l->in[j] != RT_LINK_WHOLE || t->nelem != 1 || !t->constant || !t->data) return false;
    memcpy(k, t->data, sizeof *k);
    return true;
}

/* Whether link u reads the rows x (value v) as operand j. */
static bool strip_reads_x(const tosac_program *p, const rt_link *u, uint32_t j, uint32_t v)
{
    return u->in[j] == RT_LINK_SLICE && p->idx[p->ops[u->op].in_base + j] == v;
}

/* Strip members that run as one row (tosac_kstrip_fuse), each reading the one before and the
   first and last reading the same rows x: SIGMOID(x) then x times it (SiLU); x times a scalar,
   plus a scalar, CLAMP, x times that (hard-swish). The row keeps the intermediates in registers;
   the links before the last become FUSED (skipped). */
static void fuse_strips(const tosac_program *p, const rt_chain *c, rt_link *ln)
{
    const uint32_t end = c->link_base + c->n_links;
    for (uint32_t i = c->link_base; i < end; i++) {
        const rt_link *l = &ln[i];
        const uint32_t lop = p->ops[l->op].op;
        /* the rows x: the first member's operand that is not a scalar */
        uint32_t n = 0, xj = 0;
        float k[2] = {0.0f, 0.0f};
        if (lop == TOSAC_OP_SIGMOID) {
            n = 2;
        } else if (lop == TOSAC_OP_MUL && i + 3 < end) {
            n = 4;
            xj = strip_scalar(p, l, 0, &k[0]) ? 1 : 0;
            if (!strip_scalar(p, l, 1 - xj, &k[0])) continue;
        } else {
            continue;
        }
        if (i + n > end || l->in[xj] != RT_LINK_SLICE) continue;
        const uint32_t v = p->idx[p->ops[l->op].in_base + xj];
        bool ok = true;
        for (uint32_t q = i + 1; ok && q + 1 < i + n; q++) { /* middle members: the one before and a scalar */
            const rt_link *m = &ln[q];
            const uint32_t mop = p->ops[m->op].op;
            if (mop == TOSAC_OP_CLAMP) {
                ok = m->in[0] == ln[q - 1].out;
            } else {
                const uint32_t j = m->in[0] == ln[q - 1].out ? 0 : 1;
                ok = mop == TOSAC_OP_ADD && m->in[j] == ln[q - 1].out && strip_scalar(p, m, 1 - j, &k[1]);
            }
        }
        const rt_link *last = &ln[i + n - 1];
        const uint32_t xop = last->in[0] == ln[i + n - 2].out ? 1 : 0;
        if (!ok || last->in[1 - xop] != ln[i + n - 2].out || !strip_reads_x(p, last, xop, v)) continue;
        tosac_kstrip m[4], s;
        for (uint32_t q = 0; q < n; q++) m[q] = ln[i + q].strip;
        if (!tosac_kstrip_fuse(m, n, k, xop, &s)) continue;
        for (uint32_t q = i; q + 1 < i + n; q++) ln[q].strip.form = TOSAC_KSTRIP_FUSED;
        ln[i + n - 1].strip = s;
        i += n - 1;
    }
}

/* Lays out the chains in p->mem (rt_op.chain, p->chains, p->links); without memory there are none.
   `size` is reused: a root's chain index. */
static void build_chains(tosac_program *p, const uint32_t *readers, const uint32_t *prod, const uint32_t *parent,
                         const uint32_t *root, uint32_t *size)
{
    uint32_t nc = 0, nl = 0;
    for (uint32_t k = 0; k < p->n_ops; k++)
        if (chain_kept(p, readers, prod, root, size, k)) nc++, nl += size[k];
    if (!nc) return;
    rt_chain *ch = tosac_arena_alloc(&p->mem, nc * sizeof(rt_chain));
    rt_link *ln = tosac_arena_alloc(&p->mem, nl * sizeof(rt_link));
    if (!ch || !ln) return;
    uint32_t ci = 0, base = 0;
    for (uint32_t k = 0; k < p->n_ops; k++) {
        if (!chain_kept(p, readers, prod, root, size, k)) {
            if (root[k] == k) size[k] = RT_NONE;
            continue;
        }
        const rt_val *o = &p->vals[p->idx[p->ops[k].out_base]];
        rt_chain *c = &ch[ci];
        memset(c, 0, sizeof *c);
        c->cols = o->shape[o->rank - 1];
        c->rows = (int64_t)((size_t)o->nelem / (size_t)c->cols);
        c->block_rows = c->cols >= RT_CHAIN_BLOCK ? 1 : (int64_t)(RT_CHAIN_BLOCK / (size_t)c->cols);
        if (c->block_rows > c->rows) c->block_rows = c->rows;
        c->strips = size[k] > 1; /* (a chain of one gains nothing from strips) */
        c->strip_cols = c->cols < RT_CHAIN_STRIP ? c->cols : RT_CHAIN_STRIP;
        c->strip_rows = c->cols < RT_CHAIN_STRIP ? (int64_t)(RT_CHAIN_STRIP / (size_t)c->cols) : 1;
        if (c->strip_rows > c->block_rows) c->strip_rows = c->block_rows;
        c->link_base = base;
        c->step_last = p->ops[k].step_end;
        c->producer = c->consumer = RT_NONE;
        base += size[k];
        size[k] = ci++;
    }
    tosac_kstrip strip;
    for (uint32_t m = 0; m < p->n_ops; m++)
        if (chain_member(p, &p->ops[m]) && size[root[m]] != RT_NONE && !tosac_kstrip_of(&p->ops[m].call, &strip))
            ch[size[root[m]]].strips = false;
    /* members in execution order (the root last: it reads the others' results) */
    for (uint32_t m = 0; m < p->n_ops; m++) {
        if (!chain_member(p, &p->ops[m]) || size[root[m]] == RT_NONE) continue;
        uint32_t k = root[m], cix = size[k];
        rt_chain *c = &ch[cix];
        rt_link *l = &ln[c->link_base + c->n_links++];
        memset(l, 0, sizeof *l);
        l->op = m;
        l->rep[0] = l->rep[1] = RT_LINK_KEEP;
        if (c->strips) tosac_kstrip_of(&p->ops[m].call, &l->strip);
        p->ops[m].chain = cix;
        /* an intermediate's buffer: a block's or (strips) a strip's elements */
        const size_t elems = (size_t)(c->strips ? c->strip_rows * c->strip_cols : c->block_rows * c->cols);
        if (m == k) {
            l->out = RT_LINK_SLICE;
        } else {
            const rt_val *x = &p->vals[p->idx[p->ops[m].out_base]];
            l->out = c->blk_size;
            c->blk_size += rt_align(elems * tosac_exec_elem_size(x->dtype, x->f64));
        }
        /* operands: an intermediate's offset, the block's rows or the whole tensor */
        const rt_val *o = &p->vals[p->idx[p->ops[m].out_base]];
        uint32_t nd = chain_data_operands(&p->ops[m]);
        for (uint32_t j = 0; j < RT_LINK_MAX_IN; j++) {
            l->in[j] = j < nd ? RT_LINK_WHOLE : RT_LINK_KEEP;
            if (j >= nd) continue;
            uint32_t v = p->idx[p->ops[m].in_base + j];
            for (uint32_t q = c->link_base; q + 1 < c->link_base + c->n_links; q++)
                if (parent[ln[q].op] == m && p->idx[p->ops[ln[q].op].out_base] == v) l->in[j] = ln[q].out;
            if (l->in[j] == RT_LINK_WHOLE && rt_same_dims(&p->vals[v], o)) l->in[j] = RT_LINK_SLICE;
            if (c->strips && j < 2 && l->in[j] == RT_LINK_WHOLE && p->vals[v].nelem > 1 && c->strip_rows > 1) {
                l->rep[j] = c->blk_size;
                c->blk_size += rt_align(elems * sizeof(float));
            }
        }
    }
    for (uint32_t i = 0; i < nc; i++)
        if (ch[i].strips) fuse_strips(p, &ch[i], ln);
    p->chains = ch;
    p->n_chains = nc;
    p->links = ln;
    p->n_links = nl;
}

/* Whether chain ci may run from the epilogue of convolution k, whose stored result is x (below). */
static bool tail_ok(const tosac_program *p, uint32_t ci, uint32_t k, uint32_t x, const uint32_t *count, const uint32_t *prod)
{
    const rt_chain *c = &p->chains[ci];
    const rt_op *op = &p->ops[k], *root = &p->ops[p->links[c->link_base + c->n_links - 1].op];
    const rt_val *xv = &p->vals[x];
    if (!is_conv(op->op) || op->mode != M_KERNEL || op->n_out != 1 || op->tail != RT_NONE || op->chain != RT_NONE ||
        op->inst != root->inst || op->call.out[0].f64 || (op->has_epi ? op->epi.rescale != NULL || op->fused_out != x
                                                                    : p->idx[op->out_base] != x))
        return false;
    if (xv->dtype != TOSAC_DTYPE_FP32 || xv->f64 || xv->kind != RV_ARENA || xv->block_io) return false;
    uint32_t slots = 0;
    for (uint32_t i = 0; i < c->n_links; i++) {
        const rt_op *m = &p->ops[p->links[c->link_base + i].op];
        for (uint32_t j = 0; j < m->n_in; j++) {
            uint32_t u = p->idx[m->in_base + j], w = writer_of(p, prod, u);
            if (u == x) {
                slots++;
                continue;
            }
            /* a member's result, or a value that exists before the convolution runs */
            if (p->vals[u].kind != RV_CONST && w != RT_NONE && p->ops[w].chain != ci && w >= k) return false;
        }
    }
    return slots == count[x];
}

/* Gives fp32 convolution op the identity clamp [-inf, +inf], PROPAGATE (the same bits, NaN
   included) as its epilogue unless it has one, for its `post` / `pre`. */
static void identity_epilogue(tosac_program *p, rt_op *op)
{
    if (op->has_epi) return;
    op->has_epi = true;
    op->epi.out = op->call.out;
    op->epi.flo = -INFINITY, op->epi.fhi = INFINITY, op->epi.fignore = false;
    op->fused_out = p->idx[op->out_base];
    op->fused_last = RT_NONE; /* (absorbs no operator) */
}

/*
 * Tails: a chain that reads the fp32 result x of a convolution (CONV2D, CONV3D, DEPTHWISE_CONV2D,
 * TRANSPOSE_CONV2D; after its fused CLAMP, if any) as rows of the block (SiLU: SIGMOID and MUL
 * read x; hard-swish: MUL, ADD, CLAMP, MUL) runs from the convolution's epilogue on every block of
 * rows the convolution has just stored (epi.post), instead of reading x back from memory at the
 * root's step. Only when every reader of x is a member (nothing else reads x while the root may
 * overwrite it in place) and every other operand of every member exists when the convolution runs:
 * a constant, an instance input or capture, or the result of an earlier operator. A convolution
 * without a CLAMP of its own gets the identity clamp [-inf, +inf], PROPAGATE: the same bits, NaN
 * included.
 */
static void attach_tails(tosac_program *p, const uint32_t *count, const uint32_t *prod)
{
    for (uint32_t ci = 0; ci < p->n_chains; ci++) {
        rt_chain *c = &p->chains[ci];
        for (uint32_t i = 0; i < c->n_links && c->producer == RT_NONE; i++) {
            const rt_link *l = &p->links[c->link_base + i];
            const rt_op *m = &p->ops[l->op];
            for (uint32_t j = 0; j < RT_LINK_MAX_IN && j < m->n_in; j++) {
                uint32_t x = p->idx[m->in_base + j], k = writer_of(p, prod, x);
                if (l->in[j] != RT_LINK_SLICE || k == RT_NONE || !tail_ok(p, ci, k, x, count, prod)) continue;
                rt_op *op = &p->ops[k];
                identity_epilogue(p, op);
                op->tail = ci;
                c->producer = k;
                break;
            }
        }
    }
}

/* Whether convolution r (CONV2D or DEPTHWISE_CONV2D, NHWC), reading an input of h x w pixels,
   takes no tap at row h or column w or beyond (pixels in its padding above and left are fine). */
static bool conv_reads_within(const rt_op *r, int64_t h, int64_t w)
{
    const tosac_kcall *c = &r->call;
    const bool dw = r->op == TOSAC_OP_DEPTHWISE_CONV2D;
    const unsigned pad = dw ? TOSAC_ATTR_DEPTHWISE_CONV2D_pad : TOSAC_ATTR_CONV2D_pad;
    const unsigned str = dw ? TOSAC_ATTR_DEPTHWISE_CONV2D_stride : TOSAC_ATTR_CONV2D_stride;
    const unsigned dil = dw ? TOSAC_ATTR_DEPTHWISE_CONV2D_dilation : TOSAC_ATTR_CONV2D_dilation;
    const tosac_ktensor *wt = &c->in[1], *out = &c->out[0];
    if (wt->rank != 4 || out->rank != 4) return false;
    const int64_t kh = wt->shape[dw ? 0 : 1], kw = wt->shape[dw ? 1 : 2];
    const int64_t last_y = (out->shape[1] - 1) * tosac_kattr_at(c, str, 0, 1) - tosac_kattr_at(c, pad, 0, 0) + (kh - 1) * tosac_kattr_at(c, dil, 0, 1);
    const int64_t last_x = (out->shape[2] - 1) * tosac_kattr_at(c, str, 1, 1) - tosac_kattr_at(c, pad, 2, 0) + (kw - 1) * tosac_kattr_at(c, dil, 1, 1);
    return out->shape[1] > 0 && out->shape[2] > 0 && last_y < h && last_x < w;
}

/*
 * Views. A SLICE that only drops trailing rows and columns of an NHWC tensor (start 0, batch and
 * channels whole), whose result only the input of one CONV2D / DEPTHWISE_CONV2D reads, and that
 * convolution never reads a dropped row or column: the convolution reads the SLICE's input
 * instead (its kernel call sees the longer rows) and the SLICE is skipped (fused_into). That is
 * the SLICE the ONNX front end puts before a stride-2 convolution whose output size would not
 * divide exactly (56 -> 55 before resnet's 1x1 shortcuts, 224 -> 223 before squeezenet's stem).
 * Every tap reads the element it read in the slice, and a tap in the padding above or to the left
 * is padding in both, so the results are the same bits. The SLICE keeps its operands (it runs one
 * by one under an op callback without an observe list; the input is then read twice, which only
 * stops other fusions); a listed (observed) SLICE result is never a view. Programs for emitted C
 * keep their SLICEs.
 */
static void slice_views(tosac_program *p, uint32_t *readers, uint32_t *count)
{
    if (!p->for_host || chains_off) return;
    for (uint32_t k = 0; k < p->n_ops; k++) {
        rt_op *sl = &p->ops[k];
        if (sl->op != TOSAC_OP_SLICE || sl->mode != M_KERNEL || sl->n_in < 3 || sl->n_out != 1) continue;
        const uint32_t a = p->idx[sl->in_base], s = p->idx[sl->out_base];
        const uint32_t r = sole_reader(p, s, readers);
        const rt_val *A = &p->vals[rt_final_val(p, a)], *S = &p->vals[s];
        const tosac_ktensor *start = &sl->call.in[1];
        if (r == RT_NONE || S->observed || A->rank != 4 || S->rank != 4 || A->dtype != S->dtype || A->f64 != S->f64 ||
            (A->kind != RV_ARENA && A->kind != RV_CONST && A->kind != RV_EXT) || !start->constant || !start->data ||
            start->nelem != 4)
            continue;
        rt_op *cv = &p->ops[r];
        if ((cv->op != TOSAC_OP_CONV2D && cv->op != TOSAC_OP_DEPTHWISE_CONV2D) || cv->mode != M_KERNEL ||
            cv->inst != sl->inst || cv->n_in < 2 || p->idx[cv->in_base] != s)
            continue;
        const int64_t *st = start->data;
        if (st[0] || st[1] || st[2] || st[3] || S->shape[0] != A->shape[0] || S->shape[3] != A->shape[3] ||
            S->shape[1] > A->shape[1] || S->shape[2] > A->shape[2] || !conv_reads_within(cv, S->shape[1], S->shape[2]))
            continue;
        p->idx[cv->in_base] = a;
        p->kt[cv->in_base] = p->kt[sl->in_base];
        sl->fused_into = r;
        count[s] = 0, count[a]++;
        readers[s] = readers[a] = RT_NONE;
    }
}

/*
 * Prologues: a chain (not a tail) whose result y only a 1x1, stride-1, unpadded fp32 CONV2D reads
 * (as its input: rows_conv) runs inside that convolution, on each block of input rows just before
 * a task reads them (epi.pre), instead of writing all of y at the root's step and reading it back
 * from memory: the SE block's MUL by a per-channel scale before the projection convolution of
 * efficientnet_b0 and mobilenet_v3_small. Every operand of every member exists by the root's step,
 * which comes before the convolution's, and lives on to it (plan.c: the chain's step_last); the
 * convolution splits no pixel block over column groups with a `pre` (k_conv.c), so each row is
 * computed once, by the task that reads it.
 */
static void attach_pre(tosac_program *p, const uint32_t *readers)
{
    for (uint32_t ci = 0; ci < p->n_chains; ci++) {
        rt_chain *c = &p->chains[ci];
        const rt_op *root = &p->ops[p->links[c->link_base + c->n_links - 1].op];
        const uint32_t y = p->idx[root->out_base], r = sole_reader(p, y, readers);
        if (c->producer != RT_NONE || r == RT_NONE || !rows_conv(p, r, y) || p->ops[r].inst != root->inst ||
            p->ops[r].pre != RT_NONE || (p->ops[r].has_epi && p->ops[r].epi.rescale))
            continue;
        rt_op *cv = &p->ops[r];
        identity_epilogue(p, cv);
        cv->pre = ci;
        c->consumer = r;
        c->step_last = cv->step_end;
    }
}

void rt_fuse(tosac_program *p)
{
    /* readers[v]: the one operator reading v; RT_NONE for none or several (or other uses) */
    uint32_t *readers = tosac_malloc(((size_t)p->n_vals + 1) * sizeof(uint32_t));
    uint32_t *count = tosac_calloc((size_t)p->n_vals + 1, sizeof(uint32_t));
    for (uint32_t k = 0; k < p->n_ops; k++) p->ops[k].chain = p->ops[k].tail = p->ops[k].pre = RT_NONE;
    if (!readers || !count) goto out; /* fusion is an optimisation: none without memory */
    for (uint32_t v = 0; v < p->n_vals; v++) {
        readers[v] = RT_NONE;
        if (p->vals[v].kind == RV_LINK) count[rt_final_val(p, v)] += 2; /* a capture or binding */
    }
    for (uint32_t k = 0; k < p->n_ops; k++) {
        const rt_op *op = &p->ops[k];
        for (uint32_t j = 0; j < op->n_in; j++) {
            uint32_t v = p->idx[op->in_base + j];
            count[v]++;
            readers[v] = k;
        }
    }
    for (uint32_t c = 0; c < p->n_copies; c++) count[p->copies[c].src] += 2;
    for (uint32_t v = 0; v < p->n_vals; v++)
        if (count[v] != 1) readers[v] = RT_NONE;
    slice_views(p, readers, count);

    for (uint32_t k = 0; k < p->n_ops; k++) {
        rt_op *op = &p->ops[k];
        bool producer = op->op == TOSAC_OP_CONV2D || op->op == TOSAC_OP_CONV3D || op->op == TOSAC_OP_DEPTHWISE_CONV2D ||
                        op->op == TOSAC_OP_TRANSPOSE_CONV2D || op->op == TOSAC_OP_MATMUL;
        if (!producer || op->mode != M_KERNEL || op->n_out != 1 || op->fused_into != RT_NONE) continue;
        uint32_t x = p->idx[op->out_base];
        uint32_t r = sole_reader(p, x, readers);
        if (p->vals[x].observed) continue; /* the result is read as it is */
        if (r != RT_NONE && p->vals[x].dtype == TOSAC_DTYPE_FP32 && op->op != TOSAC_OP_MATMUL) {
            rt_op *cop = &p->ops[r];
            if (cop->op == TOSAC_OP_CLAMP && cop->mode == M_KERNEL && cop->inst == op->inst &&
                tosac_clamp_f32_bounds(&cop->call, &op->epi.flo, &op->epi.fhi, &op->epi.fignore)) {
                cop->fused_into = k;
                op->has_epi = true;
                op->epi.out = cop->call.out;
                op->fused_out = p->idx[cop->out_base];
                op->fused_last = r;
            }
            continue;
        }
        if (p->vals[x].dtype != TOSAC_DTYPE_INT32 || p->vals[x].rank < 1) continue;
        if (r == RT_NONE || p->ops[r].op != TOSAC_OP_RESCALE || p->ops[r].mode != M_KERNEL ||
            p->ops[r].inst != op->inst || p->idx[p->ops[r].in_base] != x)
            continue;
        rt_op *rs = &p->ops[r];
        int32_t lo, hi;
        if (!tosac_rescale_fusable(&rs->call, &lo, &hi)) continue;
        uint32_t out = p->idx[rs->out_base];
        uint32_t cl = sole_reader(p, out, readers);
        int32_t clo, chi;
        rt_op *cop = cl != RT_NONE ? &p->ops[cl] : NULL;
        if (cop && cop->op == TOSAC_OP_CLAMP && cop->mode == M_KERNEL && cop->inst == op->inst && !p->vals[out].observed &&
            tosac_clamp_int_bounds(&cop->call, &clo, &chi) && cop->call.in[0].dtype == rs->call.out[0].dtype) {
            /* the RESCALE's range contains [clo, chi] (same signed type): the composition clips once */
            lo = clo, hi = chi;
            cop->fused_into = k;
            out = p->idx[cop->out_base];
            op->epi.out = cop->call.out;
            op->fused_last = cl;
        } else {
            op->epi.out = rs->call.out;
            op->fused_last = r;
        }
        rs->fused_into = k;
        op->has_epi = true;
        op->epi.rescale = &rs->call;
        op->epi.lo = lo, op->epi.hi = hi;
        op->fused_out = out;
    }

    /* prod[v]: the operator producing v */
    uint32_t *prod = tosac_malloc(((size_t)p->n_vals + 1) * sizeof(uint32_t));
    uint32_t *parent = tosac_malloc(((size_t)p->n_ops + 1) * 3 * sizeof(uint32_t));
    if (prod && parent) {
        for (uint32_t v = 0; v < p->n_vals; v++) prod[v] = RT_NONE;
        for (uint32_t k = 0; k < p->n_ops; k++)
            for (uint32_t j = 0; j < p->ops[k].n_out; j++) prod[p->idx[p->ops[k].out_base + j]] = k;
        make_chains(p, readers, parent, parent + p->n_ops + 1, parent + 2 * ((size_t)p->n_ops + 1));
        build_chains(p, readers, prod, parent, parent + p->n_ops + 1, parent + 2 * ((size_t)p->n_ops + 1));
        if (p->n_chains) attach_tails(p, count, prod);
        if (p->n_chains) attach_pre(p, readers);
    }
    tosac_free(parent, ((size_t)p->n_ops + 1) * 3 * sizeof(uint32_t));
    tosac_free(prod, ((size_t)p->n_vals + 1) * sizeof(uint32_t));
out:
    tosac_free(readers, ((size_t)p->n_vals + 1) * sizeof(uint32_t));
    tosac_free(count, ((size_t)p->n_vals + 1) * sizeof(uint32_t));
}
