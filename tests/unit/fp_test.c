/* Software float conversions: known bit patterns, every rounding boundary, exhaustive round trips. */
#include <float.h>
#include <math.h>
#include <stdint.h>

#include "core/fp.h"
#include "harness/test.h"

static float f32(uint32_t u) { return tosac_fp32_from_bits(u); }
static uint32_t b32(float f) { return tosac_fp32_bits(f); }

static int h_is_nan(uint16_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x03FFu) != 0; }
static int bf_is_nan(uint16_t h) { return (h & 0x7F80u) == 0x7F80u && (h & 0x007Fu) != 0; }
static int e4_is_nan(uint8_t b) { return (b & 0x7Fu) == 0x7Fu; }
static int e5_is_nan(uint8_t b) { return (b & 0x7Cu) == 0x7Cu && (b & 0x03u) != 0; }

static void test_fp16_known(void)
{
    EXPECT_EQ_I(tosac_fp32_to_fp16(0.0f), 0x0000);
    EXPECT_EQ_I(tosac_fp32_to_fp16(-0.0f), 0x8000);
    EXPECT_EQ_I(tosac_fp32_to_fp16(1.0f), 0x3C00);
    EXPECT_EQ_I(tosac_fp32_to_fp16(-2.0f), 0xC000);
    EXPECT_EQ_I(tosac_fp32_to_fp16(0.5f), 0x3800);
    EXPECT_EQ_I(tosac_fp32_to_fp16(0.1f), 0x2E66);
    EXPECT_EQ_I(tosac_fp32_to_fp16(3.14159265f), 0x4248);
    EXPECT_EQ_I(tosac_fp32_to_fp16(65504.0f), 0x7BFF);
    EXPECT_EQ_I(tosac_fp32_to_fp16(65519.0f), 0x7BFF);
    EXPECT_EQ_I(tosac_fp32_to_fp16(65520.0f), 0x7C00); /* tie between 65504 and 2^16: even = inf */
    EXPECT_EQ_I(tosac_fp32_to_fp16(-65520.0f), 0xFC00);
    EXPECT_EQ_I(tosac_fp32_to_fp16(1e9f), 0x7C00);
    EXPECT_EQ_I(tosac_fp32_to_fp16(FLT_MAX), 0x7C00);
    EXPECT_EQ_I(tosac_fp32_to_fp16(f32(0x7F800000u)), 0x7C00);
    EXPECT_EQ_I(tosac_fp32_to_fp16(f32(0xFF800000u)), 0xFC00);
    /* subnormals */
    EXPECT_EQ_I(tosac_fp32_to_fp16(ldexpf(1.0f, -24)), 0x0001);
    EXPECT_EQ_I(tosac_fp32_to_fp16(ldexpf(1.0f, -25)), 0x0000); /* tie: to even 0 */
    EXPECT_EQ_I(tosac_fp32_to_fp16(nextafterf(ldexpf(1.0f, -25), 1.0f)), 0x0001);
    EXPECT_EQ_I(tosac_fp32_to_fp16(-ldexpf(1.0f, -25)), 0x8000);
    EXPECT_EQ_I(tosac_fp32_to_fp16(ldexpf(3.0f, -25)), 0x0002); /* tie between 1 and 2 */
    EXPECT_EQ_I(tosac_fp32_to_fp16(ldexpf(5.0f, -25)), 0x0002); /* tie between 2 and 3 */
    EXPECT_EQ_I(tosac_fp32_to_fp16(ldexpf(1.0f, -14)), 0x0400);
    EXPECT_EQ_I(tosac_fp32_to_fp16(ldexpf(1023.0f, -24)), 0x03FF);
    EXPECT_EQ_I(tosac_fp32_to_fp16(ldexpf(2047.0f, -25)), 0x0400); /* max subnormal + half: up to normal */
    EXPECT_EQ_I(tosac_fp32_to_fp16(f32(0x00000001u)), 0x0000);
    EXPECT_EQ_I(tosac_fp32_to_fp16(1e-10f), 0x0000);
    /* ties in the normal range */
    EXPECT_EQ_I(tosac_fp32_to_fp16(1.0f + ldexpf(1.0f, -11)), 0x3C00);
    EXPECT_EQ_I(tosac_fp32_to_fp16(1.0f + ldexpf(3.0f, -11)), 0x3C02);
    EXPECT_EQ_I(tosac_fp32_to_fp16(1.0f + ldexpf(1.0f, -11) + ldexpf(1.0f, -23)), 0x3C01);
    EXPECT_EQ_I(tosac_fp32_to_fp16(2047.0f + 0.5f), 0x6800); /* 2047.5 -> 2048 (tie, even) */
    EXPECT_EQ_I(tosac_fp32_to_fp16(2049.0f), 0x6800);         /* tie between 2048 and 2050 */
    EXPECT_EQ_I(tosac_fp32_to_fp16(2051.0f), 0x6802);         /* tie between 2050 and 2052 */
    /* NaN: quiet, sign and top payload kept */
    EXPECT_EQ_I(tosac_fp32_to_fp16(f32(0x7FC00000u)), 0x7E00);
    EXPECT_EQ_I(tosac_fp32_to_fp16(f32(0xFFC00000u)), 0xFE00);
    EXPECT_EQ_I(tosac_fp32_to_fp16(f32(0x7F800001u)), 0x7E00); /* signalling, payload below fp16: quiet */
    EXPECT_EQ_I(tosac_fp32_to_fp16(f32(0x7FA00000u)), 0x7F00);
    EXPECT(h_is_nan(tosac_fp32_to_fp16(f32(0xFF800001u))));

    EXPECT_EQ_I(b32(tosac_fp16_to_fp32(0x3C00)), b32(1.0f));
    EXPECT_EQ_I(b32(tosac_fp16_to_fp32(0x8000)), 0x80000000u);
    EXPECT_EQ_I(b32(tosac_fp16_to_fp32(0x0001)), b32(ldexpf(1.0f, -24)));
    EXPECT_EQ_I(b32(tosac_fp16_to_fp32(0x03FF)), b32(ldexpf(1023.0f, -24)));
    EXPECT_EQ_I(b32(tosac_fp16_to_fp32(0x0400)), b32(ldexpf(1.0f, -14)));
    EXPECT_EQ_I(b32(tosac_fp16_to_fp32(0x7BFF)), b32(65504.0f));
    EXPECT_EQ_I(b32(tosac_fp16_to_fp32(0xC000)), b32(-2.0f));
    EXPECT_EQ_I(b32(tosac_fp16_to_fp32(0x7C00)), 0x7F800000u);
    EXPECT_EQ_I(b32(tosac_fp16_to_fp32(0xFC00)), 0xFF800000u);
    EXPECT_EQ_I(b32(tosac_fp16_to_fp32(0x7E00)), 0x7FC00000u);
    EXPECT_EQ_I(b32(tosac_fp16_to_fp32(0x7C01)), 0x7F802000u); /* NaN widened bit for bit */
}

