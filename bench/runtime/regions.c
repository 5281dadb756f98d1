/* Many short parallel regions: REGIONS `omp parallel for` loops in a row,
 * each over SIZE elements (a few microseconds of work on one thread), so
 * that a run enters hundreds of thousands of regions a second and every
 * per-region cost of a tool (OMPT callbacks, region records, a sample
 * landing while the team waits at the closing barrier) shows.  The total
 * work is fixed whatever the number of threads (OMP_NUM_THREADS), so that
 * CPU times at different thread counts compare.  Prints a checksum, which
 * keeps the loops from being optimized away.
 *
 *   regions [REGIONS [SIZE]]      defaults: 100000 regions of 4096 elements */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_SIZE 65536

static double a[MAX_SIZE], b[MAX_SIZE];

int main(int argc, char **argv)
{
    long regions = argc > 1 ? atol(argv[1]) : 100000;
    int size = argc > 2 ? atoi(argv[2]) : 4096;
    if (regions < 1 || size < 1 || size > MAX_SIZE) {
        fprintf(stderr, "usage: regions [REGIONS [SIZE <= %d]]\n", MAX_SIZE);
        return 2;
    }
    for (int i = 0; i < size; i++) {
        a[i] = 1.0;
        b[i] = 1e-3 * (i % 7);
    }
    for (long r = 0; r < regions; r++) {
        /* each region reads what the previous one wrote: no fusing */
#pragma omp parallel for schedule(static)
        for (int i = 0; i < size; i++)
            a[i] = a[i] * 0.999 + b[i];
    }
    double sum = 0;
    for (int i = 0; i < size; i++)
        sum += a[i];
    printf("%ld regions of %d on %d threads: %.6f\n", regions, size, omp_get_max_threads(), sum);
    return 0;
}
