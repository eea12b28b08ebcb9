/*
 * Data-layout kernels: CONCAT, PAD, RESHAPE, REVERSE, SLICE, TILE, TRANSPOSE (TOSA.md §B.3 "Data
 * movement"). They move bytes only, so every dtype is handled by its execution element size
 * (1, 2, 4 or 8 bytes, tosac_exec_elem_size): contiguous runs are copied with memcpy, whole inner
 * rows at a time, and TRANSPOSE uses a blocked two-dimensional loop when the innermost dimension
 * moves.
 */
#include <string.h>

#include "kernels/kutil.h"

#ifdef TOSAC_KERNEL_X86
#include <immintrin.h>
#endif

/* Highest rank the kernels handle (the IR's limit). */
#define KL_MAX_RANK 32
/* Tile edge of the blocked transpose, in elements. */
#define KL_TBLOCK 32

/* Row-major element strides of a shape. */
static void kl_strides(int32_t rank, const int64_t *shape, int64_t *st)
{
    int64_t s = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        st[d] = s;
        s *= shape[d];
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Strided copy: out[sum i_d*os_d] = in[sum i_d*is_d] over a box of counts.                      */

typedef struct kl_view {
    int n;                   /* dimensions in use */
    int64_t cnt[KL_MAX_RANK];
    int64_t is[KL_MAX_RANK]; /* input strides, elements */
    int64_t os[KL_MAX_RANK]; /* output strides, elements */
} kl_view;

/* Drops unit dimensions and merges neighbours that are contiguous on both sides. */
static void kl_simplify(kl_view *v)
{
    int m = 0;
    for (int d = 0; d < v->n; d++) {
        if (v->cnt[d] == 1) continue;
        v->cnt[m] = v->cnt[d];
        v->is[m] = v->is[d];
        v->os[m] = v->os[d];
        m++;
    }
    v->n = m;
    if (m < 2) return;
    /* merge from the inside out: dim d folds into d+1 when its strides are d+1's span */
    int w = m - 1;
    int64_t cnt[KL_MAX_RANK], is[KL_MAX_RANK], os[KL_MAX_RANK];
    cnt[w] = v->cnt[m - 1];
    is[w] = v->is[m - 1];
    os[w] = v->os[m - 1];
    for (int d = m - 2; d >= 0; d--) {
        if (v->is[d] == cnt[w] * is[w] && v->os[d] == cnt[w] * os[w]) {
            cnt[w] *= v->cnt[d];
        } else {
            w--;
            cnt[w] = v->cnt[d];
            is[w] = v->is[d];
            os[w] = v->os[d];
        }
    }
    v->n = m - w;
    for (int d = 0; d < v->n; d++) {
        v->cnt[d] = cnt[w + d];
        v->is[d] = is[w + d];
        v->os[d] = os[w + d];
    }
}

/* Copies one element of `es` bytes. */
static inline void kl_copy1(uint8_t *o, const uint8_t *i, size_t es)
{
    switch (es) {
    case 1: *o = *i; break;
    case 2: memcpy(o, i, 2); break;
    case 4: memcpy(o, i, 4); break;
    default: memcpy(o, i, 8); break;
    }
}

/* Strided element loop of n elements (input stride si, output stride so, in elements). */
#define KL_STRIDED(T)                                                                             \
    static void kl_strided_##T(uint8_t *o_, const uint8_t *i_, int64_t n, int64_t si, int64_t so) \
    {                                                                                             \
        T *o = (T *)(void *)o_;                                                                   \
        const T *i = (const T *)(const void *)i_;                                                 \
        for (int64_t k = 0; k < n; k++) o[k * so] = i[k * si];                                    \
    }
KL_STRIDED(uint8_t)
KL_STRIDED(uint16_t)
KL_STRIDED(uint32_t)
KL_STRIDED(uint64_t)
#undef KL_STRIDED

static void kl_strided(uint8_t *o, const uint8_t *i, int64_t n, int64_t si, int64_t so, size_t es)
{
    switch (es) {
    case 1: kl_strided_uint8_t(o, i, n, si, so); break;
    case 2: kl_strided_uint16_t(o, i, n, si, so); break;
    case 4: kl_strided_uint32_t(o, i, n, si, so); break;
    default: kl_strided_uint64_t(o, i, n, si, so); break;
    }
}

/*
 * Blocked 2-D transpose tile: out[j*oj + l] = in[j + l*il] for j < nj, l < nl (strides in
 * elements; the output's inner dimension l is contiguous, the input's inner dimension j is).
 */
#define KL_TILE2D(T)                                                                                   \
    static void kl_tile2d_##T(uint8_t *o_, const uint8_t *i_, int64_t nj, int64_t nl, int64_t oj,     \
                              int64_t il)                                                              \
    {                                                                                                  \
        T *o = (T *)(void *)o_;                                                                        \
        const T *i = (const T *)(const void *)i_;                                                      \
        for (int64_t j0 = 0; j0 < nj; j0 += KL_TBLOCK) {                                               \
            const int64_t j1 = j0 + KL_TBLOCK < nj ? j0 + KL_TBLOCK : nj;                              \
            for (int64_t l0 = 0; l0 < nl; l0 += KL_TBLOCK) {                                           \
                const int64_t l1 = l0 + KL_TBLOCK < nl ? l0 + KL_TBLOCK : nl;                          \
                for (int64_t j = j0; j < j1; j++) {                                                    \
                    T *orow = o + j * oj;                                                              \
                    const T *icol = i + j;                                                             \
                    for (int64_t l = l0; l < l1; l++) orow[l] = icol[l * il];                          \
                }                                                                                      \
            }                                                                                          \
        }                                                                                              \
    }
