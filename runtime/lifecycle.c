/* Process start and end, and fork() (see lifecycle.h).
 *
 * Start order: configuration, the executable's build-id, the output
 * directory, run.ppw (run info, argv, environment), the module map, the
 * sampler (metric), spawn tracking, GASP measurement (with calibration),
 * and finally the main thread, which starts sampling.  End order is the
 * reverse.  Nothing here exits or prints to stdout; a failure is reported
 * once on stderr and the program runs on unmeasured. */
#include "lifecycle.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "blocking.h"
#include "config.h"
#include "descriptors.h"
#include "signals.h"
#include "log.h"
#include "measure.h"
#include "modules.h"
#include "omp_fork.h"
#include "ppw/run_format.h"
#include "runfile.h"
#include "sampler.h"
#include "spawn.h"
#include "thread.h"
#include "unwind.h"

extern char **environ;

volatile int ppw_running;
static int output_dirfd = -1;
static int init_state; /* 0 never, 1 in progress, 2 done */
static char output_path[PATH_MAX];
static int is_fork_child;

uint64_t ppw_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int ppw_output_dirfd(void)
{
    return __atomic_load_n(&output_dirfd, __ATOMIC_ACQUIRE); /* descriptors.c may move it */
}

const uint8_t *ppw_build_id(uint32_t *size)
{
    return ppw_modules_exe_build_id(size);
}

static const char *exe_name(char *buf, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", buf, size - 1);
    if (n <= 0)
        return "unknown";
    buf[n] = '\0';
    const char *slash = strrchr(buf, '/');
    return slash ? slash + 1 : buf;
}

/* Expands the PPW_OUTPUT template: %p pid, %e executable name, %% a '%'. */
static void expand_output(char *out, size_t size, int fork_child)
{
    char exe[PATH_MAX];
    const char *name = exe_name(exe, sizeof(exe));
    const char *tmpl = ppw_config.output;
    size_t len = 0;
    int has_pid = 0;
    for (const char *p = tmpl; *p && len + 1 < size; p++) {
        if (*p == '%' && (p[1] == 'p' || p[1] == 'e' || p[1] == '%')) {
            p++;
            int n = 0;
            if (*p == 'p') {
                n = snprintf(out + len, size - len, "%d", (int)getpid());
                has_pid = 1;
            } else if (*p == 'e') {
                n = snprintf(out + len, size - len, "%s", name);
            } else {
                out[len] = '%';
                n = 1;
            }
            len += n > 0 ? (size_t)n : 0;
            if (len >= size)
                len = size - 1;
        } else {
            out[len++] = *p;
        }
    }
    out[len] = '\0';
    /* A fork()ed child must not share its parent's directory. */
    if (fork_child && !has_pid)
        snprintf(out + len, size - len, "-fork-%d", (int)getpid());
}

static int in_job;

int ppw_output_in_job(void)
{
    return in_job;
}

/* The MPI rank the launcher gave this process (Open MPI, MPICH and Hydra,
 * PMIx, MVAPICH, Slurm), or -1 when not launched as a rank. */
static int launcher_rank(void)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                        "MV2_COMM_WORLD_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        const char *v = getenv(names[i]);
        char *end;
        long rank = v && *v ? strtol(v, &end, 10) : -1;
        if (v && *v && !*end && rank >= 0 && rank < INT32_MAX)
            return (int)rank;
    }
    return -1;
}

/* mkdir -p: every missing component of path.  0 or -errno. */
static int make_dirs(const char *path)
{
    char part[PATH_MAX];
    snprintf(part, sizeof(part), "%s", path);
    for (char *p = part + 1;; p++) {
        if (*p != '/' && *p)
            continue;
        char c = *p;
        *p = '\0';
        struct stat st;
        if (mkdir(part, 0755) != 0 && (errno != EEXIST || stat(part, &st) != 0 ||
                                       !S_ISDIR(st.st_mode)))
            return errno == EEXIST ? -ENOTDIR : -errno;
        if (!c)
            return 0;
        *p = c;
    }
}

/* A rank launched with PPW_OUTPUT=DIR (no %p): DIR is the job directory,
 * and the rank's run directory is DIR/r<rank>-<host>-<pid> from the start.
 * 0, or -1 to make the run directory the usual way. */
static int make_rank_dir(void)
{
    int rank = launcher_rank();
    if (rank < 0 || !ppw_config.output_set || strstr(ppw_config.output, "%p"))
        return -1;
    char job[PATH_MAX - 128], host[64] = "";
    expand_output(job, sizeof(job), 0);
    gethostname(host, sizeof(host) - 1);
    if (make_dirs(job) != 0)
        return -1;
    snprintf(output_path, sizeof(output_path), "%s/r%d-%s-%d", job, rank, host, (int)getpid());
    if (mkdir(output_path, 0755) != 0)
        return -1;
    in_job = 1;
    return 0;
}

