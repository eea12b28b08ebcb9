/*
 * Runtime (include/tosac/runtime.h): graphs built with the builder are created, run and checked
 * against values computed here from simple formulas; the memory plan is checked for overlaps
 * and against its lower bound; control flow, variables, caller memory, precise mode and the
 * error paths each have their own test.
 */
#include <math.h>
#include <stdlib.h>

#include "harness/op_graphs.h"
#include "harness/test.h"
#include "ir/graph.h"
#include "tosa/op_table.h"
#include "tosac/runtime.h"

static tosac_diag *g_diag;

static void dump_diag(void)
{
    for (size_t i = 0; i < tosac_diag_count(g_diag); i++) {
        tosac_status code;
        const char *m = tosac_diag_message(g_diag, i, &code);
        fprintf(stderr, "    [%s] %s\n", tosac_status_str(code), m);
    }
}

static bool diag_has(const char *needle)
{
    for (size_t i = 0; i < tosac_diag_count(g_diag); i++)
        if (strstr(tosac_diag_message(g_diag, i, NULL), needle)) return true;
    return false;
}

/* ------------------------------------------------------------------------------------------ */
/* Graph building                                                                                */

typedef struct gb {
    tosac_graph *g;
    tosac_block *b;
    bool fail;
} gb;

static gb gb_new(void)
{
    gb x = {tosac_graph_create(), NULL, false};
    tosac_region *r = x.g ? tosac_graph_add_region(x.g, "main") : NULL;
    x.b = r ? tosac_region_add_block(r, "main") : NULL;
    x.fail = !x.b;
    return x;
}

/* Starts region `region` with one block `block`; later calls add to it. */
static void gb_sub(gb *x, const char *region, const char *block)
{
    tosac_region *r = tosac_graph_add_region(x->g, region);
    x->b = r ? tosac_region_add_block(r, block) : NULL;
    if (!x->b) x->fail = true;
}

static tosac_value *chk(gb *x, tosac_value *v)
{
    if (!v) x->fail = true;
    return v;
}

static tosac_value *tensor(gb *x, const char *name, tosac_dtype t, int rank, const int64_t *dims)
{
    return x->b ? chk(x, tosac_block_add_tensor(x->b, name, t, rank, dims)) : NULL;
}

static tosac_value *input(gb *x, const char *name, tosac_dtype t, int rank, const int64_t *dims)
{
    tosac_value *v = tensor(x, name, t, rank, dims);
    if (v && tosac_block_add_input(x->b, v) != TOSAC_OK) x->fail = true;
    return v;
}

static void output(gb *x, tosac_value *v)
{
    if (!v || tosac_block_add_output(x->b, v) != TOSAC_OK) x->fail = true;
}

static tosac_node *node(gb *x, tosac_op op, uint32_t nin, tosac_value *const *in, uint32_t nout, tosac_value *const *out)
{
    tosac_node *n = x->b ? tosac_block_add_node(x->b, op, nin, in, nout, out) : NULL;
    if (!n) x->fail = true;
    return n;
}

static tosac_node *op2(gb *x, tosac_op op, tosac_value *a, tosac_value *b, tosac_value *out)
{
    tosac_value *in[2] = {a, b};
    return node(x, op, 2, in, 1, &out);
}

static tosac_node *op1(gb *x, tosac_op op, tosac_value *a, tosac_value *out) { return node(x, op, 1, &a, 1, &out); }

static int64_t count_of(int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    return n;
}

static tosac_value *const_i32(gb *x, const char *name, int rank, const int64_t *dims, const int32_t *vals)
{
    int64_t n = count_of(rank, dims);
    uint8_t *bytes = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++)
        for (int k = 0; k < 4; k++) bytes[i * 4 + k] = (uint8_t)((uint32_t)vals[i] >> (8 * k));
    tosac_value *v = chk(x, tosac_block_add_const(x->b, name, TOSAC_DTYPE_INT32, rank, dims, bytes, (size_t)n * 4));
    free(bytes);
    return v;
}

static tosac_value *const_f32(gb *x, const char *name, int rank, const int64_t *dims, const float *vals)
{
    int64_t n = count_of(rank, dims);
    uint8_t *bytes = malloc((size_t)n * 4);
    for (int64_t i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &vals[i], 4);
        for (int k = 0; k < 4; k++) bytes[i * 4 + k] = (uint8_t)(u >> (8 * k));
    }
    tosac_value *v = chk(x, tosac_block_add_const(x->b, name, TOSAC_DTYPE_FP32, rank, dims, bytes, (size_t)n * 4));
    free(bytes);
    return v;
}

static tosac_value *const_scalar_i32(gb *x, const char *name, int32_t v)
{
    static const int64_t one[1] = {1};
    return const_i32(x, name, 1, one, &v);
}

static tosac_value *const_shape(gb *x, const char *name, uint32_t n, const int64_t *vals)
{
    return chk(x, tosac_block_add_const_shape(x->b, name, vals, n));
}

static void set_str(gb *x, tosac_node *n, unsigned id, const char *s)
{
    if (!n || tosac_node_set_str(n, id, s) != TOSAC_OK) x->fail = true;
}

static tosac_program *create(const tosac_graph *g, const tosac_program_opts *o)
{
    tosac_diag_clear(g_diag);
    tosac_program *p = NULL;
    tosac_status s = tosac_program_create(g, o, &p, g_diag);
    if (s != TOSAC_OK) {
        fprintf(stderr, "  create failed: %s\n", tosac_status_str(s));
        dump_diag();
    }
    return p;
}

static tosac_status invoke(tosac_program *p)
{
    tosac_diag_clear(g_diag);
    tosac_status s = tosac_program_invoke(p, g_diag);
    if (s != TOSAC_OK) fprintf(stderr, "  invoke: %s: %s\n", tosac_status_str(s), tosac_program_last_error(p));
    return s;
}

/* ------------------------------------------------------------------------------------------ */
/* Plan checker                                                                                  */

/*
 * Every entry lies in the arena, 16-byte aligned; entries of different buffers whose lifetimes
 * overlap occupy disjoint bytes; entries sharing a buffer hand it over (their lifetimes meet in at
 * most one step, the step of the operator that reuses it).
 */
static int cmp_entry_first(const void *pa, const void *pb)
{
    const tosac_plan_entry *a = pa, *b = pb;
    return a->first < b->first ? -1 : a->first > b->first;
}

static bool check_plan(const tosac_program *p)
{
    uint32_t n = tosac_program_plan_count(p);
    size_t arena = tosac_program_arena_size(p);
    bool ok = true;
    tosac_plan_entry *e = calloc(n ? n : 1, sizeof *e);
    for (uint32_t i = 0; i < n; i++) {
        if (tosac_program_plan_entry(p, i, &e[i]) != TOSAC_OK) {
            free(e);
            return false;
        }
        if (e[i].offset % 16 || e[i].size % 16 || e[i].offset + e[i].size > arena || e[i].first > e[i].last) {
            fprintf(stderr, "  entry %u '%s' [%zu,+%zu) steps %d..%d outside the arena (%zu)\n", i, e[i].name,
                    e[i].offset, e[i].size, e[i].first, e[i].last, arena);
            ok = false;
        }
    }
    /* pairs whose lifetimes overlap: sorted by first step, entry j overlaps i iff first_j <= last_i */
    qsort(e, n, sizeof *e, cmp_entry_first);
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = i + 1; j < n && e[j].first <= e[i].last; j++) {
            if (e[i].buffer == e[j].buffer) {
                bool handover = e[i].last == e[j].first || e[j].last == e[i].first;
                int32_t ov = (e[i].last < e[j].last ? e[i].last : e[j].last) - e[j].first;
                if (!(handover && ov == 0)) {
                    fprintf(stderr, "  '%s' and '%s' share buffer %u while both live\n", e[i].name, e[j].name,
                            e[i].buffer);
                    ok = false;
                }
                continue;
            }
            if (e[i].offset < e[j].offset + e[j].size && e[j].offset < e[i].offset + e[i].size) {
                fprintf(stderr, "  '%s' [%zu,+%zu) steps %d..%d overlaps '%s' [%zu,+%zu) steps %d..%d\n", e[i].name,
                        e[i].offset, e[i].size, e[i].first, e[i].last, e[j].name, e[j].offset, e[j].size, e[j].first,
                        e[j].last);
                ok = false;
            }
        }
    free(e);
    return ok;
}

static bool find_entry(const tosac_program *p, const char *block, const char *name, tosac_plan_entry *out)
{
    for (uint32_t i = 0; i < tosac_program_plan_count(p); i++) {
        tosac_plan_entry e;
        tosac_program_plan_entry(p, i, &e);
        if (e.op == UINT32_MAX && !strcmp(e.name, name) && !strcmp(e.block, block)) {
            *out = e;
            return true;
        }
    }
    return false;
}

static void set_input_i32(tosac_program *p, uint32_t i, const int32_t *v, int64_t n)
{
    int32_t *dst = tosac_program_input_ptr(p, i);
    EXPECT(dst != NULL);
    if (dst) memcpy(dst, v, (size_t)n * 4);
}

/* ------------------------------------------------------------------------------------------ */
/* Elementwise chain, in-place reuse                                                             */

static const int64_t k23[2] = {2, 3}, k32[2] = {3, 2};

/* y = RESHAPE(x + 1) -> IDENTITY: x + 1 computed once, the rest in place. */
static void test_inplace_reshape_identity(void)
{
    gb x = gb_new();
    tosac_value *in = input(&x, "x", TOSAC_DTYPE_INT32, 2, k23);
    static const int32_t ones[6] = {1, 1, 1, 1, 1, 1};
    tosac_value *one = const_i32(&x, "one", 2, k23, ones);
    tosac_value *a = tensor(&x, "a", TOSAC_DTYPE_INT32, 2, k23);
    op2(&x, TOSAC_OP_ADD, in, one, a);
    static const int64_t s32[2] = {3, 2};
    tosac_value *shp = const_shape(&x, "shape32", 2, s32);
    tosac_value *r = tensor(&x, "r", TOSAC_DTYPE_INT32, 2, k32);
    op2(&x, TOSAC_OP_RESHAPE, a, shp, r);
    tosac_value *y = tensor(&x, "y", TOSAC_DTYPE_INT32, 2, k32);
    op1(&x, TOSAC_OP_IDENTITY, r, y);
    output(&x, y);
    /* a RESHAPE of a block input cannot reuse the input's storage: it must copy */
    tosac_value *z = tensor(&x, "z", TOSAC_DTYPE_INT32, 2, k32);
    op2(&x, TOSAC_OP_RESHAPE, in, shp, z);
    output(&x, z);
    EXPECT(!x.fail);
    tosac_program *p = create(x.g, NULL);
    EXPECT(p != NULL);
    if (!p) goto out;
    EXPECT(check_plan(p));
    tosac_plan_entry ea, er, ey, ez, ex;
    EXPECT(find_entry(p, "main", "a", &ea) && find_entry(p, "main", "r", &er) && find_entry(p, "main", "y", &ey));
    EXPECT(find_entry(p, "main", "z", &ez) && find_entry(p, "main", "x", &ex));
    EXPECT(ea.buffer == er.buffer && er.buffer == ey.buffer && ea.offset == ey.offset);
    EXPECT(ez.buffer != ex.buffer);
    static const int32_t xv[6] = {1, -2, 3, 40, -50, 600};
    set_input_i32(p, 0, xv, 6);
    EXPECT_EQ_I(invoke(p), TOSAC_OK);
    const int32_t *yv = tosac_program_output_ptr(p, 0), *zv = tosac_program_output_ptr(p, 1);
    EXPECT(yv != NULL && zv != NULL && (const void *)zv != (const void *)tosac_program_input_ptr(p, 0));
    for (int i = 0; yv && zv && i < 6; i++) {
        EXPECT_EQ_I(yv[i], xv[i] + 1);
        EXPECT_EQ_I(zv[i], xv[i]);
    }
    /* pointer equality: the output is where ADD wrote a (arena base + a's offset) */
    const uint8_t *base = (const uint8_t *)tosac_program_input_ptr(p, 0) - ex.offset;
    EXPECT((const uint8_t *)yv == base + ea.offset);
    char *dump = tosac_program_dump_plan(p);
    EXPECT(dump && strstr(dump, "arena") && strstr(dump, "'shape32'"));
    tosac_string_free(dump);
    tosac_program_destroy(p);
out:
    tosac_graph_destroy(x.g);
}

