/* Every MPI-3 one-sided call libppw wraps, each a known number of times on
 * every rank, in the epochs a halo exchange and a shared counter use:
 *
 *   halo window (MPI_Win_allocate, N doubles a rank):
 *     fence | MPI_Put my row into the right neighbour's halo | fence
 *           | MPI_Get the left neighbour's halo | fence
 *           | MPI_Accumulate my row into the right neighbour's halo | fence
 *     post/start (left and right) | MPI_Put | complete/wait
 *     lock_all | MPI_Rput, MPI_Rget on other ranks' halos + MPI_Wait each,
 *              MPI_Raccumulate, MPI_Rget_accumulate + MPI_Waitall | flush_all,
 *              flush_local_all | unlock_all
 *   counter window (MPI_Win_create over one long on every rank; rank 0's
 *   counts):
 *     lock(exclusive, 0) | MPI_Fetch_and_op +1 | flush(0) | flush_local(0)
 *                        | unlock(0)
 *     lock_all | MPI_Compare_and_swap | MPI_Get_accumulate (MPI_NO_OP: an
 *              atomic read) | flush_all | unlock_all
 *   MPI_Win_free both.
 *
 * Prints one line on rank 0 whose numbers follow from the ranks' rows
 * alone, so that a plain and an instrumented run print the same. */
#include <mpi.h>
#include <stdio.h>

#define N 64

static double row[N], got[N], got2[N], acc_old[N];

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < N; i++)
        row[i] = rank * 1000.0 + i;

    double *halo;
    MPI_Win win;
    MPI_Win_allocate(N * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &halo,
                     &win);
    for (int i = 0; i < N; i++)
        halo[i] = 0;

    /* Active target, fences: halo = left's row, then + left's row again. */
    MPI_Win_fence(0, win);
    MPI_Put(row, N, MPI_DOUBLE, right, 0, N, MPI_DOUBLE, win); /* site: put_fence */
    MPI_Win_fence(0, win);
    MPI_Get(got, N, MPI_DOUBLE, left, 0, N, MPI_DOUBLE, win); /* left's halo: row of left-1 */
    MPI_Win_fence(0, win);
    MPI_Accumulate(row, N, MPI_DOUBLE, right, 0, N, MPI_DOUBLE, MPI_SUM, win);
    MPI_Win_fence(0, win);

    /* Generalized active target: halo = left's row once more. */
    MPI_Group world, neighbours;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int ranks[2] = {left, right};
    MPI_Group_incl(world, left == right ? 1 : 2, ranks, &neighbours);
    MPI_Win_post(neighbours, 0, win);
    MPI_Win_start(neighbours, 0, win);
    MPI_Put(row, N, MPI_DOUBLE, right, 0, N, MPI_DOUBLE, win); /* site: put_pscw */
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Passive target, request-based: reads of the right neighbour's halo
     * past its first three elements (its left's row: mine), writes to
     * those three of my own halo, which no other rank reads in this epoch. */
    MPI_Request req[2];
    MPI_Win_lock_all(0, win);
    MPI_Rget(got2 + 3, N - 3, MPI_DOUBLE, right, 3, N - 3, MPI_DOUBLE, win, &req[0]);
    MPI_Wait(&req[0], MPI_STATUS_IGNORE);
    MPI_Win_flush_all(win);
    MPI_Rput(&row[1], 1, MPI_DOUBLE, rank, 0, 1, MPI_DOUBLE, win, &req[0]);
    MPI_Wait(&req[0], MPI_STATUS_IGNORE);
    MPI_Win_flush_local_all(win);
    MPI_Raccumulate(&row[1], 1, MPI_DOUBLE, rank, 1, 1, MPI_DOUBLE, MPI_SUM, win, &req[0]);
    MPI_Rget_accumulate(NULL, 0, MPI_DOUBLE, acc_old, 1, MPI_DOUBLE, rank, 2, 1, MPI_DOUBLE,
                        MPI_NO_OP, win, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* A counter on rank 0, window over a variable. */
    long counter = 0, one = 1, old = -1, swap_in = 100, compare = -1, result = -1, now = -1;
    MPI_Win counter_win;
    MPI_Win_create(&counter, sizeof counter, sizeof counter, MPI_INFO_NULL, MPI_COMM_WORLD,
                   &counter_win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, counter_win);
    MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, counter_win);
    MPI_Win_flush(0, counter_win);
    MPI_Win_flush_local(0, counter_win);
    MPI_Win_unlock(0, counter_win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, counter_win);
    /* never swaps: the counter is `size`, not -1 */
    MPI_Compare_and_swap(&swap_in, &compare, &result, MPI_LONG, 0, 0, counter_win); /* site: cas */
    MPI_Get_accumulate(NULL, 0, MPI_LONG, &now, 1, MPI_LONG, 0, 0, 1, MPI_LONG, MPI_NO_OP,
                       counter_win);
    MPI_Win_flush_all(counter_win);
    MPI_Win_unlock_all(counter_win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* halo[3..] holds left's row (the accumulate doubled the first put's,
     * the PSCW put replaced it; the request epoch touched halo[0..2]);
     * got holds left-1's row, got2[3..] my own row. */
    double check = 0;
    for (int i = 3; i < N; i++)
        check += halo[i] - (left * 1000.0 + i);
    for (int i = 0; i < N; i++)
        check += got[i] - (((left + size - 1) % size) * 1000.0 + i);
    for (int i = 3; i < N; i++)
        check += got2[i] - row[i];
    double all;
    MPI_Reduce(&check, &all, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Group_free(&neighbours);
    MPI_Group_free(&world);
    MPI_Win_free(&counter_win);
    MPI_Win_free(&win);
    if (rank == 0)
        printf("rma: ranks %d, counter %ld, mismatches %g, swap result %ld, atomic read %ld\n",
               size, counter, all, result, now);
    MPI_Finalize();
    return 0;
}
