/* Call-heavy: millions of calls to small functions that survive inlining
 * (noinline, recursion, function pointers), ~1 s at -O2.  The "full
 * function instrumentation" case, where throttling must keep the probes
 * from drowning the run. */
#include <stdio.h>
#include <stdlib.h>

struct node {
    struct node *left, *right;
    int value;
};

__attribute__((noinline)) static struct node *build(int depth, int *next)
{
    if (depth == 0)
        return NULL;
    struct node *n = malloc(sizeof(*n));
    n->value = (*next)++;
    n->left = build(depth - 1, next);
    n->right = build(depth - 1, next);
    return n;
}

__attribute__((noinline)) static long visit(const struct node *n)
{
    return n ? n->value % 7 + visit(n->left) + visit(n->right) : 0;
}

__attribute__((noinline)) static double step(double x, int i)
{
    return x * 0.999 + (double)(i & 15) * 1e-3;
}

__attribute__((noinline)) static double chunk(double x, int base)
{
    /* Real work per call, so the run is not all call overhead. */
    for (int i = 0; i < 200; i++)
        x = step(x, base + i) + x * 1e-9;
    return x;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 400;
    int next = 0;
    struct node *root = build(16, &next);
    long sum = 0;
    double x = 1;
    for (int r = 0; r < reps; r++) {
        sum += visit(root);
        for (int i = 0; i < 2000; i++)
            x = chunk(x, i);
    }
    printf("%ld %.6f\n", sum, x);
    return 0;
}