/* RESHAPE / IDENTITY of a constant use the constant itself: no copy, no arena space. */
static void test_reshape_of_constant(void)
{
    gb x = gb_new();
    tosac_value *in = input(&x, "x", TOSAC_DTYPE_INT32, 2, k32);
    static const int32_t wv[6] = {3, 1, 4, 1, 5, 9};
    tosac_value *w = const_i32(&x, "w", 2, k23, wv);
    static const int64_t s32[2] = {3, 2};
    tosac_value *wr = tensor(&x, "w_r", TOSAC_DTYPE_INT32, 2, k32);
    op2(&x, TOSAC_OP_RESHAPE, w, const_shape(&x, "s32", 2, s32), wr);
    tosac_value *wi = tensor(&x, "w_i", TOSAC_DTYPE_INT32, 2, k32);
    op1(&x, TOSAC_OP_IDENTITY, wr, wi);
    tosac_value *y = tensor(&x, "y", TOSAC_DTYPE_INT32, 2, k32);
    op2(&x, TOSAC_OP_ADD, in, wi, y);
    output(&x, y);
    output(&x, wi);
    EXPECT(!x.fail);
    tosac_program *p = create(x.g, NULL);
    EXPECT(p != NULL);
    if (p) {
        tosac_plan_entry e;
        EXPECT(!find_entry(p, "main", "w_r", &e) && !find_entry(p, "main", "w_i", &e));
        static const int32_t xv[6] = {10, 20, 30, 40, 50, 60};
        int32_t bound[6] = {0};
        for (int rep = 0; rep < 2; rep++) {
            set_input_i32(p, 0, xv, 6);
            if (rep) EXPECT_EQ_I(tosac_program_bind_output(p, 1, bound), TOSAC_OK);
            EXPECT_EQ_I(invoke(p), TOSAC_OK);
            const int32_t *yv = tosac_program_output_ptr(p, 0), *wo = tosac_program_output_ptr(p, 1);
            for (int i = 0; yv && wo && i < 6; i++) {
                EXPECT_EQ_I(yv[i], xv[i] + wv[i]);
                EXPECT_EQ_I(wo[i], wv[i]);
            }
            if (rep) EXPECT(wo == bound);
        }
        tosac_program_destroy(p);
    }
    tosac_graph_destroy(x.g);
}

/* ------------------------------------------------------------------------------------------ */
/* Planner: chains of convolutions and of adds                                                   */

#define NCONV 10
static const int k_ch[NCONV + 1] = {3, 8, 16, 24, 16, 8, 32, 16, 8, 12, 4};
#define HW 12

static float wval(int layer, int oc, int ky, int kx, int ic)
{
    int h = (layer * 131 + oc * 31 + ky * 7 + kx * 3 + ic * 5) % 17;
    return (float)(h - 8) / 64.0f;
}

static float bval(int layer, int oc) { return (float)((layer + oc) % 5 - 2) / 8.0f; }

static float xval(int i) { return (float)((i * 37) % 29 - 14) / 16.0f; }

static tosac_graph *conv_chain(void)
{
    gb x = gb_new();
    int64_t d[4] = {1, HW, HW, k_ch[0]};
    tosac_value *cur = input(&x, "x", TOSAC_DTYPE_FP32, 4, d);
    static const float zero = 0.0f;
    static const int64_t one[1] = {1};
    for (int l = 0; l < NCONV; l++) {
        int ci = k_ch[l], co = k_ch[l + 1];
        int64_t wd[4] = {co, 3, 3, ci}, bd[1] = {co}, od[4] = {1, HW, HW, co};
        float *w = malloc(sizeof(float) * (size_t)(co * 9 * ci)), *bias = malloc(sizeof(float) * (size_t)co);
        for (int oc = 0; oc < co; oc++) {
            bias[oc] = bval(l, oc);
            for (int ky = 0; ky < 3; ky++)
                for (int kx = 0; kx < 3; kx++)
                    for (int ic = 0; ic < ci; ic++) w[((oc * 3 + ky) * 3 + kx) * ci + ic] = wval(l, oc, ky, kx, ic);
        }
        char nw[16], nb[16], nz1[16], nz2[16], no[16];
        snprintf(nw, sizeof nw, "w%d", l);
        snprintf(nb, sizeof nb, "b%d", l);
        snprintf(nz1, sizeof nz1, "izp%d", l);
        snprintf(nz2, sizeof nz2, "wzp%d", l);
        snprintf(no, sizeof no, "c%d", l);
        tosac_value *in[5] = {cur, const_f32(&x, nw, 4, wd, w), const_f32(&x, nb, 1, bd, bias),
                              const_f32(&x, nz1, 1, one, &zero), const_f32(&x, nz2, 1, one, &zero)};
        free(w);
        free(bias);
        tosac_value *out = tensor(&x, no, TOSAC_DTYPE_FP32, 4, od);
        tosac_node *n = node(&x, TOSAC_OP_CONV2D, 5, in, 1, &out);
        static const int32_t pad[4] = {1, 1, 1, 1}, st[2] = {1, 1}, dil[2] = {1, 1};
        if (!n || tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_pad, pad, 4) || tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_stride, st, 2) ||
            tosac_node_set_ints(n, TOSAC_ATTR_CONV2D_dilation, dil, 2) ||
            tosac_node_set_int(n, TOSAC_ATTR_CONV2D_acc_type, TOSAC_DTYPE_FP32))
            x.fail = true;
        cur = out;
    }
    output(&x, cur);
    EXPECT(!x.fail);
    return x.g;
}

/* The chain computed here in double. */
static void conv_chain_ref(double *outv)
{
    double *a = malloc(sizeof(double) * HW * HW * 32), *b = malloc(sizeof(double) * HW * HW * 32);
    for (int i = 0; i < HW * HW * k_ch[0]; i++) a[i] = xval(i);
    for (int l = 0; l < NCONV; l++) {
        int ci = k_ch[l], co = k_ch[l + 1];
        for (int y = 0; y < HW; y++)
            for (int xx = 0; xx < HW; xx++)
                for (int oc = 0; oc < co; oc++) {
                    double s = bval(l, oc);
                    for (int ky = 0; ky < 3; ky++)
                        for (int kx = 0; kx < 3; kx++) {
                            int iy = y + ky - 1, ix = xx + kx - 1;
                            if (iy < 0 || ix < 0 || iy >= HW || ix >= HW) continue;
                            for (int ic = 0; ic < ci; ic++)
                                s += a[(iy * HW + ix) * ci + ic] * (double)wval(l, oc, ky, kx, ic);
                        }
                    b[(y * HW + xx) * co + oc] = s;
                }
        double *t = a;
        a = b;
        b = t;
    }
    memcpy(outv, a, sizeof(double) * HW * HW * k_ch[NCONV]);
    free(a);
    free(b);
}

static void test_plan_conv_chain(void)
{
    tosac_graph *g = conv_chain();
    tosac_program *p = create(g, NULL);
    EXPECT(p != NULL);
    if (!p) {
        tosac_graph_destroy(g);
        return;
    }
    size_t arena = tosac_program_arena_size(p), lb = tosac_program_arena_lower_bound(p);
    printf("conv chain (%d CONV2D): arena %zu bytes, lower bound %zu bytes (%.3f)\n", NCONV, arena, lb,
           lb ? (double)arena / (double)lb : 0.0);
    EXPECT(lb > 0 && (double)arena <= 1.1 * (double)lb);
    EXPECT(check_plan(p));
    float *xin = tosac_program_input_ptr(p, 0);
    for (int i = 0; xin && i < HW * HW * k_ch[0]; i++) xin[i] = xval(i);
    EXPECT_EQ_I(invoke(p), TOSAC_OK);
    double *ref = malloc(sizeof(double) * HW * HW * k_ch[NCONV]);
    conv_chain_ref(ref);
    const float *y = tosac_program_output_ptr(p, 0);
    int bad = 0;
    for (int i = 0; y && i < HW * HW * k_ch[NCONV]; i++)
        if (fabs(y[i] - ref[i]) > 1e-4 * (1.0 + fabs(ref[i]))) bad++;
    EXPECT_EQ_I(bad, 0);
    free(ref);
    tosac_program_destroy(p);
    tosac_graph_destroy(g);
}

/*
 * A residual network of ADD / SUB / MUL with fan-out (values read several ops later) and
 * in-place reuse: y_k = y_{k-1} + y_{k-3} (or - or *), computed here in int64 and compared.
 */
static void test_plan_residual_adds(void)
{
    gb x = gb_new();
    enum { N = 24 };
    int64_t dims[2][2] = {{4, 8}, {4, 8}};
    tosac_value *v[N];
    v[0] = input(&x, "x0", TOSAC_DTYPE_INT32, 2, dims[0]);
    v[1] = input(&x, "x1", TOSAC_DTYPE_INT32, 2, dims[0]);
    static const uint8_t shift0[1] = {0};
    static const int64_t one[1] = {1};
    tosac_value *sh = chk(&x, tosac_block_add_const(x.b, "shift", TOSAC_DTYPE_INT8, 1, one, shift0, 1));
    v[2] = tensor(&x, "v2", TOSAC_DTYPE_INT32, 2, dims[0]);
    op2(&x, TOSAC_OP_SUB, v[0], v[1], v[2]);
    for (int k = 3; k < N; k++) {
        char name[16];
        snprintf(name, sizeof name, "v%d", k);
        v[k] = tensor(&x, name, TOSAC_DTYPE_INT32, 2, dims[1]);
        if (k == 4) {
            tosac_value *in[3] = {v[k - 1], v[k - 3], sh};
            node(&x, TOSAC_OP_MUL, 3, in, 1, &v[k]);
        } else if (k % 5 == 0) {
            tosac_node *m = op2(&x, TOSAC_OP_MAXIMUM, v[k - 1], v[k - 3], v[k]);
            if (!m || tosac_node_set_int(m, TOSAC_ATTR_MAXIMUM_nan_mode, TOSAC_NAN_PROPAGATE)) x.fail = true;
        } else {
            op2(&x, k % 2 ? TOSAC_OP_ADD : TOSAC_OP_SUB, v[k - 1], v[k - 3], v[k]);
        }
    }
    output(&x, v[N - 1]);
    output(&x, v[N - 4]);
    EXPECT(!x.fail);
    tosac_program *p = create(x.g, NULL);
    EXPECT(p != NULL);
    if (p) {
        size_t arena = tosac_program_arena_size(p), lb = tosac_program_arena_lower_bound(p);
        printf("residual int32 chain: arena %zu bytes, lower bound %zu bytes\n", arena, lb);
        EXPECT((double)arena <= 1.1 * (double)lb);
        EXPECT(check_plan(p));
        int32_t a[32], b[32];
        for (int i = 0; i < 32; i++) {
            a[i] = i % 7 - 3;
            b[i] = (i * 5) % 11 - 5;
        }
        set_input_i32(p, 0, a, 32);
        set_input_i32(p, 1, b, 32);
        EXPECT_EQ_I(invoke(p), TOSAC_OK);
        const int32_t *y = tosac_program_output_ptr(p, 0), *y2 = tosac_program_output_ptr(p, 1);
        for (int i = 0; y && y2 && i < 32; i++) {
            int64_t r[N];
            r[0] = a[i];
            r[1] = b[i];
            r[2] = r[0] - r[1];
            for (int k = 3; k < N; k++) {
                r[k] = k == 4            ? r[k - 1] * r[k - 3]
                       : k % 5 == 0      ? (r[k - 1] > r[k - 3] ? r[k - 1] : r[k - 3])
                       : k % 2           ? r[k - 1] + r[k - 3]
                                         : r[k - 1] - r[k - 3]; /* |r| stays far below 2^31 */
            }
            EXPECT_EQ_I(y[i], r[N - 1]);
            EXPECT_EQ_I(y2[i], r[N - 4]);
        }
        tosac_program_destroy(p);
    }
    tosac_graph_destroy(x.g);
}

/*
 * A graph with more buffers than the greedy placement handles (20000 operators, fp32 CLAMP and SUB with
 * skip connections and broadcasting over [1,4] / [3,4]): the first-fit placement in execution
 * order must be valid and the results right.
 */
