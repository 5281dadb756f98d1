/* MPI: PMPI wrappers for MPI_Init, MPI_Init_thread and MPI_Finalize
 * (docs/runtime.md, "MPI").
 *
 * libppw does not link libmpi: the PMPI_* functions (and, with Open MPI,
 * the predefined handles, which are addresses of libmpi's objects) are
 * looked up with dlsym at the first wrapper call, so that programs without
 * MPI link and run as before.  Only the types and prototypes come from
 * mpi.h.
 *
 * After PMPI_Init: rank 0 creates the job directory ppw-<exe>-<rank 0's
 * pid> beside its own run directory and broadcasts its path and the job
 * id; every rank then renames its run directory into it as
 * r<rank>-<host>-<pid> (libppw writes through a directory descriptor and
 * openat, which rename(2) keeps valid), measures its clock against rank
 * 0's (Cristian, best of several round trips) and writes a PPW_RUN_MPI
 * record.  At MPI_Finalize the clocks are measured again and the record is
 * written again with the finalize fields set.  All of ppw's traffic goes
 * through a duplicate of MPI_COMM_WORLD, so it cannot match the program's
 * messages.
 *
 * Other MPI calls are not wrapped: their GASP events come from the pass
 * (GASP_MPI_* around the calls). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <mpi.h>

#include "lifecycle.h"
#include "log.h"
#include "ppw/run_format.h"
#include "runfile.h"
#include "sigsafe.h"
#include "thread.h"

PPW_EXPORT int MPI_Init(int *argc, char ***argv);
PPW_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);
PPW_EXPORT int MPI_Finalize(void);

#define SYNC_ROUNDS 8 /* round trips per rank and measurement */
#define SYNC_TAG 7070

static struct {
    int resolved; /* 1 ok, -1 not available */
    __typeof__(PMPI_Init) *init;
    __typeof__(PMPI_Init_thread) *init_thread;
    __typeof__(PMPI_Finalize) *finalize;
    __typeof__(PMPI_Comm_rank) *comm_rank;
    __typeof__(PMPI_Comm_size) *comm_size;
    __typeof__(PMPI_Comm_dup) *comm_dup;
    __typeof__(PMPI_Comm_free) *comm_free;
    __typeof__(PMPI_Bcast) *bcast;
    __typeof__(PMPI_Barrier) *barrier;
    __typeof__(PMPI_Send) *send;
    __typeof__(PMPI_Recv) *recv;
    MPI_Comm world;
    MPI_Datatype byte;
} pmpi;

static MPI_Comm comm; /* ppw's duplicate of MPI_COMM_WORLD */
static int active;    /* the job is set up: MPI_Finalize measures again */
static struct ppw_rec_mpi rec;
static char host[256];

static void *lookup(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    return p ? p : dlsym(RTLD_DEFAULT, name);
}

#define LOOK(field, name) (pmpi.field = (__typeof__(pmpi.field))lookup(name))

static int resolve(void)
{
    if (pmpi.resolved)
        return pmpi.resolved > 0;
    int ok = LOOK(init, "PMPI_Init") && LOOK(init_thread, "PMPI_Init_thread") &&
             LOOK(finalize, "PMPI_Finalize") && LOOK(comm_rank, "PMPI_Comm_rank") &&
             LOOK(comm_size, "PMPI_Comm_size") && LOOK(comm_dup, "PMPI_Comm_dup") &&
             LOOK(comm_free, "PMPI_Comm_free") && LOOK(bcast, "PMPI_Bcast") &&
             LOOK(barrier, "PMPI_Barrier") && LOOK(send, "PMPI_Send") && LOOK(recv, "PMPI_Recv");
#ifdef OPEN_MPI
    /* Open MPI's handles are addresses of objects in libmpi. */
    if (ok) {
        pmpi.world = (MPI_Comm)lookup("ompi_mpi_comm_world");
        pmpi.byte = (MPI_Datatype)lookup("ompi_mpi_byte");
        ok = pmpi.world && pmpi.byte;
    }
#else
    pmpi.world = MPI_COMM_WORLD; /* integer constants (MPICH and its kin) */
    pmpi.byte = MPI_BYTE;
#endif
    pmpi.resolved = ok ? 1 : -1;
    if (!ok)
        ppw_log("MPI_Init: PMPI functions not found (%s); MPI is not measured", dlerror());
    return ok;
}

/* The re-entrancy guard, so that ppw's own MPI work is not measured. */
static struct ppw_thread *guard_enter(void)
{
    struct ppw_thread *t = ppw_thread_self();
    if (t && t->in_ppw)
        return NULL;
    if (t)
        t->in_ppw = 1;
    return t;
}

static void guard_leave(struct ppw_thread *t)
{
    if (t)
        t->in_ppw = 0;
}

/* Cristian's algorithm against rank 0: rank 0 answers SYNC_ROUNDS pings of
 * every other rank in turn; each rank keeps the round trip with the
 * smallest duration, and takes the reply as rank 0's clock at its
 * midpoint. */
static void measure_clock(uint64_t *local, uint64_t *master)
{
    if (rec.rank == 0) {
        for (uint32_t r = 1; r < rec.size; r++)
            for (int i = 0; i < SYNC_ROUNDS; i++) {
                char ping;
                pmpi.recv(&ping, 1, pmpi.byte, (int)r, SYNC_TAG, comm, MPI_STATUS_IGNORE);
                uint64_t now = ppw_now_ns();
                pmpi.send(&now, sizeof now, pmpi.byte, (int)r, SYNC_TAG, comm);
            }
        *local = *master = ppw_now_ns();
        return;
    }
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < SYNC_ROUNDS; i++) {
        char ping = 0;
        uint64_t reply = 0, t0 = ppw_now_ns();
        pmpi.send(&ping, 1, pmpi.byte, 0, SYNC_TAG, comm);
        pmpi.recv(&reply, sizeof reply, pmpi.byte, 0, SYNC_TAG, comm, MPI_STATUS_IGNORE);
        uint64_t t1 = ppw_now_ns();
        if (t1 - t0 < best) {
            best = t1 - t0;
            *local = t0 + (t1 - t0) / 2;
            *master = reply;
        }
    }
}

