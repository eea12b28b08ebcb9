/*
 * The kernel tests' seeded random numbers (xorshift64): define RNG_SEED (nonzero) before including
 * this, so each test keeps its own reproducible sequence.
 */
#ifndef TOSAC_TEST_RNG_H
#define TOSAC_TEST_RNG_H

#include <stdint.h>

static uint64_t rng_state = RNG_SEED;

static inline uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    rng_state = x;
    return x;
}

/* Uniform in [lo, hi]. */
static inline int64_t rnd_in(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }
/* Uniform in [0, 1) with 53 random bits. */
static inline double rnd_unit(void) { return (double)(rnd() >> 11) * (1.0 / 9007199254740992.0); }

#endif
