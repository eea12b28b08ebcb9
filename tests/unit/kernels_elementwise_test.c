/*
 * Kernels of the unary, binary, select, clamp, table, cast, rescale and identity families, called
 * through tosac_kernel_for() with hand-built tosac_kcall structs.
 *
 * Expected values are computed here independently of the kernels: integer results from the spec
 * formulas written in plain int64 arithmetic (floor division instead of shifts, explicit
 * modular wrap-around), FP results in double with C's own conversions (fp16/bf16/fp8 roundings via
 * core/fp.h, which fp_test checks on its own), plus every spot value of TOSA.md §B.4 for these ops.
 * Broadcasting is checked by unravelling each output index. Random cases cover rank 0 to rank 6,
 * in-place runs (out == input 0), and every REQUIRE (UNPREDICTABLE, with c->why set).
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
/* Utilities                                                                                    */

#define RNG_SEED 0x243F6A8885A308D3ull
#include "harness/rng.h"


static int64_t pow2(int s) { return (int64_t)1 << s; }

/* floor(x / d) for d > 0, without shifts. */
static int64_t floordiv(int64_t x, int64_t d)
{
    int64_t q = x / d;
    if (x % d != 0 && x < 0) q--;
    return q;
}

static bool fits(int64_t v, int bits) { return v >= -pow2(bits - 1) && v <= pow2(bits - 1) - 1; }

/* The low `bits` bits of v read as a two's complement number (bits <= 32). */
static int64_t wrapb(int64_t v, int bits)
{
    int64_t m = v % pow2(bits);
    if (m < 0) m += pow2(bits);
    return m >= pow2(bits - 1) ? m - pow2(bits) : m;
}

static void tt_make1(tt *x, tosac_dtype dt, bool f64, int64_t n)
{
    int64_t sh[1] = {n};
    tt_make(x, dt, f64, 1, sh);
}

/* Element access written independently of kutil.h. */
static int64_t get_i(const tt *x, int64_t i)
{
    switch (x->t.dtype) {
    case TOSAC_DTYPE_BOOL: return ((const uint8_t *)x->t.data)[i];
    case TOSAC_DTYPE_INT4:
    case TOSAC_DTYPE_INT8: return ((const int8_t *)x->t.data)[i];
    case TOSAC_DTYPE_INT16: return ((const int16_t *)x->t.data)[i];
    case TOSAC_DTYPE_INT32: return ((const int32_t *)x->t.data)[i];
    default: return ((const int64_t *)x->t.data)[i];
    }
}

static void set_i(tt *x, int64_t i, int64_t v)
{
    switch (x->t.dtype) {
    case TOSAC_DTYPE_BOOL: ((uint8_t *)x->t.data)[i] = (uint8_t)(v != 0); break;
    case TOSAC_DTYPE_INT4:
    case TOSAC_DTYPE_INT8: ((int8_t *)x->t.data)[i] = (int8_t)v; break;
    case TOSAC_DTYPE_INT16: ((int16_t *)x->t.data)[i] = (int16_t)v; break;
    case TOSAC_DTYPE_INT32: ((int32_t *)x->t.data)[i] = (int32_t)v; break;
    default: ((int64_t *)x->t.data)[i] = v; break;
    }
}

static double get_f(const tt *x, int64_t i)
{
    if (x->t.f64) return ((const double *)x->t.data)[i];
    switch (x->t.dtype) {
    case TOSAC_DTYPE_FP32: return ((const float *)x->t.data)[i];
    case TOSAC_DTYPE_FP16: return tosac_fp16_to_fp32(((const uint16_t *)x->t.data)[i]);
    case TOSAC_DTYPE_BF16: return tosac_bf16_to_fp32(((const uint16_t *)x->t.data)[i]);
    case TOSAC_DTYPE_FP8E4M3: return tosac_fp8e4m3_to_fp32(((const uint8_t *)x->t.data)[i]);
    case TOSAC_DTYPE_FP8E5M2: return tosac_fp8e5m2_to_fp32(((const uint8_t *)x->t.data)[i]);
    default: return 0.0;
    }
}

/* Stores v rounded to the tensor's type (fp32 through C's own double -> float conversion). */
static void set_f(tt *x, int64_t i, double v)
{
    if (x->t.f64) {
        ((double *)x->t.data)[i] = v;
        return;
    }
    switch (x->t.dtype) {
    case TOSAC_DTYPE_FP32: ((float *)x->t.data)[i] = (float)v; break;
    case TOSAC_DTYPE_FP16: ((uint16_t *)x->t.data)[i] = tosac_fp64_to_fp16(v); break;
    case TOSAC_DTYPE_BF16: ((uint16_t *)x->t.data)[i] = tosac_fp64_to_bf16(v); break;
    case TOSAC_DTYPE_FP8E4M3: ((uint8_t *)x->t.data)[i] = tosac_fp64_to_fp8e4m3(v); break;
    case TOSAC_DTYPE_FP8E5M2: ((uint8_t *)x->t.data)[i] = tosac_fp64_to_fp8e5m2(v); break;
    default: break;
    }
}

/* Raw bits of element i. */
static uint64_t get_bits(const tt *x, int64_t i)
{
    uint64_t u = 0;
    memcpy(&u, x->buf + (size_t)i * x->es, x->es);
    return u;
}

/* The value v rounded to type (dt, f64), as raw bits. */
static uint64_t fp_bits_of(tosac_dtype dt, bool f64, double v)
{
    tt x;
    tt_make1(&x, dt, f64, 1);
    set_f(&x, 0, v);
    uint64_t u = get_bits(&x, 0);
    tt_free(&x);
    return u;
}

static void attr_set(tosac_attr_val *a, unsigned id, int64_t v)
{
    a[id].present = true;
    a[id].i = v;
}

static void attr_bytes(tosac_attr_val *a, unsigned id, const uint8_t *p, uint32_t len)
{
    a[id].present = true;
    a[id].data = p;
    a[id].len = len;
}

static const char *last_why;

/* Runs op on the given operands; checks that failures carry an explanation. */
static tosac_status run_op(uint32_t op, tt *const *ins, int nin, tt *out, const tosac_attr_val *attr)
{
    tosac_ktensor in[6];
    for (int i = 0; i < nin; i++) in[i] = ins[i]->t;
    tosac_attr_val a[TOSAC_ATTR_MAX_FIELDS];
    memset(a, 0, sizeof a);
    if (attr) memcpy(a, attr, sizeof a);
    tosac_kcall c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.n_in = (uint32_t)nin;
    c.n_out = 1;
    c.in = in;
    c.out = &out->t;
    c.attr = a;
    tosac_kernel_prepare_fn pf = tosac_kernel_prepare_for(op);
    tosac_kprep sz = {1, 1, 0};
    EXPECT(pf != NULL && pf(&c, &sz, NULL) == TOSAC_OK);
    EXPECT_EQ_I(sz.scratch_size, 0);
    tosac_status s = kernels_run_call(&c);
    last_why = c.why;
    if (s != TOSAC_OK) EXPECT(c.why != NULL && c.why[0] != '\0');
    return s;
}

/* Random output shape of the given rank (dims 1..maxd) and an input shape broadcasting to it. */
static void rand_shape(int rank, int64_t maxd, int64_t *shape)
{
    for (int d = 0; d < rank; d++) shape[d] = rnd_in(1, maxd);
}
static void bcast_shape(int rank, const int64_t *oshape, int64_t *ishape)
{
    for (int d = 0; d < rank; d++) ishape[d] = rnd() % 3 == 0 ? 1 : oshape[d];
}

/* Index into `in` of output element oi (unravel over oshape, broadcast size-1 dims). */
static int64_t bidx(const tt *in, int rank, const int64_t *oshape, int64_t oi)
{
    int64_t idx = 0, mul = 1;
    for (int d = rank - 1; d >= 0; d--) {
        const int64_t coord = oi % oshape[d];
        oi /= oshape[d];
        const int64_t dim = in->t.rank ? in->shape[d] : 1;
        if (dim != 1) idx += coord * mul;
        mul *= dim;
    }
    return idx;
}

/* ------------------------------------------------------------------------------------------ */
/* Integer binary ops: random broadcast cases against int64 references                          */

typedef struct iparams {
    int bits;      /* element bits of the input */
    int64_t p;     /* op parameter: ARS round, MUL shift */
} iparams;

typedef bool (*iref2)(int64_t a, int64_t b, const iparams *p, int64_t *r);
typedef int64_t (*igen)(int bits);

static bool r_add(int64_t a, int64_t b, const iparams *p, int64_t *r) { return *r = a + b, fits(*r, p->bits); }
static bool r_sub(int64_t a, int64_t b, const iparams *p, int64_t *r) { return *r = a - b, fits(*r, p->bits); }
static bool r_max(int64_t a, int64_t b, const iparams *p, int64_t *r) { (void)p; return *r = a > b ? a : b, true; }
static bool r_min(int64_t a, int64_t b, const iparams *p, int64_t *r) { (void)p; return *r = a < b ? a : b, true; }
static bool r_and(int64_t a, int64_t b, const iparams *p, int64_t *r) { (void)p; return *r = a & b, true; }
static bool r_or(int64_t a, int64_t b, const iparams *p, int64_t *r) { (void)p; return *r = a | b, true; }
static bool r_xor(int64_t a, int64_t b, const iparams *p, int64_t *r) { (void)p; return *r = a ^ b, true; }
static bool r_eq(int64_t a, int64_t b, const iparams *p, int64_t *r) { (void)p; return *r = a == b, true; }
static bool r_gt(int64_t a, int64_t b, const iparams *p, int64_t *r) { (void)p; return *r = a > b, true; }
static bool r_ge(int64_t a, int64_t b, const iparams *p, int64_t *r) { (void)p; return *r = a >= b, true; }
static bool r_land(int64_t a, int64_t b, const iparams *p, int64_t *r) { (void)p; return *r = a && b, true; }
static bool r_lor(int64_t a, int64_t b, const iparams *p, int64_t *r) { (void)p; return *r = a || b, true; }
static bool r_lxor(int64_t a, int64_t b, const iparams *p, int64_t *r)
{
    (void)p;
    return *r = (a != 0) != (b != 0), true;
}

/* INTDIV: truncation toward zero, REQUIRE b != 0 and the quotient fits. */
static bool r_div(int64_t a, int64_t b, const iparams *p, int64_t *r)
{
    if (b == 0) return false;
    const int64_t q = (a < 0 ? -a : a) / (b < 0 ? -b : b);
    *r = (a < 0) != (b < 0) ? -q : q;
    return fits(*r, p->bits);
}

/* ARS: floor(a / 2^b), +1 if round and floor(a / 2^(b-1)) is odd. */
static bool r_ars(int64_t a, int64_t b, const iparams *p, int64_t *r)
{
    if (b < 0 || b > p->bits - 1) return false;
    *r = floordiv(a, pow2((int)b));
    if (p->p && b > 0) {
        const int64_t h = floordiv(a, pow2((int)b - 1));
        if (((h % 2) + 2) % 2 == 1) *r += 1;
    }
    return true;
}

static bool r_lsl(int64_t a, int64_t b, const iparams *p, int64_t *r)
{
    if (b < 0 || b > p->bits - 1) return false;
    *r = wrapb(a * pow2((int)b), p->bits);
    return true;
}

static bool r_lsr(int64_t a, int64_t b, const iparams *p, int64_t *r)
{
    if (b < 0 || b > p->bits - 1) return false;
    const int64_t u = a < 0 ? a + pow2(p->bits) : a;
    *r = wrapb(u / pow2((int)b), p->bits);
    return true;
}

/* MUL: exact for i8/i16; i32: shift 0 wraps, shift s rounds (p + 2^(s-1)) / 2^s down, REQUIRE fits. */
static bool r_mul(int64_t a, int64_t b, const iparams *p, int64_t *r)
{
    const int64_t prod = a * b;
    const int s = (int)p->p;
    if (s == 0) {
        *r = p->bits == 32 ? wrapb(prod, 32) : prod;
        return true;
    }
    if (s == 63)
        *r = prod == pow2(62) ? 1 : 0; /* (prod + 2^62) / 2^63 with prod in [-2^62 + 2^31, 2^62] */
    else
        *r = floordiv(prod + pow2(s - 1), pow2(s));
    return fits(*r, 32);
}

static int64_t g_full(int bits) { return rnd_in(-pow2(bits - 1), pow2(bits - 1) - 1); }
static int64_t g_half(int bits) { return rnd() % 8 == 0 ? rnd_in(-3, 3) : rnd_in(-pow2(bits - 2), pow2(bits - 2) - 1); }
static int64_t g_small(int bits) { (void)bits; return rnd_in(-1000, 1000); }
static int64_t g_mix(int bits) { return rnd() % 4 == 0 ? g_full(bits) : rnd_in(-40, 40); }
static int64_t g_shift(int bits) { return rnd_in(0, bits - 1); }
static int64_t g_nonzero(int bits)
{
    int64_t v = g_mix(bits);
    return v == 0 ? 7 : v == -1 ? -5 : v;
}
static int64_t g_bool(int bits) { (void)bits; return (int64_t)(rnd() & 1); }

/* One random broadcast case. inplace: input 0 has the output shape and the output aliases it. */
static void bin_int_case(uint32_t op, tosac_dtype ti, tosac_dtype to, iref2 ref, const iparams *ip, igen ga, igen gb,
                         const tosac_attr_val *attr, int rank, bool inplace)
{
    int64_t os[8], as[8], bs[8];
    rand_shape(rank, rank >= 5 ? 3 : 5, os);
    if (inplace)
        memcpy(as, os, sizeof os);
    else
        bcast_shape(rank, os, as);
    bcast_shape(rank, os, bs);
    tt A, B, O, S;
    tt_make(&A, ti, false, rank, as);
    tt_make(&B, ti, false, rank, bs);
    tt_make(&O, to, false, rank, os);
    tt_make1(&S, TOSAC_DTYPE_INT8, false, 1);
    set_i(&S, 0, op == TOSAC_OP_MUL ? ip->p : 0);
    const int bits = (int)tosac_dtype_bits(ti);
    for (int64_t i = 0; i < A.t.nelem; i++) set_i(&A, i, ga(bits));
    for (int64_t i = 0; i < B.t.nelem; i++) set_i(&B, i, gb(bits));
    const int64_t n = O.t.nelem;
    int64_t *exp = (int64_t *)malloc((size_t)n * sizeof *exp);
    bool valid = true;
    for (int64_t i = 0; i < n; i++)
        valid &= ref(get_i(&A, bidx(&A, rank, os, i)), get_i(&B, bidx(&B, rank, os, i)), ip, &exp[i]);
    if (inplace) O.t.data = A.buf;
    tt *ins[3] = {&A, &B, &S};
    tosac_status s = run_op(op, ins, op == TOSAC_OP_MUL ? 3 : 2, &O, attr);
    if (!valid) {
        EXPECT_EQ_I(s, TOSAC_ERR_UNPREDICTABLE);
    } else {
        EXPECT_EQ_I(s, TOSAC_OK);
        int bad = 0;
        for (int64_t i = 0; i < n && bad < 3; i++) {
            const int64_t got = inplace ? get_i(&A, i) : get_i(&O, i);
            if (got != exp[i]) {
                bad++;
                fprintf(stderr, "  op %u %s rank %d elem %lld: got %lld want %lld\n", (unsigned)op,
                        tosac_dtype_name(ti), rank, (long long)i, (long long)got, (long long)exp[i]);
            }
            t_checks++;
        }
        if (bad) t_failures++;
    }
    free(exp);
    tt_free(&A);
    tt_free(&B);
    tt_free(&O);
    tt_free(&S);
}

/* Runs `reps` random cases per rank 0..6, plus in-place cases when the output type is the input's. */
static void bin_int_sweep(uint32_t op, tosac_dtype ti, tosac_dtype to, iref2 ref, int64_t param, igen ga, igen gb,
                          const tosac_attr_val *attr, int reps)
{
    iparams ip = {(int)tosac_dtype_bits(ti), param};
    if (ti == TOSAC_DTYPE_BOOL) ip.bits = 1;
    for (int rank = 0; rank <= 6; rank++)
        for (int r = 0; r < reps; r++) {
            bin_int_case(op, ti, to, ref, &ip, ga, gb, attr, rank, false);
            if (ti == to) bin_int_case(op, ti, to, ref, &ip, ga, gb, attr, rank, true);
        }
}

