/*
 * Depthwise rows (tosac_dw_row_f32 / _i8 in k_gemm.h), included by k_gemm_tiles.h once per
 * instruction-set variant (KG_FN, KG_TARGET; KG_DW_PX pixels in the largest tile, KG_DW_VB bytes
 * of the widest vector). Not a public header.
 *
 * A tile is P output pixels (P = KG_DW_PX, then halves down to 1) x one vector of W output
 * channels: P sums stay in registers over the taps (ky, then kx), one weight load serves the P
 * pixels. W is the widest of KG_DW_VB, KG_DW_VB/2, ... 4 bytes that the C*M output channels fill;
 * the vectors start at 0, W, 2W, ... and the last at C*M - W, overlapping the one before it (both
 * compute the same sums, so the shared lanes are written twice with the same bits): channel
 * counts that are no multiple of the vector (72, 88, 120) and narrow layers (8 channels) need no
 * lane-by-lane tail. With multiplier 1, a tile whose input columns all lie inside the input row
 * reads the input in place; at the right border the tile narrows (8, 4, 2, 1 pixels) until it
 * does; the pixels whose taps still leave the input (the first pad / stride pixels of a row, a last
 * one) run a pixel at a time over the kernel columns inside the input (the reference's skipping of
 * the padding taps). With a multiplier, tiles first copy their columns into a small patch
 * [nky][span][W] (columns outside the input hold the pad value: fp32 +0, int8 the input zero point;
 * output channel j takes input channel j / M) and read that.
 *
 * Why the padding taps can be added: the fp32 sums start from +0, and a fused x * w + s rounded
 * to nearest is -0 only when the exact product and s are both -0, so no partial sum is ever -0
 * and fusing the product 0 * w = +-0 of a finite weight leaves it unchanged: the bits of skipping
 * the tap, which is the
 * reference order (the caller takes these rows only when every weight is finite). int8: the tile
 * sums x * w and subtracts zp * (the sum of its weights) at the end, which is exactly the sum of
 * (x - zp) * w (every term is bounded by the caller, no int32 overflow), and a padding tap
 * (x = zp) adds zp * w - zp * w = 0.
 */

