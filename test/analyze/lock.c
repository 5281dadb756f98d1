/* Lock contention: four threads do all their work inside one critical
 * section guarded by queue_lock, so three of them always wait. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static double total;
static long rounds = 50;

static void *worker(void *arg)
{
    long n = (long)arg;
    for (long r = 0; r < rounds; r++) {
        pthread_mutex_lock(&queue_lock);
        double acc = 0;
        for (long i = 0; i < n; i++)
            acc += (double)(i % 7) / (1.0 + (double)(i & 1023));
        total += acc;
        pthread_mutex_unlock(&queue_lock);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        rounds = atol(argv[1]);
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, worker, (void *)2000000L);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    printf("%.2f\n", total);
    return 0;
}
