/* A loop of malloc and free, which the pass surrounds with GASP probes:
 * run with probes that are never throttled, most of its samples are in
 * libppw's measurement, which the user views leave out
 * (check_run.sh, "libppw's frames"). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 300000;
    double sum = 0;
    for (long i = 0; i < n; i++) {
        double *p = malloc(sizeof *p);
        *p = (double)i;
        sum += *p;
        free(p);
    }
    printf("%.0f\n", sum);
    return 0;
}
