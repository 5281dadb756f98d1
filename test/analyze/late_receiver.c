/* Late receiver: rank 0 sends each block of `outbox` synchronously
 * (MPI_Ssend) at once, and rank 1 computes before it posts the receive, so
 * rank 0 waits in MPI_Ssend for every block. */
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
    double *outbox = calloc(N, sizeof *outbox), *work = calloc(N, sizeof *work);
    for (int b = 0; b < blocks; b++) {
        if (rank == 0) {
            MPI_Ssend(outbox, 1000, MPI_DOUBLE, 1, b, MPI_COMM_WORLD);
        } else if (rank == 1) {
            compute(work, 150);
            MPI_Recv(work, 1000, MPI_DOUBLE, 0, b, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    if (rank == 1)
        printf("%.3f\n", work[7]);
    free(outbox);
    free(work);
    MPI_Finalize();
    return 0;
}