static void test_plan_large_graph(void)
{
    enum { N = 20000 };
    gb x = gb_new();
    static const int64_t shapes[2][2] = {{1, 4}, {3, 4}};
    tosac_value **v = malloc(sizeof(tosac_value *) * N);
    int *rows = malloc(sizeof(int) * N);
    rows[0] = 3;
    rows[1] = 1;
    rows[2] = 3;
    for (int k = 0; k < 3; k++) {
        char in_name[8];
        snprintf(in_name, sizeof in_name, "x%d", k);
        v[k] = input(&x, in_name, TOSAC_DTYPE_FP32, 2, shapes[rows[k] == 3]);
    }
    char name[16];
    for (int k = 3; k < N && !x.fail; k++) {
        snprintf(name, sizeof name, "v%d", k);
        rows[k] = k % 2 ? rows[k - 3] : (rows[k - 1] > rows[k - 2] ? rows[k - 1] : rows[k - 2]);
        v[k] = tensor(&x, name, TOSAC_DTYPE_FP32, 2, shapes[rows[k] == 3]);
        if (k % 2) {
            tosac_node *n = op1(&x, TOSAC_OP_CLAMP, v[k - 3], v[k]);
            float lo = -100.0f, hi = 100.0f;
            if (!n || tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_min_val, &lo, 4) ||
                tosac_node_set_bytes(n, TOSAC_ATTR_CLAMP_max_val, &hi, 4) ||
                tosac_node_set_int(n, TOSAC_ATTR_CLAMP_nan_mode, TOSAC_NAN_PROPAGATE))
                x.fail = true;
        } else {
            /* input 0 is read again by the next CLAMP: no in-place reuse, one buffer each */
            op2(&x, TOSAC_OP_SUB, v[k - 2], v[k - 1], v[k]);
        }
    }
    output(&x, v[N - 1]);
    output(&x, v[N - 2]);
    EXPECT(!x.fail);
    tosac_program *p = x.fail ? NULL : create(x.g, NULL);
    EXPECT(p != NULL);
    if (p) {
        printf("large graph (%u plan entries): arena %zu bytes, lower bound %zu bytes\n", tosac_program_plan_count(p),
               tosac_program_arena_size(p), tosac_program_arena_lower_bound(p));
        uint32_t max_buffer = 0;
        for (uint32_t i = 0; i < tosac_program_plan_count(p); i++) {
            tosac_plan_entry e;
            tosac_program_plan_entry(p, i, &e);
            if (e.buffer > max_buffer) max_buffer = e.buffer;
        }
        EXPECT(max_buffer >= 16384); /* buffer ids are dense: more than the greedy limit */
        EXPECT(check_plan(p));
        /* small integers: every fp32 result below is exact */
        float(*ref)[12] = malloc(sizeof(float[12]) * N);
        for (int k = 0; k < 3; k++) {
            for (int e = 0; e < rows[k] * 4; e++) ref[k][e] = (float)((k + 1) * 37 * (e - 5));
            float *slot = tosac_program_input_ptr(p, (uint32_t)k);
            if (slot) memcpy(slot, ref[k], sizeof(float) * (size_t)rows[k] * 4);
        }
        for (int k = 3; k < N; k++)
            for (int r = 0; r < rows[k]; r++)
                for (int c = 0; c < 4; c++) {
                    if (k % 2) {
                        float a = ref[k - 3][r * 4 + c];
                        ref[k][r * 4 + c] = a < -100.0f ? -100.0f : a > 100.0f ? 100.0f : a;
                    } else {
                        int ra = rows[k - 1] == 1 ? 0 : r, rb = rows[k - 2] == 1 ? 0 : r;
                        ref[k][r * 4 + c] = ref[k - 2][rb * 4 + c] - ref[k - 1][ra * 4 + c];
                    }
                }
        EXPECT_EQ_I(invoke(p), TOSAC_OK);
        for (uint32_t o = 0; o < 2; o++) {
            const float *y = tosac_program_output_ptr(p, o);
            int k = N - 1 - (int)o, bad = 0;
            for (int e = 0; y && e < rows[k] * 4; e++) bad += y[e] != ref[k][e];
            EXPECT_EQ_I(bad, 0);
        }
        free(ref);
        tosac_program_destroy(p);
    }
    free(rows);
    free(v);
    tosac_graph_destroy(x.g);
}

/* ------------------------------------------------------------------------------------------ */
/* Control flow                                                                                  */

/*
 * y = cond ? x + x : x - k, where k is a constant of the main block that the else branch reads
 * without declaring it (implicit capture, as the reference serializer writes it).
 */
static tosac_graph *cond_graph(void)
{
    gb x = gb_new();
    static const int64_t one[1] = {1};
    tosac_value *c = input(&x, "cond", TOSAC_DTYPE_BOOL, 1, one);
    tosac_value *in = input(&x, "x", TOSAC_DTYPE_INT32, 2, k23);
    static const int32_t kv[6] = {10, 20, 30, 40, 50, 60};
    const_i32(&x, "k", 2, k23, kv);
    tosac_value *y = tensor(&x, "y", TOSAC_DTYPE_INT32, 2, k23);
    tosac_value *ins[2] = {c, in};
    tosac_node *n = node(&x, TOSAC_OP_COND_IF, 2, ins, 1, &y);
    set_str(&x, n, TOSAC_ATTR_COND_IF_then_graph, "then_region");
    set_str(&x, n, TOSAC_ATTR_COND_IF_else_graph, "else_region");
    output(&x, y);
    gb_sub(&x, "then_region", "then_bb");
    tosac_value *a = input(&x, "a", TOSAC_DTYPE_INT32, 2, k23);
    tosac_value *r = tensor(&x, "r", TOSAC_DTYPE_INT32, 2, k23);
    op2(&x, TOSAC_OP_ADD, a, a, r);
    output(&x, r);
    gb_sub(&x, "else_region", "else_bb");
    a = input(&x, "a", TOSAC_DTYPE_INT32, 2, k23);
    tosac_value *k = chk(&x, tosac_block_get_or_placeholder(x.b, "k"));
    r = tensor(&x, "r", TOSAC_DTYPE_INT32, 2, k23);
    op2(&x, TOSAC_OP_SUB, a, k, r);
    output(&x, r);
    EXPECT(!x.fail);
    return x.g;
}

static void test_cond_if(void)
{
    tosac_graph *g = cond_graph();
    tosac_program *p = create(g, NULL);
    EXPECT(p != NULL);
    if (p) {
        EXPECT(check_plan(p));
        static const int32_t xv[6] = {1, 2, 3, -4, 5, 1000};
        for (int branch = 0; branch < 2; branch++) {
            uint8_t *c = tosac_program_input_ptr(p, 0);
            EXPECT(c != NULL);
            if (c) *c = (uint8_t)(branch == 0);
            set_input_i32(p, 1, xv, 6);
            EXPECT_EQ_I(invoke(p), TOSAC_OK);
            const int32_t *y = tosac_program_output_ptr(p, 0);
            for (int i = 0; y && i < 6; i++) EXPECT_EQ_I(y[i], branch == 0 ? 2 * xv[i] : xv[i] - 10 * (i + 1));
        }
        EXPECT_EQ_I(tosac_program_op_count(p), 4); /* main: CONST k, COND_IF; then: ADD; else: SUB */
        tosac_program_destroy(p);
    }
    tosac_graph_destroy(g);
}

/*
 * WHILE_LOOP with state (i, acc, a, b): while (i < n) { i += 1; acc += x; (a, b) = (b, a) }.
 * x is a main-block input read by the body without being loop-carried (implicit capture); the
 * swap exercises results that are loop inputs of another position.
 */
static tosac_graph *loop_graph(int32_t n)
{
    gb x = gb_new();
    static const int64_t one[1] = {1};
    input(&x, "x", TOSAC_DTYPE_INT32, 2, k23);
    tosac_value *a0 = input(&x, "a0", TOSAC_DTYPE_INT32, 1, one);
    tosac_value *b0 = input(&x, "b0", TOSAC_DTYPE_INT32, 1, one);
    static const int32_t zeros[6] = {0};
    tosac_value *i0 = const_scalar_i32(&x, "i0", 0);
    tosac_value *acc0 = const_i32(&x, "acc0", 2, k23, zeros);
    const_scalar_i32(&x, "n", n);
    tosac_value *ins[4] = {i0, acc0, a0, b0};
    tosac_value *outs[4] = {tensor(&x, "i_out", TOSAC_DTYPE_INT32, 1, one), tensor(&x, "acc", TOSAC_DTYPE_INT32, 2, k23),
                            tensor(&x, "a", TOSAC_DTYPE_INT32, 1, one), tensor(&x, "b", TOSAC_DTYPE_INT32, 1, one)};
    tosac_node *w = node(&x, TOSAC_OP_WHILE_LOOP, 4, ins, 4, outs);
    set_str(&x, w, TOSAC_ATTR_WHILE_LOOP_cond_graph, "cond_region");
    set_str(&x, w, TOSAC_ATTR_WHILE_LOOP_body_graph, "body_region");
    for (int k = 0; k < 4; k++) output(&x, outs[k]);

    gb_sub(&x, "cond_region", "cond_bb");
    tosac_value *ci = input(&x, "i", TOSAC_DTYPE_INT32, 1, one);
    input(&x, "acc", TOSAC_DTYPE_INT32, 2, k23);
    input(&x, "a", TOSAC_DTYPE_INT32, 1, one);
    input(&x, "b", TOSAC_DTYPE_INT32, 1, one);
    tosac_value *go = tensor(&x, "go", TOSAC_DTYPE_BOOL, 1, one);
    op2(&x, TOSAC_OP_GREATER, chk(&x, tosac_block_get_or_placeholder(x.b, "n")), ci, go);
    output(&x, go);

    gb_sub(&x, "body_region", "body_bb");
    tosac_value *bi = input(&x, "i", TOSAC_DTYPE_INT32, 1, one);
    tosac_value *bacc = input(&x, "acc", TOSAC_DTYPE_INT32, 2, k23);
    tosac_value *ba = input(&x, "a", TOSAC_DTYPE_INT32, 1, one);
    tosac_value *bb = input(&x, "b", TOSAC_DTYPE_INT32, 1, one);
    tosac_value *i1 = tensor(&x, "i_next", TOSAC_DTYPE_INT32, 1, one);
    op2(&x, TOSAC_OP_ADD, bi, const_scalar_i32(&x, "inc", 1), i1);
    tosac_value *acc1 = tensor(&x, "acc_next", TOSAC_DTYPE_INT32, 2, k23);
    op2(&x, TOSAC_OP_ADD, bacc, chk(&x, tosac_block_get_or_placeholder(x.b, "x")), acc1);
    output(&x, i1);
    output(&x, acc1);
    output(&x, bb);
    output(&x, ba);
    EXPECT(!x.fail);
    return x.g;
}

static void test_while_loop(void)
{
    for (int32_t n = 0; n <= 5; n++) {
        tosac_graph *g = loop_graph(n);
        tosac_program *p = create(g, NULL);
        EXPECT(p != NULL);
        if (p) {
            EXPECT(check_plan(p));
            static const int32_t xv[6] = {1, -2, 3, 7, 100, -1000};
            int32_t a = 11, b = 22;
            for (int rep = 0; rep < 2; rep++) {
                set_input_i32(p, 0, xv, 6);
                set_input_i32(p, 1, &a, 1);
                set_input_i32(p, 2, &b, 1);
                EXPECT_EQ_I(invoke(p), TOSAC_OK);
                const int32_t *i_out = tosac_program_output_ptr(p, 0), *acc = tosac_program_output_ptr(p, 1);
                const int32_t *ao = tosac_program_output_ptr(p, 2), *bo = tosac_program_output_ptr(p, 3);
                if (!i_out || !acc || !ao || !bo) continue;
                EXPECT_EQ_I(*i_out, n);
                for (int i = 0; i < 6; i++) EXPECT_EQ_I(acc[i], n * xv[i]);
                EXPECT_EQ_I(*ao, n % 2 ? b : a);
                EXPECT_EQ_I(*bo, n % 2 ? a : b);
            }
            tosac_program_destroy(p);
        }
        tosac_graph_destroy(g);
    }
    /* max_iterations */
    tosac_graph *g = loop_graph(10);
    tosac_program_opts o = tosac_program_opts_default();
    o.max_iterations = 4;
    tosac_program *p = create(g, &o);
    EXPECT(p != NULL);
    static const int32_t zeros[6] = {0};
    if (p) {
        for (uint32_t i = 0; i < 3; i++) set_input_i32(p, i, zeros, i ? 1 : 6);
        tosac_diag_clear(g_diag);
        EXPECT_EQ_I(tosac_program_invoke(p, g_diag), TOSAC_ERR_UNPREDICTABLE);
        EXPECT(diag_has("WHILE_LOOP") && diag_has("max_iterations"));
        tosac_program_destroy(p);
    }
    o.max_iterations = 10;
    p = create(g, &o);
    if (p) {
        for (uint32_t i = 0; i < 3; i++) set_input_i32(p, i, zeros, i ? 1 : 6);
        EXPECT_EQ_I(invoke(p), TOSAC_OK);
        tosac_program_destroy(p);
    }
    tosac_graph_destroy(g);
}

