/* dlopen/dlclose churn while other threads are sampled at a high rate:
 * the dynamic linker's lock is taken and released thousands of times while
 * the sampler walks stacks on every thread, for at least a second
 * (runtime.dl_churn: the program must finish, with samples).  Each round
 * calls the library's dl_churn_value(), which must return 42: with an
 * instrumented library (runtime.dl_inst), GASP events come from code that
 * is unloaded and loaded again. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
    int opened = 0, wrong = 0, r = 0;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;; r++) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (r >= rounds && now.tv_sec - start.tv_sec + (now.tv_nsec - start.tv_nsec) * 1e-9 >= 1.0)
            break;
        void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (h) {
            int (*value)(void) = (int (*)(void))dlsym(h, "dl_churn_value");
            if (value && value() != 42)
                wrong++;
            opened++;
            dlclose(h);
        }
    }
    stop = 1;
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    printf("opened %s\n", opened == r ? "all" : "not all");
    printf("values %s\n", wrong ? "wrong" : "right");
    /* A fork()ed child after the libraries are gone: libppw starts the
     * child's run again, naming the regions seen so far. */
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        _exit(5);
    int status = 0;
    waitpid(pid, &status, 0);
    printf("child %s\n", WIFEXITED(status) && WEXITSTATUS(status) == 5 ? "ok" : "failed");
    return opened == r && !wrong ? 0 : 1;
}
