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
 * Point-to-point, wait and collective calls (MPI_Send ... MPI_Allreduce,
 * see WRAPPERS below) are wrapped too, for code the pass did not
 * instrument: each wrapper records GASP_MPI_* START and END events with
 * the pass's operand conventions (gasp_events.h: the masked arguments as
 * 64-bit values, pointers and handles as addresses, ints sign-extended;
 * END adds the result) and no file (the stack gives the call site).  When
 * the pass already wrapped the call, its START event has set
 * ppw_gasp_mpi_depth (gasp.c) and the wrapper records nothing; a call its
 * quiet site does not send goes to PMPI_X directly (pass/instrument.c,
 * pmpi_entry) and never reaches the wrapper. */
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
#include "measure.h"
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
    /* the wrapped calls */
    __typeof__(PMPI_Ssend) *ssend;
    __typeof__(PMPI_Isend) *isend;
    __typeof__(PMPI_Irecv) *irecv;
    __typeof__(PMPI_Wait) *wait;
    __typeof__(PMPI_Waitall) *waitall;
    __typeof__(PMPI_Waitany) *waitany;
    __typeof__(PMPI_Sendrecv) *sendrecv;
    __typeof__(PMPI_Reduce) *reduce;
    __typeof__(PMPI_Allreduce) *allreduce;
    __typeof__(PMPI_Gather) *gather;
    __typeof__(PMPI_Allgather) *allgather;
    __typeof__(PMPI_Scatter) *scatter;
    __typeof__(PMPI_Alltoall) *alltoall;
    __typeof__(PMPI_Type_size) *type_size;
    /* one-sided: each found on its own, so that a library without one of
     * them still measures the rest */
    __typeof__(PMPI_Put) *put;
    __typeof__(PMPI_Rput) *rput;
    __typeof__(PMPI_Get) *get;
    __typeof__(PMPI_Rget) *rget;
    __typeof__(PMPI_Accumulate) *accumulate;
    __typeof__(PMPI_Raccumulate) *raccumulate;
    __typeof__(PMPI_Get_accumulate) *get_accumulate;
    __typeof__(PMPI_Rget_accumulate) *rget_accumulate;
    __typeof__(PMPI_Fetch_and_op) *fetch_and_op;
    __typeof__(PMPI_Compare_and_swap) *compare_and_swap;
    __typeof__(PMPI_Win_fence) *win_fence;
    __typeof__(PMPI_Win_lock) *win_lock;
    __typeof__(PMPI_Win_lock_all) *win_lock_all;
    __typeof__(PMPI_Win_unlock) *win_unlock;
    __typeof__(PMPI_Win_unlock_all) *win_unlock_all;
    __typeof__(PMPI_Win_flush) *win_flush;
    __typeof__(PMPI_Win_flush_local) *win_flush_local;
    __typeof__(PMPI_Win_flush_all) *win_flush_all;
    __typeof__(PMPI_Win_flush_local_all) *win_flush_local_all;
    __typeof__(PMPI_Win_post) *win_post;
    __typeof__(PMPI_Win_start) *win_start;
    __typeof__(PMPI_Win_complete) *win_complete;
    __typeof__(PMPI_Win_wait) *win_wait;
    __typeof__(PMPI_Win_create) *win_create;
    __typeof__(PMPI_Win_allocate) *win_allocate;
    __typeof__(PMPI_Win_allocate_shared) *win_allocate_shared;
    __typeof__(PMPI_Win_free) *win_free;
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
             LOOK(barrier, "PMPI_Barrier") && LOOK(send, "PMPI_Send") && LOOK(recv, "PMPI_Recv") &&
             LOOK(ssend, "PMPI_Ssend") && LOOK(isend, "PMPI_Isend") &&
             LOOK(irecv, "PMPI_Irecv") && LOOK(wait, "PMPI_Wait") &&
             LOOK(waitall, "PMPI_Waitall") && LOOK(waitany, "PMPI_Waitany") &&
             LOOK(sendrecv, "PMPI_Sendrecv") && LOOK(reduce, "PMPI_Reduce") &&
             LOOK(allreduce, "PMPI_Allreduce") && LOOK(gather, "PMPI_Gather") &&
             LOOK(allgather, "PMPI_Allgather") && LOOK(scatter, "PMPI_Scatter") &&
             LOOK(alltoall, "PMPI_Alltoall") && LOOK(type_size, "PMPI_Type_size");
