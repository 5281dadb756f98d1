/* ppw demo: 1-D heat diffusion.
 *
 * Small on purpose, but it has what blame analysis is about: a struct whose
 * array fields are written through a pointer parameter (g->next[], g->cur),
 * a global written from two functions (sweeps), a value returned to the
 * caller (the residual), and loop-controlled writes.  Deterministic: the
 * same checksum with and without ppw, with and without -fopenmp. */
#include <stdio.h>
#include <stdlib.h>

struct grid {
    int n;
    double *cur, *next;
};

static long sweeps; /* global exit variable: written in step() and main() */

static int grid_init(struct grid *g, int n)
{
    g->n = n;
    g->cur = calloc((size_t)n, sizeof(*g->cur));
    g->next = calloc((size_t)n, sizeof(*g->next));
    if (!g->cur || !g->next)
        return -1;
    for (int i = 0; i < n; i++) /* a hot band in the middle */
        g->cur[i] = (i > n / 3 && i < 2 * n / 3) ? 100.0 : 0.0;
    return 0;
}

/* One explicit Euler step; returns the largest change, writes g->next[] and
 * swaps g->cur/g->next.  The ends are held at 0 (Dirichlet boundary). */
static double step(struct grid *g, double alpha)
{
    double residual = 0.0;
    int n = g->n;
#ifdef _OPENMP
#pragma omp parallel for reduction(max : residual)
#endif
    for (int i = 1; i < n - 1; i++) {
        double v = g->cur[i] + alpha * (g->cur[i - 1] - 2.0 * g->cur[i] + g->cur[i + 1]);
        double d = v > g->cur[i] ? v - g->cur[i] : g->cur[i] - v;
        if (d > residual)
            residual = d;
        g->next[i] = v;
    }
    g->next[0] = g->next[n - 1] = 0.0;
    double *t = g->cur;
    g->cur = g->next;
    g->next = t;
    sweeps++;
    return residual;
}

static double checksum(const struct grid *g)
{
    double sum = 0.0;
    for (int i = 0; i < g->n; i++)
        sum += g->cur[i] * g->cur[i] * (double)(i % 7 + 1);
    return sum;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    int max_steps = argc > 2 ? atoi(argv[2]) : 2000;
    struct grid g;
    if (n < 3 || max_steps < 1 || grid_init(&g, n) != 0) {
        fprintf(stderr, "usage: heat [cells>=3] [steps>=1]\n");
        return 1;
    }
    double residual = 0.0;
    sweeps = 0;
    for (int s = 0; s < max_steps; s++) {
        residual = step(&g, 0.25);
        if (residual < 1e-9)
            break;
    }
    printf("heat: n=%d sweeps=%ld residual=%.6e checksum=%.6f\n", n, sweeps, residual,
           checksum(&g));
    free(g.cur);
    free(g.next);
    return 0;
}