static void test_binary_int_random(void)
{
    const tosac_dtype I8 = TOSAC_DTYPE_INT8, I16 = TOSAC_DTYPE_INT16, I32 = TOSAC_DTYPE_INT32, BL = TOSAC_DTYPE_BOOL;
    bin_int_sweep(TOSAC_OP_ADD, I32, I32, r_add, 0, g_half, g_half, NULL, 4);
    bin_int_sweep(TOSAC_OP_ADD, I32, I32, r_add, 0, g_full, g_full, NULL, 2); /* overflow likely */
    bin_int_sweep(TOSAC_OP_SUB, I32, I32, r_sub, 0, g_half, g_half, NULL, 4);
    bin_int_sweep(TOSAC_OP_INTDIV, I32, I32, r_div, 0, g_mix, g_nonzero, NULL, 4);
    bin_int_sweep(TOSAC_OP_MAXIMUM, I32, I32, r_max, 0, g_mix, g_mix, NULL, 3);
    bin_int_sweep(TOSAC_OP_MINIMUM, I32, I32, r_min, 0, g_mix, g_mix, NULL, 3);
    bin_int_sweep(TOSAC_OP_EQUAL, I32, BL, r_eq, 0, g_bool, g_bool, NULL, 3);
    bin_int_sweep(TOSAC_OP_GREATER, I32, BL, r_gt, 0, g_mix, g_mix, NULL, 3);
    bin_int_sweep(TOSAC_OP_GREATER_EQUAL, I32, BL, r_ge, 0, g_small, g_small, NULL, 3);
    bin_int_sweep(TOSAC_OP_LOGICAL_AND, BL, BL, r_land, 0, g_bool, g_bool, NULL, 2);
    bin_int_sweep(TOSAC_OP_LOGICAL_OR, BL, BL, r_lor, 0, g_bool, g_bool, NULL, 2);
    bin_int_sweep(TOSAC_OP_LOGICAL_XOR, BL, BL, r_lxor, 0, g_bool, g_bool, NULL, 2);
    const tosac_dtype it[3] = {I8, I16, I32};
    for (int k = 0; k < 3; k++) {
        const tosac_dtype t = it[k];
        bin_int_sweep(TOSAC_OP_BITWISE_AND, t, t, r_and, 0, g_full, g_full, NULL, 2);
        bin_int_sweep(TOSAC_OP_BITWISE_OR, t, t, r_or, 0, g_full, g_full, NULL, 2);
        bin_int_sweep(TOSAC_OP_BITWISE_XOR, t, t, r_xor, 0, g_full, g_full, NULL, 2);
        bin_int_sweep(TOSAC_OP_LOGICAL_LEFT_SHIFT, t, t, r_lsl, 0, g_full, g_shift, NULL, 2);
        bin_int_sweep(TOSAC_OP_LOGICAL_RIGHT_SHIFT, t, t, r_lsr, 0, g_full, g_shift, NULL, 2);
        tosac_attr_val at[TOSAC_ATTR_MAX_FIELDS];
        for (int round = 0; round <= 1; round++) {
            memset(at, 0, sizeof at);
            attr_set(at, TOSAC_ATTR_ARITHMETIC_RIGHT_SHIFT_round, round);
            bin_int_sweep(TOSAC_OP_ARITHMETIC_RIGHT_SHIFT, t, t, r_ars, round, g_full, g_shift, at, 2);
        }
    }
    bin_int_sweep(TOSAC_OP_MUL, I8, I32, r_mul, 0, g_full, g_full, NULL, 2);
    bin_int_sweep(TOSAC_OP_MUL, I16, I32, r_mul, 0, g_full, g_full, NULL, 2);
    bin_int_sweep(TOSAC_OP_MUL, I32, I32, r_mul, 0, g_full, g_full, NULL, 2);
    const int shifts[6] = {1, 2, 15, 31, 40, 63};
    for (int k = 0; k < 6; k++) bin_int_sweep(TOSAC_OP_MUL, I32, I32, r_mul, shifts[k], g_full, g_full, NULL, 1);
    bin_int_sweep(TOSAC_OP_MUL, I32, I32, r_mul, 1, g_small, g_small, NULL, 2);
}

/* ------------------------------------------------------------------------------------------ */
/* Integer spot values and REQUIREs                                                             */

/* Runs a binary op on two equal-shape rank-1 vectors; returns the status, output in `out`. */
static tosac_status bin_vec(uint32_t op, tosac_dtype ti, tosac_dtype to, int n, const int64_t *a, const int64_t *b,
                            int64_t shift, const tosac_attr_val *attr, int64_t *out)
{
    tt A, B, O, S;
    tt_make1(&A, ti, false, n);
    tt_make1(&B, ti, false, n);
    tt_make1(&O, to, false, n);
    tt_make1(&S, TOSAC_DTYPE_INT8, false, 1);
    for (int i = 0; i < n; i++) {
        set_i(&A, i, a[i]);
        set_i(&B, i, b[i]);
    }
    set_i(&S, 0, shift);
    tt *ins[3] = {&A, &B, &S};
    tosac_status s = run_op(op, ins, op == TOSAC_OP_MUL ? 3 : 2, &O, attr);
    for (int i = 0; i < n; i++) out[i] = get_i(&O, i);
    tt_free(&A);
    tt_free(&B);
    tt_free(&O);
    tt_free(&S);
    return s;
}

/* int32 ADD rows long enough for the vector loops (and their ends), at every level: the sums
   against int64 arithmetic, a sum beyond int32 anywhere in the row failing the REQUIRE. */
static void test_add_i32_levels(void)
{
    static int64_t a[300], b[300], o[300];
    for (uint32_t level = 0; level <= TOSAC_KISA_AVX512; level++) {
        tosac_kernel_limit_isa(level);
        for (int iter = 0; iter < 40; iter++) {
            const int n = (int)rnd_in(1, 300);
            const bool over = iter % 4 == 3;
            for (int i = 0; i < n; i++) a[i] = rnd_in(INT32_MIN / 2, INT32_MAX / 2), b[i] = rnd_in(INT32_MIN / 2, INT32_MAX / 2);
            if (over) { /* one sum just beyond the range, at a random place */
                const int i = (int)rnd_in(0, n - 1);
                a[i] = rnd() % 2 ? INT32_MAX : INT32_MIN, b[i] = a[i] > 0 ? 1 : -1;
            }
            const tosac_status s = bin_vec(TOSAC_OP_ADD, TOSAC_DTYPE_INT32, TOSAC_DTYPE_INT32, n, a, b, 0, NULL, o);
            EXPECT_EQ_I(s, over ? TOSAC_ERR_UNPREDICTABLE : TOSAC_OK);
            for (int i = 0; i < n && !over; i++) EXPECT_EQ_I(o[i], a[i] + b[i]);
        }
    }
    tosac_kernel_limit_isa(TOSAC_KISA_AVX512);
}

/* int32 MUL with shift 0 (the low 32 bits of the product) on rows long enough for the vector loops
   and their ends, both operands full rows or one of them a scalar, at every level: against int64
   products. */
static void test_mul_i32_levels(void)
{
    static int64_t a[300], b[300], o[300];
    for (uint32_t level = 0; level <= TOSAC_KISA_AVX512; level++) {
        tosac_kernel_limit_isa(level);
        for (int iter = 0; iter < 40; iter++) {
            const int n = (int)rnd_in(1, 300);
            for (int i = 0; i < n; i++) a[i] = rnd_in(INT32_MIN, INT32_MAX), b[i] = iter % 2 ? rnd_in(-70000, 70000) : rnd_in(INT32_MIN, INT32_MAX);
            if (iter % 3 == 2)
                for (int i = 1; i < n; i++) b[i] = b[0];
            EXPECT_EQ_I(bin_vec(TOSAC_OP_MUL, TOSAC_DTYPE_INT32, TOSAC_DTYPE_INT32, n, a, b, 0, NULL, o), TOSAC_OK);
            for (int i = 0; i < n; i++) {
                const uint32_t lo = (uint32_t)((uint64_t)a[i] * (uint64_t)b[i]);
                EXPECT_EQ_I(o[i], lo >= 0x80000000u ? (int64_t)lo - 4294967296 : (int64_t)lo);
            }
        }
    }
    tosac_kernel_limit_isa(TOSAC_KISA_AVX512);
}

#define EXPECT_VEC(got, ...)                                                  \
    do {                                                                      \
        const int64_t want_[] = {__VA_ARGS__};                                \
        for (size_t i_ = 0; i_ < sizeof want_ / sizeof want_[0]; i_++)        \
            EXPECT_EQ_I((got)[i_], want_[i_]);                                \
    } while (0)