static void test_bf16_known(void)
{
    EXPECT_EQ_I(tosac_fp32_to_bf16(1.0f), 0x3F80);
    EXPECT_EQ_I(tosac_fp32_to_bf16(-1.0f), 0xBF80);
    EXPECT_EQ_I(tosac_fp32_to_bf16(-0.0f), 0x8000);
    EXPECT_EQ_I(tosac_fp32_to_bf16(1.00390625f), 0x3F80); /* 1 + 2^-8: tie, even */
    EXPECT_EQ_I(tosac_fp32_to_bf16(1.01171875f), 0x3F82); /* 1 + 3*2^-8: tie, even */
    EXPECT_EQ_I(tosac_fp32_to_bf16(f32(0x3F808001u)), 0x3F81);
    EXPECT_EQ_I(tosac_fp32_to_bf16(f32(0x3F807FFFu)), 0x3F80);
    EXPECT_EQ_I(tosac_fp32_to_bf16(3.14159265f), 0x4049);
    EXPECT_EQ_I(tosac_fp32_to_bf16(f32(0x7F7F7FFFu)), 0x7F7F);
    EXPECT_EQ_I(tosac_fp32_to_bf16(f32(0x7F7F8000u)), 0x7F80); /* tie at the top: to inf (even) */
    EXPECT_EQ_I(tosac_fp32_to_bf16(FLT_MAX), 0x7F80);
    EXPECT_EQ_I(tosac_fp32_to_bf16(-FLT_MAX), 0xFF80);
    EXPECT_EQ_I(tosac_fp32_to_bf16(f32(0x7F800000u)), 0x7F80);
    EXPECT_EQ_I(tosac_fp32_to_bf16(f32(0x00000001u)), 0x0000);
    EXPECT_EQ_I(tosac_fp32_to_bf16(f32(0x00008000u)), 0x0000); /* subnormal tie, even */
    EXPECT_EQ_I(tosac_fp32_to_bf16(f32(0x00018000u)), 0x0002);
    EXPECT_EQ_I(tosac_fp32_to_bf16(f32(0x00010000u)), 0x0001);
    EXPECT_EQ_I(tosac_fp32_to_bf16(f32(0x7FC00000u)), 0x7FC0);
    EXPECT_EQ_I(tosac_fp32_to_bf16(f32(0xFFC00000u)), 0xFFC0);
    EXPECT_EQ_I(tosac_fp32_to_bf16(f32(0x7F800001u)), 0x7FC0); /* would round to inf without the check */
    EXPECT_EQ_I(tosac_fp32_to_bf16(f32(0x7FFFFFFFu)), 0x7FFF);
    EXPECT_EQ_I(b32(tosac_bf16_to_fp32(0x3F80)), b32(1.0f));
    EXPECT_EQ_I(b32(tosac_bf16_to_fp32(0x0001)), 0x00010000u);
    EXPECT_EQ_I(b32(tosac_bf16_to_fp32(0xFF80)), 0xFF800000u);
    EXPECT_EQ_I(b32(tosac_bf16_to_fp32(0x7FC1)), 0x7FC10000u);
}

