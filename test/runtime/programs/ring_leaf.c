/* Work whose hot code keeps no frame of its own, for the ring sampler's
 * leaf repair (runtime.ring): the kernel follows frame pointers, which
 * skip the innermost activation of a shrink-wrapped recursion (its loop
 * runs before any push of %rbp) and every caller of a libm or libc leaf
 * built without them; and a callback from such a library, beneath which
 * the saved frame pointer is the library's, not a frame's.
 *
 *   ring_leaf [SCALE]     SCALE 1 (default): about 0.3 s in each part */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096
#define DEPTH 12

static double src[N], dst[N];
static volatile double sink;

/* DEPTH + 1 activations; the last one loops without a frame. */
__attribute__((noinline)) static void recurse(int depth, long units)
{
    if (depth > 0) {
        recurse(depth - 1, units);
        sink += 1; /* not a tail call */
        return;
    }
    double x = 1;
    for (long u = 0; u < units; u++)
        for (int i = 0; i < 20000; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
}

/* Nearly all its time inside exp (libm, no frame pointers). */
__attribute__((noinline)) static void smooth(double *out, const double *in, int reps)
{
    for (int r = 0; r < reps; r++)
        for (int i = 0; i < N; i++)
            out[i] = exp(in[i] * 1e-3 + r * 1e-9);
}

/* Nearly all its time inside memmove (libc, no frame pointers). */
__attribute__((noinline)) static void shift(double *out, const double *in, int reps)
{
    for (int r = 0; r < reps; r++)
        memmove(out, in + (r & 7), (N - 8) * sizeof *out);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* glibc's qsort is a merge sort recursing about 17 deep here, calling
 * by_value at the bottom. */
__attribute__((noinline)) static void sort_keys(int reps)
{
    enum { KEYS = 100000 };
    static double keys[KEYS];
    for (int r = 0; r < reps; r++) {
        for (int i = 0; i < KEYS; i++)
            keys[i] = (double)((i * 7919L + r) % KEYS);
        qsort(keys, KEYS, sizeof keys[0], by_value);
    }
    sink += keys[3];
}

int main(int argc, char **argv)
{
    int scale = argc > 1 ? atoi(argv[1]) : 1;
    for (int i = 0; i < N; i++)
        src[i] = i;
    recurse(DEPTH, 9000L * scale);
    smooth(dst, src, 8000 * scale);
    shift(dst, src, 300000 * scale);
    sort_keys(30 * scale);
#pragma omp parallel
    {
        double local[N];
        smooth(local, src, 10000 * scale);
        sink += local[7];
    }
    printf("%.3f\n", dst[5] + sink * 0);
    return 0;
}
