/* A call chain five levels deep, as a solver library's layers are: the
 * work is at the bottom (a smoothing sweep over a grid), and its results
 * travel up by return values and out-parameters: level 5 returns a norm
 * and writes the grid through a pointer, level 4 returns a scaled copy,
 * level 3 stores it into a struct's field through a pointer, level 2
 * returns that field, level 1 writes it through an out-parameter, and
 * main derives its convergence figure from it.  Used by
 * test/programs/check_programs.sh, which states the expected answers.
 *
 *   chain [SWEEPS] [N]     (defaults 240 sweeps of a 400 x 400 grid)
 *
 * Work: smooth() (level 5) does all of it but the allocation and the
 * initial fill (1 / SWEEPS of a sweep's work, 0.4%). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

struct grid {
    int n;
    double *cells; /* n x n */
    double *next;
};

struct sweep_result {
    double residual;
    int sweeps;
};

/* Level 5: one Jacobi sweep over the interior; returns the change's norm. */
static double smooth(struct grid *g)
{
    int n = g->n;
    double change = 0;
#pragma omp parallel for reduction(+ : change)
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++) {
            double v = 0.25 * (g->cells[(i - 1) * n + j] + g->cells[(i + 1) * n + j] +
                               g->cells[i * n + j - 1] + g->cells[i * n + j + 1]);
            double d = v - g->cells[i * n + j];
            g->next[i * n + j] = v;
            change += d * d;
        }
    double *t = g->cells;
    g->cells = g->next;
    g->next = t;
    return sqrt(change);
}

/* Level 4: the sweep's norm, scaled by the grid size. */
static double scaled_sweep(struct grid *g)
{
    double norm = smooth(g);
    return norm / (double)(g->n * g->n);
}

/* Level 3: the scaled norm stored into the result's field. */
static void sweep_into(struct grid *g, struct sweep_result *result)
{
    result->residual = scaled_sweep(g);
    result->sweeps++;
}

/* Level 2: a result of its own, returned by value of its field. */
static double sweep_once(struct grid *g, int *count)
{
    struct sweep_result result = {0, *count};
    sweep_into(g, &result);
    *count = result.sweeps;
    return result.residual;
}

/* Level 1: the residual written through an out-parameter. */
static void relax(struct grid *g, int *count, double *residual)
{
    *residual = sweep_once(g, count);
}

static void grid_init(struct grid *g, int n)
{
    g->n = n;
    g->cells = calloc((size_t)n * n, sizeof *g->cells);
    g->next = calloc((size_t)n * n, sizeof *g->next);
    for (int i = 0; i < n; i++) {
        g->cells[i] = 1.0;              /* a hot top edge */
        g->next[i] = 1.0;
        g->cells[(n - 1) * n + i] = 0.0; /* a cold bottom edge */
    }
}

int main(int argc, char **argv)
{
    int sweeps = argc > 1 ? atoi(argv[1]) : 240;
    int n = argc > 2 ? atoi(argv[2]) : 400;
    struct grid g;
    grid_init(&g, n);
    int count = 0;
    double residual = 0, history = 0;
    for (int s = 0; s < sweeps; s++) {
        relax(&g, &count, &residual);
        history = 0.9 * history + 0.1 * residual; /* a smoothed convergence figure */
    }
    printf("sweeps %d residual %.6e history %.6e centre %.6f\n", count, residual, history,
           g.cells[(n / 2) * n + n / 2]);
    free(g.cells);
    free(g.next);
    return 0;
}
