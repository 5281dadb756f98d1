/* A 2-D heat solver, decomposed by rows over the ranks, whose halo rows
 * travel by MPI-3 one-sided communication: each rank exposes a window
 * (`halo.rows`, from MPI_Win_allocate) that its neighbours put their
 * boundary rows into, between fences.  A second window, over a struct's
 * fields (`monitor.progress` and the table after it, MPI_Win_create),
 * is made on every rank (lock mode uses rank 0's).  The mode, the first argument, picks how the
 * one-sided part is written, each with one problem an analysis should find:
 *
 *   good       one put per boundary row per neighbour, fenced: the
 *              baseline
 *   small      one put per element of a boundary row (many tiny puts,
 *              where good sends one message): aggregation
 *   imbalance  rank 0 sweeps its rows three more times per step, the
 *              others once: the others wait in the next step's fence
 *   lock       the ranks relax their blocks on their own (no halo) and
 *              add each step's residual to rank 0's `progress` under an
 *              exclusive lock, computing while holding it: lock contention
 *              on that window
 *   get        the ranks relax their blocks on their own and read the next
 *              rank's weight table element by element, each MPI_Get
 *              completed at once by MPI_Win_flush: a get's latency on the
 *              critical path
 *
 *   mpi_rma_heat MODE [STEPS [NX [ROWS_PER_RANK]]]
 *
 * Prints one checksum on the last rank, which depends on the mode's arithmetic
 * only (not on timing), so plain and instrumented runs print the same. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum mode { MODE_GOOD, MODE_SMALL, MODE_IMBALANCE, MODE_LOCK, MODE_GET };

/* The rank's part of the grid: rows 1..ny, ghost rows 0 and ny + 1. */
struct field {
    int nx, ny;
    double *u, *unew;
};

/* The halo window: rows[0..nx) is the row from the rank below (above the
 * first local row), rows[nx..2nx) the row from the rank above. */
struct halo {
    double *rows;
    MPI_Win win;
    int up, down; /* neighbour ranks, MPI_PROC_NULL at the edges */
};

enum { WEIGHTS = 64 };

/* Rank 0's record of the run, reached by the others through a window. */
struct monitor {
    double progress;         /* sum of the ranks' residuals, on rank 0 */
    double weights[WEIGHTS]; /* a table the ranks read, set before the window */
    MPI_Win win;             /* over progress and weights */
};

static double *row(const struct field *f, double *grid, int y)
{
    return grid + (size_t)y * f->nx;
}