static void test_fp8_known(void)
{
    /* E4M3FN */
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(0.0f), 0x00);
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(-0.0f), 0x80);
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(1.0f), 0x38);
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(-1.5f), 0xBC);
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(256.0f), 0x78);
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(448.0f), 0x7E);
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(-448.0f), 0xFE);
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(464.0f), 0x7E); /* tie between 448 and (NaN slot) 480: even */
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(464.5f), 0x7F); /* overflow: NaN (non-saturating) */
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(480.0f), 0x7F);
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(-1e6f), 0xFF);
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(f32(0x7F800000u)), 0x7F);
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(f32(0xFF800000u)), 0xFF);
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(f32(0x7FC00000u)), 0x7F);
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(f32(0xFFC00001u)), 0xFF);
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(ldexpf(1.0f, -6)), 0x08);  /* min normal */
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(ldexpf(7.0f, -9)), 0x07);  /* max subnormal */
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(ldexpf(1.0f, -9)), 0x01);  /* min subnormal */
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(ldexpf(1.0f, -10)), 0x00); /* tie, even */
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(ldexpf(3.0f, -10)), 0x02); /* tie between 1 and 2 */
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(ldexpf(15.0f, -10)), 0x08); /* tie between 7 and 8: even, normal */
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(1.0625f), 0x38);           /* tie between 1 and 1.125 */
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3(1.1875f), 0x3A);           /* tie between 1.125 and 1.25 */
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3_sat(1e6f), 0x7E);
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3_sat(-1e6f), 0xFE);
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3_sat(f32(0x7F800000u)), 0x7E);
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3_sat(f32(0x7FC00000u)), 0x7F);
    EXPECT_EQ_I(tosac_fp32_to_fp8e4m3_sat(3.0f), 0x44);
    EXPECT_EQ_I(b32(tosac_fp8e4m3_to_fp32(0x7E)), b32(448.0f));
    EXPECT_EQ_I(b32(tosac_fp8e4m3_to_fp32(0xFE)), b32(-448.0f));
    EXPECT_EQ_I(b32(tosac_fp8e4m3_to_fp32(0x78)), b32(256.0f));
    EXPECT_EQ_I(b32(tosac_fp8e4m3_to_fp32(0x38)), b32(1.0f));
    EXPECT_EQ_I(b32(tosac_fp8e4m3_to_fp32(0x01)), b32(ldexpf(1.0f, -9)));
    EXPECT_EQ_I(b32(tosac_fp8e4m3_to_fp32(0x07)), b32(ldexpf(7.0f, -9)));
    EXPECT_EQ_I(b32(tosac_fp8e4m3_to_fp32(0x80)), 0x80000000u);
    EXPECT_EQ_I(b32(tosac_fp8e4m3_to_fp32(0x7F)), 0x7FC00000u);
    EXPECT_EQ_I(b32(tosac_fp8e4m3_to_fp32(0xFF)), 0xFFC00000u);

    /* E5M2 */
    EXPECT_EQ_I(tosac_fp32_to_fp8e5m2(1.0f), 0x3C);
    EXPECT_EQ_I(tosac_fp32_to_fp8e5m2(-2.0f), 0xC0);
    EXPECT_EQ_I(tosac_fp32_to_fp8e5m2(57344.0f), 0x7B);
    EXPECT_EQ_I(tosac_fp32_to_fp8e5m2(61439.0f), 0x7B);
    EXPECT_EQ_I(tosac_fp32_to_fp8e5m2(61440.0f), 0x7C); /* tie between max and 2^16: even = inf */
    EXPECT_EQ_I(tosac_fp32_to_fp8e5m2(1e6f), 0x7C);
    EXPECT_EQ_I(tosac_fp32_to_fp8e5m2(-1e6f), 0xFC);
    EXPECT_EQ_I(tosac_fp32_to_fp8e5m2(f32(0x7F800000u)), 0x7C);
    EXPECT_EQ_I(tosac_fp32_to_fp8e5m2(f32(0xFF800000u)), 0xFC);
    EXPECT_EQ_I(tosac_fp32_to_fp8e5m2(f32(0x7FC00000u)), 0x7E);
    EXPECT_EQ_I(tosac_fp32_to_fp8e5m2(f32(0xFFC00000u)), 0xFE);
    EXPECT(e5_is_nan(tosac_fp32_to_fp8e5m2(f32(0x7F800001u))));
    EXPECT_EQ_I(tosac_fp32_to_fp8e5m2(ldexpf(1.0f, -16)), 0x01);
    EXPECT_EQ_I(tosac_fp32_to_fp8e5m2(ldexpf(1.0f, -17)), 0x00);
    EXPECT_EQ_I(tosac_fp32_to_fp8e5m2(ldexpf(3.0f, -17)), 0x02);
    EXPECT_EQ_I(tosac_fp32_to_fp8e5m2(ldexpf(1.0f, -14)), 0x04);
    EXPECT_EQ_I(tosac_fp32_to_fp8e5m2(1.125f), 0x3C); /* tie between 1 and 1.25 */
    EXPECT_EQ_I(tosac_fp32_to_fp8e5m2(1.375f), 0x3E); /* tie between 1.25 and 1.5 */
    EXPECT_EQ_I(tosac_fp32_to_fp8e5m2_sat(1e6f), 0x7B);
    EXPECT_EQ_I(tosac_fp32_to_fp8e5m2_sat(f32(0xFF800000u)), 0xFB);
    EXPECT(e5_is_nan(tosac_fp32_to_fp8e5m2_sat(f32(0x7FC00000u))));
    EXPECT_EQ_I(b32(tosac_fp8e5m2_to_fp32(0x7B)), b32(57344.0f));
    EXPECT_EQ_I(b32(tosac_fp8e5m2_to_fp32(0x7C)), 0x7F800000u);
    EXPECT_EQ_I(b32(tosac_fp8e5m2_to_fp32(0xFC)), 0xFF800000u);
    EXPECT_EQ_I(b32(tosac_fp8e5m2_to_fp32(0x7E)), 0x7FC00000u);
    EXPECT_EQ_I(b32(tosac_fp8e5m2_to_fp32(0x7D)), 0x7FA00000u);
    EXPECT_EQ_I(b32(tosac_fp8e5m2_to_fp32(0x01)), b32(ldexpf(1.0f, -16)));
    EXPECT_EQ_I(b32(tosac_fp8e5m2_to_fp32(0x03)), b32(ldexpf(3.0f, -16)));
    EXPECT_EQ_I(b32(tosac_fp8e5m2_to_fp32(0x3C)), b32(1.0f));
}

