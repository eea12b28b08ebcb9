/* The host's monotonic clock, for the step times of compile reports (not used by kernels or the
   device runtime). */
#ifndef TOSAC_CORE_CLOCK_H
#define TOSAC_CORE_CLOCK_H

#include <time.h>

/* Milliseconds on CLOCK_MONOTONIC. */
static inline double tosac_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

#endif
