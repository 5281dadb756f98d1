/* Field paths through a pointer parameter: g->cells[].energy is a child of
 * g->cells, which is a child of g. */
#include <stdio.h>
#include <stdlib.h>

struct cell { double energy; int visits; };
struct grid { int ncells; struct cell *cells; };

void heat(struct grid *g, double amount)
{
    for (int i = 0; i < g->ncells; i++)
        g->cells[i].energy += amount * (i + 1);
}

int main(void)
{
    struct grid g;
    g.ncells = 8;
    g.cells = calloc(8, sizeof *g.cells);
    heat(&g, 0.5);
    printf("%.2f\n", g.cells[7].energy);
    free(g.cells);
    return 0;
}