static void test_fp64_known(void)
{
    /* Single rounding: going through fp32 first would land on the tie and round down. */
    double x = 1.0 + ldexp(1.0, -11) + ldexp(1.0, -40);
    EXPECT_EQ_I(tosac_fp64_to_fp16(x), 0x3C01);
    EXPECT_EQ_I(tosac_fp32_to_fp16(tosac_fp64_to_fp32(x)), 0x3C00);
    EXPECT_EQ_I(tosac_fp64_to_bf16(1.0 + ldexp(1.0, -8) + ldexp(1.0, -30)), 0x3F81);
    EXPECT_EQ_I(tosac_fp64_to_bf16(1.0 + ldexp(1.0, -8)), 0x3F80);
    EXPECT_EQ_I(tosac_fp64_to_fp8e4m3(448.0), 0x7E);
    EXPECT_EQ_I(tosac_fp64_to_fp8e4m3(1.0 + ldexp(1.0, -4) + ldexp(1.0, -40)), 0x39);
    EXPECT_EQ_I(tosac_fp64_to_fp8e4m3(1e300), 0x7F);
    EXPECT_EQ_I(tosac_fp64_to_fp8e5m2(1.0 + ldexp(1.0, -3) + ldexp(1.0, -40)), 0x3D);
    EXPECT_EQ_I(tosac_fp64_to_fp8e5m2(-1e300), 0xFC);
    EXPECT_EQ_I(tosac_fp64_to_fp16(65504.0), 0x7BFF);
    EXPECT_EQ_I(tosac_fp64_to_fp16(65520.0), 0x7C00);
    EXPECT_EQ_I(tosac_fp64_to_fp16(65519.999999), 0x7BFF);
    EXPECT_EQ_I(tosac_fp64_to_fp16(ldexp(1.0, -25) * (1.0 + ldexp(1.0, -52))), 0x0001);
    EXPECT_EQ_I(tosac_fp64_to_fp16(DBL_MIN), 0x0000);
    EXPECT_EQ_I(tosac_fp64_to_fp16(-DBL_MIN / 4), 0x8000); /* fp64 subnormal */
    EXPECT_EQ_I(tosac_fp64_to_fp16(tosac_fp64_from_bits(UINT64_C(0x7FF8000000000000))), 0x7E00);
    EXPECT(h_is_nan(tosac_fp64_to_fp16(tosac_fp64_from_bits(UINT64_C(0x7FF0000000000001)))));

    EXPECT_EQ_I(b32(tosac_fp64_to_fp32(1.0)), 0x3F800000u);
    EXPECT_EQ_I(b32(tosac_fp64_to_fp32(-0.0)), 0x80000000u);
    EXPECT_EQ_I(b32(tosac_fp64_to_fp32(0.1)), 0x3DCCCCCDu);
    EXPECT_EQ_I(b32(tosac_fp64_to_fp32(1.0 + ldexp(1.0, -24))), 0x3F800000u);
    EXPECT_EQ_I(b32(tosac_fp64_to_fp32(1.0 + ldexp(3.0, -24))), 0x3F800002u);
    EXPECT_EQ_I(b32(tosac_fp64_to_fp32(1.0 + ldexp(1.0, -24) + ldexp(1.0, -50))), 0x3F800001u);
    EXPECT_EQ_I(b32(tosac_fp64_to_fp32((double)FLT_MAX)), 0x7F7FFFFFu);
    EXPECT_EQ_I(b32(tosac_fp64_to_fp32(DBL_MAX)), 0x7F800000u);
    EXPECT_EQ_I(b32(tosac_fp64_to_fp32(-DBL_MAX)), 0xFF800000u);
    EXPECT_EQ_I(b32(tosac_fp64_to_fp32(ldexp(1.0, 128) - ldexp(1.0, 103))), 0x7F800000u); /* tie: inf */
    EXPECT_EQ_I(b32(tosac_fp64_to_fp32(ldexp(1.0, 128) - ldexp(1.0, 103) - ldexp(1.0, 80))), 0x7F7FFFFFu);
    EXPECT_EQ_I(b32(tosac_fp64_to_fp32(ldexp(1.0, -149))), 0x00000001u);
    EXPECT_EQ_I(b32(tosac_fp64_to_fp32(ldexp(1.0, -150))), 0x00000000u);
    EXPECT_EQ_I(b32(tosac_fp64_to_fp32(ldexp(3.0, -150))), 0x00000002u);
    EXPECT_EQ_I(b32(tosac_fp64_to_fp32(ldexp(1.0, -150) * (1.0 + ldexp(1.0, -52)))), 0x00000001u);
    EXPECT_EQ_I(b32(tosac_fp64_to_fp32(1e-50)), 0x00000000u);
    EXPECT_EQ_I(b32(tosac_fp64_to_fp32(ldexp(1.0, -126))), 0x00800000u);
    EXPECT_EQ_I(b32(tosac_fp64_to_fp32(tosac_fp64_from_bits(UINT64_C(0xFFF8000000000000)))), 0xFFC00000u);
    EXPECT_EQ_I(b32(tosac_fp64_to_fp32(tosac_fp64_from_bits(UINT64_C(0x7FF4000000000000)))), 0x7FE00000u);
}