#ifdef OPEN_MPI
    /* Open MPI's handles are addresses of objects in libmpi, or of the
     * executable's copies of them (a copy relocation, as gcc makes for a
     * program that names MPI_COMM_WORLD): the first definition in the
     * global scope is the one in use, so RTLD_DEFAULT, not RTLD_NEXT. */
    if (ok) {
        pmpi.world = (MPI_Comm)dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world");
        pmpi.byte = (MPI_Datatype)dlsym(RTLD_DEFAULT, "ompi_mpi_byte");
        ok = pmpi.world && pmpi.byte;
    }
#else
    pmpi.world = MPI_COMM_WORLD; /* integer constants (MPICH and its kin) */
    pmpi.byte = MPI_BYTE;
#endif
    if (ok) {
        LOOK(put, "PMPI_Put");
        LOOK(rput, "PMPI_Rput");
        LOOK(get, "PMPI_Get");
        LOOK(rget, "PMPI_Rget");
        LOOK(accumulate, "PMPI_Accumulate");
        LOOK(raccumulate, "PMPI_Raccumulate");
        LOOK(get_accumulate, "PMPI_Get_accumulate");
        LOOK(rget_accumulate, "PMPI_Rget_accumulate");
        LOOK(fetch_and_op, "PMPI_Fetch_and_op");
        LOOK(compare_and_swap, "PMPI_Compare_and_swap");
        LOOK(win_fence, "PMPI_Win_fence");
        LOOK(win_lock, "PMPI_Win_lock");
        LOOK(win_lock_all, "PMPI_Win_lock_all");
        LOOK(win_unlock, "PMPI_Win_unlock");
        LOOK(win_unlock_all, "PMPI_Win_unlock_all");
        LOOK(win_flush, "PMPI_Win_flush");
        LOOK(win_flush_local, "PMPI_Win_flush_local");
        LOOK(win_flush_all, "PMPI_Win_flush_all");
        LOOK(win_flush_local_all, "PMPI_Win_flush_local_all");
        LOOK(win_post, "PMPI_Win_post");
        LOOK(win_start, "PMPI_Win_start");
        LOOK(win_complete, "PMPI_Win_complete");
        LOOK(win_wait, "PMPI_Win_wait");
        LOOK(win_create, "PMPI_Win_create");
        LOOK(win_allocate, "PMPI_Win_allocate");
        LOOK(win_allocate_shared, "PMPI_Win_allocate_shared");
        LOOK(win_free, "PMPI_Win_free");
    }
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
        if (have_path && ppw_output_in_job()) { /* PPW_OUTPUT named the job directory */
            snprintf(job.dir, sizeof job.dir, "%s", parent);
            job.ok = 1;
        } else if (have_path) {
            make_job_dir(&job, own, parent, moved, sizeof moved);
        }
    }
    pmpi.bcast(&job, sizeof job, pmpi.byte, 0, comm);
    rec.job_id = job.id;
    if (job.ok && have_path) {
        char target[PATH_MAX];
        if (path_printf(target, sizeof target, "%s/r%d-%s-%d", job.dir, rank, host,
                        (int)getpid()) != 0 ||
            (strcmp(moved, target) != 0 && rename(moved, target) != 0))
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

/* ---- event-recording wrappers ------------------------------------------ */

/* gasp.c: >0 while the pass's GASP_MPI_* event pair brackets a call on
 * this thread (its START has been seen, its END not yet). */
extern PPW_TLS int ppw_gasp_mpi_depth;

/* >0 inside one of the wrappers below on this thread: an MPI library whose
 * PMPI_X calls MPI_Y gives one event pair, not nested ones. */
static PPW_TLS int wrapper_depth;

/* A GASP vararg: handles and pointers as addresses, ints sign-extended
 * (what the pass's widening gives). */
#define W(x) _Generic((x), int: (int64_t)(x), default: (int64_t)(intptr_t)(x))

/* Whether this call records: not under the pass's events, not nested, not
 * libppw's own traffic. */
static int wants_events(void)
{
    if (ppw_gasp_mpi_depth > 0 || wrapper_depth > 0)
        return 0;
    struct ppw_thread *t = ppw_thread_self();
    return t && !t->in_ppw && t->measuring;
}

static void record(unsigned int tag, gasp_evttype_t type, ...)
{
    int saved = errno;
    struct ppw_thread *t = guard_enter();
    if (t && t->measuring) {
        va_list ap;
        va_start(ap, type);
        uint64_t unused;
        ppw_measure_event(t, tag, type, NULL, 0, 0, NULL, 1, &ap, &unused);
        va_end(ap);
    }
    guard_leave(t);
    errno = saved;
}

uint64_t ppw_mpi_bytes(uint64_t count, uint64_t datatype)
{
    /* Datatypes are only valid between MPI_Init and MPI_Finalize. */
    int size = 0;
    if (!active || pmpi.resolved <= 0 || (int64_t)count <= 0)
        return 0;
#ifdef OPEN_MPI
    MPI_Datatype type = (MPI_Datatype)(uintptr_t)datatype; /* a handle is an address */
#else
    MPI_Datatype type = (MPI_Datatype)datatype;
#endif
    if (pmpi.type_size(type, &size) != MPI_SUCCESS || size <= 0)
        return 0;
    return count * (uint64_t)size;
}

uint64_t ppw_mpi_window_at(uint64_t address)
{
    MPI_Win win;
    memcpy(&win, (const void *)(uintptr_t)address, sizeof win);
    return (uint64_t)W(win);
}

/* WRAP(tag, call, start operands...): the PMPI call bracketed by events;
 * END repeats the operands and adds the result. */
#define WRAP(tag, call, ...)                                                                       \
    do {                                                                                           \
        if (!resolve())                                                                            \
            return MPI_ERR_OTHER;                                                                  \
        if (!wants_events())                                                                       \
            return call;                                                                           \
        record(tag, GASP_START, __VA_ARGS__);                                                      \
        wrapper_depth++;                                                                           \
        int rc_ = call;                                                                            \
        wrapper_depth--;                                                                           \
        record(tag, GASP_END, __VA_ARGS__, W(rc_));                                                \
        return rc_;                                                                                \
    } while (0)

PPW_EXPORT int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                        MPI_Comm c);
PPW_EXPORT int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                         MPI_Comm c);
PPW_EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm c,
                        MPI_Status *status);
