/*
 * `tosac emit-c`: a program created on the host, written out as C (emit_c.h).
 *
 *   plan   the runtime's buffers (lifetimes, in-place sharing, scratch) minus the intermediates a
 *          fused epilogue never writes (the int32 result of a convolution whose RESCALE runs in its
 *          output loop, ...), placed again offline (several greedy orders, the smallest wins)
 *   data   constants read by a call (typed arrays), prepared bytes of each call, shapes,
 *          attributes
 *   calls  one block per operator building the tosac_kcall the runtime would pass
 *   files  NAME.h (API, sizes, I/O shapes and q-params, figures), NAME.c, NAME.cmake, sources.txt
 */
#include "emit/emit_c.h"

#include <ctype.h>
#include <float.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/diag.h"
#include "core/strbuf.h"
#include "emit/emit_run.h"
#include "kernels/k_mve.h"
#include "runtime/program.h"

/* Kernel family (the `check` column of ops.def) of every op. */
static const char *const k_family[TOSAC_OP_COUNT] = {
#define TOSAC_OP(E, num, A, chk, acc, ins, outs) [num] = #chk,
#include "tosac/ops.def"
#undef TOSAC_OP
};

/* THE list of kernel sources: the files of each family a program may call (its Helium file too:
   the family's hooks call it on every build). */
static const struct {
    const char *family, *file, *file2;
} k_family_files[] = {
    {"conv", "k_conv.c", "k_conv_mve.c"},
    {"matmul", "k_matmul.c", "k_conv_mve.c"},
    {"rescale", "k_convert.c", "k_convert_mve.c"},
    {"cast", "k_convert.c", NULL},
    {"identity", "k_convert.c", NULL},
    {"clamp", "k_activation.c", "k_activation_mve.c"},
    {"table", "k_activation.c", "k_activation_mve.c"},
    {"unary", "k_elementwise.c", "k_elementwise_mve.c"},
    {"binary", "k_elementwise.c", "k_elementwise_mve.c"},
    {"select", "k_elementwise.c", "k_elementwise_mve.c"},
    {"pool2d", "k_pool.c", "k_pool_mve.c"},
    {"argmax", "k_pool.c", "k_pool_mve.c"},
    {"reduce", "k_reduce.c", "k_reduce_mve.c"},
    {"resize", "k_resize.c", NULL},
    {"concat", "k_layout.c", NULL},
    {"pad", "k_layout.c", NULL},
    {"reshape", "k_layout.c", NULL},
    {"reverse", "k_layout.c", NULL},
    {"slice", "k_layout.c", NULL},
    {"tile", "k_layout.c", NULL},
    {"transpose", "k_layout.c", NULL},
    {"gather", "k_gather.c", NULL},
    {"scatter", "k_gather.c", NULL},
    {"fft", "k_fft.c", NULL},
};
#define N_FAMILY_FILES (sizeof k_family_files / sizeof k_family_files[0])
/* What every family may reach (GEMM rows, epilogues, clamps, storage sizes, FP conversions); a
   linker with --gc-sections keeps only what is called. */
static const char *const k_support_files[] = {
    "src/kernels/k_gemm.c",        "src/kernels/k_convert.c", "src/kernels/k_convert_mve.c", "src/kernels/k_activation.c",
    "src/kernels/k_activation_mve.c", "src/kernels/k_storage.c", "src/core/fp.c",            "src/core/dtype.c",
    "src/emit/emit_run.c",         "src/kernels/k_winograd.c", "src/kernels/k_igemm_avx2.c",
    "src/kernels/k_iwinograd.c",   "src/kernels/k_idw_avx2.c"};
#define N_SUPPORT_FILES (sizeof k_support_files / sizeof k_support_files[0])

/* Where a value's bytes are on the device. */
enum loc_kind { L_NONE, L_ARENA, L_CONST, L_IN, L_OUT };
typedef struct loc {
    uint8_t kind;
    size_t off;   /* L_ARENA */
    uint32_t idx; /* L_CONST: value; L_IN / L_OUT: position */
} loc;

typedef struct ebuf {
    size_t size, off;
    int32_t first, last;
} ebuf;

typedef struct ectx {
    const tosac_program *p;
    const tosac_emit_c_opts *o;
    tosac_diag *d;
    bool *dropped;     /* [n_vals]: never written (fused away) */
    bool *run;         /* [n_ops]: called at invoke */
    bool *const_used;  /* [n_vals] */
    size_t *buf_off;   /* [n_bufs]: offset in the emitted plan (SIZE_MAX: dropped) */
    size_t *prep_off;  /* [n_ops]: offset in the emitted prepared array (SIZE_MAX: none) */
    uint32_t *unread;  /* [n_ops]: tosac_kprep.unread of the call (all bits: a RESCALE whose
                          producer folded it in) */
    bool *owned;       /* [n_ops]: run by the family's Helium-only entry (kernels/k_mve.h) */
    uint32_t *slice;   /* [n_ops]: first op of the sliced chain the op belongs to (RT_NONE: none) */
    uint32_t *slice_end; /* [n_ops]: of a chain's first op, its last op */
    bool *slim;        /* [n_vals]: a chain's intermediate, given one slice of storage */
    bool slicing;      /* emitting a chain's calls: tensors are one slice of elements */
    size_t *prep_skip; /* [n_ops]: leading prepared bytes that entry never reads (not emitted) */
    size_t prep_total, arena, lb;
    /* the call tables (emit/emit_run.h) */
    uint32_t *cidx;    /* [n_vals]: index of a used constant in the constant table */
    uint32_t *call_at; /* [n_ops]: index of the call in the call table (RT_NONE: none) */
    uint32_t n_calls, n_t, n_attr, n_epi, n_fn, maxt;
    int64_t *shp;      /* the shape pool */
    size_t n_shp, cap_shp;
    char **akeys;      /* [n_attr]: each distinct attribute table, as text with its names left out */
    size_t cap_attr;
    const char *fns[64]; /* the kernels called (family names; owned: "_mve" in fn_mve) */
    bool fn_mve[64];
    bool too_big;      /* a table field overflowed (reported by put_data) */
    char px[16]; /* prefix of the static names (a segment's "g2_"; "" for one program) */
    tosac_strbuf c, h;
} ectx;

/* ---- plan ------------------------------------------------------------------------------------ */

static int cmp_size(const void *a, const void *b)
{
    const ebuf *x = *(const ebuf *const *)a, *y = *(const ebuf *const *)b;
    if (x->size != y->size) return x->size > y->size ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}
static int cmp_first(const void *a, const void *b)
{
    const ebuf *x = *(const ebuf *const *)a, *y = *(const ebuf *const *)b;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return x->size > y->size ? -1 : x->size < y->size;
}
static int cmp_area(const void *a, const void *b)
{
    const ebuf *x = *(const ebuf *const *)a, *y = *(const ebuf *const *)b;
    double ax = (double)x->size * (x->last - x->first + 1), ay = (double)y->size * (y->last - y->first + 1);
    if (ax != ay) return ax > ay ? -1 : 1;
    return cmp_size(a, b);
}

/*
 * Sliced chains: consecutive calls of same-shape elementwise operators (RESCALE, ADD, SUB, MUL;
 * no broadcast) run slice by slice (about SLICE_ELEMS elements, whole rows of the last
 * dimension), in the original order within a slice. Every element is computed by the same calls in the same order, so the
 * results are the bits of the whole calls; the values produced and read only inside the chain
 * (the int32 tensors of an integer residual ADD: RESCALE, RESCALE, ADD, RESCALE) then need one
 * slice of storage, and the chain's other tensors live over the whole chain.
 */
#define SLICE_ELEMS 1024

static uint32_t call_slot(const rt_op *op, uint32_t j) { return j < op->n_in ? op->in_base + j : op->out_base + (j - op->n_in); }

static bool same_shape(const tosac_ktensor *a, const tosac_ktensor *b)
{
    if (a->rank != b->rank || a->nelem != b->nelem) return false;
    for (int32_t i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i]) return false;
    return true;
}

/* Call k may join a chain: its elementwise operands (not RESCALE's parameters or MUL's shift)
   are arena values of its output's shape. */
static bool sliceable(const ectx *e, uint32_t k)
{
    const tosac_program *p = e->p;
    const rt_op *op = &p->ops[k];
    if (!e->run[k] || op->mode != M_KERNEL || op->has_epi || op->n_out != 1) return false;
    if (op->op != TOSAC_OP_RESCALE && op->op != TOSAC_OP_ADD && op->op != TOSAC_OP_SUB && op->op != TOSAC_OP_MUL)
        return false;
    const tosac_ktensor *out = &p->kt[op->out_base];
    if (out->rank < 1 || out->nelem < 2 * SLICE_ELEMS) return false;
    const uint32_t nops = op->op == TOSAC_OP_RESCALE ? 1 : 2;
    for (uint32_t j = 0; j <= nops; j++) {
        const uint32_t slot = j < nops ? op->in_base + j : op->out_base;
        const uint32_t v = rt_final_val(p, p->idx[slot]);
        if (p->vals[v].kind != RV_ARENA || e->dropped[v] || p->kt[slot].constant || !same_shape(&p->kt[slot], out))
            return false;
    }
    return true;
}

