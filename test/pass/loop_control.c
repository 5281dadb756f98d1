/* The access view on lines that access no memory of their own: a loop's
 * control line is charged to the memory the loop subscripts with its
 * variable (serial loops and OpenMP worksharing loops alike), a compute
 * line to the memory its operands came from, through a call's result to
 * the memory the call's pointer arguments point to. */
#include <stdio.h>

struct rng {
    unsigned state;
};

static unsigned next(struct rng *g)
{
    g->state = g->state * 1103515245u + 12345u;
    return g->state >> 16;
}

static double sweep(double *restrict out, const double *restrict in, int n, struct rng *g)
{
    double sum = 0;
    for (int j = 0; j < n; j++) {
        int shifted = j + 3;
        out[j] = in[j] * 0.5 + shifted;
        unsigned draw = next(g);
        draw %= 7u;
        sum += draw;
    }
    return sum;
}

static void scale(double *v, int n)
{
#pragma omp parallel for
    for (int k = 0; k < n; k++)
        v[k] *= 2.0;
}

int main(void)
{
    double a[64], b[64];
    struct rng g = {1};
    for (int i = 0; i < 64; i++)
        b[i] = i;
    double sum = sweep(a, b, 64, &g);
    scale(a, 64);
    int lo = 0, hi = 63;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (a[mid] < 40.0)
            lo = mid + 1;
        else
            hi = mid;
    }
    printf("%.1f %d\n", sum, lo);
    return 0;
}