PPW_EXPORT int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                         MPI_Comm c, MPI_Request *request);
PPW_EXPORT int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm c,
                         MPI_Request *request);
PPW_EXPORT int MPI_Wait(MPI_Request *request, MPI_Status *status);
PPW_EXPORT int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
PPW_EXPORT int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status);
PPW_EXPORT int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                            void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag,
                            MPI_Comm c, MPI_Status *status);
PPW_EXPORT int MPI_Barrier(MPI_Comm c);
PPW_EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm c);
PPW_EXPORT int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                          int root, MPI_Comm c);
PPW_EXPORT int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                             MPI_Op op, MPI_Comm c);
PPW_EXPORT int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                          MPI_Datatype rtype, int root, MPI_Comm c);
PPW_EXPORT int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                             int rcount, MPI_Datatype rtype, MPI_Comm c);
PPW_EXPORT int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                           int rcount, MPI_Datatype rtype, int root, MPI_Comm c);
PPW_EXPORT int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                            int rcount, MPI_Datatype rtype, MPI_Comm c);

/* Operands as in gasp_events.h's masks. */
PPW_EXPORT int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                        MPI_Comm c)
{
    WRAP(GASP_MPI_SEND, pmpi.send(buf, count, type, dest, tag, c), W(count), W(type), W(dest),
         W(tag), W(c));
}

PPW_EXPORT int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                         MPI_Comm c)
{
    WRAP(GASP_MPI_SEND, pmpi.ssend(buf, count, type, dest, tag, c), W(count), W(type), W(dest),
         W(tag), W(c));
}

PPW_EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm c,
                        MPI_Status *status)
{
    WRAP(GASP_MPI_RECV, pmpi.recv(buf, count, type, source, tag, c, status), W(count), W(type),
         W(source), W(tag), W(c));
}

PPW_EXPORT int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag,
                         MPI_Comm c, MPI_Request *request)
{
    WRAP(GASP_MPI_ISEND, pmpi.isend(buf, count, type, dest, tag, c, request), W(count), W(type),
         W(dest), W(tag), W(c));
}

PPW_EXPORT int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm c,
                         MPI_Request *request)
{
    WRAP(GASP_MPI_IRECV, pmpi.irecv(buf, count, type, source, tag, c, request), W(count),
         W(type), W(source), W(tag), W(c));
}