/* Marks chain [k0, k1] (run calls in order) if it has intermediates that slicing shrinks. */
static void close_chain(ectx *e, uint32_t k0, uint32_t k1, uint32_t *readers, uint32_t *inside)
{
    const tosac_program *p = e->p;
    if (k0 == RT_NONE || k0 == k1) return;
    memset(readers, 0, p->n_vals * sizeof(uint32_t));
    memset(inside, 0, p->n_vals * sizeof(uint32_t));
    for (uint32_t k = 0; k < p->n_ops; k++)
        for (uint32_t j = 0; j < p->ops[k].n_in; j++) {
            uint32_t v = rt_final_val(p, p->idx[p->ops[k].in_base + j]);
            readers[v]++;
            if (k >= k0 && k <= k1 && e->run[k]) inside[v]++;
        }
    for (uint32_t v = 0; v < p->n_vals; v++)
        if (p->vals[v].kind == RV_LINK) readers[rt_final_val(p, v)] += 2; /* a capture or binding */
    for (uint32_t c = 0; c < p->n_copies; c++) readers[p->copies[c].src] += 2;
    bool any = false;
    for (uint32_t k = k0; k <= k1; k++) {
        if (!e->run[k]) continue;
        const uint32_t v = rt_final_val(p, p->idx[p->ops[k].out_base]);
        if (!p->vals[v].block_io && readers[v] && readers[v] == inside[v]) e->slim[v] = any = true;
    }
    /* a buffer holds intermediates only, or none */
    for (uint32_t v = 0; v < p->n_vals && any; v++) {
        if (p->vals[v].kind != RV_ARENA || e->dropped[v] || e->slim[v]) continue;
        for (uint32_t w = 0; w < p->n_vals; w++)
            if (e->slim[w] && p->vals[w].buf == p->vals[v].buf) any = false;
    }
    if (!any) {
        for (uint32_t k = k0; k <= k1; k++)
            if (e->run[k]) e->slim[rt_final_val(p, p->idx[p->ops[k].out_base])] = false;
        return;
    }
    for (uint32_t k = k0; k <= k1; k++) e->slice[k] = e->run[k] ? k0 : RT_NONE;
    e->slice_end[k0] = k1;
}

static void find_slices(ectx *e)
{
    const tosac_program *p = e->p;
    for (uint32_t k = 0; k < p->n_ops; k++) e->slice[k] = RT_NONE;
    uint32_t *readers = tosac_calloc((size_t)p->n_vals + 1, sizeof(uint32_t));
    uint32_t *inside = tosac_calloc((size_t)p->n_vals + 1, sizeof(uint32_t));
    if (!readers || !inside) goto out; /* slicing is an optimisation: none without memory */
    uint32_t k0 = RT_NONE, k1 = RT_NONE;
    for (uint32_t k = 0; k < p->n_ops; k++) {
        if (!e->run[k]) continue;
        const bool ok = sliceable(e, k);
        if (ok && k0 != RT_NONE && same_shape(&p->kt[p->ops[k].out_base], &p->kt[p->ops[k0].out_base])) {
            k1 = k;
            continue;
        }
        close_chain(e, k0, k1, readers, inside);
        k0 = k1 = ok ? k : RT_NONE;
    }
    close_chain(e, k0, k1, readers, inside);
out:
    tosac_free(readers, ((size_t)p->n_vals + 1) * sizeof(uint32_t));
    tosac_free(inside, ((size_t)p->n_vals + 1) * sizeof(uint32_t));
}

/* Elements of one slice of chain k0 (whole rows of its last dimension). */
static int64_t slice_elems(const ectx *e, uint32_t k0)
{
    const tosac_ktensor *t = &e->p->kt[e->p->ops[k0].out_base];
    const int64_t c = t->shape[t->rank - 1];
    return c >= SLICE_ELEMS ? c : SLICE_ELEMS / c * c;
}

/* The buffers of the chains: intermediates one slice, the rest live over the whole chain; a
   chain's output takes the storage of one of its inputs of the same size that dies in the chain
   and that only earlier calls of the chain read (slice i of the output is written after slice i
   of the input was read, and later slices are not read yet): alias[b] = that input's buffer. */
static void slice_bufs(const ectx *e, ebuf *bufs, uint32_t *alias)
{
    const tosac_program *p = e->p;
    for (uint32_t k0 = 0; k0 < p->n_ops; k0++) {
        if (e->slice[k0] != k0) continue;
        const uint32_t k1 = e->slice_end[k0];
        int32_t s0 = INT32_MAX, s1 = INT32_MIN;
        for (uint32_t k = k0; k <= k1; k++)
            if (e->slice[k] == k0) {
                if (p->ops[k].step < s0) s0 = p->ops[k].step;
                if (p->ops[k].step_end > s1) s1 = p->ops[k].step_end;
            }
        for (uint32_t k = k0; k <= k1; k++) {
            if (e->slice[k] != k0) continue;
            const rt_op *op = &p->ops[k];
            for (uint32_t j = 0; j < op->n_in + op->n_out; j++) {
                const uint32_t v = rt_final_val(p, p->idx[call_slot(op, j)]);
                if (p->vals[v].kind != RV_ARENA || e->dropped[v]) continue;
                ebuf *b = &bufs[p->vals[v].buf];
                if (b->first > s0) b->first = s0;
                if (b->last < s1) b->last = s1;
                if (e->slim[v]) b->size = rt_align((size_t)slice_elems(e, k0) * (p->vals[v].nbytes / (size_t)p->kt[call_slot(op, j)].nelem));
            }
        }
        for (uint32_t k = k0; k <= k1; k++) {
            if (e->slice[k] != k0) continue;
            const uint32_t v = rt_final_val(p, p->idx[p->ops[k].out_base]), bv = p->vals[v].buf;
            if (e->slim[v] || alias[bv] != RT_NONE) continue;
            for (uint32_t i = k0; i < k && alias[bv] == RT_NONE; i++) {
                if (e->slice[i] != k0) continue;
                for (uint32_t j = 0; j < p->ops[i].n_in && alias[bv] == RT_NONE; j++) {
                    const uint32_t u = rt_final_val(p, p->idx[p->ops[i].in_base + j]), bu = p->vals[u].buf;
                    if (p->vals[u].kind != RV_ARENA || e->dropped[u] || e->slim[u] || bu == bv ||
                        p->vals[u].nbytes != p->vals[v].nbytes || p->bufs[bu].last > s1 || alias[bu] != RT_NONE)
                        continue;
                    bool later = false; /* read by call k or a later one */
                    for (uint32_t q = k; q <= k1 && !later; q++)
                        for (uint32_t r = 0; e->slice[q] == k0 && r < p->ops[q].n_in; r++)
                            later |= rt_final_val(p, p->idx[p->ops[q].in_base + r]) == u;
                    bool taken = false; /* another output already took it */
                    for (uint32_t b = 0; b < e->p->n_bufs; b++) taken |= alias[b] == bu;
                    if (later || taken) continue;
                    alias[bv] = bu;
                    if (bufs[bu].last < bufs[bv].last) bufs[bu].last = bufs[bv].last;
                    if (bufs[bu].size < bufs[bv].size) bufs[bu].size = bufs[bv].size;
                }
            }
        }
    }
}

/* Lowest offset free over each buffer's lifetime, in `order`; returns the arena size. */
static size_t place(ebuf **order, uint32_t n)
{
    size_t total = 0;
    for (uint32_t i = 0; i < n; i++) {
        ebuf *b = order[i];
        size_t at = 0;
        for (bool moved = true; moved;) {
            moved = false;
            for (uint32_t j = 0; j < i; j++) {
                const ebuf *q = order[j];
                if (q->first <= b->last && b->first <= q->last && q->off < at + b->size && at < q->off + q->size) {
                    at = q->off + q->size;
                    moved = true;
                }
            }
        }
        b->off = at;
        if (at + b->size > total) total = at + b->size;
    }
    return total;
}

static tosac_status plan(ectx *e)
{
    const tosac_program *p = e->p;
    uint32_t nb = p->n_bufs;
    ebuf *bufs = tosac_calloc(nb ? nb : 1, sizeof(ebuf));
    ebuf **order = tosac_calloc(nb ? nb : 1, sizeof(ebuf *));
    size_t *best = tosac_calloc(nb ? nb : 1, sizeof(size_t));
    bool *keep = tosac_calloc(nb ? nb : 1, sizeof(bool));
    uint32_t *alias = tosac_calloc(nb ? nb : 1, sizeof(uint32_t));
    tosac_status st = TOSAC_OK;
    if (!bufs || !order || !best || !keep || !alias) {
        st = tosac_diag_add(e->d, TOSAC_ERR_NOMEM, "emit-c: out of memory while planning");
        goto out;
    }
    for (uint32_t v = 0; v < p->n_vals; v++)
        if (p->vals[v].kind == RV_ARENA && !e->dropped[v]) keep[p->vals[v].buf] = true;
    for (uint32_t k = 0; k < p->n_ops; k++)
        if (e->run[k] && p->ops[k].scratch_buf != RT_NONE) keep[p->ops[k].scratch_buf] = true;
    uint32_t n = 0;
    for (uint32_t b = 0; b < nb; b++) bufs[b] = (ebuf){p->bufs[b].size, 0, p->bufs[b].first, p->bufs[b].last};
    for (uint32_t b = 0; b < nb; b++) alias[b] = RT_NONE;
    slice_bufs(e, bufs, alias);
    for (uint32_t b = 0; b < nb; b++)
        if (keep[b] && alias[b] == RT_NONE) order[n++] = &bufs[b];
    /* several greedy orders (TFLite Micro's is the first), the smallest arena wins */
    int (*const cmps[])(const void *, const void *) = {cmp_size, cmp_first, cmp_area};
    size_t arena = SIZE_MAX;
    for (size_t c = 0; c < sizeof cmps / sizeof cmps[0]; c++) {
        qsort(order, n, sizeof *order, cmps[c]);
        size_t a = place(order, n);
        if (a < arena) {
            arena = a;
            for (uint32_t b = 0; b < nb; b++) best[b] = keep[b] ? bufs[alias[b] != RT_NONE ? alias[b] : b].off : SIZE_MAX;
        }
    }
    e->arena = n ? arena : 0;
    memcpy(e->buf_off, best, nb * sizeof(size_t));
    /* liveness lower bound of the kept buffers: the most bytes live at one step */
    size_t lb = 0;
    for (int32_t s = 0; s < p->n_steps; s++) {
        size_t live = 0;
        for (uint32_t i = 0; i < n; i++)
            if (order[i]->first <= s && s <= order[i]->last) live += order[i]->size;
        if (live > lb) lb = live;
    }
    e->lb = lb;
out:
    tosac_free(bufs, (nb ? nb : 1) * sizeof(ebuf));
    tosac_free(order, (nb ? nb : 1) * sizeof(ebuf *));
    tosac_free(best, (nb ? nb : 1) * sizeof(size_t));
    tosac_free(keep, (nb ? nb : 1) * sizeof(bool));
    tosac_free(alias, (nb ? nb : 1) * sizeof(uint32_t));
    return st;
}

/* ---- locations ------------------------------------------------------------------------------- */

