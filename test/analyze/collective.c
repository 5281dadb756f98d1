/* Wait in a collective: rank 0 sweeps its block of `field` 3x longer than
 * the others before every MPI_Allreduce of the step's `norm`, so the other
 * ranks wait in the collective each step. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 100000

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int steps = argc > 1 ? atoi(argv[1]) : 20;
    double *field = calloc(N, sizeof *field), norm = 0;
    for (int s = 0; s < steps; s++) {
        long reps = rank == 0 ? 120 : 40;
        for (long r = 0; r < reps; r++)
            for (int i = 0; i < N; i++)
                field[i] = field[i] * 0.5 + (double)(i % 13) / (1.0 + field[i]);
        double local = field[7];
        MPI_Allreduce(&local, &norm, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf("%.3f\n", norm);
    free(field);
    MPI_Finalize();
    return 0;
}
