/*
 * The runtime's thread pool: the parallel-for that kernels receive as tosac_kcall.par
 * (kernels/kernel.h). The only file of the library that uses threads.
 *
 * A pool of T workers is the invoking thread (worker 0) and T-1 pthreads started at program
 * create. rt_pool_run publishes one job (fn, ctx, n) under a new generation number; a worker that
 * wakes joins it (counted in `state`) while it is open and takes ranges until none are left. The
 * caller takes ranges too, then closes the job and returns once the workers that joined have
 * finished (the job's context lives on the caller's stack); a worker that wakes late (a busy
 * machine) finds the job closed and does not hold the caller up. Which worker runs which range
 * changes from run to run; kernels make the results independent of that (disjoint output tiles,
 * never a split reduction).
 *
 * Ranges: [0, n) is cut into one segment per worker, each with its own counter; a worker takes
 * ranges of its own segment first, then those left in the others (the next worker's first). A
 * range is an eighth of the segment, or 1/(2T) of what is left of it when that is less, so that
 * the last ranges taken are short and no worker waits long for another's (a compare-and-swap). The
 * tasks of consecutive kernels are their output tiles in order (pixel blocks, rows), so each
 * worker mostly reads what it wrote itself in the kernel before, from its own cache: with one
 * shared counter about half of every small model's activations crossed between the cores at each
 * operator (a round trip between two cores of this virtual machine takes 300 ns). A worker that
 * does not come leaves its segment to the others.
 *
 * Waiting: a worker spins on the generation for RT_POOL_SPIN_NS (a kernel call follows the previous
 * one within microseconds), then sleeps on a condition variable, so an idle program costs no CPU on
 * a shared machine. It counts itself in `sleepers` first; a job wakes the pool (mutex, broadcast: a
 * system call) only when that count is nonzero and resets it, so the kernel calls of an invoke,
 * while the workers spin, cost a few atomic operations each, and a worker that was woken but has
 * not run yet (a busy machine) is not woken again for every following job. Built without TOSAC_THREADS
 * (microcontrollers) every pool has one worker and no thread.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/clock.h"
#include "runtime/program.h"

#ifdef TOSAC_THREADS
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

/* How long a worker spins on the generation before sleeping, and the caller on the workers still
   in its job: longer than the gap between two kernel calls and than the caller's usual work
   between two invokes (writing the inputs: tens of microseconds), since waking a sleeping worker
   costs the caller a system call and the worker tens of microseconds on a virtual machine, where
   it then finds the first kernel of the invoke nearly done; short enough that an idle program soon
   costs no CPU. In time, not in pauses: a pause takes 10 to 300 ns depending on the CPU and the
   hypervisor. */
#define RT_POOL_SPIN_NS 500000u
#define POOL_CLOSED 0x80000000u