static loc where(const ectx *e, uint32_t v)
{
    const tosac_program *p = e->p;
    uint32_t f = rt_final_val(p, v);
    const rt_val *x = &p->vals[f];
    const rt_inst *m = &p->insts[0];
    loc l = {L_NONE, 0, 0};
    switch (x->kind) {
    case RV_ARENA:
        if (!e->dropped[f]) l = (loc){L_ARENA, e->buf_off[x->buf], 0};
        break;
    case RV_CONST: l = (loc){L_CONST, 0, f}; break;
    case RV_EXT:
        for (uint32_t i = 0; i < m->n_in; i++)
            if (rt_final_val(p, p->idx[m->in_base + i]) == f) return (loc){L_IN, 0, i};
        for (uint32_t i = 0; i < m->n_out; i++)
            if (rt_final_val(p, p->idx[m->out_base + i]) == f) return (loc){L_OUT, 0, i};
        break;
    default: break;
    }
    return l;
}

static void put_loc(const ectx *e, tosac_strbuf *sb, loc l)
{
    switch (l.kind) {
    case L_ARENA: tosac_strbuf_appendf(sb, "A + %zu", l.off); break;
    case L_CONST: tosac_strbuf_appendf(sb, "%sk_%" PRIu32, e->px, l.idx); break;
    case L_IN: tosac_strbuf_appendf(sb, "in[%" PRIu32 "]", l.idx); break;
    case L_OUT: tosac_strbuf_appendf(sb, "out[%" PRIu32 "]", l.idx); break;
    default: tosac_strbuf_append(sb, "0"); break;
    }
}

static bool same_loc(loc a, loc b) { return a.kind == b.kind && a.off == b.off && a.idx == b.idx; }

/* ---- data ------------------------------------------------------------------------------------ */

/* One constant as a typed array: signed decimal integers, floating point as its bits. */
static void put_const(ectx *e, uint32_t v)
{
    const rt_val *x = &e->p->vals[v];
    const void *data = rt_fixed_data(e->p, x);
    size_t es = x->nelem ? x->nbytes / (size_t)x->nelem : 1;
    bool fp = rt_is_float(x->dtype);
    static const char *const ints[] = {"int8_t", "int16_t", "int32_t", "int64_t"};
    static const char *const bits[] = {"uint8_t", "uint16_t", "uint32_t", "uint64_t"};
    int w = es == 1 ? 0 : es == 2 ? 1 : es == 4 ? 2 : 3;
    tosac_strbuf *sb = &e->c;
    tosac_strbuf_appendf(sb, "/* '%s' %s, %" PRId64 " elements */\nstatic _Alignas(16) const %s %sk_%" PRIu32 "[%" PRId64 "] = {",
                         x->name, tosac_dtype_name(x->dtype), x->nelem, fp ? bits[w] : ints[w], e->px, v,
                         x->nelem ? x->nelem : 1);
    for (int64_t i = 0; i < x->nelem; i++) {
        const uint8_t *b = (const uint8_t *)data + (size_t)i * es;
        if (i % 16 == 0) tosac_strbuf_append(sb, "\n   ");
        if (fp) {
            uint64_t u = 0;
            for (size_t k = 0; k < es; k++) u |= (uint64_t)b[k] << (8 * k);
            tosac_strbuf_appendf(sb, " 0x%" PRIx64 "u,", u);
        } else {
            int64_t s;
            switch (w) {
            case 0: s = *(const int8_t *)b; break;
            case 1: { int16_t t; memcpy(&t, b, 2); s = t; break; }
            case 2: { int32_t t; memcpy(&t, b, 4); s = t; break; }
            default: memcpy(&s, b, 8); break;
            }
            if (w == 3)
                tosac_strbuf_appendf(sb, " INT64_C(%" PRId64 "),", s);
            else if (w == 2 && s == INT32_MIN)
                tosac_strbuf_append(sb, " INT32_MIN,");
            else
                tosac_strbuf_appendf(sb, " %" PRId64 ",", s);
        }
    }
    if (!x->nelem) tosac_strbuf_append(sb, "0");
    tosac_strbuf_append(sb, "\n};\n");
}

static void put_bytes(tosac_strbuf *sb, const uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i % 24 == 0) tosac_strbuf_append(sb, "\n   ");
        tosac_strbuf_appendf(sb, " 0x%02x,", b[i]);
    }
}

/* The attribute arrays of call k, the table named `name` (subarrays name_I), appended to sb. */
static void put_attrs(const ectx *e, uint32_t k, tosac_strbuf *sb, const char *name)
{
    const rt_op *op = &e->p->ops[k];
    const tosac_attr_val *a = op->call.attr;
    for (unsigned i = 0; i < TOSAC_ATTR_MAX_FIELDS; i++) {
        if (!a[i].present || !a[i].data) continue;
        switch (tosac_op_attr_kind(op->op, i)) {
        case TOSAC_AK_I32V:
            tosac_strbuf_appendf(sb, "static const int32_t %s_%u[%" PRIu32 "] = {", name, i, a[i].len ? a[i].len : 1);
            for (uint32_t j = 0; j < a[i].len; j++)
                tosac_strbuf_appendf(sb, "%s%" PRId32, j ? ", " : "", ((const int32_t *)a[i].data)[j]);
            if (!a[i].len) tosac_strbuf_append(sb, "0");
            tosac_strbuf_append(sb, "};\n");
            break;
        case TOSAC_AK_STR:
        case TOSAC_AK_BYTES:
        case TOSAC_AK_BYTES8: {
            uint32_t n = a[i].len + (tosac_op_attr_kind(op->op, i) == TOSAC_AK_STR);
            tosac_strbuf_appendf(sb, "static _Alignas(8) const uint8_t %s_%u[%" PRIu32 "] = {", name, i, n ? n : 1);
            put_bytes(sb, a[i].data, n);
            if (!n) tosac_strbuf_append(sb, "0");
            tosac_strbuf_append(sb, "\n};\n");
            break;
        }
        default: break;
        }
    }
    tosac_strbuf_appendf(sb, "static const tosac_attr_val %s[TOSAC_ATTR_MAX_FIELDS] = {", name);
    for (unsigned i = 0; i < TOSAC_ATTR_MAX_FIELDS; i++) {
        if (!a[i].present) continue;
        tosac_strbuf_appendf(sb, "\n    [%u] = {.present = true, .i = INT64_C(%" PRId64 ")", i, a[i].i);
        if (a[i].data) tosac_strbuf_appendf(sb, ", .data = %s_%u, .len = %" PRIu32, name, i, a[i].len);
        tosac_strbuf_append(sb, "},");
    }
    tosac_strbuf_append(sb, "\n};\n");
}

/* The index of call k's attribute table + 1 (0: none): equal tables are written once, to sb. */
static uint32_t attr_ref(ectx *e, uint32_t k, tosac_strbuf *sb)
{
    if (!e->p->ops[k].call.attr) return 0;
    tosac_strbuf key;
    tosac_strbuf_init(&key);
    put_attrs(e, k, &key, "@");
    if (!key.data) return 0; /* (out of memory: reported with the file) */
    for (uint32_t i = 0; i < e->n_attr; i++)
        if (!strcmp(e->akeys[i], key.data)) {
            tosac_strbuf_free(&key);
            return i + 1;
        }
    void *keys = e->akeys;
    if (!tosac_grow(&keys, &e->cap_attr, (size_t)e->n_attr + 1, sizeof(char *))) {
        tosac_strbuf_free(&key);
        sb->failed = true;
        return 0;
    }
    e->akeys = keys;
    char name[32];
    snprintf(name, sizeof name, "%sa_%" PRIu32, e->px, e->n_attr);
    put_attrs(e, k, sb, name);
    e->akeys[e->n_attr] = tosac_strbuf_take(&key);
    return ++e->n_attr;
}

/* The offset of `rank` dimensions in the shape pool (an equal run is reused). */
static uint32_t shape_ref(ectx *e, const int64_t *shape, int32_t rank)
{
    if (rank <= 0) return 0;
    for (size_t i = 0; i + (size_t)rank <= e->n_shp; i++)
        if (!memcmp(e->shp + i, shape, (size_t)rank * sizeof *shape)) return (uint32_t)i;
    void *pool = e->shp;
    if (!tosac_grow(&pool, &e->cap_shp, e->n_shp + (size_t)rank, sizeof(int64_t))) {
        e->too_big = true;
        return 0;
    }
    e->shp = pool;
    memcpy(e->shp + e->n_shp, shape, (size_t)rank * sizeof *shape);
    e->n_shp += (size_t)rank;
    return (uint32_t)(e->n_shp - (size_t)rank);
}

/* One tosac_emit_t for kt slot `slot` appended to sb (sliced: a chain's call); returns its index. */
static uint32_t put_tensor(ectx *e, tosac_strbuf *sb, uint32_t slot, bool sliced, bool unread)
{
    const tosac_program *p = e->p;
    const tosac_ktensor *t = &p->kt[slot];
    uint32_t flags = (uint32_t)t->rank | (t->constant ? TOSAC_EMIT_CONSTANT : 0u);
    loc l;
    if (sliced && !t->constant) { /* slice i0 of n elements, rows of the last dimension (sliceable) */
        const uint32_t v = rt_final_val(p, p->idx[slot]);
        l = where(e, v);
        const size_t es = p->vals[v].nbytes / (size_t)t->nelem;
        flags |= TOSAC_EMIT_SLICED | (e->slim[v] ? TOSAC_EMIT_SLIM : 0u) |
                 (uint32_t)(es == 1 ? 0 : es == 2 ? 1 : es == 4 ? 2 : 3) << TOSAC_EMIT_ESIZE;
    } else {
        l = unread ? (loc){L_NONE, 0, 0} : where(e, p->idx[slot]);
    }
    uint32_t at = 0;
    switch (l.kind) {
    case L_ARENA: at = TOSAC_EMIT_ARENA | (uint32_t)l.off; break;
    case L_CONST: at = TOSAC_EMIT_CONST | e->cidx[l.idx]; break;
    case L_IN: at = TOSAC_EMIT_IN | l.idx; break;
    case L_OUT: at = TOSAC_EMIT_OUT | l.idx; break;
    default: break;
    }
    if (t->rank > (int32_t)TOSAC_EMIT_RANK || (l.kind == L_ARENA && l.off > ~(uint32_t)TOSAC_EMIT_KIND) ||
        (l.kind == L_CONST && e->cidx[l.idx] == UINT32_MAX))
        e->too_big = true;
    const uint32_t sh = shape_ref(e, t->shape, t->rank);
    tosac_strbuf_appendf(sb, "    {0x%08" PRIx32 "u, %" PRIu32 ", TOSAC_DTYPE_%s, 0x%02" PRIx32 "},\n", at, sh,
                         tosac_dtype_name(t->dtype), flags);
    return e->n_t++;
}

