/*
 * quant_math.h's reciprocal_scale (AVG_POOL2D) against the spec's formula evaluated here in int64:
 * the kernel form is a 32-bit long division (no 64-bit division on 32-bit targets), so every count
 * class up to INT32_MAX is compared with the plain int64 quotient.
 */
#include <stdint.h>

#include "harness/test.h"
#include "kernels/quant_math.h"

/* the spec: k = ceil(log2(count)), multiplier = ((1 << 30) + 1 << k) / count, shift = 30 + k */
static void spec_reciprocal(uint32_t count, int64_t *multiplier, int64_t *shift)
{
    int64_t k = 0;
    while (((int64_t)1 << k) < (int64_t)count) k++;
    *multiplier = ((((int64_t)1 << 30) + 1) << k) / (int64_t)count;
    *shift = 30 + k;
}

static int mismatch(uint32_t count)
{
    int32_t m, s;
    int64_t em, es;
    tosac_reciprocal_scale(count, &m, &s);
    spec_reciprocal(count, &em, &es);
    /* compared as 32 unsigned bits: for count 2^30 + 1 the spec's quotient is 2^31, beyond int32 (no
       AVG_POOL2D window at level 8K is that large; the kernel keeps the old int64 code's wrapped bits) */
    if ((uint32_t)m == (uint64_t)em && s == es) return 0;
    fprintf(stderr, "count %u: multiplier %d shift %d, spec %lld %lld\n", (unsigned)count, (int)m, (int)s,
            (long long)em, (long long)es);
    return 1;
}

static void test_reciprocal_scale(void)
{
    int bad = 0;
    for (uint32_t c = 1; c <= 70000 && bad < 8; c++) bad += mismatch(c); /* every window up to 264 x 264 */
    for (int b = 1; b < 31 && bad < 8; b++) /* both sides of every power of two */
        for (int64_t d = -3; d <= 3; d++)
            if (((int64_t)1 << b) + d >= 1) bad += mismatch((uint32_t)(((int64_t)1 << b) + d));
    for (uint64_t c = 70001; c <= INT32_MAX && bad < 8; c += c / 97 + 1) bad += mismatch((uint32_t)c);
    bad += mismatch(INT32_MAX);
    EXPECT_EQ_I(bad, 0);
}

int main(void)
{
    RUN(test_reciprocal_scale);
    return test_summary();
}
