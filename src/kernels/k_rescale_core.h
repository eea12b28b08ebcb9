/*
 * RESCALE inner loops on int32 values (x - input_zp), included by k_convert.c once per
 * instruction-set variant like k_gemm_tiles.h (define KR_FN(name) and KR_TARGET first). Each
 * element is tosac_scale32_core of quant_math.h (the one apply_scale_32) with the round and shift
 * prepared per channel; then + output_zp and the clip to [lo, hi]. Returns nonzero when a REQUIRE
 * fails (value outside +-2^(shift-1), or result + output_zp outside int32). Not a public header.
 */

/* One (multiplier, shift) for every element. */
KR_TARGET static uint32_t KR_FN(rs_uniform)(const int32_t *restrict x, int64_t n, int32_t mult, uint32_t shift,
                                            int64_t rpos, int64_t rneg, int64_t lim, int32_t ozp, int32_t lo,
                                            int32_t hi, int32_t *restrict y)
{
    uint32_t bad = 0;
    for (int64_t i = 0; i < n; i++) {
        const int32_t v = x[i];
        bad |= (uint32_t)(((int64_t)v < -lim) | ((int64_t)v >= lim));
        const int64_t t = (int64_t)tosac_scale32_core(v, mult, v >= 0 ? rpos : rneg, shift) + ozp;
        bad |= (uint32_t)((t < INT32_MIN) | (t > INT32_MAX));
        y[i] = (int32_t)(t < lo ? lo : t > hi ? hi : t);
    }
    return bad;
}

/* Per channel: x holds rows of nc channels (x[0] is channel 0). */
KR_TARGET static uint32_t KR_FN(rs_channels)(const int32_t *restrict x, int64_t n, int64_t nc,
                                             const int32_t *restrict mult, const uint32_t *restrict shift,
                                             const int64_t *restrict rpos, const int64_t *restrict rneg,
                                             const int64_t *restrict lim, int32_t ozp, int32_t lo, int32_t hi,
                                             int32_t *restrict y)
{
    uint32_t bad = 0;
    for (int64_t r = 0; r < n; r += nc) {
        const int32_t *restrict xr = x + r;
        int32_t *restrict yr = y + r;
        for (int64_t j = 0; j < nc; j++) {
            const int32_t v = xr[j];
            bad |= (uint32_t)(((int64_t)v < -lim[j]) | ((int64_t)v >= lim[j]));
            const int64_t t = (int64_t)tosac_scale32_core(v, mult[j], v >= 0 ? rpos[j] : rneg[j], shift[j]) + ozp;
            bad |= (uint32_t)((t < INT32_MIN) | (t > INT32_MAX));
            yr[j] = (int32_t)(t < lo ? lo : t > hi ? hi : t);
        }
    }
    return bad;
}