PPW_EXPORT int MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    WRAP(GASP_MPI_WAIT, pmpi.wait(request, status), W(request));
}

PPW_EXPORT int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    WRAP(GASP_MPI_WAITALL, pmpi.waitall(count, requests, statuses), W(count));
}

PPW_EXPORT int MPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    WRAP(GASP_MPI_WAITANY, pmpi.waitany(count, requests, index, status), W(count));
}

PPW_EXPORT int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
                            void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag,
                            MPI_Comm c, MPI_Status *status)
{
    WRAP(GASP_MPI_SENDRECV,
         pmpi.sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, c,
                       status),
         W(scount), W(stype), W(dest), W(stag), W(rcount), W(rtype), W(source), W(rtag), W(c));
}

PPW_EXPORT int MPI_Barrier(MPI_Comm c)
{
    WRAP(GASP_MPI_BARRIER, pmpi.barrier(c), W(c));
}

PPW_EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm c)
{
    WRAP(GASP_MPI_BCAST, pmpi.bcast(buf, count, type, root, c), W(count), W(type), W(root), W(c));
}

PPW_EXPORT int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                          int root, MPI_Comm c)
{
    WRAP(GASP_MPI_REDUCE, pmpi.reduce(sbuf, rbuf, count, type, op, root, c), W(count), W(type),
         W(root), W(c));
}

PPW_EXPORT int MPI_Allreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                             MPI_Op op, MPI_Comm c)
{
    WRAP(GASP_MPI_ALLREDUCE, pmpi.allreduce(sbuf, rbuf, count, type, op, c), W(count), W(type),
         W(c));
}

PPW_EXPORT int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                          MPI_Datatype rtype, int root, MPI_Comm c)
{
    WRAP(GASP_MPI_GATHER, pmpi.gather(sbuf, scount, stype, rbuf, rcount, rtype, root, c),
         W(scount), W(stype), W(root), W(c));
}

PPW_EXPORT int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                             int rcount, MPI_Datatype rtype, MPI_Comm c)
{
    WRAP(GASP_MPI_ALLGATHER, pmpi.allgather(sbuf, scount, stype, rbuf, rcount, rtype, c),
         W(scount), W(stype), W(c));
}

PPW_EXPORT int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                           int rcount, MPI_Datatype rtype, int root, MPI_Comm c)
{
    WRAP(GASP_MPI_SCATTER, pmpi.scatter(sbuf, scount, stype, rbuf, rcount, rtype, root, c),
         W(scount), W(stype), W(root), W(c));
}

PPW_EXPORT int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                            int rcount, MPI_Datatype rtype, MPI_Comm c)
{
    WRAP(GASP_MPI_ALLTOALL, pmpi.alltoall(sbuf, scount, stype, rbuf, rcount, rtype, c), W(scount),
         W(stype), W(c));
}

/* ---- one-sided communication ------------------------------------------- */

/* A one-sided call whose PMPI entry this MPI library lacks. */
static int missing(const char *name)
{
    ppw_log("%s: PMPI_%s not found in the MPI library", name, name + 4);
    return MPI_ERR_OTHER;
}

PPW_EXPORT int MPI_Put(const void *oaddr, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp,
                       int tcount, MPI_Datatype ttype, MPI_Win win);
PPW_EXPORT int MPI_Rput(const void *oaddr, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp,
                        int tcount, MPI_Datatype ttype, MPI_Win win, MPI_Request *request);
PPW_EXPORT int MPI_Get(void *oaddr, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp,
                       int tcount, MPI_Datatype ttype, MPI_Win win);
PPW_EXPORT int MPI_Rget(void *oaddr, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp,
                        int tcount, MPI_Datatype ttype, MPI_Win win, MPI_Request *request);
PPW_EXPORT int MPI_Accumulate(const void *oaddr, int ocount, MPI_Datatype otype, int rank,
                              MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
                              MPI_Win win);
PPW_EXPORT int MPI_Raccumulate(const void *oaddr, int ocount, MPI_Datatype otype, int rank,
                               MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
                               MPI_Win win, MPI_Request *request);
PPW_EXPORT int MPI_Get_accumulate(const void *oaddr, int ocount, MPI_Datatype otype, void *raddr,
                                  int rcount, MPI_Datatype rtype, int rank, MPI_Aint disp,
                                  int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win);
