/* The monotonic clock, for the step times of compile reports and the runtime's per-operator times
   (tosac_op_callback). A platform without CLOCK_MONOTONIC (bare-metal newlib) reads 0. */
#ifndef TOSAC_CORE_CLOCK_H
#define TOSAC_CORE_CLOCK_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds on CLOCK_MONOTONIC (0 where there is none or it fails). */
static inline uint64_t tosac_now_ns(void)
{
#ifdef CLOCK_MONOTONIC
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#else
    return 0;
#endif
}

/* Milliseconds on the same clock. */
static inline double tosac_now_ms(void) { return (double)tosac_now_ns() * 1e-6; }

#endif
