/* Recursive task decomposition with taskwait: the leaves write values[lo..hi)
 * through the pointer each task inherits, so values (main's array) carries
 * the time. */
#include <stdio.h>
#include <stdlib.h>

static void fill(double *values, long lo, long hi, int reps)
{
    if (hi - lo > 2048) {
        long mid = lo + (hi - lo) / 2;
#pragma omp task
        fill(values, lo, mid, reps);
#pragma omp task
        fill(values, mid, hi, reps);
#pragma omp taskwait
        return;
    }
    for (long i = lo; i < hi; i++) {
        double v = values[i];
        for (int r = 0; r < reps; r++)
            v = v * 0.5 + (double)((i + r) % 11) / (1.0 + v);
        values[i] = v;
    }
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 2000;
    long n = 1L << 17;
    double *values = calloc(n, sizeof(double));
#pragma omp parallel
#pragma omp single
    fill(values, 0, n, reps);
    printf("%.4f\n", values[3] + values[n - 1]);
    free(values);
    return 0;
}
