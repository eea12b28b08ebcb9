/*
 * The test platform of tosac's Cortex-M55 programs (QEMU mps3-an547): semihosting output, the
 * exit status QEMU returns, instruction-count markers and the stack high-water mark. printf and
 * friends of newlib-nano work too (their output goes to semihosting stdout).
 */
#ifndef TOSAC_MCU_H
#define TOSAC_MCU_H

#include <stddef.h>
#include <stdint.h>

/* Writes n bytes to QEMU's stdout (fd 1) or stderr (fd 2). */
void mcu_write(int fd, const void *buf, size_t n);
/* Reads a host file (path relative to QEMU's working directory) into a malloc'd buffer; NULL if it
   cannot. */
void *mcu_read_file(const char *path, size_t *len);
/* Ends the program: QEMU exits with `code` (0..255). */
_Noreturn void mcu_exit(int code);

/* Calls bracketing a measured region: tools/qemu_insn counts the instructions between them. The
   bodies are empty and never inlined, so each call is one translation block the plugin sees. */
void tosac_mark_begin(void);
void tosac_mark_end(void);

/* Bytes of the stack ever used since reset (the reset handler paints it). */
size_t mcu_stack_high_water(void);

/* A section in the 4 MiB SSE-300 SRAM for large buffers (model arenas, test tensors). */
#define MCU_SRAM __attribute__((section(".arena"), aligned(16)))

#endif