struct rt_pool {
    uint32_t workers;
    pthread_t *threads; /* workers - 1 */
    uint32_t started;
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    /* the job of the current generation */
    tosac_ktask_fn fn;
    void *ctx;
    struct {
        atomic_size_t next; /* first index not yet taken */
        size_t end, grain;
        char pad[64 - 3 * sizeof(size_t)]; /* one counter per cache line */
    } seg[TOSAC_KMAX_WORKERS];
    atomic_uint gen;        /* bumped for every job (and at shutdown) */
    atomic_uint state;      /* POOL_CLOSED | the number of workers in the job */
    atomic_uint sleepers;   /* workers that went to sleep since the last wake-up */
    atomic_bool stop;
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Whether a spin that started at *t0 (0: not yet) has lasted RT_POOL_SPIN_NS; reads the clock every
   16th call. Without a clock (it reads 0) the spin ends at once. */
static bool spun_out(uint64_t *t0, unsigned i)
{
    if (i % 16u) return false;
    uint64_t t = tosac_now_ns();
    if (!*t0) *t0 = t;
    return t == 0 || t - *t0 >= RT_POOL_SPIN_NS;
}

/* Takes ranges of the current job until none are left: its own segment's, then the others'. */
static void take_ranges(rt_pool *pl, uint32_t worker)
{
    for (uint32_t k = 0, w = worker; k < pl->workers; k++, w = w + 1 == pl->workers ? 0 : w + 1) {
        const size_t end = pl->seg[w].end, grain = pl->seg[w].grain, share = 2u * pl->workers;
        size_t b = atomic_load_explicit(&pl->seg[w].next, memory_order_relaxed);
        while (b < end) {
            size_t g = (end - b + share - 1u) / share;
            if (g > grain) g = grain;
            if (!atomic_compare_exchange_weak_explicit(&pl->seg[w].next, &b, b + g, memory_order_relaxed,
                                                       memory_order_relaxed))
                continue;
            pl->fn(pl->ctx, worker, b, b + g);
            b = atomic_load_explicit(&pl->seg[w].next, memory_order_relaxed);
        }
    }
}

typedef struct {
    rt_pool *pl;
    uint32_t worker;
} worker_arg;

static void *worker_main(void *arg)
{
    rt_pool *pl = ((worker_arg *)arg)->pl;
    uint32_t worker = ((worker_arg *)arg)->worker;
    unsigned seen = 0;
    for (;;) {
        unsigned g = atomic_load_explicit(&pl->gen, memory_order_acquire);
        uint64_t t0 = 0;
        for (unsigned i = 0; g == seen && !spun_out(&t0, i); i++) {
            cpu_relax();
            g = atomic_load_explicit(&pl->gen, memory_order_acquire);
        }
        if (g == seen) {
            pthread_mutex_lock(&pl->mu);
            /* counted before the generation is read again: a job that bumped it without seeing
               this count is seen here (both sequentially consistent) */
            atomic_fetch_add(&pl->sleepers, 1);
            while ((g = atomic_load(&pl->gen)) == seen) pthread_cond_wait(&pl->wake, &pl->mu);
            pthread_mutex_unlock(&pl->mu);
        }
        seen = g;
        if (atomic_load_explicit(&pl->stop, memory_order_acquire)) return NULL;
        /* join the open job (the newest: a job is opened only after the previous one closed
           with no worker left in it), or skip a closed one */
        unsigned s = atomic_load_explicit(&pl->state, memory_order_acquire);
        while (!(s & POOL_CLOSED) &&
               !atomic_compare_exchange_weak_explicit(&pl->state, &s, s + 1, memory_order_acq_rel, memory_order_acquire)) {
        }
        if (s & POOL_CLOSED) continue;
        take_ranges(pl, worker);
        s = atomic_fetch_sub_explicit(&pl->state, 1, memory_order_acq_rel);
        if (s == (POOL_CLOSED | 1u)) {
            pthread_mutex_lock(&pl->mu);
            pthread_cond_signal(&pl->done);
            pthread_mutex_unlock(&pl->mu);
        }
    }
}

uint32_t rt_pool_default_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1u : n > TOSAC_KMAX_WORKERS ? TOSAC_KMAX_WORKERS : (uint32_t)n;
}

/* The workers' arguments live after the pool in the same allocation. */
static size_t pool_bytes(uint32_t workers)
{
    return sizeof(rt_pool) + workers * (sizeof(pthread_t) + sizeof(worker_arg));
}

void rt_pool_destroy(rt_pool *pl)
{
    if (!pl) return;
    if (pl->started) {
        pthread_mutex_lock(&pl->mu);
        atomic_store_explicit(&pl->stop, true, memory_order_release);
        atomic_fetch_add_explicit(&pl->gen, 1, memory_order_acq_rel);
        pthread_cond_broadcast(&pl->wake);
        pthread_mutex_unlock(&pl->mu);
        for (uint32_t i = 0; i < pl->started; i++) pthread_join(pl->threads[i], NULL);
    }
    pthread_cond_destroy(&pl->done);
    pthread_cond_destroy(&pl->wake);
    pthread_mutex_destroy(&pl->mu);
    tosac_free(pl, pool_bytes(pl->workers));
}

