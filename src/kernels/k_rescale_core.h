/*
 * RESCALE inner loop on int32 values (x - input_zp), included by k_convert.c for the baseline
 * (define KR_FN(name) and KR_TARGET first; the AVX2 and AVX-512 loops are written out in int64
 * lanes there, since GCC leaves this one scalar for them). Each
 * element is tosac_scale32_core of quant_math.h (the one apply_scale_32) with the multiplier,
 * shift and rounds prepared per channel (rows of nc channels, x[0] is channel 0; nc 1 for a
 * per-tensor scale); then + output_zp and the clip to [lo, hi]. Returns nonzero when a REQUIRE
 * fails (value outside [vmin, vmax] = +-2^(shift-1) within int32, or result + output_zp outside
 * int32). Not a public header.
 */

/* GCC vectorises these loops only at -O3 (code generation only: integer results are exact). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("O3")
#endif

KR_TARGET static uint32_t KR_FN(rs_rows)(const int32_t *restrict x, int64_t n, const rs_tabs *t, int64_t nc,
                                         int32_t ozp, int32_t lo, int32_t hi, int32_t *restrict y)
{
    uint32_t bad = 0;
    for (int64_t r = 0; r < n; r += nc)
        for (int64_t j = 0; j < nc; j++) {
            const int32_t v = x[r + j];
            bad |= (uint32_t)(((int64_t)v < t->vmin[j]) | ((int64_t)v > t->vmax[j]));
            const int64_t q = (int64_t)tosac_scale32_core(v, (int32_t)t->mult[j], v >= 0 ? t->rpos[j] : t->rneg[j],
                                                          (uint32_t)t->shift[j]) + ozp;
            bad |= (uint32_t)((q < INT32_MIN) | (q > INT32_MAX));
            y[r + j] = (int32_t)(q < lo ? lo : q > hi ? hi : q);
        }
    return bad;
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif
