/* The target lowering's table of names (include/tosac/quant.h TOSAC_QUANT_LOWERINGS): the names
   the CLI parses, the bits they set, and the list syntax (docs/QUANT.md "Target lowering"). */
#include <string.h>

#include "harness/test.h"
#include "tosac/quant.h"

static void test_names(void)
{
    uint32_t seen = 0;
    int named = 0;
    for (unsigned bit = 0; bit < 32; bit++) {
        const char *n = tosac_quant_lowering_name(1u << bit);
        if (!n) continue;
        named++;
        seen |= 1u << bit;
        EXPECT(tosac_quant_lowering_what(1u << bit) != NULL);
        for (unsigned other = 0; other < bit; other++) {
            const char *o = tosac_quant_lowering_name(1u << other);
            EXPECT(!o || strcmp(o, n) != 0);
        }
        uint32_t bits = 0;
        const char *bad = NULL;
        size_t bad_len = 0;
        EXPECT(tosac_quant_lowering_parse(n, &bits, &bad, &bad_len));
        EXPECT_EQ_I(bits, 1u << bit);
    }
    EXPECT_EQ_I(named, 10);
    EXPECT_EQ_I(seen, TOSAC_LOWER_ALL);
    EXPECT_STREQ(tosac_quant_lowering_name(TOSAC_LOWER_FC_AS_CONV2D), "fc-as-conv2d");
    EXPECT_STREQ(tosac_quant_lowering_name(TOSAC_LOWER_UPSAMPLE_1X1_BROADCAST), "upsample-1x1-broadcast");
    EXPECT(tosac_quant_lowering_name(0) == NULL);
    EXPECT(tosac_quant_lowering_name(TOSAC_LOWER_FC_AS_CONV2D | TOSAC_LOWER_GAP_AS_POOL) == NULL);
}

static void test_lists(void)
{
    uint32_t bits = 99;
    const char *bad = NULL;
    size_t bad_len = 0;
    EXPECT(tosac_quant_lowering_parse("fc-as-conv2d,gap-as-pool", &bits, &bad, &bad_len));
    EXPECT_EQ_I(bits, TOSAC_LOWER_FC_AS_CONV2D | TOSAC_LOWER_GAP_AS_POOL);
    EXPECT(tosac_quant_lowering_parse("all", &bits, &bad, &bad_len));
    EXPECT_EQ_I(bits, TOSAC_LOWER_ALL);
    EXPECT(tosac_quant_lowering_parse("all,none", &bits, &bad, &bad_len));
    EXPECT_EQ_I(bits, 0);
    EXPECT(tosac_quant_lowering_parse("none,dilated-center", &bits, &bad, &bad_len));
    EXPECT_EQ_I(bits, TOSAC_LOWER_DILATED_CENTER);
    EXPECT(tosac_quant_lowering_parse("", &bits, &bad, &bad_len));
    EXPECT_EQ_I(bits, 0);
    bits = 7;
    EXPECT(!tosac_quant_lowering_parse("gap-as-pool,gap-as-poo,all", &bits, &bad, &bad_len));
    EXPECT_EQ_I(bits, 7); /* untouched on error */
    EXPECT(bad_len == 10 && !strncmp(bad, "gap-as-poo", bad_len));
    EXPECT(!tosac_quant_lowering_parse("fc-as-conv2d,,gap-as-pool", &bits, &bad, &bad_len));
    EXPECT_EQ_I(bad_len, 0);
    EXPECT(!tosac_quant_lowering_parse("ALL", &bits, &bad, &bad_len));
}

int main(void)
{
    RUN(test_names);
    RUN(test_lists);
    return test_summary();
}
