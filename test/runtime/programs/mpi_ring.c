/* runtime.mpi: 4 ranks, some compute, then a ring exchange; rank 0 prints
 * a deterministic summary. */
#include <mpi.h>
#include <stdio.h>

static double work(int rank, long n)
{
    double s = 0;
    for (long i = 1; i <= n; i++)
        s += (double)((i * (rank + 1)) % 7) / (double)i;
    return s;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    volatile double s = work(rank, 20000000);
    (void)s;
    long token = rank, got = -1, sum = 0;
    for (int round = 0; round < size; round++) {
        MPI_Sendrecv(&token, 1, MPI_LONG, (rank + 1) % size, 1, &got, 1, MPI_LONG,
                     (rank + size - 1) % size, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sum += got;
        token = got;
    }
    long total = 0;
    MPI_Reduce(&sum, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("ranks %d, ring sum %ld, total %ld\n", size, sum, total);
    MPI_Finalize();
    return 0;
}
