/* A 2-D heat solver in OpenSHMEM, decomposed by rows over the PEs.  Each
 * PE's grid lives in the symmetric heap (`field.u`, `field.unew`, from
 * shmem_malloc), so that its neighbours put their boundary rows straight
 * into its ghost rows.  Around the solver sit the other parts of a real
 * SHMEM code: a residual summed with shmem_double_sum_to_all, a step
 * counter on PE 0 bumped with an atomic, a log on PE 0 appended under a
 * SHMEM lock, a token passed down the PEs with shmem_wait_until, and at
 * the end a broadcast, an fcollect and a get.
 *
 * The mode, the first argument, picks how the halo travels:
 *   good   one shmem_double_put per boundary row per neighbour
 *   small  one shmem_double_p per element of the row (many tiny puts,
 *          where good sends one): aggregation
 *   lock   as good, but each PE also relaxes its log entry while holding
 *          the log's lock: lock contention
 *   get    each PE relaxes its block alone (no halo, no per-step
 *          reduction, counter or log, so that the gets are the one
 *          synchronization) and reads the next PE's weight table element
 *          by element, each shmem_double_get_nbi completed at once by
 *          shmem_quiet: a get's latency on the critical path
 *
 *   shmem_heat MODE [STEPS [NX [ROWS_PER_PE]]]
 *
 * Every call happens a number of times fixed by the arguments and the PE
 * (check_shmem.sh derives them).  Each PE prints one line and PE 0 a
 * checksum; the numbers depend on the arithmetic only, not on timing, so
 * plain and instrumented runs print the same lines (in any order). */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum mode { MODE_GOOD, MODE_SMALL, MODE_LOCK, MODE_GET };

/* The PE's part of the grid: rows 1..ny, ghost rows 0 and ny + 1.  Both
 * arrays are symmetric: a neighbour writes into our ghost rows. */
struct field {
    int nx, ny;
    double *u, *unew;
};

enum { LOG_CAPACITY = 4096 };

/* PE 0's log of the run, appended to by every PE under `log_lock`. */
static long log_lock;
static long log_count;
static double log_entries[LOG_CAPACITY];

