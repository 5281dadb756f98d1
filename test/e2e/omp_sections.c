/* Two sections, each accumulating one field of result: every sample in
 * either section computes part of result, the only variable both share. */
#include <stdio.h>
#include <stdlib.h>

struct result {
    double even;
    double odd;
};

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000000000L;
    struct result result = {0, 0};
#pragma omp parallel sections
    {
#pragma omp section
        {
            double acc = 0;
            for (long i = 0; i < n; i += 2)
                acc += (double)(i % 7) / (1.0 + (double)(i & 1023));
            result.even = acc;
        }
#pragma omp section
        {
            double acc = 0;
            for (long i = 1; i < n; i += 2)
                acc += (double)(i % 5) / (1.0 + (double)(i & 511));
            result.odd = acc;
        }
    }
    printf("%.3f\n", result.even + result.odd);
    return 0;
}
