/*
 * Exact integer Winograd F(2x2, 3x3) for INT8 CONV2D at the AVX2 level (3x3 kernel, stride and
 * dilation 1, any padding and batch; int32 results, or the fused RESCALE): the same bits as the
 * direct path (k_conv.c), with 16 multiply-adds per 2x2 output tile and channel pair instead of 36.
 *
 * With G' = 2G the transformed weights are integers:
 *   G' = [2 0 0; 1 1 1; 1 -1 1; 0 0 2]   B^T = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]
 *   A^T = [1 1 1 0; 0 1 -1 -1]
 * U = G' g G'^T of g = w - wzp (|U| <= 9 * 255, int16), V = B^T d B of the 4x4 input patch
 * d = x - izp (padding taps: 0; |V| <= 4 * 255, int16); every product and every vpmaddwd pair sum
 * is exact, and A^T [sum over input channels of U .* V] A is 4 R, R the convolution's sum. The sums
 * over channels and the output transform may wrap in int32, but they are ring operations modulo
 * 2^32: the result is 4 R modulo 2^32, which is 4 R itself while |4 R| < 2^31. Prepare takes a
 * layer only when every output channel's 4 * 255 * sum |w - wzp| is below 2^31 (true for any
 * weights up to 917 input channels), so R = (4 R) >> 2 exactly. Then bias (its REQUIRE), the
 * fused RESCALE and the narrowing are the direct path's own end (k_gemm.h tosac_igemm_avx2_end),
 * so results and failures are the direct path's.
 *
 * Prepare packs the 9 taps' weights as the AVX2 int16 pair panels (the direct path's packing,
 * tosac_gemm_i16_pack_pairs) into the first 9 of 16 panel slots and transforms them in place,
 * sixteen elements a vector (the transform is linear and the layout the same for every tap; padding
 * elements stay 0): the 16 U_xi as panels of tosac_igemm_avx2. A run takes blocks of whole tile
 * rows (sized so that V and M stay in L2; the layout of k_winograd.c): input transform (int16,
 * 16 channels a vector), 16 GEMMs M_xi [tiles][K] = V_xi [tiles][C] x U_xi on tosac_igemm_avx2
 * (int32 sums, no end), output transform into one tile row's int32 sums, then the end per output
 * row. Tiles that stick out of the image are computed and not stored.
 */
#include "kernels/k_winograd.h"

#include <string.h>

#include "kernels/k_epilogue.h"
#include "kernels/k_gemm.h"
#include "kernels/kutil.h"

#ifdef TOSAC_KERNEL_X86
#include <immintrin.h>

#define IW_BLOCK_BYTES 524288u
#define IW_BIG_U 2097152u
#define IW_SKEW 64u /* bytes between the 16 planes beyond their size (k_winograd.c WINO_SKEW) */

typedef struct iw_plan {
    TOSAC_WINO_GEOM;
    int64_t rows;         /* tile rows per block at most */
    int64_t lda;          /* V rows: C made even (the pair panels) */
    size_t ubytes;        /* one U_xi's panels */
    size_t off_v, off_m, off_y, off_z, total;
} iw_plan;

