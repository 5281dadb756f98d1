/* The access view's bandwidth test (check_access.sh): four kernels over
 * three arrays, as in STREAM.  Per element, copy reads a and writes c,
 * scale reads c and writes b, add reads a and b and writes c, triad reads
 * b and c and writes a: 10 touches, of which a has 3, b 3 and c 4, and 4
 * writes, of which c has 2.  check_access.sh names the kernels' lines. */
#include <stdio.h>
#include <stdlib.h>

#define N (1L << 20)
static double a[N], b[N], c[N];

static void copy(double *dst, const double *src, long n)
{
    for (long i = 0; i < n; i++)
        dst[i] = src[i];
}

static void scale(double *dst, const double *src, double s, long n)
{
    for (long i = 0; i < n; i++)
        dst[i] = s * src[i];
}

static void add(double *dst, const double *x, const double *y, long n)
{
    for (long i = 0; i < n; i++)
        dst[i] = x[i] + y[i];
}

static void triad(double *dst, const double *x, const double *y, double s, long n)
{
    for (long i = 0; i < n; i++)
        dst[i] = x[i] + s * y[i];
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 40;
    for (long i = 0; i < N; i++)
        a[i] = 1.0, b[i] = 2.0, c[i] = 0.0;
    for (int r = 0; r < reps; r++) {
        copy(c, a, N);
        scale(b, c, 0.5, N);
        add(c, a, b, N);
        triad(a, b, c, 0.5, N);
    }
    printf("%.3f %.3f %.3f\n", a[N - 1], b[N - 1], c[N - 1]);
    return 0;
}