/* Creates the run directory (a fresh one: .1, .2... when the name is taken,
 * as after exec in the same process).  0 or -errno. */
static int make_output_dir(int fork_child)
{
    char base[PATH_MAX - 8]; /* room for a ".NN" suffix */
    expand_output(base, sizeof(base), fork_child);
    int rc = 0;
    if (!fork_child && make_rank_dir() == 0)
        goto opened;
    for (int attempt = 0; attempt < 100; attempt++) {
        if (attempt == 0)
            snprintf(output_path, sizeof(output_path), "%s", base);
        else
            snprintf(output_path, sizeof(output_path), "%s.%d", base, attempt);
        if (mkdir(output_path, 0755) == 0) {
            rc = 0;
            break;
        }
        rc = -errno;
        if (errno != EEXIST)
            break;
    }
    if (rc != 0)
        return rc;
opened:;
    int fd = open(output_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    output_dirfd = fd;
    ppw_fd_own(&output_dirfd, PPW_FD_OUTPUT_DIR);
    return 0;
}

static void write_run_info(int fork_child)
{
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC, &res);
    struct timespec real;
    clock_gettime(CLOCK_REALTIME, &real);
    struct ppw_rec_run_info info = {
        .pid = (uint32_t)getpid(),
        .ppid = (uint32_t)getppid(),
        .start_mono_ns = ppw_now_ns(),
        .start_real_ns = (uint64_t)real.tv_sec * 1000000000ull + (uint64_t)real.tv_nsec,
        .ncpus = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN),
        .parent_fork = (uint32_t)fork_child,
        .clock_res_ns = (uint64_t)res.tv_sec * 1000000000ull + (uint64_t)res.tv_nsec,
    };
    char host[256] = "", exe[PATH_MAX] = "", cwd[PATH_MAX] = "";
    gethostname(host, sizeof(host) - 1);
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = '\0';
    if (!getcwd(cwd, sizeof(cwd)))
        cwd[0] = '\0';
    const char *strings[3] = {host, exe, cwd};
    ppw_runfile_append(PPW_RUN_INFO, &info, sizeof(info), 3, strings);
}

/* argv from /proc/self/cmdline: the constructor has no argc/argv of its
 * own, and this needs no cooperation from the program. */
static void write_argv(void)
{
    char buf[65536];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t len = 0, n;
    while (len < (ssize_t)sizeof(buf) - 1 &&
           (n = read(fd, buf + len, sizeof(buf) - 1 - (size_t)len)) > 0)
        len += n;
    close(fd);
    buf[len] = '\0';
    const char *args[1024];
    uint32_t count = 0;
    for (ssize_t at = 0; at < len && count < 1024; at += (ssize_t)strlen(buf + at) + 1)
        args[count++] = buf + at;
    uint32_t fixed[2] = {count, 0};
    ppw_runfile_append(PPW_RUN_ARGV, fixed, sizeof(fixed), (int)count, args);
}

/* What a run directory may carry when a user shares it: the settings that
 * shape a parallel run, never tokens or keys (PPW_RECORD_ENV=all records
 * everything).  Prefixes end in '_'; other entries are whole names. */
static int env_recorded(const char *entry)
{
    static const char *const allowed[] = {
        "PPW_", "OMP_", "KMP_", "GOMP_",
        /* MPI and PMIx ranks: Open MPI, MPICH and Hydra, MVAPICH, PMIx, Slurm */
        "OMPI_COMM_WORLD_", "PMI_RANK", "PMI_SIZE", "PMI_LOCAL_RANK", "MPI_LOCALRANKID",
        "MPI_LOCALNRANKS", "MV2_COMM_WORLD_", "PMIX_RANK", "PMIX_NAMESPACE", "SLURM_PROCID",
        "SLURM_NTASKS", "SLURM_LOCALID",
        "PATH", "LD_LIBRARY_PATH", "HOSTNAME",
    };
    size_t name_len = strcspn(entry, "=");
    for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++) {
        size_t n = strlen(allowed[i]);
        if (allowed[i][n - 1] == '_' ? name_len > n && strncmp(entry, allowed[i], n) == 0
                                     : name_len == n && strncmp(entry, allowed[i], n) == 0)
            return 1;
    }
    return 0;
}