/* Every non-NaN pattern survives narrow(widen(x)); NaNs stay NaN with their sign. */
static void test_exhaustive_roundtrip(void)
{
    int bad16 = 0, bad16d = 0, badbf = 0, bad43 = 0, bad52 = 0;
    for (uint32_t i = 0; i <= 0xFFFFu; i++) {
        uint16_t h = (uint16_t)i;
        float f = tosac_fp16_to_fp32(h);
        uint16_t r = tosac_fp32_to_fp16(f);
        uint16_t rd = tosac_fp64_to_fp16((double)f);
        if (h_is_nan(h)) {
            if (!h_is_nan(r) || (r & 0x8000u) != (h & 0x8000u) || isnan(f) == 0) bad16++;
            if (!h_is_nan(rd)) bad16d++;
        } else {
            if (r != h && bad16++ < 5) fprintf(stderr, "fp16 0x%04X -> 0x%04X\n", h, r);
            if (rd != h) bad16d++;
        }
        float g = tosac_bf16_to_fp32(h);
        uint16_t rb = tosac_fp32_to_bf16(g);
        uint16_t rbd = tosac_fp64_to_bf16((double)g);
        if (bf_is_nan(h)) {
            if (!bf_is_nan(rb) || (rb & 0x8000u) != (h & 0x8000u)) badbf++;
        } else if (rb != h || rbd != h) {
            if (badbf++ < 5) fprintf(stderr, "bf16 0x%04X -> 0x%04X / 0x%04X\n", h, rb, rbd);
        }
    }
    for (uint32_t i = 0; i <= 0xFFu; i++) {
        uint8_t b = (uint8_t)i;
        float f = tosac_fp8e4m3_to_fp32(b);
        uint8_t r = tosac_fp32_to_fp8e4m3(f), rs = tosac_fp32_to_fp8e4m3_sat(f), rd = tosac_fp64_to_fp8e4m3(f);
        if (e4_is_nan(b)) {
            if (!isnan(f) || r != b || rs != b || rd != b) bad43++;
        } else if (r != b || rs != b || rd != b || isnan(f) || isinf(f)) {
            if (bad43++ < 5) fprintf(stderr, "e4m3 0x%02X -> 0x%02X\n", b, r);
        }
        f = tosac_fp8e5m2_to_fp32(b);
        r = tosac_fp32_to_fp8e5m2(f);
        rd = tosac_fp64_to_fp8e5m2(f);
        if (e5_is_nan(b)) {
            if (!isnan(f) || !e5_is_nan(r) || (r & 0x80u) != (b & 0x80u)) bad52++;
        } else if (r != b || rd != b) {
            if (bad52++ < 5) fprintf(stderr, "e5m2 0x%02X -> 0x%02X\n", b, r);
        }
    }
    EXPECT_EQ_I(bad16, 0);
    EXPECT_EQ_I(bad16d, 0);
    EXPECT_EQ_I(badbf, 0);
    EXPECT_EQ_I(bad43, 0);
    EXPECT_EQ_I(bad52, 0);
}