PPW_EXPORT int MPI_Rget_accumulate(const void *oaddr, int ocount, MPI_Datatype otype, void *raddr,
                                   int rcount, MPI_Datatype rtype, int rank, MPI_Aint disp,
                                   int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win,
                                   MPI_Request *request);
PPW_EXPORT int MPI_Fetch_and_op(const void *oaddr, void *raddr, MPI_Datatype type, int rank,
                                MPI_Aint disp, MPI_Op op, MPI_Win win);
PPW_EXPORT int MPI_Compare_and_swap(const void *oaddr, const void *caddr, void *raddr,
                                    MPI_Datatype type, int rank, MPI_Aint disp, MPI_Win win);
PPW_EXPORT int MPI_Win_fence(int assert_, MPI_Win win);
PPW_EXPORT int MPI_Win_lock(int lock_type, int rank, int assert_, MPI_Win win);
PPW_EXPORT int MPI_Win_lock_all(int assert_, MPI_Win win);
PPW_EXPORT int MPI_Win_unlock(int rank, MPI_Win win);
PPW_EXPORT int MPI_Win_unlock_all(MPI_Win win);
PPW_EXPORT int MPI_Win_flush(int rank, MPI_Win win);
PPW_EXPORT int MPI_Win_flush_local(int rank, MPI_Win win);
PPW_EXPORT int MPI_Win_flush_all(MPI_Win win);
PPW_EXPORT int MPI_Win_flush_local_all(MPI_Win win);
PPW_EXPORT int MPI_Win_post(MPI_Group group, int assert_, MPI_Win win);
PPW_EXPORT int MPI_Win_start(MPI_Group group, int assert_, MPI_Win win);
PPW_EXPORT int MPI_Win_complete(MPI_Win win);
PPW_EXPORT int MPI_Win_wait(MPI_Win win);
PPW_EXPORT int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm c,
                              MPI_Win *win);
PPW_EXPORT int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm c,
                                void *baseptr, MPI_Win *win);
PPW_EXPORT int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm c,
                                       void *baseptr, MPI_Win *win);
PPW_EXPORT int MPI_Win_free(MPI_Win *win);

PPW_EXPORT int MPI_Put(const void *oaddr, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp,
                       int tcount, MPI_Datatype ttype, MPI_Win win)
{
    if (resolve() && !pmpi.put)
        return missing("MPI_Put");
    WRAP(GASP_MPI_PUT, pmpi.put(oaddr, ocount, otype, rank, disp, tcount, ttype, win), W(ocount),
         W(otype), W(rank), W(disp), W(win));
}

PPW_EXPORT int MPI_Rput(const void *oaddr, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp,
                        int tcount, MPI_Datatype ttype, MPI_Win win, MPI_Request *request)
{
    if (resolve() && !pmpi.rput)
        return missing("MPI_Rput");
    WRAP(GASP_MPI_RPUT, pmpi.rput(oaddr, ocount, otype, rank, disp, tcount, ttype, win, request),
         W(ocount), W(otype), W(rank), W(disp), W(win));
}

PPW_EXPORT int MPI_Get(void *oaddr, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp,
                       int tcount, MPI_Datatype ttype, MPI_Win win)
{
    if (resolve() && !pmpi.get)
        return missing("MPI_Get");
    WRAP(GASP_MPI_GET, pmpi.get(oaddr, ocount, otype, rank, disp, tcount, ttype, win), W(ocount),
         W(otype), W(rank), W(disp), W(win));
}

PPW_EXPORT int MPI_Rget(void *oaddr, int ocount, MPI_Datatype otype, int rank, MPI_Aint disp,
                        int tcount, MPI_Datatype ttype, MPI_Win win, MPI_Request *request)
{
    if (resolve() && !pmpi.rget)
        return missing("MPI_Rget");
    WRAP(GASP_MPI_RGET, pmpi.rget(oaddr, ocount, otype, rank, disp, tcount, ttype, win, request),
         W(ocount), W(otype), W(rank), W(disp), W(win));
}

PPW_EXPORT int MPI_Accumulate(const void *oaddr, int ocount, MPI_Datatype otype, int rank,
                              MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
    if (resolve() && !pmpi.accumulate)
        return missing("MPI_Accumulate");
    WRAP(GASP_MPI_ACCUMULATE,
         pmpi.accumulate(oaddr, ocount, otype, rank, disp, tcount, ttype, op, win), W(ocount),
         W(otype), W(rank), W(disp), W(win));
}

