/* Allocation-heavy kernel: what an AMR or graph code does to the heap.
 * Each OpenMP thread refines its share of cells every step: a cell
 * splits into a short linked list of small child nodes (one malloc each),
 * gets a scratch stencil buffer, and everything is
 * freed again when the step coarsens back.  Five allocation sites (malloc,
 * calloc, realloc, free) inside `omp parallel for`, a few tens of
 * nanoseconds of arithmetic per block: 19 calls per cell and step, 38M
 * calls (19M malloc/free pairs) in 100 steps, about half a second.
 *
 *   alloc [STEPS]     STEPS defaults to 100; prints a checksum */
#include <stdio.h>
#include <stdlib.h>

#define CELLS 20000
#define CHILDREN 8

struct node {
    struct node *next;
    double value[6];
};

struct cell {
    double density;
    struct node *children;
};

/* A cell's refinement: a list of CHILDREN nodes, each carrying part of
 * the density (site 1: malloc of a small fixed-size node). */
static struct node *refine(const struct cell *c)
{
    struct node *head = NULL;
    for (int k = 0; k < CHILDREN; k++) {
        struct node *n = malloc(sizeof *n);
        if (!n)
            abort();
        for (int v = 0; v < 6; v++)
            n->value[v] = c->density * (k + 1) / (v + 2);
        n->next = head;
        head = n;
    }
    return head;
}

/* Sums the children with a scratch stencil (site 2: calloc; site 3:
 * realloc to grow it once) and frees the list (site 4: free). */
static double coarsen(struct node *head)
{
    double *stencil = calloc(4, sizeof *stencil);
    double *grown = stencil ? realloc(stencil, 12 * sizeof *stencil) : NULL;
    if (!grown)
        abort();
    for (int i = 4; i < 12; i++)
        grown[i] = 0;
    double sum = 0;
    int k = 0;
    while (head) {
        struct node *next = head->next;
        grown[k++ % 12] += head->value[0] - head->value[5];
        sum += head->value[1];
        free(head);
        head = next;
    }
    for (int i = 0; i < 12; i++)
        sum += grown[i];
    free(grown); /* site 5 */
    return sum;
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 100;
    struct cell *cells = calloc(CELLS, sizeof *cells);
    if (!cells)
        return 1;
    for (int i = 0; i < CELLS; i++)
        cells[i].density = 1.0 + (i % 17) * 0.125;
    double total = 0;
    for (int s = 0; s < steps; s++) {
#pragma omp parallel for reduction(+ : total) schedule(static)
        for (int i = 0; i < CELLS; i++) {
            cells[i].children = refine(&cells[i]);
            total += coarsen(cells[i].children) + (i ^ s) * 1e-9;
            cells[i].children = NULL;
        }
    }
    printf("checksum %.6f\n", total);
    free(cells);
    return 0;
}