/*
 * Every rounding boundary: for consecutive non-negative finite values a < b of a format (and, past
 * the largest finite value, the next power of two), the exact midpoint goes to the even one and the
 * fp32 values just below/above it go to a/b. Checked for both signs.
 */
typedef float (*widen_fn)(uint32_t);
typedef uint32_t (*narrow_fn)(float);
static float w16(uint32_t b) { return tosac_fp16_to_fp32((uint16_t)b); }
static float wbf(uint32_t b) { return tosac_bf16_to_fp32((uint16_t)b); }
static float w43(uint32_t b) { return tosac_fp8e4m3_to_fp32((uint8_t)b); }
static float w52(uint32_t b) { return tosac_fp8e5m2_to_fp32((uint8_t)b); }
static uint32_t n16(float f) { return tosac_fp32_to_fp16(f); }
static uint32_t nbf(float f) { return tosac_fp32_to_bf16(f); }
static uint32_t n43(float f) { return tosac_fp32_to_fp8e4m3(f); }
static uint32_t n52(float f) { return tosac_fp32_to_fp8e5m2(f); }
static uint32_t n16d(float f) { return tosac_fp64_to_fp16((double)f); }
static uint32_t nbfd(float f) { return tosac_fp64_to_bf16((double)f); }
static uint32_t n43d(float f) { return tosac_fp64_to_fp8e4m3((double)f); }
static uint32_t n52d(float f) { return tosac_fp64_to_fp8e5m2((double)f); }

