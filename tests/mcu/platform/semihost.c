/*
 * Arm semihosting (BKPT 0xAB: operation in r0, argument block in r1) as QEMU implements it with
 * -semihosting-config enable=on,target=native, and the few newlib system calls a C program needs on
 * top of it: output to ":tt" (mode 4 opens stdout, 8 stderr), SYS_EXIT_EXTENDED with the exit code
 * QEMU returns (plain SYS_EXIT cannot carry one on 32-bit Arm), reading a host file (SYS_OPEN,
 * SYS_FLEN, SYS_READ), and a heap in the SSE-300 SRAM.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "mcu.h"

enum { SH_OPEN = 0x01, SH_CLOSE = 0x02, SH_WRITE = 0x05, SH_READ = 0x06, SH_FLEN = 0x0C, SH_EXIT_EXTENDED = 0x20 };
#define SH_APPLICATION_EXIT 0x20026u

static int32_t sh_call(int32_t op, const void *block)
{
    register int32_t r0 __asm("r0") = op;
    register const void *r1 __asm("r1") = block;
    __asm volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

static int32_t sh_handle[3] = {-1, -1, -1};

void mcu_write(int fd, const void *buf, size_t n)
{
    if (fd != 1 && fd != 2) fd = 2;
    if (sh_handle[fd] < 0) {
        const uintptr_t open[3] = {(uintptr_t)":tt", fd == 1 ? 4u : 8u, 3u};
        sh_handle[fd] = sh_call(SH_OPEN, open);
    }
    const uintptr_t wr[3] = {(uintptr_t)sh_handle[fd], (uintptr_t)buf, n};
    sh_call(SH_WRITE, wr);
}

void *mcu_read_file(const char *path, size_t *len)
{
    size_t n = 0;
    while (path[n]) n++;
    const uintptr_t open[3] = {(uintptr_t)path, 1u /* "rb" */, n};
    const int32_t h = sh_call(SH_OPEN, open);
    if (h < 0) return NULL;
    const uintptr_t flen[1] = {(uintptr_t)h};
    const int32_t size = sh_call(SH_FLEN, flen);
    uint8_t *buf = size >= 0 ? malloc((size_t)size + 1) : NULL;
    if (buf) {
        const uintptr_t rd[3] = {(uintptr_t)h, (uintptr_t)buf, (uintptr_t)size};
        if (sh_call(SH_READ, rd) != 0) free(buf), buf = NULL; /* returns the bytes not read */
    }
    sh_call(SH_CLOSE, flen);
    if (buf) *len = (size_t)size;
    return buf;
}

void mcu_exit(int code)
{
    const uintptr_t blk[2] = {SH_APPLICATION_EXIT, (uintptr_t)(uint32_t)code};
    for (;;) sh_call(SH_EXIT_EXTENDED, blk);
}

/* ---- newlib system calls ---- */
int _write(int fd, const char *buf, int n);
int _read(int fd, char *buf, int n);
int _close(int fd);
int _fstat(int fd, struct stat *st);
int _isatty(int fd);
int _lseek(int fd, int off, int whence);
void *_sbrk(ptrdiff_t inc);
void _exit(int code);
int _kill(int pid, int sig);
int _getpid(void);

int _write(int fd, const char *buf, int n)
{
    mcu_write(fd, buf, (size_t)n);
    return n;
}
int _read(int fd, char *buf, int n)
{
    (void)fd, (void)buf, (void)n;
    return 0;
}
int _close(int fd)
{
    (void)fd;
    return -1;
}
int _fstat(int fd, struct stat *st)
{
    (void)fd;
    st->st_mode = S_IFCHR; /* unbuffered-style line output for stdout */
    return 0;
}
int _isatty(int fd)
{
    (void)fd;
    return 1;
}
int _lseek(int fd, int off, int whence)
{
    (void)fd, (void)off, (void)whence;
    return 0;
}
void _exit(int code) { mcu_exit(code); }
int _kill(int pid, int sig)
{
    (void)pid, (void)sig;
    errno = EINVAL;
    return -1;
}
int _getpid(void) { return 1; }

extern uint8_t __heap_start[], __heap_end[];
void *_sbrk(ptrdiff_t inc)
{
    static uint8_t *brk = __heap_start;
    if (inc > __heap_end - brk) {
        errno = ENOMEM;
        return (void *)-1;
    }
    uint8_t *old = brk;
    brk += inc;
    return old;
}
