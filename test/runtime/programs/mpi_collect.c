/* runtime.mpi_events: point-to-point, non-blocking and collective calls
 * whose events come from libppw's PMPI wrappers (built without the pass)
 * or from the pass (built with ppw-cc): each rank sends to rank+1 with tag
 * 100+rank and receives from rank-1 with tag 100+(rank-1).
 *
 *   mpi_collect [REPEATS]   REPEATS more allreduces of one long at one
 *                           call site (a site that goes quiet when
 *                           throttled), whose sum rank 0 prints */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    long out[3] = {rank, rank * 2, rank * 3}, in[3] = {0, 0, 0};
    if (rank % 2 == 0) {
        MPI_Send(out, 3, MPI_LONG, next, 100 + rank, MPI_COMM_WORLD);
        MPI_Recv(in, 3, MPI_LONG, prev, 100 + prev, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(in, 3, MPI_LONG, prev, 100 + prev, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(out, 3, MPI_LONG, next, 100 + rank, MPI_COMM_WORLD);
    }
    MPI_Request req[2];
    long a = rank, b = -1;
    MPI_Irecv(&b, 1, MPI_LONG, prev, 200, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(&a, 1, MPI_LONG, next, 200, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    long sum = in[0] + b, total = 0;
    MPI_Allreduce(&sum, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    long root = rank == 0 ? 7 : 0;
    MPI_Bcast(&root, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("ranks %d, total %ld, root %ld\n", size, total, root);
    long repeats = argc > 1 ? atol(argv[1]) : 0, one = 1, sum_of_ones = 0, ones = 0;
    for (long i = 0; i < repeats; i++) {
        MPI_Allreduce(&one, &ones, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        sum_of_ones += ones;
    }
    if (rank == 0 && repeats > 0)
        printf("repeats %ld, sum %ld\n", repeats, sum_of_ones);
    MPI_Finalize();
    return 0;
}