tosac_status rt_pool_create(uint32_t workers, rt_pool **out)
{
    *out = NULL;
    if (workers > TOSAC_KMAX_WORKERS) workers = TOSAC_KMAX_WORKERS;
    if (workers < 2) return TOSAC_OK;
    rt_pool *pl = tosac_calloc(1, pool_bytes(workers));
    if (!pl) return TOSAC_ERR_NOMEM;
    pl->workers = workers;
    pl->threads = (pthread_t *)(void *)(pl + 1);
    worker_arg *args = (worker_arg *)(void *)(pl->threads + workers);
    if (pthread_mutex_init(&pl->mu, NULL) != 0) {
        tosac_free(pl, pool_bytes(workers));
        return TOSAC_ERR_NOMEM;
    }
    pthread_cond_init(&pl->wake, NULL);
    pthread_cond_init(&pl->done, NULL);
    for (uint32_t w = 0; w < workers; w++) atomic_init(&pl->seg[w].next, 0);
    atomic_init(&pl->gen, 0);
    atomic_init(&pl->state, POOL_CLOSED);
    atomic_init(&pl->sleepers, 0);
    atomic_init(&pl->stop, false);
    for (uint32_t i = 0; i + 1 < workers; i++) {
        args[i].pl = pl;
        args[i].worker = i + 1;
        if (pthread_create(&pl->threads[i], NULL, worker_main, &args[i]) != 0) break;
        pl->started++;
    }
    if (pl->started + 1 < workers) {
        rt_pool_destroy(pl);
        return TOSAC_ERR_NOMEM;
    }
    *out = pl;
    return TOSAC_OK;
}

uint32_t rt_pool_workers(const rt_pool *pl) { return pl ? pl->workers : 1u; }

void rt_pool_run(void *pool, tosac_ktask_fn fn, void *ctx, size_t n)
{
    rt_pool *pl = pool;
    if (n == 0) return;
    if (!pl || n == 1) {
        fn(ctx, 0, 0, n);
        return;
    }
    /* ranges of an eighth of a segment: balance without a counter access per index */
    pl->fn = fn, pl->ctx = ctx;
    for (uint32_t w = 0; w < pl->workers; w++) {
        size_t b = n * w / pl->workers, e = n * (w + 1) / pl->workers;
        pl->seg[w].end = e, pl->seg[w].grain = (e - b + 7u) / 8u;
        atomic_store_explicit(&pl->seg[w].next, b, memory_order_relaxed);
    }
    atomic_store_explicit(&pl->state, 0, memory_order_release); /* open, nobody in it */
    atomic_fetch_add(&pl->gen, 1);
    if (atomic_load(&pl->sleepers)) {
        pthread_mutex_lock(&pl->mu);
        atomic_store_explicit(&pl->sleepers, 0, memory_order_relaxed);
        pthread_cond_broadcast(&pl->wake);
        pthread_mutex_unlock(&pl->mu);
    }
    take_ranges(pl, 0);
    unsigned s = atomic_fetch_or_explicit(&pl->state, POOL_CLOSED, memory_order_acq_rel);
    uint64_t t0 = 0;
    for (unsigned i = 0; (s & ~POOL_CLOSED) && !spun_out(&t0, i); i++) {
        cpu_relax();
        s = atomic_load_explicit(&pl->state, memory_order_acquire);
    }
    if (s & ~POOL_CLOSED) {
        pthread_mutex_lock(&pl->mu);
        while (atomic_load_explicit(&pl->state, memory_order_acquire) & ~POOL_CLOSED) pthread_cond_wait(&pl->done, &pl->mu);
        pthread_mutex_unlock(&pl->mu);
    }
}

#else /* no threads: every pool is the caller alone */

uint32_t rt_pool_default_threads(void) { return 1u; }
tosac_status rt_pool_create(uint32_t workers, rt_pool **out)
{
    (void)workers;
    *out = NULL;
    return TOSAC_OK;
}
void rt_pool_destroy(rt_pool *pl) { (void)pl; }
uint32_t rt_pool_workers(const rt_pool *pl)
{
    (void)pl;
    return 1u;
}
void rt_pool_run(void *pool, tosac_ktask_fn fn, void *ctx, size_t n)
{
    (void)pool;
    if (n) fn(ctx, 0, 0, n);
}

#endif
