/* Late sender: rank 0 computes each block of `work` before sending it, and
 * rank 1 posts its receive into `inbox` at once, so it waits in MPI_Recv
 * for every block. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define N 100000

static void compute(double *work, long reps)
{
    for (long r = 0; r < reps; r++)
        for (int i = 0; i < N; i++)
            work[i] = work[i] * 0.5 + (double)(i % 13) / (1.0 + work[i]);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int blocks = argc > 1 ? atoi(argv[1]) : 20;
    double *work = calloc(N, sizeof *work), *inbox = calloc(N, sizeof *inbox);
    for (int b = 0; b < blocks; b++) {
        if (rank == 0) {
            compute(work, 150);
            MPI_Send(work, 1000, MPI_DOUBLE, 1, b, MPI_COMM_WORLD);
        } else if (rank == 1) {
            MPI_Recv(inbox, 1000, MPI_DOUBLE, 0, b, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    if (rank == 1)
        printf("%.3f\n", inbox[7]);
    free(work);
    free(inbox);
    MPI_Finalize();
    return 0;
}
