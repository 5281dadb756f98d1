/* Double buffering: writes through g->next reach both buffers once they
 * are swapped, but never the temporary pointer used for the swap. */
#include <stdio.h>

struct grid { int n; double *cur, *next; };

void step(struct grid *g)
{
    for (int i = 1; i < g->n; i++)
        g->next[i] = g->cur[i] * 2;
    double *t = g->cur;
    g->cur = g->next;
    g->next = t;
}

int main(void)
{
    double a[4] = {1, 2, 3, 4}, b[4] = {0};
    struct grid g = {4, a, b};
    step(&g);
    step(&g);
    printf("%.1f %.1f\n", g.cur[3], g.next[3]);
    return 0;
}