KL_TILE2D(uint8_t)
KL_TILE2D(uint16_t)
KL_TILE2D(uint32_t)
KL_TILE2D(uint64_t)
#undef KL_TILE2D

/*
 * The tile with a dense output of 2, 3 or 4 columns (oj == nl: an NCHW input with 3 channels to
 * NHWC, a channel shuffle): nl input rows interleaved, with nl known to the compiler so that the
 * loop vectorises (GCC: -O3) instead of running nl-element rows.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("O3")
#endif
#define KL_ZIP(T)                                                                                          \
    static void kl_zip_##T(uint8_t *o_, const uint8_t *i_, int64_t nj, int64_t nl, int64_t il)             \
    {                                                                                                      \
        T *restrict o = (T *)(void *)o_;                                                                   \
        const T *restrict a = (const T *)(const void *)i_, *restrict b = a + il;                           \
        if (nl == 2) {                                                                                     \
            for (int64_t j = 0; j < nj; j++) o[2 * j] = a[j], o[2 * j + 1] = b[j];                         \
            return;                                                                                        \
        }                                                                                                  \
        const T *restrict c = b + il;                                                                      \
        if (nl == 3) {                                                                                     \
            for (int64_t j = 0; j < nj; j++) o[3 * j] = a[j], o[3 * j + 1] = b[j], o[3 * j + 2] = c[j];    \
            return;                                                                                        \
        }                                                                                                  \
        const T *restrict d = c + il;                                                                      \
        for (int64_t j = 0; j < nj; j++) o[4 * j] = a[j], o[4 * j + 1] = b[j], o[4 * j + 2] = c[j], o[4 * j + 3] = d[j]; \
    }
KL_ZIP(uint8_t)
KL_ZIP(uint16_t)
KL_ZIP(uint32_t)
KL_ZIP(uint64_t)
#undef KL_ZIP
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

#ifdef TOSAC_KERNEL_X86
/* The zip of three rows of 4-byte elements (an fp32 NCHW image to NHWC: every CNN's input),
   16 columns a step: output vector v, lane l holds element q = 16 v + l, column q / 3 of row q % 3;
   one two-source permute takes rows 0 and 1 into place, a second one row 2. Returns the columns
   done (the rest: kl_zip). */
__attribute__((target("avx2,avx512f"))) static int64_t kl_zip3_u32_avx512(uint8_t *o_, const uint8_t *i_, int64_t nj,
                                                                          int64_t il)
{
    const uint32_t *a = (const uint32_t *)(const void *)i_, *b = a + il, *c = b + il;
    uint32_t *o = (uint32_t *)(void *)o_;
    int32_t x01[3][16], x2[3][16];
    for (int v = 0; v < 3; v++)
        for (int l = 0; l < 16; l++) {
            const int q = 16 * v + l, col = q / 3, row = q % 3;
            x01[v][l] = row == 1 ? 16 + col : col;
            x2[v][l] = row == 2 ? 16 + col : l;
        }
    __m512i p01[3], p2[3];
    for (int v = 0; v < 3; v++) p01[v] = _mm512_loadu_si512(x01[v]), p2[v] = _mm512_loadu_si512(x2[v]);
    int64_t j = 0;
    for (; j + 16 <= nj; j += 16) {
        const __m512i va = _mm512_loadu_si512(a + j), vb = _mm512_loadu_si512(b + j), vc = _mm512_loadu_si512(c + j);
        for (int v = 0; v < 3; v++)
            _mm512_storeu_si512(o + 3 * j + 16 * v,
                                _mm512_permutex2var_epi32(_mm512_permutex2var_epi32(va, p01[v], vb), p2[v], vc));
    }
    return j;
}
#endif