static bool iw_takes(const tosac_kcall *c)
{
    tosac_wino_geom q;
    if (c->isa != TOSAC_KISA_AVX2 || (c->flags & TOSAC_KCALL_CONV_DIRECT) || !tosac_wino_geom_of(c, &q)) return false;
    const tosac_ktensor *in = &c->in[0], *w = &c->in[1], *b = &c->in[2], *wzp = &c->in[4], *out = &c->out[0];
    if (in->dtype != TOSAC_DTYPE_INT8 || w->dtype != TOSAC_DTYPE_INT8 || b->dtype != TOSAC_DTYPE_INT32 ||
        out->dtype != TOSAC_DTYPE_INT32 || b->nelem < 1)
        return false;
    if (c->epi && c->epi->pre) return false;
    if (tosac_kattr_or(c, TOSAC_ATTR_CONV2D_acc_type, TOSAC_DTYPE_INT32) != TOSAC_DTYPE_INT32) return false;
    if (!w->constant || !w->data || !wzp->constant || !wzp->data || wzp->nelem < 1 || wzp->dtype != TOSAC_DTYPE_INT8)
        return false;
    const int64_t C = q.C, K = q.K, OH = q.OH, OW = q.OW;
    if (b->nelem != 1 && b->nelem != K) return false;
    /* the shape rule (ops_bench, one thread, best invoke, Winograd against direct, direct
       multiply-adds per second): at least 16 input and output channels (55x55x16 -> 64: 57 / 57;
       32x32x16 -> 16: 47 / 37), 9 products per pixel at least 1.6 times the tiles' 16 (7x7: 1.72,
       113 / 78; 5x5: 1.56, 64 / 67) and at least 4 tiles, whose GEMM rows fill a register tile
       (4x4x256: 131 / 53; 2x2x256, one tile: 60 / 73) */
    const int64_t tiles = ((OH + 1) / 2) * ((OW + 1) / 2);
    if (C < 16 || K < 16) return false;
    if (tosac_kdim(in, 0) * tiles < 4 || 90 * OH * OW < 256 * tiles) return false;
    /* the bound: |4 R| < 2^31 for every output whatever the input */
    const int8_t *wv = (const int8_t *)w->data;
    const int64_t zp = tosac_kload_int(wzp, 0);
    for (int64_t k = 0; k < K; k++) {
        int64_t s = 0;
        for (int64_t i = 0; i < 9 * C; i++) {
            const int64_t v = wv[k * 9 * C + i] - zp;
            s += v < 0 ? -v : v;
        }
        if (4 * 255 * s >= ((int64_t)1 << 31)) return false;
    }
    return true;
}

static void iw_make_plan(const tosac_kcall *c, iw_plan *g)
{
    memset(g, 0, sizeof *g);
    (void)tosac_wino_geom_of(c, &g->geo); /* (iw_takes took the call) */
    g->lda = g->C + (g->C & 1);
    g->ubytes = tosac_kalign64(tosac_igemm_avx2_panel_bytes(g->K, g->C));
    const size_t row_bytes = (size_t)(16 * g->TW) * ((size_t)g->lda * sizeof(int16_t) + (size_t)g->K * sizeof(int32_t));
    const int64_t ntr = g->N * g->TH;
    const bool big = 16u * g->ubytes > IW_BIG_U;
    const int64_t rows = (int64_t)((big ? 2u : 1u) * IW_BLOCK_BYTES / row_bytes);
    g->rows = rows < 1 ? 1 : rows > ntr ? ntr : rows;
    const size_t T = (size_t)(g->rows * g->TW);
    size_t o = 0;
    g->off_v = o, o += tosac_kalign64(16u * (T * (size_t)g->lda * sizeof(int16_t) + IW_SKEW));
    g->off_m = o, o += tosac_kalign64(16u * (T * (size_t)g->K * sizeof(int32_t) + IW_SKEW));
    g->off_y = o, o += tosac_kalign64((size_t)(4 * g->TW * g->K) * sizeof(int32_t));
    g->off_z = o, o += tosac_kalign64((size_t)g->C);
    g->total = o;
}

/* U = G' f G'^T in place over the 16 planes of ub bytes (a multiple of 64), element by element:
   plane tap (< 9) holds f[tap / 3][tap % 3] of every packed weight, plane y * 4 + x receives U[y][x].
   Every value fits int16 (|U| <= 9 * 255); sixteen elements a vector, so that the one-time cost
   at create stays small next to an invoke (resnet50: 3% of an invoke element by element). */