static int check_boundaries(const char *what, widen_fn w, narrow_fn n, uint32_t maxfin, unsigned signbit,
                            float top_mid)
{
    int bad = 0;
    for (uint32_t a = 0; a <= maxfin; a++) {
        /* Above the largest finite value the next step is inf (or NaN for E4M3): pattern maxfin+1. */
        const uint32_t up = a + 1;
        const float fa = w(a);
        /* Exact: the midpoint needs one more significand bit than the format has. */
        const float mid = a == maxfin ? top_mid : fa + (w(up) - fa) / 2;
        const uint32_t even = (a & 1u) ? up : a;
        for (int s = 0; s < 2; s++) {
            const float sg = s ? -1.0f : 1.0f;
            const uint32_t sb = s ? signbit : 0;
            uint32_t got_mid = n(sg * mid), got_lo = n(sg * nextafterf(mid, 0.0f)),
                     got_hi = n(sg * nextafterf(mid, INFINITY)), got_a = n(sg * fa);
            if (got_mid != (even | sb) || got_lo != (a | sb) || got_hi != (up | sb) || got_a != (a | sb)) {
                if (bad++ < 5)
                    fprintf(stderr, "%s: a=0x%X sign=%d: mid->0x%X (want 0x%X) lo->0x%X hi->0x%X\n", what, a, s,
                            got_mid, even | sb, got_lo, got_hi);
            }
        }
    }
    return bad;
}