static void kl_tile2d(uint32_t isa, uint8_t *o, const uint8_t *i, int64_t nj, int64_t nl, int64_t oj, int64_t il,
                      size_t es)
{
#ifdef TOSAC_KERNEL_X86
    if (isa >= TOSAC_KISA_AVX512 && nl == 3 && oj == 3 && es == 4) {
        const int64_t j = kl_zip3_u32_avx512(o, i, nj, il);
        o += (size_t)(3 * j) * es, i += (size_t)j * es, nj -= j;
        if (nj == 0) return;
    }
#else
    (void)isa;
#endif
    if (nl >= 2 && nl <= 4 && oj == nl) {
        switch (es) {
        case 1: kl_zip_uint8_t(o, i, nj, nl, il); return;
        case 2: kl_zip_uint16_t(o, i, nj, nl, il); return;
        case 4: kl_zip_uint32_t(o, i, nj, nl, il); return;
        default: kl_zip_uint64_t(o, i, nj, nl, il); return;
        }
    }
    switch (es) {
    case 1: kl_tile2d_uint8_t(o, i, nj, nl, oj, il); break;
    case 2: kl_tile2d_uint16_t(o, i, nj, nl, oj, il); break;
    case 4: kl_tile2d_uint32_t(o, i, nj, nl, oj, il); break;
    default: kl_tile2d_uint64_t(o, i, nj, nl, oj, il); break;
    }
}

/* Runs the strided copy described by the simplified view v (at least one dimension). */
static void kl_copy_view(uint32_t isa, const kl_view *v, const uint8_t *in, uint8_t *out, size_t es)
{
    const int last = v->n - 1;
    int kind; /* 0: contiguous rows, 1: blocked transpose over (tj, last), 2: strided elements */
    int tj = -1;
    if (v->is[last] == 1 && v->os[last] == 1) {
        kind = 0;
    } else {
        kind = 2;
        if (v->os[last] == 1)
            for (int d = 0; d < last; d++)
                if (v->is[d] == 1) tj = d;
        if (tj >= 0) kind = 1;
    }
    /* odometer over the dimensions the inner routine does not cover */
    int skip_a = last, skip_b = kind == 1 ? tj : -1;
    int od[KL_MAX_RANK], no = 0;
    for (int d = 0; d < v->n; d++)
        if (d != skip_a && d != skip_b) od[no++] = d;
    int64_t idx[KL_MAX_RANK];
    int64_t isb[KL_MAX_RANK], osb[KL_MAX_RANK];
    for (int k = 0; k < no; k++) {
        idx[k] = 0;
        isb[k] = v->is[od[k]] * (int64_t)es;
        osb[k] = v->os[od[k]] * (int64_t)es;
    }
    const size_t row_bytes = (size_t)v->cnt[last] * es;
    const uint8_t *ip = in;
    uint8_t *op = out;
    for (;;) {
        if (kind == 0)
            memcpy(op, ip, row_bytes);
        else if (kind == 1)
            kl_tile2d(isa, op, ip, v->cnt[tj], v->cnt[last], v->os[tj], v->is[last], es);
        else
            kl_strided(op, ip, v->cnt[last], v->is[last], v->os[last], es);
        int k = no - 1;
        for (; k >= 0; k--) {
            ip += isb[k];
            op += osb[k];
            if (++idx[k] < v->cnt[od[k]]) break;
            ip -= isb[k] * v->cnt[od[k]];
            op -= osb[k] * v->cnt[od[k]];
            idx[k] = 0;
        }
        if (k < 0) break;
    }
}

/* Bytes per piece of a copy split over workers (smaller copies run as one task). */
#define KL_PIECE_BYTES ((size_t)1 << 15)

