/*
 * Observed values of a fused run (tosac_program_opts.observe, src/runtime/fuse.c and exec.c): an
 * FP32 convolution with a CLAMP it can absorb, then SiLU and a bias ADD that form a chain. For
 * several observe lists, on 1, 2 and 3 threads and at every instruction-set level, every listed
 * value read in the op callback after its producer has the bytes the unfused run gives (an op
 * callback without a list: every operator one by one, every result read as soon as it is made);
 * the callback skips exactly the operators a fusion absorbed, the fusions that no listed value
 * stops do happen (the callback count, the plan's chains), and the outputs agree.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/diag.h"
#include "harness/test.h"
#include "ir/graph.h"
#include "kernels/kernel.h"
#include "runtime/program.h"
#include "tosac/graph.h"
#include "tosac/runtime.h"

typedef struct gb {
    tosac_graph *g;
    tosac_block *b;
    bool ok;
} gb;

static tosac_value *chk(gb *x, tosac_value *v)
{
    if (!v) x->ok = false;
    return v;
}

static tosac_value *tensor(gb *x, const char *name, const int64_t *dims)
{
    return x->ok ? chk(x, tosac_block_add_tensor(x->b, name, TOSAC_DTYPE_FP32, 4, dims)) : NULL;
}

static tosac_value *cst(gb *x, const char *name, int rank, const int64_t *dims, const float *v)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    return x->ok ? chk(x, tosac_block_add_const(x->b, name, TOSAC_DTYPE_FP32, rank, dims, v, (size_t)n * 4)) : NULL;
}

static tosac_node *node(gb *x, tosac_op op, uint32_t nin, tosac_value *const *in, tosac_value *out)
{
    tosac_node *n = x->ok ? tosac_block_add_node(x->b, op, nin, in, 1, &out) : NULL;
    if (!n) x->ok = false;
    return n;
}

enum { H = 23, W = 19, CI = 8, CO = 24 };

/* The values the tests list: the convolution's result, the CLAMP's, the sigmoid's, the SiLU's,
   the output. */
typedef struct vals {
    uint32_t conv, relu, sig, silu, out;
} vals;

/* x -> CONV2D 3x3 (pad 1) -> CLAMP [0, 6] -> r; SiLU m = r * SIGMOID(r); out = m + bias[C]. */
static tosac_graph *model(vals *v)
{
    static const int64_t dx[4] = {1, H, W, CI}, dy[4] = {1, H, W, CO}, dw[4] = {CO, 3, 3, CI}, db[1] = {CO},
                         one[1] = {1}, dc[4] = {1, 1, 1, CO};
    gb x = {tosac_graph_create(), NULL, true};
    tosac_region *r = x.g ? tosac_graph_add_region(x.g, "main") : NULL;
    x.b = r ? tosac_region_add_block(r, "main") : NULL;
    x.ok = x.b != NULL;
    tosac_value *in = tensor(&x, "x", dx);
    if (!in || tosac_block_add_input(x.b, in) != TOSAC_OK) x.ok = false;
    static float w[CO * 9 * CI], bias[CO], add[CO];
    for (int i = 0; i < CO * 9 * CI; i++) w[i] = (float)((i * 37) % 23 - 11) / 16.0f;
    for (int i = 0; i < CO; i++) bias[i] = (float)(i % 7 - 3) / 4.0f, add[i] = (float)(i % 5) / 8.0f - 0.25f;
    static const float zero = 0.0f;
    tosac_value *cin[5] = {in, cst(&x, "w", 4, dw, w), cst(&x, "b", 1, db, bias), cst(&x, "izp", 1, one, &zero),
                           cst(&x, "wzp", 1, one, &zero)};
    tosac_value *c = tensor(&x, "conv", dy), *rl = tensor(&x, "relu", dy), *sg = tensor(&x, "sig", dy);
    tosac_value *m = tensor(&x, "silu", dy), *y = tensor(&x, "out", dy);
    tosac_node *n = node(&x, TOSAC_OP_CONV2D, 5, cin, c);
    static const int32_t pad[4] = {1, 1, 1, 1}, st[2] = {1, 1}, dil[2] = {1, 1};
    if (!n || tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_pad, pad, 4) || tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_stride, st, 2) ||
        tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_dilation, dil, 2) ||
        tosac_node_set_int(n, TOSAC_ATTR_CONV2D_acc_type, TOSAC_DTYPE_FP32))
        x.ok = false;
    const float lo = 0.0f, hi = 6.0f;
    n = node(&x, TOSAC_OP_CLAMP, 1, &c, rl);
    if (!n || tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_min_val, &lo, 4) || tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_max_val, &hi, 4) ||
        tosac_node_set_int(n, TOSAC_ATTR_CLAMP_nan_mode, TOSAC_NAN_PROPAGATE))
        x.ok = false;
    node(&x, TOSAC_OP_SIGMOID, 1, &rl, sg);
    tosac_value *shift = x.ok ? chk(&x, tosac_block_add_const(x.b, "shift", TOSAC_DTYPE_INT8, 1, one, "\0", 1)) : NULL;
    tosac_value *min[3] = {rl, sg, shift};
    node(&x, TOSAC_OP_MUL, 3, min, m);
    tosac_value *ain[2] = {m, cst(&x, "add", 4, dc, add)};
    node(&x, TOSAC_OP_ADD, 2, ain, y);
    if (!y || tosac_block_add_output(x.b, y) != TOSAC_OK) x.ok = false;
    if (!x.ok) {
        tosac_graph_destroy(x.g);
        return NULL;
    }
    *v = (vals){c->index, rl->index, sg->index, m->index, y->index};
    return x.g;
}

