/* Pointer parameters that are only read are not exit variables, const or
 * not; one that is written through is. */
#include <stdio.h>

double sum(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++)
        s += v[i];
    return s;
}

double peek(double *v)
{
    return v[0] * 2;
}

void scale(double *v, int n, double factor)
{
    for (int i = 0; i < n; i++)
        v[i] *= factor;
}

int main(void)
{
    double data[4] = {1, 2, 3, 4};
    scale(data, 4, 2.0);
    printf("%.1f %.1f\n", sum(data, 4), peek(data));
    return 0;
}
