/* A condition wait: the consumer waits on ready_cond for each item that
 * the producer computes slowly, so it spends most of its life waiting. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ready_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t empty_cond = PTHREAD_COND_INITIALIZER;
static double slot;
static int full;
static long items = 100;

static void *producer(void *arg)
{
    (void)arg;
    for (long k = 0; k < items; k++) {
        double acc = 0;
        for (long i = 0; i < 2000000; i++)
            acc += (double)(i % 7) / (1.0 + (double)(i & 1023));
        pthread_mutex_lock(&slot_lock);
        while (full) /* the consumer is quick: this rarely waits */
            pthread_cond_wait(&empty_cond, &slot_lock);
        slot = acc;
        full = 1;
        pthread_cond_signal(&ready_cond);
        pthread_mutex_unlock(&slot_lock);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        items = atol(argv[1]);
    pthread_t t;
    pthread_create(&t, NULL, producer, NULL);
    double sum = 0;
    for (long k = 0; k < items; k++) {
        pthread_mutex_lock(&slot_lock);
        while (!full)
            pthread_cond_wait(&ready_cond, &slot_lock);
        sum += slot;
        full = 0;
        pthread_cond_signal(&empty_cond);
        pthread_mutex_unlock(&slot_lock);
    }
    pthread_join(t, NULL);
    printf("%.2f\n", sum);
    return 0;
}