static void test_binary_int_spots(void)
{
    const tosac_dtype I8 = TOSAC_DTYPE_INT8, I16 = TOSAC_DTYPE_INT16, I32 = TOSAC_DTYPE_INT32;
    int64_t o[8];
    /* §B.4 MUL */
    {
        const int64_t a[2] = {65536, 3}, b[2] = {65536, 5};
        EXPECT_EQ_I(bin_vec(TOSAC_OP_MUL, I32, I32, 2, a, b, 0, NULL, o), TOSAC_OK);
        EXPECT_VEC(o, 0, 15);
        const int64_t c[3] = {15, -15, 21}, d[3] = {1, 1, 1};
        EXPECT_EQ_I(bin_vec(TOSAC_OP_MUL, I32, I32, 3, c, d, 1, NULL, o), TOSAC_OK);
        EXPECT_VEC(o, 8, -7, 11);
        const int64_t e[2] = {INT32_MIN, INT32_MIN}, f[2] = {INT32_MIN, INT32_MAX};
        EXPECT_EQ_I(bin_vec(TOSAC_OP_MUL, I32, I32, 2, e, f, 63, NULL, o), TOSAC_OK);
        EXPECT_VEC(o, 1, 0);
        EXPECT_EQ_I(bin_vec(TOSAC_OP_MUL, I32, I32, 2, e, f, 0, NULL, o), TOSAC_OK);
        EXPECT_VEC(o, 0, INT32_MIN); /* low 32 bits of 2^62 and of -2^62 + 2^31 */
        /* REQUIRE: shifted product fits; shift range; shift != 0 only for i32 */
        const int64_t g[1] = {INT32_MAX}, h[1] = {4};
        EXPECT_EQ_I(bin_vec(TOSAC_OP_MUL, I32, I32, 1, g, h, 1, NULL, o), TOSAC_ERR_UNPREDICTABLE);
        EXPECT_EQ_I(bin_vec(TOSAC_OP_MUL, I32, I32, 1, g, h, 2, NULL, o), TOSAC_OK);
        EXPECT_VEC(o, INT32_MAX);
        EXPECT_EQ_I(bin_vec(TOSAC_OP_MUL, I32, I32, 1, g, h, 64, NULL, o), TOSAC_ERR_UNPREDICTABLE);
        EXPECT_EQ_I(bin_vec(TOSAC_OP_MUL, I32, I32, 1, g, h, -1, NULL, o), TOSAC_ERR_UNPREDICTABLE);
        const int64_t i8a[1] = {-128}, i8b[1] = {-128};
        EXPECT_EQ_I(bin_vec(TOSAC_OP_MUL, I8, I32, 1, i8a, i8b, 0, NULL, o), TOSAC_OK);
        EXPECT_VEC(o, 16384);
        EXPECT_EQ_I(bin_vec(TOSAC_OP_MUL, I8, I32, 1, i8a, i8b, 1, NULL, o), TOSAC_ERR_UNPREDICTABLE);
        const int64_t i16a[1] = {-32768};
        EXPECT_EQ_I(bin_vec(TOSAC_OP_MUL, I16, I32, 1, i16a, i16a, 0, NULL, o), TOSAC_OK);
        EXPECT_VEC(o, 1073741824);
    }
    /* §B.4 INTDIV */
    {
        const int64_t a[4] = {-7, 7, -7, 1}, b[4] = {2, 2, -2, 3};
        EXPECT_EQ_I(bin_vec(TOSAC_OP_INTDIV, I32, I32, 4, a, b, 0, NULL, o), TOSAC_OK);
        EXPECT_VEC(o, -3, 3, 3, 0);
        const int64_t c[2] = {5, INT32_MIN}, d[2] = {0, 1}, e[2] = {INT32_MIN, 1}, f[2] = {-1, 1};
        EXPECT_EQ_I(bin_vec(TOSAC_OP_INTDIV, I32, I32, 2, c, d, 0, NULL, o), TOSAC_ERR_UNPREDICTABLE);
        EXPECT_EQ_I(bin_vec(TOSAC_OP_INTDIV, I32, I32, 2, e, f, 0, NULL, o), TOSAC_ERR_UNPREDICTABLE);
        const int64_t g[1] = {INT32_MIN}, h[1] = {2};
        EXPECT_EQ_I(bin_vec(TOSAC_OP_INTDIV, I32, I32, 1, g, h, 0, NULL, o), TOSAC_OK);
        EXPECT_VEC(o, -1073741824);
    }
    /* §B.4 ARITHMETIC_RIGHT_SHIFT round=true, i8 */
    {
        tosac_attr_val at[TOSAC_ATTR_MAX_FIELDS];
        memset(at, 0, sizeof at);
        attr_set(at, TOSAC_ATTR_ARITHMETIC_RIGHT_SHIFT_round, 1);
        const int64_t a[5] = {-5, 5, -4, 7, -128}, b[5] = {1, 1, 1, 2, 7};
        EXPECT_EQ_I(bin_vec(TOSAC_OP_ARITHMETIC_RIGHT_SHIFT, I8, I8, 5, a, b, 0, at, o), TOSAC_OK);
        EXPECT_VEC(o, -2, 3, -2, 2, -1);
        EXPECT_EQ_I(bin_vec(TOSAC_OP_ARITHMETIC_RIGHT_SHIFT, I8, I8, 5, a, b, 0, NULL, o), TOSAC_OK);
        EXPECT_VEC(o, -3, 2, -2, 1, -1);
        const int64_t c[1] = {100}, d[1] = {8}, e[1] = {-1}, f[1] = {16}, g[1] = {32};
        EXPECT_EQ_I(bin_vec(TOSAC_OP_ARITHMETIC_RIGHT_SHIFT, I8, I8, 1, c, d, 0, at, o), TOSAC_ERR_UNPREDICTABLE);
        EXPECT_EQ_I(bin_vec(TOSAC_OP_ARITHMETIC_RIGHT_SHIFT, I8, I8, 1, c, e, 0, at, o), TOSAC_ERR_UNPREDICTABLE);
        EXPECT_EQ_I(bin_vec(TOSAC_OP_ARITHMETIC_RIGHT_SHIFT, I16, I16, 1, c, f, 0, at, o), TOSAC_ERR_UNPREDICTABLE);
        EXPECT_EQ_I(bin_vec(TOSAC_OP_ARITHMETIC_RIGHT_SHIFT, I32, I32, 1, c, g, 0, at, o), TOSAC_ERR_UNPREDICTABLE);
        const int64_t h[2] = {INT32_MIN, INT32_MAX}, k[2] = {31, 31};
        EXPECT_EQ_I(bin_vec(TOSAC_OP_ARITHMETIC_RIGHT_SHIFT, I32, I32, 2, h, k, 0, at, o), TOSAC_OK);
        EXPECT_VEC(o, -1, 1);
    }
    /* logical shifts on the unsigned pattern; REQUIRE 0 <= b <= bits-1 */
    {
        const int64_t a[3] = {-1, -128, 1}, b[3] = {1, 7, 7};
        EXPECT_EQ_I(bin_vec(TOSAC_OP_LOGICAL_RIGHT_SHIFT, I8, I8, 3, a, b, 0, NULL, o), TOSAC_OK);
        EXPECT_VEC(o, 127, 1, 0);
        EXPECT_EQ_I(bin_vec(TOSAC_OP_LOGICAL_LEFT_SHIFT, I8, I8, 3, a, b, 0, NULL, o), TOSAC_OK);
        EXPECT_VEC(o, -2, 0, -128);
        const int64_t c[1] = {-1}, d[1] = {31}, e[1] = {8};
        EXPECT_EQ_I(bin_vec(TOSAC_OP_LOGICAL_RIGHT_SHIFT, I32, I32, 1, c, d, 0, NULL, o), TOSAC_OK);
        EXPECT_VEC(o, 1);
        EXPECT_EQ_I(bin_vec(TOSAC_OP_LOGICAL_LEFT_SHIFT, I32, I32, 1, c, d, 0, NULL, o), TOSAC_OK);
        EXPECT_VEC(o, INT32_MIN);
        EXPECT_EQ_I(bin_vec(TOSAC_OP_LOGICAL_LEFT_SHIFT, I8, I8, 1, c, e, 0, NULL, o), TOSAC_ERR_UNPREDICTABLE);
        EXPECT_EQ_I(bin_vec(TOSAC_OP_LOGICAL_RIGHT_SHIFT, I8, I8, 1, c, e, 0, NULL, o), TOSAC_ERR_UNPREDICTABLE);
        const int64_t f[1] = {-3};
        EXPECT_EQ_I(bin_vec(TOSAC_OP_LOGICAL_LEFT_SHIFT, I16, I16, 1, c, f, 0, NULL, o), TOSAC_ERR_UNPREDICTABLE);
    }
    /* ADD / SUB overflow is a REQUIRE */
    {
        const int64_t a[2] = {INT32_MAX, INT32_MIN}, b[2] = {0, 0}, one[2] = {1, 0}, mone[2] = {0, -1};
        const int64_t neg1[2] = {-1, 0}, pos1[2] = {0, 1};
        EXPECT_EQ_I(bin_vec(TOSAC_OP_ADD, I32, I32, 2, a, b, 0, NULL, o), TOSAC_OK);
        EXPECT_VEC(o, INT32_MAX, INT32_MIN);
        EXPECT_EQ_I(bin_vec(TOSAC_OP_ADD, I32, I32, 2, a, one, 0, NULL, o), TOSAC_ERR_UNPREDICTABLE);
        EXPECT_EQ_I(bin_vec(TOSAC_OP_ADD, I32, I32, 2, a, mone, 0, NULL, o), TOSAC_ERR_UNPREDICTABLE);
        EXPECT_EQ_I(bin_vec(TOSAC_OP_SUB, I32, I32, 2, a, neg1, 0, NULL, o), TOSAC_ERR_UNPREDICTABLE);
        EXPECT_EQ_I(bin_vec(TOSAC_OP_SUB, I32, I32, 2, a, pos1, 0, NULL, o), TOSAC_ERR_UNPREDICTABLE);
        EXPECT_EQ_I(bin_vec(TOSAC_OP_SUB, I32, I32, 2, a, one, 0, NULL, o), TOSAC_OK);
        EXPECT_VEC(o, INT32_MAX - 1, INT32_MIN);
        const int64_t c[1] = {-5}, d[1] = {INT32_MAX};
        EXPECT_EQ_I(bin_vec(TOSAC_OP_SUB, I32, I32, 1, c, d, 0, NULL, o), TOSAC_ERR_UNPREDICTABLE);
        EXPECT_EQ_I(bin_vec(TOSAC_OP_SUB, I32, I32, 1, d, c, 0, NULL, o), TOSAC_ERR_UNPREDICTABLE);
    }
    /* unsupported type rows are reported as such */
    {
        const int64_t a[1] = {1};
        EXPECT_EQ_I(bin_vec(TOSAC_OP_ADD, I8, I8, 1, a, a, 0, NULL, o), TOSAC_ERR_UNSUPPORTED);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Integer unary ops                                                                            */

static tosac_status un_vec(uint32_t op, tosac_dtype t, int n, const int64_t *a, int64_t izp, int64_t ozp, int64_t *out,
                           bool inplace)
{
    tt A, O, Z1, Z2;
    tt_make1(&A, t, false, n);
    tt_make1(&O, t, false, n);
    tt_make1(&Z1, t, false, 1);
    tt_make1(&Z2, t, false, 1);
    for (int i = 0; i < n; i++) set_i(&A, i, a[i]);
    set_i(&Z1, 0, izp);
    set_i(&Z2, 0, ozp);
    if (inplace) O.t.data = A.buf;
    tt *ins[3] = {&A, &Z1, &Z2};
    tosac_status s = run_op(op, ins, op == TOSAC_OP_NEGATE ? 3 : 1, &O, NULL);
    for (int i = 0; i < n; i++) out[i] = inplace ? get_i(&A, i) : get_i(&O, i);
    tt_free(&A);
    tt_free(&O);
    tt_free(&Z1);
    tt_free(&Z2);
    return s;
}

static int64_t clz_ref(int64_t v)
{
    const int64_t u = v < 0 ? v + pow2(32) : v;
    for (int b = 31; b >= 0; b--)
        if (u >= pow2(b)) return 31 - b;
    return 32;
}

static void test_unary_int(void)
{
    const tosac_dtype I8 = TOSAC_DTYPE_INT8, I16 = TOSAC_DTYPE_INT16, I32 = TOSAC_DTYPE_INT32;
    int64_t o[16];
    /* §B.4 NEGATE i8 izp=5 ozp=-3 */
    {
        const int64_t a[4] = {-128, 0, 5, 127};
        for (int inplace = 0; inplace <= 1; inplace++) {
            EXPECT_EQ_I(un_vec(TOSAC_OP_NEGATE, I8, 4, a, 5, -3, o, inplace), TOSAC_OK);
            EXPECT_VEC(o, 127, 2, -3, -125);
        }
        const int64_t b[3] = {-32768, 32767, 0};
        EXPECT_EQ_I(un_vec(TOSAC_OP_NEGATE, I16, 3, b, 0, 0, o, false), TOSAC_OK);
        EXPECT_VEC(o, 32767, -32767, 0);
        const int64_t c[2] = {INT32_MAX, -5};
        EXPECT_EQ_I(un_vec(TOSAC_OP_NEGATE, I32, 2, c, 0, 0, o, true), TOSAC_OK);
        EXPECT_VEC(o, -INT32_MAX, 5);
        const int64_t d[2] = {1, INT32_MIN};
        EXPECT_EQ_I(un_vec(TOSAC_OP_NEGATE, I32, 2, d, 0, 0, o, false), TOSAC_ERR_UNPREDICTABLE);
        EXPECT_EQ_I(un_vec(TOSAC_OP_NEGATE, I16, 1, d, 1, 0, o, false), TOSAC_ERR_TOSA_ERROR);
        /* random i8 with zero points against the formula */
        int64_t r[16], want[16];
        for (int rep = 0; rep < 50; rep++) {
            const int64_t izp = rnd_in(-128, 127), ozp = rnd_in(-128, 127);
            for (int i = 0; i < 16; i++) {
                r[i] = rnd_in(-128, 127);
                int64_t acc = -(r[i] - izp) + ozp;
                want[i] = acc < -128 ? -128 : acc > 127 ? 127 : acc;
            }
            EXPECT_EQ_I(un_vec(TOSAC_OP_NEGATE, I8, 16, r, izp, ozp, o, rep & 1), TOSAC_OK);
            for (int i = 0; i < 16; i++) EXPECT_EQ_I(o[i], want[i]);
        }
    }
    /* ABS */
    {
        const int64_t a[4] = {-7, 7, 0, INT32_MAX};
        EXPECT_EQ_I(un_vec(TOSAC_OP_ABS, I32, 4, a, 0, 0, o, true), TOSAC_OK);
        EXPECT_VEC(o, 7, 7, 0, INT32_MAX);
        const int64_t b[2] = {-INT32_MAX, INT32_MIN};
        EXPECT_EQ_I(un_vec(TOSAC_OP_ABS, I32, 2, b, 0, 0, o, false), TOSAC_ERR_UNPREDICTABLE);
    }
    /* CLZ */
    {
        int64_t a[12] = {0, 1, -1, INT32_MIN, INT32_MAX, 2, 3, 255, 256, 65535, 1 << 30, -100};
        EXPECT_EQ_I(un_vec(TOSAC_OP_CLZ, I32, 12, a, 0, 0, o, false), TOSAC_OK);
        EXPECT_VEC(o, 32, 31, 0, 0, 1, 30, 30, 24, 23, 16, 1, 0);
        for (int rep = 0; rep < 20; rep++) {
            for (int i = 0; i < 12; i++) a[i] = rnd_in(INT32_MIN, INT32_MAX) / pow2((int)rnd_in(0, 31));
            EXPECT_EQ_I(un_vec(TOSAC_OP_CLZ, I32, 12, a, 0, 0, o, rep & 1), TOSAC_OK);
            for (int i = 0; i < 12; i++) EXPECT_EQ_I(o[i], clz_ref(a[i]));
        }
    }
    /* BITWISE_NOT */
    {
        const int64_t a[3] = {0, -1, 5};
        EXPECT_EQ_I(un_vec(TOSAC_OP_BITWISE_NOT, I8, 3, a, 0, 0, o, true), TOSAC_OK);
        EXPECT_VEC(o, -1, 0, -6);
        const int64_t b[2] = {-32768, 32767};
        EXPECT_EQ_I(un_vec(TOSAC_OP_BITWISE_NOT, I16, 2, b, 0, 0, o, false), TOSAC_OK);
        EXPECT_VEC(o, 32767, -32768);
        const int64_t c[2] = {INT32_MIN, 12345};
        EXPECT_EQ_I(un_vec(TOSAC_OP_BITWISE_NOT, I32, 2, c, 0, 0, o, false), TOSAC_OK);
        EXPECT_VEC(o, INT32_MAX, -12346);
    }
    /* LOGICAL_NOT */
    {
        const int64_t a[2] = {0, 1};
        EXPECT_EQ_I(un_vec(TOSAC_OP_LOGICAL_NOT, TOSAC_DTYPE_BOOL, 2, a, 0, 0, o, true), TOSAC_OK);
        EXPECT_VEC(o, 1, 0);
    }
    /* an FP-only op on an integer type */
    {
        const int64_t a[1] = {1};
        EXPECT_EQ_I(un_vec(TOSAC_OP_EXP, I32, 1, a, 0, 0, o, false), TOSAC_ERR_UNSUPPORTED);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Floating-point binary ops                                                                    */

typedef double (*fref2)(double a, double b, bool ignore, bool *ok);
static double f_add(double a, double b, bool ig, bool *ok) { (void)ig, (void)ok; return a + b; }
static double f_sub(double a, double b, bool ig, bool *ok) { (void)ig, (void)ok; return a - b; }
static double f_mul(double a, double b, bool ig, bool *ok) { (void)ig, (void)ok; return a * b; }
static double f_max(double a, double b, bool ig, bool *ok)
{
    (void)ok;
    if (isnan(a) || isnan(b)) {
        if (!ig || (isnan(a) && isnan(b))) return NAN;
        return isnan(a) ? b : a;
    }
    return a >= b ? a : b;
}
static double f_min(double a, double b, bool ig, bool *ok)
{
    (void)ok;
    if (isnan(a) || isnan(b)) {
        if (!ig || (isnan(a) && isnan(b))) return NAN;
        return isnan(a) ? b : a;
    }
    return a < b ? a : b;
}
static double f_pow(double a, double b, bool ig, bool *ok)
{
    (void)ig;
    if (!(a >= 0) || (a <= 0 && b <= 0) || !isfinite(a) || !isfinite(b)) *ok = false;
    return pow(a, b);
}
static double f_eq(double a, double b, bool ig, bool *ok) { (void)ig, (void)ok; return a == b; }
static double f_gt(double a, double b, bool ig, bool *ok) { (void)ig, (void)ok; return a > b; }
static double f_ge(double a, double b, bool ig, bool *ok) { (void)ig, (void)ok; return a >= b; }

/* Random FP value: mostly moderate, sometimes special (signed zeros, inf, NaN) when `special`. */
static double fp_rand(bool special, bool positive)
{
    if (special) {
        switch (rnd() % 12) {
        case 0: return 0.0;
        case 1: return -0.0;
        case 2: return positive ? 1.0 : -1.0;
        case 3: return NAN;
        case 4: return positive ? 2.0 : -INFINITY;
        default: break;
        }
    }
    double v = (rnd_unit() * 2.0 - 1.0) * pow(2.0, (double)rnd_in(-8, 8));
    return positive ? fabs(v) + 0.0625 : v;
}

/*
 * Closeness for transcendental results in the manner of TOSA.md §D.5 ULP checks: NaN must give NaN,
 * a result that overflows the type must be the same infinity, otherwise |got - want| must be
 * within tol_ulps * ulp(want), ulp = max(2^floor(log2|want|), normal_min) * 2^-frac.
 */
static bool fp_close(double got, double want, tosac_dtype dt, bool f64, double tol_ulps)
{
    if (isnan(want)) return isnan(got);
    tt r;
    tt_make1(&r, dt, f64, 1);
    set_f(&r, 0, want);
    const double wr = get_f(&r, 0); /* want rounded to the type */
    tt_free(&r);
    if (isinf(wr) || isinf(got)) return got == wr;
    const int frac = f64 ? 52 : dt == TOSAC_DTYPE_FP32 ? 23 : dt == TOSAC_DTYPE_FP16 ? 10 : 7;
    const int emin = f64 ? -1022 : dt == TOSAC_DTYPE_FP16 ? -14 : -126;
    const double e = want != 0.0 ? floor(log2(fabs(want))) : (double)emin;
    const double ulp = pow(2.0, (e > emin ? e : emin) - frac);
    return fabs(got - want) <= tol_ulps * ulp;
}

/*
 * TOSA.md §D.5 ABS_ERROR for fp32 EXP, SIGMOID and TANH (the conformance generator's bounds values,
 * tools/conformance/cases_ew.py): |got - want| <= 2^-23 * max(|want|, normal_min, lower) * bnd with
 * bnd = 2|x| + 3 (EXP), 2 (1 + |x|) (SIGMOID) or 8|x| + 12 with lower = 0.5 / bnd (TANH); a result
 * below normal_min may flush to zero; NaN gives NaN and an overflow the same infinity (fp_close).
 */
static bool tosa_exp_close(double got, double want, double x, uint32_t op)
{
    const double nmin = 0x1p-126;
    if (isnan(want) || isinf(got) || fabs(want) > 0x1.fffffep127) return fp_close(got, want, TOSAC_DTYPE_FP32, false, 1.0);
    if (got == 0.0 && fabs(want) < nmin) return true;
    const double bnd = op == TOSAC_OP_EXP ? 2.0 * fabs(x) + 3.0 : op == TOSAC_OP_TANH ? 8.0 * fabs(x) + 12.0 : 2.0 * (1.0 + fabs(x));
    const double lower = op == TOSAC_OP_TANH ? 0.5 / bnd : 0.0;
    return fabs(got - want) <= 0x1p-23 * fmax(fmax(fabs(want), nmin), lower) * bnd;
}

/* One random broadcast FP case; exact ops compare bits (NaN: any NaN), `tol` > 0 uses fp_close. */
static void bin_fp_case(uint32_t op, tosac_dtype t, bool f64, fref2 ref, bool ignore, int rank, bool inplace,
                        bool special, bool positive, double tol)
{
    const bool cmp = op == TOSAC_OP_EQUAL || op == TOSAC_OP_GREATER || op == TOSAC_OP_GREATER_EQUAL;
    const tosac_dtype to = cmp ? TOSAC_DTYPE_BOOL : t;
    int64_t os[8], as[8], bs[8];
    rand_shape(rank, rank >= 5 ? 3 : 6, os);
    if (inplace)
        memcpy(as, os, sizeof os);
    else
        bcast_shape(rank, os, as);
    bcast_shape(rank, os, bs);
    tt A, B, O, S;
    tt_make(&A, t, f64, rank, as);
    tt_make(&B, t, f64, rank, bs);
    tt_make(&O, to, cmp ? false : f64, rank, os);
    tt_make1(&S, TOSAC_DTYPE_INT8, false, 1);
    for (int64_t i = 0; i < A.t.nelem; i++) set_f(&A, i, fp_rand(special, positive));
    for (int64_t i = 0; i < B.t.nelem; i++) set_f(&B, i, fp_rand(special, positive));
    if (op == TOSAC_OP_EQUAL && B.t.nelem > 0 && A.t.nelem > 0) set_f(&B, 0, get_f(&A, 0));
    const int64_t n = O.t.nelem;
    double *want = (double *)malloc((size_t)n * sizeof *want);
    bool ok = true;
    for (int64_t i = 0; i < n; i++)
        want[i] = ref(get_f(&A, bidx(&A, rank, os, i)), get_f(&B, bidx(&B, rank, os, i)), ignore, &ok);
    tosac_attr_val at[TOSAC_ATTR_MAX_FIELDS];
    memset(at, 0, sizeof at);
    attr_set(at, 0, ignore ? TOSAC_NAN_IGNORE : TOSAC_NAN_PROPAGATE); /* MAXIMUM/MINIMUM nan_mode is field 0 */
    if (inplace) O.t.data = A.buf;
    const tt *res = inplace ? &A : &O;
    tt *ins[3] = {&A, &B, &S};
    tosac_status s = run_op(op, ins, op == TOSAC_OP_MUL ? 3 : 2, &O, at);
    if (!ok) {
        EXPECT_EQ_I(s, TOSAC_ERR_UNPREDICTABLE);
    } else {
        EXPECT_EQ_I(s, TOSAC_OK);
        int bad = 0;
        for (int64_t i = 0; i < n; i++) {
            bool good;
            if (cmp)
                good = get_i(res, i) == (int64_t)want[i];
            else if (tol > 0)
                good = fp_close(get_f(res, i), want[i], t, f64, tol);
            else if (isnan(want[i]))
                good = isnan(get_f(res, i));
            else
                good = get_bits(res, i) == fp_bits_of(t, f64, want[i]);
            t_checks++;
            if (!good && bad++ < 3)
                fprintf(stderr, "  op %u %s%s rank %d elem %lld: got %.17g want %.17g\n", (unsigned)op,
                        tosac_dtype_name(t), f64 ? "(f64)" : "", rank, (long long)i, get_f(res, i), want[i]);
        }
        if (bad) t_failures++;
    }
    free(want);
    tt_free(&A);
    tt_free(&B);
    tt_free(&O);
    tt_free(&S);
}

static void test_binary_fp_random(void)
{
    const tosac_dtype types[3] = {TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP16, TOSAC_DTYPE_BF16};
    for (int ti = 0; ti < 4; ti++) {
        const tosac_dtype t = types[ti == 3 ? 0 : ti];
        const bool f64 = ti == 3; /* precise mode */
        for (int rank = 0; rank <= 6; rank++) {
            for (int inplace = 0; inplace <= 1; inplace++) {
                const bool ip = inplace != 0;
                bin_fp_case(TOSAC_OP_ADD, t, f64, f_add, false, rank, ip, true, false, 0);
                bin_fp_case(TOSAC_OP_SUB, t, f64, f_sub, false, rank, ip, true, false, 0);
                bin_fp_case(TOSAC_OP_MUL, t, f64, f_mul, false, rank, ip, true, false, 0);
                bin_fp_case(TOSAC_OP_MAXIMUM, t, f64, f_max, false, rank, ip, true, false, 0);
                bin_fp_case(TOSAC_OP_MAXIMUM, t, f64, f_max, true, rank, ip, true, false, 0);
                bin_fp_case(TOSAC_OP_MINIMUM, t, f64, f_min, false, rank, ip, true, false, 0);
                bin_fp_case(TOSAC_OP_MINIMUM, t, f64, f_min, true, rank, ip, true, false, 0);
                bin_fp_case(TOSAC_OP_POW, t, f64, f_pow, false, rank, ip, false, true, 1.0);
            }
            bin_fp_case(TOSAC_OP_POW, t, f64, f_pow, false, rank, false, true, false, 1.0); /* REQUIREs */
            bin_fp_case(TOSAC_OP_EQUAL, t, f64, f_eq, false, rank, false, true, false, 0);
            bin_fp_case(TOSAC_OP_GREATER, t, f64, f_gt, false, rank, false, true, false, 0);
            bin_fp_case(TOSAC_OP_GREATER_EQUAL, t, f64, f_ge, false, rank, false, true, false, 0);
        }
    }
}

/* fp32 binary op on two vectors; results in out. */
static tosac_status fbin_vec(uint32_t op, int n, const float *a, const float *b, int64_t nan_mode, float *out,
                             uint8_t *bout)
{
    tt A, B, O, S;
    const bool cmp = op == TOSAC_OP_EQUAL || op == TOSAC_OP_GREATER || op == TOSAC_OP_GREATER_EQUAL;
    tt_make1(&A, TOSAC_DTYPE_FP32, false, n);
    tt_make1(&B, TOSAC_DTYPE_FP32, false, n);
    tt_make1(&O, cmp ? TOSAC_DTYPE_BOOL : TOSAC_DTYPE_FP32, false, n);
    tt_make1(&S, TOSAC_DTYPE_INT8, false, 1);
    memcpy(A.buf, a, (size_t)n * 4);
    memcpy(B.buf, b, (size_t)n * 4);
    tosac_attr_val at[TOSAC_ATTR_MAX_FIELDS];
    memset(at, 0, sizeof at);
    if (nan_mode) attr_set(at, 0, nan_mode);
    tt *ins[3] = {&A, &B, &S};
    tosac_status s = run_op(op, ins, op == TOSAC_OP_MUL ? 3 : 2, &O, at);
    if (cmp)
        memcpy(bout, O.buf, (size_t)n);
    else
        memcpy(out, O.buf, (size_t)n * 4);
    tt_free(&A);
    tt_free(&B);
    tt_free(&O);
    tt_free(&S);
    return s;
}

static void test_binary_fp_spots(void)
{
    float o[8];
    uint8_t bo[8];
    /* §B.4 MAXIMUM fp32 */
    const float a[3] = {NAN, 1.0f, NAN}, b[3] = {2.0f, NAN, NAN};
    EXPECT_EQ_I(fbin_vec(TOSAC_OP_MAXIMUM, 3, a, b, TOSAC_NAN_PROPAGATE, o, bo), TOSAC_OK);
    EXPECT(isnan(o[0]) && isnan(o[1]) && isnan(o[2]));
    EXPECT_EQ_I(fbin_vec(TOSAC_OP_MAXIMUM, 3, a, b, TOSAC_NAN_IGNORE, o, bo), TOSAC_OK);
    EXPECT(o[0] == 2.0f && o[1] == 1.0f && isnan(o[2]));
    EXPECT_EQ_I(fbin_vec(TOSAC_OP_MINIMUM, 3, a, b, TOSAC_NAN_IGNORE, o, bo), TOSAC_OK);
    EXPECT(o[0] == 2.0f && o[1] == 1.0f && isnan(o[2]));
    EXPECT_EQ_I(fbin_vec(TOSAC_OP_MINIMUM, 3, a, b, 0, o, bo), TOSAC_OK); /* absent: PROPAGATE */
    EXPECT(isnan(o[0]) && isnan(o[1]) && isnan(o[2]));
    /* ties of signed zeros: MAXIMUM keeps input1, MINIMUM gives input2 */
    const float z1[2] = {0.0f, -0.0f}, z2[2] = {-0.0f, 0.0f};
    EXPECT_EQ_I(fbin_vec(TOSAC_OP_MAXIMUM, 2, z1, z2, 0, o, bo), TOSAC_OK);
    EXPECT(!signbit(o[0]) && signbit(o[1]));
    EXPECT_EQ_I(fbin_vec(TOSAC_OP_MINIMUM, 2, z1, z2, 0, o, bo), TOSAC_OK);
    EXPECT(signbit(o[0]) && !signbit(o[1]));
    /* comparisons with NaN are false; +0 == -0 */
    const float c1[4] = {NAN, 1.0f, 0.0f, 1.0f}, c2[4] = {NAN, NAN, -0.0f, 1.0f};
    EXPECT_EQ_I(fbin_vec(TOSAC_OP_EQUAL, 4, c1, c2, 0, o, bo), TOSAC_OK);
    EXPECT(bo[0] == 0 && bo[1] == 0 && bo[2] == 1 && bo[3] == 1);
    EXPECT_EQ_I(fbin_vec(TOSAC_OP_GREATER_EQUAL, 4, c1, c2, 0, o, bo), TOSAC_OK);
    EXPECT(bo[0] == 0 && bo[1] == 0 && bo[2] == 1 && bo[3] == 1);
    EXPECT_EQ_I(fbin_vec(TOSAC_OP_GREATER, 4, c1, c2, 0, o, bo), TOSAC_OK);
    EXPECT(bo[0] == 0 && bo[1] == 0 && bo[2] == 0 && bo[3] == 0);
    /* correctly rounded fp32 arithmetic: 1 + 2^-24 ties to even, 1 + 3*2^-24 rounds up */
    const float p1[2] = {1.0f, 1.0f}, p2[2] = {5.9604645e-08f, 1.7881393e-07f};
    EXPECT_EQ_I(fbin_vec(TOSAC_OP_ADD, 2, p1, p2, 0, o, bo), TOSAC_OK);
    EXPECT(o[0] == 1.0f && o[1] == 1.0000002384185791f);
    const float big[1] = {3.0e38f}, two[1] = {2.0f};
    EXPECT_EQ_I(fbin_vec(TOSAC_OP_MUL, 1, big, two, 0, o, bo), TOSAC_OK);
    EXPECT(isinf(o[0]) && o[0] > 0);
    /* POW REQUIREs: x < 0, x == y == 0, non-finite, NaN */
    const float x1[1] = {-1.0f}, y1[1] = {2.0f}, x0[1] = {0.0f}, y0[1] = {0.0f}, xi[1] = {INFINITY}, xn[1] = {NAN};
    EXPECT_EQ_I(fbin_vec(TOSAC_OP_POW, 1, x1, y1, 0, o, bo), TOSAC_ERR_UNPREDICTABLE);
    EXPECT_EQ_I(fbin_vec(TOSAC_OP_POW, 1, x0, y0, 0, o, bo), TOSAC_ERR_UNPREDICTABLE);
    EXPECT_EQ_I(fbin_vec(TOSAC_OP_POW, 1, xi, y1, 0, o, bo), TOSAC_ERR_UNPREDICTABLE);
    EXPECT_EQ_I(fbin_vec(TOSAC_OP_POW, 1, y1, xn, 0, o, bo), TOSAC_ERR_UNPREDICTABLE);
    const float x2[2] = {2.0f, 0.0f}, y2[2] = {10.0f, 3.0f};
    EXPECT_EQ_I(fbin_vec(TOSAC_OP_POW, 2, x2, y2, 0, o, bo), TOSAC_OK);
    EXPECT(o[0] == 1024.0f && o[1] == 0.0f);
    /* MUL shift must be 0 for FP */
    {
        tt A, B, O, S;
        tt_make1(&A, TOSAC_DTYPE_FP32, false, 1);
        tt_make1(&B, TOSAC_DTYPE_FP32, false, 1);
        tt_make1(&O, TOSAC_DTYPE_FP32, false, 1);
        tt_make1(&S, TOSAC_DTYPE_INT8, false, 1);
        set_i(&S, 0, 1);
        tt *ins[3] = {&A, &B, &S};
        EXPECT_EQ_I(run_op(TOSAC_OP_MUL, ins, 3, &O, NULL), TOSAC_ERR_UNPREDICTABLE);
        tt_free(&A);
        tt_free(&B);
        tt_free(&O);
        tt_free(&S);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Floating-point unary ops                                                                     */

typedef struct fun {
    uint32_t op;
    double (*f)(double);
    double tol; /* 0: exact (bits), else ulps */
    bool positive;
} fun;

static double d_abs(double x) { return fabs(x); }
static double d_neg(double x) { return -x; }
static double d_recip(double x) { return 1.0 / x; }
static double d_rsqrt(double x) { return 1.0 / sqrt(x); }
static double d_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }

static void test_unary_fp(void)
{
    const fun fs[] = {
        {TOSAC_OP_ABS, d_abs, 0, false},         {TOSAC_OP_NEGATE, d_neg, 0, false},
        {TOSAC_OP_CEIL, ceil, 0, false},         {TOSAC_OP_FLOOR, floor, 0, false},
        {TOSAC_OP_RECIPROCAL, d_recip, 0, false}, {TOSAC_OP_RSQRT, d_rsqrt, 1, true},
        {TOSAC_OP_EXP, exp, 1, false},           {TOSAC_OP_LOG, log, 1, true},
        {TOSAC_OP_SIN, sin, 1, false},           {TOSAC_OP_COS, cos, 1, false},
        {TOSAC_OP_TANH, tanh, 1, false},         {TOSAC_OP_ERF, erf, 1, false},
        {TOSAC_OP_SIGMOID, d_sigmoid, 1, false},
    };
    const tosac_dtype types[3] = {TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP16, TOSAC_DTYPE_BF16};
    for (size_t k = 0; k < sizeof fs / sizeof fs[0]; k++) {
        for (int ti = 0; ti < 4; ti++) {
            const tosac_dtype t = types[ti == 3 ? 0 : ti];
            const bool f64 = ti == 3;
            for (int rank = 0; rank <= 6; rank += 3) {
                int64_t sh[8];
                rand_shape(rank, rank >= 5 ? 3 : 7, sh);
                if (rank == 3) sh[2] = 150; /* more than one staging chunk */
                const bool inplace = rank == 6;
                tt A, O, Z1, Z2;
                tt_make(&A, t, f64, rank, sh);
                tt_make(&O, t, f64, rank, sh);
                tt_make1(&Z1, t, f64, 1);
                tt_make1(&Z2, t, f64, 1);
                const int64_t n = A.t.nelem;
                double *want = (double *)malloc((size_t)n * sizeof *want), *x = (double *)malloc((size_t)n * sizeof *x);
                for (int64_t i = 0; i < n; i++) {
                    set_f(&A, i, fp_rand(!fs[k].positive, fs[k].positive));
                    x[i] = get_f(&A, i);
                    want[i] = fs[k].f(x[i]);
                }
                if (inplace) O.t.data = A.buf;
                tt *ins[3] = {&A, &Z1, &Z2};
                EXPECT_EQ_I(run_op(fs[k].op, ins, fs[k].op == TOSAC_OP_NEGATE ? 3 : 1, &O, NULL), TOSAC_OK);
                const tt *res = inplace ? &A : &O;
                int bad = 0;
                for (int64_t i = 0; i < n; i++) {
                    bool good;
                    if (t == TOSAC_DTYPE_FP32 && !f64 && (fs[k].op == TOSAC_OP_EXP || fs[k].op == TOSAC_OP_SIGMOID || fs[k].op == TOSAC_OP_TANH))
                        good = tosa_exp_close(get_f(res, i), want[i], x[i], fs[k].op); /* k_expf, k_tanhf */
                    else if (fs[k].tol > 0)
                        good = fp_close(get_f(res, i), want[i], t, f64, fs[k].tol);
                    else if (isnan(want[i]))
                        good = isnan(get_f(res, i));
                    else
                        good = get_bits(res, i) == fp_bits_of(t, f64, want[i]);
                    t_checks++;
                    if (!good && bad++ < 3)
                        fprintf(stderr, "  unary op %u %s%s elem %lld: got %.17g want %.17g\n", (unsigned)fs[k].op,
                                tosac_dtype_name(t), f64 ? "(f64)" : "", (long long)i, get_f(res, i), want[i]);
                }
                if (bad) t_failures++;
                free(want);
                free(x);
                tt_free(&A);
                tt_free(&O);
                tt_free(&Z1);
                tt_free(&Z2);
            }
        }
    }
    /* spot values and signed zeros in fp32 */
    {
        const float in[8] = {0.0f, -0.0f, -0.5f, 4.0f, 1.0f, -1.0f, 0.25f, -2.5f};
        tt A, O;
        tt_make1(&A, TOSAC_DTYPE_FP32, false, 8);
        tt_make1(&O, TOSAC_DTYPE_FP32, false, 8);
        memcpy(A.buf, in, sizeof in);
        const float *r = (const float *)(void *)O.buf;
        tt *ins[1] = {&A};
        EXPECT_EQ_I(run_op(TOSAC_OP_ABS, ins, 1, &O, NULL), TOSAC_OK);
        EXPECT(!signbit(r[1]) && r[2] == 0.5f && r[7] == 2.5f);
        EXPECT_EQ_I(run_op(TOSAC_OP_CEIL, ins, 1, &O, NULL), TOSAC_OK);
        EXPECT(r[2] == 0.0f && signbit(r[2]) && r[7] == -2.0f);
        EXPECT_EQ_I(run_op(TOSAC_OP_FLOOR, ins, 1, &O, NULL), TOSAC_OK);
        EXPECT(r[2] == -1.0f && r[7] == -3.0f && signbit(r[1]));
        EXPECT_EQ_I(run_op(TOSAC_OP_RECIPROCAL, ins, 1, &O, NULL), TOSAC_OK);
        EXPECT(isinf(r[0]) && r[0] > 0 && isinf(r[1]) && r[1] < 0 && r[3] == 0.25f && r[6] == 4.0f);
        EXPECT_EQ_I(run_op(TOSAC_OP_RSQRT, ins, 1, &O, NULL), TOSAC_OK);
        EXPECT(r[3] == 0.5f && r[6] == 2.0f && isnan(r[5]) && isinf(r[0]));
        EXPECT_EQ_I(run_op(TOSAC_OP_LOG, ins, 1, &O, NULL), TOSAC_OK);
        EXPECT(isinf(r[0]) && r[0] < 0 && isnan(r[5]) && r[4] == 0.0f);
        EXPECT_EQ_I(run_op(TOSAC_OP_EXP, ins, 1, &O, NULL), TOSAC_OK);
        EXPECT(r[0] == 1.0f && r[1] == 1.0f);
        EXPECT_EQ_I(run_op(TOSAC_OP_SIGMOID, ins, 1, &O, NULL), TOSAC_OK);
        EXPECT(r[0] == 0.5f);
        EXPECT_EQ_I(run_op(TOSAC_OP_TANH, ins, 1, &O, NULL), TOSAC_OK);
        EXPECT(r[0] == 0.0f && r[1] == 0.0f);
        EXPECT_EQ_I(run_op(TOSAC_OP_ERF, ins, 1, &O, NULL), TOSAC_OK);
        EXPECT(r[0] == 0.0f);
        EXPECT_EQ_I(run_op(TOSAC_OP_SIN, ins, 1, &O, NULL), TOSAC_OK);
        EXPECT(r[0] == 0.0f && signbit(r[1]));
        EXPECT_EQ_I(run_op(TOSAC_OP_COS, ins, 1, &O, NULL), TOSAC_OK);
        EXPECT(r[0] == 1.0f);
        /* large inputs: exp overflows to inf, sigmoid saturates */
        const float big[2] = {100.0f, -200.0f};
        memcpy(A.buf, big, sizeof big);
        EXPECT_EQ_I(run_op(TOSAC_OP_EXP, ins, 1, &O, NULL), TOSAC_OK);
        EXPECT(isinf(r[0]) && r[1] == 0.0f);
        EXPECT_EQ_I(run_op(TOSAC_OP_SIGMOID, ins, 1, &O, NULL), TOSAC_OK);
        EXPECT(r[0] == 1.0f && r[1] == 0.0f);
        tt_free(&A);
        tt_free(&O);
    }
    /* NEGATE with FP zero points: must be 0 */
    {
        tt A, O, Z1, Z2;
        tt_make1(&A, TOSAC_DTYPE_FP16, false, 2);
        tt_make1(&O, TOSAC_DTYPE_FP16, false, 2);
        tt_make1(&Z1, TOSAC_DTYPE_FP16, false, 1);
        tt_make1(&Z2, TOSAC_DTYPE_FP16, false, 1);
        set_f(&A, 0, 1.5);
        set_f(&A, 1, 0.0);
        tt *ins[3] = {&A, &Z1, &Z2};
        EXPECT_EQ_I(run_op(TOSAC_OP_NEGATE, ins, 3, &O, NULL), TOSAC_OK);
        EXPECT(get_f(&O, 0) == -1.5 && get_bits(&O, 1) == 0x8000u);
        set_f(&Z2, 0, 1.0);
        EXPECT_EQ_I(run_op(TOSAC_OP_NEGATE, ins, 3, &O, NULL), TOSAC_ERR_TOSA_ERROR);
        tt_free(&A);
        tt_free(&O);
        tt_free(&Z1);
        tt_free(&Z2);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* SELECT                                                                                       */

static void test_select(void)
{
    const struct {
        tosac_dtype t;
        bool f64;
    } types[] = {{TOSAC_DTYPE_BOOL, false}, {TOSAC_DTYPE_INT8, false}, {TOSAC_DTYPE_INT16, false},
                 {TOSAC_DTYPE_INT32, false}, {TOSAC_DTYPE_FP16, false}, {TOSAC_DTYPE_BF16, false},
                 {TOSAC_DTYPE_FP32, false}, {TOSAC_DTYPE_FP32, true}};
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        for (int rank = 0; rank <= 6; rank++) {
            for (int rep = 0; rep < 4; rep++) {
                int64_t os[8], cs[8], as[8], bs[8];
                rand_shape(rank, rank >= 5 ? 3 : 5, os);
                bcast_shape(rank, os, cs);
                bcast_shape(rank, os, as);
                bcast_shape(rank, os, bs);
                const bool inplace = types[k].t == TOSAC_DTYPE_BOOL && rep == 3;
                if (inplace) memcpy(cs, os, sizeof os);
                tt C, A, B, O;
                tt_make(&C, TOSAC_DTYPE_BOOL, false, rank, cs);
                tt_make(&A, types[k].t, types[k].f64, rank, as);
                tt_make(&B, types[k].t, types[k].f64, rank, bs);
                tt_make(&O, types[k].t, types[k].f64, rank, os);
                for (int64_t i = 0; i < C.t.nelem; i++) set_i(&C, i, (int64_t)(rnd() & 1));
                for (size_t i = 0; i < (size_t)A.t.nelem * A.es; i++) A.buf[i] = (uint8_t)rnd();
                for (size_t i = 0; i < (size_t)B.t.nelem * B.es; i++) B.buf[i] = (uint8_t)rnd();
                if (types[k].t == TOSAC_DTYPE_BOOL) {
                    for (int64_t i = 0; i < A.t.nelem; i++) A.buf[i] &= 1;
                    for (int64_t i = 0; i < B.t.nelem; i++) B.buf[i] &= 1;
                }
                const int64_t n = O.t.nelem;
                uint64_t *want = (uint64_t *)malloc((size_t)n * sizeof *want);
                for (int64_t i = 0; i < n; i++)
                    want[i] = get_i(&C, bidx(&C, rank, os, i)) ? get_bits(&A, bidx(&A, rank, os, i))
                                                                 : get_bits(&B, bidx(&B, rank, os, i));
                if (inplace) O.t.data = C.buf;
                tt *ins[3] = {&C, &A, &B};
                EXPECT_EQ_I(run_op(TOSAC_OP_SELECT, ins, 3, &O, NULL), TOSAC_OK);
                const tt *res = inplace ? &C : &O;
                int bad = 0;
                for (int64_t i = 0; i < n; i++) {
                    t_checks++;
                    uint64_t got = 0;
                    memcpy(&got, (const uint8_t *)res->t.data + (size_t)i * O.es, O.es);
                    if (got != want[i]) bad++;
                }
                if (bad) {
                    t_failures++;
                    fprintf(stderr, "  SELECT %s rank %d: %d mismatches\n", tosac_dtype_name(types[k].t), rank, bad);
                }
                free(want);
                tt_free(&C);
                tt_free(&A);
                tt_free(&B);
                tt_free(&O);
            }
        }
    }
    /* broadcast shape mismatch is an ERROR */
    {
        int64_t s2[1] = {2}, s3[1] = {3};
        tt C, A, B, O;
        tt_make(&C, TOSAC_DTYPE_BOOL, false, 1, s2);
        tt_make(&A, TOSAC_DTYPE_INT8, false, 1, s3);
        tt_make(&B, TOSAC_DTYPE_INT8, false, 1, s3);
        tt_make(&O, TOSAC_DTYPE_INT8, false, 1, s3);
        tt *ins[3] = {&C, &A, &B};
        EXPECT_EQ_I(run_op(TOSAC_OP_SELECT, ins, 3, &O, NULL), TOSAC_ERR_TOSA_ERROR);
        tt_free(&C);
        tt_free(&A);
        tt_free(&B);
        tt_free(&O);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* CLAMP                                                                                        */

static void test_clamp(void)
{
    /* i8 with the bytes zero-padded to 8, in place */
    {
        tt A, O;
        tt_make1(&A, TOSAC_DTYPE_INT8, false, 6);
        tt_make1(&O, TOSAC_DTYPE_INT8, false, 6);
        const int64_t v[6] = {-128, -10, -9, 0, 20, 127};
        for (int i = 0; i < 6; i++) set_i(&A, i, v[i]);
        const uint8_t lo[8] = {0xF7, 0, 0, 0, 0, 0, 0, 0}, hi[8] = {20, 0, 0, 0, 0, 0, 0, 0}; /* -9, 20 */
        tosac_attr_val at[TOSAC_ATTR_MAX_FIELDS];
        memset(at, 0, sizeof at);
        attr_bytes(at, TOSAC_ATTR_CLAMP_min_val, lo, 8);
        attr_bytes(at, TOSAC_ATTR_CLAMP_max_val, hi, 8);
        tt *ins[1] = {&A};
        EXPECT_EQ_I(run_op(TOSAC_OP_CLAMP, ins, 1, &O, at), TOSAC_OK);
        const int64_t want[6] = {-9, -9, -9, 0, 20, 20};
        for (int i = 0; i < 6; i++) EXPECT_EQ_I(get_i(&O, i), want[i]);
        O.t.data = A.buf;
        EXPECT_EQ_I(run_op(TOSAC_OP_CLAMP, ins, 1, &O, at), TOSAC_OK);
        for (int i = 0; i < 6; i++) EXPECT_EQ_I(get_i(&A, i), want[i]);
        /* max < min is an ERROR */
        attr_bytes(at, TOSAC_ATTR_CLAMP_min_val, hi, 1);
        attr_bytes(at, TOSAC_ATTR_CLAMP_max_val, lo, 1);
        EXPECT_EQ_I(run_op(TOSAC_OP_CLAMP, ins, 1, &O, at), TOSAC_ERR_TOSA_ERROR);
        tt_free(&A);
        tt_free(&O);
    }
    /* i16 random against the formula, rank 4 */
    {
        int64_t sh[4] = {2, 3, 4, 5};
        tt A, O;
        tt_make(&A, TOSAC_DTYPE_INT16, false, 4, sh);
        tt_make(&O, TOSAC_DTYPE_INT16, false, 4, sh);
        for (int rep = 0; rep < 10; rep++) {
            int64_t lo = rnd_in(-32768, 32767), hi = rnd_in(-32768, 32767);
            if (hi < lo) {
                const int64_t t = lo;
                lo = hi;
                hi = t;
            }
            const uint8_t lb[2] = {(uint8_t)(lo & 0xFF), (uint8_t)((lo >> 8) & 0xFF)};
            const uint8_t hb[2] = {(uint8_t)(hi & 0xFF), (uint8_t)((hi >> 8) & 0xFF)};
            tosac_attr_val at[TOSAC_ATTR_MAX_FIELDS];
            memset(at, 0, sizeof at);
            attr_bytes(at, TOSAC_ATTR_CLAMP_min_val, lb, 2);
            attr_bytes(at, TOSAC_ATTR_CLAMP_max_val, hb, 2);
            for (int64_t i = 0; i < A.t.nelem; i++) set_i(&A, i, rnd_in(-32768, 32767));
            tt *ins[1] = {&A};
            EXPECT_EQ_I(run_op(TOSAC_OP_CLAMP, ins, 1, &O, at), TOSAC_OK);
            for (int64_t i = 0; i < A.t.nelem; i++) {
                const int64_t x = get_i(&A, i);
                EXPECT_EQ_I(get_i(&O, i), x < lo ? lo : x > hi ? hi : x);
            }
        }
        tt_free(&A);
        tt_free(&O);
    }
    /* FP: fp32, fp16, bf16, precise mode; NaN modes and signed zeros */
    const tosac_dtype types[4] = {TOSAC_DTYPE_FP32, TOSAC_DTYPE_FP16, TOSAC_DTYPE_BF16, TOSAC_DTYPE_FP32};
    for (int k = 0; k < 4; k++) {
        const tosac_dtype t = types[k];
        const bool f64 = k == 3;
        uint8_t lb[8] = {0}, hb[8] = {0};
        if (t == TOSAC_DTYPE_FP32) {
            const uint32_t l = tosac_fp32_bits(-0.0f), h = tosac_fp32_bits(6.0f);
            for (int i = 0; i < 4; i++) {
                lb[i] = (uint8_t)(l >> (8 * i));
                hb[i] = (uint8_t)(h >> (8 * i));
            }
        } else {
            const uint16_t l = t == TOSAC_DTYPE_FP16 ? tosac_fp64_to_fp16(-0.0) : tosac_fp64_to_bf16(-0.0);
            const uint16_t h = t == TOSAC_DTYPE_FP16 ? tosac_fp64_to_fp16(6.0) : tosac_fp64_to_bf16(6.0);
            lb[0] = (uint8_t)l, lb[1] = (uint8_t)(l >> 8);
            hb[0] = (uint8_t)h, hb[1] = (uint8_t)(h >> 8);
        }
        const uint32_t blen = t == TOSAC_DTYPE_FP32 ? 4 : 2;
        const double in[7] = {NAN, -1.0, 0.0, -0.0, 3.5, 7.0, INFINITY};
        tt A, O;
        tt_make1(&A, t, f64, 7);
        tt_make1(&O, t, f64, 7);
        for (int i = 0; i < 7; i++) set_f(&A, i, in[i]);
        for (int mode = 1; mode <= 2; mode++) {
            tosac_attr_val at[TOSAC_ATTR_MAX_FIELDS];
            memset(at, 0, sizeof at);
            attr_bytes(at, TOSAC_ATTR_CLAMP_min_val, lb, mode == 2 ? 8 : blen);
            attr_bytes(at, TOSAC_ATTR_CLAMP_max_val, hb, mode == 2 ? 8 : blen);
            attr_set(at, TOSAC_ATTR_CLAMP_nan_mode, mode);
            tt *ins[1] = {&A};
            EXPECT_EQ_I(run_op(TOSAC_OP_CLAMP, ins, 1, &O, at), TOSAC_OK);
            if (mode == TOSAC_NAN_PROPAGATE)
                EXPECT(isnan(get_f(&O, 0)));
            else
                EXPECT(get_f(&O, 0) == 0.0 && signbit(get_f(&O, 0)));
            EXPECT(get_f(&O, 1) == 0.0 && signbit(get_f(&O, 1))); /* -1 -> min_val = -0 */
            EXPECT(get_f(&O, 2) == 0.0 && !signbit(get_f(&O, 2))); /* +0 >= -0 keeps +0 */
            EXPECT(get_f(&O, 3) == 0.0 && signbit(get_f(&O, 3)));
            EXPECT(get_f(&O, 4) == 3.5 && get_f(&O, 5) == 6.0 && get_f(&O, 6) == 6.0);
        }
        tt_free(&A);
        tt_free(&O);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* TABLE                                                                                        */

static void test_table(void)
{
    /* i8: out = table[in + 128], in place */
    {
        tt A, T, O;
        int64_t sh[2] = {16, 16};
        tt_make(&A, TOSAC_DTYPE_INT8, false, 2, sh);
        tt_make(&O, TOSAC_DTYPE_INT8, false, 2, sh);
        tt_make1(&T, TOSAC_DTYPE_INT8, false, 256);
        for (int i = 0; i < 256; i++) {
            set_i(&T, i, rnd_in(-128, 127));
            set_i(&A, i, i - 128);
        }
        tt *ins[2] = {&A, &T};
        EXPECT_EQ_I(run_op(TOSAC_OP_TABLE, ins, 2, &O, NULL), TOSAC_OK);
        for (int i = 0; i < 256; i++) EXPECT_EQ_I(get_i(&O, i), get_i(&T, get_i(&A, i) + 128));
        O.t.data = A.buf;
        EXPECT_EQ_I(run_op(TOSAC_OP_TABLE, ins, 2, &O, NULL), TOSAC_OK);
        for (int i = 0; i < 256; i++) EXPECT_EQ_I(get_i(&A, i), get_i(&T, i));
        T.t.nelem = 255;
        EXPECT_EQ_I(run_op(TOSAC_OP_TABLE, ins, 2, &O, NULL), TOSAC_ERR_TOSA_ERROR);
        tt_free(&A);
        tt_free(&T);
        tt_free(&O);
    }
    /* i8 at every level, lengths around the 32- and 64-byte vectors, and pieces on three workers */
    {
        static const int64_t lens[] = {1, 31, 32, 33, 63, 64, 65, 200, 140001};
        tt T;
        tt_make1(&T, TOSAC_DTYPE_INT8, false, 256);
        for (int i = 0; i < 256; i++) set_i(&T, i, rnd_in(-128, 127));
        for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++) {
            tt A, O;
            tt_make1(&A, TOSAC_DTYPE_INT8, false, lens[li]);
            tt_make1(&O, TOSAC_DTYPE_INT8, false, lens[li]);
            for (int64_t i = 0; i < lens[li]; i++) set_i(&A, i, rnd_in(-128, 127));
            kr_workers = lens[li] > 100000 ? 3 : 1;
            for (uint32_t level = 0; level <= TOSAC_KISA_AVX512; level++) {
                tosac_kernel_limit_isa(level);
                memset(O.buf, 0x5A, (size_t)lens[li]);
                tt *ins[2] = {&A, &T};
                EXPECT_EQ_I(run_op(TOSAC_OP_TABLE, ins, 2, &O, NULL), TOSAC_OK);
                int64_t bad = 0;
                for (int64_t i = 0; i < lens[li]; i++) bad += get_i(&O, i) != get_i(&T, get_i(&A, i) + 128);
                EXPECT_EQ_I(bad, 0);
            }
            kr_workers = 1;
            tosac_kernel_limit_isa(TOSAC_KISA_AVX512);
            tt_free(&A);
            tt_free(&O);
        }
        tt_free(&T);
    }
    /* i16 §B.4: table[i] = (i - 256) * 100 */
    {
        tt A, T, O;
        tt_make1(&A, TOSAC_DTYPE_INT16, false, 5);
        tt_make1(&O, TOSAC_DTYPE_INT32, false, 5);
        tt_make1(&T, TOSAC_DTYPE_INT16, false, 513);
        for (int i = 0; i < 513; i++) set_i(&T, i, (i - 256) * 100);
        const int64_t in[5] = {-32768, -1, 0, 64, 32767};
        for (int i = 0; i < 5; i++) set_i(&A, i, in[i]);
        tt *ins[2] = {&A, &T};
        EXPECT_EQ_I(run_op(TOSAC_OP_TABLE, ins, 2, &O, NULL), TOSAC_OK);
        const int64_t want[5] = {-3276800, -100, 0, 6400, 3276700};
        for (int i = 0; i < 5; i++) EXPECT_EQ_I(get_i(&O, i), want[i]);
        tt_free(&A);
        tt_free(&T);
        tt_free(&O);
    }
    /* i16 random table and inputs against base*128 + slope*frac by division */
    {
        tt A, T, O;
        int64_t sh[3] = {4, 8, 16};
        tt_make(&A, TOSAC_DTYPE_INT16, false, 3, sh);
        tt_make(&O, TOSAC_DTYPE_INT32, false, 3, sh);
        tt_make1(&T, TOSAC_DTYPE_INT16, false, 513);
        for (int rep = 0; rep < 5; rep++) {
            int64_t prev = rnd_in(-32768, 32767);
            set_i(&T, 0, prev);
            for (int i = 1; i < 513; i++) {
                int64_t v = prev + rnd_in(-20000, 20000);
                v = v < -32768 ? -32768 : v > 32767 ? 32767 : v;
                set_i(&T, i, v);
                prev = v;
            }
            for (int64_t i = 0; i < A.t.nelem; i++) set_i(&A, i, rnd_in(-32768, 32767));
            tt *ins[2] = {&A, &T};
            EXPECT_EQ_I(run_op(TOSAC_OP_TABLE, ins, 2, &O, NULL), TOSAC_OK);
            for (int64_t i = 0; i < A.t.nelem; i++) {
                const int64_t x = get_i(&A, i) + 32768;
                const int64_t idx = x / 128, frac = x % 128;
                const int64_t base = get_i(&T, idx), next = get_i(&T, idx + 1);
                EXPECT_EQ_I(get_i(&O, i), base * 128 + (next - base) * frac);
            }
        }
        /* REQUIRE slope within i16: a used pair with slope 65535 fails, an unused one does not */
        for (int i = 0; i < 513; i++) set_i(&T, i, 0);
        set_i(&T, 0, -32768);
        set_i(&T, 1, 32767);
        for (int64_t i = 0; i < A.t.nelem; i++) set_i(&A, i, 0);
        tt *ins[2] = {&A, &T};
        EXPECT_EQ_I(run_op(TOSAC_OP_TABLE, ins, 2, &O, NULL), TOSAC_OK);
        set_i(&A, 7, -32700);
        EXPECT_EQ_I(run_op(TOSAC_OP_TABLE, ins, 2, &O, NULL), TOSAC_ERR_UNPREDICTABLE);
        tt_free(&A);
        tt_free(&T);
        tt_free(&O);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* CAST                                                                                         */

/* CAST of n integer values between integer-like types; returns the status. */
static tosac_status cast_ii(tosac_dtype ti, tosac_dtype to, int n, const int64_t *v, int64_t *out)
{
    tt A, O;
    tt_make1(&A, ti, false, n);
    tt_make1(&O, to, false, n);
    for (int i = 0; i < n; i++) set_i(&A, i, v[i]);
    tt *ins[1] = {&A};
    tosac_status s = run_op(TOSAC_OP_CAST, ins, 1, &O, NULL);
    for (int i = 0; i < n; i++) out[i] = get_i(&O, i);
    tt_free(&A);
    tt_free(&O);
    return s;
}

/* CAST fp -> int of n values (given as doubles, rounded to ti first). */
static tosac_status cast_fi(tosac_dtype ti, bool f64, tosac_dtype to, int n, const double *v, int64_t *out)
{
    tt A, O;
    tt_make1(&A, ti, f64, n);
    tt_make1(&O, to, false, n);
    for (int i = 0; i < n; i++) set_f(&A, i, v[i]);
    tt *ins[1] = {&A};
    tosac_status s = run_op(TOSAC_OP_CAST, ins, 1, &O, NULL);
    for (int i = 0; i < n; i++) out[i] = get_i(&O, i);
    tt_free(&A);
    tt_free(&O);
    return s;
}

/* Round half to even written with nearbyint-free arithmetic on halves. */
static int64_t rne_ref(double v)
{
    const double t = trunc(v);
    const double d = fabs(v - t);
    int64_t q = (int64_t)t;
    if (d > 0.5 || (d == 0.5 && q % 2 != 0)) q += v < 0 ? -1 : 1;
    return q;
}

static void test_cast(void)
{
    const tosac_dtype BL = TOSAC_DTYPE_BOOL, I8 = TOSAC_DTYPE_INT8, I16 = TOSAC_DTYPE_INT16, I32 = TOSAC_DTYPE_INT32;
    const tosac_dtype F32 = TOSAC_DTYPE_FP32, F16 = TOSAC_DTYPE_FP16, B16 = TOSAC_DTYPE_BF16;
    int64_t o[16];
    /* §B.4: fp32 -> i8 */
    {
        const double v[6] = {2.5, 3.5, -2.5, -0.5, 300.0, -1e9};
        EXPECT_EQ_I(cast_fi(F32, false, I8, 6, v, o), TOSAC_OK);
        EXPECT_VEC(o, 2, 4, -2, 0, 127, -128);
        EXPECT_EQ_I(cast_fi(F32, true, I8, 6, v, o), TOSAC_OK); /* precise mode */
        EXPECT_VEC(o, 2, 4, -2, 0, 127, -128);
        EXPECT_EQ_I(cast_fi(F16, false, I8, 6, v, o), TOSAC_OK);
        EXPECT_VEC(o, 2, 4, -2, 0, 127, -128);
        EXPECT_EQ_I(cast_fi(B16, false, I8, 6, v, o), TOSAC_OK);
        EXPECT_VEC(o, 2, 4, -2, 0, 127, -128);
    }
    /* §B.4: i32 -> i8 wraps; i8 -> bool */
    {
        const int64_t v[2] = {300, -129};
        EXPECT_EQ_I(cast_ii(I32, I8, 2, v, o), TOSAC_OK);
        EXPECT_VEC(o, 44, 127);
        const int64_t b[3] = {0, 5, -1};
        EXPECT_EQ_I(cast_ii(I8, BL, 3, b, o), TOSAC_OK);
        EXPECT_VEC(o, 0, 1, 1);
    }
    /* every integer row against wrap / sign-extension / != 0 */
    {
        const tosac_dtype it[4] = {BL, I8, I16, I32};
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++) {
                if (a == b) continue;
                int64_t v[16];
                const int ib = a == 0 ? 1 : (int)tosac_dtype_bits(it[a]);
                for (int i = 0; i < 16; i++) v[i] = ib == 1 ? (int64_t)(rnd() & 1) : g_full(ib);
                v[0] = 0;
                EXPECT_EQ_I(cast_ii(it[a], it[b], 16, v, o), TOSAC_OK);
                for (int i = 0; i < 16; i++) {
                    const int64_t want = b == 0 ? v[i] != 0 : wrapb(v[i], (int)tosac_dtype_bits(it[b]));
                    EXPECT_EQ_I(o[i], want);
                }
            }
    }
    /* fp -> int: saturation, ties to even, all float sources, random values */
    {
        const tosac_dtype ot[3] = {I8, I16, I32};
        const tosac_dtype ft[3] = {F32, F16, B16};
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                for (int f64 = 0; f64 <= (a == 0); f64++) {
                    double v[16];
                    for (int i = 0; i < 16; i++) {
                        const double mag = pow(2.0, (double)rnd_in(-2, 33));
                        v[i] = (rnd() % 4 == 0) ? (double)rnd_in(-40, 40) + 0.5 : (rnd_unit() * 2 - 1) * mag;
                    }
                    v[0] = INFINITY;
                    v[1] = -INFINITY;
                    v[2] = 2147483647.0;
                    v[3] = -2147483648.0;
                    tt A;
                    tt_make1(&A, ft[a], f64 != 0, 16);
                    for (int i = 0; i < 16; i++) set_f(&A, i, v[i]);
                    for (int i = 0; i < 16; i++) v[i] = get_f(&A, i); /* the values actually stored */
                    tt_free(&A);
                    EXPECT_EQ_I(cast_fi(ft[a], f64 != 0, ot[b], 16, v, o), TOSAC_OK);
                    const int bits = (int)tosac_dtype_bits(ot[b]);
                    const double hi = (double)(pow2(bits - 1) - 1), lo = (double)-pow2(bits - 1);
                    for (int i = 0; i < 16; i++) {
                        const int64_t want = v[i] >= hi ? (int64_t)hi : v[i] <= lo ? (int64_t)lo : rne_ref(v[i]);
                        EXPECT_EQ_I(o[i], want);
                    }
                }
        /* NaN -> integer is a REQUIRE */
        const double n1[2] = {1.0, NAN};
        EXPECT_EQ_I(cast_fi(F32, false, I8, 2, n1, o), TOSAC_ERR_UNPREDICTABLE);
        EXPECT_EQ_I(cast_fi(F32, false, I32, 2, n1, o), TOSAC_ERR_UNPREDICTABLE);
        EXPECT_EQ_I(cast_fi(F16, false, I16, 2, n1, o), TOSAC_ERR_UNPREDICTABLE);
        EXPECT_EQ_I(cast_fi(F32, true, I16, 2, n1, o), TOSAC_ERR_UNPREDICTABLE);
    }
    /* int -> fp: one rounding to nearest even */
    {
        const int64_t v[6] = {16777217, 16777219, -2147483647 - 1, 65519, 65520, 257};
        tt A, O;
        tt_make1(&A, I32, false, 6);
        for (int i = 0; i < 6; i++) set_i(&A, i, v[i]);
        tt *ins[1] = {&A};
        tt_make1(&O, F32, false, 6);
        EXPECT_EQ_I(run_op(TOSAC_OP_CAST, ins, 1, &O, NULL), TOSAC_OK);
        EXPECT(get_f(&O, 0) == 16777216.0 && get_f(&O, 1) == 16777220.0 && get_f(&O, 2) == -2147483648.0);
        tt_free(&O);
        tt_make1(&O, F16, false, 6);
        EXPECT_EQ_I(run_op(TOSAC_OP_CAST, ins, 1, &O, NULL), TOSAC_OK);
        EXPECT(isinf(get_f(&O, 0)) && get_f(&O, 3) == 65504.0 && isinf(get_f(&O, 4)) && get_f(&O, 5) == 257.0);
        tt_free(&O);
        tt_make1(&O, B16, false, 6);
        EXPECT_EQ_I(run_op(TOSAC_OP_CAST, ins, 1, &O, NULL), TOSAC_OK);
        EXPECT(get_f(&O, 0) == 16777216.0 && get_f(&O, 5) == 256.0 && get_f(&O, 3) == 65536.0);
        tt_free(&O);
        tt_make1(&O, F32, true, 6);
        EXPECT_EQ_I(run_op(TOSAC_OP_CAST, ins, 1, &O, NULL), TOSAC_OK);
        EXPECT(get_f(&O, 0) == 16777217.0 && get_f(&O, 1) == 16777219.0);
        tt_free(&O);
        tt_free(&A);
        const int64_t s8[3] = {-128, 127, 0};
        for (int k = 0; k < 3; k++) {
            tt B;
            tt_make1(&B, k == 0 ? I8 : k == 1 ? I16 : BL, false, 3);
            for (int i = 0; i < 3; i++) set_i(&B, i, k == 2 ? (i == 1) : s8[i]);
            tt *ins2[1] = {&B};
            tt_make1(&O, F32, false, 3);
            EXPECT_EQ_I(run_op(TOSAC_OP_CAST, ins2, 1, &O, NULL), TOSAC_OK);
            for (int i = 0; i < 3; i++) EXPECT(get_f(&O, i) == (double)(k == 2 ? (i == 1) : s8[i]));
            tt_free(&O);
            tt_free(&B);
        }
    }
    /* fp -> fp: every row of the spec, against a single rounding of the exact value */
    {
        const tosac_dtype E4 = TOSAC_DTYPE_FP8E4M3, E5 = TOSAC_DTYPE_FP8E5M2;
        const tosac_dtype rows[][2] = {{F16, F32}, {F32, F16}, {B16, F32}, {F32, B16}, {B16, E4}, {B16, E5},
                                       {E4, F16},  {E4, F32},  {F16, E4},  {F32, E4},  {E4, B16}, {E5, F16},
                                       {E5, F32},  {F16, E5},  {F32, E5},  {E5, B16}};
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
            const int n = 40;
            tt A, O;
            tt_make1(&A, rows[r][0], false, n);
            tt_make1(&O, rows[r][1], false, n);
            for (int i = 0; i < n; i++) {
                double v = (rnd_unit() * 2 - 1) * pow(2.0, (double)rnd_in(-20, 20));
                if (i == 0) v = NAN;
                if (i == 1) v = 1e6; /* overflows fp8 / fp16 */
                if (i == 2) v = -0.0;
                set_f(&A, i, v);
            }
            tt *ins[1] = {&A};
            EXPECT_EQ_I(run_op(TOSAC_OP_CAST, ins, 1, &O, NULL), TOSAC_OK);
            for (int i = 0; i < n; i++) {
                const double x = get_f(&A, i);
                if (isnan(x)) {
                    EXPECT(isnan(get_f(&O, i)));
                    continue;
                }
                EXPECT_EQ_I(get_bits(&O, i), fp_bits_of(rows[r][1], false, x));
            }
            if (rows[r][1] == E4 && !isnan(get_f(&A, 1))) EXPECT(isnan(get_f(&O, 1))); /* E4M3 overflow: NaN */
            tt_free(&A);
            tt_free(&O);
        }
        /* fp32 -> fp16 ties: 1 + 2^-11 -> 1 (even), 1 + 3*2^-11 -> 1 + 2^-9 */
        tt A, O;
        tt_make1(&A, F32, false, 2);
        tt_make1(&O, F16, false, 2);
        set_f(&A, 0, 1.0 + pow(2.0, -11));
        set_f(&A, 1, 1.0 + 3 * pow(2.0, -11));
        tt *ins[1] = {&A};
        EXPECT_EQ_I(run_op(TOSAC_OP_CAST, ins, 1, &O, NULL), TOSAC_OK);
        EXPECT(get_f(&O, 0) == 1.0 && get_f(&O, 1) == 1.0 + pow(2.0, -9));
        tt_free(&A);
        tt_free(&O);
    }
    /* in place: i32 -> fp32 share the element size */
    {
        tt A, O;
        tt_make1(&A, I32, false, 3);
        tt_make1(&O, F32, false, 3);
        set_i(&A, 0, -3);
        set_i(&A, 1, 1000000);
        set_i(&A, 2, 7);
        O.t.data = A.buf;
        tt *ins[1] = {&A};
        EXPECT_EQ_I(run_op(TOSAC_OP_CAST, ins, 1, &O, NULL), TOSAC_OK);
        const float *f = (const float *)(void *)A.buf;
        EXPECT(f[0] == -3.0f && f[1] == 1000000.0f && f[2] == 7.0f);
        O.t.data = O.buf;
        tt_free(&A);
        tt_free(&O);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* RESCALE                                                                                      */

typedef struct rs {
    tosac_dtype ti, to;
    bool scale32, per_channel, iu, ou;
    int rm;
} rs;

/* The spec's per-element algorithm in int64 (no shifts); false if a REQUIRE fails. */
static bool rescale_ref(const rs *p, int64_t v, int64_t izp, int64_t m, int64_t s, int64_t ozp, int64_t *out)
{
    const int ibits = (int)tosac_dtype_bits(p->ti), obits = (int)tosac_dtype_bits(p->to);
    if (p->iu) {
        if (v < 0) v += pow2(ibits);
        if (izp < 0) izp += pow2(ibits);
    }
    if (p->ou && ozp < 0) ozp += pow2(obits);
    const int64_t x = v - izp;
    if (m < 0 || s < 2 || s > 62) return false;
    int64_t r;
    if (p->rm == TOSAC_ROUND_INEXACT) {
        const float prod = (float)x * (float)m;
        const float q = prod * ldexpf(1.0f, -(int)s);
        const float rr = nearbyintf(q);
        if (!(rr >= -2147483648.0f && rr < 2147483648.0f)) return false;
        r = (int64_t)rr;
    } else if (p->scale32) {
        if (x < -pow2((int)s - 1) || x >= pow2((int)s - 1)) return false;
        int64_t round = pow2((int)s - 1);
        if (p->rm == TOSAC_ROUND_DOUBLE && s > 31) round += x >= 0 ? pow2(30) : -pow2(30);
        r = floordiv(x * m + round, pow2((int)s));
    } else {
        r = floordiv(x * m + pow2((int)s - 1), pow2((int)s));
        if (!fits(r, 32)) return false;
    }
    r += ozp;
    if (!fits(r, 32)) return false;
    const int64_t lo = p->ou ? 0 : -pow2(obits - 1), hi = p->ou ? pow2(obits) - 1 : pow2(obits - 1) - 1;
    r = r < lo ? lo : r > hi ? hi : r;
    *out = wrapb(r, obits);
    return true;
}

/* Builds and runs one RESCALE; vals/mult/shift given; returns status and fills out. */
static tosac_status rescale_run(const rs *p, int rank, const int64_t *shape, const int64_t *vals, const int64_t *mult,
                                const int64_t *shift, int64_t izp, int64_t ozp, int64_t *out, bool inplace)
{
    tt A, M, S, IZ, OZ, O;
    tt_make(&A, p->ti, false, rank, shape);
    tt_make(&O, p->to, false, rank, shape);
    const int64_t nc = p->per_channel ? shape[rank - 1] : 1;
    tt_make1(&M, p->scale32 ? TOSAC_DTYPE_INT32 : TOSAC_DTYPE_INT16, false, nc);
    tt_make1(&S, TOSAC_DTYPE_INT8, false, nc);
    tt_make1(&IZ, p->ti, false, 1);
    tt_make1(&OZ, p->to, false, 1);
    for (int64_t i = 0; i < A.t.nelem; i++) set_i(&A, i, vals[i]);
    for (int64_t c = 0; c < nc; c++) {
        set_i(&M, c, mult[c]);
        set_i(&S, c, shift[c]);
    }
    set_i(&IZ, 0, izp);
    set_i(&OZ, 0, ozp);
    tosac_attr_val at[TOSAC_ATTR_MAX_FIELDS];
    memset(at, 0, sizeof at);
    attr_set(at, TOSAC_ATTR_RESCALE_scale32, p->scale32);
    attr_set(at, TOSAC_ATTR_RESCALE_rounding_mode, p->rm);
    attr_set(at, TOSAC_ATTR_RESCALE_per_channel, p->per_channel);
    attr_set(at, TOSAC_ATTR_RESCALE_input_unsigned, p->iu);
    attr_set(at, TOSAC_ATTR_RESCALE_output_unsigned, p->ou);
    if (inplace) O.t.data = A.buf;
    tt *ins[5] = {&A, &M, &S, &IZ, &OZ};
    tosac_status s = run_op(TOSAC_OP_RESCALE, ins, 5, &O, at);
    for (int64_t i = 0; i < A.t.nelem; i++) out[i] = inplace ? get_i(&A, i) : get_i(&O, i);
    tt_free(&A);
    tt_free(&O);
    tt_free(&M);
    tt_free(&S);
    tt_free(&IZ);
    tt_free(&OZ);
    return s;
}

static void test_rescale_spots(void)
{
    int64_t o[8];
    const int64_t shape[1] = {4}, vals[4] = {-11, 5, 11, 22}, m[1] = {1518500250}, s[1] = {33};
    rs p = {TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT8, true, false, false, false, TOSAC_ROUND_SINGLE};
    EXPECT_EQ_I(rescale_run(&p, 1, shape, vals, m, s, -3, 5, o, false), TOSAC_OK);
    EXPECT_VEC(o, 4, 6, 7, 9);
    EXPECT_EQ_I(rescale_run(&p, 1, shape, vals, m, s, -3, 5, o, true), TOSAC_OK);
    EXPECT_VEC(o, 4, 6, 7, 9);
    p.rm = TOSAC_ROUND_DOUBLE;
    EXPECT_EQ_I(rescale_run(&p, 1, shape, vals, m, s, -3, 5, o, false), TOSAC_OK);
    EXPECT_VEC(o, 3, 7, 8, 10);
    /* DOUBLE_ROUND with scale32=false, and other attribute ERROR_IFs */
    p.scale32 = false;
    const int64_t m16[1] = {16384}, s14[1] = {14};
    EXPECT_EQ_I(rescale_run(&p, 1, shape, vals, m16, s14, 0, 0, o, false), TOSAC_ERR_TOSA_ERROR);
    p.rm = TOSAC_ROUND_UNKNOWN;
    EXPECT_EQ_I(rescale_run(&p, 1, shape, vals, m16, s14, 0, 0, o, false), TOSAC_ERR_TOSA_ERROR);
    /* identity scalings: scale32 m=2^30 s=30, scale16 m=2^14 s=14; rank 0 */
    rs q = {TOSAC_DTYPE_INT32, TOSAC_DTYPE_INT32, true, false, false, false, TOSAC_ROUND_SINGLE};
    const int64_t v1[1] = {-123456789}, m30[1] = {1 << 30}, s30[1] = {30};
    EXPECT_EQ_I(rescale_run(&q, 0, shape, v1, m30, s30, 0, 0, o, false), TOSAC_OK);
    EXPECT_EQ_I(o[0], -123456789);
    q.ti = TOSAC_DTYPE_INT48;
    q.scale32 = false;
    const int64_t v48[1] = {-(((int64_t)1 << 40) + 5)}, s20[1] = {24};
    EXPECT_EQ_I(rescale_run(&q, 0, shape, v48, m16, s20, 0, 0, o, false), TOSAC_OK);
    EXPECT_EQ_I(o[0], floordiv(v48[0] * 16384 + pow2(23), pow2(24)));
    /* REQUIREs: shift out of [2, 62], negative multiplier, value outside +-2^(shift-1),
       result + zp beyond i32, scale16 result beyond i32 */
    rs r8 = {TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT8, true, false, false, false, TOSAC_ROUND_SINGLE};
    const int64_t one[1] = {1}, s1[1] = {1}, s63[1] = {63}, mneg[1] = {-5}, s2[1] = {2};
    const int64_t sh1[1] = {1}, big[1] = {100};
    EXPECT_EQ_I(rescale_run(&r8, 1, sh1, big, one, s1, 0, 0, o, false), TOSAC_ERR_UNPREDICTABLE);
    EXPECT_EQ_I(rescale_run(&r8, 1, sh1, big, one, s63, 0, 0, o, false), TOSAC_ERR_UNPREDICTABLE);
    const int64_t sneg[1] = {-1};
    EXPECT_EQ_I(rescale_run(&r8, 1, sh1, big, one, sneg, 0, 0, o, false), TOSAC_ERR_UNPREDICTABLE);
    EXPECT_EQ_I(rescale_run(&r8, 1, sh1, big, mneg, s30, 0, 0, o, false), TOSAC_ERR_UNPREDICTABLE);
    EXPECT_EQ_I(rescale_run(&r8, 1, sh1, big, one, s2, 0, 0, o, false), TOSAC_ERR_UNPREDICTABLE); /* 100 >= 2 */
    const int64_t small[1] = {1};
    EXPECT_EQ_I(rescale_run(&r8, 1, sh1, small, one, s2, 0, 0, o, false), TOSAC_OK);
    EXPECT_EQ_I(o[0], 0); /* (1 * 1 + 2) / 4 rounded down */
    rs r32 = {TOSAC_DTYPE_INT32, TOSAC_DTYPE_INT32, true, false, false, false, TOSAC_ROUND_SINGLE};
    const int64_t vmax[1] = {INT32_MAX}, vmax2[1] = {(1 << 29) - 1}, s32[1] = {32};
    EXPECT_EQ_I(rescale_run(&r32, 1, sh1, vmax, m30, s30, 0, 0, o, false), TOSAC_ERR_UNPREDICTABLE);
    EXPECT_EQ_I(rescale_run(&r32, 1, sh1, vmax2, m30, s30, 0, 0, o, false), TOSAC_OK);
    EXPECT_EQ_I(o[0], (1 << 29) - 1);
    EXPECT_EQ_I(rescale_run(&r32, 1, sh1, vmax, m30, s32, 0, 0, o, false), TOSAC_OK);
    EXPECT_EQ_I(o[0], 536870912); /* floor(MAX / 4 + 1/2) */
    /* r + output_zp beyond i32: i48 -> i8 with r = INT32_MAX */
    rs r48z = {TOSAC_DTYPE_INT48, TOSAC_DTYPE_INT8, false, false, false, false, TOSAC_ROUND_SINGLE};
    const int64_t v4[1] = {(int64_t)INT32_MAX * 4};
    EXPECT_EQ_I(rescale_run(&r48z, 1, sh1, v4, one, s2, 0, 0, o, false), TOSAC_OK);
    EXPECT_EQ_I(o[0], 127);
    EXPECT_EQ_I(rescale_run(&r48z, 1, sh1, v4, one, s2, 0, 1, o, false), TOSAC_ERR_UNPREDICTABLE);
    rs r16 = {TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT32, false, false, false, false, TOSAC_ROUND_SINGLE};
    const int64_t v16[1] = {-32768}, m32767[1] = {32767}, s2b[1] = {2};
    EXPECT_EQ_I(rescale_run(&r16, 1, sh1, v16, m32767, s2b, 0, 0, o, false), TOSAC_OK);
    EXPECT_EQ_I(o[0], floordiv(-32768 * 32767 + 2, 4));
    rs r48 = {TOSAC_DTYPE_INT48, TOSAC_DTYPE_INT32, false, false, false, false, TOSAC_ROUND_SINGLE};
    const int64_t vb[1] = {(int64_t)1 << 46};
    EXPECT_EQ_I(rescale_run(&r48, 1, sh1, vb, m32767, s2b, 0, 0, o, false), TOSAC_ERR_UNPREDICTABLE);
    /* unsigned: u8 255 -> i8 with zp 128; i8 -> u8 stores 255 as -1; u16 zp 32768 */
    rs u = {TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT8, true, false, true, false, TOSAC_ROUND_SINGLE};
    const int64_t uv[3] = {-1, 0, -128}, sh3[1] = {3};
    EXPECT_EQ_I(rescale_run(&u, 1, sh3, uv, m30, s30, -128, 0, o, false), TOSAC_OK); /* izp = 128 as u8 */
    EXPECT_VEC(o, 127, -128, 0);
    rs u2 = {TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT8, true, false, false, true, TOSAC_ROUND_SINGLE};
    const int64_t uv2[3] = {127, -128, 0};
    EXPECT_EQ_I(rescale_run(&u2, 1, sh3, uv2, m30, s30, 0, -128, o, false), TOSAC_OK); /* ozp = 128 as u8 */
    EXPECT_VEC(o, -1, 0, -128); /* 255, 0, 128 as bit patterns */
    rs u3 = {TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT16, false, false, true, false, TOSAC_ROUND_SINGLE};
    const int64_t uv3[3] = {-1, 0, -32768};
    EXPECT_EQ_I(rescale_run(&u3, 1, sh3, uv3, m16, s14, -32768, 0, o, false), TOSAC_OK);
    EXPECT_VEC(o, 32767, -32768, 0);
    rs u4 = {TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT16, false, false, false, true, TOSAC_ROUND_SINGLE};
    const int64_t uv4[3] = {32767, -32768, -1};
    EXPECT_EQ_I(rescale_run(&u4, 1, sh3, uv4, m16, s14, 0, -32768, o, false), TOSAC_OK);
    EXPECT_VEC(o, -1, 0, 32767); /* 65535, 0, 32767 */
    /* zero point rules */
    EXPECT_EQ_I(rescale_run(&u3, 1, sh3, uv3, m16, s14, 5, 0, o, false), TOSAC_ERR_TOSA_ERROR);
    EXPECT_EQ_I(rescale_run(&r32, 1, sh1, vmax2, m30, s30, 1, 0, o, false), TOSAC_ERR_TOSA_ERROR);
    /* INEXACT: ties to even on the fp32 product: 5 * 2^30 * 2^-31 = 2.5 -> 2, 7 -> 3.5 -> 4 */
    rs in8 = {TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT16, true, false, false, false, TOSAC_ROUND_INEXACT};
    const int64_t iv[3] = {5, 7, -5}, s31[1] = {31};
    EXPECT_EQ_I(rescale_run(&in8, 1, sh3, iv, m30, s31, 0, 0, o, false), TOSAC_OK);
    EXPECT_VEC(o, 2, 4, -2);
}

static void test_rescale_random(void)
{
    const tosac_dtype ins[4] = {TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT32, TOSAC_DTYPE_INT48};
    const tosac_dtype outs[3] = {TOSAC_DTYPE_INT8, TOSAC_DTYPE_INT16, TOSAC_DTYPE_INT32};
    int cases = 0, valid_cases = 0;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 3; b++)
            for (int rep = 0; rep < 30; rep++) {
                rs p;
                memset(&p, 0, sizeof p);
                p.ti = ins[a];
                p.to = outs[b];
                p.scale32 = p.ti != TOSAC_DTYPE_INT48 && rnd() % 4 != 0;
                p.rm = !p.scale32 ? (rnd() % 5 == 0 ? TOSAC_ROUND_INEXACT : TOSAC_ROUND_SINGLE)
                                  : (int)rnd_in(1, 3);
                const int rank = (int)rnd_in(0, 6);
                p.per_channel = rank > 0 && rnd() % 2 == 0;
                const bool narrow_in = p.ti == TOSAC_DTYPE_INT8 || p.ti == TOSAC_DTYPE_INT16;
                const bool narrow_out = p.to != TOSAC_DTYPE_INT32;
                if (narrow_in && narrow_out && rnd() % 3 == 0) {
                    if (rnd() & 1)
                        p.iu = true;
                    else
                        p.ou = true;
                }
                int64_t shape[8];
                rand_shape(rank, rank >= 5 ? 3 : 6, shape);
                const int64_t nc = p.per_channel ? shape[rank - 1] : 1;
                int64_t mult[8], shift[8];
                const int ib = (int)tosac_dtype_bits(p.ti);
                for (int64_t c = 0; c < nc; c++) {
                    mult[c] = p.scale32 ? rnd_in(0, INT32_MAX) : rnd_in(0, 32767);
                    /* shifts that keep most values legal: a few REQUIRE failures still happen */
                    const int lo = p.scale32 ? (ib >= 32 ? 32 : ib + 2) : (ib >= 48 ? 30 : 14);
                    shift[c] = rnd() % 25 == 0 ? rnd_in(-2, 64) : rnd_in(lo, 62);
                }
                int64_t izp = 0, ozp = 0;
                if (p.ti == TOSAC_DTYPE_INT8) izp = rnd_in(-128, 127);
                if (p.to == TOSAC_DTYPE_INT8) ozp = rnd_in(-128, 127);
                if (p.ti == TOSAC_DTYPE_INT16 && p.iu && (rnd() & 1)) izp = -32768;
                if (p.to == TOSAC_DTYPE_INT16 && p.ou && (rnd() & 1)) ozp = -32768;
                tt T;
                tt_make(&T, TOSAC_DTYPE_INT8, false, rank, shape);
                const int64_t n = T.t.nelem;
                tt_free(&T);
                int64_t *vals = (int64_t *)malloc((size_t)n * sizeof *vals);
                int64_t *got = (int64_t *)malloc((size_t)n * sizeof *got);
                int64_t *want = (int64_t *)malloc((size_t)n * sizeof *want);
                bool valid = true;
                for (int64_t i = 0; i < n; i++) {
                    vals[i] = p.ti == TOSAC_DTYPE_INT48 ? rnd_in(-pow2(47), pow2(47) - 1) : g_full(ib);
                    const int64_t c = p.per_channel ? i % nc : 0;
                    valid &= rescale_ref(&p, vals[i], izp, mult[c], shift[c], ozp, &want[i]);
                }
                const bool inplace =
                    tosac_exec_elem_size(p.ti, false) == tosac_exec_elem_size(p.to, false) && (rep & 1);
                tosac_status s = rescale_run(&p, rank, shape, vals, mult, shift, izp, ozp, got, inplace);
                cases++;
                if (!valid) {
                    EXPECT_EQ_I(s, TOSAC_ERR_UNPREDICTABLE);
                } else {
                    valid_cases++;
                    EXPECT_EQ_I(s, TOSAC_OK);
                    int bad = 0;
                    for (int64_t i = 0; i < n; i++) {
                        t_checks++;
                        if (got[i] != want[i] && bad++ < 3)
                            fprintf(stderr,
                                    "  RESCALE %s->%s s32=%d rm=%d pc=%d iu=%d ou=%d elem %lld (v %lld): "
                                    "got %lld want %lld\n",
                                    tosac_dtype_name(p.ti), tosac_dtype_name(p.to), p.scale32, p.rm, p.per_channel,
                                    p.iu, p.ou, (long long)i, (long long)vals[i], (long long)got[i],
                                    (long long)want[i]);
                    }
                    if (bad) t_failures++;
                }
                free(vals);
                free(got);
                free(want);
            }
    EXPECT(valid_cases > cases / 2);
}

/* ------------------------------------------------------------------------------------------ */
/* IDENTITY                                                                                     */

static void test_identity(void)
{
    const struct {
        tosac_dtype t;
        bool f64;
    } types[] = {{TOSAC_DTYPE_BOOL, false}, {TOSAC_DTYPE_INT4, false},    {TOSAC_DTYPE_INT8, false},
                 {TOSAC_DTYPE_INT16, false}, {TOSAC_DTYPE_INT32, false},  {TOSAC_DTYPE_INT48, false},
                 {TOSAC_DTYPE_FP16, false}, {TOSAC_DTYPE_BF16, false},    {TOSAC_DTYPE_FP32, false},
                 {TOSAC_DTYPE_FP8E4M3, false}, {TOSAC_DTYPE_FP8E5M2, false}, {TOSAC_DTYPE_FP32, true}};
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        for (int rank = 0; rank <= 6; rank += 2) {
            int64_t sh[8];
            rand_shape(rank, 3, sh);
            tt A, O;
            tt_make(&A, types[k].t, types[k].f64, rank, sh);
            tt_make(&O, types[k].t, types[k].f64, rank, sh);
            const size_t bytes = (size_t)A.t.nelem * A.es;
            for (size_t i = 0; i < bytes; i++) A.buf[i] = (uint8_t)rnd();
            tt *ins[1] = {&A};
            EXPECT_EQ_I(run_op(TOSAC_OP_IDENTITY, ins, 1, &O, NULL), TOSAC_OK);
            EXPECT(memcmp(A.buf, O.buf, bytes) == 0);
            memcpy(O.buf, A.buf, bytes);
            O.t.data = A.buf; /* in place */
            EXPECT_EQ_I(run_op(TOSAC_OP_IDENTITY, ins, 1, &O, NULL), TOSAC_OK);
            EXPECT(memcmp(A.buf, O.buf, bytes) == 0);
            tt_free(&A);
            tt_free(&O);
        }
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Broadcast corner cases: rank 6 with alternating broadcast dims (no merging possible)         */

static void test_broadcast_corners(void)
{
    const int64_t os[6] = {2, 3, 2, 3, 2, 3}, as[6] = {2, 1, 2, 1, 2, 1}, bs[6] = {1, 3, 1, 3, 1, 3};
    tt A, B, O;
    tt_make(&A, TOSAC_DTYPE_INT32, false, 6, as);
    tt_make(&B, TOSAC_DTYPE_INT32, false, 6, bs);
    tt_make(&O, TOSAC_DTYPE_INT32, false, 6, os);
    for (int64_t i = 0; i < A.t.nelem; i++) set_i(&A, i, i * 1000);
    for (int64_t i = 0; i < B.t.nelem; i++) set_i(&B, i, i);
    tt *ins[2] = {&A, &B};
    EXPECT_EQ_I(run_op(TOSAC_OP_ADD, ins, 2, &O, NULL), TOSAC_OK);
    for (int64_t i = 0; i < O.t.nelem; i++)
        EXPECT_EQ_I(get_i(&O, i), get_i(&A, bidx(&A, 6, os, i)) + get_i(&B, bidx(&B, 6, os, i)));
    /* rank-0 operands against rank-0 output */
    tt C, D, E;
    tt_make(&C, TOSAC_DTYPE_INT32, false, 0, NULL);
    tt_make(&D, TOSAC_DTYPE_INT32, false, 0, NULL);
    tt_make(&E, TOSAC_DTYPE_BOOL, false, 0, NULL);
    set_i(&C, 0, 7);
    set_i(&D, 0, 7);
    tt *ins2[2] = {&C, &D};
    EXPECT_EQ_I(run_op(TOSAC_OP_GREATER_EQUAL, ins2, 2, &E, NULL), TOSAC_OK);
    EXPECT_EQ_I(get_i(&E, 0), 1);
    /* incompatible dims are an ERROR */
    const int64_t s2[1] = {2}, s3[1] = {3};
    tt F, G, H;
    tt_make(&F, TOSAC_DTYPE_INT32, false, 1, s2);
    tt_make(&G, TOSAC_DTYPE_INT32, false, 1, s3);
    tt_make(&H, TOSAC_DTYPE_INT32, false, 1, s3);
    tt *ins3[2] = {&F, &G};
    EXPECT_EQ_I(run_op(TOSAC_OP_SUB, ins3, 2, &H, NULL), TOSAC_ERR_TOSA_ERROR);
    tt_free(&A);
    tt_free(&B);
    tt_free(&O);
    tt_free(&C);
    tt_free(&D);
    tt_free(&E);
    tt_free(&F);
    tt_free(&G);
    tt_free(&H);
}

/* fp32 EXP, SIGMOID and TANH (k_expf, k_tanhf, not libm) over their whole range, subnormal results,
   overflow, TANH's small-argument polynomial (a dense sweep of |x| < 1 and tiny values) and
   specials: within TOSA's ABS_ERROR bounds and the same bits at every ISA level. */
static void test_exp_sigmoid_levels(void)
{
    enum { N = 4003, M = 2000 }; /* not a multiple of the vector width: a masked tail */
    tt A, O;
    tt_make1(&A, TOSAC_DTYPE_FP32, false, N + M);
    tt_make1(&O, TOSAC_DTYPE_FP32, false, N + M);
    float *a = (float *)(void *)A.buf;
    for (int i = 0; i < N - 6; i++) a[i] = -110.0f + 200.0f * (float)i / (float)(N - 6) + (float)rnd_unit() * 0.05f;
    a[N - 6] = INFINITY, a[N - 5] = -INFINITY, a[N - 4] = NAN, a[N - 3] = 0.0f, a[N - 2] = -0.0f, a[N - 1] = 88.72f;
    for (int i = 0; i < M - 8; i++) a[N + i] = (float)(2.0 * rnd_unit() - 1.0);
    static const float spots[8] = {0x1p-149f, -0x1p-149f, 0x1p-126f, -0x1p-30f, 0.55f, -0.54999995f, 9.0f, -3e38f};
    memcpy(a + N + M - 8, spots, sizeof spots);
    static const uint32_t ops[3] = {TOSAC_OP_EXP, TOSAC_OP_SIGMOID, TOSAC_OP_TANH};
    for (int k = 0; k < 3; k++) {
        float *first = malloc((N + M) * sizeof(float));
        for (uint32_t level = 0; level <= TOSAC_KISA_AVX512; level++) {
            tosac_kernel_limit_isa(level);
            tt *ins[1] = {&A};
            EXPECT_EQ_I(run_op(ops[k], ins, 1, &O, NULL), TOSAC_OK);
            const float *r = (const float *)(void *)O.buf;
            int bad = 0;
            for (int i = 0; i < N + M; i++) {
                double want = ops[k] == TOSAC_OP_EXP       ? exp((double)a[i])
                              : ops[k] == TOSAC_OP_SIGMOID ? d_sigmoid((double)a[i])
                                                           : tanh((double)a[i]);
                bool good = tosa_exp_close(r[i], want, a[i], ops[k]);
                if (level && memcmp(&r[i], &first[i], sizeof(float)) != 0 && !(isnan(r[i]) && isnan(first[i])))
                    good = false;
                t_checks++;
                if (!good && bad++ < 3)
                    fprintf(stderr, "  op %u level %u x %.9g: got %.9g want %.17g\n", (unsigned)ops[k], level,
                            (double)a[i], (double)r[i], want);
            }
            if (bad) t_failures++;
            if (!level) memcpy(first, r, (N + M) * sizeof(float));
        }
        free(first);
    }
    tosac_kernel_limit_isa(TOSAC_KISA_AVX512);
    tt_free(&A);
    tt_free(&O);
}

/* Tensors large enough to be split into tasks, on three workers running them in reverse
   (kernels_run.h): every element still the broadcast sum / product / absolute value. */
static void test_split_large(void)
{
    static const int64_t shapes[][2][3] = {{{3, 1, 40000}, {1, 1, 40000}}, {{5000, 1, 7}, {5000, 1, 1}},
                                           {{2, 3, 9000}, {1, 3, 1}},      {{1, 1, 70001}, {1, 1, 70001}},
                                           {{2, 1, 40000}, {2, 1, 1}},     {{4000, 1, 24}, {1, 1, 24}}};
    kr_workers = 3;
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++) {
        const int64_t *os = shapes[c][0], *bs = shapes[c][1];
        tt A, B, O, F, G, H;
        tt_make(&A, TOSAC_DTYPE_INT32, false, 3, os);
        tt_make(&B, TOSAC_DTYPE_INT32, false, 3, bs);
        tt_make(&O, TOSAC_DTYPE_INT32, false, 3, os);
        tt_make(&F, TOSAC_DTYPE_FP32, false, 3, os);
        tt_make(&G, TOSAC_DTYPE_FP32, false, 3, bs);
        tt_make(&H, TOSAC_DTYPE_FP32, false, 3, os);
        for (int64_t i = 0; i < A.t.nelem; i++) set_i(&A, i, (int64_t)(rnd() % 20001) - 10000), set_f(&F, i, (double)i - 1e5);
        for (int64_t i = 0; i < B.t.nelem; i++) set_i(&B, i, (int64_t)(rnd() % 20001) - 10000), set_f(&G, i, 0.5 + (double)(i % 13));
        tt *ins[2] = {&A, &B}, *fins[2] = {&F, &G}, *uins[1] = {&F};
        EXPECT_EQ_I(run_op(TOSAC_OP_ADD, ins, 2, &O, NULL), TOSAC_OK);
        int64_t bad = 0;
        for (int64_t i = 0; i < O.t.nelem; i++)
            bad += get_i(&O, i) != get_i(&A, bidx(&A, 3, os, i)) + get_i(&B, bidx(&B, 3, os, i));
        EXPECT_EQ_I(bad, 0);
        EXPECT_EQ_I(run_op(TOSAC_OP_MUL, fins, 2, &H, NULL), TOSAC_OK);
        for (int64_t i = 0; i < H.t.nelem; i++)
            bad += get_f(&H, i) != (double)(float)(get_f(&F, bidx(&F, 3, os, i)) * get_f(&G, bidx(&G, 3, os, i)));
        EXPECT_EQ_I(bad, 0);
        EXPECT_EQ_I(run_op(TOSAC_OP_ABS, uins, 1, &H, NULL), TOSAC_OK);
        for (int64_t i = 0; i < H.t.nelem; i++) bad += get_f(&H, i) != fabs(get_f(&F, i));
        EXPECT_EQ_I(bad, 0);
        tt_free(&A), tt_free(&B), tt_free(&O), tt_free(&F), tt_free(&G), tt_free(&H);
    }
    kr_workers = 1;
}

int main(void)
{
    RUN(test_split_large);
    RUN(test_exp_sigmoid_levels);
    RUN(test_binary_int_random);
    RUN(test_add_i32_levels);
    RUN(test_mul_i32_levels);
    RUN(test_binary_int_spots);
    RUN(test_unary_int);
    RUN(test_binary_fp_random);
    RUN(test_binary_fp_spots);
    RUN(test_unary_fp);
    RUN(test_select);
    RUN(test_clamp);
    RUN(test_table);
    RUN(test_cast);
    RUN(test_rescale_spots);
    RUN(test_rescale_random);
    RUN(test_identity);
    RUN(test_broadcast_corners);
    /* the fp32 ADD / SUB / MUL / MAXIMUM / MINIMUM rows have AVX2 and AVX-512 builds: every lower
       level again (the same bits against the same references), and the split rows on 3 workers */
    for (uint32_t level = 0; level < TOSAC_KISA_AVX512; level++) {
        fprintf(stderr, "instruction-set level capped at %u:\n", (unsigned)level);
        tosac_kernel_limit_isa(level);
        RUN(test_binary_fp_random);
        RUN(test_binary_fp_spots);
        RUN(test_split_large);
    }
    tosac_kernel_limit_isa(TOSAC_KISA_AVX512);
    return test_summary();
}
