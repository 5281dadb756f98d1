/* A taskloop: each task computes a block of out, so out (main's array) is
 * what the time is spent on. */
#include <stdio.h>
#include <stdlib.h>

#define N 200000

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 1200;
    double *out = calloc(N, sizeof(double));
#pragma omp parallel
#pragma omp single
#pragma omp taskloop grainsize(2000)
    for (int i = 0; i < N; i++) {
        double v = 0;
        for (int r = 0; r < reps; r++)
            v = v * 0.5 + (double)((i + r) % 7) / (1.0 + v);
        out[i] = v;
    }
    printf("%.4f\n", out[5] + out[N - 1]);
    free(out);
    return 0;
}
