/* OpenMP parallel for, a nested parallel region, and recursive tasks: every
 * worker sample must glue back to main through the spawn records. */
#include <omp.h>
#include <stdio.h>

#define N 2000000
static double a[N];

__attribute__((noinline)) static void sweep(int rep)
{
#pragma omp parallel for
    for (int i = 0; i < N; i++)
        a[i] = a[i] * 0.5 + rep * 1e-3 / (1 + i % 13);
}

__attribute__((noinline)) static double nested(void)
{
    double s = 0;
#pragma omp parallel num_threads(2) reduction(+ : s)
    {
#pragma omp parallel num_threads(2) reduction(+ : s)
        for (int i = 0; i < 20000000; i++)
            s += i * 1e-12;
    }
    return s;
}

static long fib(int n)
{
    if (n < 2)
        return n;
    long x, y;
#pragma omp task shared(x)
    x = fib(n - 1);
#pragma omp task shared(y)
    y = fib(n - 2);
#pragma omp taskwait
    return x + y;
}

int main(void)
{
    omp_set_max_active_levels(2);
    for (int r = 0; r < 60; r++)
        sweep(r);
    double s = nested();
    long f = 0;
#pragma omp parallel
#pragma omp single
    f = fib(24);
    printf("%d %d %ld\n", a[7] > 0, s > 0, f);
    return 0;
}
