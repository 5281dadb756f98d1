/* A dot product reduced over an OpenMP loop, many times: the loop only reads
 * a and b, and every product it computes is added into sum, so sum (main's
 * reduction variable) is the variable the time goes into.  The arrays are
 * small (1.6 MB) and the loop runs many times: first-touching 16 MB cost
 * 4,000 page faults, 48 ms of CPU on a VM that charges 12 us a fault, and
 * that alone put 4% of the samples in main's fill loop. */
#include <stdio.h>
#include <stdlib.h>

#define N 100000

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 10000;
    double *a = malloc(N * sizeof(double)), *b = malloc(N * sizeof(double));
    for (int i = 0; i < N; i++) {
        a[i] = (double)(i % 17) + 0.5;
        b[i] = (double)(i % 5) + 1.0;
    }
    double sum = 0;
    for (int r = 0; r < reps; r++) {
#pragma omp parallel for reduction(+ : sum)
        for (int i = 0; i < N; i++)
            sum += a[i] * b[i] / (1.0 + a[i] * (double)(i & 7));
    }
    printf("%.4f\n", sum);
    free(a);
    free(b);
    return 0;
}
