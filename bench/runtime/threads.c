/* Memory per thread: N threads alive at once, each touching a little
 * memory; prints the process's peak RSS in KiB (VmHWM). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_barrier_t all_started, may_exit;

static void *idle(void *arg)
{
    volatile double x = (double)(long)arg;
    for (int i = 0; i < 200000; i++)
        x = x * 0.999 + 1;
    pthread_barrier_wait(&all_started);
    pthread_barrier_wait(&may_exit);
    return NULL;
}

static long peak_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof(line), f))
        if (strncmp(line, "VmHWM:", 6) == 0)
            kib = atol(line + 6);
    if (f)
        fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 64;
    pthread_t *t = malloc(sizeof(*t) * (size_t)n);
    pthread_barrier_init(&all_started, NULL, (unsigned)n + 1);
    pthread_barrier_init(&may_exit, NULL, (unsigned)n + 1);
    for (long i = 0; i < n; i++)
        pthread_create(&t[i], NULL, idle, (void *)i);
    pthread_barrier_wait(&all_started);
    long kib = peak_kib();
    pthread_barrier_wait(&may_exit);
    for (int i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    printf("%ld\n", kib);
    return 0;
}
