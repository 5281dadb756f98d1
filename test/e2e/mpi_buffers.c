/* MPI buffers under the blame rules: a receive writes its buffer, a
 * collective writes its output from its input.  Rank 0 sends a large
 * array to rank 1 many times (rank 1's time in MPI_Recv is blamed to
 * halo), then every rank reduces a large vector (time in MPI_Allreduce is
 * blamed to global, computed from local). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define COUNT (1 << 20)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 150;
    double *halo = calloc(COUNT, sizeof *halo);
    double *local = malloc(COUNT * sizeof *local);
    double *global = calloc(COUNT, sizeof *global);
    for (int i = 0; i < COUNT; i++)
        local[i] = (double)(i % 17) + rank;
    for (int r = 0; r < rounds && size > 1; r++) {
        if (rank == 0)
            MPI_Send(local, COUNT, MPI_DOUBLE, 1, r, MPI_COMM_WORLD);
        else if (rank == 1)
            MPI_Recv(halo, COUNT, MPI_DOUBLE, 0, r, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    for (int r = 0; r < rounds / 3; r++)
        MPI_Allreduce(local, global, COUNT, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 1)
        printf("%.1f %.1f\n", halo[COUNT - 1], global[COUNT / 2]);
    free(halo);
    free(local);
    free(global);
    MPI_Finalize();
    return 0;
}