__attribute__((target("avx2"))) static void iw_transform_weights(uint8_t *u, size_t ub)
{
    for (size_t e = 0; e < ub; e += 32) {
        __m256i f[3][3], t[4][3];
        for (int tap = 0; tap < 9; tap++)
            f[tap / 3][tap % 3] = _mm256_loadu_si256((const __m256i *)(const void *)(u + (size_t)tap * ub + e));
        for (int x = 0; x < 3; x++) { /* t = G' f */
            t[0][x] = _mm256_add_epi16(f[0][x], f[0][x]);
            t[1][x] = _mm256_add_epi16(_mm256_add_epi16(f[0][x], f[1][x]), f[2][x]);
            t[2][x] = _mm256_add_epi16(_mm256_sub_epi16(f[0][x], f[1][x]), f[2][x]);
            t[3][x] = _mm256_add_epi16(f[2][x], f[2][x]);
        }
        for (int y = 0; y < 4; y++) { /* U = t G'^T */
            const __m256i r[4] = {_mm256_add_epi16(t[y][0], t[y][0]),
                                  _mm256_add_epi16(_mm256_add_epi16(t[y][0], t[y][1]), t[y][2]),
                                  _mm256_add_epi16(_mm256_sub_epi16(t[y][0], t[y][1]), t[y][2]),
                                  _mm256_add_epi16(t[y][2], t[y][2])};
            for (int x = 0; x < 4; x++) _mm256_storeu_si256((__m256i *)(void *)(u + (size_t)(y * 4 + x) * ub + e), r[x]);
        }
    }
}

bool tosac_iwino_prepare(const tosac_kcall *c, tosac_kprep *sizes, void *dst)
{
    if (!iw_takes(c)) return false;
    iw_plan g;
    iw_make_plan(c, &g);
    sizes->const_size = 16u * g.ubytes;
    sizes->scratch_size = g.total;
    sizes->unread = 1u << 1; /* the weights: only U is read */
    if (!dst) return true;
    const int64_t C = g.C, K = g.K;
    const int8_t *w = (const int8_t *)c->in[1].data; /* [K][3][3][C] */
    const int32_t zp = (int32_t)tosac_kload_int(&c->in[4], 0);
    uint8_t *u = dst;
    const size_t pb = tosac_igemm_avx2_panel_bytes(K, C);
    for (int tap = 0; tap < 9; tap++) {
        tosac_gemm_i16_pack_pairs(K, C, TOSAC_IGEMM_AVX2_W, w + tap * C, 9 * C, 1, zp,
                                  (int32_t *)(void *)(u + (size_t)tap * g.ubytes));
        memset(u + (size_t)tap * g.ubytes + pb, 0, g.ubytes - pb);
    }
    iw_transform_weights(u, g.ubytes);
    return true;
}

/* ---- transforms -------------------------------------------------------------------------------- */

/* V = B^T d B of one tile, d[i*4 + j] = p[i*4 + j][ch] - izp (p: the C int8 channels of patch pixel
   (i, j), or izp bytes in the padding); v[xi * vs + ch], v[xi * vs + C] = 0 when C is odd. */
