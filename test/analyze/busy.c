/* Busy-fraction difference (Coven's rule): three threads do the same
 * work, 0.6 s of CPU each.  The loader blocks for input between its chunks
 * (a sleep stands in for a slow read) and is busy only half its life,
 * while two solvers, one after the other, are busy all of theirs.  No
 * synchronization waits, no imbalance of work, and the two CPUs are used
 * three quarters of the run: the loader's idle time is what to fill. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Spins for `seconds` of this thread's CPU time. */
static double spin(double seconds, double x)
{
    double end = thread_cpu_s() + seconds;
    while (thread_cpu_s() < end)
        for (int i = 0; i < 20000; i++)
            x = x * 0.999999 + 1e-6;
    return x;
}

static double results[3];

static void *solver(void *arg)
{
    double *result = arg;
    *result = spin(0.6, 1.0);
    return NULL;
}

static void *loader(void *arg)
{
    (void)arg;
    double x = 2.0;
    for (int chunk = 0; chunk < 6; chunk++) {
        x = spin(0.1, x);
        struct timespec input = {0, 100000000}; /* waiting for the next chunk */
        nanosleep(&input, NULL);
    }
    results[2] = x;
    return NULL;
}

int main(void)
{
    pthread_t load, solve;
    pthread_create(&load, NULL, loader, NULL);
    for (int i = 0; i < 2; i++) {
        pthread_create(&solve, NULL, solver, &results[i]);
        pthread_join(solve, NULL);
    }
    pthread_join(load, NULL);
    printf("%.3f\n", results[0] + results[1] + results[2]);
    return 0;
}
