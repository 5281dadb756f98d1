/* What the program's heap holds, at points where only the program and its
 * libraries have allocated: entering main, after a thread came and went,
 * after an OpenMP region whose threads allocate, and after a burst of
 * small blocks freed again (tcache and fast bins at work).  Each line is
 * glibc's count of bytes in use and of bytes the arenas hold (mallinfo2).
 * runtime.heap compares them with ppw on and off: libppw keeps its own
 * memory outside the heap (mmap), so they must be the same to the byte.
 *
 *   heap [BLOCKS]     BLOCKS per thread in the region, default 20000 */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void show(const char *where)
{
    struct mallinfo2 m = mallinfo2();
    printf("%-14s in use %zu, arenas %zu, mmapped %zu\n", where, m.uordblks, m.arena, m.hblkhd);
}

static void *worker(void *arg)
{
    double *v = malloc(64 * sizeof *v);
    if (!v)
        abort();
    for (int i = 0; i < 64; i++)
        v[i] = i * *(double *)arg;
    double sum = 0;
    for (int i = 0; i < 64; i++)
        sum += v[i];
    free(v);
    *(double *)arg = sum;
    return NULL;
}

int main(int argc, char **argv)
{
    int blocks = argc > 1 ? atoi(argv[1]) : 20000;
    show("main");
    pthread_t t;
    double scale = 0.5;
    if (pthread_create(&t, NULL, worker, &scale) != 0 || pthread_join(t, NULL) != 0)
        return 1;
    show("thread");
    double total = 0;
#pragma omp parallel reduction(+ : total)
    {
        /* Each thread keeps a list of small blocks, then frees it. */
        void **list = malloc((size_t)blocks * sizeof *list);
        if (!list)
            abort();
        for (int i = 0; i < blocks; i++) {
            list[i] = calloc(1, 16 + (size_t)(i % 7) * 8);
            if (!list[i])
                abort();
            total += (double)(i % 7);
        }
        for (int i = blocks - 1; i >= 0; i--)
            free(list[i]);
        free(list);
    }
    show("region");
    void *burst[100];
    for (int round = 0; round < 50; round++) {
        for (int i = 0; i < 100; i++)
            if (!(burst[i] = malloc(24 + (size_t)(i % 5) * 16)))
                abort();
        for (int i = 0; i < 100; i++)
            free(burst[(i * 37) % 100]);
    }
    show("burst");
    printf("worker %.1f total %.0f\n", scale, total);
    return 0;
}
