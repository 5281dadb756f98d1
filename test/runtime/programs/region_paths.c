/* One OpenMP region reached from four call paths, over and over in turn:
 * smooth() from step_u(), from step_v() (3x less work) and from two lines
 * of main.  Every path's regions must carry their own spawn context, so
 * that a worker's samples glue to the caller that opened the region: a
 * region's context may be found again by its callers' frame-pointer chain
 * (spawn.c), and two paths must never share one.  The steps are short, as
 * a solver's time steps are, so that most regions reuse a context. */
#include <stdio.h>
#include <stdlib.h>

#define N 20000

static double u[N], v[N];
static volatile double sink;

__attribute__((noinline)) static void smooth(double *x, int reps)
{
#pragma omp parallel for schedule(static)
    for (int i = 1; i < N - 1; i++) {
        double s = x[i];
        for (int r = 0; r < reps; r++)
            s = 0.5 * s + 0.25 * (x[i - 1] + x[i + 1]) * 1e-3;
        x[i] = s;
    }
}

/* Not tail calls: each keeps its frame. */
__attribute__((noinline)) static void step_u(int reps)
{
    smooth(u, 3 * reps);
    sink += u[1];
}

__attribute__((noinline)) static void step_v(int reps)
{
    smooth(v, reps);
    sink += v[1];
}

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 400, reps = 10;
    for (int i = 0; i < N; i++)
        u[i] = v[i] = i % 7;
    for (int s = 0; s < steps; s++) {
        step_u(reps);
        step_v(reps);
        smooth(u, reps);
        sink += u[2];
        smooth(v, reps);
        sink += v[2];
    }
    printf("%.6f %.6f\n", u[N / 2], v[N / 2]);
    return 0;
}