/* snprintf for paths: 0, or -1 when it did not fit. */
static int path_printf(char *out, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int path_printf(char *out, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out, size, fmt, ap);
    va_end(ap);
    return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* The run directory's path and its parent. */
static int run_dir_path(char *path, size_t size, char *parent, size_t psize)
{
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", ppw_output_dirfd());
    ssize_t n = readlink(link, path, size - 1);
    if (n <= 0)
        return -1;
    path[n] = '\0';
    snprintf(parent, psize, "%s", path);
    char *slash = strrchr(parent, '/');
    if (!slash)
        return -1;
    slash[slash == parent] = '\0'; /* "/x" -> "/" */
    return 0;
}

/* What rank 0 broadcasts. */
struct job {
    uint64_t id;
    int32_t ok;
    char dir[PATH_MAX];
};

/* Rank 0: creates the job directory (a fresh one: .1, .2... when taken).
 * Its own run directory may have the job directory's name (both default to
 * ppw-<exe>-<pid>): it is moved aside first. */
static void make_job_dir(struct job *job, const char *own, const char *parent, char *moved,
                         size_t msize)
{
    char base[PATH_MAX];
    /* argv[0]'s base name: the program as the user named it. */
    path_printf(base, sizeof base, "%s/ppw-%s-%d", parent, program_invocation_short_name,
                (int)getpid());
    snprintf(moved, msize, "%s", own);
    if (strcmp(own, base) == 0) {
        path_printf(moved, msize, "%s/.ppw-rank0-%d", parent, (int)getpid());
        if (rename(own, moved) != 0) {
            ppw_log("MPI: cannot move %s aside: %s", own, strerror(errno));
            return;
        }
    }
    for (int attempt = 0; attempt < 100; attempt++) {
        if (attempt == 0)
            snprintf(job->dir, sizeof job->dir, "%s", base);
        else
            path_printf(job->dir, sizeof job->dir, "%s.%d", base, attempt);
        if (mkdir(job->dir, 0755) == 0) {
            job->ok = 1;
            return;
        }
        if (errno != EEXIST)
            break;
    }
    ppw_log("MPI: cannot create the job directory %s: %s", job->dir, strerror(errno));
}

static void write_record(void)
{
    const char *strings[1] = {host};
    ppw_runfile_append(PPW_RUN_MPI, &rec, sizeof rec, 1, strings);
}

/* After PMPI_Init(_thread) succeeded. */
static void job_init(void)
{
    if (ppw_output_dirfd() < 0 || !ppw_running)
        return;
    int rank = 0, size = 1;
    pmpi.comm_rank(pmpi.world, &rank);
    pmpi.comm_size(pmpi.world, &size);
    if (pmpi.comm_dup(pmpi.world, &comm) != MPI_SUCCESS)
        return;
    rec.rank = (uint32_t)rank;
    rec.size = (uint32_t)size;
    gethostname(host, sizeof host - 1);

    char own[PATH_MAX], parent[PATH_MAX], moved[PATH_MAX];
    int have_path = run_dir_path(own, sizeof own, parent, sizeof parent) == 0;
    static struct job job; /* PATH_MAX: not on the stack */
    memset(&job, 0, sizeof job);
    snprintf(moved, sizeof moved, "%s", own);
    if (rank == 0) {
        struct timespec real;
        clock_gettime(CLOCK_REALTIME, &real);
        job.id = (uint64_t)real.tv_sec << 32 | (uint32_t)getpid();
        if (have_path)
            make_job_dir(&job, own, parent, moved, sizeof moved);
    }
    pmpi.bcast(&job, sizeof job, pmpi.byte, 0, comm);
    rec.job_id = job.id;
    if (job.ok && have_path) {
        char target[PATH_MAX];
        if (path_printf(target, sizeof target, "%s/r%d-%s-%d", job.dir, rank, host, (int)getpid()) != 0 ||
            rename(moved, target) != 0)
            ppw_log("MPI: cannot move %s to %s: %s", moved, target, strerror(errno));
    }
    measure_clock(&rec.init_local_ns, &rec.init_master_ns);
    write_record();
    active = 1;
}

static void job_fini(void)
{
    if (!active)
        return;
    active = 0;
    pmpi.barrier(comm);
    measure_clock(&rec.fini_local_ns, &rec.fini_master_ns);
    write_record();
    pmpi.comm_free(&comm);
}

static int after_init(int rc)
{
    if (rc == MPI_SUCCESS) {
        int saved = errno;
        struct ppw_thread *t = guard_enter();
        job_init();
        guard_leave(t);
        errno = saved;
    }
    return rc;
}

PPW_EXPORT int MPI_Init(int *argc, char ***argv)
{
    if (!resolve())
        return MPI_ERR_OTHER;
    return after_init(pmpi.init(argc, argv));
}

PPW_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (!resolve())
        return MPI_ERR_OTHER;
    return after_init(pmpi.init_thread(argc, argv, required, provided));
}

PPW_EXPORT int MPI_Finalize(void)
{
    if (!resolve())
        return MPI_ERR_OTHER;
    int saved = errno;
    struct ppw_thread *t = guard_enter();
    job_fini();
    guard_leave(t);
    errno = saved;
    return pmpi.finalize();
}
