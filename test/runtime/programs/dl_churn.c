/* dlopen/dlclose churn while other threads are sampled at a high rate:
 * the dynamic linker's lock is taken and released thousands of times while
 * the sampler walks stacks on every thread (runtime.dl_churn: the program
 * must finish, with samples). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

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
    int opened = 0;
    for (int r = 0; r < rounds; r++) {
        void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (h) {
            opened++;
            dlclose(h);
        }
    }
    stop = 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("opened %d of %d\n", opened, rounds);
    return opened == rounds ? 0 : 1;
}
