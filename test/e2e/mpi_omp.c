/* Hybrid MPI + OpenMP: every rank updates its block `field` in an OpenMP
 * parallel loop, then the ranks reduce a checksum.  field@main is hot on
 * every rank and thread; worker samples reach main through the parallel
 * region's spawn. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 200000

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int reps = argc > 1 ? atoi(argv[1]) : 800;
    double *field = calloc(N, sizeof *field);
    for (int r = 0; r < reps; r++) {
#pragma omp parallel for
        for (int i = 0; i < N; i++)
            field[i] = field[i] * 0.5 + (double)((i + rank) % 13) / (1.0 + field[i]);
    }
    double local = field[11], total = 0;
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%.4f\n", total);
    free(field);
    MPI_Finalize();
    return 0;
}
