/* Thousands of short-lived threads, in waves. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *tiny(void *arg)
{
    long *slot = arg;
    double x = (double)*slot;
    for (int i = 0; i < 20000; i++)
        x = x * 0.999 + 1;
    *slot = x > 0;
    return NULL;
}

int main(int argc, char **argv)
{
    int total = argc > 1 ? atoi(argv[1]) : 2000;
    enum { WAVE = 50 };
    long sum = 0;
    for (int done = 0; done < total; done += WAVE) {
        pthread_t t[WAVE];
        long v[WAVE];
        for (int i = 0; i < WAVE; i++) {
            v[i] = i;
            if (pthread_create(&t[i], NULL, tiny, &v[i]) != 0)
                return 2;
        }
        for (int i = 0; i < WAVE; i++) {
            pthread_join(t[i], NULL);
            sum += v[i];
        }
    }
    printf("threads %d ok %ld\n", total, sum);
    return 0;
}