__attribute__((target("avx2"))) static void iw_in(const int8_t *const *p, int64_t C, int32_t izp, int16_t *v, size_t vs)
{
    const __m256i z = _mm256_set1_epi16((int16_t)izp);
    int64_t ch = 0;
    for (; ch + 16 <= C; ch += 16) {
        __m256i d[4][4], t[4][4];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++)
                d[i][j] = _mm256_sub_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)(const void *)(p[i * 4 + j] + ch))), z);
        for (int j = 0; j < 4; j++) {
            t[0][j] = _mm256_sub_epi16(d[0][j], d[2][j]);
            t[1][j] = _mm256_add_epi16(d[1][j], d[2][j]);
            t[2][j] = _mm256_sub_epi16(d[2][j], d[1][j]);
            t[3][j] = _mm256_sub_epi16(d[1][j], d[3][j]);
        }
        for (int i = 0; i < 4; i++) {
            _mm256_storeu_si256((__m256i *)(void *)(v + (size_t)(i * 4 + 0) * vs + ch), _mm256_sub_epi16(t[i][0], t[i][2]));
            _mm256_storeu_si256((__m256i *)(void *)(v + (size_t)(i * 4 + 1) * vs + ch), _mm256_add_epi16(t[i][1], t[i][2]));
            _mm256_storeu_si256((__m256i *)(void *)(v + (size_t)(i * 4 + 2) * vs + ch), _mm256_sub_epi16(t[i][2], t[i][1]));
            _mm256_storeu_si256((__m256i *)(void *)(v + (size_t)(i * 4 + 3) * vs + ch), _mm256_sub_epi16(t[i][1], t[i][3]));
        }
    }
    for (; ch < C; ch++) {
        int32_t d[4][4], t[4][4];
        for (int i = 0; i < 16; i++) d[i / 4][i % 4] = p[i][ch] - izp;
        for (int j = 0; j < 4; j++) {
            t[0][j] = d[0][j] - d[2][j];
            t[1][j] = d[1][j] + d[2][j];
            t[2][j] = d[2][j] - d[1][j];
            t[3][j] = d[1][j] - d[3][j];
        }
        for (int i = 0; i < 4; i++) {
            v[(size_t)(i * 4 + 0) * vs + (size_t)ch] = (int16_t)(t[i][0] - t[i][2]);
            v[(size_t)(i * 4 + 1) * vs + (size_t)ch] = (int16_t)(t[i][1] + t[i][2]);
            v[(size_t)(i * 4 + 2) * vs + (size_t)ch] = (int16_t)(t[i][2] - t[i][1]);
            v[(size_t)(i * 4 + 3) * vs + (size_t)ch] = (int16_t)(t[i][1] - t[i][3]);
        }
    }
    if (C & 1)
        for (int xi = 0; xi < 16; xi++) v[(size_t)xi * vs + (size_t)C] = 0;
}

/* int32 of the two's complement bits u (no implementation-defined conversion) */
static inline int32_t iw_i32(uint32_t u) { return (int32_t)(u & 0x7FFFFFFFu) + ((u >> 31) ? INT32_MIN : 0); }

/* Y = (A^T M A) / 4 of one tile for n channels: m[xi] the tile's sums at position xi (4 R modulo
   2^32, wrapping: the additions are modulo 2^32 too); y[i * 2 + j] output pixel (i, j). */
__attribute__((target("avx2"))) static void iw_out(const int32_t *const *m, int64_t n, int32_t *const *y)
{
    int64_t k = 0;
    for (; k + 8 <= n; k += 8) {
        __m256i s[4][4], t[2][4];
        for (int xi = 0; xi < 16; xi++) s[xi / 4][xi % 4] = _mm256_loadu_si256((const __m256i *)(const void *)(m[xi] + k));
        for (int j = 0; j < 4; j++) {
            t[0][j] = _mm256_add_epi32(_mm256_add_epi32(s[0][j], s[1][j]), s[2][j]);
            t[1][j] = _mm256_sub_epi32(_mm256_sub_epi32(s[1][j], s[2][j]), s[3][j]);
        }
        for (int i = 0; i < 2; i++) {
            const __m256i o0 = _mm256_add_epi32(_mm256_add_epi32(t[i][0], t[i][1]), t[i][2]);
            const __m256i o1 = _mm256_sub_epi32(_mm256_sub_epi32(t[i][1], t[i][2]), t[i][3]);
            _mm256_storeu_si256((__m256i *)(void *)(y[i * 2] + k), _mm256_srai_epi32(o0, 2));
            _mm256_storeu_si256((__m256i *)(void *)(y[i * 2 + 1] + k), _mm256_srai_epi32(o1, 2));
        }
    }
    for (; k < n; k++) {
        uint32_t s[4][4], t[2][4];
        for (int xi = 0; xi < 16; xi++) s[xi / 4][xi % 4] = (uint32_t)m[xi][k];
        for (int j = 0; j < 4; j++) {
            t[0][j] = s[0][j] + s[1][j] + s[2][j];
            t[1][j] = s[1][j] - s[2][j] - s[3][j];
        }
        for (int i = 0; i < 2; i++) {
            y[i * 2][k] = iw_i32(t[i][0] + t[i][1] + t[i][2]) / 4; /* exact: a multiple of 4 where stored */
            y[i * 2 + 1][k] = iw_i32(t[i][1] - t[i][2] - t[i][3]) / 4;
        }
    }
}

