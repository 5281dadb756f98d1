/* The control: two threads sweep equal halves of `field` in phases
 * separated by a barrier.  Nothing waits long, nothing is uneven. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 100000
static double field[2][N];
static pthread_barrier_t phase_barrier;
static long sweeps = 40;

static void sweep(double *part, long reps)
{
    for (long r = 0; r < reps; r++)
        for (int i = 0; i < N; i++)
            part[i] = part[i] * 0.5 + (double)(i % 13) / (1.0 + part[i]);
}

static void *worker(void *arg)
{
    long id = (long)arg;
    for (long p = 0; p < sweeps; p++) {
        sweep(field[id], 80);
        pthread_barrier_wait(&phase_barrier);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        sweeps = atol(argv[1]);
    pthread_barrier_init(&phase_barrier, NULL, 2);
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("%.3f\n", field[0][7] + field[1][7]);
    return 0;
}
