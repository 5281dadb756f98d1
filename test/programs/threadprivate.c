/* A threadprivate work array, as Fortran-heritage codes keep per-thread
 * scratch in common blocks: each thread fills its own copy of `work` in
 * a helper, then folds it into the shared histogram under a critical
 * section, over several passes.  Used by test/programs/check_programs.sh,
 * which states the expected answers.
 *
 *   threadprivate [PASSES]     (default 300)
 *
 * Work per pass and thread: WORK_LEN cells computed by fill_work (a
 * polynomial with a data-dependent inner loop, 16 terms per cell) then
 * WORK_LEN cells folded into 64 bins: the fill is about 16 times the
 * fold. */
#include <stdio.h>
#include <stdlib.h>

enum { WORK_LEN = 16384, BINS = 64, TERMS = 16 };

static double work[WORK_LEN];
#pragma omp threadprivate(work)

static double histogram[BINS];

/* This thread's copy of work, from its seed. */
static void fill_work(int seed, int pass)
{
    for (int i = 0; i < WORK_LEN; i++) {
        double xv = (double)((i * 31 + seed * 17 + pass) % 1000) / 1000.0, term = 1, sum = 0;
        for (int k = 0; k < TERMS; k++) {
            sum += term / (k + 1);
            term *= xv;
        }
        work[i] = sum;
    }
}

/* Folds this thread's work into the shared histogram. */
static void fold_work(void)
{
    double local[BINS] = {0};
    for (int i = 0; i < WORK_LEN; i++)
        local[(int)(work[i] * 37.0) % BINS] += work[i];
#pragma omp critical
    for (int b = 0; b < BINS; b++)
        histogram[b] += local[b];
}

int main(int argc, char **argv)
{
    int passes = argc > 1 ? atoi(argv[1]) : 300;
#pragma omp parallel
    {
        for (int pass = 0; pass < passes; pass++) {
            fill_work(pass * 2 + 1, pass);
            fold_work();
        }
    }
    double total = 0;
    for (int b = 0; b < BINS; b++)
        total += histogram[b];
    printf("passes %d total %.6f first %.6f\n", passes, total, histogram[0]);
    return 0;
}