/* ---- run --------------------------------------------------------------------------------------- */

typedef struct iw_task {
    tosac_kcall *c;
    const iw_plan *g;
    const uint8_t *u;
    int32_t izp;
    bool rqon; /* the end applies the fused RESCALE (rq) */
    tosac_gemm_rq rq;
    size_t ntr, nblk; /* tile rows, cut into nblk blocks */
    size_t ng;        /* tasks per block, each over gw output channels (a multiple of 64) */
    int64_t gw;
    tosac_status st[TOSAC_KMAX_WORKERS]; /* each worker's first failure */
} iw_task;

/* np output pixels from pixel o on (consecutive in the output) from the sums a (channel 0 of
   pixel q at q * K), channels j0 .. j0 + jn - 1: + bias, then the fused RESCALE, int32 results, or
   the epilogue; false (st set) when the bias addition overflowed or the epilogue failed. */
static bool iw_end(iw_task *t, uint32_t worker, int32_t *a, int64_t o, int64_t np, int64_t j0, int64_t jn)
{
    tosac_kcall *c = t->c;
    const int64_t K = t->g->K;
    const tosac_ktensor *bias = &c->in[2];
    const bool bcast = bias->nelem == 1;
    const int32_t *b = (const int32_t *)bias->data + (bcast ? 0 : j0);
    uint32_t bad;
    if (t->rqon) {
        const tosac_gemm_rq rq = tosac_gemm_rq_from(t->rq, j0);
        bad = tosac_igemm_avx2_end(np, jn, a + j0, K, (uint8_t *)c->epi->out->data + (size_t)(o * K + j0) * rq.ob, K, b,
                                   bcast, &rq);
    } else if (!c->epi) {
        bad = tosac_igemm_avx2_end(np, jn, a + j0, K, (int32_t *)c->out[0].data + o * K + j0, K, b, bcast, NULL);
    } else {
        bad = tosac_igemm_avx2_end(np, jn, a + j0, K, a + j0, K, b, bcast, NULL);
        if (!bad) {
            tosac_status st = jn == K ? tosac_epilogue_store(c, a, o * K, np * K)
                                      : tosac_epilogue_store_cols(c, a, K, o * K, np, j0, jn);
            if (st != TOSAC_OK) {
                t->st[worker] = st;
                return false;
            }
        }
    }
    if (bad) {
        t->st[worker] = tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, "accumulator + bias overflows i32 (REQUIRE)");
        return false;
    }
    return true;
}

/* The tile row ty of image n, output channels j0 .. j0 + jn - 1, from its planes' sums m (tile tx
   at m + tx * K) straight into the output, when there the end is int32 or the fused RESCALE;
   false when another epilogue needs the row's int32 sums (iw_end). A failure is in st. */
static bool iw_end_fused(iw_task *t, uint32_t worker, const int32_t *m, size_t ms, int64_t n, int64_t ty, int64_t j0,
                         int64_t jn)
{
    tosac_kcall *c = t->c;
    const iw_plan *g = t->g;
    if (c->epi && !t->rqon) return false;
    const int64_t K = g->K, OH = g->OH, OW = g->OW, oy = 2 * ty;
    const tosac_ktensor *bias = &c->in[2];
    const bool bcast = bias->nelem == 1;
    const tosac_gemm_rq rq = t->rqon ? tosac_gemm_rq_from(t->rq, j0) : t->rq;
    const size_t es = t->rqon ? rq.ob : sizeof(int32_t);
    uint8_t *row0 = (uint8_t *)(t->rqon ? c->epi->out->data : c->out[0].data) + (size_t)(((n * OH + oy) * OW) * K + j0) * es;
    uint8_t *row1 = oy + 1 < OH ? row0 + (size_t)(OW * K) * es : NULL;
    if (tosac_igemm_avx2_wino_end(g->TW, jn, m, ms, K, row0, row1, OW, K, (const int32_t *)bias->data + (bcast ? 0 : j0),
                                  bcast, t->rqon ? &rq : NULL))
        t->st[worker] = tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, "accumulator + bias overflows i32 (REQUIRE)");
    return true;
}

