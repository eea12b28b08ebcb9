/*
 * GATHER and SCATTER (TOSA.md §B.3 "Data movement"). Rows of C elements are moved with memcpy by
 * the execution element size, so every in_out_t (and precise-mode doubles) is handled alike.
 *
 * GATHER:  values[N,K,C], indices[N,W] (i32) -> output[N,W,C]; REQUIRE 0 <= index < K.
 * SCATTER: values_in[N,K,C], indices[N,W], input[N,W,C] -> values_out[N,K,C] = values_in with
 *          row input[n,w,:] written at [n, indices[n,w], :]; REQUIRE 0 <= index < K and that no
 *          (n, k) is written twice. The written-bitmap lives in scratch (N*K bits).
 * All indices are checked before anything is written, so a failing call leaves the output as it
 * was (the result is UNPREDICTABLE anyway).
 */
#include <string.h>

#include "kernels/kutil.h"

tosac_status tosac_kernel_gather(tosac_kcall *c)
{
    const tosac_ktensor *values = &c->in[0], *indices = &c->in[1], *out = &c->out[0];
    const size_t es = tosac_kelem_size(values);
    if (es == 0 || values->rank != 3 || indices->rank != 2 || indices->dtype != TOSAC_DTYPE_INT32)
        return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "GATHER: shapes or types");
    const int64_t N = values->shape[0], K = values->shape[1], C = values->shape[2], W = indices->shape[1];
    const int32_t *idx = (const int32_t *)indices->data;
    for (int64_t i = 0; i < N * W; i++)
        if (idx[i] < 0 || idx[i] >= K)
            return tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, "GATHER: index outside [0, K) (REQUIRE)");
    const size_t row = (size_t)C * es;
    const uint8_t *vp = (const uint8_t *)values->data;
    uint8_t *op = (uint8_t *)out->data;
    for (int64_t n = 0; n < N; n++) {
        const uint8_t *vb = vp + (size_t)(n * K) * row;
        const int32_t *ib = idx + n * W;
        for (int64_t w = 0; w < W; w++) {
            memcpy(op, vb + (size_t)ib[w] * row, row);
            op += row;
        }
    }
    return TOSAC_OK;
}

TOSAC_KERNEL_NO_PREPARE(gather)

/* Bytes of the N*K written-bitmap. */
static size_t kg_bitmap_bytes(const tosac_kcall *c)
{
    if (c->n_in < 1 || c->in[0].rank != 3) return 0;
    const uint64_t bits = (uint64_t)c->in[0].shape[0] * (uint64_t)c->in[0].shape[1];
    return (size_t)((bits + 7) / 8);
}

tosac_status tosac_kernel_scatter(tosac_kcall *c)
{
    const tosac_ktensor *vin = &c->in[0], *indices = &c->in[1], *input = &c->in[2], *out = &c->out[0];
    const size_t es = tosac_kelem_size(vin);
    if (es == 0 || vin->rank != 3 || indices->rank != 2 || input->rank != 3 || indices->dtype != TOSAC_DTYPE_INT32)
        return tosac_kfail(c, TOSAC_ERR_UNSUPPORTED, "SCATTER: shapes or types");
    const int64_t N = vin->shape[0], K = vin->shape[1], C = vin->shape[2], W = indices->shape[1];
    const size_t need = kg_bitmap_bytes(c);
    if (!c->scratch || c->scratch_size < need)
        return tosac_kfail(c, TOSAC_ERR_INTERNAL, "SCATTER: scratch smaller than scatter_scratch()");
    uint8_t *seen = (uint8_t *)c->scratch;
    memset(seen, 0, need);
    const int32_t *idx = (const int32_t *)indices->data;
    for (int64_t n = 0; n < N; n++)
        for (int64_t w = 0; w < W; w++) {
            const int32_t k = idx[n * W + w];
            if (k < 0 || k >= K)
                return tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, "SCATTER: index outside [0, K) (REQUIRE)");
            const uint64_t bit = (uint64_t)(n * K + k);
            const uint8_t m = (uint8_t)(1u << (bit & 7u));
            if (seen[bit >> 3] & m)
                return tosac_kfail(c, TOSAC_ERR_UNPREDICTABLE, "SCATTER: an output row is written twice (REQUIRE)");
            seen[bit >> 3] |= m;
        }
    const size_t row = (size_t)C * es;
    if (out->data != vin->data) memcpy(out->data, vin->data, (size_t)(N * K) * row);
    const uint8_t *ip = (const uint8_t *)input->data;
    uint8_t *op = (uint8_t *)out->data;
    for (int64_t n = 0; n < N; n++) {
        uint8_t *ob = op + (size_t)(n * K) * row;
        const int32_t *ib = idx + n * W;
        for (int64_t w = 0; w < W; w++) {
            memcpy(ob + (size_t)ib[w] * row, ip, row);
            ip += row;
        }
    }
    return TOSAC_OK;
}

static size_t scatter_scratch(const tosac_kcall *c) { return kg_bitmap_bytes(c); }

TOSAC_KERNEL_PREPARE_SCRATCH(scatter, scatter_scratch)
