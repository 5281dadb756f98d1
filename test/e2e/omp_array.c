/* An array updated in an OpenMP loop: field is the hot variable. */
#include <stdio.h>
#include <stdlib.h>

#define N 200000

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 3000;
    double *field = calloc(N, sizeof(double));
    double scale = 0.5;
    for (int r = 0; r < reps; r++) {
#pragma omp parallel for
        for (int i = 0; i < N; i++)
            field[i] = field[i] * scale + (double)(i % 13) / (1.0 + field[i]);
    }
    printf("%.4f\n", field[11]);
    free(field);
    return 0;
}
