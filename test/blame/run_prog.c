/* A short run for ppw-blame's run-directory input: a struct's field updated
 * through a pointer parameter carries the time.  Built with -DOTHER it is
 * another build of the same program. */
#include <stdio.h>
#include <stdlib.h>

struct grid {
    int n;
    double *cells;
};

static void relax(struct grid *g, int iter)
{
    for (int i = 1; i < g->n; i++)
        g->cells[i] = 0.5 * (g->cells[i] + g->cells[i - 1]) + iter * 1e-9;
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 300;
    struct grid g = {200000, NULL};
    g.cells = calloc((size_t)g.n, sizeof *g.cells);
    for (int r = 0; r < reps; r++)
        relax(&g, r);
#ifdef OTHER
    printf("other build\n");
#endif
    printf("%.3f\n", g.cells[g.n - 1]);
    free(g.cells);
    return 0;
}
