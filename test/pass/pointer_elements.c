/* Arrays of pointers subscripted by constants (issue 17, 2b): each element
 * is its own datum, named as the source spells the subscript: a macro, an
 * enumerator, or a number.  A subscript that is a variable stays one
 * datum, even where -O2 unrolls the loop into constant positions. */
#include <stdio.h>
#include <stdlib.h>

#define VEC_U 1
#define VEC_F 2
enum coefficient { COEF_A = 3, COEF_B, NVECS };

struct level {
    int n;
    double **vectors;     /* NVECS grids, allocated on the heap */
    double *fixed[NVECS]; /* the same, in the struct */
};

double relax(struct level *lv)
{
    double change = 0;
    for (int i = 0; i < lv->n; i++) {
        double next = lv->vectors[VEC_F][i] * lv->vectors[COEF_A][i] + lv->vectors[ 0 ][i];
        change += next - lv->vectors[VEC_U][i];
        lv->vectors[VEC_U][i] = next;
        lv->fixed[COEF_B][i] += lv->fixed[2][i];
    }
    return change;
}

double norm(struct level *lv)
{
    double sum = 0;
    for (int v = 0; v < NVECS; v++)
        for (int i = 0; i < lv->n; i++)
            sum += lv->vectors[v][i];
    return sum;
}

int main(void)
{
    struct level lv;
    lv.n = 64;
    lv.vectors = malloc(NVECS * sizeof *lv.vectors);
    for (int v = 0; v < NVECS; v++) {
        lv.vectors[v] = malloc((size_t)lv.n * sizeof(double));
        lv.fixed[v] = malloc((size_t)lv.n * sizeof(double));
        for (int i = 0; i < lv.n; i++)
            lv.vectors[v][i] = lv.fixed[v][i] = 1.0 / (v + i + 1);
    }
    double change = relax(&lv);
    printf("%.6f %.6f\n", change, norm(&lv));
    for (int v = 0; v < NVECS; v++) {
        free(lv.vectors[v]);
        free(lv.fixed[v]);
    }
    free(lv.vectors);
    return 0;
}