/* Pieces [p0, p1) of the view's outermost dimension as a parallel-for task (kernel.h): every output
   element is written once, by the piece that holds it. */
typedef struct {
    uint32_t isa;
    const kl_view *v;
    const uint8_t *in;
    uint8_t *out;
    size_t es;
    int64_t per; /* indices of dimension 0 per piece */
} kl_task;

static void kl_range(void *ctx, uint32_t worker, size_t p0, size_t p1)
{
    const kl_task *t = ctx;
    (void)worker;
    kl_view sub = *t->v;
    const int64_t i0 = (int64_t)p0 * t->per, i1 = (int64_t)p1 * t->per;
    sub.cnt[0] = (i1 < t->v->cnt[0] ? i1 : t->v->cnt[0]) - i0;
    kl_copy_view(t->isa, &sub, t->in + (size_t)(i0 * t->v->is[0]) * t->es, t->out + (size_t)(i0 * t->v->os[0]) * t->es,
                 t->es);
}

/* The strided copy described by v (simplified here) from in to out, split over the workers of c
   along the outermost remaining dimension when large. */
static void kl_copy(const tosac_kcall *c, kl_view *v, const uint8_t *in, uint8_t *out, size_t es)
{
    kl_simplify(v);
    if (v->n == 0) {
        kl_copy1(out, in, es);
        return;
    }
    size_t bytes = es;
    for (int d = 0; d < v->n; d++) bytes *= (size_t)v->cnt[d];
    size_t pieces = tosac_kworkers(c) > 1 ? bytes / KL_PIECE_BYTES : 0;
    if (pieces > (size_t)v->cnt[0]) pieces = (size_t)v->cnt[0];
    if (pieces < 2) {
        kl_copy_view(c->isa, v, in, out, es);
        return;
    }
    /* quotients in size_t (32-bit targets divide natively) */
    const size_t per = ((size_t)v->cnt[0] + pieces - 1) / pieces;
    kl_task t = {c->isa, v, in, out, es, (int64_t)per};
    tosac_kparallel_for(c, kl_range, &t, ((size_t)v->cnt[0] + per - 1) / per);
}

/* ------------------------------------------------------------------------------------------ */
/* Pattern fill (PAD)                                                                             */

typedef struct kl_fill {
    bool byte_fill; /* every byte of the element is `byte`: memset */
    uint8_t byte;
    uint8_t pat[64]; /* the element repeated (64 is a multiple of every element size) */
} kl_fill;

static void kl_fill_init(kl_fill *f, const uint8_t *elem, size_t es)
{
    f->byte = elem[0];
    f->byte_fill = true;
    for (size_t k = 1; k < es; k++)
        if (elem[k] != elem[0]) f->byte_fill = false;
    for (size_t k = 0; k < sizeof f->pat; k++) f->pat[k] = elem[k % es];
}