/* A COND_IF inside a WHILE_LOOP body: while (i < 6) { i += 1; s = (i > 3) ? s + i : s - i }. */
static void test_nested_control_flow(void)
{
    gb x = gb_new();
    static const int64_t one[1] = {1};
    tosac_value *s0 = input(&x, "s0", TOSAC_DTYPE_INT32, 1, one);
    tosac_value *ins[2] = {const_scalar_i32(&x, "i0", 0), s0};
    tosac_value *outs[2] = {tensor(&x, "i_out", TOSAC_DTYPE_INT32, 1, one), tensor(&x, "s", TOSAC_DTYPE_INT32, 1, one)};
    tosac_node *w = node(&x, TOSAC_OP_WHILE_LOOP, 2, ins, 2, outs);
    set_str(&x, w, TOSAC_ATTR_WHILE_LOOP_cond_graph, "cond");
    set_str(&x, w, TOSAC_ATTR_WHILE_LOOP_body_graph, "body");
    output(&x, outs[1]);
    gb_sub(&x, "cond", "cond_bb");
    tosac_value *ci = input(&x, "i", TOSAC_DTYPE_INT32, 1, one);
    input(&x, "s", TOSAC_DTYPE_INT32, 1, one);
    tosac_value *go = tensor(&x, "go", TOSAC_DTYPE_BOOL, 1, one);
    op2(&x, TOSAC_OP_GREATER, const_scalar_i32(&x, "six", 6), ci, go);
    output(&x, go);
    gb_sub(&x, "body", "body_bb");
    tosac_value *bi = input(&x, "i", TOSAC_DTYPE_INT32, 1, one);
    tosac_value *bs = input(&x, "s", TOSAC_DTYPE_INT32, 1, one);
    tosac_value *i1 = tensor(&x, "i1", TOSAC_DTYPE_INT32, 1, one);
    op2(&x, TOSAC_OP_ADD, bi, const_scalar_i32(&x, "inc", 1), i1);
    tosac_value *big = tensor(&x, "big", TOSAC_DTYPE_BOOL, 1, one);
    op2(&x, TOSAC_OP_GREATER, i1, const_scalar_i32(&x, "three", 3), big);
    tosac_value *s1 = tensor(&x, "s1", TOSAC_DTYPE_INT32, 1, one);
    tosac_value *cin[3] = {big, bs, i1};
    tosac_node *c = node(&x, TOSAC_OP_COND_IF, 3, cin, 1, &s1);
    set_str(&x, c, TOSAC_ATTR_COND_IF_then_graph, "plus");
    set_str(&x, c, TOSAC_ATTR_COND_IF_else_graph, "minus");
    output(&x, i1);
    output(&x, s1);
    for (int k = 0; k < 2; k++) {
        gb_sub(&x, k ? "minus" : "plus", k ? "minus_bb" : "plus_bb");
        tosac_value *p_s = input(&x, "s", TOSAC_DTYPE_INT32, 1, one);
        tosac_value *p_i = input(&x, "i", TOSAC_DTYPE_INT32, 1, one);
        tosac_value *r = tensor(&x, "r", TOSAC_DTYPE_INT32, 1, one);
        op2(&x, k ? TOSAC_OP_SUB : TOSAC_OP_ADD, p_s, p_i, r);
        output(&x, r);
    }
    EXPECT(!x.fail);
    tosac_program *p = create(x.g, NULL);
    EXPECT(p != NULL);
    if (p) {
        EXPECT(check_plan(p));
        int32_t s0v = 100;
        set_input_i32(p, 0, &s0v, 1);
        EXPECT_EQ_I(invoke(p), TOSAC_OK);
        int32_t want = 100;
        for (int i = 1; i <= 6; i++) want += i > 3 ? i : -i;
        const int32_t *s = tosac_program_output_ptr(p, 0);
        EXPECT(s && *s == want);
        /* the ADD of the "plus" branch is an operator instance at depth 2 */
        bool deep = false;
        for (uint32_t k = 0; k < tosac_program_op_count(p); k++) {
            tosac_op_desc od;
            EXPECT_EQ_I(tosac_program_op_info(p, k, &od), TOSAC_OK);
            if (od.depth == 2 && !strcmp(od.block, "plus_bb") && od.op == TOSAC_OP_ADD) deep = true;
        }
        EXPECT(deep);
        tosac_program_destroy(p);
    }
    tosac_graph_destroy(x.g);
}

/*
 * Branch results that are not produced by an operator of the branch into plain storage: the then
 * branch returns a constant next to a computed value, the else branch returns its input twice.
 */
static void test_cond_if_passthrough(void)
{
    gb x = gb_new();
    static const int64_t one[1] = {1};
    tosac_value *c = input(&x, "cond", TOSAC_DTYPE_BOOL, 1, one);
    tosac_value *in = input(&x, "x", TOSAC_DTYPE_INT32, 2, k23);
    static const int32_t kv[6] = {10, 20, 30, 40, 50, 60};
    tosac_value *y = tensor(&x, "y", TOSAC_DTYPE_INT32, 2, k23), *z = tensor(&x, "z", TOSAC_DTYPE_INT32, 2, k23);
    tosac_value *ins[2] = {c, in}, *outs[2] = {y, z};
    tosac_node *n = node(&x, TOSAC_OP_COND_IF, 2, ins, 2, outs);
    set_str(&x, n, TOSAC_ATTR_COND_IF_then_graph, "then_region");
    set_str(&x, n, TOSAC_ATTR_COND_IF_else_graph, "else_region");
    tosac_value *w = tensor(&x, "w", TOSAC_DTYPE_INT32, 2, k23);
    op2(&x, TOSAC_OP_SUB, y, z, w);
    output(&x, w);
    output(&x, z);
    gb_sub(&x, "then_region", "then_bb");
    tosac_value *a = input(&x, "a", TOSAC_DTYPE_INT32, 2, k23);
    tosac_value *r = tensor(&x, "r", TOSAC_DTYPE_INT32, 2, k23);
    op2(&x, TOSAC_OP_ADD, a, a, r);
    output(&x, r);
    output(&x, const_i32(&x, "k", 2, k23, kv));
    gb_sub(&x, "else_region", "else_bb");
    a = input(&x, "a", TOSAC_DTYPE_INT32, 2, k23);
    output(&x, a);
    output(&x, a);
    EXPECT(!x.fail);
    tosac_program *p = create(x.g, NULL);
    EXPECT(p != NULL);
    if (p) {
        EXPECT(check_plan(p));
        static const int32_t xv[6] = {1, 2, 3, -4, 5, 1000};
        for (int branch = 0; branch < 2; branch++) {
            uint8_t *cp = tosac_program_input_ptr(p, 0);
            if (cp) *cp = (uint8_t)(branch == 0);
            set_input_i32(p, 1, xv, 6);
            EXPECT_EQ_I(invoke(p), TOSAC_OK);
            const int32_t *wv = tosac_program_output_ptr(p, 0), *zv = tosac_program_output_ptr(p, 1);
            for (int i = 0; wv && zv && i < 6; i++) {
                EXPECT_EQ_I(zv[i], branch == 0 ? kv[i] : xv[i]);
                EXPECT_EQ_I(wv[i], branch == 0 ? 2 * xv[i] - kv[i] : 0);
            }
        }
        tosac_program_destroy(p);
    }
    tosac_graph_destroy(x.g);
}

/*
 * Graph outputs that are not produced into their own storage: a graph input passed through, a
 * constant, and the same value listed twice; with and without bound buffers and external I/O.
 */
static void test_passthrough_outputs(void)
{
    gb x = gb_new();
    tosac_value *a = input(&x, "a", TOSAC_DTYPE_INT32, 2, k23);
    static const int32_t kv[6] = {7, 8, 9, 10, 11, 12};
    tosac_value *k = const_i32(&x, "k", 2, k23, kv);
    tosac_value *s = tensor(&x, "s", TOSAC_DTYPE_INT32, 2, k23);
    op2(&x, TOSAC_OP_ADD, a, k, s);
    output(&x, s);
    output(&x, a);
    output(&x, k);
    output(&x, s);
    EXPECT(!x.fail);
    static const int32_t av[6] = {1, 2, 3, 4, 5, 6};
    for (int ext = 0; ext < 2; ext++) {
        tosac_program_opts o = tosac_program_opts_default();
        o.external_io = ext != 0;
        tosac_program *p = create(x.g, &o);
        EXPECT(p != NULL);
        if (!p) continue;
        EXPECT(check_plan(p));
        int32_t out[4][6];
        memset(out, 0, sizeof out);
        for (int bound = ext; bound < 2; bound++) {
            if (bound) {
                EXPECT_EQ_I(tosac_program_bind_input(p, 0, av), TOSAC_OK);
                for (uint32_t i = 0; i < 4; i++) EXPECT_EQ_I(tosac_program_bind_output(p, i, out[i]), TOSAC_OK);
            } else {
                set_input_i32(p, 0, av, 6);
            }
            EXPECT_EQ_I(invoke(p), TOSAC_OK);
            for (uint32_t i = 0; i < 4; i++) {
                const int32_t *y = tosac_program_output_ptr(p, i);
                EXPECT(y != NULL);
                if (bound) EXPECT(y == out[i]);
                for (int e = 0; y && e < 6; e++) EXPECT_EQ_I(y[e], i == 1 ? av[e] : i == 2 ? kv[e] : av[e] + kv[e]);
            }
        }
        tosac_program_destroy(p);
    }
    tosac_graph_destroy(x.g);
}

/* A WHILE_LOOP result that is a variable: the loop state then needs storage of its own. */
static void test_while_into_variable(void)
{
    gb x = gb_new();
    static const int64_t one[1] = {1};
    tosac_value *acc = tensor(&x, "acc", TOSAC_DTYPE_INT32, 1, one);
    acc->variable = true;
    tosac_value *ins[2] = {const_scalar_i32(&x, "i0", 0), const_scalar_i32(&x, "a0", 5)};
    tosac_value *outs[2] = {tensor(&x, "i_out", TOSAC_DTYPE_INT32, 1, one), acc};
    tosac_node *w = node(&x, TOSAC_OP_WHILE_LOOP, 2, ins, 2, outs);
    set_str(&x, w, TOSAC_ATTR_WHILE_LOOP_cond_graph, "cond");
    set_str(&x, w, TOSAC_ATTR_WHILE_LOOP_body_graph, "body");
    tosac_value *y = tensor(&x, "y", TOSAC_DTYPE_INT32, 1, one);
    op2(&x, TOSAC_OP_ADD, acc, outs[0], y);
    output(&x, y);
    gb_sub(&x, "cond", "cond_bb");
    tosac_value *ci = input(&x, "i", TOSAC_DTYPE_INT32, 1, one);
    input(&x, "a", TOSAC_DTYPE_INT32, 1, one);
    tosac_value *go = tensor(&x, "go", TOSAC_DTYPE_BOOL, 1, one);
    op2(&x, TOSAC_OP_GREATER, const_scalar_i32(&x, "four", 4), ci, go);
    output(&x, go);
    gb_sub(&x, "body", "body_bb");
    tosac_value *bi = input(&x, "i", TOSAC_DTYPE_INT32, 1, one), *ba = input(&x, "a", TOSAC_DTYPE_INT32, 1, one);
    tosac_value *i1 = tensor(&x, "i1", TOSAC_DTYPE_INT32, 1, one), *a1 = tensor(&x, "a1", TOSAC_DTYPE_INT32, 1, one);
    op2(&x, TOSAC_OP_ADD, bi, const_scalar_i32(&x, "inc", 1), i1);
    op2(&x, TOSAC_OP_ADD, ba, ba, a1);
    output(&x, i1);
    output(&x, a1);
    EXPECT(!x.fail);
    tosac_program *p = create(x.g, NULL);
    EXPECT(p != NULL);
    if (p) {
        EXPECT(check_plan(p));
        EXPECT_EQ_I(invoke(p), TOSAC_OK);
        const int32_t *yv = tosac_program_output_ptr(p, 0), *v = tosac_program_variable_ptr(p, 0);
        EXPECT(yv && *yv == 5 * 16 + 4);
        EXPECT(v && *v == 5 * 16);
        tosac_program_destroy(p);
    }
    tosac_graph_destroy(x.g);
}

