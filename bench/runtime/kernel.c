/* Compute kernel: a 2-D Jacobi stencil with a residual, ~1 s at -O2.  The
 * "default instrumentation" case: few calls, some malloc/free. */
#include <stdio.h>
#include <stdlib.h>

#define N 1024

static void relax(const double *in, double *out)
{
    for (int i = 1; i < N - 1; i++)
        for (int j = 1; j < N - 1; j++)
            out[i * N + j] = 0.25 * (in[(i - 1) * N + j] + in[(i + 1) * N + j] +
                                     in[i * N + j - 1] + in[i * N + j + 1]);
}

static double residual(const double *a, const double *b)
{
    double r = 0;
    for (int i = 0; i < N * N; i++)
        r += (a[i] - b[i]) * (a[i] - b[i]);
    return r;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 1000;
    double *a = calloc(N * N, sizeof(double)), *b = calloc(N * N, sizeof(double));
    for (int i = 0; i < N; i++)
        a[i] = b[i] = 1.0;
    double r = 0;
    for (int it = 0; it < iters; it++) {
        relax(a, b);
        relax(b, a);
        if (it % 50 == 0)
            r = residual(a, b);
    }
    printf("%.6e\n", r);
    free(a);
    free(b);
    return 0;
}
