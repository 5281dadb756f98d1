/* A message-heavy MPI kernel for bench/mpi/run: ranks 0 and 1 ping-pong
 * messages of COUNT doubles (argv[2]), and every rank joins a small
 * allreduce every 64 rounds.  Rank 0 prints the loop's own time
 * (MPI_Wtime), so mpirun's start-up does not dilute the ratio. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long rounds = argc > 1 ? atol(argv[1]) : 100000;
    int count = argc > 2 ? atoi(argv[2]) : 4;
    double *payload = calloc(count > 0 ? (size_t)count : 1, sizeof *payload), sum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (long r = 0; r < rounds; r++) {
        if (rank == 0) {
            MPI_Send(payload, count, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(payload, count, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(payload, count, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            payload[0] += 1;
            MPI_Send(payload, count, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD);
        }
        if (r % 64 == 0) {
            double mine = payload[0], all;
            MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            sum += all;
        }
    }
    double seconds = MPI_Wtime() - start;
    if (rank == 0)
        printf("%.6f %.0f\n", seconds, sum);
    free(payload);
    MPI_Finalize();
    return 0;
}
