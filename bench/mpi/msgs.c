/* A message-heavy MPI kernel for bench/mpi/run: ranks 0 and 1 ping-pong
 * messages of COUNT doubles (argv[2]), and every rank joins a small
 * allreduce every 64 rounds.
 *
 *   msgs [ROUNDS [COUNT [CHUNKS]]]
 *
 * Rank 0 prints the loop's own time (MPI_Wtime), so mpirun's start-up does
 * not dilute the ratio: "<best> <sum> <total>", where total is the whole
 * loop's seconds and best is the fastest of CHUNKS equal slices of it
 * (ROUNDS / CHUNKS rounds each) times CHUNKS.  Two ranks that poll for
 * messages on a shared 2-core machine wait whole scheduler slices whenever
 * a third process runs; the fastest slice is the loop's speed when nothing
 * else ran. */
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
    long chunks = argc > 3 ? atol(argv[3]) : 1;
    if (chunks < 1 || chunks > rounds)
        chunks = 1;
    long per_chunk = rounds / chunks; /* rounds is cut to a multiple of chunks */
    double *payload = calloc(count > 0 ? (size_t)count : 1, sizeof *payload), sum = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime(), best = -1;
    for (long c = 0; c < chunks; c++) {
        double chunk_start = MPI_Wtime();
        for (long r = c * per_chunk; r < (c + 1) * per_chunk; r++) {
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
        double took = MPI_Wtime() - chunk_start;
        if (best < 0 || took < best)
            best = took;
    }
    if (rank == 0)
        printf("%.6f %.0f %.6f\n", best * (double)chunks, sum, MPI_Wtime() - start);
    free(payload);
    MPI_Finalize();
    return 0;
}
