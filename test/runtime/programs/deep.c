/* Recursion `deep N` calls deep: spins at the bottom, where it also starts
 * a thread, then returns (runtime.deep: samples and the spawn record from
 * 10,000 frames down are truncated, never overflowed, and so are the GASP
 * events of full instrumentation). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "spin.h"

__attribute__((noinline)) static double bottom(double seconds)
{
    return spin_for(CLOCK_THREAD_CPUTIME_ID, seconds);
}

static void *helper(void *arg)
{
    *(double *)arg = bottom(*(double *)arg);
    return NULL;
}

/* Not a tail call: the addition after the call keeps each frame. */
__attribute__((noinline)) static double descend(int depth, double seconds)
{
    if (depth <= 1) {
        pthread_t thread;
        double helped = seconds / 4;
        if (pthread_create(&thread, NULL, helper, &helped) != 0)
            return -1;
        double x = bottom(seconds);
        pthread_join(thread, NULL);
        return x + helped;
    }
    return descend(depth - 1, seconds) + (double)(depth & 1);
}

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 10000;
    double seconds = argc > 2 ? atof(argv[2]) : 0.4;
    printf("depth %d result %d\n", depth, descend(depth, seconds) > 0);
    return 0;
}
