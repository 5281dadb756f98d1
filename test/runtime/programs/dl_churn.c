/* dlopen/dlclose churn while other threads are sampled at a high rate:
 * the dynamic linker's lock is taken and released thousands of times while
 * the sampler walks stacks on every thread, for at least a second
 * (runtime.dl_churn: the program must finish, with samples). */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile int stop;

static void *spin(void *arg)
{
    double acc = 0;
    while (!stop)
        for (int i = 0; i < 10000; i++)
            acc += (double)(i % 7) / (1.0 + (double)(i & 1023));
    *(double *)arg = acc;
    return NULL;
}

int main(int argc, char **argv)
{
    const char *lib = argc > 1 ? argv[1] : "libz.so.1";
    int rounds = argc > 2 ? atoi(argv[2]) : 3000;
    double results[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, spin, &results[i]);
    int opened = 0, r = 0;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;; r++) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (r >= rounds && now.tv_sec - start.tv_sec + (now.tv_nsec - start.tv_nsec) * 1e-9 >= 1.0)
            break;
        void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (h) {
            opened++;
            dlclose(h);
        }
    }
    stop = 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("opened %s\n", opened == r ? "all" : "not all");
    return opened == r ? 0 : 1;
}
