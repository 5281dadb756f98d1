/* Many small transfers: rank 0 sends `values` one double at a time
 * (MPI_Send in a loop) where one message of all of them would do. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int count = argc > 1 ? atoi(argv[1]) : 200000;
    double *values = calloc((size_t)count, sizeof *values);
    for (int i = 0; i < count && rank == 0; i++)
        values[i] = (double)(i % 17);
    for (int i = 0; i < count; i++) {
        if (rank == 0)
            MPI_Send(&values[i], 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
        else if (rank == 1)
            MPI_Recv(&values[i], 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    if (rank == 1)
        printf("%.1f\n", values[count - 1]);
    free(values);
    MPI_Finalize();
    return 0;
}
