/* Communication-bound (Coven's rule): two ranks, equal work, each step
 * exchanging a 16 MB halo with MPI_Sendrecv.  Nobody waits (the ranks are
 * in step and the transfer runs at the machine's bandwidth), but a large
 * share of the time goes to moving halo_out: the data volume, not a late
 * partner, is the problem. */
#include <mpi.h>
#include <stdio.h>

#define HALO (2 << 20) /* doubles: 16 MB */
#define CELLS 200000
#define STEPS 24

static double halo_out[HALO], halo_in[HALO], cells[CELLS];

static double relax(int sweeps)
{
    double s = 0;
    for (int k = 0; k < sweeps; k++)
        for (int i = 1; i < CELLS - 1; i++) {
            cells[i] = 0.5 * cells[i] + 0.25 * (cells[i - 1] + cells[i + 1]);
            s += cells[i];
        }
    return s;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = rank ^ 1;
    double check = 0;
    for (int i = 0; i < CELLS; i++)
        cells[i] = (double)(i % 17);
    for (int step = 0; step < STEPS && peer < size; step++) {
        check += relax(16);
        halo_out[step] = check;
        MPI_Sendrecv(halo_out, HALO, MPI_DOUBLE, peer, 0, halo_in, HALO, MPI_DOUBLE, peer, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check += halo_in[step] * 1e-9;
    }
    if (rank == 0)
        printf("%.3f\n", check);
    MPI_Finalize();
    return 0;
}
