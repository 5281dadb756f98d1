/* One thread, CPU-bound for about ARG seconds of CPU time (default 0.6):
 * the sample-rate and stack-completeness tests. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) static double inner(double x, int n)
{
    for (int i = 0; i < n; i++)
        x = x * 1.0000001 + 1e-9 / (1.0 + (i & 7));
    return x;
}

__attribute__((noinline)) static double outer(double x)
{
    return inner(x, 100000);
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 0.6;
    double x = 1.0;
    while (cpu_seconds() < seconds)
        x = outer(x);
    printf("done %d\n", x > 0.0);
    return 0;
}
