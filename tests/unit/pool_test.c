/*
 * The runtime's thread pool (src/runtime/pool.c) on 1 to 4 workers: every index of every job runs
 * exactly once and on a worker number below the pool's count, for job sizes 0 to 300 back to back
 * (workers spinning) and after idle gaps (workers asleep); a job after a gap is joined by the
 * other worker (a lost wake-up would leave the caller alone: the test waits up to 10 s for it);
 * pools are destroyed right after create, while spinning and while asleep without hanging. Built
 * without TOSAC_THREADS every pool is the caller alone and only the coverage checks apply.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "harness/test.h"
#include "runtime/program.h"

#define MAX_N 300

typedef struct job {
    atomic_int hits[MAX_N];
    atomic_int bad_worker;
    uint32_t workers;
} job;

static void mark(void *ctx, uint32_t worker, size_t b, size_t e)
{
    job *j = ctx;
    if (worker >= j->workers) atomic_fetch_add(&j->bad_worker, 1);
    for (size_t i = b; i < e; i++) atomic_fetch_add(&j->hits[i], 1);
}

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Runs one job of n indices and checks that each ran once. */
static bool run_job(rt_pool *pl, size_t n)
{
    static job j;
    memset(&j, 0, sizeof j);
    j.workers = rt_pool_workers(pl);
    rt_pool_run(pl, mark, &j, n);
    bool ok = atomic_load(&j.bad_worker) == 0;
    for (size_t i = 0; i < MAX_N; i++) ok = ok && atomic_load(&j.hits[i]) == (i < n ? 1 : 0);
    return ok;
}

static void test_coverage(void)
{
    for (uint32_t w = 1; w <= 4; w++) {
        rt_pool *pl = NULL;
        EXPECT(rt_pool_create(w, &pl) == TOSAC_OK);
        EXPECT(rt_pool_workers(pl) == w || (!pl && rt_pool_workers(pl) == 1));
        int bad = 0;
        for (int r = 0; r < 3000; r++) bad += !run_job(pl, (size_t)(r * 7919) % (MAX_N + 1));
        for (int r = 0; r < 20; r++) { /* idle gaps: the workers go to sleep */
            pause_ms(r % 4 == 0 ? 5 : 0);
            bad += !run_job(pl, (size_t)(r * 37) % (MAX_N + 1));
        }
        EXPECT_EQ_I(bad, 0);
        rt_pool_destroy(pl);
    }
}

/* Every range waits (up to 10 s) until two different workers have taken one: with two indices
   and two workers that needs the other worker, woken by the job. */
static void wait_for_helper(void *ctx, uint32_t worker, size_t b, size_t e)
{
    atomic_uint *seen = ctx;
    (void)b, (void)e;
    atomic_fetch_or(seen, 1u << worker);
    for (double t0 = now_s(); atomic_load(seen) != 3u && now_s() - t0 < 10.0;) {
    }
}

static void test_wake_up(void)
{
    rt_pool *pl = NULL;
    EXPECT(rt_pool_create(2, &pl) == TOSAC_OK);
    if (rt_pool_workers(pl) < 2) { /* a build without threads */
        rt_pool_destroy(pl);
        return;
    }
    int alone = 0;
    for (int r = 0; r < 8; r++) {
        pause_ms(r % 2 ? 20 : 0); /* asleep, or spinning */
        atomic_uint seen;
        atomic_init(&seen, 0);
        rt_pool_run(pl, wait_for_helper, &seen, 2);
        alone += atomic_load(&seen) != 3u;
    }
    EXPECT_EQ_I(alone, 0);
    rt_pool_destroy(pl);
}

static void test_destroy(void)
{
    for (uint32_t w = 2; w <= 3; w++) {
        rt_pool *pl = NULL;
        EXPECT(rt_pool_create(w, &pl) == TOSAC_OK); /* at once, workers perhaps not started */
        rt_pool_destroy(pl);
        EXPECT(rt_pool_create(w, &pl) == TOSAC_OK); /* right after a job: spinning */
        EXPECT(run_job(pl, 50));
        rt_pool_destroy(pl);
        EXPECT(rt_pool_create(w, &pl) == TOSAC_OK); /* asleep */
        EXPECT(run_job(pl, 50));
        pause_ms(20);
        rt_pool_destroy(pl);
    }
    rt_pool_destroy(NULL);
}

int main(void)
{
    RUN(test_coverage);
    RUN(test_wake_up);
    RUN(test_destroy);
    return test_summary();
}