PPW_EXPORT int MPI_Raccumulate(const void *oaddr, int ocount, MPI_Datatype otype, int rank,
                               MPI_Aint disp, int tcount, MPI_Datatype ttype, MPI_Op op,
                               MPI_Win win, MPI_Request *request)
{
    if (resolve() && !pmpi.raccumulate)
        return missing("MPI_Raccumulate");
    WRAP(GASP_MPI_RACCUMULATE,
         pmpi.raccumulate(oaddr, ocount, otype, rank, disp, tcount, ttype, op, win, request),
         W(ocount), W(otype), W(rank), W(disp), W(win));
}

PPW_EXPORT int MPI_Get_accumulate(const void *oaddr, int ocount, MPI_Datatype otype, void *raddr,
                                  int rcount, MPI_Datatype rtype, int rank, MPI_Aint disp,
                                  int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win)
{
    if (resolve() && !pmpi.get_accumulate)
        return missing("MPI_Get_accumulate");
    WRAP(GASP_MPI_GET_ACCUMULATE,
         pmpi.get_accumulate(oaddr, ocount, otype, raddr, rcount, rtype, rank, disp, tcount, ttype,
                             op, win),
         W(ocount), W(otype), W(rcount), W(rtype), W(rank), W(disp), W(win));
}

PPW_EXPORT int MPI_Rget_accumulate(const void *oaddr, int ocount, MPI_Datatype otype, void *raddr,
                                   int rcount, MPI_Datatype rtype, int rank, MPI_Aint disp,
                                   int tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win,
                                   MPI_Request *request)
{
    if (resolve() && !pmpi.rget_accumulate)
        return missing("MPI_Rget_accumulate");
    WRAP(GASP_MPI_RGET_ACCUMULATE,
         pmpi.rget_accumulate(oaddr, ocount, otype, raddr, rcount, rtype, rank, disp, tcount, ttype,
                              op, win, request),
         W(ocount), W(otype), W(rcount), W(rtype), W(rank), W(disp), W(win));
}

PPW_EXPORT int MPI_Fetch_and_op(const void *oaddr, void *raddr, MPI_Datatype type, int rank,
                                MPI_Aint disp, MPI_Op op, MPI_Win win)
{
    if (resolve() && !pmpi.fetch_and_op)
        return missing("MPI_Fetch_and_op");
    WRAP(GASP_MPI_FETCH_AND_OP, pmpi.fetch_and_op(oaddr, raddr, type, rank, disp, op, win), W(type),
         W(rank), W(disp), W(win));
}

PPW_EXPORT int MPI_Compare_and_swap(const void *oaddr, const void *caddr, void *raddr,
                                    MPI_Datatype type, int rank, MPI_Aint disp, MPI_Win win)
{
    if (resolve() && !pmpi.compare_and_swap)
        return missing("MPI_Compare_and_swap");
    WRAP(GASP_MPI_COMPARE_AND_SWAP,
         pmpi.compare_and_swap(oaddr, caddr, raddr, type, rank, disp, win), W(type), W(rank),
         W(disp), W(win));
}

PPW_EXPORT int MPI_Win_fence(int assert_, MPI_Win win)
{
    if (resolve() && !pmpi.win_fence)
        return missing("MPI_Win_fence");
    WRAP(GASP_MPI_WIN_FENCE, pmpi.win_fence(assert_, win), W(assert_), W(win));
}

PPW_EXPORT int MPI_Win_lock(int lock_type, int rank, int assert_, MPI_Win win)
{
    if (resolve() && !pmpi.win_lock)
        return missing("MPI_Win_lock");
    WRAP(GASP_MPI_WIN_LOCK, pmpi.win_lock(lock_type, rank, assert_, win), W(lock_type), W(rank),
         W(win));
}

PPW_EXPORT int MPI_Win_lock_all(int assert_, MPI_Win win)
{
    if (resolve() && !pmpi.win_lock_all)
        return missing("MPI_Win_lock_all");
    WRAP(GASP_MPI_WIN_LOCK_ALL, pmpi.win_lock_all(assert_, win), W(win));
}

PPW_EXPORT int MPI_Win_unlock(int rank, MPI_Win win)
{
    if (resolve() && !pmpi.win_unlock)
        return missing("MPI_Win_unlock");
    WRAP(GASP_MPI_WIN_UNLOCK, pmpi.win_unlock(rank, win), W(rank), W(win));
}