static void field_init(struct field *f, int nx, int ny, int rank)
{
    f->nx = nx;
    f->ny = ny;
    f->u = calloc((size_t)nx * (ny + 2), sizeof *f->u);
    f->unew = calloc((size_t)nx * (ny + 2), sizeof *f->unew);
    if (!f->u || !f->unew) {
        fprintf(stderr, "mpi_rma_heat: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int y = 1; y <= ny; y++)
        for (int x = 0; x < nx; x++)
            row(f, f->u, y)[x] = (x == 0 || x == nx - 1) ? 1.0 : 0.01 * ((rank + y + x) % 7);
}

static void halo_init(struct halo *h, int nx, int rank, int size)
{
    h->up = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
    h->down = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    MPI_Win_allocate(2 * (MPI_Aint)nx * sizeof(double), sizeof(double), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &h->rows, &h->win);
    memset(h->rows, 0, 2 * (size_t)nx * sizeof(double));
}

static void monitor_init(struct monitor *m)
{
    m->progress = 0;
    for (int i = 0; i < WEIGHTS; i++)
        m->weights[i] = 1.0 / (i + 1);
    MPI_Win_create(&m->progress, (1 + WEIGHTS) * sizeof(double), sizeof(double), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &m->win);
}

/* Puts the first and last local rows into the neighbours' halo windows:
 * the first row becomes the lower neighbour's upper halo (offset nx), the
 * last row the upper neighbour's lower halo (offset 0). */
static void exchange(struct halo *h, struct field *f, enum mode mode)
{
    int nx = f->nx;
    double *first = row(f, f->u, 1), *last = row(f, f->u, f->ny);
    MPI_Win_fence(0, h->win); /* site: fence (opens the epoch: who comes late is waited for) */
    if (mode == MODE_SMALL) {
        for (int x = 0; x < nx; x++) {
            if (h->down != MPI_PROC_NULL)
                MPI_Put(&first[x], 1, MPI_DOUBLE, h->down, nx + x, 1, MPI_DOUBLE, h->win);
            if (h->up != MPI_PROC_NULL)
                MPI_Put(&last[x], 1, MPI_DOUBLE, h->up, x, 1, MPI_DOUBLE, h->win);
        }
    } else {
        if (h->down != MPI_PROC_NULL)
            MPI_Put(first, nx, MPI_DOUBLE, h->down, nx, nx, MPI_DOUBLE, h->win);
        if (h->up != MPI_PROC_NULL)
            MPI_Put(last, nx, MPI_DOUBLE, h->up, 0, nx, MPI_DOUBLE, h->win);
    }
    MPI_Win_fence(0, h->win);
    /* The halo window's rows become the ghost rows; the grid's edges keep
     * their boundary value 0. */
    if (h->down != MPI_PROC_NULL)
        memcpy(row(f, f->u, 0), h->rows, (size_t)nx * sizeof(double));
    if (h->up != MPI_PROC_NULL)
        memcpy(row(f, f->u, f->ny + 1), h->rows + nx, (size_t)nx * sizeof(double));
}

/* One Jacobi sweep over the local rows; returns the squared change. */
static double sweep(struct field *f)
{
    double change = 0;
    for (int y = 1; y <= f->ny; y++) {
        const double *above = row(f, f->u, y + 1), *here = row(f, f->u, y),
                     *below = row(f, f->u, y - 1);
        double *out = row(f, f->unew, y);
        out[0] = here[0];
        out[f->nx - 1] = here[f->nx - 1];
        for (int x = 1; x < f->nx - 1; x++) {
            out[x] = 0.25 * (above[x] + below[x] + here[x - 1] + here[x + 1]);
            double d = out[x] - here[x];
            change += d * d;
        }
    }
    double *swap = f->u;
    f->u = f->unew;
    f->unew = swap;
    return change;
}

/* Busy work standing for a sweep's worth of computing, whose result
 * depends on its input only (the imbalanced rank's extra sweeps and the
 * work done under the lock). */
static double extra_work(const struct field *f, int times)
{
    double s = 0;
    for (int t = 0; t < times; t++)
        for (int y = 1; y <= f->ny; y++) {
            const double *here = row(f, f->u, y);
            for (int x = 0; x < f->nx; x++)
                s += here[x] * 1e-9 * (t + 1);
        }
    return s;
}

/* Adds this step's residual into rank 0's progress under an exclusive
 * lock, computing while holding it. */
static double report_progress(struct monitor *m, const struct field *f, double residual)
{
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, m->win); /* site: lock */
    double held = extra_work(f, 2);
    MPI_Accumulate(&residual, 1, MPI_DOUBLE, 0, 0, 1, MPI_DOUBLE, MPI_SUM, m->win);
    MPI_Win_unlock(0, m->win); /* site: unlock */
    return held;
}

/* Reads the next rank's weight table element by element, waiting for
 * each get at once (inside a passive-target epoch the caller opened).
 * Every rank reads another's, so that all pay the same latency. */
static double read_weights(struct monitor *m, int from)
{
    double weight = 0, sum = 0;
    for (int i = 0; i < WEIGHTS; i++) {
        MPI_Get(&weight, 1, MPI_DOUBLE, from, 1 + i, 1, MPI_DOUBLE, m->win); /* site: get */
        MPI_Win_flush(from, m->win);                                         /* site: flush */
        sum += weight;
    }
    return sum;
}

static int parse_mode(const char *text, enum mode *mode)
{
    static const char *const names[] = {"good", "small", "imbalance", "lock", "get"};
    for (int i = 0; i < 5; i++)
        if (!strcmp(text, names[i])) {
            *mode = (enum mode)i;
            return 1;
        }
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    enum mode mode = MODE_GOOD;
    if (argc < 2 || !parse_mode(argv[1], &mode)) {
        if (rank == 0)
            fprintf(stderr,
                    "usage: mpi_rma_heat good|small|imbalance|lock|get [STEPS [NX [ROWS]]]\n");
        MPI_Finalize();
        return 2;
    }
    int steps = argc > 2 ? atoi(argv[2]) : 200;
    int nx = argc > 3 ? atoi(argv[3]) : 512;
    int ny = argc > 4 ? atoi(argv[4]) : 64;
    if (steps < 1 || nx < 3 || ny < 1) {
        if (rank == 0)
            fprintf(stderr, "mpi_rma_heat: STEPS >= 1, NX >= 3, ROWS >= 1\n");
        MPI_Finalize();
        return 2;
    }

    struct field f;
    struct halo halo;
    struct monitor monitor;
    field_init(&f, nx, ny, rank);
    halo_init(&halo, nx, rank, size);
    monitor_init(&monitor);

    /* lock and get: each rank relaxes its block alone, so that the one
     * problem of the mode is the only synchronization. */
    double residual = 0, held = 0, seen = 0;
    if (mode == MODE_GET)
        MPI_Win_lock_all(0, monitor.win);
    for (int step = 0; step < steps; step++) {
        if (mode != MODE_LOCK && mode != MODE_GET)
            exchange(&halo, &f, mode);
        residual = sweep(&f);
        if (mode == MODE_IMBALANCE && rank == 0)
            held += extra_work(&f, 3);
        if (mode == MODE_LOCK)
            held += report_progress(&monitor, &f, residual);
        if (mode == MODE_GET)
            seen += read_weights(&monitor, (rank + 1) % size);
    }
    if (mode == MODE_GET)
        MPI_Win_unlock_all(monitor.win);

    /* The extra work's and the weights' results go into the output, so
     * that no compiler drops them. */
    double local[2] = {0, held + seen}, total[2] = {0, 0};
    for (int y = 1; y <= ny; y++)
        for (int x = 0; x < nx; x++)
            local[0] += row(&f, f.u, y)[x];
    /* The last rank, which the lock serves last, sums and prints: the
     * others hand it their part without waiting for it. */
    MPI_Reduce(local, total, 2, MPI_DOUBLE, MPI_SUM, size - 1, MPI_COMM_WORLD);
    if (rank == size - 1)
        printf("mpi_rma_heat %s: %d ranks, %d steps, sum %.6f, extra %.6f, progress %s\n", argv[1],
               size, steps, total[0], total[1],
               mode == MODE_LOCK && monitor.progress > 0 ? "counted" : "-");
    MPI_Win_free(&monitor.win);
    MPI_Win_free(&halo.win);
    free(f.u);
    free(f.unew);
    MPI_Finalize();
    return 0;
}
