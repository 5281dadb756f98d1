/* ppw-calibrate-mpi: the MPI part of `ppw-blame calibrate`, run by it as
 * `mpirun -np 2 ppw-calibrate-mpi`.  Ping-pong between ranks 0 and 1 with
 * 8-byte and 64 KiB messages; rank 0 prints, in nanoseconds,
 *
 *   latency_ns <half the undisturbed round trip of 8 bytes>
 *   ns_per_byte <(half the 64 KiB round trip - the latency) / (65536 - 8)>
 *   fence_ns <an MPI_Win_fence of both ranks on an 8-byte window>
 *   rma_ns <an 8-byte MPI_Get from rank 1 completed by MPI_Win_flush>
 *
 * (the last two: what one-sided synchronization costs when nobody waits,
 * for the one-sided patterns of `ppw-blame analyze`; printed after the
 * others, and left out when the MPI's windows fail).
 * A baseline is what a message costs when nobody waits, so each is the
 * fastest of single round trips after a warm-up: on a busy machine most
 * round trips include a rank's wait for a CPU (the median was 2 to 6 ms
 * under a load of 8 on 2 cores, against 0.3 us quiet; even the 10th
 * percentile of the 8-byte trips once came out above the 64 KiB ones'),
 * and a few do not.  Exit status 1 on a wrong rank count. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum { SMALL = 8, LARGE = 64 * 1024, WARMUP = 20, SMALL_REPS = 401, LARGE_REPS = 101 };

/* The undisturbed (fastest) round trip of `bytes`, in ns, on rank 0 (0
 * elsewhere). */
static double round_trip(int rank, char *buf, int bytes, int reps)
{
    double fastest = 0;
    for (int i = -WARMUP; i < reps; i++) {
        double start = MPI_Wtime();
        if (rank == 0) {
            MPI_Send(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, bytes, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, bytes, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
        double trip = (MPI_Wtime() - start) * 1e9;
        if (i == 0 || (i > 0 && trip < fastest))
            fastest = trip;
    }
    return fastest;
}

/* The undisturbed (fastest) fence and get + flush, in ns, on rank 0. */
static void one_sided(int rank, double *fence_ns, double *rma_ns)
{
    double *base;
    MPI_Win win;
    *fence_ns = *rma_ns = 0;
    /* An MPI without working windows costs these two numbers, not the run. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (MPI_Win_allocate(sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                         &win) != MPI_SUCCESS)
        return;
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    *base = rank;
    for (int i = -WARMUP; i < SMALL_REPS; i++) {
        double start = MPI_Wtime();
        MPI_Win_fence(0, win);
        double ns = (MPI_Wtime() - start) * 1e9;
        if (i == 0 || (i > 0 && ns < *fence_ns))
            *fence_ns = ns;
    }
    /* Rank 1 makes progress for rank 0's passive-target gets in the barrier. */
    MPI_Win_lock_all(0, win);
    if (rank == 0) {
        double value;
        for (int i = -WARMUP; i < SMALL_REPS; i++) {
            double start = MPI_Wtime();
            MPI_Get(&value, 1, MPI_DOUBLE, 1, 0, 1, MPI_DOUBLE, win);
            MPI_Win_flush(1, win);
            double ns = (MPI_Wtime() - start) * 1e9;
            if (i == 0 || (i > 0 && ns < *rma_ns))
                *rma_ns = ns;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "ppw-calibrate-mpi: run it on 2 ranks, not %d\n", size);
        MPI_Finalize();
        return 1;
    }
    static char buf[LARGE];
    memset(buf, 1, sizeof buf);
    double small = round_trip(rank, buf, SMALL, SMALL_REPS);
    double large = round_trip(rank, buf, LARGE, LARGE_REPS);
    if (rank == 0) {
        double latency = small / 2, per_byte = (large / 2 - latency) / (LARGE - SMALL);
        printf("latency_ns %.1f\nns_per_byte %.6f\n", latency, per_byte > 0 ? per_byte : 0);
        fflush(stdout); /* kept if the one-sided part fails */
    }
    double fence, rma;
    one_sided(rank, &fence, &rma);
    if (rank == 0 && fence > 0 && rma > 0)
        printf("fence_ns %.1f\nrma_ns %.1f\n", fence, rma);
    MPI_Finalize();
    return 0;
}
