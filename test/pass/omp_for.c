/* An OpenMP parallel for: the outlined body's shared variables bind to the
 * parent's locals (fork operand 3+k -> outlined parameter 2+k). */
#include <stdio.h>

int main(void)
{
    double a[1000];
    double sum = 0;
    int n = 1000;
#pragma omp parallel for reduction(+ : sum)
    for (int i = 0; i < n; i++) {
        a[i] = i * 0.5;
        sum += a[i];
    }
    printf("%.1f\n", sum);
    return 0;
}
