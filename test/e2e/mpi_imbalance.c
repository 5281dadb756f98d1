/* Each rank sweeps its own block `work`; the rank named by argv[2] does 3x
 * the sweeps (argv[2] < 0: balanced).  work@main carries each rank's time,
 * so `ppw-blame imbalance` over the job must name the heavy rank.  The rank
 * named by argv[3], if any, kills itself with SIGKILL once every rank has
 * done its sweeps.
 *
 * The ranks wait for each other in quiet_barrier, which sleeps between
 * polls: a rank waiting inside MPI_Allreduce polls, and on a machine with a
 * core per rank it burns as much CPU time waiting as the heavy rank spends
 * working, so every rank's samples (its total, main) would look alike. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define N 100000

static void quiet_barrier(void)
{
    MPI_Request req;
    int done = 0;
    struct timespec ms = {0, 1000000};
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    for (MPI_Test(&req, &done, MPI_STATUS_IGNORE); !done; MPI_Test(&req, &done, MPI_STATUS_IGNORE))
        nanosleep(&ms, NULL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long sweeps = argc > 1 ? atol(argv[1]) : 400;
    int heavy = argc > 2 ? atoi(argv[2]) : -1;
    if (rank == heavy)
        sweeps *= 3;
    double *work = calloc(N, sizeof *work);
    for (long s = 0; s < sweeps; s++)
        for (int i = 0; i < N; i++)
            work[i] = work[i] * 0.5 + (double)((i + rank) % 13) / (1.0 + work[i]);
    quiet_barrier();
    if (argc > 3 && rank == atoi(argv[3]))
        raise(SIGKILL);
    double local = work[N / 2], total = 0;
    MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d ranks: %.4f\n", size, total);
    free(work);
    MPI_Finalize();
    return 0;
}
