/* Platform smoke test: printf through semihosting, arithmetic checked against closed forms, an MVE
   dot product against a scalar loop (MVE must be enabled by the reset handler), exit status 0. */
#include <arm_mve.h>
#include <stdio.h>

#include "mcu.h"

static int8_t xa[1000], xb[1000];

int main(void)
{
    int fails = 0;
    /* sum of i^2 over 0..999 = 999 * 1000 * 1999 / 6 */
    volatile uint32_t n = 1000;
    uint32_t s = 0;
    for (uint32_t i = 0; i < n; i++) s += i * i;
    if (s != 332833500u) fails++, printf("sum of squares %lu\n", (unsigned long)s);

    int32_t ref = 0;
    for (int i = 0; i < 1000; i++) {
        xa[i] = (int8_t)(i * 37 % 256 - 128), xb[i] = (int8_t)(i * 11 % 256 - 128);
        ref += xa[i] * xb[i];
    }
    int32_t acc = 0;
    for (int i = 0; i < 1000; i += 16) {
        mve_pred16_t p = vctp8q((uint32_t)(1000 - i));
        acc = vmladavaq_p_s8(acc, vld1q_z_s8(xa + i, p), vld1q_z_s8(xb + i, p), p);
    }
    if (acc != ref) fails++, printf("mve dot %ld != %ld\n", (long)acc, (long)ref);
    size_t hw = mcu_stack_high_water();
    if (hw == 0 || hw > 16384) fails++, printf("stack high water %u\n", (unsigned)hw);
    printf("mcu smoke: %s (stack %u bytes)\n", fails ? "FAIL" : "ok", (unsigned)hw);
    return fails ? 1 : 0;
}