/* Fills n bytes (a whole number of elements) starting at an element boundary. */
static void kl_fill_bytes(const kl_fill *f, uint8_t *dst, size_t n)
{
    if (n == 0) return;
    if (f->byte_fill) {
        memset(dst, f->byte, n);
        return;
    }
    size_t done = n < sizeof f->pat ? n : sizeof f->pat;
    memcpy(dst, f->pat, done);
    while (done < n) { /* doubling: dst[0, done) already holds a whole number of pattern periods */
        size_t k = n - done < done ? n - done : done;
        memcpy(dst + done, dst, k);
        done += k;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* CONCAT                                                                                         */

/* CONCAT as rows (outer index: the inputs' blocks side by side); pieces of `per` rows are the
   parallel-for's tasks when large. */
typedef struct {
    const tosac_kcall *c;
    int64_t inner, axis;
    size_t es, out_row, per, rows;
} kl_concat_task;

static void kl_concat_rows(const kl_concat_task *t, size_t r0, size_t r1)
{
    size_t at = 0; /* byte offset of the current input's block within an output row */
    for (uint32_t k = 0; k < t->c->n_in; k++) {
        const tosac_ktensor *in = &t->c->in[k];
        const size_t blk = (size_t)(in->shape[t->axis] * t->inner) * t->es;
        const uint8_t *ip = (const uint8_t *)in->data + r0 * blk;
        uint8_t *op = (uint8_t *)t->c->out[0].data + r0 * t->out_row + at;
        for (size_t r = r0; r < r1; r++, ip += blk, op += t->out_row) memcpy(op, ip, blk);
        at += blk;
    }
}

static void kl_concat_pieces(void *ctx, uint32_t worker, size_t p0, size_t p1)
{
    const kl_concat_task *t = ctx;
    (void)worker;
    kl_concat_rows(t, p0 * t->per, p1 * t->per < t->rows ? p1 * t->per : t->rows);
}

tosac_status tosac_kernel_concat(tosac_kcall *c)
{
    const tosac_ktensor *out = &c->out[0];
    const size_t es = tosac_kelem_size(out);
    const int32_t rank = out->rank;
    if (es == 0 || rank < 1 || rank > KL_MAX_RANK) return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "CONCAT: rank or type");
    const int64_t axis = tosac_kattr_int(c, TOSAC_ATTR_CONCAT_axis, 0);
    if (axis < 0 || axis >= rank) return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "CONCAT: axis out of range");
    int64_t outer = 1, inner = 1;
    for (int32_t d = 0; d < axis; d++) outer *= out->shape[d];
    for (int32_t d = (int32_t)axis + 1; d < rank; d++) inner *= out->shape[d];
    kl_concat_task t = {c, inner, axis, es, (size_t)(out->shape[axis] * inner) * es, 1, (size_t)outer};
    if (t.out_row < KL_PIECE_BYTES) t.per = KL_PIECE_BYTES / (t.out_row ? t.out_row : 1);
    if (tosac_kworkers(c) > 1 && t.rows > t.per)
        tosac_kparallel_for(c, kl_concat_pieces, &t, (t.rows + t.per - 1) / t.per);
    else
        kl_concat_rows(&t, 0, t.rows);
    return TOSAC_OK;
}

TOSAC_KERNEL_NO_PREPARE(concat)

/* ------------------------------------------------------------------------------------------ */
/* PAD                                                                                            */

typedef struct kl_pad {
    int32_t q;                   /* last padded dimension: rows below it are copied whole */
    const int64_t *in_shape;
    const int64_t *pads;         /* [before0, after0, before1, ...] */
    size_t ib[KL_MAX_RANK];      /* input / output bytes per index step of each dim */
    size_t ob[KL_MAX_RANK];
    kl_fill fill;
} kl_pad;

static void kl_pad_rec(const kl_pad *p, int32_t d, const uint8_t *ip, uint8_t *op)
{
    const int64_t before = p->pads[2 * d], after = p->pads[2 * d + 1], n = p->in_shape[d];
    kl_fill_bytes(&p->fill, op, (size_t)before * p->ob[d]);
    op += (size_t)before * p->ob[d];
    if (d == p->q) {
        const size_t bytes = (size_t)n * p->ib[d]; /* == n * ob[d]: no padding below */
        memcpy(op, ip, bytes);
        op += bytes;
    } else {
        for (int64_t i = 0; i < n; i++) {
            kl_pad_rec(p, d + 1, ip, op);
            ip += p->ib[d];
            op += p->ob[d];
        }
    }
    kl_fill_bytes(&p->fill, op, (size_t)after * p->ob[d]);
}

tosac_status tosac_kernel_pad(tosac_kcall *c)
{
    const tosac_ktensor *in = &c->in[0], *out = &c->out[0];
    const size_t es = tosac_kelem_size(out);
    const int32_t rank = in->rank;
    if (es == 0 || rank > KL_MAX_RANK || tosac_kelem_size(&c->in[2]) != es)
        return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "PAD: rank or type");
    const int64_t *pads = (const int64_t *)c->in[1].data;
    kl_pad p;
    p.q = -1;
    for (int32_t d = 0; d < rank; d++) {
        if (pads[2 * d] < 0 || pads[2 * d + 1] < 0)
            return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "PAD: negative padding");
        if (pads[2 * d] != 0 || pads[2 * d + 1] != 0) p.q = d;
    }
    if (p.q < 0) {
        memcpy(out->data, in->data, (size_t)in->nelem * es);
        return TOSAC_OK;
    }
    size_t ib = es, ob = es;
    for (int32_t d = rank - 1; d >= 0; d--) {
        p.ib[d] = ib;
        p.ob[d] = ob;
        ib *= (size_t)in->shape[d];
        ob *= (size_t)out->shape[d];
    }
    p.in_shape = in->shape;
    p.pads = pads;
    kl_fill_init(&p.fill, (const uint8_t *)c->in[2].data, es);
    kl_pad_rec(&p, 0, (const uint8_t *)in->data, (uint8_t *)out->data);
    return TOSAC_OK;
}