#define MAXV 64
/* What a run's callback saw: per value index, a copy of its bytes (NULL if not read) */
typedef struct seen {
    const tosac_program *p;
    const tosac_block *b;
    bool want[MAXV]; /* the values to copy */
    uint8_t *copy[MAXV];
    size_t size[MAXV];
    uint32_t calls, called[MAXV]; /* per operator index */
    uint32_t twice;
    uint32_t epilogues; /* operators running a fused epilogue */
} seen;

static void on_op(void *user, uint32_t op_index, uint32_t op, uint64_t ns)
{
    (void)op, (void)ns;
    seen *s = user;
    s->calls++;
    if (op_index < MAXV) s->called[op_index]++;
    const tosac_node *n = op_index < s->b->n_nodes ? s->b->nodes[op_index] : NULL;
    for (uint32_t k = 0; n && k < n->n_outputs; k++) {
        uint32_t v = n->outputs[k]->index;
        tosac_tensor_info info;
        const void *data = NULL;
        if (v >= MAXV || !s->want[v] || tosac_program_op_output(s->p, op_index, k, &info, &data) != TOSAC_OK || !data)
            continue;
        if (s->copy[v]) s->twice++;
        free(s->copy[v]);
        s->copy[v] = malloc(info.nbytes);
        memcpy(s->copy[v], data, info.nbytes);
        s->size[v] = info.nbytes;
    }
}

static void seen_free(seen *s)
{
    for (int v = 0; v < MAXV; v++) free(s->copy[v]);
}

/* Runs g on `threads` threads with an op callback copying the values `want` lists (observe: they
   are the program's observe list, else it has none); *chains: whether its plan has chains. */
static tosac_status run(const tosac_graph *g, const uint32_t *want, uint32_t n_want, bool observe, uint32_t threads,
                        seen *s, bool *chains)
{
    tosac_program_opts o = tosac_program_opts_default();
    o.threads = threads;
    if (observe) o.observe = want, o.n_observe = n_want;
    tosac_program *p = NULL;
    tosac_status st = tosac_program_create(g, &o, &p, NULL);
    if (st != TOSAC_OK) return st;
    memset(s, 0, sizeof *s);
    s->p = p;
    s->b = g->regions[0]->blocks[0];
    for (uint32_t i = 0; i < n_want; i++) s->want[want[i]] = true;
    for (uint32_t k = 0; k < p->n_ops; k++) s->epilogues += p->ops[k].has_epi;
    char *dump = tosac_program_dump_plan(p);
    *chains = dump && strstr(dump, "\nchain 0: ");
    tosac_string_free(dump);
    float *x = tosac_program_input_ptr(p, 0);
    for (int i = 0; i < H * W * CI; i++) x[i] = (float)((i * 53) % 41 - 20) / 8.0f;
    x[7] = 1.0f / 0.0f, x[300] = 0.0f / 0.0f, x[301] = -0.0f;
    tosac_program_set_op_callback(p, on_op, s);
    st = tosac_program_invoke(p, NULL);
    tosac_program_destroy(p);
    return st;
}

