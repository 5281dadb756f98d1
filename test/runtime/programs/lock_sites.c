/* Lock call sites that throttle: two OpenMP threads take and release one
 * mutex ROUNDS times each around a tiny update (the count site), and the
 * master takes a second mutex 200 times around a slow one (the rare
 * site).  The count site's calls are far under PPW_THROTTLE_USEC and,
 * past PPW_THROTTLE_CALLS, are sampled 1 in PPW_THROTTLE_SAMPLE like an
 * allocation site's; the rare site stays exact.  Prints the totals, so
 * that the output shows the locks did their job.
 *
 *   lock_sites [ROUNDS]      default 200,000 per thread */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t rare_lock = PTHREAD_MUTEX_INITIALIZER;
static long count;
static double rare_sum;

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? atol(argv[1]) : 200000;
#pragma omp parallel num_threads(2)
    {
        for (long i = 0; i < rounds; i++) {
            pthread_mutex_lock(&count_lock); /* site: count lock */
            count += i & 1;
            pthread_mutex_unlock(&count_lock); /* site: count unlock */
        }
#pragma omp master
        for (int k = 0; k < 200; k++) {
            pthread_mutex_lock(&rare_lock); /* site: rare lock */
            for (int j = 0; j < 20000; j++)
                rare_sum += 1.0 / (1.0 + j + k);
            pthread_mutex_unlock(&rare_lock);
        }
    }
    printf("count %ld rare %.6f\n", count, rare_sum);
    return 0;
}
