/* CPU work for the runtime test programs: spins until `seconds` have
 * passed on `clock` (CLOCK_THREAD_CPUTIME_ID: this thread's CPU time;
 * CLOCK_MONOTONIC: wall time) and returns a value the caller can print.
 * Always inlined, so samples land in the caller, whose name the tests
 * look for. */
#ifndef PPW_TEST_SPIN_H
#define PPW_TEST_SPIN_H

#include <time.h>

static inline __attribute__((always_inline)) double spin_for(clockid_t clock, double seconds)
{
    struct timespec start, now;
    clock_gettime(clock, &start);
    double x = 1;
    do {
        for (int i = 0; i < 10000; i++)
            x = x * 1.0000001 + 1e-9;
        clock_gettime(clock, &now);
    } while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) * 1e-9 < seconds);
    return x;
}

#endif
