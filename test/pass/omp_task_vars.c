/* OpenMP tasks with two shared variables and a firstprivate pointer: each
 * shared is named at its own offset in the task's shareds (not all at the
 * first), and the pointer copied into the task binds to the parent's
 * pointer, whose data the task writes. */
#include <stdio.h>

int main(void)
{
    int first = 40, second = 0;
    int data[4] = {0};
    int *p = data;
#pragma omp parallel
#pragma omp single
    {
#pragma omp task shared(first, second)
        second = first + 2;
#pragma omp task firstprivate(p)
        p[1] = 7;
#pragma omp taskwait
    }
    printf("%d %d\n", second, data[1]);
    return 0;
}
