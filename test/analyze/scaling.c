/* Poor scalability: every OpenMP thread repeats the whole computation of
 * `table` instead of its share (replicated work), so two threads take as
 * long as one. */
#include <stdio.h>
#include <stdlib.h>

#define N 100000

int main(int argc, char **argv)
{
    long reps = argc > 1 ? atol(argv[1]) : 2000;
    double checksum = 0;
#pragma omp parallel reduction(+ : checksum)
    {
        double *table = calloc(N, sizeof *table);
        for (long r = 0; r < reps; r++)
            for (int i = 0; i < N; i++)
                table[i] = table[i] * 0.5 + (double)(i % 13) / (1.0 + table[i]);
        checksum += table[7];
        free(table);
    }
    printf("%.3f\n", checksum);
    return 0;
}