/* One observe list (positions in vals): `absorbed` lists the operators (tosac_op) a fusion should absorb. */
static void check(const char *name, const uint32_t *list, uint32_t n, const uint32_t *absorbed, uint32_t n_absorbed,
                  bool want_chains, uint32_t want_epilogues)
{
    vals v;
    tosac_graph *g = model(&v);
    EXPECT(g != NULL);
    if (!g) return;
    uint32_t map[5] = {v.conv, v.relu, v.sig, v.silu, v.out}, obs[5];
    for (uint32_t i = 0; i < n; i++) obs[i] = map[list[i]];
    seen ref, got;
    bool chains = false;
    for (uint32_t level = 0; level <= TOSAC_KISA_AVX512; level++) {
        /* the unfused run at the same level (a NaN's sign may differ between levels) */
        tosac_kernel_limit_isa(level);
        EXPECT_EQ_I(run(g, map, 5, false, 1, &ref, &chains), TOSAC_OK);
        for (uint32_t t = 1; t <= 3; t++) {
            EXPECT_EQ_I(run(g, obs, n, true, t, &got, &chains), TOSAC_OK);
            EXPECT(chains == want_chains);
            EXPECT_EQ_I(got.epilogues, want_epilogues);
            EXPECT_EQ_I(got.twice, 0);
            for (uint32_t i = 0; i < n; i++) {
                uint32_t x = obs[i];
                bool same = got.copy[x] && ref.copy[x] && got.size[x] == ref.size[x] && !memcmp(got.copy[x], ref.copy[x], ref.size[x]);
                if (!same) fprintf(stderr, "  %s: level %u, %u threads: observed value %u differs\n", name, level, t, x);
                EXPECT(same);
            }
            /* the operators the fusions absorbed are not called back; every other one once */
            const tosac_block *b = g->regions[0]->blocks[0];
            for (uint32_t k = 0; k < b->n_nodes && k < MAXV; k++) {
                bool skip = false;
                for (uint32_t j = 0; j < n_absorbed; j++) skip |= absorbed[j] == b->nodes[k]->op;
                EXPECT_EQ_I(got.called[k], skip ? 0 : 1);
            }
            seen_free(&got);
        }
        seen_free(&ref);
    }
    tosac_kernel_limit_isa(TOSAC_KISA_AVX512);
    tosac_graph_destroy(g);
}

/* the convolution's result listed: it absorbs no CLAMP, the CLAMP is a chain of one that runs from
   its epilogue (an identity clamp, which absorbs no operator) and the sigmoid is a chain member */
static void test_conv_listed(void)
{
    static const uint32_t l[3] = {0, 3, 4}, a[1] = {TOSAC_OP_SIGMOID};
    check("conv_listed", l, 3, a, 1, true, 1);
}

/* only the CLAMP's result and the output: the convolution absorbs the CLAMP (called back right
   after it), one chain SIGMOID, MUL, ADD */
static void test_fused(void)
{
    static const uint32_t l[2] = {1, 4}, a[2] = {TOSAC_OP_SIGMOID, TOSAC_OP_MUL};
    check("fused", l, 2, a, 2, true, 1);
}

/* everything listed: nothing absorbed, no chain of two (the ADD alone is too small for one); the
   CLAMP, a chain of one, runs from the convolution's (identity) epilogue */
static void test_all_listed(void)
{
    static const uint32_t l[5] = {0, 1, 2, 3, 4};
    check("all_listed", l, 5, NULL, 0, true, 1);
}

/* a value that is not a tensor of the main block is refused */
static void test_bad_index(void)
{
    vals v;
    tosac_graph *g = model(&v);
    EXPECT(g != NULL);
    if (!g) return;
    uint32_t bad = g->regions[0]->blocks[0]->n_tensors;
    tosac_program_opts o = tosac_program_opts_default();
    o.observe = &bad, o.n_observe = 1;
    tosac_program *p = NULL;
    tosac_diag *d = tosac_diag_create();
    EXPECT_EQ_I(tosac_program_create(g, &o, &p, d), TOSAC_ERR_INVALID_ARG);
    EXPECT(p == NULL && tosac_diag_count(d) > 0);
    tosac_diag_destroy(d);
    tosac_graph_destroy(g);
}

int main(void)
{
    RUN(test_conv_listed);
    RUN(test_fused);
    RUN(test_all_listed);
    RUN(test_bad_index);
    return test_summary();
}