/*
 * One block run by several operators gets one instance per operator. Here block "twice" (a + k,
 * k captured from main) is the then branch of the first COND_IF of main and both branches of
 * the second (three instances). A block whose captured name
 * would mean a different value at a second call site (the validator checks the first) is
 * refused.
 */
static void test_shared_sub_block(void)
{
    for (int shadow = 0; shadow < 2; shadow++) {
        gb x = gb_new();
        static const int64_t one[1] = {1};
        tosac_value *c = input(&x, "cond", TOSAC_DTYPE_BOOL, 1, one);
        tosac_value *in = input(&x, "x", TOSAC_DTYPE_INT32, 2, k23);
        static const int32_t kv[6] = {1, 2, 3, 4, 5, 6};
        const_i32(&x, "k", 2, k23, kv);
        tosac_value *y1 = tensor(&x, "y1", TOSAC_DTYPE_INT32, 2, k23), *y2 = tensor(&x, "y2", TOSAC_DTYPE_INT32, 2, k23);
        tosac_value *ins1[2] = {c, in};
        tosac_node *n1 = node(&x, TOSAC_OP_COND_IF, 2, ins1, 1, &y1);
        set_str(&x, n1, TOSAC_ATTR_COND_IF_then_graph, "twice");
        set_str(&x, n1, TOSAC_ATTR_COND_IF_else_graph, "other");
        tosac_value *ins2[2] = {c, y1};
        tosac_node *n2 = node(&x, TOSAC_OP_COND_IF, 2, ins2, 1, &y2);
        set_str(&x, n2, TOSAC_ATTR_COND_IF_then_graph, "twice");
        set_str(&x, n2, TOSAC_ATTR_COND_IF_else_graph, "twice");
        output(&x, y2);
        gb_sub(&x, "twice", "twice_bb");
        tosac_value *a = input(&x, "a", TOSAC_DTYPE_INT32, 2, k23);
        tosac_value *r = tensor(&x, "r", TOSAC_DTYPE_INT32, 2, k23);
        op2(&x, TOSAC_OP_ADD, a, chk(&x, tosac_block_get_or_placeholder(x.b, "k")), r);
        output(&x, r);
        gb_sub(&x, "other", "other_bb");
        a = input(&x, "a", TOSAC_DTYPE_INT32, 2, k23);
        if (shadow) {
            /* "other" declares its own k and runs "twice" too: there k would be this one */
            static const int32_t kz[1] = {100};
            const_i32(&x, "k", 1, one, kz);
            r = tensor(&x, "r", TOSAC_DTYPE_INT32, 2, k23);
            tosac_value *ci[2] = {chk(&x, tosac_block_get_or_placeholder(x.b, "cond")), a};
            tosac_node *n3 = node(&x, TOSAC_OP_COND_IF, 2, ci, 1, &r);
            set_str(&x, n3, TOSAC_ATTR_COND_IF_then_graph, "twice");
            set_str(&x, n3, TOSAC_ATTR_COND_IF_else_graph, "twice");
            output(&x, r);
        } else {
            output(&x, a);
        }
        EXPECT(!x.fail);
        tosac_program *p = NULL;
        tosac_diag_clear(g_diag);
        tosac_status st = tosac_program_create(x.g, NULL, &p, g_diag);
        if (shadow) {
            EXPECT_EQ_I(st, TOSAC_ERR_UNSUPPORTED);
            EXPECT(diag_has("different values"));
        } else {
            EXPECT_EQ_I(st, TOSAC_OK);
        }
        if (p) {
            EXPECT(check_plan(p));
            static const int32_t xv[6] = {10, 20, 30, 40, 50, 60};
            for (int cv = 0; cv < 2; cv++) {
                uint8_t *cp = tosac_program_input_ptr(p, 0);
                if (cp) *cp = (uint8_t)cv;
                set_input_i32(p, 1, xv, 6);
                EXPECT_EQ_I(invoke(p), TOSAC_OK);
                const int32_t *yv = tosac_program_output_ptr(p, 0);
                for (int i = 0; yv && i < 6; i++) EXPECT_EQ_I(yv[i], xv[i] + (cv ? 2 : 1) * kv[i]);
            }
            tosac_program_destroy(p);
        }
        tosac_graph_destroy(x.g);
    }
}

/*
 * The older convention: then/else name blocks of the current region. The body of a loop also
 * counts into a variable it declares itself under the name of the main block's variable (one
 * variable), and max_ops bounds the expansion.
 */
static void test_block_convention_and_limits(void)
{
    gb x = gb_new();
    tosac_region *main_region = x.g->regions[0];
    static const int64_t one[1] = {1};
    tosac_value *c = input(&x, "cond", TOSAC_DTYPE_BOOL, 1, one);
    tosac_value *in = input(&x, "x", TOSAC_DTYPE_INT32, 1, one);
    tosac_value *y = tensor(&x, "y", TOSAC_DTYPE_INT32, 1, one);
    tosac_value *ins[2] = {c, in};
    tosac_node *n = node(&x, TOSAC_OP_COND_IF, 2, ins, 1, &y);
    set_str(&x, n, TOSAC_ATTR_COND_IF_then_graph, "then_bb");
    set_str(&x, n, TOSAC_ATTR_COND_IF_else_graph, "else_bb");
    tosac_value *ctr = tensor(&x, "counter", TOSAC_DTYPE_INT8, 1, one);
    if (ctr) {
        ctr->variable = true;
        ctr->variable_name = "calls";
    }
    tosac_value *seen = tensor(&x, "seen", TOSAC_DTYPE_INT8, 1, one);
    op1(&x, TOSAC_OP_VARIABLE_READ, ctr, seen);
    output(&x, y);
    output(&x, seen);
    for (int k = 0; k < 2; k++) {
        x.b = tosac_region_add_block(main_region, k ? "else_bb" : "then_bb");
        if (!x.b) x.fail = true;
        tosac_value *a = input(&x, "a", TOSAC_DTYPE_INT32, 1, one);
        tosac_value *r = tensor(&x, "r", TOSAC_DTYPE_INT32, 1, one);
        op2(&x, k ? TOSAC_OP_SUB : TOSAC_OP_ADD, a, const_scalar_i32(&x, "five", 5), r);
        output(&x, r);
        if (k == 0) {
            /* the then branch stores 7 into the variable "calls" through its own tensor */
            tosac_value *v = tensor(&x, "calls_here", TOSAC_DTYPE_INT8, 1, one);
            if (v) {
                v->variable = true;
                v->variable_name = "calls";
            }
            static const uint8_t seven = 7;
            tosac_value *sv = chk(&x, tosac_block_add_const(x.b, "seven", TOSAC_DTYPE_INT8, 1, one, &seven, 1));
            op1(&x, TOSAC_OP_VARIABLE_WRITE, sv, v);
        }
    }
    EXPECT(!x.fail);
    tosac_program *p = create(x.g, NULL);
    EXPECT(p != NULL);
    if (p) {
        EXPECT_EQ_I(tosac_program_variable_count(p), 1);
        EXPECT_EQ_I(tosac_program_variable_index(p, "calls_here"), 0);
        for (int rep = 0; rep < 3; rep++) {
            int cv = rep == 1;
            uint8_t *cp = tosac_program_input_ptr(p, 0);
            if (cp) *cp = (uint8_t)cv;
            int32_t xv = 100 + rep;
            set_input_i32(p, 1, &xv, 1);
            EXPECT_EQ_I(invoke(p), TOSAC_OK);
            const int32_t *yv = tosac_program_output_ptr(p, 0);
            const int8_t *sv = tosac_program_output_ptr(p, 1);
            EXPECT(yv && *yv == (cv ? xv + 5 : xv - 5));
            EXPECT(sv && *sv == (rep == 0 ? 0 : 7)); /* written by the then branch, kept after */
        }
        tosac_program_destroy(p);
    }
    tosac_program_opts o = tosac_program_opts_default();
    o.max_ops = 7; /* main has 2 operators, the then branch 4, the else branch 2 */
    tosac_program *bad = NULL;
    tosac_diag_clear(g_diag);
    EXPECT_EQ_I(tosac_program_create(x.g, &o, &bad, g_diag), TOSAC_ERR_UNSUPPORTED);
    EXPECT(bad == NULL && diag_has("max_ops"));
    o.max_ops = 8;
    tosac_diag_clear(g_diag);
    EXPECT_EQ_I(tosac_program_create(x.g, &o, &bad, g_diag), TOSAC_OK);
    tosac_program_destroy(bad);
    o.max_ops = 0;
    o.max_memory = 64; /* far too small */
    bad = NULL;
    EXPECT_EQ_I(tosac_program_create(x.g, &o, &bad, g_diag), TOSAC_ERR_NOMEM);
    EXPECT(bad == NULL);
    tosac_graph_destroy(x.g);
}

/* ------------------------------------------------------------------------------------------ */
/* Variables                                                                                     */

static tosac_value *variable(gb *x, tosac_dtype t, const char *name, const char *var_name, const int32_t *init)
{
    tosac_value *v = tensor(x, name, t, 2, k23);
    if (!v) return NULL;
    v->variable = true;
    v->variable_name = var_name;
    if (init) {
        uint8_t bytes[6];
        for (int i = 0; i < 6; i++) bytes[i] = (uint8_t)init[i];
        v->data = tosac_arena_memdup(&x->g->arena, bytes, 6);
        v->data_len = 6;
    }
    return v;
}

/* old = VARIABLE_READ(state); VARIABLE_WRITE(x -> state); outputs old. */
static void test_variables(void)
{
    gb x = gb_new();
    static const int32_t init[6] = {1, 2, 3, 4, 5, 6};
    tosac_value *state = variable(&x, TOSAC_DTYPE_INT8, "state", "model/state", init);
    tosac_value *in = input(&x, "x", TOSAC_DTYPE_INT8, 2, k23);
    tosac_value *old = tensor(&x, "old", TOSAC_DTYPE_INT8, 2, k23);
    node(&x, TOSAC_OP_VARIABLE, 0, NULL, 1, &state);
    op1(&x, TOSAC_OP_VARIABLE_READ, state, old);
    op1(&x, TOSAC_OP_VARIABLE_WRITE, in, state);
    output(&x, old);
    EXPECT(!x.fail);
    tosac_program *p = create(x.g, NULL);
    EXPECT(p != NULL);
    if (p) {
        EXPECT_EQ_I(tosac_program_variable_count(p), 1);
        EXPECT_EQ_I(tosac_program_variable_index(p, "model/state"), 0);
        EXPECT_EQ_I(tosac_program_variable_index(p, "state"), 0);
        EXPECT_EQ_I(tosac_program_variable_index(p, "nope"), -1);
        tosac_tensor_info vi;
        EXPECT(tosac_program_variable_info(p, 0, &vi) == TOSAC_OK && !strcmp(vi.name, "model/state") && vi.nelem == 6);
        int8_t *xin = tosac_program_input_ptr(p, 0);
        for (int i = 0; xin && i < 6; i++) xin[i] = (int8_t)(-10 * i);
        EXPECT_EQ_I(invoke(p), TOSAC_OK);
        const int8_t *o = tosac_program_output_ptr(p, 0);
        for (int i = 0; o && i < 6; i++) EXPECT_EQ_I(o[i], init[i]);
        for (int i = 0; xin && i < 6; i++) xin[i] = (int8_t)(7 * i);
        EXPECT_EQ_I(invoke(p), TOSAC_OK);
        for (int i = 0; o && i < 6; i++) EXPECT_EQ_I(o[i], -10 * i);
        /* accessors: the state now holds the second input */
        uint8_t enc[6];
        size_t n = 0;
        EXPECT_EQ_I(tosac_program_variable_get_tosa(p, 0, enc, sizeof enc, &n), TOSAC_OK);
        EXPECT_EQ_I(n, 6);
        for (int i = 0; i < 6; i++) EXPECT_EQ_I((int8_t)enc[i], 7 * i);
        static const uint8_t set[6] = {9, 8, 7, 6, 5, 4};
        EXPECT_EQ_I(tosac_program_variable_set_tosa(p, 0, set, 6, g_diag), TOSAC_OK);
        EXPECT_EQ_I(tosac_program_variable_set_tosa(p, 0, set, 5, g_diag), TOSAC_ERR_INVALID_ARG);
        EXPECT_EQ_I(invoke(p), TOSAC_OK);
        for (int i = 0; o && i < 6; i++) EXPECT_EQ_I(o[i], 9 - i);
        tosac_program_variables_reset(p);
        const int8_t *vp = tosac_program_variable_ptr(p, 0);
        for (int i = 0; vp && i < 6; i++) EXPECT_EQ_I(vp[i], init[i]);
        tosac_program_destroy(p);
    }
    tosac_graph_destroy(x.g);
}

