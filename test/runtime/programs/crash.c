/* Dies in the middle of a run: `crash segv` dereferences NULL, `crash
 * abort` calls abort(), after burning CPU time in burn() (runtime.crash:
 * the same death with and without ppw, and the samples taken before it
 * are readable). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__attribute__((noinline)) static double burn(double seconds)
{
    struct timespec start, now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    double x = 1;
    do {
        for (int i = 0; i < 10000; i++)
            x = x * 1.0000001 + 1e-9;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    } while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) * 1e-9 < seconds);
    return x;
}

int main(int argc, char **argv)
{
    const char *how = argc > 1 ? argv[1] : "segv";
    printf("burned %d\n", burn(0.4) > 0);
    fflush(stdout);
    if (strcmp(how, "abort") == 0)
        abort();
    volatile int *nowhere = NULL;
    return *nowhere;
}
