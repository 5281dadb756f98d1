/* Low CPU utilisation: one thread computes `series` in steps and, between
 * steps, sleeps as long (waiting for input, say), on a machine with more
 * CPUs: most CPU time goes unused (Coven: add parallelism). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 100000

int main(int argc, char **argv)
{
    long steps = argc > 1 ? atol(argv[1]) : 40;
    double *series = calloc(N, sizeof *series);
    for (long s = 0; s < steps; s++) {
        for (int r = 0; r < 40; r++)
            for (int i = 0; i < N; i++)
                series[i] = series[i] * 0.5 + (double)(i % 13) / (1.0 + series[i]);
        struct timespec pause = {0, 5000000};
        nanosleep(&pause, NULL);
    }
    printf("%.3f\n", series[7]);
    free(series);
    return 0;
}