PPW_EXPORT int MPI_Win_unlock_all(MPI_Win win)
{
    if (resolve() && !pmpi.win_unlock_all)
        return missing("MPI_Win_unlock_all");
    WRAP(GASP_MPI_WIN_UNLOCK_ALL, pmpi.win_unlock_all(win), W(win));
}

PPW_EXPORT int MPI_Win_flush(int rank, MPI_Win win)
{
    if (resolve() && !pmpi.win_flush)
        return missing("MPI_Win_flush");
    WRAP(GASP_MPI_WIN_FLUSH, pmpi.win_flush(rank, win), W(rank), W(win));
}

PPW_EXPORT int MPI_Win_flush_local(int rank, MPI_Win win)
{
    if (resolve() && !pmpi.win_flush_local)
        return missing("MPI_Win_flush_local");
    WRAP(GASP_MPI_WIN_FLUSH, pmpi.win_flush_local(rank, win), W(rank), W(win));
}

PPW_EXPORT int MPI_Win_flush_all(MPI_Win win)
{
    if (resolve() && !pmpi.win_flush_all)
        return missing("MPI_Win_flush_all");
    WRAP(GASP_MPI_WIN_FLUSH_ALL, pmpi.win_flush_all(win), W(win));
}

PPW_EXPORT int MPI_Win_flush_local_all(MPI_Win win)
{
    if (resolve() && !pmpi.win_flush_local_all)
        return missing("MPI_Win_flush_local_all");
    WRAP(GASP_MPI_WIN_FLUSH_ALL, pmpi.win_flush_local_all(win), W(win));
}

PPW_EXPORT int MPI_Win_post(MPI_Group group, int assert_, MPI_Win win)
{
    if (resolve() && !pmpi.win_post)
        return missing("MPI_Win_post");
    WRAP(GASP_MPI_WIN_POST, pmpi.win_post(group, assert_, win), W(group), W(win));
}

PPW_EXPORT int MPI_Win_start(MPI_Group group, int assert_, MPI_Win win)
{
    if (resolve() && !pmpi.win_start)
        return missing("MPI_Win_start");
    WRAP(GASP_MPI_WIN_START, pmpi.win_start(group, assert_, win), W(group), W(win));
}

PPW_EXPORT int MPI_Win_complete(MPI_Win win)
{
    if (resolve() && !pmpi.win_complete)
        return missing("MPI_Win_complete");
    WRAP(GASP_MPI_WIN_COMPLETE, pmpi.win_complete(win), W(win));
}

PPW_EXPORT int MPI_Win_wait(MPI_Win win)
{
    if (resolve() && !pmpi.win_wait)
        return missing("MPI_Win_wait");
    WRAP(GASP_MPI_WIN_WAIT, pmpi.win_wait(win), W(win));
}

PPW_EXPORT int MPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm c,
                              MPI_Win *win)
{
    if (resolve() && !pmpi.win_create)
        return missing("MPI_Win_create");
    WRAP(GASP_MPI_WIN_CREATE, pmpi.win_create(base, size, disp_unit, info, c, win), W(base),
         W(size), W(disp_unit), W(c), W(win));
}

PPW_EXPORT int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm c,
                                void *baseptr, MPI_Win *win)
{
    if (resolve() && !pmpi.win_allocate)
        return missing("MPI_Win_allocate");
    WRAP(GASP_MPI_WIN_ALLOCATE, pmpi.win_allocate(size, disp_unit, info, c, baseptr, win), W(size),
         W(disp_unit), W(c), W(baseptr), W(win));
}

PPW_EXPORT int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm c,
                                       void *baseptr, MPI_Win *win)
{
    if (resolve() && !pmpi.win_allocate_shared)
        return missing("MPI_Win_allocate_shared");
    WRAP(GASP_MPI_WIN_ALLOCATE, pmpi.win_allocate_shared(size, disp_unit, info, c, baseptr, win),
         W(size), W(disp_unit), W(c), W(baseptr), W(win));
}

PPW_EXPORT int MPI_Win_free(MPI_Win *win)
{
    if (resolve() && !pmpi.win_free)
        return missing("MPI_Win_free");
    WRAP(GASP_MPI_WIN_FREE, pmpi.win_free(win), W(win));
}
