/* The compensation experiment's kernel (seed 001): a call-heavy program
 * whose functions survive inlining (noinline, recursion, a function
 * pointer), with a body of WORK loop iterations per leaf call, so that the
 * density of probes can be varied: WORK 0 is nearly all call overhead.
 *
 *   kernel CALLS WORK    about CALLS leaf calls (default 4000000, 40) */
#include <stdio.h>
#include <stdlib.h>

static volatile int sink;

__attribute__((noinline)) static double leaf(double x, int work)
{
    for (int i = 0; i < work; i++)
        x = x * 0.9999 + (double)(i & 7) * 1e-4;
    return x + 1e-9;
}

__attribute__((noinline)) static double other_leaf(double x, int work)
{
    for (int i = 0; i < work; i++)
        x = x * 0.9998 + (double)(i & 3) * 2e-4;
    return x - 1e-9;
}

/* A binary recursion: 2^depth - 1 calls of itself, each making a leaf call. */
__attribute__((noinline)) static double tree(double x, int depth, int work,
                                             double (*f)(double, int))
{
    x = f(x, work);
    if (depth <= 1)
        return x;
    return tree(x, depth - 1, work, f) * 0.5 + tree(x, depth - 1, work, f) * 0.5;
}

__attribute__((noinline)) static double phase(double x, int work, int rep)
{
    return tree(x, 10, work, rep & 1 ? other_leaf : leaf);
}

int main(int argc, char **argv)
{
    long calls = argc > 1 ? atol(argv[1]) : 4000000;
    int work = argc > 2 ? atoi(argv[2]) : 40;
    long reps = calls / 2046 + 1; /* a tree of depth 10: 1023 calls and 1023 leaf calls */
    double x = 1;
    for (long r = 0; r < reps; r++)
        x = phase(x, work, (int)r);
    sink = (int)x;
    printf("%.6f\n", x);
    return 0;
}
