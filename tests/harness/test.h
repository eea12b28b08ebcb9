/* Minimal test harness: TEST functions registered from main, EXPECT macros count failures. */
#ifndef TOSAC_TEST_H
#define TOSAC_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int t_failures, t_checks;

#define EXPECT(cond)                                                                     \
    do {                                                                                 \
        t_checks++;                                                                      \
        if (!(cond)) {                                                                   \
            t_failures++;                                                                \
            fprintf(stderr, "%s:%d: expectation failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                                \
    } while (0)

#define EXPECT_EQ_I(a, b)                                                                       \
    do {                                                                                        \
        long long ta_ = (long long)(a), tb_ = (long long)(b);                                   \
        t_checks++;                                                                             \
        if (ta_ != tb_) {                                                                       \
            t_failures++;                                                                       \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld vs %lld\n", __FILE__, __LINE__, #a, #b, \
                    ta_, tb_);                                                                  \
        }                                                                                       \
    } while (0)

#define EXPECT_STREQ(a, b)                                                                       \
    do {                                                                                         \
        const char *ta_ = (a), *tb_ = (b);                                                       \
        t_checks++;                                                                              \
        if (!ta_ || !tb_ || strcmp(ta_, tb_) != 0) {                                             \
            t_failures++;                                                                        \
            fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" vs \"%s\"\n", __FILE__, __LINE__, #a, \
                    #b, ta_ ? ta_ : "(null)", tb_ ? tb_ : "(null)");                             \
        }                                                                                        \
    } while (0)

#define RUN(fn)                       \
    do {                              \
        int before_ = t_failures;     \
        fn();                         \
        fprintf(stderr, "%s %s\n", t_failures == before_ ? "ok  " : "FAIL", #fn); \
    } while (0)

/* Prints the plain closing line and returns the process exit code. */
static inline int test_summary(void)
{
    printf("%d passed, %d failed\n", t_checks - t_failures, t_failures);
    return t_failures ? 1 : 0;
}

#endif
