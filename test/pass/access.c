/* Accesses (the access view): each location's loads and stores, per
 * variable and field path: SD.nuclide_grid[].total_xs is read in lookup, a
 * parameter's field is read and written in score, memcpy reads one
 * variable and writes another.  Scalar locals (k, xs, i) are registers
 * once optimised and are not counted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nuclide {
    double energy;
    double total_xs;
};
struct simulation {
    long n;
    struct nuclide *nuclide_grid;
    double tally[4];
};

static struct simulation SD;

static double lookup(long k)
{
    double xs = SD.nuclide_grid[k].total_xs;
    return xs;
}

static void score(struct simulation *s, double xs)
{
    s->tally[1] += xs;
}

int main(void)
{
    SD.n = 16;
    SD.nuclide_grid = calloc((size_t)SD.n, sizeof *SD.nuclide_grid);
    for (long i = 0; i < SD.n; i++)
        SD.nuclide_grid[i].total_xs = (double)i;
    for (long i = 0; i < SD.n; i++)
        score(&SD, lookup(i));
    double copy[4];
    memcpy(copy, SD.tally, sizeof copy);
    printf("%.1f\n", copy[1]);
    free(SD.nuclide_grid);
    return 0;
}