/* Work arrays of the collectives (symmetric: static). */
static long sum_sync[2][SHMEM_REDUCE_SYNC_SIZE];
static double sum_work[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long bcast_sync[SHMEM_BCAST_SYNC_SIZE];
static long collect_sync[SHMEM_COLLECT_SYNC_SIZE];

/* A table every PE holds and the next PE reads (get mode). */
enum { WEIGHTS = 64 };
static double weights[WEIGHTS];

/* Reduction operands, the step counter and the token (symmetric). */
static double residual_local, residual_total;
static long steps_done;
static long token;

static double *row(const struct field *f, double *grid, int y)
{
    return grid + (size_t)y * (size_t)f->nx;
}

static void field_init(struct field *f, int nx, int ny, int me)
{
    f->nx = nx;
    f->ny = ny;
    size_t cells = (size_t)nx * (size_t)(ny + 2);
    f->u = shmem_malloc(cells * sizeof(double));
    f->unew = shmem_malloc(cells * sizeof(double));
    if (!f->u || !f->unew) {
        fprintf(stderr, "shmem_heat: out of symmetric memory\n");
        shmem_global_exit(1);
    }
    for (int y = 0; y < ny + 2; y++)
        for (int x = 0; x < nx; x++) {
            double v = (double)((x * 7 + (y + me * ny) * 13) % 101) / 101.0;
            row(f, f->u, y)[x] = v;
            row(f, f->unew, y)[x] = v;
        }
}

/* Sends the PE's first and last rows into the ghost rows of the PEs below
 * and above: row 1 becomes the lower PE's row ny + 1, row ny the upper
 * PE's row 0. */
static void exchange(struct field *f, enum mode mode, int me, int npes)
{
    int down = me - 1, up = me + 1;
    if (mode == MODE_SMALL) {
        for (int x = 0; x < f->nx; x++) {
            if (down >= 0)
                shmem_double_p(&row(f, f->u, f->ny + 1)[x], row(f, f->u, 1)[x], down);
            if (up < npes)
                shmem_double_p(&row(f, f->u, 0)[x], row(f, f->u, f->ny)[x], up);
        }
    } else {
        if (down >= 0)
            shmem_double_put(row(f, f->u, f->ny + 1), row(f, f->u, 1), (size_t)f->nx, down);
        if (up < npes)
            shmem_double_put(row(f, f->u, 0), row(f, f->u, f->ny), (size_t)f->nx, up);
    }
    shmem_barrier_all(); /* the ghost rows have arrived everywhere */
}

/* One Jacobi sweep over the PE's rows; returns the squared change.  The
 * outer PEs keep their outer boundary rows fixed. */
static double sweep(struct field *f, int me, int npes)
{
    double change = 0;
    int first = me == 0 ? 2 : 1, last = me == npes - 1 ? f->ny - 1 : f->ny;
    for (int y = first; y <= last; y++) {
        const double *above = row(f, f->u, y - 1), *here = row(f, f->u, y),
                     *below = row(f, f->u, y + 1);
        double *out = row(f, f->unew, y);
        out[0] = here[0];
        out[f->nx - 1] = here[f->nx - 1];
        for (int x = 1; x < f->nx - 1; x++) {
            out[x] = 0.25 * (above[x] + below[x] + here[x - 1] + here[x + 1]);
            double d = out[x] - here[x];
            change += d * d;
        }
    }
    for (int y = 1; y <= f->ny; y++)
        if (y < first || y > last)
            memcpy(row(f, f->unew, y), row(f, f->u, y), (size_t)f->nx * sizeof(double));
    double *swap = f->u;
    f->u = f->unew;
    f->unew = swap;
    return change;
}

/* A damped average the lock mode recomputes while holding the lock: the
 * kind of work that belongs outside it. */
static double smooth_entry(const struct field *f, double value)
{
    double acc = value;
    for (int k = 0; k < 40; k++)
        for (int x = 0; x < f->nx; x++)
            acc = 0.999 * acc + 0.001 * row(f, f->u, 1)[x];
    return acc;
}

/* Appends one entry to PE 0's log: read the count, put the entry, bump
 * the count, all under the log's lock. */
static void log_append(const struct field *f, enum mode mode, double value)
{
    shmem_set_lock(&log_lock);
    long at = shmem_long_g(&log_count, 0);
    if (mode == MODE_LOCK)
        value = smooth_entry(f, value);
    if (at < LOG_CAPACITY)
        shmem_double_p(&log_entries[at], value, 0);
    shmem_long_p(&log_count, at + 1, 0);
    shmem_quiet(); /* the entry and the count land before the lock is free */
    shmem_clear_lock(&log_lock);
}

/* Reads PE `from`'s weight table element by element, waiting for each
 * get at once.  Every PE reads another's, so that all pay the latency. */
static double read_weights(int from)
{
    double weight = 0, sum = 0;
    for (int i = 0; i < WEIGHTS; i++) {
        shmem_double_get_nbi(&weight, &weights[i], 1, from); /* site: get */
        shmem_quiet();                                       /* site: quiet */
        sum += weight;
    }
    return sum;
}

/* The token travels from PE 0 to the last PE, each waiting for its own. */
static void pass_token(int me, int npes)
{
    if (me > 0)
        shmem_long_wait_until(&token, SHMEM_CMP_GE, 1);
    if (me + 1 < npes) {
        shmem_long_p(&token, 1, me + 1);
        shmem_quiet();
    }
}

static enum mode parse_mode(const char *s)
{
    if (!strcmp(s, "good"))
        return MODE_GOOD;
    if (!strcmp(s, "small"))
        return MODE_SMALL;
    if (!strcmp(s, "lock"))
        return MODE_LOCK;
    if (!strcmp(s, "get"))
        return MODE_GET;
    fprintf(stderr, "shmem_heat: unknown mode %s (good, small, lock, get)\n", s);
    exit(2);
}

int main(int argc, char **argv)
{
    enum mode mode = parse_mode(argc > 1 ? argv[1] : "good");
    int steps = argc > 2 ? atoi(argv[2]) : 100;
    int nx = argc > 3 ? atoi(argv[3]) : 1024;
    int ny = argc > 4 ? atoi(argv[4]) : 64;
    if (steps < 1 || nx < 4 || ny < 3) {
        fprintf(stderr, "shmem_heat: bad size\n");
        return 2;
    }

    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        sum_sync[0][i] = sum_sync[1][i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++)
        bcast_sync[i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < SHMEM_COLLECT_SYNC_SIZE; i++)
        collect_sync[i] = SHMEM_SYNC_VALUE;

    for (int i = 0; i < WEIGHTS; i++)
        weights[i] = 1.0 / (i + 1 + me);
    struct field field;
    field_init(&field, nx, ny, me);
    shmem_barrier_all(); /* every PE's arrays and sync arrays are ready */

    double residual = 0, seen = 0;
    for (int step = 0; step < steps; step++) {
        if (mode == MODE_GET) {
            residual = sweep(&field, me, npes);
            seen += read_weights((me + 1) % npes);
            continue;
        }
        exchange(&field, mode, me, npes);
        residual_local = sweep(&field, me, npes);
        shmem_double_sum_to_all(&residual_total, &residual_local, 1, 0, 0, npes, sum_work,
                                sum_sync[step & 1]);
        residual = residual_total;
        shmem_long_atomic_fetch_add(&steps_done, 1, 0);
        log_append(&field, mode, residual);
        shmem_barrier_all(); /* nobody puts into ghost rows still being read */
    }

    pass_token(me, npes);

    /* PE 0's checksum of its block, broadcast to all; each PE's counts,
     * collected on all; the next PE's first row, fetched. */
    static long checksum_src, checksum;
    static long counts[2], all_counts[64];
    double block = 0;
    for (int y = 1; y <= ny; y++)
        for (int x = 0; x < nx; x++)
            block += row(&field, field.u, y)[x];
    checksum_src = (long)(block * 1000.0);
    shmem_broadcast64(&checksum, &checksum_src, 1, 0, 0, 0, npes, bcast_sync);
    if (me == 0)
        checksum = checksum_src;
    counts[0] = me;
    counts[1] = (long)(residual * 1e9);
    shmem_barrier_all();
    shmem_fcollect64(all_counts, counts, 2, 0, 0, npes, collect_sync);
    double *next_row = malloc((size_t)nx * sizeof(double));
    shmem_double_get(next_row, row(&field, field.u, 1), (size_t)nx, (me + 1) % npes);
    double next_sum = 0;
    for (int x = 0; x < nx; x++)
        next_sum += next_row[x];
    shmem_barrier_all();

    printf("pe %d: block %.6f next %.6f residual %.9e collected %ld weights %.6f\n", me, block,
           next_sum, residual, all_counts[2 * ((me + 1) % npes)], seen);
    if (me == 0)
        printf("checksum %ld steps %ld log %ld\n", checksum, steps_done, log_count);
    fflush(stdout);
    free(next_row);
    shmem_barrier_all(); /* PE 0's counts are read before the memory goes */
    shmem_free(field.unew);
    shmem_free(field.u);
    shmem_finalize();
    return 0;
}