TOSAC_KERNEL_NO_PREPARE(pad)

/* ------------------------------------------------------------------------------------------ */
/* RESHAPE                                                                                        */

tosac_status tosac_kernel_reshape(tosac_kcall *c)
{
    const tosac_ktensor *in = &c->in[0], *out = &c->out[0];
    const size_t es = tosac_kelem_size(in);
    if (es == 0) return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "RESHAPE: type");
    if (out->data != in->data) memmove(out->data, in->data, (size_t)in->nelem * es);
    return TOSAC_OK;
}

TOSAC_KERNEL_NO_PREPARE(reshape)

/* ------------------------------------------------------------------------------------------ */
/* REVERSE                                                                                        */

#define KL_REV1(T)                                                                \
    static void kl_rev1_##T(uint8_t *o_, const uint8_t *i_, int64_t outer, int64_t n) \
    {                                                                             \
        T *o = (T *)(void *)o_;                                                   \
        const T *i = (const T *)(const void *)i_;                                 \
        for (int64_t r = 0; r < outer; r++, o += n, i += n)                       \
            for (int64_t k = 0; k < n; k++) o[k] = i[n - 1 - k];                  \
    }
KL_REV1(uint8_t)
KL_REV1(uint16_t)
KL_REV1(uint32_t)
KL_REV1(uint64_t)
#undef KL_REV1

tosac_status tosac_kernel_reverse(tosac_kcall *c)
{
    const tosac_ktensor *in = &c->in[0], *out = &c->out[0];
    const size_t es = tosac_kelem_size(in);
    const int32_t rank = in->rank;
    if (es == 0) return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "REVERSE: type");
    if (rank == 0) {
        kl_copy1((uint8_t *)out->data, (const uint8_t *)in->data, es);
        return TOSAC_OK;
    }
    const int64_t axis = tosac_kattr_int(c, TOSAC_ATTR_REVERSE_axis, 0);
    if (axis < 0 || axis >= rank) return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "REVERSE: axis out of range");
    int64_t outer = 1, inner = 1;
    const int64_t n = in->shape[axis];
    for (int32_t d = 0; d < axis; d++) outer *= in->shape[d];
    for (int32_t d = (int32_t)axis + 1; d < rank; d++) inner *= in->shape[d];
    const uint8_t *ip = (const uint8_t *)in->data;
    uint8_t *op = (uint8_t *)out->data;
    if (inner == 1) {
        switch (es) {
        case 1: kl_rev1_uint8_t(op, ip, outer, n); break;
        case 2: kl_rev1_uint16_t(op, ip, outer, n); break;
        case 4: kl_rev1_uint32_t(op, ip, outer, n); break;
        default: kl_rev1_uint64_t(op, ip, outer, n); break;
        }
        return TOSAC_OK;
    }
    const size_t row = (size_t)inner * es;
    for (int64_t o = 0; o < outer; o++) {
        const uint8_t *src = ip + (size_t)(n - 1) * row;
        for (int64_t k = 0; k < n; k++) {
            memcpy(op, src, row);
            op += row;
            src -= row;
        }
        ip += (size_t)n * row;
    }
    return TOSAC_OK;
}

TOSAC_KERNEL_NO_PREPARE(reverse)

/* ------------------------------------------------------------------------------------------ */
/* SLICE                                                                                          */

tosac_status tosac_kernel_slice(tosac_kcall *c)
{
    const tosac_ktensor *in = &c->in[0], *out = &c->out[0];
    const size_t es = tosac_kelem_size(in);
    const int32_t rank = in->rank;
    if (es == 0 || rank > KL_MAX_RANK) return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "SLICE: rank or type");
    const int64_t *start = (const int64_t *)c->in[1].data, *size = (const int64_t *)c->in[2].data;
    kl_view v;
    int64_t ist[KL_MAX_RANK];
    kl_strides(rank, in->shape, ist);
    kl_strides(rank, size, v.os);
    int64_t base = 0;
    for (int32_t d = 0; d < rank; d++) {
        if (start[d] < 0 || size[d] <= 0 || start[d] + size[d] > in->shape[d])
            return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "SLICE: start/size outside the input");
        v.cnt[d] = size[d];
        v.is[d] = ist[d];
        base += start[d] * ist[d];
    }
    v.n = rank;
    kl_copy(c, &v, (const uint8_t *)in->data + (size_t)base * es, (uint8_t *)out->data, es);
    return TOSAC_OK;
}

