/*
 * Kernels of the reduce, data-layout, gather/scatter and resize families, called through
 * tosac_kernel_for() with hand-built tosac_kcall structs. Expected values come from naive
 * per-element index arithmetic written here independently of the kernels (unravel every output
 * index, compute the source index by the operator's definition), on seeded random inputs over
 * many shapes (rank 0 where legal up to rank 6, odd dims), every element size (1/2/4/8 bytes) and
 * every axis; plus the spec spot values and the REQUIRE (UNPREDICTABLE) cases.
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/fp.h"
#include "harness/ktensor.h"
#include "harness/test.h"
#include "kernels/kernel.h"
#include "unit/kernels_run.h"

/* ------------------------------------------------------------------------------------------ */
/* Utilities                                                                                      */

#define RNG_SEED 0x9E3779B97F4A7C15ull
#include "harness/rng.h"

/* One whole-tensor case, counted as one check. */
#define CHECK_CASE(ok)                                                          \
    do {                                                                        \
        t_checks++;                                                             \
        if (!(ok)) {                                                            \
            t_failures++;                                                       \
            fprintf(stderr, "%s:%d: case failed: %s\n", __FILE__, __LINE__, #ok); \
        }                                                                       \
    } while (0)


/* A SHAPE operand (rank 1, int64) holding vals[0..n). */
static void tt_shape(tt *x, int n, const int64_t *vals)
{
    int64_t sh[1] = {n};
    tt_make(x, TOSAC_DTYPE_SHAPE, false, 1, sh);
    for (int i = 0; i < n; i++) ((int64_t *)(void *)x->buf)[i] = vals[i];
}

/* Random contents: BOOL 0/1, others random bytes (data movement does not look at them). */
static void tt_fill_random(tt *x)
{
    size_t bytes = (size_t)x->t.nelem * x->es;
    for (size_t i = 0; i < bytes; i++) x->buf[i] = (uint8_t)rnd();
    if (x->t.dtype == TOSAC_DTYPE_BOOL)
        for (size_t i = 0; i < bytes; i++) x->buf[i] &= 1u;
}

/* Runs op through the dispatch table with the given inputs and one output. */
static tosac_status run_op(uint32_t op, tt **ins, uint32_t nin, tt *out, const tosac_attr_val *attr, const char **why)
{
    tosac_ktensor kin[8];
    for (uint32_t i = 0; i < nin; i++) kin[i] = ins[i]->t;
    tosac_attr_val none[TOSAC_ATTR_MAX_FIELDS];
    memset(none, 0, sizeof none);
    tosac_kcall c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.n_in = nin;
    c.n_out = 1;
    c.in = kin;
    c.out = &out->t;
    c.attr = attr ? attr : none;
    tosac_status s = kernels_run_call(&c);
    if (why) *why = c.why;
    return s;
}

static void attr_int(tosac_attr_val *a, unsigned id, int64_t v)
{
    a[id].present = true;
    a[id].i = v;
}

static void unravel(int64_t lin, int rank, const int64_t *shape, int64_t *idx)
{
    for (int d = rank - 1; d >= 0; d--) {
        idx[d] = lin % shape[d];
        lin /= shape[d];
    }
}

static int64_t ravel(int rank, const int64_t *shape, const int64_t *idx)
{
    int64_t l = 0;
    for (int d = 0; d < rank; d++) l = l * shape[d] + idx[d];
    return l;
}

/* Compares out against expected bytes; reports the first differing element. */
static bool same_bytes(const char *what, const tt *out, const uint8_t *exp)
{
    size_t es = out->es;
    for (int64_t i = 0; i < out->t.nelem; i++)
        if (memcmp(out->buf + (size_t)i * es, exp + (size_t)i * es, es) != 0) {
            uint64_t a = 0, b = 0;
            memcpy(&a, out->buf + (size_t)i * es, es);
            memcpy(&b, exp + (size_t)i * es, es);
            fprintf(stderr, "  %s: element %lld differs: got 0x%llx expected 0x%llx\n", what, (long long)i,
                    (unsigned long long)a, (unsigned long long)b);
            return false;
        }
    return true;
}

/* Element types exercised by the data-movement tests: every execution element size. */
static const struct {
    tosac_dtype t;
    bool f64;
} MOVE_TYPES[] = {
    {TOSAC_DTYPE_BOOL, false},  {TOSAC_DTYPE_INT8, false}, {TOSAC_DTYPE_FP8E4M3, false}, {TOSAC_DTYPE_INT16, false},
    {TOSAC_DTYPE_FP16, false},  {TOSAC_DTYPE_BF16, false}, {TOSAC_DTYPE_INT32, false},   {TOSAC_DTYPE_FP32, false},
    {TOSAC_DTYPE_FP32, true},   {TOSAC_DTYPE_BF16, true},  {TOSAC_DTYPE_INT48, false},
};
#define N_MOVE_TYPES (sizeof MOVE_TYPES / sizeof MOVE_TYPES[0])

/* Random shape of the given rank, dims in [1, maxd], total at most maxn elements. */
static void random_shape(int rank, int64_t maxd, int64_t maxn, int64_t *shape)
{
    for (;;) {
        int64_t n = 1;
        for (int d = 0; d < rank; d++) {
            shape[d] = rnd_in(1, maxd);
            n *= shape[d];
        }
        if (n <= maxn) return;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* RESHAPE                                                                                        */

static void test_reshape(void)
{
    int cases = 0;
    for (size_t ti = 0; ti < N_MOVE_TYPES; ti++)
        for (int rank = 0; rank <= 6; rank++) {
            int64_t shape[6];
            random_shape(rank, 5, 2000, shape);
            tt in, out, sh;
            tt_make(&in, MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, rank, shape);
            tt_fill_random(&in);
            int64_t flat[1] = {in.t.nelem};
            tt_make(&out, MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, 1, flat);
            tt_shape(&sh, 1, flat);
            tt *ins[2] = {&in, &sh};
            cases++;
            CHECK_CASE(!(run_op(TOSAC_OP_RESHAPE, ins, 2, &out, NULL, NULL) != TOSAC_OK || !same_bytes("reshape", &out, in.buf)));
            /* in place: out.data == in.data leaves the data untouched */
            uint8_t *copy = (uint8_t *)malloc((size_t)in.t.nelem * in.es);
            memcpy(copy, in.buf, (size_t)in.t.nelem * in.es);
            tt alias = out;
            alias.t.shape = alias.shape;
            alias.buf = in.buf;
            alias.t.data = in.buf;
            cases++;
            CHECK_CASE(!(run_op(TOSAC_OP_RESHAPE, ins, 2, &alias, NULL, NULL) != TOSAC_OK ||
                memcmp(in.buf, copy, (size_t)in.t.nelem * in.es) != 0));
            free(copy);
            tt_free(&in);
            tt_free(&out);
            tt_free(&sh);
        }
    EXPECT(cases == 2 * 7 * (int)N_MOVE_TYPES);
}

/* ------------------------------------------------------------------------------------------ */
/* REVERSE                                                                                        */

static void test_reverse(void)
{
    int cases = 0;
    for (int iter = 0; iter < 8; iter++)
        for (size_t ti = 0; ti < N_MOVE_TYPES; ti++)
            for (int rank = 1; rank <= 6; rank++)
                for (int axis = 0; axis < rank; axis++) {
                    int64_t shape[6], idx[6];
                    random_shape(rank, 6, 3000, shape);
                    tt in, out;
                    tt_make(&in, MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, rank, shape);
                    tt_make(&out, MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, rank, shape);
                    tt_fill_random(&in);
                    uint8_t *exp = (uint8_t *)malloc((size_t)in.t.nelem * in.es);
                    for (int64_t i = 0; i < in.t.nelem; i++) {
                        unravel(i, rank, shape, idx);
                        idx[axis] = shape[axis] - 1 - idx[axis];
                        memcpy(exp + (size_t)i * in.es, in.buf + (size_t)ravel(rank, shape, idx) * in.es, in.es);
                    }
                    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
                    memset(a, 0, sizeof a);
                    attr_int(a, TOSAC_ATTR_REVERSE_axis, axis);
                    tt *ins[1] = {&in};
                    cases++;
                    CHECK_CASE(!(run_op(TOSAC_OP_REVERSE, ins, 1, &out, a, NULL) != TOSAC_OK || !same_bytes("reverse", &out, exp)));
                    free(exp);
                    tt_free(&in);
                    tt_free(&out);
                }
    EXPECT(cases > 0);
}

/* ------------------------------------------------------------------------------------------ */
/* SLICE                                                                                          */

static void test_slice(void)
{
    for (int iter = 0; iter < 30; iter++)
        for (size_t ti = 0; ti < N_MOVE_TYPES; ti++)
            for (int rank = 0; rank <= 6; rank++) {
                int64_t shape[6], start[6], size[6], idx[6];
                random_shape(rank, 7, 4000, shape);
                for (int d = 0; d < rank; d++) {
                    start[d] = rnd_in(0, shape[d] - 1);
                    size[d] = rnd_in(1, shape[d] - start[d]);
                    if (rnd() % 3 == 0) { /* whole dims too, so rows can merge */
                        start[d] = 0;
                        size[d] = shape[d];
                    }
                }
                tt in, out, st, sz;
                tt_make(&in, MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, rank, shape);
                tt_make(&out, MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, rank, size);
                tt_shape(&st, rank, start);
                tt_shape(&sz, rank, size);
                tt_fill_random(&in);
                uint8_t *exp = (uint8_t *)malloc((size_t)out.t.nelem * in.es);
                for (int64_t i = 0; i < out.t.nelem; i++) {
                    unravel(i, rank, size, idx);
                    for (int d = 0; d < rank; d++) idx[d] += start[d];
                    memcpy(exp + (size_t)i * in.es, in.buf + (size_t)ravel(rank, shape, idx) * in.es, in.es);
                }
                tt *ins[3] = {&in, &st, &sz};
                CHECK_CASE(!(run_op(TOSAC_OP_SLICE, ins, 3, &out, NULL, NULL) != TOSAC_OK || !same_bytes("slice", &out, exp)));
                free(exp);
                tt_free(&in);
                tt_free(&out);
                tt_free(&st);
                tt_free(&sz);
            }
}

/* ------------------------------------------------------------------------------------------ */
/* TILE                                                                                           */

static void test_tile(void)
{
    for (int iter = 0; iter < 20; iter++)
        for (size_t ti = 0; ti < N_MOVE_TYPES; ti++)
            for (int rank = 0; rank <= 6; rank++) {
                int64_t shape[6], mult[6], oshape[6], idx[6];
                for (;;) {
                    random_shape(rank, 5, 500, shape);
                    int64_t n = 1;
                    for (int d = 0; d < rank; d++) {
                        mult[d] = rnd_in(1, 4);
                        oshape[d] = shape[d] * mult[d];
                        n *= oshape[d];
                    }
                    if (n <= 6000) break;
                }
                tt in, out, m;
                tt_make(&in, MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, rank, shape);
                tt_make(&out, MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, rank, oshape);
                tt_shape(&m, rank, mult);
                tt_fill_random(&in);
                uint8_t *exp = (uint8_t *)malloc((size_t)out.t.nelem * in.es);
                for (int64_t i = 0; i < out.t.nelem; i++) {
                    unravel(i, rank, oshape, idx);
                    for (int d = 0; d < rank; d++) idx[d] %= shape[d];
                    memcpy(exp + (size_t)i * in.es, in.buf + (size_t)ravel(rank, shape, idx) * in.es, in.es);
                }
                tt *ins[2] = {&in, &m};
                CHECK_CASE(!(run_op(TOSAC_OP_TILE, ins, 2, &out, NULL, NULL) != TOSAC_OK || !same_bytes("tile", &out, exp)));
                free(exp);
                tt_free(&in);
                tt_free(&out);
                tt_free(&m);
            }
}

/* ------------------------------------------------------------------------------------------ */
/* TRANSPOSE                                                                                      */

static bool transpose_case(tosac_dtype dt, bool f64, int rank, const int64_t *shape, const int32_t *perms)
{
    int64_t oshape[6], idx[6], src[6];
    for (int d = 0; d < rank; d++) oshape[d] = shape[perms[d]];
    tt in, out;
    tt_make(&in, dt, f64, rank, shape);
    tt_make(&out, dt, f64, rank, oshape);
    tt_fill_random(&in);
    uint8_t *exp = (uint8_t *)malloc((size_t)out.t.nelem * in.es);
    for (int64_t i = 0; i < out.t.nelem; i++) {
        unravel(i, rank, oshape, idx);
        for (int d = 0; d < rank; d++) src[perms[d]] = idx[d];
        memcpy(exp + (size_t)i * in.es, in.buf + (size_t)ravel(rank, shape, src) * in.es, in.es);
    }
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    memset(a, 0, sizeof a);
    a[TOSAC_ATTR_TRANSPOSE_perms].present = true;
    a[TOSAC_ATTR_TRANSPOSE_perms].data = perms;
    a[TOSAC_ATTR_TRANSPOSE_perms].len = (uint32_t)rank;
    tt *ins[1] = {&in};
    bool ok = run_op(TOSAC_OP_TRANSPOSE, ins, 1, &out, a, NULL) == TOSAC_OK && same_bytes("transpose", &out, exp);
    free(exp);
    tt_free(&in);
    tt_free(&out);
    return ok;
}

/* Next permutation in lexicographic order; false after the last. */
static bool next_perm(int32_t *p, int n)
{
    int i = n - 2;
    while (i >= 0 && p[i] >= p[i + 1]) i--;
    if (i < 0) return false;
    int j = n - 1;
    while (p[j] <= p[i]) j--;
    int32_t t = p[i];
    p[i] = p[j];
    p[j] = t;
    for (int a = i + 1, b = n - 1; a < b; a++, b--) {
        t = p[a];
        p[a] = p[b];
        p[b] = t;
    }
    return true;
}

static void test_transpose(void)
{
    int cases = 0;
    /* every permutation of ranks 0..4, every element size */
    for (size_t ti = 0; ti < N_MOVE_TYPES; ti++)
        for (int rank = 0; rank <= 4; rank++) {
            int32_t p[6];
            for (int d = 0; d < rank; d++) p[d] = d;
            do {
                int64_t shape[6];
                random_shape(rank, 7, 3000, shape);
                cases++;
                CHECK_CASE(!(!transpose_case(MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, rank, shape, p)));
            } while (rank > 0 && next_perm(p, rank));
        }
    /* random permutations of ranks 5 and 6 */
    for (int iter = 0; iter < 40; iter++)
        for (size_t ti = 0; ti < N_MOVE_TYPES; ti++) {
            int rank = 5 + iter % 2;
            int32_t p[6];
            int64_t shape[6];
            for (int d = 0; d < rank; d++) p[d] = d;
            for (int d = rank - 1; d > 0; d--) {
                int j = (int)rnd_in(0, d);
                int32_t t = p[d];
                p[d] = p[j];
                p[j] = t;
            }
            random_shape(rank, 5, 3000, shape);
            cases++;
            CHECK_CASE(!(!transpose_case(MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, rank, shape, p)));
        }
    /* big odd 2-D / 3-D transposes: several blocks of the tiled loop, partial edges */
    static const int64_t big2[][2] = {{67, 45}, {1, 300}, {300, 1}, {129, 33}, {33, 129}};
    static const int32_t p10[2] = {1, 0};
    for (size_t k = 0; k < sizeof big2 / sizeof big2[0]; k++)
        for (size_t ti = 0; ti < N_MOVE_TYPES; ti++) {
            cases++;
            CHECK_CASE(!(!transpose_case(MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, 2, big2[k], p10)));
        }
    /* a dense output of 2-4 columns (NCHW with 2-4 channels to NHWC, a channel shuffle) */
    static const int64_t zip[][4] = {{1, 2, 17, 9}, {1, 3, 50, 41}, {1, 4, 7, 70}, {1, 2, 3, 100}};
    static const int64_t shz[][4] = {{1, 5, 2, 17}, {1, 4, 3, 50}, {1, 3, 4, 7}, {1, 9, 2, 1}};
    static const int32_t nhwc[4] = {0, 2, 3, 1}, shuf[4] = {0, 1, 3, 2};
    for (size_t k = 0; k < sizeof zip / sizeof zip[0]; k++)
        for (size_t ti = 0; ti < N_MOVE_TYPES; ti++) {
            cases += 2;
            CHECK_CASE(!(!transpose_case(MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, 4, zip[k], nhwc)));
            CHECK_CASE(!(!transpose_case(MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, 4, shz[k], shuf)));
        }
    static const int64_t big3[3] = {5, 71, 37};
    static const int32_t p3[][3] = {{0, 2, 1}, {2, 1, 0}, {1, 2, 0}, {2, 0, 1}};
    for (size_t k = 0; k < 4; k++)
        for (size_t ti = 0; ti < N_MOVE_TYPES; ti++) {
            cases++;
            CHECK_CASE(!(!transpose_case(MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, 3, big3, p3[k])));
        }
    EXPECT(cases > 900);
}

/* ------------------------------------------------------------------------------------------ */
/* PAD                                                                                            */

static void test_pad(void)
{
    for (int iter = 0; iter < 20; iter++)
        for (size_t ti = 0; ti < N_MOVE_TYPES; ti++)
            for (int rank = 0; rank <= 6; rank++) {
                int64_t shape[6], oshape[6], pads[12], idx[6];
                for (;;) {
                    random_shape(rank, 5, 800, shape);
                    int64_t n = 1;
                    for (int d = 0; d < rank; d++) {
                        bool zero = rnd() % 3 == 0;
                        pads[2 * d] = zero ? 0 : rnd_in(0, 3);
                        pads[2 * d + 1] = zero ? 0 : rnd_in(0, 3);
                        oshape[d] = shape[d] + pads[2 * d] + pads[2 * d + 1];
                        n *= oshape[d];
                    }
                    if (n <= 8000) break;
                }
                tt in, out, pd, pc;
                int64_t one[1] = {1};
                tt_make(&in, MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, rank, shape);
                tt_make(&out, MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, rank, oshape);
                tt_shape(&pd, 2 * rank, pads);
                tt_make(&pc, MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, 1, one);
                tt_fill_random(&in);
                tt_fill_random(&pc);
                if (iter % 4 == 0) memset(pc.buf, 0, pc.es); /* the memset path */
                memset(out.buf, 0x5A, (size_t)out.t.nelem * out.es);
                uint8_t *exp = (uint8_t *)malloc((size_t)out.t.nelem * in.es);
                for (int64_t i = 0; i < out.t.nelem; i++) {
                    unravel(i, rank, oshape, idx);
                    bool inside = true;
                    for (int d = 0; d < rank; d++) {
                        idx[d] -= pads[2 * d];
                        if (idx[d] < 0 || idx[d] >= shape[d]) inside = false;
                    }
                    const uint8_t *src = inside ? in.buf + (size_t)ravel(rank, shape, idx) * in.es : pc.buf;
                    memcpy(exp + (size_t)i * in.es, src, in.es);
                }
                tt *ins[3] = {&in, &pd, &pc};
                CHECK_CASE(!(run_op(TOSAC_OP_PAD, ins, 3, &out, NULL, NULL) != TOSAC_OK || !same_bytes("pad", &out, exp)));
                free(exp);
                tt_free(&in);
                tt_free(&out);
                tt_free(&pd);
                tt_free(&pc);
            }
}

/* ------------------------------------------------------------------------------------------ */
/* CONCAT                                                                                         */

/* CONCAT of nin inputs of `shape` with sizes[k] along axis, against the element-wise formula. */
static bool concat_case(tosac_dtype dt, bool f64, int rank, const int64_t *shape, int axis, int nin, const int64_t *sizes)
{
    int64_t oshape[6], idx[6];
    memcpy(oshape, shape, (size_t)rank * sizeof(int64_t));
    oshape[axis] = 0;
    for (int k = 0; k < nin; k++) oshape[axis] += sizes[k];
    tt ins_t[5], out;
    tt *ins[5];
    for (int k = 0; k < nin; k++) {
        int64_t s[6];
        memcpy(s, shape, (size_t)rank * sizeof(int64_t));
        s[axis] = sizes[k];
        tt_make(&ins_t[k], dt, f64, rank, s);
        tt_fill_random(&ins_t[k]);
        ins[k] = &ins_t[k];
    }
    tt_make(&out, dt, f64, rank, oshape);
    size_t es = out.es;
    uint8_t *exp = (uint8_t *)malloc((size_t)out.t.nelem * es);
    for (int64_t i = 0; i < out.t.nelem; i++) {
        unravel(i, rank, oshape, idx);
        int k = 0;
        while (idx[axis] >= sizes[k]) idx[axis] -= sizes[k++];
        const int64_t l = ravel(rank, ins_t[k].shape, idx);
        memcpy(exp + (size_t)i * es, ins_t[k].buf + (size_t)l * es, es);
    }
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    memset(a, 0, sizeof a);
    attr_int(a, TOSAC_ATTR_CONCAT_axis, axis);
    bool ok = run_op(TOSAC_OP_CONCAT, ins, (uint32_t)nin, &out, a, NULL) == TOSAC_OK && same_bytes("concat", &out, exp);
    free(exp);
    for (int k = 0; k < nin; k++) tt_free(&ins_t[k]);
    tt_free(&out);
    return ok;
}

static void test_concat(void)
{
    for (int iter = 0; iter < 8; iter++)
        for (size_t ti = 0; ti < N_MOVE_TYPES; ti++)
            for (int rank = 1; rank <= 6; rank++)
                for (int axis = 0; axis < rank; axis++) {
                    int64_t shape[6], sizes[5];
                    int nin = (int)rnd_in(1, 5);
                    random_shape(rank, 5, 600, shape);
                    for (int k = 0; k < nin; k++) sizes[k] = rnd_in(1, 4);
                    CHECK_CASE(concat_case(MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, rank, shape, axis, nin, sizes));
                }
}

/* ------------------------------------------------------------------------------------------ */
/* GATHER / SCATTER                                                                               */

static void test_gather(void)
{
    for (int iter = 0; iter < 40; iter++)
        for (size_t ti = 0; ti < N_MOVE_TYPES; ti++) {
            if (MOVE_TYPES[ti].t == TOSAC_DTYPE_BOOL) continue;
            int64_t N = rnd_in(1, 4), K = rnd_in(1, 9), C = rnd_in(1, 7), W = rnd_in(1, 12);
            int64_t vs[3] = {N, K, C}, is[2] = {N, W}, os[3] = {N, W, C};
            tt v, ix, out;
            tt_make(&v, MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, 3, vs);
            tt_make(&ix, TOSAC_DTYPE_INT32, false, 2, is);
            tt_make(&out, MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, 3, os);
            tt_fill_random(&v);
            int32_t *ip = (int32_t *)(void *)ix.buf;
            for (int64_t i = 0; i < N * W; i++) ip[i] = (int32_t)rnd_in(0, K - 1);
            size_t es = v.es;
            uint8_t *exp = (uint8_t *)malloc((size_t)out.t.nelem * es);
            for (int64_t n = 0; n < N; n++)
                for (int64_t w = 0; w < W; w++)
                    for (int64_t c = 0; c < C; c++) {
                        int64_t k = ip[n * W + w];
                        memcpy(exp + (size_t)((n * W + w) * C + c) * es, v.buf + (size_t)((n * K + k) * C + c) * es, es);
                    }
            tt *ins[2] = {&v, &ix};
            CHECK_CASE(!(run_op(TOSAC_OP_GATHER, ins, 2, &out, NULL, NULL) != TOSAC_OK || !same_bytes("gather", &out, exp)));
            /* out-of-range indices: UNPREDICTABLE */
            int64_t pos = rnd_in(0, N * W - 1);
            int32_t keep = ip[pos];
            ip[pos] = (int32_t)K;
            CHECK_CASE(!(run_op(TOSAC_OP_GATHER, ins, 2, &out, NULL, NULL) != TOSAC_ERR_UNPREDICTABLE));
            ip[pos] = -1;
            CHECK_CASE(!(run_op(TOSAC_OP_GATHER, ins, 2, &out, NULL, NULL) != TOSAC_ERR_UNPREDICTABLE));
            ip[pos] = keep;
            free(exp);
            tt_free(&v);
            tt_free(&ix);
            tt_free(&out);
        }
}

static void test_scatter(void)
{
    for (int iter = 0; iter < 40; iter++)
        for (size_t ti = 0; ti < N_MOVE_TYPES; ti++) {
            if (MOVE_TYPES[ti].t == TOSAC_DTYPE_BOOL) continue;
            int64_t N = rnd_in(1, 4), K = rnd_in(1, 40), C = rnd_in(1, 7), W = rnd_in(1, K);
            int64_t vs[3] = {N, K, C}, is[2] = {N, W}, ins_s[3] = {N, W, C};
            tt vin, ix, input, out;
            tt_make(&vin, MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, 3, vs);
            tt_make(&ix, TOSAC_DTYPE_INT32, false, 2, is);
            tt_make(&input, MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, 3, ins_s);
            tt_make(&out, MOVE_TYPES[ti].t, MOVE_TYPES[ti].f64, 3, vs);
            tt_fill_random(&vin);
            tt_fill_random(&input);
            int32_t *ip = (int32_t *)(void *)ix.buf;
            for (int64_t n = 0; n < N; n++) { /* W distinct indices per batch: a shuffled prefix */
                int32_t perm[40];
                for (int k = 0; k < K; k++) perm[k] = k;
                for (int64_t k = K - 1; k > 0; k--) {
                    int64_t j = rnd_in(0, k);
                    int32_t t = perm[k];
                    perm[k] = perm[j];
                    perm[j] = t;
                }
                for (int64_t w = 0; w < W; w++) ip[n * W + w] = perm[w];
            }
            size_t es = vin.es;
            uint8_t *exp = (uint8_t *)malloc((size_t)out.t.nelem * es);
            memcpy(exp, vin.buf, (size_t)out.t.nelem * es);
            for (int64_t n = 0; n < N; n++)
                for (int64_t w = 0; w < W; w++)
                    for (int64_t c = 0; c < C; c++) {
                        int64_t k = ip[n * W + w];
                        memcpy(exp + (size_t)((n * K + k) * C + c) * es, input.buf + (size_t)((n * W + w) * C + c) * es,
                               es);
                    }
            tt *ins[3] = {&vin, &ix, &input};
            CHECK_CASE(!(kernels_scratch_size(&(tosac_kcall){.op = TOSAC_OP_SCATTER, .n_in = 3, .in = &vin.t}) <
                (size_t)((N * K + 7) / 8)));
            CHECK_CASE(!(run_op(TOSAC_OP_SCATTER, ins, 3, &out, NULL, NULL) != TOSAC_OK || !same_bytes("scatter", &out, exp)));
            /* a repeated index in the same batch: UNPREDICTABLE */
            if (W >= 2) {
                int64_t n = rnd_in(0, N - 1);
                int32_t keep = ip[n * W + 1];
                ip[n * W + 1] = ip[n * W];
                CHECK_CASE(!(run_op(TOSAC_OP_SCATTER, ins, 3, &out, NULL, NULL) != TOSAC_ERR_UNPREDICTABLE));
                ip[n * W + 1] = keep;
            }
            /* the same index in different batches is fine */
            if (N >= 2) {
                int32_t keep = ip[W];
                int64_t j = 0;
                while (j < W && ip[W + j] != ip[0]) j++;
                if (j < W) { /* swap so that batch 1 also starts with ip[0] */
                    ip[W + j] = keep;
                    ip[W] = ip[0];
                }
                CHECK_CASE(!(run_op(TOSAC_OP_SCATTER, ins, 3, &out, NULL, NULL) != TOSAC_OK));
            }
            /* out-of-range: UNPREDICTABLE */
            int64_t pos = rnd_in(0, N * W - 1);
            int32_t keep = ip[pos];
            ip[pos] = (int32_t)K;
            CHECK_CASE(!(run_op(TOSAC_OP_SCATTER, ins, 3, &out, NULL, NULL) != TOSAC_ERR_UNPREDICTABLE));
            ip[pos] = -1;
            CHECK_CASE(!(run_op(TOSAC_OP_SCATTER, ins, 3, &out, NULL, NULL) != TOSAC_ERR_UNPREDICTABLE));
            ip[pos] = keep;
            free(exp);
            tt_free(&vin);
            tt_free(&ix);
            tt_free(&input);
            tt_free(&out);
        }
}

/* ------------------------------------------------------------------------------------------ */
/* Reductions                                                                                     */

/* Value of element i as double (FP types, precise mode) or integer (others). */
static double ld_fp(const tt *x, int64_t i)
{
    if (x->t.f64) return ((const double *)(const void *)x->buf)[i];
    switch (x->t.dtype) {
    case TOSAC_DTYPE_FP32: return ((const float *)(const void *)x->buf)[i];
    case TOSAC_DTYPE_FP16: return tosac_fp16_to_fp32(((const uint16_t *)(const void *)x->buf)[i]);
    case TOSAC_DTYPE_BF16: return tosac_bf16_to_fp32(((const uint16_t *)(const void *)x->buf)[i]);
    default: return 0;
    }
}

static int64_t ld_int(const tt *x, int64_t i)
{
    switch (x->t.dtype) {
    case TOSAC_DTYPE_BOOL: return x->buf[i];
    case TOSAC_DTYPE_INT8: return ((const int8_t *)(const void *)x->buf)[i];
    case TOSAC_DTYPE_INT16: return ((const int16_t *)(const void *)x->buf)[i];
    case TOSAC_DTYPE_INT32: return ((const int32_t *)(const void *)x->buf)[i];
    default: return ((const int64_t *)(const void *)x->buf)[i];
    }
}

/* Stores v (already a value of the storage type, or to be rounded once) into expected buffer. */
static void st_fp(const tt *x, uint8_t *exp, int64_t i, double v)
{
    if (x->t.f64) {
        memcpy(exp + (size_t)i * 8, &v, 8);
        return;
    }
    switch (x->t.dtype) {
    case TOSAC_DTYPE_FP32: {
        float f = (float)v;
        memcpy(exp + (size_t)i * 4, &f, 4);
        break;
    }
    case TOSAC_DTYPE_FP16: {
        uint16_t h = tosac_fp32_to_fp16((float)v);
        memcpy(exp + (size_t)i * 2, &h, 2);
        break;
    }
    default: {
        uint16_t h = tosac_fp32_to_bf16((float)v);
        memcpy(exp + (size_t)i * 2, &h, 2);
        break;
    }
    }
}

static void st_int(const tt *x, uint8_t *exp, int64_t i, int64_t v)
{
    switch (x->es) {
    case 1: exp[i] = (uint8_t)(v & 0xFF); break;
    case 2: {
        int16_t s = (int16_t)v;
        memcpy(exp + (size_t)i * 2, &s, 2);
        break;
    }
    case 4: {
        int32_t s = (int32_t)v;
        memcpy(exp + (size_t)i * 4, &s, 4);
        break;
    }
    default: memcpy(exp + (size_t)i * 8, &v, 8); break;
    }
}

/* Random FP element with occasional NaN, inf and signed zeros (when specials). */
static void fill_fp(tt *x, bool specials, double range)
{
    for (int64_t i = 0; i < x->t.nelem; i++) {
        double v = ((double)(rnd() % 2000001) - 1000000.0) / 1000000.0 * range;
        if (specials) {
            int r = (int)(rnd() % 16);
            if (r == 0) v = NAN;
            if (r == 1) v = -0.0;
            if (r == 2) v = 0.0;
            if (r == 3) v = rnd() & 1 ? INFINITY : -INFINITY;
            if (r == 4) v = -NAN;
        }
        if (x->t.f64) {
            memcpy(x->buf + (size_t)i * 8, &v, 8);
            continue;
        }
        float f = (float)v;
        switch (x->t.dtype) {
        case TOSAC_DTYPE_FP32: memcpy(x->buf + (size_t)i * 4, &f, 4); break;
        case TOSAC_DTYPE_FP16: {
            uint16_t h = tosac_fp32_to_fp16(f);
            memcpy(x->buf + (size_t)i * 2, &h, 2);
            break;
        }
        default: {
            uint16_t h = tosac_fp32_to_bf16(f);
            memcpy(x->buf + (size_t)i * 2, &h, 2);
            break;
        }
        }
    }
}

/* Naive reference of one reduce op over `axis`. Precise mode computes in double, else fp32. */
static void reduce_ref(uint32_t op, const tt *in, int axis, bool ignore, const tt *out, uint8_t *exp)
{
    const int rank = in->t.rank;
    const bool fp = tosac_dtype_is_float(in->t.dtype), dbl = in->t.f64;
    int64_t idx[6];
    for (int64_t o = 0; o < out->t.nelem; o++) {
        unravel(o, rank, out->shape, idx);
        if (fp) {
            double acc; /* holds a float value unless dbl */
            if (op == TOSAC_OP_REDUCE_SUM)
                acc = 0;
            else if (op == TOSAC_OP_REDUCE_PRODUCT)
                acc = 1;
            else if (ignore)
                acc = NAN;
            else
                acc = op == TOSAC_OP_REDUCE_MAX ? -INFINITY : INFINITY;
            for (int64_t k = 0; k < in->shape[axis]; k++) {
                idx[axis] = k;
                double v = ld_fp(in, ravel(rank, in->shape, idx));
                if (op == TOSAC_OP_REDUCE_SUM) {
                    acc = dbl ? acc + v : (double)((float)acc + (float)v);
                } else if (op == TOSAC_OP_REDUCE_PRODUCT) {
                    acc = dbl ? acc * v : (double)((float)acc * (float)v);
                } else {
                    bool an = isnan(acc), vn = isnan(v);
                    if (an || vn) {
                        if (!ignore)
                            acc = dbl ? tosac_fp64_from_bits(0x7FF8000000000000ull) : tosac_fp32_from_bits(0x7FC00000u);
                        else if (an)
                            acc = v;
                    } else if (op == TOSAC_OP_REDUCE_MAX) {
                        if (!(acc >= v)) acc = v;
                    } else {
                        if (v <= acc) acc = v;
                    }
                }
            }
            st_fp(out, exp, o, acc);
        } else {
            int64_t acc;
            switch (op) {
            case TOSAC_OP_REDUCE_ALL: acc = 1; break;
            case TOSAC_OP_REDUCE_ANY: acc = 0; break;
            case TOSAC_OP_REDUCE_SUM: acc = 0; break;
            case TOSAC_OP_REDUCE_MAX: acc = INT64_MIN; break;
            default: acc = INT64_MAX; break;
            }
            for (int64_t k = 0; k < in->shape[axis]; k++) {
                idx[axis] = k;
                int64_t v = ld_int(in, ravel(rank, in->shape, idx));
                switch (op) {
                case TOSAC_OP_REDUCE_ALL: acc = acc && v; break;
                case TOSAC_OP_REDUCE_ANY: acc = acc || v; break;
                case TOSAC_OP_REDUCE_SUM: acc += v; break;
                case TOSAC_OP_REDUCE_MAX: acc = v > acc ? v : acc; break;
                default: acc = v < acc ? v : acc; break;
                }
            }
            st_int(out, exp, o, acc);
        }
    }
}

/* Is element i of an FP tensor (or expected buffer laid out like it) a NaN? */
static bool is_nan_at(const tt *x, const uint8_t *buf, int64_t i)
{
    if (x->t.f64) {
        double d;
        memcpy(&d, buf + (size_t)i * 8, 8);
        return isnan(d);
    }
    if (x->t.dtype == TOSAC_DTYPE_FP32) {
        float f;
        memcpy(&f, buf + (size_t)i * 4, 4);
        return isnan(f);
    }
    uint16_t h;
    memcpy(&h, buf + (size_t)i * 2, 2);
    return x->t.dtype == TOSAC_DTYPE_FP16 ? (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) : (h & 0x7F80u) == 0x7F80u && (h & 0x7Fu);
}

/*
 * Arithmetic results (SUM, PRODUCT): ISO C leaves the sign and payload of a NaN produced by an
 * operation unspecified (the compiler may commute operands), so any NaN matches any NaN; every
 * other element must be bit-exact.
 */
static bool same_bytes_nan_any(const char *what, const tt *out, const uint8_t *exp)
{
    uint8_t *fixed = (uint8_t *)malloc((size_t)out->t.nelem * out->es);
    memcpy(fixed, exp, (size_t)out->t.nelem * out->es);
    for (int64_t i = 0; i < out->t.nelem; i++)
        if (is_nan_at(out, out->buf, i) && is_nan_at(out, exp, i))
            memcpy(fixed + (size_t)i * out->es, out->buf + (size_t)i * out->es, out->es);
    bool ok = same_bytes(what, out, fixed);
    free(fixed);
    return ok;
}

/* Every reduce row on random data, every rank 1..6 and axis. */
/* test_reduce_random's shapes of ranks 1 to 3 large (split over workers: kernels_run.h) */
static bool reduce_large;

static void test_reduce_random(void)
{
    static const struct {
        uint32_t op;
        tosac_dtype t;
        bool f64;
    } rows[] = {
        {TOSAC_OP_REDUCE_ALL, TOSAC_DTYPE_BOOL, false},      {TOSAC_OP_REDUCE_ANY, TOSAC_DTYPE_BOOL, false},
        {TOSAC_OP_REDUCE_MAX, TOSAC_DTYPE_INT8, false},      {TOSAC_OP_REDUCE_MAX, TOSAC_DTYPE_INT16, false},
        {TOSAC_OP_REDUCE_MAX, TOSAC_DTYPE_INT32, false},     {TOSAC_OP_REDUCE_MAX, TOSAC_DTYPE_FP16, false},
        {TOSAC_OP_REDUCE_MAX, TOSAC_DTYPE_BF16, false},      {TOSAC_OP_REDUCE_MAX, TOSAC_DTYPE_FP32, false},
        {TOSAC_OP_REDUCE_MAX, TOSAC_DTYPE_FP32, true},       {TOSAC_OP_REDUCE_MIN, TOSAC_DTYPE_INT8, false},
        {TOSAC_OP_REDUCE_MIN, TOSAC_DTYPE_INT16, false},     {TOSAC_OP_REDUCE_MIN, TOSAC_DTYPE_INT32, false},
        {TOSAC_OP_REDUCE_MIN, TOSAC_DTYPE_FP16, false},      {TOSAC_OP_REDUCE_MIN, TOSAC_DTYPE_BF16, false},
        {TOSAC_OP_REDUCE_MIN, TOSAC_DTYPE_FP32, false},      {TOSAC_OP_REDUCE_MIN, TOSAC_DTYPE_FP16, true},
        {TOSAC_OP_REDUCE_PRODUCT, TOSAC_DTYPE_FP16, false},  {TOSAC_OP_REDUCE_PRODUCT, TOSAC_DTYPE_BF16, false},
        {TOSAC_OP_REDUCE_PRODUCT, TOSAC_DTYPE_FP32, false},  {TOSAC_OP_REDUCE_PRODUCT, TOSAC_DTYPE_FP32, true},
        {TOSAC_OP_REDUCE_SUM, TOSAC_DTYPE_INT32, false},     {TOSAC_OP_REDUCE_SUM, TOSAC_DTYPE_FP16, false},
        {TOSAC_OP_REDUCE_SUM, TOSAC_DTYPE_BF16, false},      {TOSAC_OP_REDUCE_SUM, TOSAC_DTYPE_FP32, false},
        {TOSAC_OP_REDUCE_SUM, TOSAC_DTYPE_FP32, true},       {TOSAC_OP_REDUCE_SUM, TOSAC_DTYPE_BF16, true},
    };
    int cases = 0;
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        for (int iter = 0; iter < 6; iter++)
            for (int rank = 1; rank <= 6; rank++)
                for (int axis = 0; axis < rank; axis++) {
                    int64_t shape[6], oshape[6];
                    if (iter == 5 && rank == 3) { /* inner rows longer than the kernel's chunk */
                        shape[0] = 2;
                        shape[1] = 3;
                        shape[2] = 601;
                    } else if (reduce_large && rank <= 3) { /* enough to be split over workers */
                        static const int64_t big[3][3] = {{40000, 1, 1}, {300, 130, 1}, {3, 37, 333}};
                        memcpy(shape, big[rank - 1], sizeof big[0]);
                    } else {
                        random_shape(rank, 6, 3000, shape);
                    }
                    memcpy(oshape, shape, sizeof shape);
                    oshape[axis] = 1;
                    tt in, out;
                    tt_make(&in, rows[r].t, rows[r].f64, rank, shape);
                    tt_make(&out, rows[r].t, rows[r].f64, rank, oshape);
                    const bool fp = tosac_dtype_is_float(rows[r].t);
                    const bool ignore = iter % 2 == 1;
                    if (fp) {
                        bool mm = rows[r].op == TOSAC_OP_REDUCE_MAX || rows[r].op == TOSAC_OP_REDUCE_MIN;
                        fill_fp(&in, mm || iter == 4, rows[r].op == TOSAC_OP_REDUCE_PRODUCT ? 2.0 : 100.0);
                    } else {
                        tt_fill_random(&in);
                        if (rows[r].t == TOSAC_DTYPE_INT32 && rows[r].op == TOSAC_OP_REDUCE_SUM)
                            for (int64_t i = 0; i < in.t.nelem; i++)
                                ((int32_t *)(void *)in.buf)[i] = (int32_t)rnd_in(-1000000, 1000000);
                        if (rows[r].t == TOSAC_DTYPE_BOOL && iter % 3 == 2) /* mostly ones / zeros */
                            for (int64_t i = 0; i < in.t.nelem; i++) in.buf[i] = rnd() % 8 != 0;
                    }
                    uint8_t *exp = (uint8_t *)calloc((size_t)out.t.nelem, out.es);
                    reduce_ref(rows[r].op, &in, axis, ignore, &out, exp);
                    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
                    memset(a, 0, sizeof a);
                    attr_int(a, 0, axis);
                    if (rows[r].op == TOSAC_OP_REDUCE_MAX || rows[r].op == TOSAC_OP_REDUCE_MIN)
                        attr_int(a, 1, ignore ? TOSAC_NAN_IGNORE : TOSAC_NAN_PROPAGATE);
                    tt *ins[1] = {&in};
                    cases++;
                    const bool arith = fp && (rows[r].op == TOSAC_OP_REDUCE_SUM || rows[r].op == TOSAC_OP_REDUCE_PRODUCT);
                    t_checks++;
                    if (run_op(rows[r].op, ins, 1, &out, a, NULL) != TOSAC_OK ||
                        !(arith ? same_bytes_nan_any("reduce", &out, exp) : same_bytes("reduce", &out, exp))) {
                        fprintf(stderr, "  op %u dtype %d f64 %d rank %d axis %d\n", (unsigned)rows[r].op, (int)rows[r].t,
                                (int)rows[r].f64, rank, axis);
                        t_failures++;
                    }
                    free(exp);
                    tt_free(&in);
                    tt_free(&out);
                }
    EXPECT(cases > 2000);
}

/* Runs a 1-D fp32 reduce of vals[n] and returns the output bits. */
static uint32_t reduce1_f32(uint32_t op, const float *vals, int n, int64_t nan_mode)
{
    int64_t s[1] = {n}, o[1] = {1};
    tt in, out;
    tt_make(&in, TOSAC_DTYPE_FP32, false, 1, s);
    tt_make(&out, TOSAC_DTYPE_FP32, false, 1, o);
    memcpy(in.buf, vals, (size_t)n * 4);
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    memset(a, 0, sizeof a);
    attr_int(a, 0, 0);
    if (nan_mode) attr_int(a, 1, nan_mode);
    tt *ins[1] = {&in};
    uint32_t r = 0xDEADBEEFu;
    if (run_op(op, ins, 1, &out, a, NULL) == TOSAC_OK) memcpy(&r, out.buf, 4);
    tt_free(&in);
    tt_free(&out);
    return r;
}

static void test_reduce_nan(void)
{
    const float qn = tosac_fp32_from_bits(0x7FC00000u), nn = tosac_fp32_from_bits(0xFFC00001u);
    const uint32_t QN = 0x7FC00000u;
    const float a[3] = {1.0f, qn, 3.0f}, b[3] = {qn, 2.0f, qn}, c[2] = {nn, qn}, d[3] = {-1.0f, -5.0f, 4.0f};
    EXPECT_EQ_I(reduce1_f32(TOSAC_OP_REDUCE_MAX, a, 3, TOSAC_NAN_PROPAGATE), QN);
    EXPECT_EQ_I(reduce1_f32(TOSAC_OP_REDUCE_MIN, a, 3, TOSAC_NAN_PROPAGATE), QN);
    EXPECT_EQ_I(reduce1_f32(TOSAC_OP_REDUCE_MAX, a, 3, 0), QN); /* absent nan_mode: PROPAGATE */
    EXPECT_EQ_I(reduce1_f32(TOSAC_OP_REDUCE_MAX, a, 3, TOSAC_NAN_IGNORE), tosac_fp32_bits(3.0f));
    EXPECT_EQ_I(reduce1_f32(TOSAC_OP_REDUCE_MIN, a, 3, TOSAC_NAN_IGNORE), tosac_fp32_bits(1.0f));
    EXPECT_EQ_I(reduce1_f32(TOSAC_OP_REDUCE_MAX, b, 3, TOSAC_NAN_IGNORE), tosac_fp32_bits(2.0f));
    EXPECT_EQ_I(reduce1_f32(TOSAC_OP_REDUCE_MIN, b, 3, TOSAC_NAN_IGNORE), tosac_fp32_bits(2.0f));
    EXPECT_EQ_I(reduce1_f32(TOSAC_OP_REDUCE_MAX, b, 3, TOSAC_NAN_PROPAGATE), QN);
    /* all NaN with IGNORE: NaN (the last one, as the reference model's reducer leaves it) */
    EXPECT_EQ_I(reduce1_f32(TOSAC_OP_REDUCE_MAX, c, 2, TOSAC_NAN_IGNORE), QN);
    EXPECT(isnan(tosac_fp32_from_bits(reduce1_f32(TOSAC_OP_REDUCE_MIN, c, 2, TOSAC_NAN_IGNORE))));
    EXPECT_EQ_I(reduce1_f32(TOSAC_OP_REDUCE_MAX, d, 3, TOSAC_NAN_PROPAGATE), tosac_fp32_bits(4.0f));
    EXPECT_EQ_I(reduce1_f32(TOSAC_OP_REDUCE_MIN, d, 3, TOSAC_NAN_IGNORE), tosac_fp32_bits(-5.0f));
    /* inf */
    const float e[2] = {-INFINITY, -INFINITY};
    EXPECT_EQ_I(reduce1_f32(TOSAC_OP_REDUCE_MAX, e, 2, TOSAC_NAN_IGNORE), tosac_fp32_bits(-INFINITY));
    /* fp16 NaN propagation through the fp32 compare */
    int64_t s[2] = {2, 2}, o[2] = {1, 2};
    tt in, out;
    tt_make(&in, TOSAC_DTYPE_FP16, false, 2, s);
    tt_make(&out, TOSAC_DTYPE_FP16, false, 2, o);
    uint16_t hv[4] = {0x7E00, 0x3C00, 0x4000, 0xFC00}; /* [[NaN, 1], [2, -inf]] */
    memcpy(in.buf, hv, sizeof hv);
    tosac_attr_val at[TOSAC_ATTR_MAX_FIELDS];
    memset(at, 0, sizeof at);
    attr_int(at, 0, 0);
    attr_int(at, 1, TOSAC_NAN_PROPAGATE);
    tt *ins[1] = {&in};
    EXPECT_EQ_I(run_op(TOSAC_OP_REDUCE_MAX, ins, 1, &out, at, NULL), TOSAC_OK);
    EXPECT_EQ_I(((uint16_t *)(void *)out.buf)[0], 0x7E00);
    EXPECT_EQ_I(((uint16_t *)(void *)out.buf)[1], 0x3C00);
    attr_int(at, 1, TOSAC_NAN_IGNORE);
    EXPECT_EQ_I(run_op(TOSAC_OP_REDUCE_MAX, ins, 1, &out, at, NULL), TOSAC_OK);
    EXPECT_EQ_I(((uint16_t *)(void *)out.buf)[0], 0x4000);
    EXPECT_EQ_I(run_op(TOSAC_OP_REDUCE_MIN, ins, 1, &out, at, NULL), TOSAC_OK);
    EXPECT_EQ_I(((uint16_t *)(void *)out.buf)[0], 0x4000);
    EXPECT_EQ_I(((uint16_t *)(void *)out.buf)[1], 0xFC00);
    tt_free(&in);
    tt_free(&out);
}

static void test_reduce_sum_overflow(void)
{
    int64_t s[2] = {3, 2}, o[2] = {1, 2};
    tt in, out;
    tt_make(&in, TOSAC_DTYPE_INT32, false, 2, s);
    tt_make(&out, TOSAC_DTYPE_INT32, false, 2, o);
    int32_t *v = (int32_t *)(void *)in.buf;
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    memset(a, 0, sizeof a);
    attr_int(a, TOSAC_ATTR_REDUCE_SUM_axis, 0);
    tt *ins[1] = {&in};
    const char *why = NULL;
    /* column 0 reaches INT32_MAX exactly; column 1 stays small */
    int32_t ok[6] = {INT32_MAX - 10, 1, 5, 2, 5, -3};
    memcpy(v, ok, sizeof ok);
    EXPECT_EQ_I(run_op(TOSAC_OP_REDUCE_SUM, ins, 1, &out, a, NULL), TOSAC_OK);
    EXPECT_EQ_I(((int32_t *)(void *)out.buf)[0], INT32_MAX);
    EXPECT_EQ_I(((int32_t *)(void *)out.buf)[1], 0);
    /* final sum in range, but a partial sum overflows: still UNPREDICTABLE (every step REQUIREs) */
    int32_t part[6] = {INT32_MAX, 0, 1, 0, -5, 0};
    memcpy(v, part, sizeof part);
    EXPECT_EQ_I(run_op(TOSAC_OP_REDUCE_SUM, ins, 1, &out, a, &why), TOSAC_ERR_UNPREDICTABLE);
    EXPECT(why != NULL);
    int32_t neg[6] = {0, INT32_MIN, 0, -1, 0, 7};
    memcpy(v, neg, sizeof neg);
    EXPECT_EQ_I(run_op(TOSAC_OP_REDUCE_SUM, ins, 1, &out, a, NULL), TOSAC_ERR_UNPREDICTABLE);
    int32_t minok[6] = {0, INT32_MIN, 0, 1, 0, -1};
    memcpy(v, minok, sizeof minok);
    EXPECT_EQ_I(run_op(TOSAC_OP_REDUCE_SUM, ins, 1, &out, a, NULL), TOSAC_OK);
    EXPECT_EQ_I(((int32_t *)(void *)out.buf)[1], INT32_MIN);
    /* reducing the inner axis */
    attr_int(a, TOSAC_ATTR_REDUCE_SUM_axis, 1);
    int64_t o2[2] = {3, 1};
    tt out2;
    tt_make(&out2, TOSAC_DTYPE_INT32, false, 2, o2);
    int32_t inner[6] = {1, 2, INT32_MAX, 1, -3, 4};
    memcpy(v, inner, sizeof inner);
    EXPECT_EQ_I(run_op(TOSAC_OP_REDUCE_SUM, ins, 1, &out2, a, NULL), TOSAC_ERR_UNPREDICTABLE);
    inner[3] = 0;
    memcpy(v, inner, sizeof inner);
    EXPECT_EQ_I(run_op(TOSAC_OP_REDUCE_SUM, ins, 1, &out2, a, NULL), TOSAC_OK);
    EXPECT_EQ_I(((int32_t *)(void *)out2.buf)[1], INT32_MAX);
    tt_free(&in);
    tt_free(&out);
    tt_free(&out2);
    /* 45 positions per row (vector builds: a block of 32, one of 8, 5 left), 3 rows summed, 4 outer
       indices: a partial sum overflowing in one position of each part fails; sums reaching the
       int32 limits exactly through a partial sum at the other limit pass, against int64 sums */
    int64_t ws[3] = {4, 3, 45}, wo[3] = {4, 1, 45};
    tt_make(&in, TOSAC_DTYPE_INT32, false, 3, ws);
    tt_make(&out, TOSAC_DTYPE_INT32, false, 3, wo);
    v = (int32_t *)(void *)in.buf;
    attr_int(a, TOSAC_ATTR_REDUCE_SUM_axis, 1);
    static const int64_t lanes[] = {3, 31, 36, 43, 44};
    for (size_t li = 0; li < sizeof lanes / sizeof lanes[0]; li++)
        for (int fail = 0; fail < 2; fail++) {
            for (int64_t i = 0; i < in.t.nelem; i++) v[i] = (int32_t)rnd_in(-1000000, 1000000);
            const int64_t o0 = (int64_t)li % 4, at = o0 * 135 + lanes[li];
            const int32_t sign = li % 2 ? -1 : 1;
            /* INT32_MAX, then -INT32_MAX: the partial sum stays at the limit; with fail, one more */
            v[at] = sign > 0 ? INT32_MAX : INT32_MIN, v[at + 45] = fail ? sign : 0, v[at + 90] = sign > 0 ? -7 : 7;
            int64_t want[180];
            for (int64_t q = 0; q < 4; q++)
                for (int64_t j = 0; j < 45; j++) want[q * 45 + j] = (int64_t)v[q * 135 + j] + v[q * 135 + 45 + j] + v[q * 135 + 90 + j];
            tosac_status st = run_op(TOSAC_OP_REDUCE_SUM, ins, 1, &out, a, NULL);
            EXPECT_EQ_I(st, fail ? TOSAC_ERR_UNPREDICTABLE : TOSAC_OK);
            for (int64_t i = 0; !fail && i < 180; i++) EXPECT_EQ_I(((int32_t *)(void *)out.buf)[i], want[i]);
        }
    tt_free(&in);
    tt_free(&out);
}

/* ------------------------------------------------------------------------------------------ */
/* RESIZE                                                                                         */

/* floor(a / b), b > 0, by stepping: independent of the kernel's helper. */
static int64_t floor_div_naive(int64_t a, int64_t b)
{
    int64_t q = 0;
    while (q * b > a) q--;
    while ((q + 1) * b <= a) q++;
    return q;
}

typedef struct rz_case {
    int64_t N, IH, IW, C, OH, OW;
    int64_t scale[4], offset[2], border[2];
    int mode;
} rz_case;

/* Spec pseudocode (TOSA.md §B.3 RESIZE), one output element at a time. */
static void resize_ref(const rz_case *k, const tt *in, const tt *out, uint8_t *exp)
{
    const bool fp = tosac_dtype_is_float(in->t.dtype), dbl = in->t.f64;
    for (int64_t n = 0; n < k->N; n++)
        for (int64_t oy = 0; oy < k->OH; oy++)
            for (int64_t ox = 0; ox < k->OW; ox++)
                for (int64_t c = 0; c < k->C; c++) {
                    const int64_t y = oy * k->scale[1] + k->offset[0];
                    const int64_t x = ox * k->scale[3] + k->offset[1];
                    const int64_t iy = floor_div_naive(y, k->scale[0]);
                    const int64_t ix = floor_div_naive(x, k->scale[2]);
                    const int64_t iy0 = iy < 0 ? 0 : iy, ix0 = ix < 0 ? 0 : ix;
                    const int64_t iy1 = iy + 1 > k->IH - 1 ? k->IH - 1 : iy + 1;
                    const int64_t ix1 = ix + 1 > k->IW - 1 ? k->IW - 1 : ix + 1;
                    const int64_t o = ((n * k->OH + oy) * k->OW + ox) * k->C + c;
#define AT(yy, xx) (((n * k->IH + (yy)) * k->IW + (xx)) * k->C + c)
                    if (!fp) {
                        const int64_t dy = y - iy * k->scale[0], dx = x - ix * k->scale[2];
                        if (k->mode == TOSAC_RESIZE_NEAREST) {
                            const int64_t sy = 2 * dy >= k->scale[0] ? iy1 : iy0;
                            const int64_t sx = 2 * dx >= k->scale[2] ? ix1 : ix0;
                            st_int(out, exp, o, ld_int(in, AT(sy, sx)));
                        } else {
                            const int64_t uy = k->scale[0], ux = k->scale[2];
                            int64_t acc = ld_int(in, AT(iy0, ix0)) * (uy - dy) * (ux - dx);
                            acc += ld_int(in, AT(iy0, ix1)) * (uy - dy) * dx;
                            acc += ld_int(in, AT(iy1, ix0)) * dy * (ux - dx);
                            acc += ld_int(in, AT(iy1, ix1)) * dy * dx;
                            st_int(out, exp, o, acc);
                        }
                    } else if (dbl) {
                        const double dy = (double)y / (double)k->scale[0] - (double)iy;
                        const double dx = (double)x / (double)k->scale[2] - (double)ix;
                        if (k->mode == TOSAC_RESIZE_NEAREST) {
                            st_fp(out, exp, o, ld_fp(in, AT(dy >= 0.5 ? iy1 : iy0, dx >= 0.5 ? ix1 : ix0)));
                        } else {
                            double acc = ld_fp(in, AT(iy0, ix0)) * (1.0 - dy);
                            acc = acc * (1.0 - dx);
                            double t = ld_fp(in, AT(iy0, ix1)) * (1.0 - dy);
                            t = t * dx;
                            acc = acc + t;
                            t = ld_fp(in, AT(iy1, ix0)) * dy;
                            t = t * (1.0 - dx);
                            acc = acc + t;
                            t = ld_fp(in, AT(iy1, ix1)) * dy;
                            t = t * dx;
                            acc = acc + t;
                            st_fp(out, exp, o, acc);
                        }
                    } else { /* fp32 arithmetic, as the reference model does for resize_t = fp32 */
                        const float fy = (float)y / (float)k->scale[0], fx = (float)x / (float)k->scale[2];
                        const float dy = fy - (float)iy, dx = fx - (float)ix;
                        if (k->mode == TOSAC_RESIZE_NEAREST) {
                            st_fp(out, exp, o, ld_fp(in, AT(dy >= 0.5f ? iy1 : iy0, dx >= 0.5f ? ix1 : ix0)));
                        } else {
                            const float one = 1.0f;
                            float acc = (float)ld_fp(in, AT(iy0, ix0)) * (one - dy);
                            acc = acc * (one - dx);
                            float t = (float)ld_fp(in, AT(iy0, ix1)) * (one - dy);
                            t = t * dx;
                            acc = acc + t;
                            t = (float)ld_fp(in, AT(iy1, ix0)) * dy;
                            t = t * (one - dx);
                            acc = acc + t;
                            t = (float)ld_fp(in, AT(iy1, ix1)) * dy;
                            t = t * dx;
                            acc = acc + t;
                            st_fp(out, exp, o, acc);
                        }
                    }
#undef AT
                }
}

static tosac_status resize_run(const rz_case *k, tt *in, tt *out)
{
    tt sc, of, bo;
    tt_shape(&sc, 4, k->scale);
    tt_shape(&of, 2, k->offset);
    tt_shape(&bo, 2, k->border);
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    memset(a, 0, sizeof a);
    attr_int(a, TOSAC_ATTR_RESIZE_mode, k->mode);
    tt *ins[4] = {in, &sc, &of, &bo};
    tosac_status s = run_op(TOSAC_OP_RESIZE, ins, 4, out, a, NULL);
    tt_free(&sc);
    tt_free(&of);
    tt_free(&bo);
    return s;
}

/* TOSA.md §B.4: i8 2x2 -> 4x4, scale [4,2,4,2], offset [-1,-1], border [1,1]. */
static void test_resize_spot(void)
{
    rz_case k = {1, 2, 2, 1, 4, 4, {4, 2, 4, 2}, {-1, -1}, {1, 1}, TOSAC_RESIZE_BILINEAR};
    int64_t is[4] = {1, 2, 2, 1}, os[4] = {1, 4, 4, 1};
    tt in, o32, o8;
    tt_make(&in, TOSAC_DTYPE_INT8, false, 4, is);
    tt_make(&o32, TOSAC_DTYPE_INT32, false, 4, os);
    tt_make(&o8, TOSAC_DTYPE_INT8, false, 4, os);
    const int8_t v[4] = {0, 10, 20, 30};
    memcpy(in.buf, v, 4);
    EXPECT_EQ_I(resize_run(&k, &in, &o32), TOSAC_OK);
    const int32_t *r = (const int32_t *)(void *)o32.buf;
    EXPECT_EQ_I(r[0], 0);
    EXPECT_EQ_I(r[1], 40);
    EXPECT_EQ_I(r[2], 120);
    EXPECT_EQ_I(r[3], 160);
    k.mode = TOSAC_RESIZE_NEAREST;
    EXPECT_EQ_I(resize_run(&k, &in, &o8), TOSAC_OK);
    const int8_t *q = (const int8_t *)(void *)o8.buf;
    EXPECT_EQ_I(q[0], 0);
    EXPECT_EQ_I(q[1], 0);
    EXPECT_EQ_I(q[2], 10);
    EXPECT_EQ_I(q[3], 10);
    /* the whole 4x4 against the naive transcription too */
    uint8_t exp[64];
    resize_ref(&k, &in, &o8, exp);
    EXPECT(same_bytes("resize spot nearest", &o8, exp));
    k.mode = TOSAC_RESIZE_BILINEAR;
    resize_ref(&k, &in, &o32, exp);
    EXPECT_EQ_I(resize_run(&k, &in, &o32), TOSAC_OK);
    EXPECT(same_bytes("resize spot bilinear", &o32, exp));
    /* wrong output height: ERROR_IF */
    int64_t bad_os[4] = {1, 5, 4, 1};
    tt ob;
    tt_make(&ob, TOSAC_DTYPE_INT32, false, 4, bad_os);
    rz_case kb = k;
    kb.OH = 5;
    EXPECT_EQ_I(resize_run(&kb, &in, &ob), TOSAC_ERR_TOSA_ERROR);
    tt_free(&ob);
    tt_free(&in);
    tt_free(&o32);
    tt_free(&o8);
}

/* A random legal parameter set (scale/offset/border ERROR_IF rules, exact output size). */
static void random_resize(rz_case *k)
{
    for (;;) {
        k->N = rnd_in(1, 2);
        k->IH = rnd_in(1, 6);
        k->IW = rnd_in(1, 6);
        k->C = rnd_in(1, 5);
        bool ok = true;
        for (int a = 0; a < 2; a++) {
            const int64_t in_dim = a == 0 ? k->IH : k->IW;
            const int64_t sn = rnd() % 8 == 0 ? rnd_in(1, 2048) : rnd_in(1, 8);
            const int64_t sd = rnd() % 2 ? rnd_in(1, sn) : rnd_in(1, 16 * sn - 1);
            const int64_t off = rnd_in(-sn, 16 * sn - 1 < 3 * sn ? 16 * sn - 1 : 3 * sn);
            const int64_t num0 = (in_dim - 1) * sn - off;
            /* borders b in [-16 sn, sn) with num0 + b >= 0 and divisible by sd */
            int64_t lo = -16 * sn > -num0 ? -16 * sn : -num0;
            int64_t first = lo + ((sd - (num0 + lo) % sd) % sd + sd) % sd;
            if ((num0 + first) % sd != 0 || first >= sn) {
                ok = false;
                break;
            }
            const int64_t count = (sn - 1 - first) / sd + 1;
            const int64_t b = first + rnd_in(0, count - 1) * sd;
            const int64_t odim = (num0 + b) / sd + 1;
            if (odim > 40) {
                ok = false;
                break;
            }
            k->scale[2 * a] = sn;
            k->scale[2 * a + 1] = sd;
            k->offset[a] = off;
            k->border[a] = b;
            if (a == 0)
                k->OH = odim;
            else
                k->OW = odim;
        }
        if (ok) return;
    }
}

static void test_resize_random(void)
{
    static const struct {
        tosac_dtype in, out;
        bool f64;
        int mode;
    } rows[] = {
        {TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT32, false, TOSAC_RESIZE_BILINEAR},
        {TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT8, false, TOSAC_RESIZE_NEAREST},
        {TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT48, false, TOSAC_RESIZE_BILINEAR},
        {TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT16, false, TOSAC_RESIZE_NEAREST},
        {TOSAC_DTYPE_FP16, TOSAC_DTYPE_FP16, false, TOSAC_RESIZE_BILINEAR},
        {TOSAC_DTYPE_FP16, TOSAC_DTYPE_FP16, false, TOSAC_RESIZE_NEAREST},
        {TOSAC_DTYPE_BF16, TOSAC_DTYPE_BF16, false, TOSAC_RESIZE_BILINEAR},
        {TOSAC_DTYPE_BF16, TOSAC_DTYPE_BF16, false, TOSAC_RESIZE_NEAREST},
        {TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32, false, TOSAC_RESIZE_BILINEAR},
        {TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32, false, TOSAC_RESIZE_NEAREST},
        {TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP32, true, TOSAC_RESIZE_BILINEAR},
        {TOSAC_DTYPE_FP16, TOSAC_DTYPE_FP16, true, TOSAC_RESIZE_NEAREST},
    };
    int cases = 0, far = 0;
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        for (int iter = 0; iter < 150; iter++) {
            rz_case k;
            random_resize(&k);
            k.mode = rows[r].mode;
            int64_t is[4] = {k.N, k.IH, k.IW, k.C}, os[4] = {k.N, k.OH, k.OW, k.C};
            tt in, out;
            tt_make(&in, rows[r].in, rows[r].f64, 4, is);
            tt_make(&out, rows[r].out, rows[r].f64, 4, os);
            if (tosac_dtype_is_float(rows[r].in))
                fill_fp(&in, false, 50.0);
            else
                tt_fill_random(&in);
            uint8_t *exp = (uint8_t *)calloc((size_t)out.t.nelem, out.es);
            resize_ref(&k, &in, &out, exp);
            cases++;
            t_checks++;
            if (resize_run(&k, &in, &out) != TOSAC_OK || !same_bytes("resize", &out, exp)) {
                fprintf(stderr, "  row %zu: IH %lld IW %lld scale [%lld,%lld,%lld,%lld] offset [%lld,%lld] border [%lld,%lld]\n",
                        r, (long long)k.IH, (long long)k.IW, (long long)k.scale[0], (long long)k.scale[1],
                        (long long)k.scale[2], (long long)k.scale[3], (long long)k.offset[0], (long long)k.offset[1],
                        (long long)k.border[0], (long long)k.border[1]);
                t_failures++;
            }
            /* FP BILINEAR sanity: within the RELATIVE compliance bound of an exact fp64 evaluation */
            if (tosac_dtype_is_float(rows[r].in) && k.mode == TOSAC_RESIZE_BILINEAR) {
                tt in64, out64;
                tt_make(&in64, rows[r].in, true, 4, is);
                tt_make(&out64, rows[r].in, true, 4, os);
                double mx = 0;
                for (int64_t i = 0; i < in.t.nelem; i++) {
                    double v = ld_fp(&in, i);
                    ((double *)(void *)in64.buf)[i] = v;
                    mx = fabs(v) > mx ? fabs(v) : mx;
                }
                uint8_t *e64 = (uint8_t *)calloc((size_t)out.t.nelem, 8);
                resize_ref(&k, &in64, &out64, e64);
                for (int64_t i = 0; i < out.t.nelem; i++) {
                    double ref;
                    memcpy(&ref, e64 + (size_t)i * 8, 8);
                    if (fabs(ld_fp(&out, i) - ref) > mx * 0.006 + 1e-30) far++;
                }
                free(e64);
                tt_free(&in64);
                tt_free(&out64);
            }
            free(exp);
            tt_free(&in);
            tt_free(&out);
        }
    EXPECT_EQ_I(far, 0);
    EXPECT(cases == 150 * (int)(sizeof rows / sizeof rows[0]));
}

/* ------------------------------------------------------------------------------------------ */
/* Data-dependent ERROR_IF paths the validator normally catches first                             */

static void test_errors(void)
{
    int64_t s[2] = {3, 4};
    tt in, out, st, sz;
    tt_make(&in, TOSAC_DTYPE_INT8, false, 2, s);
    tt_make(&out, TOSAC_DTYPE_INT8, false, 2, s);
    const int64_t start[2] = {1, 0}, size[2] = {3, 4};
    tt_shape(&st, 2, start);
    tt_shape(&sz, 2, size);
    tt *ins[3] = {&in, &st, &sz};
    EXPECT_EQ_I(run_op(TOSAC_OP_SLICE, ins, 3, &out, NULL, NULL), TOSAC_ERR_TOSA_ERROR);
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    memset(a, 0, sizeof a);
    attr_int(a, TOSAC_ATTR_REVERSE_axis, 2);
    EXPECT_EQ_I(run_op(TOSAC_OP_REVERSE, ins, 1, &out, a, NULL), TOSAC_ERR_TOSA_ERROR);
    tt_free(&in);
    tt_free(&out);
    tt_free(&st);
    tt_free(&sz);
}

/* Copies large enough to be split over workers (pieces of 32 KB): an NCHW input to NHWC, a
   channel shuffle, 2-D / 4-D transposes with odd edges, a squeezenet CONCAT, a large SLICE. */
static void test_layout_large(void)
{
    static const int32_t nhwc[4] = {0, 2, 3, 1}, shuf[5] = {0, 1, 2, 4, 3}, p10[2] = {1, 0}, p4[4] = {3, 1, 0, 2};
    const int64_t in3[4] = {1, 3, 224, 223}, sh5[5] = {1, 29, 31, 2, 58}, m2[2] = {701, 333}, m4[4] = {5, 37, 41, 23};
    for (size_t ti = 0; ti < N_MOVE_TYPES; ti++) {
        tosac_dtype dt = MOVE_TYPES[ti].t;
        bool f64 = MOVE_TYPES[ti].f64;
        CHECK_CASE(transpose_case(dt, f64, 4, in3, nhwc));
        CHECK_CASE(transpose_case(dt, f64, 5, sh5, shuf));
        CHECK_CASE(transpose_case(dt, f64, 2, m2, p10));
        CHECK_CASE(transpose_case(dt, f64, 4, m4, p4));
        const int64_t sq[4] = {1, 55, 57, 1}, sizes[3] = {64, 64, 3};
        CHECK_CASE(concat_case(dt, f64, 4, sq, 3, 3, sizes));
        const int64_t ax1[3] = {1, 97, 1}, sz1[2] = {300, 211};
        CHECK_CASE(concat_case(dt, f64, 3, ax1, 2, 2, sz1));
    }
    /* SLICE of a [4][300][250] tensor */
    tt in, out, st, sz;
    const int64_t shape[3] = {4, 300, 250}, start[3] = {1, 7, 3}, size[3] = {3, 290, 241};
    tt_make(&in, TOSAC_DTYPE_FP32, false, 3, shape);
    tt_make(&out, TOSAC_DTYPE_FP32, false, 3, size);
    tt_shape(&st, 3, start);
    tt_shape(&sz, 3, size);
    tt_fill_random(&in);
    uint8_t *exp = (uint8_t *)malloc((size_t)out.t.nelem * in.es);
    int64_t idx[3];
    for (int64_t i = 0; i < out.t.nelem; i++) {
        unravel(i, 3, size, idx);
        for (int d = 0; d < 3; d++) idx[d] += start[d];
        memcpy(exp + (size_t)i * in.es, in.buf + (size_t)ravel(3, shape, idx) * in.es, in.es);
    }
    tt *ins[3] = {&in, &st, &sz};
    CHECK_CASE(run_op(TOSAC_OP_SLICE, ins, 3, &out, NULL, NULL) == TOSAC_OK && same_bytes("slice", &out, exp));
    free(exp);
    tt_free(&in);
    tt_free(&out);
    tt_free(&st);
    tt_free(&sz);
}

int main(void)
{
    RUN(test_reshape);
    RUN(test_reverse);
    RUN(test_slice);
    RUN(test_tile);
    RUN(test_transpose);
    RUN(test_pad);
    RUN(test_concat);
    RUN(test_gather);
    RUN(test_scatter);
    RUN(test_reduce_random);
    RUN(test_reduce_nan);
    RUN(test_reduce_sum_overflow);
    RUN(test_resize_spot);
    RUN(test_resize_random);
    RUN(test_errors);
    RUN(test_layout_large);
    /* split over three workers that take the pieces in reverse order (kernels_run.h) */
    kr_workers = 3;
    RUN(test_layout_large);
    RUN(test_transpose);
    RUN(test_concat);
    RUN(test_slice);
    RUN(test_reduce_random);
    reduce_large = true;
    RUN(test_reduce_random);
    kr_workers = 1;
    /* the vector builds of the fp32 sums and of the three-row zip (NCHW fp32 to NHWC) at every level */
    for (uint32_t level = 0; level <= 2; level++) {
        tosac_kernel_limit_isa(level);
        RUN(test_reduce_random);
        RUN(test_reduce_sum_overflow);
        RUN(test_transpose);
        RUN(test_layout_large);
    }
    reduce_large = false;
    return test_summary();
}