/* The index of the kernel function of call k in the function table. */
static uint32_t fn_ref(ectx *e, uint32_t k)
{
    const char *f = e->owned[k] ? tosac_mve_entry(&e->p->ops[k].call) : k_family[e->p->ops[k].op];
    for (uint32_t i = 0; i < e->n_fn; i++)
        if (!strcmp(e->fns[i], f) && e->fn_mve[i] == e->owned[k]) return i;
    if (e->n_fn == sizeof e->fns / sizeof e->fns[0]) {
        e->too_big = true;
        return 0;
    }
    e->fns[e->n_fn] = f, e->fn_mve[e->n_fn] = e->owned[k];
    return e->n_fn++;
}

/* The index of the operator whose call is `c`. */
static uint32_t op_of_call(const tosac_program *p, const tosac_kcall *c)
{
    for (uint32_t k = 0; k < p->n_ops; k++)
        if (&p->ops[k].call == c) return k;
    return RT_NONE;
}

/* The kt slot `t` points at. */
static uint32_t slot_of(const tosac_program *p, const tosac_ktensor *t) { return (uint32_t)(t - p->kt); }

static void put_float(tosac_strbuf *sb, float f)
{
    if (f != f)
        tosac_strbuf_append(sb, "NAN");
    else if (f > FLT_MAX || f < -FLT_MAX)
        tosac_strbuf_append(sb, f > 0 ? "INFINITY" : "-INFINITY");
    else
        tosac_strbuf_appendf(sb, "%af", (double)f);
}

/* The RESCALE call fused into call k that the emitted C passes (RT_NONE: none, or folded into the
   prepared bytes of an owned convolution, whose Helium entry never reads it: k_mve.h). */
static uint32_t epi_rescale(const ectx *e, uint32_t k)
{
    const rt_op *op = &e->p->ops[k];
    if (!op->has_epi || !op->epi.rescale) return RT_NONE;
    tosac_kcall pc = op->call;
    pc.prep = op->prep_size ? e->p->prepared + op->prep_off : NULL, pc.prep_size = op->prep_size;
    if (e->owned[k] && tosac_mve_epi_rescale_unread(&pc)) return RT_NONE;
    return op_of_call(e->p, op->epi.rescale);
}

/* The table entry of call k (its tensors to tb, its epilogue to eb, the entry to cb). */
static void put_call(ectx *e, uint32_t k, bool sliced, tosac_strbuf *cb, tosac_strbuf *tb, tosac_strbuf *eb,
                     tosac_strbuf *ab)
{
    const tosac_program *p = e->p;
    const rt_op *op = &p->ops[k];
    uint32_t t0 = e->n_t, epi = 0;
    for (uint32_t j = 0; j < op->n_in + op->n_out; j++)
        put_tensor(e, tb, call_slot(op, j), sliced,
                   j < op->n_in && (e->unread[k] == UINT32_MAX || (j < 31 && (e->unread[k] >> j) & 1)));
    if (op->has_epi && e->run[k]) {
        const tosac_kepilogue *x = &op->epi;
        const uint32_t r = epi_rescale(e, k);
        if (r != RT_NONE) put_call(e, r, sliced, cb, tb, eb, ab);
        const uint32_t eo = put_tensor(e, tb, slot_of(p, x->out), sliced, false);
        tosac_strbuf_appendf(eb, "    {%" PRIu32 ", %" PRIu32 ", %d, %" PRId32 ", %" PRId32 ", ",
                             r == RT_NONE ? 0 : e->call_at[r] + 1, eo, x->fignore ? 1 : 0, x->lo, x->hi);
        put_float(eb, x->flo);
        tosac_strbuf_append(eb, ", ");
        put_float(eb, x->fhi);
        tosac_strbuf_append(eb, "},\n");
        epi = ++e->n_epi;
        const uint32_t nt = e->n_t - t0;
        if (nt > e->maxt) e->maxt = nt;
    } else if (e->run[k] && e->n_t - t0 > e->maxt) {
        e->maxt = e->n_t - t0;
    }
    char label[256];
    rt_op_label(p, k, label, sizeof label);
    for (char *c = label; *c; c++)
        if (*c == '*' && c[1] == '/') *c = '+'; /* never end the comment */
    const uint32_t attr = attr_ref(e, k, ab), fn = e->run[k] ? fn_ref(e, k) : 0;
    const bool scratch = e->run[k] && op->scratch_size, prep = e->prep_off[k] != SIZE_MAX;
    if (op->n_in > 255 || op->n_out > 255 || e->n_t > UINT16_MAX || e->n_attr >= UINT16_MAX || e->n_epi >= UINT16_MAX ||
        (scratch && (e->buf_off[op->scratch_buf] > UINT32_MAX || op->scratch_size > UINT32_MAX)) ||
        (prep && e->prep_total > UINT32_MAX))
        e->too_big = true;
    /* (calls[k] is the entry's position: written in the order of call_at) */
    tosac_strbuf_appendf(cb, "    [%" PRIu32 "] = {TOSAC_OP_%s, %" PRIu32 ", %s, %" PRIu32 ", %" PRIu32 ", %" PRIu32 ", %" PRIu32
                             ", %" PRIu32 ", %zu, %zu, %zu, %zu}, /* %s */\n",
                         e->call_at[k], tosac_op_name(op->op), fn, op->call.isa == TOSAC_KISA_MVE ? "TOSAC_KISA_MVE" : "TOSAC_KISA_PORTABLE",
                         op->n_in, op->n_out, attr, epi, t0, scratch ? e->buf_off[op->scratch_buf] : 0,
                         scratch ? op->scratch_size : 0, prep ? e->prep_off[k] : 0,
                         prep ? op->prep_size - e->prep_skip[k] : 0, label);
}

/* The call tables of the program and the model description naming them (px + "model"). */
static void put_tables(ectx *e)
{
    const tosac_program *p = e->p;
    tosac_strbuf cb, tb, eb, ab, *sb = &e->c;
    tosac_strbuf_init(&cb), tosac_strbuf_init(&tb), tosac_strbuf_init(&eb), tosac_strbuf_init(&ab);
    /* the calls run in order, then the RESCALEs passed to epilogues */
    for (uint32_t k = 0; k < p->n_ops; k++) e->call_at[k] = e->run[k] ? e->n_calls++ : RT_NONE;
    for (uint32_t k = 0; k < p->n_ops; k++) {
        const uint32_t r = e->run[k] ? epi_rescale(e, k) : RT_NONE;
        if (r != RT_NONE) e->call_at[r] = e->n_calls++;
    }
    for (uint32_t k = 0; k < p->n_ops; k++)
        if (e->run[k]) put_call(e, k, e->slice[k] != RT_NONE, &cb, &tb, &eb, &ab);
    if (ab.data) tosac_strbuf_append(sb, ab.data);
    tosac_strbuf_appendf(sb, "static const tosac_attr_val *const %sattrs[] = {", e->px);
    for (uint32_t i = 0; i < e->n_attr; i++) tosac_strbuf_appendf(sb, "%s%sa_%" PRIu32, i ? ", " : "", e->px, i);
    tosac_strbuf_appendf(sb, "%s};\nstatic const int64_t %sshapes[] = {", e->n_attr ? "" : "0", e->px);
    for (size_t i = 0; i < e->n_shp; i++) tosac_strbuf_appendf(sb, "%s%" PRId64, !i ? "\n    " : i % 16 ? ", " : ",\n    ", e->shp[i]);
    tosac_strbuf_appendf(sb, "%s};\nstatic const void *const %sconsts[] = {", e->n_shp ? "" : "0", e->px);
    uint32_t nc = 0;
    for (uint32_t v = 0; v < p->n_vals; v++)
        if (e->const_used[v]) {
            tosac_strbuf_appendf(sb, "%s%sk_%" PRIu32, !nc ? "\n    " : nc % 8 ? ", " : ",\n    ", e->px, v);
            nc++;
        }
    tosac_strbuf_appendf(sb, "%s};\n/* where (kind << 29 | offset or index), shape, type, flags (emit/emit_run.h) */\n"
                             "static const tosac_emit_t %stensors[] = {\n%s};\n",
                         nc ? "" : "0", e->px, tb.data ? tb.data : "    {0, 0, 0, 0},\n");
    tosac_strbuf_appendf(sb, "/* RESCALE call + 1, output tensor, fignore, lo, hi, flo, fhi */\nstatic const tosac_emit_epi %sepis[] = {\n%s};\n",
                         e->px, eb.data ? eb.data : "    {0, 0, 0, 0, 0, 0, 0},\n");
    tosac_strbuf_appendf(sb, "/* op, kernel, isa, inputs, outputs, attributes + 1, epilogue + 1, first tensor, scratch offset and\n"
                             "   bytes, prepared offset and bytes */\nstatic const tosac_emit_call %scalls[] = {\n%s};\n",
                         e->px, cb.data ? cb.data : "    {0},\n");
    tosac_strbuf_appendf(sb, "static const tosac_kernel_fn %sfns[] = {", e->px);
    for (uint32_t i = 0; i < e->n_fn; i++)
        tosac_strbuf_appendf(sb, "%stosac_kernel_%s%s", i ? ", " : "", e->fns[i], e->fn_mve[i] ? "_mve" : "");
    char prep[24];
    snprintf(prep, sizeof prep, "%s%s", e->prep_total ? e->px : "", e->prep_total ? "prep" : "0");
    tosac_strbuf_appendf(sb, "%s};\nstatic const tosac_emit_model %smodel = {%scalls, %stensors, %sshapes, %sconsts, %sattrs, "
                             "%sepis, %sfns, %s};\n",
                         e->n_fn ? "" : "0", e->px, e->px, e->px, e->px, e->px, e->px, e->px, e->px, prep);
    if (cb.failed || tb.failed || eb.failed || ab.failed) sb->failed = true;
    tosac_strbuf_free(&cb), tosac_strbuf_free(&tb), tosac_strbuf_free(&eb), tosac_strbuf_free(&ab);
}

