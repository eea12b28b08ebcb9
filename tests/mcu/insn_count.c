/* Regions of known instruction counts for tools/qemu_insn (tests/mcu/insn_count.sh checks them):
   an empty region, 1000 NOPs, and a loop of 100 iterations of 3 instructions (subs, nop, bne). */
#include "mcu.h"

int main(void)
{
    tosac_mark_begin();
    tosac_mark_end();

    tosac_mark_begin();
    __asm volatile(".rept 1000\n nop\n .endr");
    tosac_mark_end();

    tosac_mark_begin();
    __asm volatile("movs r0, #100\n"
                   "1: subs r0, r0, #1\n nop\n bne 1b" ::: "r0", "cc");
    tosac_mark_end();
    return 0;
}
