/* An OpenMP program that does nothing: one parallel region, a count.  What
 * ppw adds to its CPU time is the fixed cost of a process (start-up,
 * calibration, files, the threads' sampler set-up, exit), which weighs on
 * every short run: a test, an MPI rank of a short job. */
#include <stdio.h>

int main(void)
{
    int threads = 0;
#pragma omp parallel
    {
#pragma omp atomic
        threads++;
    }
    printf("%d\n", threads);
    return 0;
}
