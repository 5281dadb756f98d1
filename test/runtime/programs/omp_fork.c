/* OpenMP regions as libppw's __kmpc_fork_call takes them without OMPT
 * (runtime/omp_fork.c), each shape it must pass through unchanged:
 *   wide_step    a region whose body takes 20 shared arguments (more than
 *                the stand-in's switch: libomp's __kmp_invoke_microtask)
 *   nested_step  a region with no argument at all (globals only), opening
 *                a nested region on each of its threads
 *   serial_step  main alone between the regions, in its own context: the
 *                ring sampler reads its samples later, most often inside
 *                the next region, and must not give them that region's
 *   errno        set before a region, printed after it
 * Built with -DWITH_TASK it also creates explicit tasks, which need OMPT.
 *
 *   omp_fork [STEPS]   prints checksums; STEPS defaults to 40 */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4096

static double g[N];
static volatile double sink;

/* 20 arrays and scalars of the caller's, all shared: the outlined body
 * takes each as an argument. */
__attribute__((noinline)) static void wide_step(double *a0, double *a1, double *a2, double *a3,
                                                double *a4, int reps)
{
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0, s4 = 0, s5 = 0, s6 = 0, s7 = 0, s8 = 0, s9 = 0;
    double c0 = 1e-3, c1 = 2e-3, c2 = 3e-3, c3 = 4e-3;
#pragma omp parallel for schedule(static) reduction(+ : s0)
    for (int i = 1; i < N - 1; i++) {
        double x = a0[i];
        for (int r = 0; r < reps; r++)
            x = 0.5 * x + c0 * a1[i] + c1 * a2[i] + c2 * a3[i - 1] + c3 * a4[i + 1];
        a0[i] = x;
        s0 += x;
        s1 += 1, s2 += 1, s3 += 1, s4 += 1, s5 += 1, s6 += 1, s7 += 1, s8 += 1, s9 += 1;
    }
    sink += s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7 + s8 + s9;
}

__attribute__((noinline)) static void nested_step(int reps)
{
#pragma omp parallel num_threads(2)
    {
        int outer = omp_get_thread_num();
#pragma omp parallel for num_threads(2) schedule(static)
        for (int i = outer; i < N; i += 2) {
            double x = g[i];
            for (int r = 0; r < reps; r++)
                x = 0.5 * x + 1e-3;
            g[i] = x;
        }
    }
}

__attribute__((noinline)) static void serial_step(const double *a, int reps)
{
    double s = 0;
    for (int i = 0; i < N; i++) {
        double x = a[i];
        for (int r = 0; r < reps; r++)
            x = 0.5 * x + 1e-3;
        s += x;
    }
    sink += s;
}

#ifdef WITH_TASK
static void tasks(void)
{
#pragma omp parallel
#pragma omp single
    for (int i = 0; i < 8; i++) {
#pragma omp task firstprivate(i)
        g[i] += i;
    }
}
#endif

int main(int argc, char **argv)
{
    int steps = argc > 1 ? atoi(argv[1]) : 40;
    static double a[5][N];
    for (int k = 0; k < 5; k++)
        for (int i = 0; i < N; i++)
            a[k][i] = (i + k) % 11;
    for (int i = 0; i < N; i++)
        g[i] = i % 5;
    omp_set_max_active_levels(2);
    for (int s = 0; s < steps; s++) {
        wide_step(a[0], a[1], a[2], a[3], a[4], 300);
        serial_step(a[1], 300);
        nested_step(300);
    }
#ifdef WITH_TASK
    tasks();
#endif
    errno = 42;
#pragma omp parallel
    sink += 1;
    int after = errno;
    printf("%.6f %.6f errno %d\n", a[0][N / 2], g[N / 3], after);
    return 0;
}