/* The reference model's serialization: IDENTITY [var] -> [v] with the VariableRead tag and
   IDENTITY [new] -> [var] with the VariableWrite tag; the state accumulates the input. */
static void test_variables_identity_convention(void)
{
    gb x = gb_new();
    tosac_value *state = variable(&x, TOSAC_DTYPE_FP32, "acc_state", NULL, NULL); /* no data: zeros */
    tosac_value *in = input(&x, "x", TOSAC_DTYPE_FP32, 2, k23);
    tosac_value *cur = tensor(&x, "cur", TOSAC_DTYPE_FP32, 2, k23);
    tosac_node *r = op1(&x, TOSAC_OP_IDENTITY, state, cur);
    if (r) r->attr_type = TOSAC_OP_VARIABLE_READ;
    tosac_value *sum = tensor(&x, "sum", TOSAC_DTYPE_FP32, 2, k23);
    op2(&x, TOSAC_OP_ADD, cur, in, sum);
    tosac_node *w = op1(&x, TOSAC_OP_IDENTITY, sum, state);
    if (w) w->attr_type = TOSAC_OP_VARIABLE_WRITE;
    output(&x, sum);
    EXPECT(!x.fail);
    tosac_program *p = create(x.g, NULL);
    EXPECT(p != NULL);
    if (p) {
        float *xin = tosac_program_input_ptr(p, 0);
        for (int rep = 1; rep <= 3; rep++) {
            for (int i = 0; xin && i < 6; i++) xin[i] = (float)(i + 1);
            EXPECT_EQ_I(invoke(p), TOSAC_OK);
            const float *s = tosac_program_output_ptr(p, 0);
            for (int i = 0; s && i < 6; i++) EXPECT(s[i] == (float)(rep * (i + 1)));
        }
        EXPECT_EQ_I(tosac_program_variable_index(p, "acc_state"), 0);
        tosac_program_variables_reset(p);
        const float *vp = tosac_program_variable_ptr(p, 0);
        for (int i = 0; vp && i < 6; i++) EXPECT(vp[i] == 0.0f);
        tosac_program_destroy(p);
    }
    tosac_graph_destroy(x.g);
}

/* ------------------------------------------------------------------------------------------ */
/* Memory supplied by the caller                                                                 */

static tosac_graph *add_graph(tosac_dtype t)
{
    gb x = gb_new();
    tosac_value *a = input(&x, "a", t, 2, k23), *b = input(&x, "b", t, 2, k23);
    tosac_value *s = tensor(&x, "s", t, 2, k23), *y = tensor(&x, "y", t, 2, k23);
    op2(&x, TOSAC_OP_ADD, a, b, s);
    op2(&x, TOSAC_OP_ADD, s, a, y);
    output(&x, y);
    output(&x, s);
    EXPECT(!x.fail);
    return x.g;
}

static void test_caller_memory(void)
{
    tosac_graph *g = add_graph(TOSAC_DTYPE_INT32);
    tosac_program_opts o = tosac_program_opts_default();
    o.caller_arena = true;
    tosac_program *p = create(g, &o);
    EXPECT(p != NULL);
    if (p) {
        size_t need = tosac_program_arena_size(p);
        EXPECT(need > 0);
        tosac_diag_clear(g_diag);
        EXPECT_EQ_I(tosac_program_invoke(p, g_diag), TOSAC_ERR_INVALID_ARG); /* no arena yet */
        EXPECT(tosac_program_input_ptr(p, 0) == NULL);
        _Alignas(16) static uint8_t arena[4096];
        EXPECT(need <= sizeof arena);
        EXPECT_EQ_I(tosac_program_set_arena(p, arena + 8, sizeof arena - 8), TOSAC_ERR_INVALID_ARG);
        EXPECT_EQ_I(tosac_program_set_arena(p, arena, need - 16), TOSAC_ERR_INVALID_ARG);
        EXPECT_EQ_I(tosac_program_set_arena(p, arena, sizeof arena), TOSAC_OK);
        uint8_t *slot = tosac_program_input_ptr(p, 0);
        EXPECT(slot >= arena && slot < arena + need);
        static const int32_t av[6] = {1, 2, 3, 4, 5, 6}, bv[6] = {10, 20, 30, 40, 50, 60};
        set_input_i32(p, 0, av, 6);
        set_input_i32(p, 1, bv, 6);
        EXPECT_EQ_I(invoke(p), TOSAC_OK);
        const int32_t *y = tosac_program_output_ptr(p, 0);
        EXPECT((const uint8_t *)y >= arena && (const uint8_t *)y < arena + need);
        for (int i = 0; y && i < 6; i++) EXPECT_EQ_I(y[i], 2 * av[i] + bv[i]);
        /* bound input and output buffers */
        int32_t a2[6] = {-1, -2, -3, -4, -5, -6}, y2[6] = {0}, s2[6] = {0};
        EXPECT_EQ_I(tosac_program_bind_input(p, 0, a2), TOSAC_OK);
        EXPECT_EQ_I(tosac_program_bind_output(p, 0, y2), TOSAC_OK);
        EXPECT_EQ_I(tosac_program_bind_output(p, 1, s2), TOSAC_OK);
        set_input_i32(p, 1, bv, 6); /* input slots are reused during invoke: write them every time */
        EXPECT_EQ_I(invoke(p), TOSAC_OK);
        EXPECT(tosac_program_output_ptr(p, 0) == y2);
        for (int i = 0; i < 6; i++) {
            EXPECT_EQ_I(y2[i], 2 * a2[i] + bv[i]);
            EXPECT_EQ_I(s2[i], a2[i] + bv[i]);
        }
        /* set_input_tosa unbinds the input again */
        uint8_t enc[24];
        for (int i = 0; i < 6; i++)
            for (int k = 0; k < 4; k++) enc[i * 4 + k] = (uint8_t)((uint32_t)(100 + i) >> (8 * k));
        EXPECT_EQ_I(tosac_program_set_input_tosa(p, 0, enc, 24, g_diag), TOSAC_OK);
        EXPECT_EQ_I(tosac_program_set_input_tosa(p, 0, enc, 23, g_diag), TOSAC_ERR_INVALID_ARG);
        set_input_i32(p, 1, bv, 6);
        EXPECT_EQ_I(invoke(p), TOSAC_OK);
        for (int i = 0; i < 6; i++) EXPECT_EQ_I(y2[i], 2 * (100 + i) + bv[i]);
        uint8_t out[24];
        size_t n = 0;
        EXPECT_EQ_I(tosac_program_get_output_tosa(p, 1, out, sizeof out, &n), TOSAC_OK);
        EXPECT_EQ_I(n, 24);
        EXPECT_EQ_I(out[4], 101 + 20);
        tosac_program_destroy(p);
    }
    /* external I/O: no arena space for inputs and outputs, every one must be bound */
    tosac_program_opts oe = tosac_program_opts_default();
    oe.external_io = true;
    tosac_program *pe = create(g, &oe);
    tosac_program *pi = create(g, NULL);
    EXPECT(pe && pi);
    if (pe && pi) {
        printf("add graph: arena %zu bytes with I/O in the arena, %zu with external I/O\n",
               tosac_program_arena_size(pi), tosac_program_arena_size(pe));
        EXPECT(tosac_program_arena_size(pe) < tosac_program_arena_size(pi));
        EXPECT(tosac_program_input_ptr(pe, 0) == NULL);
        tosac_diag_clear(g_diag);
        EXPECT_EQ_I(tosac_program_invoke(pe, g_diag), TOSAC_ERR_INVALID_ARG);
        EXPECT(diag_has("not bound"));
        int32_t a[6] = {1, 1, 1, 1, 1, 1}, b[6] = {2, 3, 4, 5, 6, 7}, y[6], s[6];
        tosac_program_bind_input(pe, 0, a);
        tosac_program_bind_input(pe, 1, b);
        tosac_program_bind_output(pe, 0, y);
        tosac_program_bind_output(pe, 1, s);
        EXPECT_EQ_I(invoke(pe), TOSAC_OK);
        for (int i = 0; i < 6; i++) EXPECT(y[i] == 2 + b[i] && s[i] == 1 + b[i]);
    }
    tosac_program_destroy(pe);
    tosac_program_destroy(pi);
    tosac_graph_destroy(g);
}

/* Caller-supplied constants buffer, and constants borrowed from the graph. */
static void test_constants_buffer(void)
{
    gb x = gb_new();
    tosac_value *a = input(&x, "a", TOSAC_DTYPE_INT32, 2, k23);
    static const int32_t cv[6] = {5, -5, 7, -7, 9, -9};
    tosac_value *c = const_i32(&x, "c", 2, k23, cv);
    tosac_value *y = tensor(&x, "y", TOSAC_DTYPE_INT32, 2, k23);
    op2(&x, TOSAC_OP_SUB, a, c, y);
    output(&x, y);
    EXPECT(!x.fail);
    size_t need = 0;
    EXPECT_EQ_I(tosac_program_const_size(x.g, NULL, &need), TOSAC_OK);
    EXPECT_EQ_I(need, 32);
    _Alignas(16) static uint8_t cbuf[64];
    tosac_program_opts o = tosac_program_opts_default();
    o.const_buffer = cbuf;
    o.const_buffer_size = sizeof cbuf;
    tosac_program *p = create(x.g, &o);
    EXPECT(p != NULL);
    if (p) {
        EXPECT_EQ_I(((const int32_t *)cbuf)[3], -7);
        static const int32_t av[6] = {1, 2, 3, 4, 5, 6};
        set_input_i32(p, 0, av, 6);
        EXPECT_EQ_I(invoke(p), TOSAC_OK);
        const int32_t *yv = tosac_program_output_ptr(p, 0);
        for (int i = 0; yv && i < 6; i++) EXPECT_EQ_I(yv[i], av[i] - cv[i]);
        tosac_program_destroy(p);
    }
    o.const_buffer_size = 16;
    tosac_diag_clear(g_diag);
    tosac_program *bad = NULL;
    EXPECT_EQ_I(tosac_program_create(x.g, &o, &bad, g_diag), TOSAC_ERR_INVALID_ARG);
    EXPECT(bad == NULL);
    tosac_program_opts ob = tosac_program_opts_default();
    ob.borrow_constants = true;
    EXPECT_EQ_I(tosac_program_const_size(x.g, &ob, &need), TOSAC_OK);
    EXPECT_EQ_I(need, 0);
    p = create(x.g, &ob);
    if (p) {
        EXPECT_EQ_I(tosac_program_const_bytes(p), 0);
        static const int32_t av[6] = {0};
        set_input_i32(p, 0, av, 6);
        EXPECT_EQ_I(invoke(p), TOSAC_OK);
        const int32_t *yv = tosac_program_output_ptr(p, 0);
        for (int i = 0; yv && i < 6; i++) EXPECT_EQ_I(yv[i], -cv[i]);
        tosac_program_destroy(p);
    }
    tosac_graph_destroy(x.g);
}

/* ------------------------------------------------------------------------------------------ */
/* Precise mode, encodings                                                                       */