static void write_env(void)
{
    enum { MAX_ENTRIES = 4096 };
    static const char *kept[MAX_ENTRIES]; /* start-up is single-threaded */
    uint32_t count = 0, left_out = 0;
    for (char **e = environ; e && *e; e++) {
        if (!ppw_config.record_all_env && !env_recorded(*e))
            left_out++;
        else if (count < MAX_ENTRIES)
            kept[count++] = *e;
    }
    uint32_t fixed[2] = {count, left_out};
    ppw_runfile_append(PPW_RUN_ENV, fixed, sizeof(fixed), (int)count, kept);
}

static void before_fork(void)
{
    ppw_measure_fork_prepare();
    ppw_runfile_lock();
    ppw_thread_registry_lock();
}

static void after_fork_parent(void)
{
    ppw_thread_registry_unlock();
    ppw_runfile_unlock();
    ppw_measure_fork_parent();
}

static int start_run(int fork_child);

static void after_fork_child(void)
{
    ppw_fd_forget_all(); /* the child closes or abandons the parent's descriptors below */
    ppw_unwind_after_fork_child();
    ppw_measure_fork_child();
    ppw_runfile_abandon();
    ppw_modules_after_fork_child();
    ppw_spawn_after_fork_child();
    if (output_dirfd >= 0)
        close(output_dirfd);
    output_dirfd = -1;
    ppw_running = 0;
    is_fork_child = 1;
    in_job = 0;
    ppw_log_loss_after_fork();
    if (start_run(1) != 0) {
        ppw_thread_after_fork_child(); /* forget the parent's threads anyway */
        return;
    }
    ppw_thread_after_fork_child();
}

/* Everything from the output directory on; shared by start-up and a
 * fork()ed child.  0 when measurement runs. */
static int start_run(int fork_child)
{
    int rc = make_output_dir(fork_child);
    if (rc != 0) {
        ppw_log_claim_loss(); /* the one line about lost output */
        ppw_log("cannot create the output directory %s: %s; this run is not measured", output_path,
                strerror(-rc));
        return rc;
    }
    rc = ppw_runfile_open(output_dirfd);
    if (rc != 0) {
        ppw_log_claim_loss();
        ppw_log("cannot create %s/run.ppw: %s; this run is not measured", output_path,
                strerror(-rc));
        ppw_fd_close(&output_dirfd);
        return rc;
    }
    write_run_info(fork_child);
    write_argv();
    write_env();
    ppw_modules_init();
    ppw_running = 1;
    /* A fork()ed child records its metric and calibration again, so that
     * its directory stands alone; spawn tracking carries over. */
    ppw_sampler_init();
    if (!fork_child)
        ppw_spawn_init();
    ppw_measure_init();
    return 0;
}

void ppw_lifecycle_ensure(void)
{
    int expected = 0;
    if (!__atomic_compare_exchange_n(&init_state, &expected, 1, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return; /* done, or in progress on this thread (re-entry) */
    int saved = errno;
    ppw_config_load();
    ppw_blocking_init();
    ppw_descriptors_init();
    ppw_signals_init();
    if (!ppw_config.disabled) {
        ppw_modules_early_init();
        if (start_run(0) == 0) {
            pthread_atfork(before_fork, after_fork_parent, after_fork_child);
            ppw_thread_begin(UINT32_MAX, 0, 0);
        }
    }
    ppw_omp_fork_decide(); /* before libomp starts: whether it needs OMPT */
    __atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
    errno = saved;
}

int ppw_lifecycle_off(void)
{
    return __atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == 2 && !ppw_running;
}

__attribute__((constructor(101))) static void on_load(void)
{
    ppw_lifecycle_ensure();
}

__attribute__((destructor(101))) static void on_unload(void)
{
    if (!ppw_running)
        return;
    int saved = errno;
    ppw_modules_rescan();
    ppw_thread_end_others();
    ppw_thread_end();
    ppw_running = 0;
    ppw_measure_fini();
    ppw_sampler_fini();
    struct ppw_rec_finish finish = {ppw_now_ns(), ppw_thread_count()};
    ppw_runfile_append(PPW_RUN_FINISH, &finish, sizeof(finish), 0, NULL);
    ppw_runfile_close();
    (void)is_fork_child;
    errno = saved;
}

/* _exit and _Exit end the process without the destructor above: the
 * samples the ring sampler still holds are saved first (the signal
 * sampler's are on disk already), and the run stays unfinished, as after
 * any death the program chose not to announce.  Then the system call that
 * glibc's _exit makes. */
PPW_EXPORT void _exit(int status)
{
    if (ppw_running)
        ppw_sampler_save_all();
    for (;;)
        syscall(SYS_exit_group, status);
}

PPW_EXPORT void _Exit(int status)
{
    _exit(status);
}