TOSAC_KERNEL_NO_PREPARE(slice)

/* ------------------------------------------------------------------------------------------ */
/* TILE                                                                                           */

typedef struct kl_tile {
    int32_t rank;
    const int64_t *in_shape;
    const int64_t *mult;
    size_t ib[KL_MAX_RANK]; /* input / output bytes per index step of each dim */
    size_t ob[KL_MAX_RANK];
} kl_tile;

/* Fills the output block of dim d: the input block tiled, then replicated mult[d] times. */
static void kl_tile_rec(const kl_tile *t, int32_t d, const uint8_t *ip, uint8_t *op)
{
    const int64_t n = t->in_shape[d];
    size_t span; /* bytes of one copy of the tiled input block along d */
    if (d == t->rank - 1) {
        span = (size_t)n * t->ib[d];
        memcpy(op, ip, span);
    } else {
        for (int64_t i = 0; i < n; i++) kl_tile_rec(t, d + 1, ip + (size_t)i * t->ib[d], op + (size_t)i * t->ob[d]);
        span = (size_t)n * t->ob[d];
    }
    const size_t total = span * (size_t)t->mult[d];
    size_t done = span;
    while (done < total) {
        size_t k = total - done < done ? total - done : done;
        memcpy(op + done, op, k);
        done += k;
    }
}

tosac_status tosac_kernel_tile(tosac_kcall *c)
{
    const tosac_ktensor *in = &c->in[0], *out = &c->out[0];
    const size_t es = tosac_kelem_size(in);
    const int32_t rank = in->rank;
    if (es == 0 || rank > KL_MAX_RANK) return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "TILE: rank or type");
    if (rank == 0) {
        kl_copy1((uint8_t *)out->data, (const uint8_t *)in->data, es);
        return TOSAC_OK;
    }
    kl_tile t;
    t.rank = rank;
    t.in_shape = in->shape;
    t.mult = (const int64_t *)c->in[1].data;
    size_t ib = es, ob = es;
    for (int32_t d = rank - 1; d >= 0; d--) {
        if (t.mult[d] <= 0) return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "TILE: multiples must be positive");
        t.ib[d] = ib;
        t.ob[d] = ob;
        ib *= (size_t)in->shape[d];
        ob *= (size_t)(in->shape[d] * t.mult[d]);
    }
    kl_tile_rec(&t, 0, (const uint8_t *)in->data, (uint8_t *)out->data);
    return TOSAC_OK;
}

TOSAC_KERNEL_NO_PREPARE(tile)

/* ------------------------------------------------------------------------------------------ */
/* TRANSPOSE                                                                                      */

tosac_status tosac_kernel_transpose(tosac_kcall *c)
{
    const tosac_ktensor *in = &c->in[0], *out = &c->out[0];
    const size_t es = tosac_kelem_size(in);
    const int32_t rank = in->rank;
    if (es == 0 || rank > KL_MAX_RANK) return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "TRANSPOSE: rank or type");
    const int32_t *perms = tosac_kattr_ints(c, TOSAC_ATTR_TRANSPOSE_perms);
    if (rank > 0 && (!perms || c->attr[TOSAC_ATTR_TRANSPOSE_perms].len != (uint32_t)rank))
        return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "TRANSPOSE: perms must have rank entries");
    kl_view v;
    int64_t ist[KL_MAX_RANK];
    kl_strides(rank, in->shape, ist);
    kl_strides(rank, out->shape, v.os);
    uint32_t seen = 0;
    for (int32_t d = 0; d < rank; d++) {
        const int32_t p = perms[d];
        if (p < 0 || p >= rank || (seen >> p & 1u))
            return tosac_kfail(c, TOSAC_ERR_TOSA_ERROR, "TRANSPOSE: perms is not a permutation");
        seen |= 1u << p;
        v.cnt[d] = in->shape[p];
        v.is[d] = ist[p];
    }
    v.n = rank;
    kl_copy(c, &v, (const uint8_t *)in->data, (uint8_t *)out->data, es);
    return TOSAC_OK;
}

TOSAC_KERNEL_NO_PREPARE(transpose)