static void test_rounding_boundaries(void)
{
    const float bf_top = f32(0x7F7F8000u); /* halfway between 0x7F7F and 2^128 */
    EXPECT_EQ_I(check_boundaries("fp16", w16, n16, 0x7BFF, 0x8000, 65520.0f), 0);
    EXPECT_EQ_I(check_boundaries("fp16/64", w16, n16d, 0x7BFF, 0x8000, 65520.0f), 0);
    EXPECT_EQ_I(check_boundaries("bf16", wbf, nbf, 0x7F7F, 0x8000, bf_top), 0);
    EXPECT_EQ_I(check_boundaries("bf16/64", wbf, nbfd, 0x7F7F, 0x8000, bf_top), 0);
    EXPECT_EQ_I(check_boundaries("e4m3", w43, n43, 0x7E, 0x80, 464.0f), 0);
    EXPECT_EQ_I(check_boundaries("e4m3/64", w43, n43d, 0x7E, 0x80, 464.0f), 0);
    EXPECT_EQ_I(check_boundaries("e5m2", w52, n52, 0x7B, 0x80, 61440.0f), 0);
    EXPECT_EQ_I(check_boundaries("e5m2/64", w52, n52d, 0x7B, 0x80, 61440.0f), 0);
}

static uint64_t rng_state = UINT64_C(0x9E3779B97F4A7C15);
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Independent oracles where the platform has them (IEEE hardware conversions in RNE mode). */
static void test_against_hardware(void)
{
#if defined(__STDC_IEC_559__)
    int bad = 0;
    for (int i = 0; i < 2000000; i++) {
        uint64_t u = rng();
        if (i & 1) { /* bias towards the fp32 range, including subnormals and overflow */
            uint64_t e = 1023 - 160 + (u >> 52) % 300;
            u = (u & UINT64_C(0x800FFFFFFFFFFFFF)) | (e << 52);
        }
        double dv = tosac_fp64_from_bits(u);
        if (isnan(dv)) continue;
        float want = (float)dv, got = tosac_fp64_to_fp32(dv);
        if (b32(want) != b32(got) && bad++ < 5)
            fprintf(stderr, "fp64 %a -> %a, hardware %a\n", dv, (double)got, (double)want);
    }
    EXPECT_EQ_I(bad, 0);
#endif
#if defined(__FLT16_MAX__)
    int bad16 = 0, badw = 0;
    for (uint64_t u = 0; u <= 0xFFFFFFFFu; u += 251) {
        float f = f32((uint32_t)u);
        if (isnan(f)) continue;
        _Float16 h = (_Float16)f;
        uint16_t hb;
        memcpy(&hb, &h, 2);
        uint16_t got = tosac_fp32_to_fp16(f);
        if (got != hb && bad16++ < 5) fprintf(stderr, "fp16 of 0x%08X: 0x%04X, _Float16 0x%04X\n", (unsigned)u, got, hb);
    }
    for (uint32_t i = 0; i <= 0xFFFFu; i++) {
        uint16_t hb = (uint16_t)i;
        _Float16 h;
        memcpy(&h, &hb, 2);
        if (isnan((float)h)) continue;
        if (b32((float)h) != b32(tosac_fp16_to_fp32(hb))) badw++;
    }
    EXPECT_EQ_I(bad16, 0);
    EXPECT_EQ_I(badw, 0);
#endif
}

int main(void)
{
    RUN(test_fp16_known);
    RUN(test_bf16_known);
    RUN(test_fp8_known);
    RUN(test_fp64_known);
    RUN(test_exhaustive_roundtrip);
    RUN(test_rounding_boundaries);
    RUN(test_against_hardware);
    return test_summary();
}
