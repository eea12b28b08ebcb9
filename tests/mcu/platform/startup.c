/*
 * Reset and fault handling for mps3-an547: the vector table (ITCM address 0), a reset handler that
 * turns on the FPU and MVE (CP10/CP11: the first FP or vector instruction faults otherwise), sets the
 * stack limit, copies .data from its load image, zeroes .bss and paints the unused stack so the
 * high-water mark can be measured, then calls main and exits with its result.
 */
#include <stdint.h>
#include <string.h>

#include "mcu.h"

extern uint32_t __data_start[], __data_end[], __data_load[], __bss_start[], __bss_end[];
extern uint32_t __stack_limit[], __stack_top[];
int main(void);

#define MCU_PAINT 0x5AA5C33Cu
#define SCB_CPACR (*(volatile uint32_t *)0xE000ED88u)
#define SCB_CFSR (*(volatile uint32_t *)0xE000ED28u)
#define SCB_HFSR (*(volatile uint32_t *)0xE000ED2Cu)

/* No stack frame may outlive the painting: the reset handler itself uses only registers and a
   few words, and calls main after it. */
_Noreturn void mcu_reset(void);
void mcu_reset(void)
{
    SCB_CPACR |= 0xFu << 20; /* CP10, CP11: full access */
    __asm volatile("dsb\n isb" ::: "memory");
    __asm volatile("msr msplim, %0" ::"r"(__stack_limit));
    for (uint32_t *s = __data_load, *d = __data_start; d < __data_end;) *d++ = *s++;
    for (uint32_t *d = __bss_start; d < __bss_end;) *d++ = 0;
    uint32_t *sp;
    __asm volatile("mov %0, sp" : "=r"(sp));
    for (volatile uint32_t *d = __stack_limit; d < sp - 16;) *d++ = MCU_PAINT;
    mcu_exit(main());
}

size_t mcu_stack_high_water(void)
{
    const uint32_t *p = __stack_limit;
    while (p < __stack_top && *p == MCU_PAINT) p++;
    return (size_t)((const uint8_t *)__stack_top - (const uint8_t *)p);
}

/* Any fault: report the fault status and the stacked PC, stop with exit status 70 (never a pass).
   Formatted here and written raw: no printf in every image that links the startup code. */
__attribute__((used)) static void mcu_fault_report(const uint32_t *frame)
{
    char msg[] = "mcu: fault CFSR=0x........ HFSR=0x........ near PC=0x........\n";
    const uint32_t v[3] = {SCB_CFSR, SCB_HFSR, frame[6]};
    char *p = msg;
    for (int k = 0; k < 3; k++) {
        while (*p != '.') p++;
        for (int i = 0; i < 8; i++) *p++ = "0123456789abcdef"[(v[k] >> (28 - 4 * i)) & 15u];
    }
    mcu_write(2, msg, sizeof msg - 1);
    mcu_exit(70);
}
/* the exception frame is where the MSP points on entry, before any prologue moves it */
__attribute__((naked)) static void mcu_fault(void) { __asm volatile("mrs r0, msp\n b mcu_fault_report"); }

__attribute__((noinline)) void tosac_mark_begin(void) { __asm volatile("" ::: "memory"); }
__attribute__((noinline)) void tosac_mark_end(void) { __asm volatile("" ::: "memory"); }

typedef void (*mcu_vector)(void);
/* initial stack pointer, reset, then NMI, HardFault, MemManage, BusFault, UsageFault, SecureFault */
__attribute__((section(".vectors"), used)) static const mcu_vector mcu_vectors[16] = {
    (mcu_vector)(uintptr_t)__stack_top, mcu_reset, mcu_fault, mcu_fault, mcu_fault, mcu_fault, mcu_fault, mcu_fault,
};
