/* An OpenMP task writing a shared variable: the task body names it, and
 * the task's call record binds the parent's variable to it. */
#include <stdio.h>

int main(void)
{
    int x = 0, n = 41;
#pragma omp parallel
#pragma omp single
    {
#pragma omp task shared(x) firstprivate(n)
        x = n + 1;
#pragma omp taskwait
    }
    printf("%d\n", x);
    return 0;
}
