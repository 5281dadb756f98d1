/* lines fixture: OpenMP outlined code (a parallel loop and a task). */
#include <stdio.h>

int main(void)
{
    double a[1000], sum = 0;
    int n = 1000;
#pragma omp parallel for reduction(+ : sum)
    for (int i = 0; i < n; i++) {
        a[i] = i * 0.5;
        sum += a[i];
    }
    int t = 0;
#pragma omp parallel
#pragma omp single
#pragma omp task shared(t)
    t = n * 2;
    printf("%g %d\n", sum, t);
    return 0;
}
