/* Load imbalance without a barrier: two threads sweep their own rows of
 * `grid`; thread 1 gets 3x the sweeps, and main waits in join. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 100000
static double grid[2][N];
static long sweeps = 1500;

static void *worker(void *arg)
{
    long id = (long)arg;
    long reps = id == 1 ? 3 * sweeps : sweeps;
    for (long r = 0; r < reps; r++)
        for (int i = 0; i < N; i++)
            grid[id][i] = grid[id][i] * 0.5 + (double)(i % 13) / (1.0 + grid[id][i]);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        sweeps = atol(argv[1]);
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("%.3f\n", grid[0][7] + grid[1][7]);
    return 0;
}