static void test_precise(void)
{
    gb x = gb_new();
    tosac_value *a = input(&x, "a", TOSAC_DTYPE_FP32, 2, k23);
    static const float cv[6] = {1e-10f, 3.0f, 0.1f, -0.5f, 1e-3f, 2.0f};
    tosac_value *c = const_f32(&x, "c", 2, k23, cv);
    tosac_value *y = tensor(&x, "y", TOSAC_DTYPE_FP32, 2, k23);
    op2(&x, TOSAC_OP_ADD, a, c, y);
    output(&x, y);
    EXPECT(!x.fail);
    static const float av[6] = {1.0f, 1.0f / 3.0f, 0.2f, 0.25f, 1e7f, -2.0f};
    tosac_program_opts o = tosac_program_opts_default();
    for (int precise = 0; precise < 2; precise++) {
        o.precise = precise != 0;
        tosac_program *p = create(x.g, &o);
        EXPECT(p != NULL);
        if (!p) continue;
        tosac_tensor_info ii, oi;
        EXPECT_EQ_I(tosac_program_input_info(p, 0, &ii), TOSAC_OK);
        EXPECT_EQ_I(tosac_program_output_info(p, 0, &oi), TOSAC_OK);
        EXPECT(ii.f64 == (precise != 0) && oi.f64 == (precise != 0));
        EXPECT_EQ_I(oi.nbytes, precise ? 48 : 24);
        EXPECT_EQ_I(oi.tosa_bytes, precise ? 48 : 24);
        /* inputs given in the FP32 TOSA encoding in both modes */
        uint8_t enc[24];
        for (int i = 0; i < 6; i++) {
            uint32_t u;
            memcpy(&u, &av[i], 4);
            for (int k = 0; k < 4; k++) enc[i * 4 + k] = (uint8_t)(u >> (8 * k));
        }
        EXPECT_EQ_I(tosac_program_set_input_tosa(p, 0, enc, sizeof enc, g_diag), TOSAC_OK);
        EXPECT_EQ_I(invoke(p), TOSAC_OK);
        const void *yv = tosac_program_output_ptr(p, 0);
        for (int i = 0; yv && i < 6; i++) {
            double want = (double)av[i] + (double)cv[i];
            if (precise)
                EXPECT(((const double *)yv)[i] == want);
            else
                EXPECT(((const float *)yv)[i] == (float)want);
        }
        if (precise && yv) EXPECT(((const double *)yv)[0] != 1.0); /* 1 + 1e-10 is not 1 in double */
        uint8_t out[48];
        size_t n = 0;
        EXPECT_EQ_I(tosac_program_get_output_tosa(p, 0, out, sizeof out, &n), TOSAC_OK);
        EXPECT_EQ_I(n, precise ? 48 : 24);
        tosac_program_destroy(p);
    }
    tosac_graph_destroy(x.g);
}

/* INT4 and INT48 inputs / outputs through the TOSA encoding (IDENTITY copies). */
static void test_encodings(void)
{
    gb x = gb_new();
    static const int64_t d5[1] = {5};
    tosac_value *a4 = input(&x, "a4", TOSAC_DTYPE_INT4, 1, d5), *a48 = input(&x, "a48", TOSAC_DTYPE_INT48, 1, d5);
    tosac_value *y4 = tensor(&x, "y4", TOSAC_DTYPE_INT4, 1, d5), *y48 = tensor(&x, "y48", TOSAC_DTYPE_INT48, 1, d5);
    op1(&x, TOSAC_OP_IDENTITY, a4, y4);
    op1(&x, TOSAC_OP_IDENTITY, a48, y48);
    output(&x, y4);
    output(&x, y48);
    EXPECT(!x.fail);
    tosac_program *p = create(x.g, NULL);
    EXPECT(p != NULL);
    if (p) {
        static const int v4[5] = {-7, 7, 0, -1, 3};
        static const int64_t v48[5] = {-140737488355328LL, 140737488355327LL, 0, -1, 123456789012LL};
        uint8_t e4[3] = {0}, e48[30];
        for (int i = 0; i < 5; i++) e4[i / 2] |= (uint8_t)(((unsigned)v4[i] & 15u) << (i % 2 ? 4 : 0));
        for (int i = 0; i < 5; i++)
            for (int k = 0; k < 6; k++) e48[i * 6 + k] = (uint8_t)((uint64_t)v48[i] >> (8 * k));
        EXPECT_EQ_I(tosac_program_set_input_tosa(p, 0, e4, 3, g_diag), TOSAC_OK);
        EXPECT_EQ_I(tosac_program_set_input_tosa(p, 1, e48, 30, g_diag), TOSAC_OK);
        const int8_t *s4 = tosac_program_input_ptr(p, 0);
        const int64_t *s48 = tosac_program_input_ptr(p, 1);
        for (int i = 0; s4 && s48 && i < 5; i++) {
            EXPECT_EQ_I(s4[i], v4[i]);
            EXPECT_EQ_I(s48[i], v48[i]);
        }
        EXPECT_EQ_I(invoke(p), TOSAC_OK);
        uint8_t o4[3], o48[30];
        size_t n4 = 0, n48 = 0;
        EXPECT_EQ_I(tosac_program_get_output_tosa(p, 0, o4, sizeof o4, &n4), TOSAC_OK);
        EXPECT_EQ_I(tosac_program_get_output_tosa(p, 1, o48, sizeof o48, &n48), TOSAC_OK);
        EXPECT(n4 == 3 && n48 == 30 && !memcmp(o4, e4, 3) && !memcmp(o48, e48, 30));
        tosac_program_destroy(p);
    }
    tosac_graph_destroy(x.g);
}

/* ------------------------------------------------------------------------------------------ */
/* Errors, callbacks                                                                             */

static void test_errors(void)
{
    /* REQUIRE at run time: INTDIV by zero */
    gb x = gb_new();
    tosac_value *a = input(&x, "num", TOSAC_DTYPE_INT32, 2, k23), *b = input(&x, "den", TOSAC_DTYPE_INT32, 2, k23);
    tosac_value *s = tensor(&x, "sum", TOSAC_DTYPE_INT32, 2, k23), *q = tensor(&x, "quot", TOSAC_DTYPE_INT32, 2, k23);
    op2(&x, TOSAC_OP_ADD, a, b, s);
    op2(&x, TOSAC_OP_INTDIV, s, b, q);
    output(&x, q);
    EXPECT(!x.fail);
    tosac_program *p = create(x.g, NULL);
    EXPECT(p != NULL);
    if (p) {
        static const int32_t nv[6] = {7, -7, 7, -7, 1, 0}, dv[6] = {2, 2, -2, -2, 3, 1};
        set_input_i32(p, 0, nv, 6);
        set_input_i32(p, 1, dv, 6);
        EXPECT_EQ_I(invoke(p), TOSAC_OK);
        const int32_t *qv = tosac_program_output_ptr(p, 0);
        for (int i = 0; qv && i < 6; i++) EXPECT_EQ_I(qv[i], (nv[i] + dv[i]) / dv[i]);
        static const int32_t dz[6] = {2, 2, 0, 2, 2, 2};
        set_input_i32(p, 1, dz, 6);
        tosac_diag_clear(g_diag);
        EXPECT_EQ_I(tosac_program_invoke(p, g_diag), TOSAC_ERR_UNPREDICTABLE);
        EXPECT(diag_has("op 1 (INTDIV) [sum, den -> quot]: "));
        EXPECT(strstr(tosac_program_last_error(p), "INTDIV") != NULL);
        /* the program still runs afterwards */
        set_input_i32(p, 1, dv, 6);
        EXPECT_EQ_I(invoke(p), TOSAC_OK);
        EXPECT_STREQ(tosac_program_last_error(p), "");
        tosac_program_destroy(p);
    }
    tosac_graph_destroy(x.g);

    /* ERROR_IF at validation: mismatched shapes */
    gb e = gb_new();
    static const int64_t d4[2] = {2, 4};
    a = input(&e, "a", TOSAC_DTYPE_INT32, 2, k23);
    b = input(&e, "b", TOSAC_DTYPE_INT32, 2, d4);
    s = tensor(&e, "s", TOSAC_DTYPE_INT32, 2, k23);
    op2(&e, TOSAC_OP_ADD, a, b, s);
    output(&e, s);
    tosac_program *bad = NULL;
    tosac_diag_clear(g_diag);
    EXPECT_EQ_I(tosac_program_create(e.g, NULL, &bad, g_diag), TOSAC_ERR_TOSA_ERROR);
    EXPECT(bad == NULL && tosac_diag_count(g_diag) >= 2 && diag_has("no program was created"));
    tosac_graph_destroy(e.g);

    /* a level limit (rank 7 > MAX_RANK 6 at level 8K): ERROR (as the official conformance tests expect); fine at level none */
    gb l = gb_new();
    static const int64_t d7[7] = {1, 1, 1, 1, 1, 2, 3};
    a = input(&l, "a", TOSAC_DTYPE_INT32, 7, d7);
    s = tensor(&l, "s", TOSAC_DTYPE_INT32, 7, d7);
    op2(&l, TOSAC_OP_ADD, a, a, s);
    output(&l, s);
    tosac_diag_clear(g_diag);
    EXPECT_EQ_I(tosac_program_create(l.g, NULL, &bad, g_diag), TOSAC_ERR_TOSA_ERROR);
    EXPECT(bad == NULL);
    tosac_program_opts o = tosac_program_opts_default();
    o.validate.level = TOSAC_LEVEL_NONE;
    p = create(l.g, &o);
    EXPECT(p != NULL);
    if (p) {
        int32_t *in = tosac_program_input_ptr(p, 0);
        for (int i = 0; in && i < 6; i++) in[i] = i;
        EXPECT_EQ_I(invoke(p), TOSAC_OK);
        const int32_t *y = tosac_program_output_ptr(p, 0);
        for (int i = 0; y && i < 6; i++) EXPECT_EQ_I(y[i], 2 * i);
        tosac_program_destroy(p);
    }
    tosac_graph_destroy(l.g);

    /* CUSTOM: no operator library */
    gb c = gb_new();
    a = input(&c, "a", TOSAC_DTYPE_INT32, 2, k23);
    s = tensor(&c, "s", TOSAC_DTYPE_INT32, 2, k23);
    tosac_node *n = op1(&c, TOSAC_OP_CUSTOM, a, s);
    set_str(&c, n, TOSAC_ATTR_CUSTOM_operator_name, "mine");
    set_str(&c, n, TOSAC_ATTR_CUSTOM_domain_name, "test");
    output(&c, s);
    p = create(c.g, NULL);
    EXPECT(p != NULL);
    if (p) {
        tosac_diag_clear(g_diag);
        EXPECT_EQ_I(tosac_program_invoke(p, g_diag), TOSAC_ERR_UNSUPPORTED);
        EXPECT(diag_has("op 0 (CUSTOM) [a -> s]: no custom operator library"));
        tosac_program_destroy(p);
    }
    tosac_graph_destroy(c.g);

    tosac_program_destroy(NULL);
    EXPECT_EQ_I(tosac_program_create(NULL, NULL, &bad, NULL), TOSAC_ERR_INVALID_ARG);
}

typedef struct cb_state {
    uint32_t calls, adds;
    uint64_t total_ns;
    uint32_t last_index;
    const tosac_program *p;
    float seen[2][6]; /* each operator's result, read inside the callback */
} cb_state;

static void on_op(void *user, uint32_t op_index, uint32_t op, uint64_t ns)
{
    cb_state *s = user;
    s->calls++;
    s->adds += op == TOSAC_OP_ADD;
    s->total_ns += ns;
    s->last_index = op_index;
    tosac_tensor_info info;
    const void *data = NULL;
    if (s->p && op_index < 2 && tosac_program_op_output(s->p, op_index, 0, &info, &data) == TOSAC_OK &&
        info.nelem == 6 && info.dtype == TOSAC_DTYPE_FP32 && data)
        memcpy(s->seen[op_index], data, sizeof s->seen[0]);
}