/* ---- files ----------------------------------------------------------------------------------- */

/* A graph input or output as NAME.h describes it. */
typedef struct io_desc {
    const char *name;
    tosac_dtype dtype;
    int32_t rank;
    const int64_t *shape;
    size_t nbytes;
    bool has_q;
    tosac_quant_io_type type;
    tosac_qparams q;
} io_desc;
#define EMIT_MAX_IO 64

static io_desc val_io(const tosac_program *p, uint32_t v, const tosac_quant_io *list, uint32_t n)
{
    const rt_val *x = &p->vals[v];
    io_desc r;
    memset(&r, 0, sizeof r);
    r.name = x->name, r.dtype = x->dtype, r.rank = x->rank, r.shape = x->shape, r.nbytes = x->nbytes;
    for (uint32_t k = 0; list && k < n; k++)
        if (!strcmp(list[k].name, x->name) && tosac_quant_io_holds_codes(&list[k], x->dtype))
            r.has_q = true, r.type = list[k].type, r.q = list[k].q;
    return r;
}

static void put_io_macros(tosac_strbuf *sb, const char *N, const char *up, uint32_t i, const io_desc *x)
{
    tosac_strbuf_appendf(sb, "#define %s_%s_%" PRIu32 "_NAME \"%s\"\n", N, up, i, x->name);
    tosac_strbuf_appendf(sb, "#define %s_%s_%" PRIu32 "_DTYPE \"%s\"\n", N, up, i, tosac_dtype_name(x->dtype));
    tosac_strbuf_appendf(sb, "#define %s_%s_%" PRIu32 "_BYTES %zu\n", N, up, i, x->nbytes);
    tosac_strbuf_appendf(sb, "#define %s_%s_%" PRIu32 "_RANK %" PRId32 "\n", N, up, i, x->rank);
    tosac_strbuf_appendf(sb, "#define %s_%s_%" PRIu32 "_SHAPE {", N, up, i);
    for (int32_t j = 0; j < x->rank; j++) tosac_strbuf_appendf(sb, "%s%" PRId64, j ? ", " : "", x->shape[j]);
    tosac_strbuf_append(sb, "}\n");
    if (x->has_q) {
        tosac_strbuf_appendf(sb, "#define %s_%s_%" PRIu32 "_CODES \"%s\" /* real = scale * (code - zero_point) */\n", N,
                             up, i, tosac_quant_io_type_name(x->type));
        tosac_strbuf_appendf(sb, "#define %s_%s_%" PRIu32 "_SCALE %.9gf\n", N, up, i, (double)x->q.scale);
        tosac_strbuf_appendf(sb, "#define %s_%s_%" PRIu32 "_ZERO_POINT %" PRId32 "\n", N, up, i, (int32_t)x->q.zero_point);
    }
}

static char *sources_text(const tosac_emit_c_opts *o, const bool *used, bool cmake)
{
    tosac_strbuf sb;
    tosac_strbuf_init(&sb);
    const char *N = o->name;
    if (cmake)
        tosac_strbuf_appendf(&sb,
                             "# %s: generated by tosac emit-c. Set TOSAC_ROOT to the tosac source tree, then compile\n"
                             "# ${%s_SOURCES} with ${%s_INCLUDE_DIRS} and ${%s_DEFINITIONS} (C11; link libm; the linker's\n"
                             "# --gc-sections keeps only the kernels called).\n"
                             "set(%s_SOURCES ${CMAKE_CURRENT_LIST_DIR}/%s.c",
                             N, N, N, N, N, N);
    /* each file once, in table order */
    for (size_t f = 0; f < N_FAMILY_FILES; f++) {
        if (!used[f]) continue;
        const char *files[2] = {k_family_files[f].file, k_family_files[f].file2};
        for (int i = 0; i < 2 && files[i]; i++) {
            bool seen = false;
            for (size_t g = 0; g < f; g++)
                seen |= used[g] && ((k_family_files[g].file && !strcmp(k_family_files[g].file, files[i])) ||
                                    (k_family_files[g].file2 && !strcmp(k_family_files[g].file2, files[i])));
            char path[64];
            snprintf(path, sizeof path, "src/kernels/%s", files[i]);
            for (size_t s = 0; s < N_SUPPORT_FILES; s++) seen |= !strcmp(k_support_files[s], path);
            if (!seen) tosac_strbuf_appendf(&sb, cmake ? "\n    ${TOSAC_ROOT}/%s" : "%s\n", path);
        }
    }
    for (size_t s = 0; s < N_SUPPORT_FILES; s++) tosac_strbuf_appendf(&sb, cmake ? "\n    ${TOSAC_ROOT}/%s" : "%s\n", k_support_files[s]);
    if (cmake)
        tosac_strbuf_appendf(&sb,
                             ")\nset(%s_INCLUDE_DIRS ${CMAKE_CURRENT_LIST_DIR} ${TOSAC_ROOT}/include ${TOSAC_ROOT}/src)\n"
                             "# no x86 variants (the prepared bytes are the portable or Helium kernels'); POSIX names\n"
                             "set(%s_DEFINITIONS TOSAC_NO_SIMD _POSIX_C_SOURCE=200809L)\n",
                             N, N);
    return tosac_strbuf_take(&sb);
}

/* NAME.h; n_npu NPU segments get a weak hook NAME_npu_segment_K each (segmented artifacts). */
static void put_header(tosac_strbuf *sb, const tosac_emit_c_opts *o, const tosac_emit_c_out *out, const io_desc *ins,
                       uint32_t ni, const io_desc *outs, uint32_t no, const uint32_t *npu, uint32_t n_npu)
{
    const char *N = o->name;
    tosac_strbuf_appendf(sb,
                         "/*\n * %s: generated by tosac emit-c%s%s (docs/EMIT_C.md). Do not edit.\n *\n"
                         " * int %s_invoke(const void *const in[], void *const out[], void *arena) runs the program\n"
                         " * once: in[i] holds input i (%s_INPUT_i_BYTES, execution storage: INT8 as int8_t, FP32 as\n"
                         " * float, ...), out[i] receives output i; arena is %s_ARENA_SIZE bytes aligned to\n"
                         " * %s_ARENA_ALIGN, its contents are not kept between calls. Returns 0, or the tosac_status\n"
                         " * of a kernel whose data-dependent check failed. No allocation, no stdio, reentrant with\n"
                         " * distinct arenas.\n *\n"
                         " * Memory: arena %zu bytes; liveness lower bound %zu bytes (%.2f%%). tosac's runtime plans\n"
                         " * %zu bytes for the same program (lower bound %zu), keeping the intermediates that fused\n"
                         " * epilogues never write. Flash: %zu bytes of constants, %zu bytes of prepared constants.\n"
                         " * Inputs and outputs (%zu bytes) are the caller's buffers. %" PRIu32 " kernel calls per invoke.\n */\n",
                         N, o->source ? " from " : "", o->source ? o->source : "", N, N, N, N, out->arena,
                         out->arena_lower_bound,
                         out->arena_lower_bound ? 100.0 * ((double)out->arena / (double)out->arena_lower_bound - 1.0) : 0.0,
                         out->runtime_arena, out->runtime_lower_bound, out->const_bytes, out->prepared_bytes, out->io_bytes,
                         out->n_calls);
    tosac_strbuf_appendf(sb, "#ifndef %s_H\n#define %s_H\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n", N, N);
    tosac_strbuf_appendf(sb, "#define %s_ARENA_SIZE %zu\n#define %s_ARENA_ALIGN 16\n#define %s_ARENA_LOWER_BOUND %zu\n", N,
                         out->arena ? out->arena : 16, N, N, out->arena_lower_bound);
    tosac_strbuf_appendf(sb, "#define %s_CONST_BYTES %zu\n#define %s_PREPARED_BYTES %zu\n", N, out->const_bytes, N,
                         out->prepared_bytes);
    tosac_strbuf_appendf(sb, "#define %s_NUM_INPUTS %" PRIu32 "\n#define %s_NUM_OUTPUTS %" PRIu32 "\n", N, ni, N, no);
    for (uint32_t i = 0; i < ni; i++) put_io_macros(sb, N, "INPUT", i, &ins[i]);
    for (uint32_t i = 0; i < no; i++) put_io_macros(sb, N, "OUTPUT", i, &outs[i]);
    tosac_strbuf_appendf(sb, "\nint %s_invoke(const void *const in[], void *const out[], void *arena);\n", N);
    for (uint32_t k = 0; k < n_npu; k++)
        tosac_strbuf_appendf(sb,
                             "/* NPU segment %" PRIu32 " (the inputs and outputs of its .tosa program, in order; a part of\n"
                             "   the arena): the weak default runs it on the CPU; define it to drive the NPU instead. */\n"
                             "int %s_npu_segment_%" PRIu32 "(const void *const in[], void *const out[], void *arena);\n",
                             npu[k], N, npu[k]);
    tosac_strbuf_appendf(sb, "\n#ifdef __cplusplus\n}\n#endif\n#endif\n");
}

static tosac_status check_supported(ectx *e)
{
    const tosac_program *p = e->p;
    if (p->n_insts != 1)
        return tosac_diag_add(e->d, TOSAC_ERR_UNSUPPORTED, "emit-c: control flow (COND_IF, WHILE_LOOP) is not supported yet");
    if (p->n_vars)
        return tosac_diag_add(e->d, TOSAC_ERR_UNSUPPORTED, "emit-c: variables (EXT-VARIABLE) are not supported yet");
    for (uint32_t k = 0; k < p->n_ops; k++) {
        const rt_op *op = &p->ops[k];
        if (op->mode == M_KERNEL || op->mode == M_ALIAS || op->mode == M_NOP) continue;
        char label[256];
        rt_op_label(p, k, label, sizeof label);
        return tosac_diag_add(e->d, TOSAC_ERR_UNSUPPORTED, "emit-c: %s: this operator is not supported yet", label);
    }
    return TOSAC_OK;
}