static void iw_blocks(void *ctx, uint32_t worker, size_t b0, size_t b1)
{
    iw_task *t = ctx;
    tosac_kcall *c = t->c;
    const iw_plan *g = t->g;
    const int64_t C = g->C, K = g->K, TW = g->TW, OW = g->OW, OH = g->OH, IH = g->IH, IW = g->IW, lda = g->lda;
    uint8_t *sc = (uint8_t *)c->scratch + (size_t)worker * c->scratch_size;
    int16_t *V = (int16_t *)(void *)(sc + g->off_v);
    int32_t *M = (int32_t *)(void *)(sc + g->off_m), *Y = (int32_t *)(void *)(sc + g->off_y);
    int8_t *zero = (int8_t *)(sc + g->off_z);
    const int8_t *x = (const int8_t *)c->in[0].data;
    memset(zero, (int)(uint8_t)t->izp, (size_t)C); /* inputs equal to the zero point: d = 0 */
    const int64_t Q = (C + 1) / 2;
    for (size_t task = b0; task < b1 && t->st[worker] == TOSAC_OK; task++) {
        const size_t blk = task / t->ng; /* 32-bit clean */
        const int64_t j0 = (int64_t)(task - blk * t->ng) * t->gw, jn = K - j0 < t->gw ? K - j0 : t->gw;
        size_t r0, rn;
        tosac_keven_part(t->ntr, t->nblk, blk, &r0, &rn);
        const int64_t T = (int64_t)rn * TW;
        const size_t vs = (size_t)(T * lda) + IW_SKEW / sizeof(int16_t), ms = (size_t)(T * K) + IW_SKEW / sizeof(int32_t);
        /* (1) V of every tile of the block */
        for (size_t r = r0; r < r0 + rn; r++) {
            const int64_t n = (int64_t)(r / (size_t)g->TH), ty = (int64_t)(r % (size_t)g->TH);
            const int64_t iy0 = 2 * ty - g->pt;
            for (int64_t tx = 0; tx < TW; tx++) {
                const int64_t ix0 = 2 * tx - g->pl;
                const int8_t *p[16];
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++) {
                        const int64_t iy = iy0 + i, ix = ix0 + j;
                        p[i * 4 + j] = iy >= 0 && iy < IH && ix >= 0 && ix < IW ? x + ((n * IH + iy) * IW + ix) * C : zero;
                    }
                iw_in(p, C, t->izp, V + ((int64_t)(r - r0) * TW + tx) * lda, vs);
            }
        }
        /* (2) M_xi = V_xi x U_xi, output channels j0 .. j0 + jn - 1 (j0 a multiple of the panel
           blocks' 16 columns) */
        for (int xi = 0; xi < 16; xi++) {
            const int32_t *U = (const int32_t *)(const void *)(t->u + (size_t)xi * g->ubytes);
            tosac_igemm_avx2(T, jn, C, V + (size_t)xi * vs, lda, U + j0 / TOSAC_IGEMM_AVX2_W * Q * TOSAC_IGEMM_AVX2_W,
                             M + (size_t)xi * ms + j0, K, NULL, false, NULL);
        }
        /* (3) R per tile row and its end: in registers into the output (int32, or the fused
           RESCALE), or through one tile row's int32 sums for any other epilogue */
        for (size_t r = r0; r < r0 + rn && t->st[worker] == TOSAC_OK; r++) {
            const int64_t n = (int64_t)(r / (size_t)g->TH), ty = (int64_t)(r % (size_t)g->TH);
            if (iw_end_fused(t, worker, M + (size_t)((int64_t)(r - r0) * TW * K + j0), ms, n, ty, j0, jn)) continue;
            for (int64_t tx = 0; tx < TW; tx++) {
                const int64_t ti = (int64_t)(r - r0) * TW + tx;
                const int32_t *m[16];
                for (int xi = 0; xi < 16; xi++) m[xi] = M + (size_t)xi * ms + ti * K + j0;
                int32_t *y[4] = {Y + (2 * tx) * K + j0, Y + (2 * tx + 1) * K + j0, Y + (2 * TW + 2 * tx) * K + j0,
                                 Y + (2 * TW + 2 * tx + 1) * K + j0};
                iw_out(m, jn, y);
            }
            const int64_t oy = 2 * ty, nr = OH - oy < 2 ? OH - oy : 2;
            if (OW == 2 * TW) /* both rows at once: they are consecutive in Y and in the output */
                iw_end(t, worker, Y, (n * OH + oy) * OW, nr * OW, j0, jn);
            else
                for (int64_t i = 0; i < nr; i++)
                    if (!iw_end(t, worker, Y + i * 2 * TW * K, (n * OH + oy + i) * OW, OW, j0, jn)) break;
        }
        if (t->ng > 1 || t->st[worker] != TOSAC_OK) continue; /* (groups: tosac_epilogue_post_late) */
        const int64_t n0 = (int64_t)(r0 / (size_t)g->TH), y0 = 2 * (int64_t)(r0 % (size_t)g->TH);
        const size_t rl = r0 + rn - 1;
        const int64_t n1 = (int64_t)(rl / (size_t)g->TH), y1 = 2 * (int64_t)(rl % (size_t)g->TH) + 2;
        const int64_t p0 = (n0 * OH + y0) * OW, p1 = (n1 * OH + (y1 < OH ? y1 : OH)) * OW;
        tosac_epilogue_post(c, worker, p0, p1 - p0);
    }
}