#define KG_DW_TYPES(B)                                                                                   \
    typedef float KG_FN(f##B) __attribute__((vector_size(B)));                                           \
    typedef int32_t KG_FN(i##B) __attribute__((vector_size(B)));                                         \
    typedef uint32_t KG_FN(u##B) __attribute__((vector_size(B)));                                       \
    KG_TARGET static inline KG_FN(f##B) KG_FN(ldf##B)(const float *p)                                    \
    {                                                                                                    \
        KG_FN(f##B) v;                                                                                   \
        memcpy(&v, p, sizeof v);                                                                         \
        return v;                                                                                        \
    }                                                                                                    \
    /* widened lane by lane: GCC 12 lowers __builtin_convertvector of narrow vectors one element at a    \
       time, the loop becomes one widening load */                                                       \
    KG_TARGET static inline KG_FN(i##B) KG_FN(ldb##B)(const int8_t *p)                                  \
    {                                                                                                    \
        KG_FN(i##B) v;                                                                                   \
        for (int i = 0; i < (int)(sizeof v / 4); i++) v[i] = p[i];                                       \
        return v;                                                                                        \
    }                                                                                                    \
    KG_TARGET static inline KG_FN(i##B) KG_FN(ldh##B)(const int16_t *p)                                 \
    {                                                                                                    \
        KG_FN(i##B) v;                                                                                   \
        for (int i = 0; i < (int)(sizeof v / 4); i++) v[i] = p[i];                                       \
        return v;                                                                                        \
    }                                                                                                    \
    KG_TARGET static inline KG_FN(f##B) KG_FN(blend##B)(KG_FN(i##B) m, KG_FN(f##B) a, KG_FN(f##B) b)     \
    {                                                                                                    \
        return (KG_FN(f##B))((m & (KG_FN(i##B))a) | (~m & (KG_FN(i##B))b));                              \
    }                                                                                                    \
    /* a + x * w: fp32 fused (one rounding, as fmaf; the compilers make the lane loop one vfmadd at      \
       the AVX2 and AVX-512 levels), int32 exact */                                                      \
    KG_TARGET static inline KG_FN(f##B) KG_FN(macf##B)(KG_FN(f##B) a, KG_FN(f##B) x, KG_FN(f##B) w)      \
    {                                                                                                    \
        for (int i = 0; i < (int)(sizeof a / 4); i++) a[i] = fmaf(x[i], w[i], a[i]);                     \
        return a;                                                                                        \
    }                                                                                                    \
    KG_TARGET static inline KG_FN(i##B) KG_FN(maci##B)(KG_FN(i##B) a, KG_FN(i##B) x, KG_FN(i##B) w)      \
    {                                                                                                    \
        return a + x * w;                                                                                \
    }                                                                                                    \
    /* the end of tosac_gemm_bias_store_f32 on one vector of sums a (bv: the biases) */                  \
    KG_TARGET static inline KG_FN(f##B) KG_FN(end##B)(KG_FN(f##B) a, KG_FN(f##B) bv, const tosac_gemm_epi *ep) \
    {                                                                                                    \
        const KG_FN(f##B) x = bv + a;                                                                    \
        if (!ep->clamp) return x;                                                                        \
        const KG_FN(f##B) lo = ep->lo - (KG_FN(f##B)){0}, hi = ep->hi - (KG_FN(f##B)){0};                \
        const KG_FN(f##B) v = KG_FN(blend##B)(x >= lo, x, lo), r = KG_FN(blend##B)(v < hi, v, hi);       \
        return KG_FN(blend##B)(x != x, ep->ignore ? lo : x, r);                                          \
    }

/* int8 tiles: the running sum of the weights, and zp times it taken off at the end; with g->ibias the
   bias added in wrapping lanes, an overflow (the sum's sign differs from both operands') flagged in
   vbad. END: the unsigned vector type. */
#define KG_DW_WSUM_I(sw, wv) sw = sw + wv;
#define KG_DW_FIX_I(a, sw, END)                                                                          \
    {                                                                                                    \
        const __typeof__(sw) z = sw * zp;                                                                \
        KG_DW_UNROLL for (int p = 0; p < (int)(sizeof a / sizeof a[0]); p++) a[p] = a[p] - z;            \
        if (g->ibias) {                                                                                  \
            __typeof__(sw) bv;                                                                           \
            if (g->ibcast)                                                                               \
                for (int i = 0; i < W; i++) bv[i] = g->ibias[0];                                         \
            else                                                                                         \
                memcpy(&bv, g->ibias + j, sizeof bv);                                                    \
            KG_DW_UNROLL for (int p = 0; p < (int)(sizeof a / sizeof a[0]); p++) {                       \
                const END u = (END)a[p], v = (END)bv, r = u + v;                                         \
                vbad |= (u ^ r) & (v ^ r);                                                               \
                a[p] = (__typeof__(sw))r;                                                                \
            }                                                                                            \
        }                                                                                                \
    }
#define KG_DW_WSUM_F(sw, wv)
#define KG_DW_FIX_F(a, sw, END)                                                                          \
    if (ep)                                                                                              \
        KG_DW_UNROLL for (int p = 0; p < (int)(sizeof a / sizeof a[0]); p++) a[p] = END(a[p], sw, ep);

/* the loops over a tile's pixels fully unrolled: GCC otherwise keeps the int32 sums in memory */
#define KG_DW_UNROLL _Pragma("GCC unroll 8")

/* One tile of P pixels into o (pixel stride CM) from s (kernel row stride ys, pixel step ps, kernel
   column step ks) with the weights wt (tap stride CM). */
#define KG_DW_TILE(P, VT, LDX, LDW, WSUM, FIX, SW0, END, MAC)                                                         \
    {                                                                                                    \
        VT a[P], sw = SW0; /* int8: the sum of the weights; fp32: the biases */                         \
        KG_DW_UNROLL for (int p = 0; p < P; p++) a[p] = (VT){0};                                         \
        for (int64_t ky = 0; ky < nky; ky++)                                                             \
            for (int64_t kx = k0; kx < k1; kx++) {                                                       \
                const VT wv = LDW(wt + (ky * KW + kx) * CM);                                             \
                const __typeof__(*s) *sp = s + ky * ys + (kx - k0) * ks;                                 \
                KG_DW_UNROLL for (int p = 0; p < P; p++) a[p] = MAC(a[p], LDX(sp + p * ps), wv);         \
                WSUM(sw, wv)                                                                             \
            }                                                                                            \
        FIX(a, sw, END)                                                                                       \
        KG_DW_UNROLL for (int p = 0; p < P; p++) memcpy(o + p * CM, &a[p], sizeof a[p]);                 \
    }

/* The rows with W-lane vectors: NAME##B(acc, x, w, g, zp) as tosac_dw_row_* describes. */
#define KG_DW_ROWS(NAME, B, T, XT, WT, VT, LDX, LDW, WSUM, FIX, PAD, SW0, END, MAC)                                  \
    KG_TARGET static void KG_FN(NAME##B)(T *restrict acc, const XT *restrict x, const WT *restrict w,    \
                                         const tosac_dw_geom *g, int32_t zp)                             \
    {                                                                                                    \
        enum { W = B / 4 };                                                                              \
        const int64_t C = g->C, M = g->M, CM = C * M, KW = g->KW, nky = g->nky, sx = g->sx, dx = g->dx;  \
        XT *restrict patch = g->patch;                                                                   \
        const XT pad = (XT)(PAD);                                                                        \
        const tosac_gemm_epi *ep = g->ep;                                                                \
        KG_FN(u##B) vbad = {0}; /* int8 with bias: the sign bits flag an overflow */                     \
        (void)zp, (void)pad, (void)ep;                                                                   \
        for (int64_t px = 0; px < g->n;) {                                                               \
            const int64_t left = g->n - px;                                                              \
            int64_t np = left >= KG_DW_PX       ? KG_DW_PX                                               \
                         : left >= KG_DW_PX / 2 ? KG_DW_PX / 2                                           \
                         : left >= KG_DW_PX / 4 ? KG_DW_PX / 4                                           \
                                                : 1;                                                     \
            const int64_t ix0 = (g->ox0 + px) * sx - g->pl;                                              \
            int64_t span = (np - 1) * sx + (KW - 1) * dx + 1;                                            \
            bool direct = M == 1 && ix0 >= 0 && ix0 + span <= g->IW;                                     \
            while (M == 1 && !direct && ix0 >= 0 && np > 1) { /* right border: the widest tile inside */ \
                np = np == KG_DW_PX ? KG_DW_PX / 2 : np == KG_DW_PX / 2 ? KG_DW_PX / 4 : 1;              \
                span = (np - 1) * sx + (KW - 1) * dx + 1;                                                \
                direct = ix0 + span <= g->IW;                                                            \
            }                                                                                            \
            if (!direct && M == 1) {                                                                     \
                /* a tile at a border: its pixels whose taps leave the input (the left border's, or a    \
                   last pixel) a pixel at a time over the kernel columns inside the input; the next      \
                   tiles read the input in place (a patch copied about as much as the tile computes) */  \
                if (ix0 < 0)                                                                             \
                    for (np = 1; np < left && ix0 + np * sx < 0;) np++;                                  \
                for (int64_t pq = 0; pq < np; pq++) {                                                    \
                    const int64_t ix = ix0 + pq * sx;                                                    \
                    int64_t k0 = 0, k1 = KW;                                                             \
                    while (k0 < k1 && ix + k0 * dx < 0) k0++;                                            \
                    while (k1 > k0 && ix + (k1 - 1) * dx >= g->IW) k1--;                                 \
                    for (int64_t j0 = 0; j0 < CM; j0 += W) {                                             \
                        const int64_t j = j0 + W <= CM ? j0 : CM - W, ys = g->ystep, ps = 0, ks = dx * C; \
                        const XT *s = k0 < k1 ? x + (ix + k0 * dx) * C + j : x;                          \
                        const WT *wt = w + j;                                                            \
                        T *o = acc + (px + pq) * CM + j;                                                 \
                        (void)ps;                                                                        \
                        KG_DW_TILE(1, VT, LDX, LDW, WSUM, FIX, SW0, END, MAC)                                 \
                    }                                                                                    \
                }                                                                                        \
                px += np;                                                                                \
                continue;                                                                                \
            }                                                                                            \
            for (int64_t j0 = 0; j0 < CM; j0 += W) {                                                     \
                const int64_t j = j0 + W <= CM ? j0 : CM - W;                                            \
                const XT *s = patch;                                                                     \
                int64_t ys = span * W, cs = W;                                                           \
                if (direct) {                                                                            \
                    s = x + ix0 * C + j, ys = g->ystep, cs = C;                                          \
                } else {                                                                                 \
                    int64_t src[W]; /* input channel of each lane */                                     \
                    for (int64_t i = 0, ci = (int64_t)((size_t)j / (size_t)M), m = j - ci * M; i < W; i++) { \
                        src[i] = ci;                                                                     \
                        if (++m == M) m = 0, ci++;                                                       \
                    }                                                                                    \
                    for (int64_t ky = 0; ky < nky; ky++)                                                 \
                        for (int64_t col = 0; col < span; col++) {                                       \
                            const int64_t ix = ix0 + col;                                                \
                            XT *d = patch + (ky * span + col) * W;                                       \
                            if (ix < 0 || ix >= g->IW) {                                                 \
                                for (int i = 0; i < W; i++) d[i] = pad;                                  \
                                continue;                                                                \
                            }                                                                            \
                            const XT *r = x + ky * g->ystep + ix * C;                                    \
                            if (M == 1)                                                                  \
                                memcpy(d, r + j, W * sizeof *d);                                         \
                            else                                                                         \
                                for (int i = 0; i < W; i++) d[i] = r[src[i]];                            \
                        }                                                                                \
                }                                                                                        \
                const int64_t ps = sx * cs, ks = dx * cs, k0 = 0, k1 = KW;                               \
                const WT *wt = w + j;                                                                    \
                T *o = acc + px * CM + j;                                                                \
                if (np == KG_DW_PX)                                                                      \
                    KG_DW_TILE(KG_DW_PX, VT, LDX, LDW, WSUM, FIX, SW0, END, MAC)                                        \
                else if (np == KG_DW_PX / 2)                                                             \
                    KG_DW_TILE(KG_DW_PX / 2, VT, LDX, LDW, WSUM, FIX, SW0, END, MAC)                                    \
                else if (np == KG_DW_PX / 4)                                                             \
                    KG_DW_TILE(KG_DW_PX / 4, VT, LDX, LDW, WSUM, FIX, SW0, END, MAC)                                    \
                else                                                                                     \
                    KG_DW_TILE(1, VT, LDX, LDW, WSUM, FIX, SW0, END, MAC)                                               \
            }                                                                                            \
            px += np;                                                                                    \
        }                                                                                                \
        for (int i = 0; i < W; i++)                                                                      \
            if (vbad[i] >> 31) *g->bad = 1;                                                              \
    }

#define KG_DW_WIDTH(B)                                                                                   \
    KG_DW_TYPES(B)                                                                                       \
    KG_DW_ROWS(dwf, B, float, float, float, KG_FN(f##B), KG_FN(ldf##B), KG_FN(ldf##B), KG_DW_WSUM_F,      \
               KG_DW_FIX_F, 0, !ep ? (KG_FN(f##B)){0} : ep->bcast ? ep->bias[0] - (KG_FN(f##B)){0} : KG_FN(ldf##B)(ep->bias + j), \
               KG_FN(end##B), KG_FN(macf##B))                                                            \
    KG_DW_ROWS(dwi, B, int32_t, int8_t, int16_t, KG_FN(i##B), KG_FN(ldb##B), KG_FN(ldh##B), KG_DW_WSUM_I, \
               KG_DW_FIX_I, zp, (KG_FN(i##B)){0}, KG_FN(u##B), KG_FN(maci##B))

/*
 * fp32 rows with multiplier 1, dilation 1 and a 3- or 5-column kernel at stride 1 or 2 (the zoo's
 * depthwise layers): a tile of KG_DW_PX pixels x one vector of channels loads each input column of
 * a kernel row once, for every pixel that reads it (pixel p, tap kx: column p * SX + kx), with the
 * row's KW weights in registers; the tap-by-tap tile loads one column per product. Each pixel
 * still adds its taps in the order ky, kx. A column outside the input is skipped (the pixels that
 * read it skip a padding tap, the reference's order), so border pixels run in whole tiles too
 * instead of one at a time; the lanes of the pixels past the row's end are computed from the
 * columns inside and not stored.
 */
#define KG_DWC_TILE(P, KWC, SX, VT, LD, END, MAC)                                                                \
    {                                                                                                    \
        VT a[P];                                                                                         \
        KG_DW_UNROLL for (int p = 0; p < P; p++) a[p] = (VT){0};                                         \
        for (int64_t ky = 0; ky < nky; ky++) {                                                           \
            const float *xr = x + ky * ys + j;                                                           \
            VT wv[KWC];                                                                                  \
            KG_DW_UNROLL for (int kx = 0; kx < KWC; kx++) wv[kx] = LD(w + (ky * KWC + kx) * CM + j);     \
            _Pragma("GCC unroll 24") for (int c = 0; c < (P - 1) * SX + KWC; c++) {                      \
                const int64_t ix = ix0 + c;                                                              \
                if (ix < 0 || ix >= IW) continue;                                                        \
                const VT xv = LD(xr + ix * CM);                                                          \
                KG_DW_UNROLL for (int kx = KWC - 1; kx >= 0; kx--) {                                     \
                    const int d = c - kx;                                                                \
                    if (d >= 0 && d % SX == 0 && d / SX < P) a[d / SX] = MAC(a[d / SX], xv, wv[kx]);    \
                }                                                                                        \
            }                                                                                            \
        }                                                                                                \
        const VT bv = !ep ? (VT){0} : ep->bcast ? ep->bias[0] - (VT){0} : LD(ep->bias + j);              \
        KG_DW_UNROLL for (int p = 0; p < P; p++) {                                                       \
            if (p < np) {                                                                                \
                const VT r = ep ? END(a[p], bv, ep) : a[p];                                              \
                memcpy(o + p * CM, &r, sizeof r);                                                        \
            }                                                                                            \
        }                                                                                                \
    }

#define KG_DWC_ROWS(B, KWC, SX)                                                                          \
    KG_TARGET static void KG_FN(dwc##B##_##KWC##_##SX)(float *restrict acc, const float *restrict x,     \
                                                        const float *restrict w, const tosac_dw_geom *g) \
    {                                                                                                    \
        enum { W = B / 4 };                                                                              \
        typedef KG_FN(f##B) VT;                                                                          \
        const int64_t CM = g->C, IW = g->IW, nky = g->nky, ys = g->ystep;                                \
        const tosac_gemm_epi *ep = g->ep;                                                                \
        for (int64_t px = 0; px < g->n; px += KG_DW_PX) {                                                \
            const int64_t np = g->n - px < KG_DW_PX ? g->n - px : KG_DW_PX;                               \
            const int64_t ix0 = (g->ox0 + px) * SX - g->pl;                                              \
            for (int64_t j0 = 0; j0 < CM; j0 += W) {                                                     \
                const int64_t j = j0 + W <= CM ? j0 : CM - W;                                            \
                float *o = acc + px * CM + j;                                                            \
                if (np > KG_DW_PX / 2)                                                                   \
                    KG_DWC_TILE(KG_DW_PX, KWC, SX, VT, KG_FN(ldf##B), KG_FN(end##B), KG_FN(macf##B))                     \
                else /* a row's last pixels, or a short block of a row (two threads, 7x7 rows) */       \
                    KG_DWC_TILE(KG_DW_PX / 2, KWC, SX, VT, KG_FN(ldf##B), KG_FN(end##B), KG_FN(macf##B))                 \
            }                                                                                            \
        }                                                                                                \
    }

#define KG_DWC_WIDTH(B)                                                                                  \
    KG_DWC_ROWS(B, 3, 1)                                                                                 \
    KG_DWC_ROWS(B, 3, 2)                                                                                 \
    KG_DWC_ROWS(B, 5, 1)                                                                                 \
    KG_DWC_ROWS(B, 5, 2)                                                                                 \
    KG_TARGET static bool KG_FN(dwc##B)(float *acc, const float *x, const float *w, const tosac_dw_geom *g) \
    {                                                                                                    \
        if (g->M != 1 || g->dx != 1 || (g->KW != 3 && g->KW != 5) || (g->sx != 1 && g->sx != 2)) return false; \
        if (g->KW == 3)                                                                                  \
            (g->sx == 1 ? KG_FN(dwc##B##_3_1) : KG_FN(dwc##B##_3_2))(acc, x, w, g);                      \
        else                                                                                             \
            (g->sx == 1 ? KG_FN(dwc##B##_5_1) : KG_FN(dwc##B##_5_2))(acc, x, w, g);                      \
        return true;                                                                                     \
    }

KG_DW_WIDTH(4)
KG_DW_WIDTH(8)
KG_DW_WIDTH(16)
#if KG_DW_VB >= 32
KG_DW_WIDTH(32)
#endif
#if KG_DW_VB >= 64
KG_DW_WIDTH(64)
#endif
KG_DWC_WIDTH(16)
#if KG_DW_VB >= 32
KG_DWC_WIDTH(32)
#endif
#if KG_DW_VB >= 64
KG_DWC_WIDTH(64)
#endif

/* the widest vector whose lanes the output channels fill */
#if KG_DW_VB >= 64
#define KG_DW_PICK64(NAME, ARGS)                                                                         \
    if (CM >= 16) {                                                                                      \
        KG_FN(NAME##64) ARGS;                                                                            \
        return;                                                                                          \
    }
#else
#define KG_DW_PICK64(NAME, ARGS)
#endif
#if KG_DW_VB >= 32
#define KG_DW_PICK32(NAME, ARGS)                                                                         \
    if (CM >= 8) {                                                                                       \
        KG_FN(NAME##32) ARGS;                                                                            \
        return;                                                                                          \
    }
#else
#define KG_DW_PICK32(NAME, ARGS)
#endif
#define KG_DW_PICK(NAME, ARGS)                                                                           \
    {                                                                                                    \
        const int64_t CM = g->C * g->M;                                                                  \
        KG_DW_PICK64(NAME, ARGS)                                                                         \
        KG_DW_PICK32(NAME, ARGS)                                                                         \
        if (CM >= 4)                                                                                     \
            KG_FN(NAME##16) ARGS;                                                                        \
        else if (CM >= 2)                                                                                \
            KG_FN(NAME##8) ARGS;                                                                         \
        else                                                                                             \
            KG_FN(NAME##4) ARGS;                                                                         \
    }
/* the column tiles (KG_DWC_ROWS) at the width KG_DW_PICK would take; false: not their geometry */
KG_TARGET static bool KG_FN(dwc_pick)(float *acc, const float *x, const float *w, const tosac_dw_geom *g)
{
    const int64_t CM = g->C * g->M;
#if KG_DW_VB >= 64
    if (CM >= 16) return KG_FN(dwc64)(acc, x, w, g);
#endif
#if KG_DW_VB >= 32
    if (CM >= 8) return KG_FN(dwc32)(acc, x, w, g);
#endif
    return CM >= 4 && KG_FN(dwc16)(acc, x, w, g);
}
KG_TARGET static void KG_FN(dw_rows_f32)(float *acc, const float *x, const float *w, const tosac_dw_geom *g, int32_t zp)
{
    if (KG_FN(dwc_pick)(acc, x, w, g)) return;
    KG_DW_PICK(dwf, (acc, x, w, g, zp))
}
KG_TARGET static void KG_FN(dw_rows_i8)(int32_t *acc, const int8_t *x, const int16_t *w, const tosac_dw_geom *g,
                                        int32_t zp) KG_DW_PICK(dwi, (acc, x, w, g, zp))

#undef KG_DW_TYPES
#undef KG_DW_WSUM_I
#undef KG_DW_FIX_I
#undef KG_DW_WSUM_F
#undef KG_DW_FIX_F
#undef KG_DW_TILE
#undef KG_DW_UNROLL
#undef KG_DW_ROWS
#undef KG_DW_WIDTH
#undef KG_DW_PICK64
#undef KG_DW_PICK32
#undef KG_DW_PICK
#undef KG_DWC_TILE
#undef KG_DWC_ROWS
#undef KG_DWC_WIDTH