/* Which operators run, which values are never written, which constants are read. */
static void select_calls(ectx *e)
{
    const tosac_program *p = e->p;
    for (uint32_t k = 0; k < p->n_ops; k++) {
        const rt_op *op = &p->ops[k];
        if (op->mode == M_NOP || op->fused_into != RT_NONE) continue;
        e->run[k] = true;
        if (op->has_epi) e->dropped[rt_final_val(p, p->idx[op->out_base])] = true;
    }
    for (uint32_t k = 0; k < p->n_ops; k++) {
        const rt_op *op = &p->ops[k];
        if (op->fused_into == RT_NONE) continue;
        for (uint32_t j = 0; j < op->n_out; j++) {
            uint32_t v = rt_final_val(p, p->idx[op->out_base + j]);
            if (v != rt_final_val(p, p->ops[op->fused_into].fused_out)) e->dropped[v] = true;
        }
    }
}

/* RESHAPE / IDENTITY planned in place cost nothing (as in exec.c). */
static void drop_aliases(ectx *e)
{
    const tosac_program *p = e->p;
    for (uint32_t k = 0; k < p->n_ops; k++)
        if (e->run[k] && p->ops[k].mode == M_ALIAS &&
            same_loc(where(e, p->idx[p->ops[k].in_base]), where(e, p->idx[p->ops[k].out_base])))
            e->run[k] = false;
}

/* Constants the calls (and their epilogues' RESCALEs) read, and the prepared bytes they use. */
static void select_data(ectx *e, tosac_emit_c_out *out)
{
    const tosac_program *p = e->p;
    size_t total = 0;
    for (uint32_t k = 0; k < p->n_ops; k++) e->prep_off[k] = SIZE_MAX;
    for (uint32_t k = 0; k < p->n_ops; k++) {
        if (!e->run[k]) continue;
        uint32_t calls[2] = {k, p->ops[k].has_epi && p->ops[k].epi.rescale ? op_of_call(p, p->ops[k].epi.rescale) : RT_NONE};
        /* what the run reads: the prepare step says what it folded in (kernels/kernel.h) */
        tosac_kprep sz = {0, 0, 0};
        tosac_kernel_prepare_fn pf = tosac_kernel_prepare_for(p->ops[k].op);
        if (pf && pf(&p->ops[k].call, &sz, NULL) == TOSAC_OK) e->unread[k] = sz.unread;
        /* a call the Helium kernel owns: its entry alone, so the portable kernel is not linked */
        tosac_kcall pc = p->ops[k].call;
        pc.prep = p->ops[k].prep_size ? p->prepared + p->ops[k].prep_off : NULL, pc.prep_size = p->ops[k].prep_size;
        e->owned[k] = tosac_mve_owns(&pc);
        if (e->owned[k]) e->prep_skip[k] = tosac_mve_unread_prefix(&pc);
        if (calls[1] != RT_NONE && (e->unread[k] & TOSAC_KPREP_UNREAD_EPI)) e->unread[calls[1]] = UINT32_MAX;
        for (int c = 0; c < 2 && calls[c] != RT_NONE; c++) {
            const rt_op *op = &p->ops[calls[c]];
            uint32_t unread = e->unread[calls[c]];
            if (unread == UINT32_MAX) continue;
            for (uint32_t j = 0; j < op->n_in; j++) {
                uint32_t f = rt_final_val(p, p->idx[op->in_base + j]);
                if (j < 31 && (unread >> j) & 1) continue;
                if (p->vals[f].kind == RV_CONST && !e->const_used[f]) {
                    e->const_used[f] = true;
                    out->const_bytes += p->vals[f].nbytes;
                }
            }
            if (op->prep_size && e->prep_off[calls[c]] == SIZE_MAX) {
                e->prep_off[calls[c]] = total;
                total += rt_align(op->prep_size - e->prep_skip[calls[c]]);
            }
        }
    }
    e->prep_total = total;
    out->prepared_bytes = total;
}

/* The banner, includes and the tensor macro of NAME.c. */
static void put_prologue(tosac_strbuf *sb, const tosac_emit_c_opts *o)
{
    const char *N = o->name;
    tosac_strbuf_appendf(sb,
                         "/* %s: generated by tosac emit-c%s%s (docs/EMIT_C.md): the kernel calls of the\n"
                         "   program, with the arena offsets, constants and prepared constants tosac computed on the\n"
                         "   host. Compile with the kernel sources of %s.cmake (sources.txt). Do not edit. */\n",
                         N, o->source ? " from " : "", o->source ? o->source : "", N);
    tosac_strbuf_appendf(sb, "#include <math.h>\n#include <stdbool.h>\n#include <stdint.h>\n#include <string.h>\n\n#include \"%s.h\"\n#include \"emit/emit_run.h\"\n#include \"kernels/k_mve.h\"\n\n", N);
    tosac_strbuf_append(sb,
                        "#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__\n"
                        "#error \"the prepared constants are the bytes of a little-endian target\"\n#endif\n\n");
}

/* The program's constants, prepared bytes and call tables (static, prefixed e->px). */
static tosac_status put_data(ectx *e)
{
    const tosac_program *p = e->p;
    tosac_strbuf *sb = &e->c;
    for (uint32_t v = 0; v < p->n_vals; v++)
        if (e->const_used[v]) put_const(e, v);
    if (e->prep_total) {
        tosac_strbuf_appendf(sb, "/* prepared constants (packed weights, per-channel tables) */\nstatic _Alignas(16) const uint8_t %sprep[%zu] = {",
                             e->px, e->prep_total);
        /* in offset order (select_data) */
        for (size_t at = 0; at < e->prep_total;) {
            uint32_t k = 0;
            while (k < p->n_ops && e->prep_off[k] != at) k++;
            if (k == p->n_ops) break; /* cannot happen: the offsets tile the array */
            tosac_strbuf_appendf(sb, "\n    /* op %" PRIu32 " at %zu */", k, at);
            const size_t skip = e->prep_skip[k], n = p->ops[k].prep_size - skip;
            put_bytes(sb, p->prepared + p->ops[k].prep_off + skip, n);
            static const uint8_t zeros[RT_ALIGN] = {0};
            put_bytes(sb, zeros, rt_align(n) - n);
            at += rt_align(n);
        }
        tosac_strbuf_append(sb, "\n};\n");
    }
    uint32_t nc = 0;
    for (uint32_t v = 0; v < p->n_vals; v++) e->cidx[v] = e->const_used[v] ? nc++ : UINT32_MAX;
    put_tables(e);
    if (e->too_big)
        return tosac_diag_add(e->d, TOSAC_ERR_UNSUPPORTED,
                              "emit-c: the program exceeds the call tables' fields (rank above 7, 2^29 bytes of arena, "
                              "65,535 tensors or attribute tables, 64 kernels)");
    return TOSAC_OK;
}

/* The body of a function (in, out, arena) running the program: its call table in ranges, a
   sliced chain's range once per slice. */
static void put_body(ectx *e)
{
    const tosac_program *p = e->p;
    tosac_strbuf *sb = &e->c;
    const uint32_t mt = e->maxt ? e->maxt : 1;
    tosac_strbuf_appendf(sb, "{\n    uint8_t *A = arena;\n    int st = 0;\n    tosac_ktensor t[%" PRIu32 "];\n    int64_t sh[%" PRIu32
                             "][2];\n    const tosac_emit_ws ws = {t, sh, %" PRIu32 "};\n    (void)A, (void)in, (void)out, (void)st, (void)ws;\n",
                         mt, mt, mt);
    for (uint32_t k = 0; k < p->n_ops;) {
        if (!e->run[k]) {
            k++;
            continue;
        }
        const uint32_t first = e->call_at[k];
        if (e->slice[k] == k) {
            const tosac_ktensor *t = &p->kt[p->ops[k].out_base];
            const int64_t c = t->shape[t->rank - 1], s = slice_elems(e, k), ne = t->nelem;
            const uint32_t last = e->slice_end[k];
            tosac_strbuf_appendf(sb, "    /* ops %" PRIu32 "-%" PRIu32 " slice by slice (the values between them: one slice; rows of %" PRId64 ") */\n"
                                     "    for (int64_t i0 = 0; i0 < INT64_C(%" PRId64 "); i0 += INT64_C(%" PRId64 "))\n"
                                     "        if ((st = tosac_emit_run(&%smodel, %" PRIu32 ", %" PRIu32 ", A, in, out, i0, INT64_C(%" PRId64
                                     ") - i0 < INT64_C(%" PRId64 ") ? INT64_C(%" PRId64 ") - i0 : INT64_C(%" PRId64 "), &ws)) != 0) return st;\n",
                                 k, last, c, ne, s, e->px, first, e->call_at[last] + 1, ne, s, ne, s);
            k = last + 1;
            continue;
        }
        uint32_t end = k;
        while (end < p->n_ops && (!e->run[end] || e->slice[end] == RT_NONE)) end++;
        uint32_t last = end;
        while (!e->run[last - 1]) last--;
        tosac_strbuf_appendf(sb, "    if ((st = tosac_emit_run(&%smodel, %" PRIu32 ", %" PRIu32 ", A, in, out, 0, 0, &ws)) != 0) return st;\n",
                             e->px, first, e->call_at[last - 1] + 1);
        k = end;
    }
    /* outputs the program does not produce straight into out[i] */
    const rt_inst *m = &p->insts[0];
    for (uint32_t i = 0; i < m->n_out; i++) {
        uint32_t v = p->idx[m->out_base + i];
        loc l = where(e, v);
        if (l.kind == L_OUT && l.idx == i) continue;
        tosac_strbuf_appendf(sb, "    memcpy(out[%" PRIu32 "], ", i);
        put_loc(e, sb, l);
        tosac_strbuf_appendf(sb, ", %zu);\n", p->vals[rt_final_val(p, v)].nbytes);
    }
    tosac_strbuf_append(sb, "    return 0;\n}\n");
}

static bool valid_name(const char *s)
{
    if (!s || !(isalpha((unsigned char)*s) || *s == '_')) return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_') return false;
    return true;
}