tosac_status tosac_iwino_run(tosac_kcall *c, const void *prep, int32_t izp)
{
    iw_plan g;
    iw_make_plan(c, &g);
    if (c->scratch_size < g.total) return tosac_kfail(c, TOSAC_ERR_INTERNAL, "conv (int8 Winograd): scratch too small");
    if (g.N * g.OH * g.OW * g.K == 0) return TOSAC_OK;
    iw_task t = {.c = c, .g = &g, .u = prep, .izp = izp, .st = {TOSAC_OK}};
    t.rqon = c->epi && tosac_epilogue_rq(c, &t.rq);
    t.ntr = (size_t)(g.N * g.TH);
    size_t nblk = (t.ntr + (size_t)g.rows - 1u) / (size_t)g.rows;
    t.ng = 1, t.gw = g.K;
    const size_t nw = tosac_kworkers(c);
    if (nw > 1 && g.N * g.OH * g.OW * 9 * g.C * g.K >= ((int64_t)1 << 18)) {
        const size_t nb64 = ((size_t)g.K + 63u) / 64u;
        if (16u * g.ubytes > IW_BIG_U && nblk < 2u * nw && nb64 >= nw) {
            /* U beyond L2, streamed whole by every block: the workers split the output channels */
            t.gw = (int64_t)((nb64 + nw - 1u) / nw) * 64;
            t.ng = ((size_t)g.K + (size_t)t.gw - 1u) / (size_t)t.gw;
        } else {
            if (nblk < 2u * nw) nblk = 2u * nw;
            while (nblk < 8u * nw && nblk % nw) nblk++;
            if (nblk > t.ntr) nblk = t.ntr;
        }
    }
    t.nblk = nblk;
    tosac_kparallel_for(c, iw_blocks, &t, nblk * t.ng);
    for (uint32_t w = 0; w < tosac_kworkers(c); w++)
        if (t.st[w] != TOSAC_OK) return t.st[w];
    if (t.ng > 1) tosac_epilogue_post_late(c, (size_t)(g.N * g.OH * g.OW), nblk * t.ng);
    return TOSAC_OK;
}

#else

bool tosac_iwino_prepare(const tosac_kcall *c, tosac_kprep *sizes, void *dst)
{
    (void)c, (void)sizes, (void)dst;
    return false;
}

tosac_status tosac_iwino_run(tosac_kcall *c, const void *prep, int32_t izp)
{
    (void)prep, (void)izp;
    return tosac_kfail(c, TOSAC_ERR_INTERNAL, "conv (int8 Winograd): not in this build");
}

#endif
