/* A tiny unit-test harness: CHECK* record failures with file:line and keep
 * going; RUN prints "OK name" or "FAIL name" per test; harness_exit()
 * gives ctest its status. */
#ifndef PPW_TEST_HARNESS_H
#define PPW_TEST_HARNESS_H

#include <stdio.h>
#include <string.h>

static int harness_failures;

#define FAIL_AT(...)                                                                          \
    do {                                                                                      \
        fprintf(stderr, "  FAIL %s:%d: ", __FILE__, __LINE__);                                \
        fprintf(stderr, __VA_ARGS__);                                                         \
        fputc('\n', stderr);                                                                  \
        harness_failures++;                                                                   \
    } while (0)

#define CHECK(cond)                                                                           \
    do {                                                                                      \
        if (!(cond))                                                                          \
            FAIL_AT("%s", #cond);                                                             \
    } while (0)

#define CHECK_INT(actual, expected)                                                           \
    do {                                                                                      \
        long long a_ = (long long)(actual), e_ = (long long)(expected);                       \
        if (a_ != e_)                                                                         \
            FAIL_AT("%s == %lld, expected %lld", #actual, a_, e_);                            \
    } while (0)

#define CHECK_STR(actual, expected)                                                           \
    do {                                                                                      \
        const char *a_ = (actual), *e_ = (expected);                                          \
        if (!a_ || strcmp(a_, e_) != 0)                                                       \
            FAIL_AT("%s == \"%s\", expected \"%s\"", #actual, a_ ? a_ : "(null)", e_);        \
    } while (0)

#define CHECK_CONTAINS(haystack, needle)                                                      \
    do {                                                                                      \
        const char *h_ = (haystack), *n_ = (needle);                                          \
        if (!h_ || !strstr(h_, n_))                                                           \
            FAIL_AT("%s == \"%s\" lacks \"%s\"", #haystack, h_ ? h_ : "(null)", n_);           \
    } while (0)

#define RUN(test)                                                                             \
    do {                                                                                      \
        int before_ = harness_failures;                                                       \
        test();                                                                               \
        printf("%s %s\n", harness_failures == before_ ? "OK" : "FAIL", #test);                \
    } while (0)

#define SKIP(test, reason) printf("SKIP %s: %s\n", #test, reason)

static inline int harness_exit(void)
{
    if (harness_failures)
        fprintf(stderr, "%d check(s) failed\n", harness_failures);
    return harness_failures ? 1 : 0;
}

#endif