static void ectx_close(ectx *e)
{
    size_t nv = e->p ? (size_t)e->p->n_vals + 1 : 0, no = e->p ? (size_t)e->p->n_ops + 1 : 0;
    size_t nb = e->p ? (size_t)e->p->n_bufs + 1 : 0;
    tosac_free(e->dropped, nv * sizeof(bool));
    tosac_free(e->const_used, nv * sizeof(bool));
    tosac_free(e->run, no * sizeof(bool));
    tosac_free(e->prep_off, no * sizeof(size_t));
    tosac_free(e->unread, no * sizeof(uint32_t));
    tosac_free(e->owned, no * sizeof(bool));
    tosac_free(e->slice, no * sizeof(uint32_t));
    tosac_free(e->slice_end, no * sizeof(uint32_t));
    tosac_free(e->slim, nv * sizeof(bool));
    tosac_free(e->prep_skip, no * sizeof(size_t));
    tosac_free(e->buf_off, nb * sizeof(size_t));
    tosac_free(e->cidx, nv * sizeof(uint32_t));
    tosac_free(e->call_at, no * sizeof(uint32_t));
    tosac_free(e->shp, e->cap_shp * sizeof(int64_t));
    for (uint32_t i = 0; i < e->n_attr; i++) tosac_free(e->akeys[i], strlen(e->akeys[i]) + 1);
    tosac_free(e->akeys, e->cap_attr * sizeof(char *));
    tosac_strbuf_free(&e->c);
    tosac_program_destroy((tosac_program *)(uintptr_t)e->p);
    memset(e, 0, sizeof *e);
}

/* Creates the program of `g` and decides what the C holds (calls, plan, data); `out` gets the
   figures of this program added. */
static tosac_status ectx_open(ectx *e, const tosac_graph *g, const tosac_emit_c_opts *o, const char *px,
                              tosac_emit_c_out *out, tosac_diag *d)
{
    memset(e, 0, sizeof *e);
    tosac_program_opts po = tosac_program_opts_default();
    po.validate.extensions = TOSAC_EXT_ALL; /* what `tosac run` accepts */
    po.validate.level = TOSAC_LEVEL_NONE;
    po.external_io = true; /* inputs and outputs are the caller's buffers */
    po.kernel_isa = o->isa == TOSAC_PROGRAM_ISA_MVE ? TOSAC_PROGRAM_ISA_MVE : TOSAC_PROGRAM_ISA_PORTABLE;
    tosac_program *p = NULL;
    tosac_status st = tosac_program_create(g, &po, &p, d);
    if (st != TOSAC_OK) return st;
    e->p = p;
    e->o = o;
    e->d = d;
    snprintf(e->px, sizeof e->px, "%s", px);
    size_t nv = (size_t)p->n_vals + 1, no = (size_t)p->n_ops + 1, nb = (size_t)p->n_bufs + 1;
    e->dropped = tosac_calloc(nv, sizeof(bool));
    e->const_used = tosac_calloc(nv, sizeof(bool));
    e->run = tosac_calloc(no, sizeof(bool));
    e->prep_off = tosac_calloc(no, sizeof(size_t));
    e->unread = tosac_calloc(no, sizeof(uint32_t));
    e->buf_off = tosac_calloc(nb, sizeof(size_t));
    e->owned = tosac_calloc(no, sizeof(bool));
    e->prep_skip = tosac_calloc(no, sizeof(size_t));
    e->slice = tosac_calloc(no, sizeof(uint32_t));
    e->slice_end = tosac_calloc(no, sizeof(uint32_t));
    e->slim = tosac_calloc(nv, sizeof(bool));
    e->cidx = tosac_calloc(nv, sizeof(uint32_t));
    e->call_at = tosac_calloc(no, sizeof(uint32_t));
    if (!e->cidx || !e->call_at || !e->dropped || !e->const_used || !e->run || !e->prep_off || !e->unread || !e->buf_off || !e->owned ||
        !e->prep_skip || !e->slice || !e->slice_end || !e->slim)
        return tosac_diag_add(d, TOSAC_ERR_NOMEM, "emit-c: out of memory");
    if ((st = check_supported(e)) != TOSAC_OK) return st;
    select_calls(e);
    find_slices(e);
    if ((st = plan(e)) != TOSAC_OK) return st;
    drop_aliases(e);
    select_data(e, out);
    out->runtime_arena += p->arena_size;
    out->runtime_lower_bound += p->arena_lb;
    for (uint32_t k = 0; k < p->n_ops; k++) out->n_calls += e->run[k];
    return TOSAC_OK;
}

/* NAME.cmake and sources.txt from the families the programs call. */
static tosac_status finish(const tosac_emit_c_opts *o, const bool *used, tosac_strbuf *c, tosac_strbuf *h,
                           tosac_emit_c_out *out, tosac_diag *d)
{
    out->source = tosac_strbuf_take(c);
    out->header = tosac_strbuf_take(h);
    out->cmake = sources_text(o, used, true);
    out->sources = sources_text(o, used, false);
    if (out->source && out->header && out->cmake && out->sources) return TOSAC_OK;
    tosac_emit_c_out_free(out);
    return tosac_diag_add(d, TOSAC_ERR_NOMEM, "emit-c: out of memory while writing the C code");
}

static void mark_families(const ectx *e, bool *used)
{
    for (uint32_t k = 0; k < e->p->n_ops; k++) {
        if (!e->run[k]) continue;
        for (size_t f = 0; f < N_FAMILY_FILES; f++)
            if (!strcmp(k_family_files[f].family, k_family[e->p->ops[k].op])) used[f] = true;
    }
}

tosac_status tosac_emit_c(const tosac_graph *g, const tosac_emit_c_opts *o, tosac_emit_c_out *out, tosac_diag *d)
{
    if (!g || !o || !out) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_emit_c: no graph, options or result");
    if (!valid_name(o->name) || strlen(o->name) > 48)
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "emit-c: '%s' is not a C identifier of at most 48 characters",
                              o->name ? o->name : "");
    memset(out, 0, sizeof *out);
    ectx e;
    tosac_strbuf h;
    tosac_strbuf_init(&h);
    bool used[N_FAMILY_FILES] = {false};
    tosac_status st = ectx_open(&e, g, o, "", out, d);
    if (st == TOSAC_OK) {
        out->arena = e.arena;
        out->arena_lower_bound = e.lb;
        put_prologue(&e.c, o);
        st = put_data(&e);
    }
    if (st == TOSAC_OK) {
        const tosac_program *p = e.p;
        const rt_inst *m = &p->insts[0];
        tosac_strbuf_appendf(&e.c, "\nint %s_invoke(const void *const in[], void *const out[], void *arena)\n", o->name);
        put_body(&e);
        const tosac_quant_iomap *q = o->qio;
        uint32_t ni = m->n_in < EMIT_MAX_IO ? m->n_in : EMIT_MAX_IO, no = m->n_out < EMIT_MAX_IO ? m->n_out : EMIT_MAX_IO;
        io_desc ins[EMIT_MAX_IO], outs[EMIT_MAX_IO];
        for (uint32_t i = 0; i < ni; i++) ins[i] = val_io(p, p->idx[m->in_base + i], q ? q->inputs : NULL, q ? q->n_inputs : 0);
        for (uint32_t i = 0; i < no; i++) outs[i] = val_io(p, p->idx[m->out_base + i], q ? q->outputs : NULL, q ? q->n_outputs : 0);
        for (uint32_t i = 0; i < ni; i++) out->io_bytes += ins[i].nbytes;
        for (uint32_t i = 0; i < no; i++) out->io_bytes += outs[i].nbytes;
        put_header(&h, o, out, ins, ni, outs, no, NULL, 0);
        mark_families(&e, used);
        st = finish(o, used, &e.c, &h, out, d);
    }
    ectx_close(&e);
    tosac_strbuf_free(&h);
    return st;
}

static void free_str(char **s)
{
    if (*s) tosac_free(*s, strlen(*s) + 1);
    *s = NULL;
}

void tosac_emit_c_out_free(tosac_emit_c_out *o)
{
    if (!o) return;
    free_str(&o->header);
    free_str(&o->source);
    free_str(&o->cmake);
    free_str(&o->sources);
}

/* ---- segmented artifacts ----------------------------------------------------------------------- */

/* Position of the artifact tensor named `name` in list[0..n), or n. */
static uint32_t by_name(const tosac_artifact_tensor *list, uint32_t n, const char *name)
{
    uint32_t i = 0;
    while (i < n && strcmp(list[i].name, name)) i++;
    return i;
}

static size_t tensor_bytes(const tosac_artifact_tensor *t)
{
    size_t n = tosac_exec_elem_size(t->dtype, false);
    for (int32_t i = 0; i < t->rank; i++) n *= (size_t)t->shape[i];
    return n;
}

static io_desc artifact_io(const tosac_artifact_tensor *t)
{
    io_desc r;
    memset(&r, 0, sizeof r);
    r.name = t->name, r.dtype = t->dtype, r.rank = t->rank, r.shape = t->shape, r.nbytes = tensor_bytes(t);
    r.has_q = t->has_q, r.type = t->io, r.q = t->q;
    return r;
}

/* Where segment s's output k lives: model output j (out[j]) or its arena buffer. */
typedef struct seg_wire {
    uint32_t *perm_in, *perm_out; /* program input / output i -> artifact tensor index */
    uint32_t n_in, n_out;
    size_t arena, lb;
    uint32_t buf0; /* index of its first output buffer in the boundary plan */
} seg_wire;

static void put_tensor_src(tosac_strbuf *sb, const tosac_artifact *a, const seg_wire *w, const ebuf *bufs, int32_t p,
                           uint32_t k)
{
    if (p < 0) {
        tosac_strbuf_appendf(sb, "in[%" PRIu32 "]", k);
        return;
    }
    for (uint32_t j = 0; j < tosac_artifact_output_count(a); j++) {
        const tosac_artifact_tensor *t = tosac_artifact_output(a, j);
        if (t->from_segment == p && t->from_index == k) {
            tosac_strbuf_appendf(sb, "out[%" PRIu32 "]", j);
            return;
        }
    }
    tosac_strbuf_appendf(sb, "A + %zu", bufs[w[p].buf0 + k].off);
}

