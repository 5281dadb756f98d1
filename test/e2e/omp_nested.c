/* Nested parallel regions: each thread of the outer team updates its half of
 * field in an inner parallel loop, so field (main's array, shared through
 * both outlined functions) carries the time. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4000

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 60000;
    double *field = calloc(N, sizeof(double));
#pragma omp parallel num_threads(2)
    {
        int half = omp_get_thread_num();
#pragma omp parallel for num_threads(2)
        for (int i = half * (N / 2); i < (half + 1) * (N / 2); i++) {
            double v = field[i];
            for (int r = 0; r < reps; r++)
                v = v * 0.5 + (double)((i + r) % 13) / (1.0 + v);
            field[i] = v;
        }
    }
    printf("%.4f\n", field[11] + field[N - 1]);
    free(field);
    return 0;
}