static void test_callback(void)
{
    tosac_graph *g = add_graph(TOSAC_DTYPE_FP32);
    tosac_program *p = create(g, NULL);
    EXPECT(p != NULL);
    if (p) {
        cb_state st;
        memset(&st, 0, sizeof st);
        st.p = p;
        float *a = tosac_program_input_ptr(p, 0), *b = tosac_program_input_ptr(p, 1);
        for (int k = 0; k < 6; k++) a[k] = (float)k, b[k] = 10.0f * (float)k;
        tosac_program_set_op_callback(p, on_op, &st);
        EXPECT_EQ_I(invoke(p), TOSAC_OK);
        EXPECT_EQ_I(st.calls, 2);
        EXPECT_EQ_I(st.adds, 2);
        EXPECT_EQ_I(st.last_index, 1);
        /* s = a + b = 11k, y = s + a = 12k, observed while each operator reports */
        for (int k = 0; k < 6; k++) EXPECT(st.seen[0][k] == 11.0f * (float)k && st.seen[1][k] == 12.0f * (float)k);
        tosac_tensor_info info;
        const void *data;
        EXPECT_EQ_I(tosac_program_op_output(p, 2, 0, &info, &data), TOSAC_ERR_INVALID_ARG);
        EXPECT_EQ_I(tosac_program_op_output(p, 0, 1, &info, &data), TOSAC_ERR_INVALID_ARG);
        tosac_program_set_op_callback(p, NULL, NULL);
        EXPECT_EQ_I(invoke(p), TOSAC_OK);
        EXPECT_EQ_I(st.calls, 2);
        EXPECT_EQ_I(tosac_program_input_index(p, "b"), 1);
        EXPECT_EQ_I(tosac_program_output_index(p, "s"), 1);
        EXPECT_EQ_I(tosac_program_output_index(p, "zz"), -1);
        tosac_program_destroy(p);
    }
    tosac_graph_destroy(g);
}

/* ------------------------------------------------------------------------------------------ */
/* Every example graph of the harness (one per operator and type row)                            */

/*
 * Each example graph creates, its plan passes the checker, and it runs with zeroed inputs in
 * normal and precise mode: the result is OK or a data-dependent REQUIRE (zero divisors...);
 * only CUSTOM (no operator library) is UNSUPPORTED.
 */
static void test_example_graphs(void)
{
    int graphs = 0, ok = 0, unpred = 0, unsup = 0;
    char missing[2048];
    size_t mlen = 0;
    missing[0] = '\0';
    tosac_program_opts o = tosac_program_opts_default();
    o.validate.extensions = TOSAC_EXT_ALL & ~(uint32_t)TOSAC_EXT_DYNAMIC;
    for (uint32_t op = 1; op < TOSAC_OP_COUNT; op++) {
        unsigned nrows = 0;
        tosac_op_type_rows(op, &nrows);
        for (unsigned v = 0; v < (nrows ? nrows : 1); v++) {
            tosac_graph *g = test_op_graph(op, v);
            if (!g) continue;
            for (int precise = 0; precise < 2; precise++) {
                o.precise = precise != 0;
                tosac_program *p = create(g, &o);
                EXPECT(p != NULL);
                if (!p) {
                    fprintf(stderr, "  %s variant %u\n", tosac_op_name(op), v);
                    continue;
                }
                graphs++;
                EXPECT(check_plan(p));
                for (uint32_t i = 0; i < tosac_program_input_count(p); i++) {
                    tosac_tensor_info ti;
                    tosac_program_input_info(p, i, &ti);
                    void *slot = tosac_program_input_ptr(p, i);
                    EXPECT(slot != NULL);
                    if (slot) memset(slot, 0, ti.nbytes);
                }
                tosac_diag_clear(g_diag);
                tosac_status s = tosac_program_invoke(p, g_diag);
                if (s == TOSAC_OK) {
                    ok++;
                } else if (s == TOSAC_ERR_UNPREDICTABLE) {
                    unpred++;
                } else if (s == TOSAC_ERR_UNSUPPORTED) {
                    unsup++;
                    if (op != TOSAC_OP_CUSTOM)
                        fprintf(stderr, "  %s variant %u%s: %s\n", tosac_op_name(op), v, precise ? " (precise)" : "",
                                tosac_program_last_error(p));
                    EXPECT(op == TOSAC_OP_CUSTOM);
                    if (!precise && mlen + 40 < sizeof missing)
                        mlen += (size_t)snprintf(missing + mlen, sizeof missing - mlen, " %s/%u", tosac_op_name(op), v);
                } else {
                    fprintf(stderr, "  %s variant %u%s: %s: %s\n", tosac_op_name(op), v, precise ? " (precise)" : "",
                            tosac_status_str(s), tosac_program_last_error(p));
                    EXPECT(s == TOSAC_OK);
                }
                tosac_program_destroy(p);
            }
            tosac_graph_destroy(g);
        }
    }
    printf("example graphs: %d programs, %d ran, %d UNPREDICTABLE on zero inputs, %d UNSUPPORTED by the kernels%s%s\n",
           graphs, ok, unpred, unsup, mlen ? ":" : "", missing);
    EXPECT(graphs > 300);
}

/* ------------------------------------------------------------------------------------------ */
/* Random DAGs                                                                                   */

static uint32_t rng_state = 12345;
static uint32_t rnd(uint32_t n)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return (rng_state >> 8) % n;
}

enum { DAG_MAX = 80 };
static const int64_t k_dag_shapes[3][2] = {{6, 8}, {1, 8}, {6, 1}};
static const tosac_op k_dag_ops[5] = {TOSAC_OP_BITWISE_XOR, TOSAC_OP_BITWISE_AND, TOSAC_OP_BITWISE_OR,
                                      TOSAC_OP_MAXIMUM, TOSAC_OP_MINIMUM};

typedef struct dag {
    int n, n_in;
    int shape[DAG_MAX]; /* index into k_dag_shapes */
    int op[DAG_MAX], a[DAG_MAX], b[DAG_MAX];
    bool is_out[DAG_MAX];
} dag;

static int bshape(int sa, int sb)
{
    int64_t r = k_dag_shapes[sa][0] > k_dag_shapes[sb][0] ? k_dag_shapes[sa][0] : k_dag_shapes[sb][0];
    int64_t c = k_dag_shapes[sa][1] > k_dag_shapes[sb][1] ? k_dag_shapes[sa][1] : k_dag_shapes[sb][1];
    for (int k = 0; k < 3; k++)
        if (k_dag_shapes[k][0] == r && k_dag_shapes[k][1] == c) return k;
    return -1; /* [6,8] from [1,8] x [6,1] has no entry: handled below */
}

static int32_t dag_eval(int op, int32_t x, int32_t y)
{
    switch (op) {
    case 0: return x ^ y;
    case 1: return x & y;
    case 2: return x | y;
    case 3: return x > y ? x : y;
    default: return x < y ? x : y;
    }
}

/*
 * Random graphs of binary ops with broadcasting and fan-out over three shapes, inputs of every
 * shape, several outputs: results equal a direct evaluation here, every plan passes the
 * checker, and the arena/lower-bound ratio is reported.
 */
static void test_random_dags(void)
{
    double worst = 1.0;
    size_t tot_arena = 0, tot_lb = 0;
    for (int iter = 0; iter < 40; iter++) {
        dag d;
        memset(&d, 0, sizeof d);
        d.n_in = 3 + (int)rnd(3);
        d.n = d.n_in + 20 + (int)rnd(DAG_MAX - d.n_in - 20);
        for (int i = 0; i < d.n_in; i++) d.shape[i] = i < 3 ? i : (int)rnd(3);
        for (int i = d.n_in; i < d.n; i++) {
            /* operands: mostly recent values, sometimes old ones (long lifetimes) */
            int span = rnd(4) == 0 ? i : (i < 6 ? i : 6);
            d.a[i] = i - 1 - (int)rnd((uint32_t)span);
            d.b[i] = i - 1 - (int)rnd((uint32_t)span);
            d.op[i] = (int)rnd(5);
            int sh = bshape(d.shape[d.a[i]], d.shape[d.b[i]]);
            d.shape[i] = sh < 0 ? 0 : sh;
        }
        for (int i = d.n_in; i < d.n; i++) d.is_out[i] = i == d.n - 1 || rnd(12) == 0;
        gb x = gb_new();
        tosac_value *v[DAG_MAX];
        char name[16];
        for (int i = 0; i < d.n_in; i++) {
            snprintf(name, sizeof name, "in%d", i);
            v[i] = input(&x, name, TOSAC_DTYPE_INT32, 2, k_dag_shapes[d.shape[i]]);
        }
        for (int i = d.n_in; i < d.n; i++) {
            snprintf(name, sizeof name, "v%d", i);
            v[i] = tensor(&x, name, TOSAC_DTYPE_INT32, 2, k_dag_shapes[d.shape[i]]);
            tosac_node *n = op2(&x, k_dag_ops[d.op[i]], v[d.a[i]], v[d.b[i]], v[i]);
            if (d.op[i] >= 3 && (!n || tosac_node_set_int(n, 0, TOSAC_NAN_PROPAGATE))) x.fail = true;
        }
        for (int i = d.n_in; i < d.n; i++)
            if (d.is_out[i]) output(&x, v[i]);
        EXPECT(!x.fail);
        tosac_program *p = create(x.g, NULL);
        EXPECT(p != NULL);
        if (!p) {
            tosac_graph_destroy(x.g);
            continue;
        }
        EXPECT(check_plan(p));
        size_t arena = tosac_program_arena_size(p), lb = tosac_program_arena_lower_bound(p);
        tot_arena += arena;
        tot_lb += lb;
        if (lb && (double)arena / (double)lb > worst) worst = (double)arena / (double)lb;
        EXPECT(arena >= lb);
        int32_t ref[DAG_MAX][48];
        for (int rep = 0; rep < 2; rep++) {
            for (int i = 0; i < d.n_in; i++) {
                int64_t cnt = count_of(2, k_dag_shapes[d.shape[i]]);
                for (int64_t e = 0; e < cnt; e++) ref[i][e] = (int32_t)(rnd(2001) - 1000);
                set_input_i32(p, (uint32_t)i, ref[i], cnt);
            }
            for (int i = d.n_in; i < d.n; i++) {
                const int64_t *so = k_dag_shapes[d.shape[i]], *sa = k_dag_shapes[d.shape[d.a[i]]],
                              *sb = k_dag_shapes[d.shape[d.b[i]]];
                for (int64_t r = 0; r < so[0]; r++)
                    for (int64_t c = 0; c < so[1]; c++) {
                        int32_t xa = ref[d.a[i]][(sa[0] == 1 ? 0 : r) * sa[1] + (sa[1] == 1 ? 0 : c)];
                        int32_t xb = ref[d.b[i]][(sb[0] == 1 ? 0 : r) * sb[1] + (sb[1] == 1 ? 0 : c)];
                        ref[i][r * so[1] + c] = dag_eval(d.op[i], xa, xb);
                    }
            }
            EXPECT_EQ_I(invoke(p), TOSAC_OK);
            uint32_t oi = 0;
            int bad = 0;
            for (int i = d.n_in; i < d.n; i++) {
                if (!d.is_out[i]) continue;
                const int32_t *y = tosac_program_output_ptr(p, oi++);
                int64_t cnt = count_of(2, k_dag_shapes[d.shape[i]]);
                for (int64_t e = 0; y && e < cnt; e++) bad += y[e] != ref[i][e];
            }
            EXPECT_EQ_I(bad, 0);
        }
        tosac_program_destroy(p);
        tosac_graph_destroy(x.g);
    }
    printf("random DAGs: arena / lower bound = %.3f overall, worst graph %.3f\n",
           tot_lb ? (double)tot_arena / (double)tot_lb : 0.0, worst);
}

int main(void)
{
    g_diag = tosac_diag_create();
    RUN(test_inplace_reshape_identity);
    RUN(test_reshape_of_constant);
    RUN(test_plan_conv_chain);
    RUN(test_plan_residual_adds);
    RUN(test_plan_large_graph);
    RUN(test_cond_if);
    RUN(test_while_loop);
    RUN(test_nested_control_flow);
    RUN(test_cond_if_passthrough);
    RUN(test_passthrough_outputs);
    RUN(test_while_into_variable);
    RUN(test_shared_sub_block);
    RUN(test_block_convention_and_limits);
    RUN(test_variables);
    RUN(test_variables_identity_convention);
    RUN(test_caller_memory);
    RUN(test_constants_buffer);
    RUN(test_precise);
    RUN(test_encodings);
    RUN(test_errors);
    RUN(test_callback);
    RUN(test_example_graphs);
    RUN(test_random_dags);
    tosac_diag_destroy(g_diag);
    return test_summary();
}