tosac_status tosac_emit_c_artifact(const tosac_artifact *a, const tosac_emit_c_opts *o, tosac_emit_c_out *out,
                                   tosac_diag *d)
{
    if (!a || !o || !out) return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "tosac_emit_c_artifact: no artifact, options or result");
    if (!valid_name(o->name) || strlen(o->name) > 48)
        return tosac_diag_add(d, TOSAC_ERR_INVALID_ARG, "emit-c: '%s' is not a C identifier of at most 48 characters",
                              o->name ? o->name : "");
    memset(out, 0, sizeof *out);
    uint32_t ns = tosac_artifact_segment_count(a), nbuf = ns, n_npu = 0;
    for (uint32_t s = 0; s < ns; s++) nbuf += tosac_artifact_segment_at(a, s)->n_outputs;
    seg_wire *w = tosac_calloc(ns ? ns : 1, sizeof *w);
    ebuf *bufs = tosac_calloc(nbuf ? nbuf : 1, sizeof *bufs);
    ebuf **order = tosac_calloc(nbuf ? nbuf : 1, sizeof *order);
    uint32_t *npu = tosac_calloc(ns ? ns : 1, sizeof *npu);
    bool used[N_FAMILY_FILES] = {false};
    tosac_strbuf c, h;
    tosac_strbuf_init(&c);
    tosac_strbuf_init(&h);
    tosac_status st = TOSAC_OK;
    if (!w || !bufs || !order || !npu) {
        st = tosac_diag_add(d, TOSAC_ERR_NOMEM, "emit-c: out of memory");
        goto done;
    }
    put_prologue(&c, o);
    /* every segment: its data and a static function running it; NPU segments behind a weak hook */
    uint32_t b = ns;
    for (uint32_t s = 0; s < ns; s++) {
        const tosac_artifact_segment *seg = tosac_artifact_segment_at(a, s);
        char px[16];
        snprintf(px, sizeof px, "g%" PRIu32 "_", s);
        ectx e;
        st = ectx_open(&e, seg->graph, o, px, out, d);
        if (st == TOSAC_OK) {
            const rt_inst *m = &e.p->insts[0];
            w[s].n_in = m->n_in, w[s].n_out = m->n_out;
            w[s].perm_in = tosac_calloc(m->n_in + 1, sizeof(uint32_t));
            w[s].perm_out = tosac_calloc(m->n_out + 1, sizeof(uint32_t));
            if (!w[s].perm_in || !w[s].perm_out) st = tosac_diag_add(d, TOSAC_ERR_NOMEM, "emit-c: out of memory");
            for (uint32_t i = 0; st == TOSAC_OK && i < m->n_in; i++)
                if ((w[s].perm_in[i] = by_name(seg->inputs, seg->n_inputs, e.p->vals[e.p->idx[m->in_base + i]].name)) ==
                    seg->n_inputs)
                    st = tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: input %" PRIu32 " is not in the manifest", seg->file, i);
            for (uint32_t i = 0; st == TOSAC_OK && i < m->n_out; i++)
                if ((w[s].perm_out[i] = by_name(seg->outputs, seg->n_outputs, e.p->vals[e.p->idx[m->out_base + i]].name)) ==
                    seg->n_outputs)
                    st = tosac_diag_add(d, TOSAC_ERR_FORMAT, "%s: output %" PRIu32 " is not in the manifest", seg->file, i);
        }
        if (st != TOSAC_OK) {
            ectx_close(&e);
            tosac_diag_add(d, st, "emit-c: segment %" PRIu32 " (%s)", s, seg->file);
            goto done;
        }
        w[s].arena = e.arena, w[s].lb = e.lb;
        tosac_strbuf_appendf(&e.c, "\n/* segment %" PRIu32 " (%s, %s) */\n", s, seg->file, seg->npu ? "NPU" : "CPU");
        if (st == TOSAC_OK) st = put_data(&e);
        if (st != TOSAC_OK) {
            ectx_close(&e);
            goto done;
        }
        tosac_strbuf_appendf(&e.c, "\nstatic int %srun(const void *const in[], void *const out[], void *arena)\n", px);
        put_body(&e);
        if (seg->npu) {
            npu[n_npu++] = s;
            tosac_strbuf_appendf(&e.c,
                                 "\n/* the default of the NPU hook: the segment on the CPU */\n#if defined(__GNUC__)\n__attribute__((weak))\n#endif\n"
                                 "int %s_npu_segment_%" PRIu32 "(const void *const in[], void *const out[], void *arena)\n{\n"
                                 "    return %srun(in, out, arena);\n}\n",
                                 o->name, s, px);
        }
        char *text = tosac_strbuf_take(&e.c);
        if (text) {
            tosac_strbuf_append(&c, text);
            tosac_free(text, strlen(text) + 1);
        } else {
            tosac_strbuf_append(&c, "");
            c.failed = true;
        }
        mark_families(&e, used);
        ectx_close(&e);
        /* its arena (live at step s) and its outputs (to their last reader) */
        bufs[s] = (ebuf){rt_align(w[s].arena), 0, (int32_t)s, (int32_t)s};
        w[s].buf0 = b;
        for (uint32_t k = 0; k < seg->n_outputs; k++, b++) {
            int32_t last = (int32_t)s;
            for (uint32_t r = s + 1; r < ns; r++) {
                const tosac_artifact_segment *q = tosac_artifact_segment_at(a, r);
                for (uint32_t i = 0; i < q->n_inputs; i++)
                    if (q->inputs[i].from_segment == (int32_t)s && q->inputs[i].from_index == k) last = (int32_t)r;
            }
            bool model_out = false;
            for (uint32_t j = 0; j < tosac_artifact_output_count(a); j++)
                model_out |= tosac_artifact_output(a, j)->from_segment == (int32_t)s && tosac_artifact_output(a, j)->from_index == k;
            bufs[b] = (ebuf){model_out ? 0 : rt_align(tensor_bytes(&seg->outputs[k])), 0, (int32_t)s, last};
        }
    }
    /* the segments' arenas and the tensors between segments in one arena */
    for (uint32_t i = 0; i < nbuf; i++) order[i] = &bufs[i];
    qsort(order, nbuf, sizeof *order, cmp_size);
    out->arena = place(order, nbuf);
    for (uint32_t s = 0; s < ns; s++) {
        size_t live = w[s].lb;
        for (uint32_t i = ns; i < nbuf; i++)
            if (bufs[i].first <= (int32_t)s && (int32_t)s <= bufs[i].last) live += bufs[i].size;
        if (live > out->arena_lower_bound) out->arena_lower_bound = live;
    }
    tosac_strbuf_appendf(&c, "\nint %s_invoke(const void *const in[], void *const out[], void *arena)\n{\n    uint8_t *A = arena;\n    int st;\n    (void)A;\n",
                         o->name);
    for (uint32_t s = 0; s < ns; s++) {
        const tosac_artifact_segment *seg = tosac_artifact_segment_at(a, s);
        tosac_strbuf_append(&c, "    {\n        const void *const si[] = {");
        for (uint32_t i = 0; i < w[s].n_in; i++) {
            const tosac_artifact_tensor *t = &seg->inputs[w[s].perm_in[i]];
            tosac_strbuf_append(&c, i ? ", " : "");
            put_tensor_src(&c, a, w, bufs, t->from_segment, t->from_index);
        }
        tosac_strbuf_appendf(&c, "%s};\n        void *const so[] = {", w[s].n_in ? "" : "0");
        for (uint32_t i = 0; i < w[s].n_out; i++) {
            tosac_strbuf_append(&c, i ? ", " : "");
            put_tensor_src(&c, a, w, bufs, (int32_t)s, w[s].perm_out[i]);
        }
        tosac_strbuf_appendf(&c, "%s};\n", w[s].n_out ? "" : "0");
        if (seg->npu)
            tosac_strbuf_appendf(&c, "        if ((st = %s_npu_segment_%" PRIu32 "(si, so, A + %zu)) != 0) return st;\n    }\n",
                                 o->name, s, bufs[s].off);
        else
            tosac_strbuf_appendf(&c, "        if ((st = g%" PRIu32 "_run(si, so, A + %zu)) != 0) return st;\n    }\n", s,
                                 bufs[s].off);
    }
    /* model outputs that are a model input or repeat another output */
    for (uint32_t j = 0; j < tosac_artifact_output_count(a); j++) {
        const tosac_artifact_tensor *t = tosac_artifact_output(a, j);
        uint32_t first = j;
        for (uint32_t i = 0; i < j; i++)
            if (tosac_artifact_output(a, i)->from_segment == t->from_segment && tosac_artifact_output(a, i)->from_index == t->from_index)
                first = i;
        if (t->from_segment >= 0 && first == j) continue;
        tosac_strbuf_appendf(&c, "    memcpy(out[%" PRIu32 "], ", j);
        if (t->from_segment < 0)
            tosac_strbuf_appendf(&c, "in[%" PRIu32 "]", t->from_index);
        else
            tosac_strbuf_appendf(&c, "out[%" PRIu32 "]", first);
        tosac_strbuf_appendf(&c, ", %zu);\n", tensor_bytes(t));
    }
    tosac_strbuf_append(&c, "    return 0;\n}\n");
    {
        uint32_t ni = tosac_artifact_input_count(a), no = tosac_artifact_output_count(a);
        ni = ni < EMIT_MAX_IO ? ni : EMIT_MAX_IO, no = no < EMIT_MAX_IO ? no : EMIT_MAX_IO;
        io_desc ins[EMIT_MAX_IO], outs[EMIT_MAX_IO];
        for (uint32_t i = 0; i < ni; i++) out->io_bytes += (ins[i] = artifact_io(tosac_artifact_input(a, i))).nbytes;
        for (uint32_t i = 0; i < no; i++) out->io_bytes += (outs[i] = artifact_io(tosac_artifact_output(a, i))).nbytes;
        put_header(&h, o, out, ins, ni, outs, no, npu, n_npu);
    }
    st = finish(o, used, &c, &h, out, d);
done:
    for (uint32_t s = 0; w && s < ns; s++) {
        tosac_free(w[s].perm_in, (w[s].n_in + 1) * sizeof(uint32_t));
        tosac_free(w[s].perm_out, (w[s].n_out + 1) * sizeof(uint32_t));
    }
    tosac_free(w, (ns ? ns : 1) * sizeof *w);
    tosac_free(bufs, (nbuf ? nbuf : 1) * sizeof *bufs);
    tosac_free(order, (nbuf ? nbuf : 1) * sizeof *order);
    tosac_free(npu, (ns ? ns : 1) * sizeof *npu);
    tosac_strbuf_free(&c);
    tosac_strbuf_free(&h);
    return st;
}
